/*
 * gpt-trace stats: summary tables of one or more traces (ours or nsys exports), in the spirit of
 * `nsys stats`: kernels, memory operations, API calls, device and stream busy time, NVTX ranges.
 */
#include "analyzer/stats/stats.h"
#include "analyzer/stats/efficiency.h"
#include "cli/commands.h"
#include "cli/trace-args.h"
#include "cli/usage.h"
#include "common/progress.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>

static const char usage_text[] =
	"usage: gpt-trace stats [options] TRACE...\n"
	"\n"
	"Print summary tables of TRACE (a gpt-trace trace or an nsys SQLite export; several per-process\n"
	"traces of one job are read together): kernels by name, memory operations by kind, CUDA API\n"
	"calls by name, busy time per device and stream, NVTX ranges with the GPU time of the kernels\n"
	"launched inside them. Times are in microseconds (text, Markdown) or nanoseconds (JSON).\n"
	"\n"
	"options:\n"
	"  -f, --format FORMAT   text (default), markdown or json (schema gpt-trace-stats/1,\n"
	"                        docs/report-json.md)\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"  -q, --quiet           no progress line (shown on a terminal when the work takes over 2 s)\n"
	"  -h, --help            print this help\n"
	"\n" TRACE_ARGS_USAGE
	"\nexit status: 0 success, 2 usage error or unreadable trace\n";

static const struct option long_options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	TRACE_ARGS_OPTIONS,
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

/* What the command line asked for. */
struct stats_command {
	enum output_format format;
	const char *output;
	struct trace_args args;
};

/* One option into cmd: 0, or -1 (said). */
static int stats_option(void *data, int c, const char *arg)
{
	struct stats_command *cmd = data;

	if (trace_args_option(&cmd->args, c, arg))
		return 0;
	if (c == 'o')
		cmd->output = arg;
	else if (c == 'q')
		progress_enabled = 0;
	else if (c == 'f' && output_format_parse(arg, &cmd->format) < 0) {
		pr_err("unknown format '%s': want text, markdown or json", arg);
		return -1;
	}
	return 0;
}

static const struct usage_command stats_usage = {
	.name = "stats", .args = USAGE_ARGS_TRACE, .help = usage_text, .shortopts = "f:o:w:n:k:q",
	.longopts = long_options, .option = stats_option,
};

int cmd_stats(int argc, char **argv)
{
	struct stats_command cmd = { .format = OUTPUT_FORMAT_TEXT, .args = { .keep = stats_keep } };
	struct stats *stats = NULL;
	struct trace *trace;
	char err[1024], *scope = NULL, **paths;
	int64_t origin;
	FILE *out = stdout;
	int parsed, ret = GPT_EXIT_USAGE, npaths = 0;

	parsed = usage_parse(&stats_usage, &cmd, argc, argv);
	if (parsed)
		return usage_status(parsed);
	paths = trace_args_paths(argv + optind, argc - optind, &npaths);
	trace = paths ? trace_args_open(paths, npaths, &cmd.args, &origin, &scope) : NULL;
	trace_args_paths_free(paths, npaths);
	if (!trace)
		return GPT_EXIT_USAGE;
	if (stats_compute(trace, &stats, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	/* Traces with GPU metrics: what bounds the busy time, judged on the steady state. */
	if (stats_efficiency_compute(trace, !scope, &stats->efficiency, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (cmd.output && !(out = fopen(cmd.output, "w"))) {
		pr_err("cannot write '%s': %m", cmd.output);
		out = stdout;
		goto out;
	}
	stats_write(out, stats, trace, scope, cmd.format);
	ret = GPT_EXIT_OK;
	if (fflush(out) != 0 || ferror(out)) {
		pr_err("cannot write '%s': %m", cmd.output ? cmd.output : "stdout");
		ret = GPT_EXIT_USAGE;
	}
out:
	if (out != stdout)
		fclose(out);
	stats_free(stats);
	free(scope);
	trace_close(trace);
	return ret;
}
