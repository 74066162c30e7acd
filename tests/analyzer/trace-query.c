/*
 * Test driver for the trace loader: opens the traces given, optionally sets a scope, and prints the
 * row count of every canonical view (--counts) or the rows of a query (--sql), '|'-separated like the
 * sqlite3 shell, so that shell tests can compare exact output. Exits 2 with the loader's one-line
 * error when a trace cannot be opened.
 */
#include "analyzer/loader/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const views[] = { "kernels", "copies", "sets", "syncs", "api_calls", "nvtx",
				     "gpus", "processes", "meta" };

static int print_query(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK) {
		fprintf(stderr, "trace-query: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *v = sqlite3_column_text(st, i);

			printf("%s%s", i ? "|" : "", v ? (const char *)v : "");
		}
		printf("\n");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "trace-query: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct trace_scope scope = { 0 };
	const char *sql[16];
	int nsql = 0, counts = 0, scoped = 0, ret = 0, i;
	struct trace *trace;
	char err[512];

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--counts")) {
			counts = 1;
		} else if (!strcmp(argv[i], "--sql") && i + 1 < argc && nsql < 16) {
			sql[nsql++] = argv[++i];
		} else if (!strcmp(argv[i], "--window") && i + 1 < argc) {
			if (sscanf(argv[++i], "%ld:%ld", &scope.start, &scope.end) != 2)
				return 2;
			scoped = 1;
		} else if (!strcmp(argv[i], "--nvtx") && i + 1 < argc) {
			scope.nvtx_range = argv[++i];
			scoped = 1;
		} else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
			scope.kernel_glob = argv[++i];
			scoped = 1;
		} else {
			fprintf(stderr, "trace-query: bad option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (trace_open((const char *const *)argv + i, argc - i, &trace, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpt-trace: %s\n", err);
		return 2;
	}
	if (scoped && trace_set_scope(trace, &scope, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpt-trace: %s\n", err);
		trace_close(trace);
		return 2;
	}
	for (size_t t = 0; counts && t < trace_count(trace); t++)
		printf("trace %zu %s %s\n", t, trace_format(trace, t) == TRACE_FORMAT_GPT ? "gpt" : "nsys",
		       trace_path(trace, t));
	for (size_t v = 0; counts && v < sizeof(views) / sizeof(views[0]); v++) {
		char q[128];

		snprintf(q, sizeof(q), "SELECT '%s', count(*) FROM %s", views[v], views[v]);
		ret |= print_query(trace_db(trace), q);
	}
	for (int k = 0; k < nsql; k++)
		ret |= print_query(trace_db(trace), sql[k]);
	trace_close(trace);
	return ret;
}
