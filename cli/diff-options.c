/*
 * Shared command-line handling of diff, check and baseline (see diff-options.h).
 */
#include "cli/diff-options.h"
#include "diff/baseline.h"
#include "loader/trace.h"
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
	pr_err("%s", line);
	/* The first line of the usage text, to show what the command wants. */
	fprintf(stderr, "%.*s\n", (int)strcspn(usage, "\n"), usage);
	return -1;
}

int diff_options_parse(struct diff_options *o, int argc, char **argv, unsigned allowed,
		       const char *usage)
{
	static const struct option all[] = {
		{ "threshold", required_argument, NULL, 't' },
		{ "alpha", required_argument, NULL, 'a' },
		{ "min-samples", required_argument, NULL, 'm' },
		{ "skip-first", required_argument, NULL, OPT_SKIP_FIRST },
		{ "nvtx", required_argument, NULL, OPT_NVTX },
		{ "ignore", required_argument, NULL, OPT_IGNORE },
		{ "config", required_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "junit", required_argument, NULL, OPT_JUNIT },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "markdown", required_argument, NULL, OPT_MARKDOWN },
		{ "baseline", required_argument, NULL, 'b' },
		{ "points", required_argument, NULL, OPT_POINTS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* Command-line values, applied over the config file once it is read. */
	double threshold = 0, alpha = 0;
	size_t min_samples = 0, skip_first = 0;
	const char *nvtx = NULL, *config = NULL;
	int has_threshold = 0, has_alpha = 0, has_min = 0, has_skip = 0;
	char err[1024];
	int c, longindex;

	memset(o, 0, sizeof(*o));
	diff_config_init(&o->cfg);
	o->format = DIFF_FORMAT_TEXT;
	o->points = BASELINE_DEFAULT_POINTS;
	opterr = 0;
	optind = 1;
	while ((longindex = -1, c = getopt_long(argc, argv, ":t:a:m:c:f:o:b:qh", all,
					      &longindex)) != -1) {
		char opt[64];
		unsigned need = 0;

		/* The option as the user wrote it: argv holds it only for errors, not after a value. */
		if (c == '?' && optopt)
			snprintf(opt, sizeof(opt), "-%c", optopt);
		else if (c == '?' || c == ':')
			snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(argv[optind - 1], "="),
				 argv[optind - 1]);
		else if (longindex >= 0)
			snprintf(opt, sizeof(opt), "--%s", all[longindex].name);
		else
			snprintf(opt, sizeof(opt), "-%c", c);

		switch (c) {
		case 't':
		case 'a':
		case 'm':
			need = DIFF_OPT_LIMITS;
			break;
		case 'f':
		case OPT_JUNIT:
		case OPT_JSON:
		case OPT_MARKDOWN:
			need = DIFF_OPT_REPORT;
			break;
		case 'b':
			need = DIFF_OPT_BASELINE;
			break;
		case OPT_POINTS:
			need = DIFF_OPT_POINTS;
			break;
		}
		if (need && !(allowed & need))
			return bad_option(usage, "'%s' is not an option of this command", opt);

		switch (c) {
		case 't':
			if (diff_parse_fraction(optarg, &threshold) < 0)
				return bad_option(usage,
						  "bad %s '%s': give a percentage such as 3%% or a "
						  "fraction below 1 such as 0.03",
						  "--threshold", optarg);
			has_threshold = 1;
			break;
		case 'a':
			if (diff_parse_fraction(optarg, &alpha) < 0 || alpha <= 0 || alpha > 0.5)
				return bad_option(usage,
						  "bad %s '%s': give a significance level in (0, 0.5] "
						  "such as 0.01",
						  "--alpha", optarg);
			has_alpha = 1;
			break;
		case 'm':
			if (parse_count(optarg, &min_samples) < 0 || !min_samples)
				return bad_option(usage, "bad %s '%s': give a count >= 1",
						  "--min-samples", optarg);
			has_min = 1;
			break;
		case OPT_SKIP_FIRST:
			if (parse_count(optarg, &skip_first) < 0)
				return bad_option(usage, "bad %s '%s': give a count >= 0",
						  "--skip-first", optarg);
			has_skip = 1;
			break;
		case OPT_NVTX:
			if (!*optarg)
				return bad_option(usage, "bad %s '%s': give the text of an NVTX range",
						  "--nvtx", optarg);
			nvtx = optarg;
			break;
		case OPT_IGNORE:
			diff_config_add_ignore(&o->cfg, optarg);
			break;
		case 'c':
			config = optarg;
			break;
		case 'f':
			if (diff_format_parse(optarg, &o->format) < 0)
				return bad_option(usage,
						  "bad %s '%s': give text, markdown, json or junit",
						  "--format", optarg);
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_JUNIT:
			o->extra[DIFF_FORMAT_JUNIT] = optarg;
			break;
		case OPT_JSON:
			o->extra[DIFF_FORMAT_JSON] = optarg;
			break;
		case OPT_MARKDOWN:
			o->extra[DIFF_FORMAT_MARKDOWN] = optarg;
			break;
		case 'b':
			o->baseline = optarg;
			break;
		case OPT_POINTS:
			if (parse_count(optarg, &o->points) < 0 || o->points < 2 ||
			    o->points > BASELINE_MAX_POINTS)
				return bad_option(usage, "bad %s '%s': give a count from 2 to 4096",
						  "--points", optarg);
			break;
		case 'q':
			progress_enabled = 0;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case ':':
			return bad_option(usage, "option '%s' needs a value", opt);
		default:
			return bad_option(usage, "unknown option '%s'", opt);
		}
	}
	if (config && diff_config_read(&o->cfg, config, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	if (has_threshold)
		o->cfg.defaults.threshold = threshold;
	if (has_alpha)
		o->cfg.defaults.alpha = alpha;
	if (has_min)
		o->cfg.defaults.min_samples = min_samples;
	if (has_skip) {
		o->cfg.skip_first = skip_first;
		o->cfg.has_skip_first = 1;
	}
	if (nvtx) {
		free(o->cfg.nvtx);
		o->cfg.nvtx = xstrdup(nvtx);
		o->cfg.has_nvtx = 1;
	}
	o->args = argv + optind;
	o->nargs = argc - optind;
	return 0;
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
