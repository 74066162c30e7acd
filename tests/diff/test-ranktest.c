/*
 * Tests of the statistics behind diff and check.
 *
 *   test-ranktest units   exact values: U, its tie-corrected p-value, the Hodges-Lehmann ratio and
 *                         interval against brute force over all pairs, duration summaries
 *   test-ranktest power   the verdict rule of diff_judge on simulated kernel timings, 1000 seeded
 *                         trials per scenario: detection of a 5% slowdown, false alarms on equal
 *                         distributions, the rate at the threshold, interval coverage, and the
 *                         same through a baseline's 64 quantile points
 *
 * Noise model of a simulated launch (what H200 kernel timings look like in a steady loop: a tight
 * lognormal body plus rare slow launches from preemption, clock dips or a contended copy engine):
 *   duration = median * exp(sigma * Z), Z standard normal, rounded to whole ns;
 *   with probability p_out the launch is an outlier, multiplied by U(1 + out_lo, 1 + out_hi).
 * A slowdown multiplies every NEW launch by the shift (the model the rank statistics assume).
 * Everything is seeded: the rates printed are the same on every run.
 */
#include "analyzer/diff/diff.h"
#include "analyzer/diff/durations.h"
#include "analyzer/diff/ranktest.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			failures++;                                           \
		}                                                             \
	} while (0)

static int close_to(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

/* xoshiro256**, seeded through splitmix64. */
struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t result = rotl(r->s[1] * 5, 7) * 9, t = r->s[1] << 17;

	r->s[2] ^= r->s[0];
	r->s[3] ^= r->s[1];
	r->s[1] ^= r->s[2];
	r->s[0] ^= r->s[3];
	r->s[2] ^= t;
	r->s[3] = rotl(r->s[3], 45);
	return result;
}

/* Uniform in (0, 1). */
static double rng_uniform(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(struct rng *r)
{
	return sqrt(-2 * log(rng_uniform(r))) * cos(2 * M_PI * rng_uniform(r));
}

static int compare_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static void sort(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), compare_double);
}

/* ---- units ---- */

/* Ratio estimate and interval from all m*n pairwise log differences, k the interval's rank. */
static void brute_force_hl(const double *x, size_t m, const double *y, size_t n, size_t k,
			   double *ratio, double *lo, double *hi)
{
	size_t mn = m * n, c = 0;
	double *d = malloc(mn * sizeof(*d));

	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++)
			d[c++] = log(y[j]) - log(x[i]);
	sort(d, mn);
	*ratio = exp(mn % 2 ? d[mn / 2] : (d[mn / 2 - 1] + d[mn / 2]) / 2);
	*lo = exp(d[k - 1]);
	*hi = exp(d[mn - k]);
	free(d);
}

/* The normal-approximation rank of the interval, tie-corrected, as in R's wilcox.test. */
static size_t normal_rank(const double *x, size_t m, const double *y, size_t n, double alpha)
{
	double pooled[200], ties = 0, total = (double)(m + n), sd;

	memcpy(pooled, x, m * sizeof(*x));
	memcpy(pooled + m, y, n * sizeof(*y));
	sort(pooled, m + n);
	for (size_t a = 0, b; a < m + n; a = b) {
		for (b = a; b < m + n && pooled[b] == pooled[a]; b++)
			;
		ties += pow((double)(b - a), 3) - (double)(b - a);
	}
	sd = sqrt((double)(m * n) / 12 * ((total + 1) - ties / (total * (total - 1))));
	return (size_t)ceil((double)(m * n) / 2 - normal_quantile(1 - alpha / 2) * sd - 0.5);
}

/*
 * U's exact null distribution for m + n <= 20 by enumerating every placement of the x's among the
 * pooled ranks: counts[u] orders give U = u.
 */
static void enumerate_u(size_t m, size_t n, double *counts)
{
	memset(counts, 0, (m * n + 1) * sizeof(*counts));
	for (uint32_t mask = 0; mask < (1u << (m + n)); mask++) {
		size_t xs = 0, u = 0;

		if ((size_t)__builtin_popcount(mask) != m)
			continue;
		for (size_t pos = 0; pos < m + n; pos++) {
			if (mask & (1u << pos))
				xs++;
			else
				u += xs;
		}
		counts[u]++;
	}
}

