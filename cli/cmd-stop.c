/*
 * gpt-trace stop: stop recording in processes started with `gpt-trace start` (on demand,
 * docs/run.md); they stay armed, and another start opens a new window.
 */
#include "cli/commands.h"
#include "cli/run-control.h"
#include "cli/usage.h"
#include "common/util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
	"usage: gpt-trace stop [PID|all]\n"
	"\n"
	"Stop recording in an armed process (gpt-trace run --start-later) that 'gpt-trace start'\n"
	"started, or in every armed process of this user on this host (all, the default). The\n"
	"process closes its capture window 1 s after this command, all of them at the same\n"
	"instant (as 'gpt-trace start' opens them), and stays armed.\n"
	"\n"
	"  -h, --help  print this help\n";

int cmd_stop(int argc, char **argv)
{
	static const struct option options[] = { { NULL, 0, NULL, 0 } };
	static const struct usage_command usage = {
		.name = "stop", .prefix = USAGE_NAMED, .help = usage_text, .shortopts = "",
		.longopts = options,
	};
	char command[64];
	int ret = usage_parse(&usage, NULL, argc, argv);

	if (ret)
		return usage_status(ret);
	if (argc - optind > 1) {
		pr_err("stop: unexpected argument '%s'; see 'gpt-trace stop --help'", argv[optind + 1]);
		return GPT_EXIT_USAGE;
	}
	snprintf(command, sizeof(command), "stop %llu", (unsigned long long)(monotonic_ns() + CONTROL_LEAD_NS));
	return control_send(optind < argc ? argv[optind] : "all", command, "stop");
}
