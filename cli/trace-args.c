/*
 * Scope options and trace opening for the analyzer commands (see trace-args.h).
 */
#include "cli/trace-args.h"
#include "common/util.h"
#include "analyzer/loader/events.h"
#include "analyzer/loader/job-check.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* "12.5" -> 12500000 ns; empty -> def; returns -1 when it is not a number of milliseconds */
static int parse_ms(const char *s, size_t len, int64_t def, int64_t *out)
{
	char buf[64], *end;
	double ms;

	if (!len) {
		*out = def;
		return 0;
	}
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	ms = strtod(buf, &end);
	if (errno || *end || end == buf || !isfinite(ms) || ms < 0 || ms > 9.2e12)
		return -1;
	*out = (int64_t)llround(ms * 1e6);
	return 0;
}

static void append_words(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void append_words(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 2 < len) {
		memcpy(buf + used, ", ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* From the loader's summaries, which the scan that finds each table's storage order fills for free. */
int trace_args_origin(struct trace *trace, int64_t *origin, char *err, size_t errlen)
{
	static const char *const views[] = { "kernels", "copies", "sets", "api_calls" };
	struct event_summary all = { 0 };

	*origin = 0;
	for (size_t t = 0; t < trace_count(trace); t++)
		for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
			struct event_summary m;

			if (event_summary_get(trace, views[v], t, &m, err, errlen) < 0)
				return -1;
			event_summary_merge(&all, &m);
		}
	if (all.has_first)
		*origin = all.first;
	return 0;
}

int trace_args_option(struct trace_args *args, int c, const char *arg)
{
	if (c == 'w')
		args->window = arg;
	else if (c == 'n')
		args->nvtx = arg;
	else if (c == 'k')
		args->kernel = arg;
	else if (c == TRACE_ARGS_FORCE_JOB)
		args->force_job = 1;
	else
		return 0;
	return 1;
}

int trace_args_check_job(struct trace *trace, char *const *paths, int npaths)
{
	struct job_start *starts = xcalloc((size_t)npaths, sizeof(*starts));
	sqlite3_stmt *st;
	char why[1024];
	int ret = 0;

	for (int i = 0; i < npaths; i++)
		starts[i] = (struct job_start){ .name = paths[i], .wall_ns = -1 };
	if (sqlite3_prepare_v2(trace_db(trace), "SELECT traceId, CAST(value AS INTEGER) FROM meta WHERE name = "
			       "'time_origin_utc_ns'", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t t = sqlite3_column_int64(st, 0);

			if (t >= 0 && t < npaths)
				starts[t].wall_ns = sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
	}
	if (job_starts_apart(starts, (size_t)npaths, why, sizeof(why))) {
		pr_err("%s", why);
		ret = -1;
	}
	free(starts);
	return ret;
}

struct trace *trace_args_open(char *const *paths, int npaths, const struct trace_args *args, int64_t *origin,
			      char **scope)
{
	struct trace_scope sc = { 0 };
	struct trace *trace;
	char err[1024], words[1024] = "";
	int64_t start_ns = 0, end_ns = 0;

	*scope = NULL;
	if (args->window) {
		const char *colon = strchr(args->window, ':');

		if (!colon || parse_ms(args->window, (size_t)(colon - args->window), 0, &start_ns) < 0 ||
		    parse_ms(colon + 1, strlen(colon + 1), -1, &end_ns) < 0 ||
		    (end_ns >= 0 && end_ns <= start_ns)) {
			pr_err("invalid --window '%s': want START_MS:END_MS with START < END, in milliseconds",
			       args->window);
			return NULL;
		}
	}
	if (trace_open((const char *const *)paths, (size_t)npaths, &trace, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return NULL;
	}
	if (npaths > 1 && !args->force_job && trace_args_check_job(trace, paths, npaths) < 0) {
		trace_close(trace);
		return NULL;
	}
	if (args->keep)
		args->keep(trace);
	if (trace_args_origin(trace, origin, err, sizeof(err)) < 0) {
		pr_err("%s (in '%s')", err, paths[0]);
		trace_close(trace);
		return NULL;
	}
	if (args->window) {
		sc.start = *origin + start_ns;
		sc.end = end_ns >= 0 ? *origin + end_ns : 0;
		append_words(words, sizeof(words), "window %s ms from the first event", args->window);
	}
	if (args->nvtx)
		append_words(words, sizeof(words), "NVTX range '%s'", args->nvtx);
	if (args->kernel)
		append_words(words, sizeof(words), "kernels matching '%s'", args->kernel);
	sc.nvtx_range = args->nvtx;
	sc.kernel_glob = args->kernel;
	if (words[0] && trace_set_scope(trace, &sc, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		trace_close(trace);
		return NULL;
	}
	if (words[0])
		*scope = xstrdup(words);
	return trace;
}

static int is_kineto_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && ((n > 5 && !strcmp(name + n - 5, ".json")) ||
				  (n > 8 && !strcmp(name + n - 8, ".json.gz")));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's Kineto files appended to paths[*n..]; 0, or -1 with one line printed. */
static int add_folder(const char *dir, char ***paths, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int first = *n;

	if (!d) {
		pr_err("cannot read folder '%s': %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)))
		if (is_kineto_name(e->d_name)) {
			*paths = xrealloc(*paths, (size_t)(*n + 1) * sizeof(**paths));
			(*paths)[(*n)++] = xasprintf("%s/%s", dir, e->d_name);
		}
	closedir(d);
	if (*n == first) {
		pr_err("cannot open '%s': is a directory with no PyTorch profiler trace in it (*.json, *.json.gz)", dir);
		return -1;
	}
	qsort(*paths + first, (size_t)(*n - first), sizeof(**paths), by_name);
	return 0;
}

char **trace_args_paths(char *const *args, int nargs, int *npaths)
{
	char **paths = NULL;
	int n = 0;

	for (int i = 0; i < nargs; i++) {
		struct stat st;

		if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (add_folder(args[i], &paths, &n) < 0) {
				trace_args_paths_free(paths, n);
				return NULL;
			}
			continue;
		}
		paths = xrealloc(paths, (size_t)(n + 1) * sizeof(*paths));
		paths[n++] = xstrdup(args[i]);
	}
	*npaths = n;
	return paths;
}

void trace_args_paths_free(char **paths, int npaths)
{
	for (int i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
}
