/*
 * gpt-trace: the command-line entry point. main() looks the subcommand up in the one command table
 * below; the usage text is made from the same table. argv[0] of a command is its own name.
 */
#include "cli/commands.h"
#include "cli/version.h"
#include "common/progress.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "run", cmd_run, "run a program and record a trace of its GPU work" },
	{ "start", cmd_start, "start recording in processes run with 'run --start-later'" },
	{ "stop", cmd_stop, "stop recording in processes started with 'start'" },
	{ "import", cmd_import, "convert PyTorch profiler (Kineto) JSON traces into trace files" },
	{ "stats", cmd_stats, "print summary tables of kernels, copies, API calls and NVTX ranges" },
	{ "report", cmd_report, "write a bottleneck report, findings ranked by recoverable time" },
	{ "summarize", cmd_summarize, "summarize rank traces for the cross-rank report (under mpirun/srun)" },
	{ "rules", cmd_rules, "list the rules, what they measure and their thresholds" },
	{ "export", cmd_export, "write a Perfetto or Chrome JSON timeline" },
	{ "diff", cmd_diff, "compare kernel timings of two traces" },
	{ "baseline", cmd_baseline, "save per-kernel timing summaries as a baseline file" },
	{ "check", cmd_check, "compare a trace with a baseline; exit 1 on a regression" },
	{ "doctor", cmd_doctor, "check that tracing will work here, and say how to fix what will not" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: gpt-trace <command> [options] [args]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'gpt-trace <command> --help' describes a command.\n"
		     "exit status: 0 success, 1 regression found (diff, check), 2 usage or input error\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return GPT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return GPT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("gpt-trace %s\n", gpt_trace_version());
		return GPT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			progress_command_start();
			return commands[i].fn(argc - 1, argv + 1);
		}
	}
	pr_err("'%s' is not a gpt-trace command; see 'gpt-trace --help'", argv[1]);
	return GPT_EXIT_USAGE;
}
