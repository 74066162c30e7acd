/*
 * Baseline files: per-kernel timing summaries that a team commits next to its code, and that
 * `gpt-trace check` compares a new trace against (docs/ci.md shows one).
 *
 * A baseline is pretty-printed JSON with a fixed key order, one kernel per two lines, kernels sorted
 * by name and launch configuration, so that a change to it reads well in code review. Per kernel it
 * holds the launch count and distribution summary (median, p5/p25/p75/p95, min, max, mean, stddev,
 * MAD, total) and up to BASELINE_DEFAULT_POINTS evenly spaced quantiles of the durations.
 *
 * check runs the same rank test as diff with those quantile points standing in for the base
 * launches. A grid of quantiles is less variable than the random sample the test's null
 * distribution assumes, so the test stays conservative (false alarms below alpha; the seeded
 * simulation in tests/diff measures it) and loses little power: 64 points against 100 new launches
 * still catch a 5% slowdown under 1.5% noise in every trial. The launch count, not the number of
 * points, is what min-samples is checked against.
 */
#ifndef GPT_DIFF_BASELINE_H
#define GPT_DIFF_BASELINE_H

#include "analyzer/diff/diff.h"

#include <stdio.h>

#define BASELINE_FORMAT_VERSION 1
#define BASELINE_DEFAULT_POINTS 64
#define BASELINE_MAX_POINTS 4096

/* Write set as a baseline keeping at most max_points quantiles per kernel; 0 or -EIO. */
int baseline_write(const struct kernel_set *set, size_t max_points, FILE *out);

/*
 * Read a baseline file into a kernel set (from_baseline set, samples are the stored points,
 * summaries as stored). Returns 0, or a negative error with one line in err naming the file and
 * what is wrong with it. Free the set with kernel_set_free().
 */
int baseline_read(const char *path, struct kernel_set **out, char *err, size_t errlen);

/* Whether path looks like a baseline (JSON) rather than a trace: 1, 0, or -errno if unreadable. */
int baseline_sniff(const char *path);

#endif
