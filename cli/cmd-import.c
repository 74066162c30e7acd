/*
 * gpt-trace import: the PyTorch profiler's traces (Kineto's Chrome-trace JSON, plain or gzipped)
 * converted into gpt-trace trace files, one per input, which every other command reads. The
 * commands also accept the JSON directly (converted into a cache beside it); import is for naming
 * the output, converting once ahead of time, and seeing what the conversion found (docs/import.md).
 */
#include "cli/commands.h"
#include "cli/trace-args.h"
#include "cli/usage.h"
#include "common/util.h"
#include "analyzer/import/kineto.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char usage_text[] =
	"usage: gpt-trace import [options] TRACE.json[.gz]|FOLDER...\n"
	"\n"
	"Convert PyTorch profiler traces (torch.profiler's export_chrome_trace or\n"
	"tensorboard_trace_handler: Kineto's Chrome-trace JSON, plain or gzipped) into gpt-trace trace\n"
	"files: kernels, copies, memsets and syncs linked to their launch calls, CPU ops and\n"
	"record_function annotations as NVTX ranges (ProfilerStep#N become the report's iterations),\n"
	"the rank from distributedInfo, the devices. A FOLDER stands for its *.json and *.json.gz files\n"
	"(the ranks of one job). Every command also reads such files directly (docs/import.md).\n"
	"\n"
	"options:\n"
	"  -o, --output PATH   the trace to write for one input; with several inputs, a folder to\n"
	"                      write them into (default: beside each input, TRACE.sqlite for\n"
	"                      TRACE.json[.gz])\n"
	"  -q, --quiet         no summary lines\n"
	"  -h, --help          print this help\n"
	"\n"
	"exit status: 0 every input converted, 2 usage error or an input that cannot be converted\n"
	"(nothing is written for it)\n";

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

/* TRACE.json[.gz] -> TRACE.sqlite, in folder dir when given. */
static char *output_name(const char *input, const char *dir)
{
	const char *base = strrchr(input, '/');
	char *stem = xstrdup(dir && base ? base + 1 : input), *out;
	size_t n = strlen(stem);

	if (has_suffix(stem, ".gz"))
		stem[n -= 3] = '\0';
	if (has_suffix(stem, ".json"))
		stem[n -= 5] = '\0';
	out = dir ? xasprintf("%s/%s.sqlite", dir, stem) : xasprintf("%s.sqlite", stem);
	free(stem);
	return out;
}

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The notes the import wrote into the trace, indented under its summary line. */
static void print_notes(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT value FROM GPT_META WHERE name LIKE 'import_note_%' "
			       "ORDER BY name", -1, &st, NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW)
			printf("  note: %s\n", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int import_one(const char *input, const char *output, int quiet)
{
	struct kineto_import_counts c;
	char err[1024];
	double t0 = seconds_now();

	if (same_file(input, output)) {
		pr_err("cannot write '%s': it is the input trace", output);
		return -1;
	}

	if (kineto_import(input, output, &c, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	if (quiet)
		return 0;
	printf("%s -> %s: %.1f MB of JSON, %" PRId64 " events in %.2f s: %" PRId64 " kernels, %" PRId64
	       " copies, %" PRId64 " memsets, %" PRId64 " syncs, %" PRId64 " API calls, %" PRId64 " ranges (%" PRId64
	       " ProfilerSteps)\n", input, output, (double)c.bytes / 1e6, c.events, seconds_now() - t0, c.kernels,
	       c.copies, c.sets, c.syncs, c.api_calls, c.ranges, c.steps);
	print_notes(output);
	return 0;
}

/* What the command line asked for. */
struct import_command {
	const char *output;
	int quiet;
};

/* One option into cmd: 0. */
static int import_option(void *data, int c, const char *arg)
{
	struct import_command *cmd = data;

	if (c == 'o')
		cmd->output = arg;
	else if (c == 'q')
		cmd->quiet = 1;
	return 0;
}

static const struct usage_command import_usage = {
	.name = "import", .args = USAGE_ARGS_TRACE, .help = usage_text, .shortopts = "o:q",
	.longopts = long_options, .option = import_option,
};

int cmd_import(int argc, char **argv)
{
	struct import_command cmd = { 0 };
	const char *output;
	char **paths;
	struct stat st;
	int ret, npaths = 0, to_dir;

	ret = usage_parse(&import_usage, &cmd, argc, argv);
	if (ret)
		return usage_status(ret);
	paths = trace_args_paths(argv + optind, argc - optind, &npaths);
	if (!paths)
		return GPT_EXIT_USAGE;
	output = cmd.output;
	to_dir = output && stat(output, &st) == 0 && S_ISDIR(st.st_mode);
	if (output && npaths > 1 && !to_dir) {
		pr_err("-o '%s' must be an existing folder when several traces are imported", output);
		trace_args_paths_free(paths, npaths);
		return GPT_EXIT_USAGE;
	}
	for (int i = 0; i < npaths; i++) {
		char *out = output && !to_dir ? xstrdup(output) : output_name(paths[i], to_dir ? output : NULL);

		if (import_one(paths[i], out, cmd.quiet) < 0)
			ret = -1;
		free(out);
	}
	trace_args_paths_free(paths, npaths);
	return ret < 0 ? GPT_EXIT_USAGE : GPT_EXIT_OK;
}
