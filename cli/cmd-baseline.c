/*
 * gpt-trace baseline save: write the per-kernel timing summaries of a trace as a small JSON file
 * to commit next to the code; `gpt-trace check` compares later traces against it. The format and
 * why its quantile points suffice are described in analyzer/diff/baseline.h.
 */
#include "cli/commands.h"
#include "cli/diff-options.h"
#include "cli/usage.h"
#include "analyzer/diff/baseline.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
	"usage: gpt-trace baseline save [options] TRACE [-o FILE]\n"
	"\n"
	"Save the kernel timings of TRACE as a baseline: per kernel (name and launch configuration)\n"
	"the launch count, median, p5/p25/p75/p95, min, max, mean, stddev, MAD and up to 64 evenly\n"
	"spaced quantiles, which 'gpt-trace check --baseline FILE' tests new traces against. The\n"
	"NVTX range and warm-up skip are stored in the file and reused by check.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE      write the baseline to FILE (default: standard output)\n"
	"      --skip-first N     drop the first N launches of each kernel as warm-up (default 0)\n"
	DIFF_USAGE_SCOPE
	"  -c, --config FILE      take nvtx, skip-first and ignore patterns from a check config\n"
	"      --points N         quantile points kept per kernel, 2 to 4096 (default 64)\n"
	DIFF_USAGE_QUIET
	"  -h, --help             print this help\n"
	"\n"
	"exit status: 0 saved, 2 usage or input error\n";

int cmd_baseline(int argc, char **argv)
{
	struct diff_options o;
	struct kernel_set *set;
	FILE *out = stdout;
	int ret;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, stdout);
		return GPT_EXIT_OK;
	}
	if (argc < 2)
		return usage_error_synopsis(usage, "baseline needs a subcommand: save");
	if (strcmp(argv[1], "save"))
		return usage_error_synopsis(usage, "unknown baseline subcommand '%s'; "
					    "the one there is: save", argv[1]);
	ret = diff_options_parse(&o, argc - 1, argv + 1, DIFF_OPT_POINTS, usage);
	if (ret)
		return usage_status(ret);
	if (o.nargs != 1) {
		ret = usage_error_synopsis(usage, "baseline save needs one trace; %d given",
					   o.nargs);
		diff_options_release(&o);
		return ret;
	}
	set = diff_load_side(o.args[0], o.cfg.nvtx, o.cfg.skip_first);
	if (!set) {
		diff_options_release(&o);
		return GPT_EXIT_USAGE;
	}
	kernel_set_drop_ignored(set, &o.cfg);
	ret = GPT_EXIT_USAGE;
	if (!set->count) {
		pr_err("no kernels of '%s' left to save: every one is ignored", o.args[0]);
		goto out;
	}
	if (o.output && strcmp(o.output, "-")) {
		out = fopen(o.output, "w");
		if (!out) {
			pr_err("cannot write '%s': %s", o.output, strerror(errno));
			goto out;
		}
	}
	ret = baseline_write(set, o.points, out);
	if (out != stdout && fclose(out))
		ret = -EIO;
	if (ret < 0) {
		ret = GPT_EXIT_USAGE;
		pr_err("cannot write '%s': %s", out == stdout ? "standard output" : o.output,
		       strerror(EIO));
		goto out;
	}
	ret = GPT_EXIT_OK;
out:
	kernel_set_free(set);
	diff_options_release(&o);
	return ret;
}