static void test_units(void)
{
	struct rank_test t;
	double x[40], y[40];
	struct duration_summary s;

	/* Quantiles of the standard normal. */
	CHECK(close_to(normal_quantile(0.975), 1.959963984540054, 1e-13), "z(0.975)");
	CHECK(close_to(normal_quantile(0.995), 2.575829303548901, 1e-13), "z(0.995)");
	CHECK(close_to(normal_quantile(1e-6), -4.753424308822899, 1e-12), "z(1e-6)");
	CHECK(normal_quantile(0.5) == 0, "z(0.5)");

	/*
	 * base 1..10, new 6..15: U = 87.5 by hand, five tied pairs, tie-corrected variance
	 * 100/12 * (21 - 30/380), z = (87.5 - 50 - 0.5) / sd.
	 */
	for (int i = 0; i < 10; i++) {
		x[i] = i + 1;
		y[i] = i + 6;
	}
	CHECK(rank_test_run(x, 10, y, 10, 0.05, &t) == 0, "rank_test_run");
	CHECK(t.u == 87.5, "U = %g, want 87.5", t.u);
	{
		double sd = sqrt(100.0 / 12 * (21 - 30.0 / 380)), z = 37 / sd;

		CHECK(close_to(t.z, z, 1e-12), "z = %.15g, want %.15g", t.z, z);
		CHECK(close_to(t.p_value, erfc(z / M_SQRT2), 1e-12), "p = %g", t.p_value);
		CHECK(close_to(t.p_value, 0.005076, 1e-3), "p = %g, want 0.005076", t.p_value);
	}
	/* Symmetric: swapping the sides mirrors U and gives the same p. */
	{
		struct rank_test r;

		rank_test_run(y, 10, x, 10, 0.05, &r);
		CHECK(r.u == 100 - 87.5 && close_to(r.p_value, t.p_value, 1e-12), "swap");
		CHECK(close_to(r.ratio, 1 / t.ratio, 1e-12), "swap ratio");
	}

	/* An exact 10% slowdown of a spread-out sample: the HL ratio is exactly 1.1. */
	for (int i = 0; i < 25; i++) {
		x[i] = 1000.0 * (1 + i * 0.37);
		y[i] = x[i] * 1.1;
	}
	rank_test_run(x, 25, y, 25, 0.01, &t);
	CHECK(close_to(t.ratio, 1.1, 1e-12), "ratio = %.15g, want 1.1", t.ratio);
	CHECK(t.ratio_lo < 1.1 && t.ratio_hi > 1.1, "interval [%g, %g] holds 1.1", t.ratio_lo,
	      t.ratio_hi);

	/* Identical constant samples: ratio exactly 1, p 1, interval a point. */
	for (int i = 0; i < 12; i++)
		x[i] = y[i] = 5000;
	rank_test_run(x, 12, y, 12, 0.01, &t);
	CHECK(t.ratio == 1 && t.p_value == 1 && t.ratio_lo == 1 && t.ratio_hi == 1,
	      "constant: ratio %g p %g [%g, %g]", t.ratio, t.p_value, t.ratio_lo, t.ratio_hi);

	/* Too few launches for a 99% interval: unbounded, never a verdict. */
	x[0] = 10, x[1] = 11, y[0] = 30, y[1] = 31;
	rank_test_run(x, 2, y, 2, 0.01, &t);
	CHECK(t.ratio_lo == 0 && isinf(t.ratio_hi), "tiny: [%g, %g]", t.ratio_lo, t.ratio_hi);

	/* Bad input is refused. */
	x[0] = 3, x[1] = 2;
	CHECK(rank_test_run(x, 2, y, 2, 0.01, &t) < 0, "unsorted base accepted");
	CHECK(rank_test_run(y, 2, y, 0, 0.01, &t) < 0, "empty new accepted");
	CHECK(rank_test_run(y, 2, y, 2, 1.5, &t) < 0, "alpha 1.5 accepted");

	/* Selection against brute force over all pairs, with ties (integer ns), normal path. */
	{
		struct rng r;
		double bx[100], by[100];

		rng_seed(&r, 7);
		for (int trial = 0; trial < 100; trial++) {
			size_t m = 50 + rng_next(&r) % 50, n = 50 + rng_next(&r) % 50;
			double ratio, lo, hi;

			for (size_t i = 0; i < m; i++)
				bx[i] = round(100 * exp(0.05 * rng_normal(&r)));
			for (size_t j = 0; j < n; j++)
				by[j] = round(103 * exp(0.05 * rng_normal(&r)));
			sort(bx, m);
			sort(by, n);
			CHECK(rank_test_run(bx, m, by, n, 0.05, &t) == 0, "run");
			brute_force_hl(bx, m, by, n, normal_rank(bx, m, by, n, 0.05), &ratio, &lo, &hi);
			CHECK(t.ratio == ratio && t.ratio_lo == lo && t.ratio_hi == hi,
			      "trial %d (m %zu n %zu): %.17g [%.17g, %.17g], brute force %.17g "
			      "[%.17g, %.17g]",
			      trial, m, n, t.ratio, t.ratio_lo, t.ratio_hi, ratio, lo, hi);
		}
	}

	/* Small samples without ties: exact p and interval rank against full enumeration. */
	{
		struct rng r;
		double counts[101];

		rng_seed(&r, 11);
		for (int trial = 0; trial < 200; trial++) {
			size_t m = 2 + rng_next(&r) % 9, n = 2 + rng_next(&r) % 9, k = 0;
			double ratio, lo, hi, total = 0, below = 0, above = 0, p, cum = 0;
			double alpha = trial % 2 ? 0.05 : 0.01;

			for (size_t i = 0; i < m; i++)
				x[i] = 1000 * exp(0.05 * rng_normal(&r));
			for (size_t j = 0; j < n; j++)
				y[j] = 1000 * exp(0.05 * rng_normal(&r) + 0.04 * (trial % 3));
			sort(x, m);
			sort(y, n);
			CHECK(rank_test_run(x, m, y, n, alpha, &t) == 0, "run");
			enumerate_u(m, n, counts);
			for (size_t u = 0; u <= m * n; u++) {
				total += counts[u];
				below += (double)u <= t.u ? counts[u] : 0;
				above += (double)u >= t.u ? counts[u] : 0;
			}
			p = fmin(1, 2 * fmin(below, above) / total);
			CHECK(close_to(t.p_value, p, 1e-12), "trial %d (m %zu n %zu U %g): p %.15g, "
			      "enumerated %.15g", trial, m, n, t.u, t.p_value, p);
			while (k <= m * n && (cum += counts[k]) / total <= alpha / 2)
				k++;
			if (k == 0) {
				CHECK(t.ratio_lo == 0 && isinf(t.ratio_hi), "trial %d: bounded interval "
				      "where none exists", trial);
				continue;
			}
			brute_force_hl(x, m, y, n, k, &ratio, &lo, &hi);
			CHECK(t.ratio == ratio && t.ratio_lo == lo && t.ratio_hi == hi,
			      "trial %d (m %zu n %zu k %zu): %.17g [%.17g, %.17g], brute force %.17g "
			      "[%.17g, %.17g]", trial, m, n, k, t.ratio, t.ratio_lo, t.ratio_hi, ratio,
			      lo, hi);
		}
	}

	/* 5 against 5, completely separated: exact two-sided p = 2 / C(10, 5) = 2/252. */
	for (int i = 0; i < 5; i++) {
		x[i] = 1000 + i;
		y[i] = 3000 + i;
	}
	rank_test_run(x, 5, y, 5, 0.01, &t);
	CHECK(close_to(t.p_value, 2.0 / 252, 1e-12), "5v5 p %.15g, want %.15g", t.p_value,
	      2.0 / 252);
	/* P(U <= 0) = 1/252 <= 0.005 < P(U <= 1): k = 1, the interval is [min, max] ratio. */
	CHECK(close_to(t.ratio_lo, 3000.0 / 1004, 1e-12) && close_to(t.ratio_hi, 3004.0 / 1000, 1e-12),
	      "5v5 interval [%g, %g]", t.ratio_lo, t.ratio_hi);

	/* Summaries: 1..9 and 100. */
	{
		double v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 100 }, pts[4];

		duration_summarize(v, 10, &s);
		CHECK(s.count == 10 && s.min == 1 && s.max == 100 && s.total == 145, "basic");
		CHECK(s.median == 5.5 && s.mean == 14.5, "median %g mean %g", s.median, s.mean);
		CHECK(close_to(s.p25, 3.25, 1e-12) && close_to(s.p95, 59.05, 1e-12),
		      "p25 %g p95 %g", s.p25, s.p95);
		/* |v - 5.5| = 4.5 3.5 2.5 1.5 .5 .5 1.5 2.5 3.5 94.5: median 2.5. */
		CHECK(s.mad == 2.5, "mad %g", s.mad);
		CHECK(close_to(s.stddev, 30.1523907, 1e-7), "stddev %g", s.stddev);
		CHECK(duration_points(v, 10, pts, 4) == 4 && pts[0] == 2 && pts[1] == 4 &&
			      pts[2] == 7 && pts[3] == 9,
		      "points %g %g %g %g", pts[0], pts[1], pts[2], pts[3]);
		duration_summarize(v, 1, &s);
		CHECK(s.median == 1 && s.mad == 0 && s.stddev == 0, "one launch");
	}
}

