/*
 * gpt-trace diff: compare the kernel timings of two traces, kernel by kernel, with a rank test and
 * a confidence interval of the duration ratio (analyzer/diff/diff.h has the rule), and exit 1 when
 * a kernel got slower by more than the threshold. Either side may also be a baseline file.
 */
#include "cli/commands.h"
#include "cli/diff-options.h"
#include "cli/usage.h"
#include "common/util.h"

static const char usage[] =
	"usage: gpt-trace diff [options] BASE NEW\n"
	"\n"
	"Compare the kernel timings of two traces (or baseline files). Per kernel (name, and launch\n"
	"configuration where it differs) the launch durations of NEW are compared with BASE: a\n"
	"Mann-Whitney U test, and the Hodges-Lehmann estimate of the duration ratio NEW/BASE with its\n"
	"distribution-free confidence interval. A kernel is 'slower' when the test is significant and\n"
	"the whole interval lies above 1 + threshold, 'faster' when it lies below 1 / (1 + threshold),\n"
	"else 'same'; 'new' and 'missing' ran on one side only; 'insufficient' had too few launches.\n"
	"Also compares total kernel, copy, memset and idle time (informational).\n"
	"\n"
	"options:\n"
	DIFF_USAGE_LIMITS
	"      --skip-first N     drop the first N launches of each kernel as warm-up (default 0)\n"
	DIFF_USAGE_SCOPE
	DIFF_USAGE_REPORT
	DIFF_USAGE_QUIET
	"  -h, --help             print this help\n"
	"\n"
	"exit status: 0 no kernel slower, 1 at least one kernel slower (a regression),\n"
	"             2 usage or input error\n";

int cmd_diff(int argc, char **argv)
{
	struct diff_options o;
	int ret;

	ret = diff_options_parse(&o, argc, argv, DIFF_OPT_LIMITS | DIFF_OPT_REPORT, usage);
	if (ret)
		return usage_status(ret);
	if (o.nargs != 2)
		ret = usage_error_synopsis(usage, "diff needs two files, BASE and NEW; %d given",
					   o.nargs);
	else
		ret = diff_run(&o, o.args[0], o.args[1]);
	diff_options_release(&o);
	return ret;
}
