/*
 * The trace's insides, shared by the loader's three parts and nobody else: trace.c (the trace: open,
 * close, what the modules above keep), trace-file.c (each file of it: checked, recovered, opened or
 * attached, its tables and columns read) and views.c (the canonical views over the files, the scope,
 * and the SQL that reads one file's table as its view would).
 */
#ifndef GPT_LOADER_TRACE_INTERNAL_H
#define GPT_LOADER_TRACE_INTERNAL_H

#include "analyzer/loader/trace.h"
#include "analyzer/loader/trace-private.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The source tables the views read; indexes into trace_file.columns. */
enum source_table {
	SRC_STRINGS,
	SRC_KERNEL,
	SRC_MEMCPY,
	SRC_MEMSET,
	SRC_SYNC,
	SRC_RUNTIME,
	SRC_NVTX,
	SRC_GPU,
	SRC_PROCESSES,
	SRC_GPT_META,
	SRC_META_EXPORT,
	SRC_META_EXPORT_OLD,
	SRC_SESSION_START,
	SRC_KERNEL_METRICS,
	SRC_SOURCE_METRICS,
	SRC_CAPTURE_WINDOWS,
	SRC_GPU_METRICS,
	SRC_GPU_METRICS_INFO,
	SRC_MEMORY,
	SRC_PROFILER_OVERHEAD,
	SRC_COUNT,
};

/* The source tables' names, by enum source_table. */
extern const char *const trace_source_names[SRC_COUNT];

struct trace_file {
	char *path;
	char *open_path;		/* what SQLite opens: path, or its recovered copy */
	char *copy_dir;			/* the recovered copy's temporary folder, NULL when none */
	char schema[24];		/* "main" for the first file, "t1", "t2"... for attached ones */
	enum trace_format format;
	int64_t origin;			/* absolute ns of the file's time zero, 0 when unknown */
	int64_t shift;			/* added to the file's timestamps so that all files line up */
	int64_t nprocess_rows;		/* rows in PROCESSES */
	/* ",col1,col2," per source table, NULL when the table is absent */
	char *columns[SRC_COUNT];
};

struct trace {
	sqlite3 *db;
	struct trace_file *files;
	size_t nfiles;
	/* the scope in force: its window, and whether an NVTX range or a kernel glob narrows it */
	int64_t scope_start, scope_end;
	int scope_ranges, scope_glob;
	struct trace_cache caches[TRACE_CACHES];	/* the modules' above, freed here */
	/* trace_span()'s answers for the scope in force: per file, start and end, and whether known */
	int64_t (*spans)[2];
	unsigned char *span_known;
};

static inline int has_table(const struct trace_file *f, enum source_table t)
{
	return f->columns[t] != NULL;
}

static inline int has_column(const struct trace_file *f, enum source_table t, const char *col)
{
	char key[128];

	if (!col || !f->columns[t])
		return 0;
	snprintf(key, sizeof(key), ",%s,", col);
	return strstr(f->columns[t], key) != NULL;
}

/* trace-file.c */

/*
 * Open file i of the trace: check it, recover or import it when it needs that, connect to it (the
 * first) or attach it (the others), read its tables' columns, its format, its integrity and its
 * origin. Negative errno with err set.
 */
int trace_file_open(struct trace *trace, size_t i, char *err, size_t errlen);
/* What trace_file_open() made of f: a recovered copy removed, its memory freed. */
void trace_file_release(struct trace_file *f);
/* A read-only connection to file f (the first of a trace) as "main": SQLite's code; close *db either way. */
int trace_file_connect(const struct trace_file *f, sqlite3 **db);
/* Attach file f to db under its schema name: SQLite's code (SQLITE_OK when attached). */
int trace_file_attach(sqlite3 *db, const struct trace_file *f);
/* Run one query returning one integer; *out untouched when it returns no row or NULL. SQLite's code. */
int trace_query_int(struct trace *trace, const char *sql, int64_t *out);

/* views.c */

/* The canonical views over every file of the trace, scoped to the whole trace: 0 or negative errno. */
int trace_views_create(struct trace *trace, char *err, size_t errlen);

#endif
