/*
 * gpt-trace stop: stop recording in processes started with `gpt-trace start` (on demand,
 * docs/run.md); they stay armed, and another start opens a new window.
 */
#include "cli/commands.h"
#include "cli/run-control.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] =
	"usage: gpt-trace stop [PID|all]\n"
	"\n"
	"Stop recording in an armed process (gpt-trace run --start-later) that 'gpt-trace start'\n"
	"started, or in every armed process of this user on this host (all, the default). The\n"
	"process closes its capture window 1 s after this command, all of them at the same\n"
	"instant (as 'gpt-trace start' opens them), and stays armed.\n";

int cmd_stop(int argc, char **argv)
{
	const char *target = "all";
	char command[64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return GPT_EXIT_OK;
		}
		if (argv[i][0] == '-' || strcmp(target, "all")) {
			pr_err("stop: unexpected argument '%s'; see 'gpt-trace stop --help'", argv[i]);
			return GPT_EXIT_USAGE;
		}
		target = argv[i];
	}
	snprintf(command, sizeof(command), "stop %llu", (unsigned long long)(monotonic_ns() + CONTROL_LEAD_NS));
	return control_send(target, command, "stop");
}
