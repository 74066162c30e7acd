/*
 * Kernel timing comparison for CI: the engine behind `gpt-trace diff` and `gpt-trace check`.
 *
 * A kernel set holds, per kernel (demangled name and launch configuration), the sorted durations of
 * its launches, read from a trace's canonical `kernels` view (optionally scoped to an NVTX range,
 * the first launches of each kernel dropped as warm-up), plus the GPU totals of the trace. A
 * baseline file (baseline.h) loads into the same structure, with each kernel's sample compressed to
 * a few dozen quantile points.
 *
 * diff_compare() pairs the kernels of two sets and gives each a verdict. The decision rule, in one
 * place (diff_judge):
 *
 *   slower  the Mann-Whitney test is significant at alpha AND the whole 1 - alpha confidence
 *           interval of the NEW/BASE duration ratio lies above 1 + threshold;
 *   faster  significant AND the interval lies below 1 / (1 + threshold);
 *   same    otherwise (noise, or a change smaller than the threshold);
 *   new, missing     the kernel ran on one side only;
 *   insufficient     fewer than min_samples launches on a side: not judged;
 *   ignored          excluded by the configuration.
 *
 * Requiring the interval's lower end (not the point estimate) to clear the threshold makes the rule
 * a test of "slower by more than the threshold": a kernel whose true slowdown is at most the
 * threshold is flagged with probability at most alpha/2, however many launches are recorded. With
 * thousands of launches the plain test flags a 0.3% clock difference between two runs; CI should not.
 * Only "slower" fails a check.
 *
 * Kernels are paired by name and launch configuration (grid, block). A name launched with several
 * configurations is compared per configuration; when a name has exactly one configuration that the
 * other side lacks on each side (say the grid changed), those two are compared with each other and
 * the change of configuration is reported.
 */
#ifndef GPT_DIFF_DIFF_H
#define GPT_DIFF_DIFF_H

#include "analyzer/diff/durations.h"
#include "analyzer/diff/ranktest.h"

#include <stdint.h>
#include <stdio.h>

struct trace;

/* Defaults: a slowdown of more than 3%, proven at the 1% level, with at least 10 launches a side. */
#define DIFF_DEFAULT_THRESHOLD 0.03
#define DIFF_DEFAULT_ALPHA 0.01
#define DIFF_DEFAULT_MIN_SAMPLES 10

/* One kernel: name, launch configuration and the durations of its launches. */
struct kernel_timing {
	char *name;
	int64_t grid[3], block[3];
	double *sample;		/* sorted durations (ns) the test runs on: every launch, or a */
	size_t nsample;		/*   baseline's quantile points */
	struct duration_summary summary;	/* of every launch kept (after warm-up) */
	size_t skipped;		/* warm-up launches dropped */
};

/* Whole-trace GPU time, over kernels, copies and memsets (in the scope, warm-up included). */
struct gpu_totals {
	double kernel_ns, copy_ns, set_ns;
	double span_ns;		/* per device, first start to last end, summed over devices */
	double busy_ns;		/* per device, the union of all GPU activity, summed */
	double idle_ns;		/* span_ns - busy_ns */
	size_t kernels, copies, sets;	/* launches and operations */
};

struct kernel_set {
	struct kernel_timing *kernels;	/* sorted by name, grid, block */
	size_t count;
	struct gpu_totals totals;
	char *source;		/* the trace or baseline file it came from */
	char *nvtx;		/* NVTX range it was scoped to, or NULL */
	size_t skip_first;	/* warm-up launches dropped per kernel */
	int from_baseline;	/* samples are quantile points (see baseline.h) */
};

/*
 * Read the kernels of a trace: scoped to the NVTX range nvtx (NULL: whole trace; sets the trace's
 * scope, see trace_set_scope), dropping the first skip_first launches of each kernel. Returns 0, or
 * a negative error with one line in err. Free the set with kernel_set_free().
 */
int kernel_set_load(struct trace *trace, const char *nvtx, size_t skip_first,
		    struct kernel_set **out, char *err, size_t errlen);
void kernel_set_free(struct kernel_set *set);

/* Build a set by hand (baseline loading, tests): an empty set owning a copy of source. */
struct kernel_set *kernel_set_new(const char *source);
/* Append a kernel; takes ownership of name and sample (sorted, nsample >= 1). */
struct kernel_timing *kernel_set_add(struct kernel_set *set, char *name, const int64_t grid[3],
				     const int64_t block[3], double *sample, size_t nsample);
/* Sort the kernels by name and configuration; call once all are added. */
void kernel_set_sort(struct kernel_set *set);

/* Remove the kernels cfg ignores (used when saving a baseline); returns how many. */
struct diff_config;
size_t kernel_set_drop_ignored(struct kernel_set *set, const struct diff_config *cfg);

