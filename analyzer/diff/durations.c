/*
 * Duration summaries (see durations.h).
 */
#include "analyzer/diff/durations.h"

#include <math.h>
#include <stdlib.h>

double duration_quantile(const double *sorted, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

/* Median of |x - median| without a scratch array: the deviations form two sorted runs, merged. */
static double median_absolute_deviation(const double *sorted, size_t n, double median)
{
	/* Left run: median - x for x <= median, ascending from the centre outwards; right run alike. */
	size_t split = 0, l, r, k;
	double lower = 0, upper = 0;

	while (split < n && sorted[split] <= median)
		split++;
	l = split;	/* next left element is sorted[l - 1] */
	r = split;	/* next right element is sorted[r] */
	/* Walk the merged deviations up to ranks (n-1)/2 and n/2. */
	for (k = 0; k <= n / 2; k++) {
		double d;

		if (l > 0 && (r >= n || median - sorted[l - 1] <= sorted[r] - median))
			d = median - sorted[--l];
		else
			d = sorted[r++] - median;
		if (k == (n - 1) / 2)
			lower = d;
		if (k == n / 2)
			upper = d;
	}
	return (lower + upper) / 2;
}

void duration_summarize(const double *sorted, size_t n, struct duration_summary *out)
{
	double sum = 0, sq = 0;

	out->count = n;
	out->min = sorted[0];
	out->max = sorted[n - 1];
	for (size_t i = 0; i < n; i++)
		sum += sorted[i];
	out->total = sum;
	out->mean = sum / (double)n;
	/* Two passes: durations share a large common offset, the one-pass formula cancels badly. */
	for (size_t i = 0; i < n; i++)
		sq += (sorted[i] - out->mean) * (sorted[i] - out->mean);
	out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	out->median = duration_quantile(sorted, n, 0.5);
	out->p5 = duration_quantile(sorted, n, 0.05);
	out->p25 = duration_quantile(sorted, n, 0.25);
	out->p75 = duration_quantile(sorted, n, 0.75);
	out->p95 = duration_quantile(sorted, n, 0.95);
	out->mad = median_absolute_deviation(sorted, n, out->median);
}

size_t duration_points(const double *sorted, size_t n, double *points, size_t max_points)
{
	if (n <= max_points) {
		for (size_t i = 0; i < n; i++)
			points[i] = sorted[i];
		return n;
	}
	for (size_t i = 0; i < max_points; i++)
		points[i] = sorted[(size_t)(((double)i + 0.5) * (double)n / (double)max_points)];
	return max_points;
}
