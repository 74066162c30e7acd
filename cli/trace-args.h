/*
 * What the analyzer commands (stats, report) share on their command line: the scope options
 * --window START_MS:END_MS, --nvtx NAME and --kernel GLOB, folders of per-rank files, and opening
 * the traces with one error line on failure. Private to cli/.
 */
#ifndef GPT_CLI_TRACE_ARGS_H
#define GPT_CLI_TRACE_ARGS_H

#include "analyzer/loader/trace.h"

#include <getopt.h>
#include <stdint.h>

struct trace_args {
	const char *window;	/* "START_MS:END_MS", milliseconds from the start of the trace */
	const char *nvtx;
	const char *kernel;
	int force_job;		/* --force-job: traces recorded hours apart are read together */
	/* called as soon as the traces are open, before anything reads them: the streams the command
	 * will read, to read each table once (phases_keep_walk, stats_keep); NULL: none */
	void (*keep)(struct trace *trace);
};

#define TRACE_ARGS_USAGE                                                                           \
	"scope (each narrows the analysis; together they combine):\n"                              \
	"  -w, --window START_MS:END_MS  events starting in this window, in ms from the trace's\n"   \
	"                                first event (either side may be left empty)\n"             \
	"  -n, --nvtx NAME               events starting inside NVTX ranges named NAME (same process)\n" \
	"  -k, --kernel GLOB             kernels whose name matches GLOB ('*gemm*')\n"              \
	"      --force-job               read traces recorded an hour or more apart as one job's\n"

/* The scope options' entries of a getopt_long() table, and their letters "w:n:k:". */
#define TRACE_ARGS_FORCE_JOB 0x7100	/* --force-job's getopt code */
#define TRACE_ARGS_OPTIONS                                                                         \
	{ "window", required_argument, NULL, 'w' },                                                \
	{ "nvtx", required_argument, NULL, 'n' },                                                  \
	{ "kernel", required_argument, NULL, 'k' },                                                \
	{ "force-job", no_argument, NULL, TRACE_ARGS_FORCE_JOB }

/* Option c of getopt_long() into args when it is a scope option: 1, else 0. */
int trace_args_option(struct trace_args *args, int c, const char *arg);

/*
 * Open the traces and apply the scope. On failure prints one line and returns NULL. *origin gets the
 * trace's first event (what --window counts from) and *scope a description of the scope in words
 * (NULL for none; the caller frees it).
 */
struct trace *trace_args_open(char *const *paths, int npaths, const struct trace_args *args, int64_t *origin,
			      char **scope);

/*
 * The traces named on the command line, each folder replaced by the PyTorch profiler traces in it
 * (*.json and *.json.gz, in name order: the per-rank files of one job, docs/import.md). Returns a
 * new array of *npaths copies (free with trace_args_paths_free()), or NULL with one line printed (a
 * folder that cannot be read or holds no such file).
 */
char **trace_args_paths(char *const *args, int nargs, int *npaths);
void trace_args_paths_free(char **paths, int npaths);

/* Several traces recorded an hour or more apart are no job's (analyzer/loader/job-check.h): 0, or -1
 * with one line printed. */
int trace_args_check_job(struct trace *trace, char *const *paths, int npaths);

/* The first event of the whole trace, before any scope (what --window and the evidence's times count
 * from): 0, or -1 when the trace cannot be read, with one line in err. */
int trace_args_origin(struct trace *trace, int64_t *origin, char *err, size_t errlen);

#endif
