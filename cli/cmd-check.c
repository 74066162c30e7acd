/*
 * gpt-trace check: compare a trace with a committed baseline file under the same rule as diff, and
 * exit 1 when a kernel got slower by more than the threshold: the CI gate (docs/ci.md).
 */
#include "cli/commands.h"
#include "cli/diff-options.h"
#include "common/util.h"

static const char usage[] =
	"usage: gpt-trace check --baseline FILE [options] TRACE\n"
	"\n"
	"Compare the kernel timings of TRACE with a baseline saved by 'gpt-trace baseline save'.\n"
	"Per kernel, the launch durations of TRACE are compared with the baseline's quantiles by a\n"
	"Mann-Whitney U test and the Hodges-Lehmann estimate of the duration ratio TRACE/baseline\n"
	"with its confidence interval. A kernel is 'slower' when the test is significant and the whole\n"
	"interval lies above 1 + threshold. Unless given here, the NVTX range and warm-up skip are\n"
	"those the baseline was saved with.\n"
	"\n"
	"options:\n"
	"  -b, --baseline FILE    the baseline file (required)\n"
	"  -t, --threshold PCT    slowdown that counts, 3% or 0.03 (default 3%)\n"
	"  -a, --alpha P          significance level; the interval is 1 - P (default 0.01)\n"
	"  -m, --min-samples N    launches needed on each side to judge a kernel (default 10)\n"
	"      --skip-first N     drop the first N launches of each kernel as warm-up\n"
	"      --nvtx RANGE       only kernels that start inside NVTX ranges named RANGE\n"
	"      --ignore GLOB      leave out kernels whose name matches GLOB (repeatable)\n"
	"  -c, --config FILE      thresholds, per-kernel overrides and ignore patterns (docs/ci.md);\n"
	"                         command-line options win over the file\n"
	"  -f, --format FMT       text, markdown, json or junit (default text)\n"
	"  -o, --output FILE      write the report to FILE instead of standard output\n"
	"      --junit FILE       also write a JUnit XML report (one test case per kernel) to FILE\n"
	"      --json FILE        also write a JSON report to FILE\n"
	"      --markdown FILE    also write a Markdown report to FILE\n"
	"  -h, --help             show this help\n"
	"\n"
	"exit status: 0 no kernel slower, 1 at least one kernel slower (a regression),\n"
	"             2 usage or input error\n";

int cmd_check(int argc, char **argv)
{
	struct diff_options o;
	int ret;

	ret = diff_options_parse(&o, argc, argv,
				 DIFF_OPT_LIMITS | DIFF_OPT_REPORT | DIFF_OPT_BASELINE, usage);
	if (ret) {
		diff_options_release(&o);
		return ret > 0 ? GPT_EXIT_OK : GPT_EXIT_USAGE;
	}
	if (!o.baseline || o.nargs != 1) {
		if (!o.baseline)
			pr_err("check needs --baseline FILE");
		else
			pr_err("check needs one trace; %d given", o.nargs);
		fprintf(stderr, "usage: gpt-trace check --baseline FILE [options] TRACE\n");
		diff_options_release(&o);
		return GPT_EXIT_USAGE;
	}
	ret = diff_run(&o, o.baseline, o.args[0]);
	diff_options_release(&o);
	return ret;
}
