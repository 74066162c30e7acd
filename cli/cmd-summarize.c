/*
 * gpt-trace summarize: the per-rank step of the cross-rank report on its own, so that on a cluster
 * it runs where the traces are, under the job's launcher (mpirun, srun), and only the small
 * summaries travel to where `gpt-trace report *.summary` merges them (docs/multi-rank.md).
 */
#include "cli/commands.h"
#include "cli/usage.h"
#include "common/util.h"
#include "analyzer/ranks/summary.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: gpt-trace summarize [options] TRACE...\n"
	"\n"
	"Summarize each rank's trace for the cross-rank report: TRACE.summary beside it (or in -o DIR),\n"
	"reused by 'gpt-trace report' while the trace is unchanged. Merge them with\n"
	"'gpt-trace report DIR/*.summary'.\n"
	"\n"
	"options:\n"
	"  -o, --output-dir DIR  write DIR/NAME.summary (NAME: the trace's file name)\n"
	"  -j, --jobs N          summarize N traces at a time (default: every core)\n"
	"      --launcher        run as one process of an MPI or Slurm launch (mpirun -n N, srun): this\n"
	"                        process takes the TRACEs whose index modulo the launch's size is its\n"
	"                        rank (OMPI_COMM_WORLD_*, PMI_*, SLURM_PROCID/SLURM_NTASKS); a TRACE\n"
	"                        holding %r names one trace per process: %r becomes its rank\n"
	"      --step REGEX      the NVTX ranges that are the iterations (as gpt-trace report --step)\n"
	"  -q, --quiet           print nothing on success\n"
	"  -h, --help            print this help\n"
	"exit status: 0 every summary written (a trace that cannot be read gets a summary that says\n"
	"why), 2 usage error or a summary that cannot be written\n";

/* The launch's rank and size, from the launchers' environments; 0 when not launched by one. */
static int launch_slot(long *rank, long *size)
{
	static const char *const vars[][2] = {
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMI_RANK", "PMI_SIZE" },
		{ "PMIX_RANK", "PMIX_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *r = getenv(vars[i][0]), *s = getenv(vars[i][1]);

		if (r && s && *r && *s && atol(s) > 0) {
			*rank = atol(r);
			*size = atol(s);
			return 1;
		}
	}
	return 0;
}

/* path with every "%r" replaced by rank. */
static char *expand_rank(const char *path, long rank)
{
	size_t cap = strlen(path) + 64, len = 0;
	char *out = xmalloc(cap);

	for (const char *p = path; *p; p++) {
		if (p[0] == '%' && p[1] == 'r') {
			len += (size_t)snprintf(out + len, cap - len, "%ld", rank);
			p++;
			continue;
		}
		if (len + 2 >= cap)
			out = xrealloc(out, cap *= 2);
		out[len++] = *p;
	}
	out[len] = '\0';
	return out;
}

/* What the command line asked for. */
struct summarize_command {
	const char *dir, *step;
	int jobs, launcher, quiet;
};

/* One option into cmd: 0, or -1 (said). */
static int summarize_option(void *data, int c, const char *arg)
{
	struct summarize_command *cmd = data;

	switch (c) {
	case 'o':
		cmd->dir = arg;
		return 0;
	case 'j':
		return usage_positive("--jobs", arg, &cmd->jobs);
	case 'L':
		cmd->launcher = 1;
		return 0;
	case 'S':
		cmd->step = arg;
		return 0;
	case 'q':
		cmd->quiet = 1;
		return 0;
	}
	return 0;
}

/* The options, then at least one trace: 0, or -1 (said), or 1 (--help printed). */
static int summarize_parse(struct summarize_command *cmd, int argc, char **argv)
{
	static const struct option options[] = {
		{ "output-dir", required_argument, NULL, 'o' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "launcher", no_argument, NULL, 'L' },
		{ "step", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct usage_command usage = {
		.name = "summarize", .args = USAGE_ARGS_TRACE, .help = usage_text,
		.shortopts = "o:j:q", .longopts = options, .option = summarize_option,
	};

	return usage_parse(&usage, cmd, argc, argv);
}

/* Where trace's summary goes: DIR/NAME.summary with -o, else beside the trace. */
static char *summary_out(const struct summarize_command *cmd, const char *trace)
{
	char *copy, *out;

	if (!cmd->dir)
		return rank_summary_path(trace);
	copy = xstrdup(trace);
	out = xasprintf("%s/%s%s", cmd->dir, basename(copy), RANK_SUMMARY_SUFFIX);
	free(copy);
	return out;
}

/*
 * This process's traces among args (every one, or under a launcher those of its rank) into traces,
 * their summaries' paths into outs; returns how many.
 */
static size_t pick_traces(const struct summarize_command *cmd, char **args, int nargs, long rank, long size,
			  char **traces, char **outs)
{
	size_t n = 0;

	for (int i = 0; i < nargs; i++) {
		char *trace;

		if (cmd->launcher && strstr(args[i], "%r"))
			trace = expand_rank(args[i], rank);
		else if (!cmd->launcher || (long)i % size == rank)
			trace = xstrdup(args[i]);
		else
			continue;
		traces[n] = trace;
		outs[n] = summary_out(cmd, trace);
		n++;
	}
	return n;
}

int cmd_summarize(int argc, char **argv)
{
	struct summarize_command cmd = { 0 };
	char **traces = NULL, **outs = NULL, err[1024];
	size_t n = 0;
	long rank = 0, size = 1;
	int parsed, ret = GPT_EXIT_USAGE;

	parsed = summarize_parse(&cmd, argc, argv);
	if (parsed)
		return usage_status(parsed);
	if (cmd.launcher && !launch_slot(&rank, &size)) {
		pr_err("--launcher: no MPI or Slurm rank in the environment (OMPI_COMM_WORLD_RANK, PMI_RANK, "
		       "SLURM_PROCID); run under mpirun or srun, or leave --launcher out");
		return GPT_EXIT_USAGE;
	}
	traces = xcalloc((size_t)argc, sizeof(*traces));
	outs = xcalloc((size_t)argc, sizeof(*outs));
	n = pick_traces(&cmd, argv + optind, argc - optind, rank, size, traces, outs);
	if (cmd.jobs <= 0) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		/* under a launcher the node's cores are shared with the launch's other processes */
		cmd.jobs = cmd.launcher ? 1 : cores > 0 ? (int)cores : 1;
	}
	if (rank_summaries_make((const char *const *)traces, (const char *const *)outs, n, cmd.jobs, cmd.step,
				err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (!cmd.quiet)
		for (size_t i = 0; i < n; i++)
			printf("%s\n", outs[i]);
	ret = GPT_EXIT_OK;
out:
	for (size_t i = 0; i < n; i++) {
		free(traces[i]);
		free(outs[i]);
	}
	free(traces);
	free(outs);
	return ret;
}
