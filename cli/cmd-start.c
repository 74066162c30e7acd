/*
 * gpt-trace start: start recording in processes run with `gpt-trace run --start-later` (on demand,
 * docs/run.md), through their control files (cli/run-control.h), never a signal.
 */
#include "cli/commands.h"
#include "cli/run-control.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: gpt-trace start [PID|all] [-d|--duration S]\n"
	"\n"
	"Start recording in an armed process (gpt-trace run --start-later), or in every armed\n"
	"process of this user on this host (all, the default). Every process opens its capture\n"
	"window at the same instant, 1 s after this command (each reads it at its next tick, within\n"
	"half its commit interval, 0.5 s by default), so that the ranks of a job record the same\n"
	"steps; with --duration it closes S seconds later. Stop with 'gpt-trace stop'.\n";

int cmd_start(int argc, char **argv)
{
	const char *target = "all";
	unsigned long long duration = 0;
	char command[64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return GPT_EXIT_OK;
		}
		if ((!strcmp(argv[i], "-d") || !strcmp(argv[i], "--duration")) && i + 1 < argc) {
			char *end;
			double s;

			errno = 0;
			s = strtod(argv[++i], &end);
			if (errno || *end || !(s > 0) || s > 1e9) {
				pr_err("start: invalid --duration '%s': expected a positive number of "
				       "seconds; see 'gpt-trace start --help'", argv[i]);
				return GPT_EXIT_USAGE;
			}
			duration = (unsigned long long)(s * 1e9 + 0.5);
		} else if (argv[i][0] != '-' && !strcmp(target, "all")) {
			target = argv[i];
		} else {
			pr_err("start: unexpected argument '%s'; see 'gpt-trace start --help'", argv[i]);
			return GPT_EXIT_USAGE;
		}
	}
	snprintf(command, sizeof(command), "start %llu %llu", duration,
		 (unsigned long long)(monotonic_ns() + CONTROL_LEAD_NS));
	return control_send(target, command, "start");
}