/* ---- power ---- */

struct noise {
	const char *name;
	double sigma;
	double p_out, out_lo, out_hi;
};

static const struct noise noise_typical = { "lognormal 1.5%, 2% outliers x1.2-3", 0.015, 0.02,
					    0.2, 2.0 };
static const struct noise noise_heavy = { "lognormal 2%, 5% outliers x1.1-2", 0.02, 0.05, 0.1,
					  1.0 };

#define MEDIAN_NS 20000.0
#define TRIALS 1000

static void draw(struct rng *r, const struct noise *nz, double shift, double *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double d = MEDIAN_NS * shift * exp(nz->sigma * rng_normal(r));

		if (rng_uniform(r) < nz->p_out)
			d *= 1 + nz->out_lo + (nz->out_hi - nz->out_lo) * rng_uniform(r);
		out[i] = round(d);
	}
	sort(out, n);
}

struct outcome {
	int slower, faster, significant, covered;
};

/*
 * TRIALS comparisons of n_new launches against n_base launches (compressed to 64 points when
 * through_baseline, as check does), NEW slowed by shift.
 */
static struct outcome simulate(uint64_t seed, const struct noise *nz, double shift, size_t n_base,
			       size_t n_new, int through_baseline, double threshold)
{
	struct diff_limits limits = { threshold, DIFF_DEFAULT_ALPHA, DIFF_DEFAULT_MIN_SAMPLES };
	struct outcome o = { 0 };
	double *base = malloc(n_base * sizeof(*base)), *new = malloc(n_new * sizeof(*new));
	double points[64];
	struct rng r;

	rng_seed(&r, seed);
	for (int trial = 0; trial < TRIALS; trial++) {
		struct rank_test t;
		const double *b = base;
		size_t m = n_base;
		enum diff_verdict v;

		draw(&r, nz, 1.0, base, n_base);
		draw(&r, nz, shift, new, n_new);
		if (through_baseline) {
			m = duration_points(base, n_base, points, 64);
			b = points;
		}
		rank_test_run(b, m, new, n_new, limits.alpha, &t);
		v = diff_judge(&t, n_base, n_new, &limits);
		o.slower += v == DIFF_SLOWER;
		o.faster += v == DIFF_FASTER;
		o.significant += t.p_value < limits.alpha;
		o.covered += t.ratio_lo <= shift && shift <= t.ratio_hi;
	}
	free(base);
	free(new);
	return o;
}

