/*
 * gpt-trace check: compare a trace with a committed baseline file under the same rule as diff, and
 * exit 1 when a kernel got slower by more than the threshold: the CI gate (docs/ci.md).
 */
#include "cli/commands.h"
#include "cli/diff-options.h"
#include "cli/usage.h"
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
	DIFF_USAGE_LIMITS
	"      --skip-first N     drop the first N launches of each kernel as warm-up\n"
	DIFF_USAGE_SCOPE
	DIFF_USAGE_REPORT
	DIFF_USAGE_QUIET
	"  -h, --help             print this help\n"
	"\n"
	"exit status: 0 no kernel slower, 1 at least one kernel slower (a regression),\n"
	"             2 usage or input error\n";

int cmd_check(int argc, char **argv)
{
	struct diff_options o;
	int ret;

	ret = diff_options_parse(&o, argc, argv,
				 DIFF_OPT_LIMITS | DIFF_OPT_REPORT | DIFF_OPT_BASELINE, usage);
	if (ret)
		return usage_status(ret);
	if (!o.baseline)
		ret = usage_error_synopsis(usage, "check needs --baseline FILE");
	else if (o.nargs != 1)
		ret = usage_error_synopsis(usage, "check needs one trace; %d given", o.nargs);
	else
		ret = diff_run(&o, o.baseline, o.args[0]);
	diff_options_release(&o);
	return ret;
}
