/*
 * Descriptive summaries of one kernel's launch durations, shared by diff (its report columns) and
 * baseline (the numbers a team reviews and commits). Input is always a sorted array of durations
 * in ns; nothing here allocates.
 */
#ifndef GPT_DIFF_DURATIONS_H
#define GPT_DIFF_DURATIONS_H

#include <stddef.h>

struct duration_summary {
	size_t count;
	double min, max;
	double mean, stddev;		/* stddev with n - 1; 0 for one launch */
	double median, p5, p25, p75, p95;
	double mad;			/* median absolute deviation from the median, unscaled */
	double total;			/* sum of all durations */
};

/* Summarize n >= 1 sorted durations. */
void duration_summarize(const double *sorted, size_t n, struct duration_summary *out);

/* Quantile q in [0, 1] of n >= 1 sorted values, interpolated between order statistics (R type 7). */
double duration_quantile(const double *sorted, size_t n, double q);

/*
 * A compact stand-in for a large sample: all n values when n <= max_points, otherwise max_points
 * order statistics at evenly spaced ranks (the (i + 1/2) / max_points quantiles), each standing for
 * n / max_points launches. Writes into points (room for max_points) and returns how many.
 */
size_t duration_points(const double *sorted, size_t n, double *points, size_t max_points);

#endif