/* "name" or "name [grid 64x1x1 block 256x1x1]"; writes at most len bytes. */
void kernel_timing_label(const struct kernel_timing *k, int with_config, char *buf, size_t len);

/* What decides a verdict; per kernel, from the configuration. */
struct diff_limits {
	double threshold;	/* relative slowdown that counts: 0.03 is 3% */
	double alpha;		/* significance level; the interval's level is 1 - alpha */
	size_t min_samples;	/* fewer launches on either side: not judged */
};

enum diff_verdict {
	DIFF_SLOWER,
	DIFF_FASTER,
	DIFF_NEW,
	DIFF_MISSING,
	DIFF_INSUFFICIENT,
	DIFF_SAME,
	DIFF_IGNORED,
};

const char *diff_verdict_name(enum diff_verdict verdict);

/* The decision rule above, for a kernel present on both sides with n_base and n_new launches. */
enum diff_verdict diff_judge(const struct rank_test *test, size_t n_base, size_t n_new,
			     const struct diff_limits *limits);

/*
 * Thresholds and scope, from defaults, a config file (docs/ci.md) and the command line. Kernel
 * overrides are tried in file order, the first whose glob matches the kernel's name applies.
 */
struct diff_override {
	char *glob;
	struct diff_limits limits;	/* the defaults, with the keys the section sets */
	unsigned set;			/* which keys the section set: DIFF_SET_* */
	int ignore;
};

enum {
	DIFF_SET_THRESHOLD = 1,
	DIFF_SET_ALPHA = 2,
	DIFF_SET_MIN_SAMPLES = 4,
};

struct diff_config {
	struct diff_limits defaults;
	struct diff_override *overrides;
	size_t noverrides;
	char **ignore;		/* globs of kernel names to leave out */
	size_t nignore;
	char *nvtx;		/* NVTX range to scope to, or NULL */
	size_t skip_first;
	int has_nvtx, has_skip_first;	/* set by the file or the command line, not defaulted */
};

void diff_config_init(struct diff_config *cfg);
void diff_config_release(struct diff_config *cfg);
/*
 * Read a config file into cfg (keys it sets replace what cfg holds). Returns 0, or a negative error
 * with one line in err naming the file, line and reason.
 */
int diff_config_read(struct diff_config *cfg, const char *path, char *err, size_t errlen);
void diff_config_add_ignore(struct diff_config *cfg, const char *glob);
/* The limits for a kernel name; returns 1 if the kernel is ignored, else 0. */
int diff_config_limits(const struct diff_config *cfg, const char *name, struct diff_limits *out);

/* Parse "3%" or "0.03" as a fraction in [0, 1); returns 0 or -EINVAL. */
int diff_parse_fraction(const char *s, double *out);

/* One compared kernel. */
struct kernel_diff {
	enum diff_verdict verdict;
	const struct kernel_timing *base, *new;	/* NULL on the side it is absent; point into the sets */
	struct diff_limits limits;
	int tested;			/* test below is valid */
	struct rank_test test;
	int config_changed;		/* base and new differ in grid or block */
	int show_config;		/* the name alone does not identify the kernel */
};

struct diff_result {
	const struct kernel_set *base, *new;	/* not owned */
	struct diff_limits defaults;	/* the limits of kernels without an override */
	struct kernel_diff *kernels;	/* report order: slower, faster, new, missing, insufficient, */
	size_t count;			/*   same, ignored; by GPU time within a verdict */
	size_t verdicts[DIFF_IGNORED + 1];	/* kernels per verdict */
};

/*
 * Compare NEW with BASE under cfg. The result points into both sets, which must outlive it.
 * Returns 0, or a negative error with one line in err.
 */
int diff_compare(const struct kernel_set *base, const struct kernel_set *new,
		 const struct diff_config *cfg, struct diff_result **out, char *err, size_t errlen);
void diff_result_free(struct diff_result *result);

/* Kernels that regressed (the exit status of diff and check depends on this alone). */
static inline size_t diff_regressions(const struct diff_result *result)
{
	return result->verdicts[DIFF_SLOWER];
}

enum diff_format {
	DIFF_FORMAT_TEXT,
	DIFF_FORMAT_MARKDOWN,
	DIFF_FORMAT_JSON,
	DIFF_FORMAT_JUNIT,
};

/* "text", "markdown" (or "md"), "json", "junit"; returns 0 or -EINVAL. */
int diff_format_parse(const char *s, enum diff_format *out);

/* Write the comparison; returns 0 or -EIO when the stream failed. */
int diff_write(const struct diff_result *result, enum diff_format format, FILE *out);

/* A JSON number, or null if not finite (shared with baseline.c; strings: output_json_string). */
void diff_json_number(FILE *out, double v);
/* The GPU totals of one side as a JSON object (shared with baseline.c). */
void diff_json_totals(FILE *out, const struct gpu_totals *totals);

#endif