static double rate(int count)
{
	return (double)count / TRIALS;
}

/* One line of the table; returns the rate asked for. */
static void report(const char *what, const struct noise *nz, const struct outcome *o)
{
	printf("%-44s %-36s slower %5.1f%%  faster %4.1f%%  p<0.01 %5.1f%%  CI covers %5.1f%%\n",
	       what, nz->name, 100 * rate(o->slower), 100 * rate(o->faster),
	       100 * rate(o->significant), 100 * rate(o->covered));
}

static void test_power(void)
{
	const double t = DIFF_DEFAULT_THRESHOLD;
	struct outcome o;

	printf("%d trials per line, alpha %.2f, threshold %.0f%%, median %.0f ns\n", TRIALS,
	       DIFF_DEFAULT_ALPHA, 100 * t, MEDIAN_NS);

	/* The proof of issue 6: a 5% slowdown, 100 launches a side, is caught in >= 95%. */
	o = simulate(1, &noise_typical, 1.05, 100, 100, 0, t);
	report("diff: 5% slower, 100 vs 100", &noise_typical, &o);
	CHECK(rate(o.slower) >= 0.95, "detection %.3f < 0.95", rate(o.slower));
	CHECK(rate(o.covered) >= 0.97, "coverage %.3f < 0.97 at 99%%", rate(o.covered));

	/* ... and equal distributions raise a false alarm in <= 1%. */
	o = simulate(2, &noise_typical, 1.0, 100, 100, 0, t);
	report("diff: equal, 100 vs 100", &noise_typical, &o);
	CHECK(rate(o.slower) <= 0.01, "false alarms %.3f > 0.01", rate(o.slower));
	CHECK(rate(o.faster) <= 0.01, "false 'faster' %.3f > 0.01", rate(o.faster));
	/* The test alone is calibrated: about alpha of equal pairs are 'significant'. */
	CHECK(rate(o.significant) >= 0.002 && rate(o.significant) <= 0.025,
	      "p < alpha in %.3f of equal pairs, want about 0.01", rate(o.significant));
	CHECK(rate(o.covered) >= 0.97, "coverage %.3f < 0.97 at 99%%", rate(o.covered));

	/* Without a threshold the rule is the bare two-sided test: still <= alpha/2 slower. */
	o = simulate(3, &noise_typical, 1.0, 100, 100, 0, 0.0);
	report("diff: equal, threshold 0", &noise_typical, &o);
	CHECK(rate(o.slower) <= 0.01, "false alarms at threshold 0: %.3f > 0.01", rate(o.slower));

	/* A slowdown of exactly the threshold is not 'more than the threshold': flagged <= alpha. */
	o = simulate(4, &noise_typical, 1.0 + t, 100, 100, 0, t);
	report("diff: 3% slower (= threshold)", &noise_typical, &o);
	CHECK(rate(o.slower) <= 0.01, "flagged at the threshold in %.3f > 0.01", rate(o.slower));

	/* Heavier noise. */
	o = simulate(5, &noise_heavy, 1.05, 100, 100, 0, t);
	report("diff: 5% slower, 100 vs 100", &noise_heavy, &o);
	CHECK(rate(o.slower) >= 0.95, "detection (heavy noise) %.3f < 0.95", rate(o.slower));
	o = simulate(6, &noise_heavy, 1.0, 100, 100, 0, t);
	report("diff: equal, 100 vs 100", &noise_heavy, &o);
	CHECK(rate(o.slower) <= 0.01, "false alarms (heavy noise) %.3f > 0.01", rate(o.slower));

	/* check: the baseline keeps 64 quantile points of the base launches. */
	o = simulate(7, &noise_typical, 1.05, 100, 100, 1, t);
	report("check: 5% slower, 64 points vs 100", &noise_typical, &o);
	CHECK(rate(o.slower) >= 0.95, "detection via baseline %.3f < 0.95", rate(o.slower));
	o = simulate(8, &noise_typical, 1.0, 100, 100, 1, t);
	report("check: equal, 64 points vs 100", &noise_typical, &o);
	CHECK(rate(o.slower) <= 0.01, "false alarms via baseline %.3f > 0.01", rate(o.slower));
	CHECK(rate(o.significant) <= 0.025, "p < alpha via baseline in %.3f",
	      rate(o.significant));
	o = simulate(9, &noise_typical, 1.05, 1000, 100, 1, t);
	report("check: 5% slower, 64 points of 1000 vs 100", &noise_typical, &o);
	CHECK(rate(o.slower) >= 0.95, "detection via baseline of 1000 %.3f < 0.95",
	      rate(o.slower));
	o = simulate(10, &noise_typical, 1.0, 1000, 100, 1, t);
	report("check: equal, 64 points of 1000 vs 100", &noise_typical, &o);
	CHECK(rate(o.slower) <= 0.01, "false alarms via baseline of 1000 %.3f > 0.01",
	      rate(o.slower));
	o = simulate(11, &noise_heavy, 1.05, 100, 100, 1, t);
	report("check: 5% slower, 64 points vs 100", &noise_heavy, &o);
	CHECK(rate(o.slower) >= 0.95, "detection via baseline (heavy) %.3f < 0.95",
	      rate(o.slower));

	/* Where the rule runs out of launches (informational: with 10 a side it should be weak). */
	o = simulate(12, &noise_typical, 1.05, 10, 10, 0, t);
	report("diff: 5% slower, 10 vs 10 (info)", &noise_typical, &o);
	o = simulate(13, &noise_typical, 1.05, 30, 30, 0, t);
	report("diff: 5% slower, 30 vs 30 (info)", &noise_typical, &o);
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "units") && strcmp(argv[1], "power"))) {
		fprintf(stderr, "usage: test-ranktest units|power\n");
		return 2;
	}
	if (!strcmp(argv[1], "units"))
		test_units();
	else
		test_power();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	else
		printf("ok\n");
	return failures ? 1 : 0;
}
