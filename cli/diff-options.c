/*
 * Shared command-line handling of diff, check and baseline (see diff-options.h).
 */
#include "cli/diff-options.h"
#include "cli/usage.h"
#include "analyzer/diff/baseline.h"
#include "analyzer/loader/trace.h"
#include "common/progress.h"
#include "common/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_SKIP_FIRST = 256,
	OPT_NVTX,
	OPT_IGNORE,
	OPT_JUNIT,
	OPT_JSON,
	OPT_MARKDOWN,
	OPT_POINTS,
};

static int parse_count(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > (1ULL << 40))
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

static int bad_option(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad_option(const char *usage, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	usage_error_synopsis(usage, "%s", line);
	return -1;
}

/* One parse: the options being filled, and the command-line values that are applied over the config
 * file once it is read. */
struct diff_parse {
	struct diff_options *o;
	const char *usage;
	double threshold, alpha;
	size_t min_samples, skip_first;
	const char *nvtx, *config;
	int has_threshold, has_alpha, has_min, has_skip;
};

static int opt_threshold(struct diff_parse *p, const char *arg)
{
	if (diff_parse_fraction(arg, &p->threshold) < 0)
		return bad_option(p->usage,
				  "bad %s '%s': give a percentage such as 3%% or a fraction below 1 such as 0.03",
				  "--threshold", arg);
	p->has_threshold = 1;
	return 0;
}

static int opt_alpha(struct diff_parse *p, const char *arg)
{
	if (diff_parse_fraction(arg, &p->alpha) < 0 || p->alpha <= 0 || p->alpha > 0.5)
		return bad_option(p->usage, "bad %s '%s': give a significance level in (0, 0.5] such as 0.01",
				  "--alpha", arg);
	p->has_alpha = 1;
	return 0;
}

static int opt_min_samples(struct diff_parse *p, const char *arg)
{
	if (parse_count(arg, &p->min_samples) < 0 || !p->min_samples)
		return bad_option(p->usage, "bad %s '%s': give a count >= 1", "--min-samples", arg);
	p->has_min = 1;
	return 0;
}

static int opt_skip_first(struct diff_parse *p, const char *arg)
{
	if (parse_count(arg, &p->skip_first) < 0)
		return bad_option(p->usage, "bad %s '%s': give a count >= 0", "--skip-first", arg);
	p->has_skip = 1;
	return 0;
}

static int opt_nvtx(struct diff_parse *p, const char *arg)
{
	if (!*arg)
		return bad_option(p->usage, "bad %s '%s': give the text of an NVTX range", "--nvtx", arg);
	p->nvtx = arg;
	return 0;
}

static int opt_ignore(struct diff_parse *p, const char *arg)
{
	diff_config_add_ignore(&p->o->cfg, arg);
	return 0;
}

static int opt_config(struct diff_parse *p, const char *arg)
{
	p->config = arg;
	return 0;
}

static int opt_format(struct diff_parse *p, const char *arg)
{
	if (diff_format_parse(arg, &p->o->format) < 0)
		return bad_option(p->usage, "bad %s '%s': give text, markdown, json or junit", "--format", arg);
	return 0;
}

static int opt_output(struct diff_parse *p, const char *arg)
{
	p->o->output = arg;
	return 0;
}

static int opt_junit(struct diff_parse *p, const char *arg)
{
	p->o->extra[DIFF_FORMAT_JUNIT] = arg;
	return 0;
}

static int opt_json(struct diff_parse *p, const char *arg)
{
	p->o->extra[DIFF_FORMAT_JSON] = arg;
	return 0;
}

static int opt_markdown(struct diff_parse *p, const char *arg)
{
	p->o->extra[DIFF_FORMAT_MARKDOWN] = arg;
	return 0;
}

static int opt_baseline(struct diff_parse *p, const char *arg)
{
	p->o->baseline = arg;
	return 0;
}

static int opt_points(struct diff_parse *p, const char *arg)
{
	if (parse_count(arg, &p->o->points) < 0 || p->o->points < 2 || p->o->points > BASELINE_MAX_POINTS)
		return bad_option(p->usage, "bad %s '%s': give a count from 2 to 4096", "--points", arg);
	return 0;
}

static int opt_quiet(struct diff_parse *p, const char *arg)
{
	(void)p;
	(void)arg;
	progress_enabled = 0;
	return 0;
}

/* --help: the usage text on stdout, and 1 (the command exits 0). */
static int opt_help(struct diff_parse *p, const char *arg)
{
	(void)arg;
	fputs(p->usage, stdout);
	return 1;
}

/* The options of diff, check and baseline save: each with the group a command must allow
 * (0: every command) and its parser. */
static const struct diff_option {
	const char *name;
	int has_arg;
	int val;
	unsigned need;
	int (*parse)(struct diff_parse *p, const char *arg);
} diff_option_table[] = {
	{ "threshold", required_argument, 't', DIFF_OPT_LIMITS, opt_threshold },
	{ "alpha", required_argument, 'a', DIFF_OPT_LIMITS, opt_alpha },
	{ "min-samples", required_argument, 'm', DIFF_OPT_LIMITS, opt_min_samples },
	{ "skip-first", required_argument, OPT_SKIP_FIRST, 0, opt_skip_first },
	{ "nvtx", required_argument, OPT_NVTX, 0, opt_nvtx },
	{ "ignore", required_argument, OPT_IGNORE, 0, opt_ignore },
	{ "config", required_argument, 'c', 0, opt_config },
	{ "format", required_argument, 'f', DIFF_OPT_REPORT, opt_format },
	{ "output", required_argument, 'o', 0, opt_output },
	{ "junit", required_argument, OPT_JUNIT, DIFF_OPT_REPORT, opt_junit },
	{ "json", required_argument, OPT_JSON, DIFF_OPT_REPORT, opt_json },
	{ "markdown", required_argument, OPT_MARKDOWN, DIFF_OPT_REPORT, opt_markdown },
	{ "baseline", required_argument, 'b', DIFF_OPT_BASELINE, opt_baseline },
	{ "points", required_argument, OPT_POINTS, DIFF_OPT_POINTS, opt_points },
	{ "quiet", no_argument, 'q', 0, opt_quiet },
	{ "help", no_argument, 'h', 0, opt_help },
};
#define NOPTIONS (sizeof(diff_option_table) / sizeof(diff_option_table[0]))

/* The option as the user wrote it: argv holds it only for errors, not after a value. */
static void option_words(char *opt, size_t len, int c, int longindex, char **argv)
{
	if (c == '?' || c == ':')
		usage_option_word(opt, len, argv);
	else if (longindex >= 0)
		snprintf(opt, len, "--%s", diff_option_table[longindex].name);
	else
		snprintf(opt, len, "-%c", c);
}

/* One option getopt_long returned: 0, -1 (said) or 1 (--help). */
static int diff_option(struct diff_parse *p, int c, int longindex, char **argv, unsigned allowed)
{
	char opt[64];

	option_words(opt, sizeof(opt), c, longindex, argv);
	for (size_t i = 0; i < NOPTIONS; i++) {
		const struct diff_option *d = &diff_option_table[i];

		if (d->val != c)
			continue;
		if (d->need && !(allowed & d->need))
			return bad_option(p->usage, "'%s' is not an option of this command", opt);
		return d->parse(p, optarg);
	}
	if (c == ':')
		return bad_option(p->usage, "option '%s' needs a value", opt);
	return bad_option(p->usage, "unknown option '%s'", opt);
}

/* The config file, then the command line's values over it. */
static int diff_apply(struct diff_parse *p)
{
	struct diff_options *o = p->o;
	char err[1024];

	if (p->config && diff_config_read(&o->cfg, p->config, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	if (p->has_threshold)
		o->cfg.defaults.threshold = p->threshold;
	if (p->has_alpha)
		o->cfg.defaults.alpha = p->alpha;
	if (p->has_min)
		o->cfg.defaults.min_samples = p->min_samples;
	if (p->has_skip) {
		o->cfg.skip_first = p->skip_first;
		o->cfg.has_skip_first = 1;
	}
	if (p->nvtx) {
		free(o->cfg.nvtx);
		o->cfg.nvtx = xstrdup(p->nvtx);
		o->cfg.has_nvtx = 1;
	}
	return 0;
}

/* diff_options_parse() but for releasing o when it stops the command. */
static int diff_options_read(struct diff_options *o, int argc, char **argv, unsigned allowed,
			     const char *usage)
{
	struct option all[NOPTIONS + 1];
	struct diff_parse p = { .o = o, .usage = usage };
	int c, longindex, ret;

	for (size_t i = 0; i < NOPTIONS; i++)
		all[i] = (struct option){ diff_option_table[i].name, diff_option_table[i].has_arg, NULL,
					  diff_option_table[i].val };
	all[NOPTIONS] = (struct option){ NULL, 0, NULL, 0 };
	memset(o, 0, sizeof(*o));
	diff_config_init(&o->cfg);
	o->format = DIFF_FORMAT_TEXT;
	o->points = BASELINE_DEFAULT_POINTS;
	opterr = 0;
	optind = 1;
	while ((longindex = -1, c = getopt_long(argc, argv, ":t:a:m:c:f:o:b:qh", all, &longindex)) != -1) {
		ret = diff_option(&p, c, longindex, argv, allowed);
		if (ret)
			return ret;
	}
	if (diff_apply(&p) < 0)
		return -1;
	o->args = argv + optind;
	o->nargs = argc - optind;
	return 0;
}

int diff_options_parse(struct diff_options *o, int argc, char **argv, unsigned allowed,
		       const char *usage)
{
	int ret = diff_options_read(o, argc, argv, allowed, usage);

	if (ret)
		diff_options_release(o);
	return ret;
}

void diff_options_release(struct diff_options *o)
{
	diff_config_release(&o->cfg);
}

struct kernel_set *diff_load_side(const char *path, const char *nvtx, size_t skip_first)
{
	struct kernel_set *set = NULL;
	struct trace *trace;
	char err[1024];

	if (baseline_sniff(path) == 1) {
		if (baseline_read(path, &set, err, sizeof(err)) < 0) {
			pr_err("%s", err);
			return NULL;
		}
		if (!set->count) {
			pr_err("bad baseline '%s': no kernels", path);
			kernel_set_free(set);
			return NULL;
		}
		return set;
	}
	if (trace_open(&path, 1, &trace, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return NULL;
	}
	if (kernel_set_load(trace, nvtx, skip_first, &set, err, sizeof(err)) < 0) {
		/* Scope errors do not name the file. */
		if (strstr(err, path))
			pr_err("%s", err);
		else
			pr_err("cannot read '%s': %s", path, err);
		trace_close(trace);
		return NULL;
	}
	trace_close(trace);
	if (!set->count) {
		if (nvtx)
			pr_err("no kernels in NVTX range '%s' of '%s'%s", nvtx, path,
			       skip_first ? " after the warm-up launches" : "");
		else
			pr_err("no kernels in '%s'%s", path,
			       skip_first ? " after the warm-up launches" : "");
		kernel_set_free(set);
		return NULL;
	}
	return set;
}

static int write_report(const struct diff_result *r, enum diff_format format, const char *path)
{
	FILE *out = stdout;
	int ret;

	if (path && strcmp(path, "-")) {
		out = fopen(path, "w");
		if (!out) {
			pr_err("cannot write '%s': %s", path, strerror(errno));
			return -1;
		}
	}
	ret = diff_write(r, format, out);
	if (out != stdout && fclose(out))
		ret = -EIO;
	if (ret < 0) {
		pr_err("cannot write '%s': %s", out == stdout ? "standard output" : path,
		       strerror(EIO));
		return -1;
	}
	return 0;
}

/*
 * The scope for the trace sides: the command line or config file; otherwise the scope the baseline
 * was saved with, so that check compares like with like.
 */
static void scope_from_baseline(struct diff_options *o, const struct kernel_set *baseline,
				const char **nvtx, size_t *skip_first)
{
	const char *bn = baseline->nvtx;

	if (!o->cfg.has_nvtx)
		*nvtx = bn;
	else if ((bn == NULL) != (o->cfg.nvtx == NULL) || (bn && strcmp(bn, o->cfg.nvtx)))
		pr_warn("baseline '%s' was saved with %s%s%s, this check uses %s%s%s",
			baseline->source, bn ? "NVTX range '" : "no NVTX range", bn ? bn : "",
			bn ? "'" : "", o->cfg.nvtx ? "NVTX range '" : "no NVTX range",
			o->cfg.nvtx ? o->cfg.nvtx : "", o->cfg.nvtx ? "'" : "");
	if (!o->cfg.has_skip_first)
		*skip_first = baseline->skip_first;
	else if (o->cfg.skip_first != baseline->skip_first)
		pr_warn("baseline '%s' was saved with --skip-first %zu, this check uses %zu",
			baseline->source, baseline->skip_first, o->cfg.skip_first);
}

int diff_run(struct diff_options *o, const char *base_path, const char *new_path)
{
	struct kernel_set *base = NULL, *new = NULL;
	struct diff_result *result = NULL;
	const char *nvtx = o->cfg.nvtx;
	size_t skip_first = o->cfg.skip_first;
	char err[1024];
	int status = GPT_EXIT_USAGE;
	int base_is_baseline = baseline_sniff(base_path), new_is_baseline = baseline_sniff(new_path);

	if (o->baseline && base_is_baseline != 1) {
		if (base_is_baseline < 0)
			pr_err("cannot open baseline '%s': %s", base_path, strerror(-base_is_baseline));
		else
			pr_err("'%s' is not a baseline file (make one with 'gpt-trace baseline save')",
			       base_path);
		return GPT_EXIT_USAGE;
	}
	/* Baselines first: their scope becomes the default scope of the traces. */
	if (base_is_baseline == 1) {
		base = diff_load_side(base_path, NULL, 0);
		if (!base)
			goto out;
		scope_from_baseline(o, base, &nvtx, &skip_first);
	}
	if (new_is_baseline == 1) {
		new = diff_load_side(new_path, NULL, 0);
		if (!new)
			goto out;
		if (!base)
			scope_from_baseline(o, new, &nvtx, &skip_first);
	}
	if (!base && !(base = diff_load_side(base_path, nvtx, skip_first)))
		goto out;
	if (!new && !(new = diff_load_side(new_path, nvtx, skip_first)))
		goto out;
	if (diff_compare(base, new, &o->cfg, &result, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (write_report(result, o->format, o->output) < 0)
		goto out;
	for (int f = 0; f <= DIFF_FORMAT_JUNIT; f++) {
		if (o->extra[f] && write_report(result, (enum diff_format)f, o->extra[f]) < 0)
			goto out;
	}
	status = diff_regressions(result) ? GPT_EXIT_REGRESSION : GPT_EXIT_OK;
out:
	diff_result_free(result);
	kernel_set_free(base);
	kernel_set_free(new);
	return status;
}
