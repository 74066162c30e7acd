/*
 * Mann-Whitney U and the Hodges-Lehmann shift estimate with its confidence interval (see
 * ranktest.h for the model).
 *
 * Nothing here forms the m*n pairwise differences: a trace can hold 10^5 launches of one kernel per
 * side. The k-th smallest difference is found by bisection on its value, counting the pairs at or
 * below a candidate with one merge-like pass over the two sorted samples (O(m+n) per step), and is
 * then snapped to the pairwise difference it stands for, so ties and equal samples give exact
 * values (a ratio of exactly 1, not 0.99999999).
 */
#include "analyzer/diff/ranktest.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Below this many launches on both sides (and without ties) U's exact distribution is used: the
 * normal approximation is loose in the tails alpha = 0.01 looks at (5 launches a side, completely
 * separated: exact p 0.008, normal 0.012), and the exact table is cheap there (m * n * mn < 6M
 * additions, under 1 MB).
 */
#define EXACT_MAX_SAMPLES 50

/* Acklam's rational approximation, refined by one Halley step on erfc: |error| < 1e-15. */
double normal_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
				    -2.759285104469687e+02, 1.383577518672690e+02,
				    -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
				    -1.556989798598866e+02, 6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
				    -2.400758277161838e+00, -2.549732539343734e+00,
				    4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
				    2.445134137142996e+00, 3.754408661907416e+00 };
	const double p_low = 0.02425;
	double q, r, x, e, u;

	if (!(p > 0.0))
		return -INFINITY;
	if (!(p < 1.0))
		return INFINITY;
	if (p < p_low) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p <= 1 - p_low) {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	} else {
		q = sqrt(-2 * log1p(-p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	e = 0.5 * erfc(-x / M_SQRT2) - p;
	u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

static int sorted_ascending(const double *x, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (!(x[i - 1] <= x[i]))
			return 0;
	}
	return 1;
}

/* log(duration), with anything below 1 ns read as 1 ns (a zero-length record has no log). */
static double *log_durations(const double *x, size_t n)
{
	double *l = xmalloc(n * sizeof(*l));

	for (size_t i = 0; i < n; i++)
		l[i] = log(x[i] > 1.0 ? x[i] : 1.0);
	return l;
}

/* Pairs with y_j - x_i <= d; x and y sorted ascending. */
static uint64_t pairs_at_or_below(const double *x, size_t m, const double *y, size_t n, double d)
{
	uint64_t count = 0;
	size_t i = 0;

	/* For each y_j the qualifying x_i are those >= y_j - d, a suffix that shrinks as j grows. */
	for (size_t j = 0; j < n; j++) {
		double floor_x = y[j] - d;

		while (i < m && x[i] < floor_x)
			i++;
		count += m - i;
	}
	return count;
}

/* The largest pairwise difference y_j - x_i that is <= d (d is at least the smallest one). */
static double largest_difference_at_or_below(const double *x, size_t m, const double *y, size_t n,
					      double d)
{
	double best = -INFINITY;
	size_t i = 0;

	for (size_t j = 0; j < n; j++) {
		while (i < m && x[i] < y[j] - d)
			i++;
		if (i < m && y[j] - x[i] > best)
			best = y[j] - x[i];
	}
	return best;
}

/* The k-th smallest (1-based) of the m*n differences y_j - x_i. */
static double kth_difference(const double *x, size_t m, const double *y, size_t n, uint64_t k)
{
	double lo = y[0] - x[m - 1], hi = y[n - 1] - x[0];

	if (pairs_at_or_below(x, m, y, n, lo) >= k)
		return lo;
	/* Invariant: fewer than k pairs <= lo, at least k pairs <= hi. */
	for (int step = 0; step < 200; step++) {
		double mid = lo + (hi - lo) / 2;

		if (!(mid > lo && mid < hi))
			break;
		if (pairs_at_or_below(x, m, y, n, mid) >= k)
			hi = mid;
		else
			lo = mid;
	}
	return largest_difference_at_or_below(x, m, y, n, hi);
}

/*
 * The exact null distribution of U for samples of m and n without ties, as P(U <= q) for q = 0..mn.
 * Placing the pooled sample in increasing order, a y placed after i x's adds i to U, so the number
 * of orders with U = u over i x's and j y's is N(i, j, u) = N(i - 1, j, u) + N(i, j - 1, u - i):
 * sums of positive counts only, exact enough in doubles even for C(98, 49) ~ 2.5e28 orders.
 */
static double *exact_u_cdf(size_t m, size_t n)
{
	size_t mn = m * n, width = mn + 1;
	double *count = xcalloc((n + 1) * width, sizeof(*count)), *cdf, total = 0;

	/* count[j * width + u] holds N(i, j, u) for the current i; i = 0 first. */
	for (size_t j = 0; j <= n; j++)
		count[j * width] = 1;
	for (size_t i = 1; i <= m; i++) {
		for (size_t j = 1; j <= n; j++) {
			double *row = &count[j * width], *prev = &count[(j - 1) * width];

			for (size_t u = mn; u >= i; u--)
				row[u] += prev[u - i];
			/* row[u] for u < i has no y-last order: N(i - 1, j, u) stays as it is. */
		}
	}
	cdf = xmalloc(width * sizeof(*cdf));
	for (size_t u = 0; u <= mn; u++)
		total += count[n * width + u];
	for (size_t u = 0; u <= mn; u++)
		cdf[u] = (u ? cdf[u - 1] : 0) + count[n * width + u] / total;
	free(count);
	return cdf;
}

/*
 * U of y over x, and the tie term sum(t^3 - t) over groups of equal values in the pooled sample,
 * in one merge of the two sorted arrays.
 */
static void mann_whitney_u(const double *x, size_t m, const double *y, size_t n, double *u,
			   double *ties)
{
	size_t i = 0, j = 0;

	*u = 0;
	*ties = 0;
	while (i < m || j < n) {
		double v = (j >= n || (i < m && x[i] <= y[j])) ? x[i] : y[j];
		size_t below = i, cx = 0, cy = 0;
		double t;

		while (i < m && x[i] == v) {
			i++;
			cx++;
		}
		while (j < n && y[j] == v) {
			j++;
			cy++;
		}
		*u += (double)cy * ((double)below + 0.5 * (double)cx);
		t = (double)(cx + cy);
		*ties += t * t * t - t;
	}
}

int rank_test_run(const double *base, size_t m, const double *new, size_t n, double alpha,
		  struct rank_test *out)
{
	double mn = (double)m * (double)n, total = (double)(m + n);
	double u, ties, var, sd, dev, lo_rank;
	double *lx, *ly;
	uint64_t pairs = (uint64_t)m * (uint64_t)n;

	if (!m || !n || !(alpha > 0 && alpha < 1) || !sorted_ascending(base, m) ||
	    !sorted_ascending(new, n))
		return -EINVAL;

	mann_whitney_u(base, m, new, n, &u, &ties);
	var = mn / 12 * ((total + 1) - ties / (total * (total - 1)));
	sd = var > 0 ? sqrt(var) : 0;
	out->u = u;
	out->z = 0;
	out->p_value = 1;
	if (sd > 0) {
		dev = u - mn / 2;
		/* Continuity correction towards the centre: U moves in steps of 1/2. */
		if (dev > 0.5)
			dev -= 0.5;
		else if (dev < -0.5)
			dev += 0.5;
		else
			dev = 0;
		out->z = dev / sd;
		out->p_value = erfc(fabs(out->z) / M_SQRT2);
	}
	/*
	 * The interval's ends are the k-th smallest and k-th largest differences, with k the largest
	 * rank such that P(U <= k - 1) <= alpha/2 under the null (as R's wilcox.test with conf.int).
	 * Small samples without ties use U's exact distribution, the rest its normal approximation
	 * with continuity correction.
	 */
	if (ties == 0 && m < EXACT_MAX_SAMPLES && n < EXACT_MAX_SAMPLES) {
		double *cdf = exact_u_cdf(m, n);
		size_t iu = (size_t)u, mn_int = m * n;

		/* U is symmetric about mn/2: P(U >= u) = P(U <= mn - u). */
		out->p_value = fmin(1, 2 * fmin(cdf[iu], cdf[mn_int - iu]));
		lo_rank = 0;
		while (lo_rank <= (double)mn_int && cdf[(size_t)lo_rank] <= alpha / 2)
			lo_rank++;
		free(cdf);
	} else {
		lo_rank = ceil(mn / 2 - normal_quantile(1 - alpha / 2) * sd - 0.5);
	}

	lx = log_durations(base, m);
	ly = log_durations(new, n);
	if (pairs % 2)
		out->ratio = exp(kth_difference(lx, m, ly, n, pairs / 2 + 1));
	else
		out->ratio = exp((kth_difference(lx, m, ly, n, pairs / 2) +
				  kth_difference(lx, m, ly, n, pairs / 2 + 1)) / 2);
	if (sd > 0 && lo_rank >= 1) {
		uint64_t k = (uint64_t)lo_rank;

		out->ratio_lo = exp(kth_difference(lx, m, ly, n, k));
		out->ratio_hi = exp(kth_difference(lx, m, ly, n, pairs + 1 - k));
	} else if (sd == 0) {
		/* Every launch on both sides took the same time: the ratio is exact. */
		out->ratio_lo = out->ratio_hi = out->ratio;
	} else {
		out->ratio_lo = 0;
		out->ratio_hi = INFINITY;
	}
	free(lx);
	free(ly);
	return 0;
}
