/*
 * gpt-trace stats: summary tables of one or more traces (ours or nsys exports), in the spirit of
 * `nsys stats`: kernels, memory operations, API calls, device and stream busy time, NVTX ranges.
 */
#include "stats/stats.h"
#include "stats/efficiency.h"
#include "cli/commands.h"
#include "cli/trace-args.h"
#include "cli/usage.h"
#include "common/progress.h"
#include "common/util.h"

#include <getopt.h>
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
	{ "window", required_argument, NULL, 'w' },
	{ "nvtx", required_argument, NULL, 'n' },
	{ "kernel", required_argument, NULL, 'k' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_stats(int argc, char **argv)
{
	enum output_format format = OUTPUT_FORMAT_TEXT;
	struct trace_args args = { .keep = stats_keep };
	const char *output = NULL;
	struct stats *stats = NULL;
	struct trace *trace;
	char err[1024], *scope = NULL, **paths;
	int64_t origin;
	FILE *out = stdout;
	int c, ret = GPT_EXIT_USAGE, npaths = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:w:n:k:qh", long_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (output_format_parse(optarg, &format) < 0) {
				pr_err("unknown format '%s': want text, markdown or json", optarg);
				return GPT_EXIT_USAGE;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'w':
			args.window = optarg;
			break;
		case 'n':
			args.nvtx = optarg;
			break;
		case 'k':
			args.kernel = optarg;
			break;
		case 'q':
			progress_enabled = 0;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return GPT_EXIT_OK;
		case ':':
		default:
			return usage_option_error("stats", USAGE_PLAIN, c, argv);
		}
	}
	if (optind >= argc) {
		pr_err("no trace given; usage: gpt-trace stats [options] TRACE...");
		return GPT_EXIT_USAGE;
	}
	paths = trace_args_paths(argv + optind, argc - optind, &npaths);
	trace = paths ? trace_args_open(paths, npaths, &args, &origin, &scope) : NULL;
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
	if (output && !(out = fopen(output, "w"))) {
		pr_err("cannot write '%s': %m", output);
		out = stdout;
		goto out;
	}
	stats_write(out, stats, trace, scope, format);
	ret = GPT_EXIT_OK;
	if (fflush(out) != 0 || ferror(out)) {
		pr_err("cannot write '%s': %m", output ? output : "stdout");
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
