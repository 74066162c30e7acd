/*
 * What diff, check and baseline share on the command line: the options that set thresholds and
 * scope, the config file they come from, the report outputs, and loading either side of a
 * comparison (a trace or a baseline file) with one clear error.
 */
#ifndef GPT_CLI_DIFF_OPTIONS_H
#define GPT_CLI_DIFF_OPTIONS_H

#include "analyzer/diff/diff.h"

/* Which options a command takes. */
enum {
	DIFF_OPT_LIMITS = 1,	/* --threshold, --alpha, --min-samples */
	DIFF_OPT_REPORT = 2,	/* --format, --junit, --json, --markdown */
	DIFF_OPT_BASELINE = 4,	/* --baseline FILE (check) */
	DIFF_OPT_POINTS = 8,	/* --points N (baseline save) */
};

/* The help lines of the options diff and check share (and baseline save, the scope's). */
#define DIFF_USAGE_LIMITS \
	"  -t, --threshold PCT    slowdown that counts, 3% or 0.03 (default 3%)\n" \
	"  -a, --alpha P          significance level; the interval is 1 - P (default 0.01)\n" \
	"  -m, --min-samples N    launches needed on each side to judge a kernel (default 10)\n"
#define DIFF_USAGE_SCOPE \
	"      --nvtx RANGE       only kernels that start inside NVTX ranges named RANGE\n" \
	"      --ignore GLOB      leave out kernels whose name matches GLOB (repeatable)\n"
#define DIFF_USAGE_QUIET \
	"  -q, --quiet            no progress line (shown on a terminal when loading a trace takes\n" \
	"                         over 2 s)\n"
#define DIFF_USAGE_REPORT \
	"  -c, --config FILE      thresholds, per-kernel overrides and ignore patterns (docs/ci.md);\n" \
	"                         command-line options win over the file\n" \
	"  -f, --format FMT       text, markdown, json or junit (default text)\n" \
	"  -o, --output FILE      write the report to FILE instead of standard output\n" \
	"      --junit FILE       also write a JUnit XML report (one test case per kernel) to FILE\n" \
	"      --json FILE        also write a JSON report to FILE\n" \
	"      --markdown FILE    also write a Markdown report to FILE\n"

struct diff_options {
	struct diff_config cfg;		/* defaults < config file < command line */
	enum diff_format format;
	const char *output;		/* -o; NULL: standard output */
	const char *extra[DIFF_FORMAT_JUNIT + 1];	/* --junit FILE and the like */
	const char *baseline;
	size_t points;
	char **args;			/* positional arguments */
	int nargs;
};

/*
 * Parse argv; usage is the command's help text (printed for --help and, in part, on errors).
 * Returns 0 to go on, 1 when help was printed (exit 0), or -1 after printing one error (exit 2);
 * o is to be released after 0 only.
 */
int diff_options_parse(struct diff_options *o, int argc, char **argv, unsigned allowed,
		       const char *usage);
void diff_options_release(struct diff_options *o);

/*
 * Load one side: a baseline file as is, or a trace scoped by nvtx/skip_first. Prints one error
 * and returns NULL when the file cannot be read or holds no kernels in the scope.
 */
struct kernel_set *diff_load_side(const char *path, const char *nvtx, size_t skip_first);

/* Compare base and new under o, write every report asked for; the command's exit status. */
int diff_run(struct diff_options *o, const char *base_path, const char *new_path);

#endif
