/*
 * gpt-trace start: start recording in processes run with `gpt-trace run --start-later` (on demand,
 * docs/run.md), through their control files (cli/run-control.h), never a signal.
 */
#include "cli/commands.h"
#include "cli/run-control.h"
#include "cli/usage.h"
#include "common/util.h"

#include <errno.h>
#include <getopt.h>
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
	"steps; with --duration it closes S seconds later. Stop with 'gpt-trace stop'.\n"
	"\n"
	"  -d, --duration S  close the window S seconds after it opens\n"
	"  -h, --help        print this help\n";

/* -d/--duration S: the window's length in ns; 0, or -1 (said). */
static int start_option(void *cmd, int c, const char *arg)
{
	unsigned long long *duration = cmd;
	char *end;
	double s;

	(void)c;	/* the only option */
	errno = 0;
	s = strtod(arg, &end);
	if (errno || *end || !(s > 0) || s > 1e9) {
		pr_err("start: invalid --duration '%s': expected a positive number of seconds; see "
		       "'gpt-trace start --help'", arg);
		return -1;
	}
	*duration = (unsigned long long)(s * 1e9 + 0.5);
	return 0;
}

int cmd_start(int argc, char **argv)
{
	static const struct option options[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct usage_command usage = {
		.name = "start", .prefix = USAGE_NAMED, .help = usage_text, .shortopts = "d:",
		.longopts = options, .option = start_option,
	};
	unsigned long long duration = 0;
	char command[64];
	int ret = usage_parse(&usage, &duration, argc, argv);

	if (ret)
		return usage_status(ret);
	if (argc - optind > 1) {
		pr_err("start: unexpected argument '%s'; see 'gpt-trace start --help'", argv[optind + 1]);
		return GPT_EXIT_USAGE;
	}
	snprintf(command, sizeof(command), "start %llu %llu", duration,
		 (unsigned long long)(monotonic_ns() + CONTROL_LEAD_NS));
	return control_send(optind < argc ? argv[optind] : "all", command, "start");
}
