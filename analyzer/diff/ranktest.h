/*
 * Rank statistics for comparing two samples of kernel durations: the Mann-Whitney U test and the
 * Hodges-Lehmann estimate of the shift between them, with its distribution-free confidence
 * interval. diff and check build their verdicts on these; nothing here knows about traces.
 *
 * Kernel timings are compared on a log scale: a change to a kernel (or a clock change) scales its
 * duration, it does not add a constant. On log(duration) the two samples differ by a shift s, the
 * duration ratio NEW/BASE is exp(s), and the rank statistics below make no assumption about the
 * shape of the distribution (timings are skewed and carry outliers: a preempted launch, a clock
 * dip). Ranks are invariant under log, so the U test is the same on either scale.
 *
 * The interval is the one that inverts the test (Bauer 1972; Hollander & Wolfe, ch. 4.3): the k-th
 * smallest and k-th largest of the m*n pairwise differences log(new_j) - log(base_i), with k from
 * U's null distribution: exact for small samples without ties, else its normal approximation
 * (tie-corrected). It covers the true ratio with
 * probability 1 - alpha whatever the distribution, under the shift model, and it is robust: one wild
 * launch moves it by at most one rank.
 */
#ifndef GPT_DIFF_RANKTEST_H
#define GPT_DIFF_RANKTEST_H

#include <stddef.h>

struct rank_test {
	double u;		/* pairs (base_i, new_j) with new_j > base_i, ties counted 1/2 */
	double z;		/* (U - mn/2) / sd, continuity- and tie-corrected; 0 when sd is 0 */
	double p_value;		/* two-sided; exact below 50 launches a side without ties */
	double ratio;		/* Hodges-Lehmann estimate of NEW/BASE: exp(median pairwise log ratio) */
	double ratio_lo;	/* 1 - alpha confidence interval of the ratio; 0 and INFINITY when */
	double ratio_hi;	/*   the samples are too small for one at this level */
};

/*
 * Compare NEW against BASE. Both arrays hold durations in ns, sorted ascending, m and n >= 1
 * (values <= 0 are read as 1 ns). alpha in (0, 1) sets the interval's level. Returns 0, or -EINVAL
 * for empty or unsorted input or an alpha outside (0, 1).
 */
int rank_test_run(const double *base, size_t m, const double *new, size_t n, double alpha,
		  struct rank_test *out);

/* The standard normal quantile: x with P(Z <= x) = p, for p in (0, 1). */
double normal_quantile(double p);

#endif
