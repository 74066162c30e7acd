/*
 * What diff, check and baseline share on the command line: the options that set thresholds and
 * scope, the config file they come from, the report outputs, and loading either side of a
 * comparison (a trace or a baseline file) with one clear error.
 */
#ifndef GPT_CLI_DIFF_OPTIONS_H
#define GPT_CLI_DIFF_OPTIONS_H

#include "diff/diff.h"

/* Which options a command takes. */
enum {
	DIFF_OPT_LIMITS = 1,	/* --threshold, --alpha, --min-samples */
	DIFF_OPT_REPORT = 2,	/* --format, --junit, --json, --markdown */
	DIFF_OPT_BASELINE = 4,	/* --baseline FILE (check) */
	DIFF_OPT_POINTS = 8,	/* --points N (baseline save) */
};

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
 * Returns 0 to go on, 1 when help was printed (exit 0), or -1 after printing one error (exit 2).
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
