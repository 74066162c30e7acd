/*
 * Private to the trace module of the loader (trace.c, trace-file.c, views.c) and what it lends the
 * loader's other modules, which nobody above the loader sees. First, what the event reader (events.c)
 * and the strings (strings.c) read through: the SQL that reads one file's raw table with the
 * canonical view's column expressions (so a stream of events reads exactly what the view would), the
 * scope in force, and their per-trace caches. Then the trace's insides, for its own three files:
 * trace.c (the trace: open, close, what the modules above keep), trace-file.c (each file of it:
 * checked, recovered, opened or attached, its tables and columns read) and views.c (the canonical
 * views over the files, the scope, and the SQL that reads one file's table as its view would).
 */
#ifndef GPT_LOADER_TRACE_PRIVATE_H
#define GPT_LOADER_TRACE_PRIVATE_H

#include "analyzer/loader/trace.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum trace_event_sql {
	TRACE_SQL_SCAN,		/* storage (rowid) order */
	TRACE_SQL_RANGE,	/* storage order, rowids ?1 to ?2 */
	TRACE_SQL_SORTED,	/* ORDER BY start, then the first nkey columns (no rowid read) */
	TRACE_SQL_SCAN_RAW,	/* as TRACE_SQL_SCAN and TRACE_SQL_RANGE without the time filter: */
	TRACE_SQL_RANGE_RAW,	/* the caller applies it (trace_event_filter) */
};

/*
 * "SELECT e.rowid, start, cols... FROM <file's table> AS e" for one file and one event view
 * ("kernels", "api_calls"...), with the view's own time filter and column expressions (a column the
 * file lacks reads NULL). Returns NULL when the file has no such table (nothing to read) and sets
 * *absent; NULL without *absent: out of memory or an unknown view or column. sqlite3_free() it.
 * wrap: NULL, or (not for TRACE_SQL_SORTED) the name of a function that takes the columns and makes
 * the only result column: "SELECT wrap(e.rowid, start, cols...) FROM ...".
 */
char *trace_event_sql(const struct trace *trace, size_t file, const char *view, const char *const *cols,
		      size_t ncols, enum trace_event_sql mode, size_t nkey, const char *wrap, int *absent);

/*
 * The view's time filter in one file, for a caller that applies it to the values it reads (start and
 * end after the shift, both integers): a row is in the view when shift <= start <= TRACE_TIME_MAX and
 * end is NULL or start <= end <= TRACE_TIME_MAX. Returns 0 when the file's table has no start column
 * (no filter: every row is in), 1 otherwise; *shift: the file's shift.
 */
int trace_event_filter(const struct trace *trace, size_t file, const char *view, int64_t *shift);
/* The first and last rowid of the table of an event view in one file (two look-ups, no scan): 1, or 0
 * when the table is absent, empty or has no rowid. About how many rows it holds, and where to cut it. */
int trace_event_rowid_range(struct trace *trace, size_t file, const char *view, int64_t *first, int64_t *last);

/* A second read-only connection to the trace, on which trace_event_sql()'s text prepares, for a scan
 * on another thread; NULL when it cannot be opened. sqlite3_close() it. */
sqlite3 *trace_db_reader(const struct trace *trace);

/*
 * The scope of trace_set_scope() as it applies to one event view: the time window (0: no bound),
 * and whether anything else (an NVTX range, a kernel glob on kernels) restricts it, which only the
 * view's SQL can apply.
 */
int trace_scope_window(const struct trace *trace, const char *view, int64_t *start, int64_t *end);

/*
 * What a module above keeps per trace (events.c's cache of each table's storage order, strings.c's
 * strings): the trace owns the slot and, when it closes (before its connection), calls the free
 * function the module put beside its data, in this enum's order. trace.c knows neither module.
 */
enum trace_cache_kind {
	TRACE_CACHE_EVENTS,
	TRACE_CACHE_STRINGS,
	TRACE_CACHES
};

struct trace_cache {
	void *data;
	void (*free)(void *data);
};

struct trace_cache *trace_cache(struct trace *trace, enum trace_cache_kind kind);

/*
 * trace_span()'s memory (events.c computes the span from the event summaries): file trace_id's
 * start and end in *span, and its state, which trace_set_scope() resets: 0 not yet asked, 1 no
 * events, 2 events. NULL for a file out of range.
 */
unsigned char *trace_span_slot(struct trace *trace, size_t trace_id, int64_t **span);

/* ---- the trace's insides: trace.c, trace-file.c and views.c ---- */

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
