/*
 * Private to the event reader (events.c and events-*.c): its runs, tables, copies and streams, and
 * the steps its files share. events.c has the streams and their read-ahead over events-scan.c (the
 * first scans that find the runs), events-copy.c (the tables' copies) and events-row.c (rows).
 */
#ifndef GPT_LOADER_EVENTS_PRIVATE_H
#define GPT_LOADER_EVENTS_PRIVATE_H

#include "analyzer/loader/events.h"
#include "analyzer/loader/trace-private.h"
#include "common/progress.h"
#include "common/util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>


/* One stretch of rowids that the reorder buffer puts in order; sorted: it needs no buffer. */
struct run_span {
	int64_t first, last;
	int sorted;
	size_t copy;			/* the copy that holds its rows (table_runs.copies) */
	int64_t off;			/* where they begin in it */
};

/* What the scan found in one file's table for one view and sort key. */
struct table_runs {
	size_t file, nkey;
	char *view;
	int64_t rows;
	int unbounded;			/* more than EVENT_MAX_RUNS runs: read through ORDER BY */
	struct event_summary summary;	/* of the whole table (valid unless unbounded) */
	int filtered;			/* some row is not in the view: reads carry the SQL time filter */
	struct run_span *runs;
	size_t nruns;
	/* With event_streams_keep(): the rows the scan read, in storage order, with the columns of
	 * the kept set copy_set (an index into event_cache.keep), for the streams whose columns are
	 * among them to read instead of the table; one copy per part of the table scanned apart
	 * (struct scan_job), its runs one after another. */
	struct recording **copies;
	size_t ncopies, copy_set;
};

/* What a stream that ran to its end saw of one file, in the scope it ran in. */
struct scoped_summary {
	char *view;
	size_t file;
	int64_t scope_start, scope_end;
	struct event_summary summary;
};

/*
 * A copy of one file's table in the view, as its scan read it, in a temporary file: each row as
 * varints, every value the difference from the same field of the row before in its run (starts,
 * ends, correlation ids and rowids grow slowly), texts as length and bytes. About 15 bytes a kernel
 * and 10 an API call.
 */
struct recording {
	int fd;				/* unlinked temporary file */
	int64_t size;
	const unsigned char *map;	/* once written in full: the file, mapped for reading */
};

/*
 * Where an unsorted scan's rows go. Its SELECT is one call of the function ROW_FUNCTION over the
 * columns (trace_event_sql's wrap), and SQLite calls it as it makes each row: the values are handed
 * over in one array, not fetched by a sqlite3_column_*() call per column, each an API entry and exit
 * (a third of the cost of reading a row, measured on a kernel table). A stream steps one statement
 * at a time, so one target per trace serves all: set before each step.
 */
#define ROW_FUNCTION "gpt_event_row"
struct row_target {
	struct event_row *r;
	size_t ncols;
	int text_col;
	int odd, called;
};

/* A connection a scan runs on, with its ROW_FUNCTION's target: the trace's own, or a second one
 * (trace_db_reader) on another thread. */
struct scanner {
	sqlite3 *db;
	struct row_target *target;
	int packed;			/* ROW_FUNCTION is registered on db */
	int main;			/* the calling thread: it shows the progress line */
};

struct event_cache {
	struct row_target target;
	int packed;			/* ROW_FUNCTION is registered on the trace's connection */
	struct table_runs *items;
	size_t n;
	struct scoped_summary *scoped;
	size_t nscoped;
	struct event_columns *keep;	/* event_streams_keep(): copies are made with these columns */
	size_t nkeep;
};

/* One cursor of a stream, and the rows it holds in a heap by sort key. */
struct run {
	sqlite3_stmt *st;
	struct copy_reader *copy;	/* or the rows from the table's copy */
	int done, by_view;
	int packed;			/* st is made with wrap = ROW_FUNCTION */
	size_t limit;			/* rows held before the smallest may go: 1 when in order */
	struct event_row *pool;
	struct event_row **heap;
	size_t n;
	struct event_row **spare;
	size_t nspare;
	int64_t seq;
};

/* Writing a table's copy, through a buffer. */
struct spill {
	struct recording *rec;
	unsigned char *buf;
	size_t len, cap;
	struct event_row prev;		/* the row before (for the differences) */
	int failed;			/* a row could not be written: the copy is useless */
};

/* Reading one run of a copy, from the mapping. */
struct copy_reader {
	const unsigned char *p, *end;
	const unsigned char *kept;		/* pages from here to p are still mapped in */
	int64_t start, seq, v[EVENT_MAX_COLS];	/* the row before (for the differences) */
	const struct event_columns *set;	/* the copy's columns */
	int same;				/* the stream's columns are the set's; else: */
	size_t ncols, col[EVENT_MAX_COLS];	/* the set's column of each of the stream's */
	struct event_row row;			/* a row with the set's columns */
};

/* How much of a copy a reader leaves mapped in behind it: the pages it has read count in the
 * process's resident size until they are given back, and a copy grows with the trace. */
#define COPY_KEEP (64 << 10)

struct event_stream {
	struct trace *trace;
	char *view;
	char **cols;
	size_t ncols, nkey, file;
	int text_col;
	int64_t scope_start, scope_end, total;
	size_t only;			/* the one file read (event_stream_open_file), or SIZE_MAX: all */
	int by_view;			/* the scope needs the view's SQL: one sorted query */
	struct run *runs;
	size_t nruns;
	struct run **order;		/* the runs holding rows, a heap by their first row */
	size_t norder;
	int filled;			/* the runs were filled and order made */
	struct run *last;		/* the run the current row came from (recycled at the next call) */
	struct event_row *current;
	int end_col;			/* cols[0] is "end": the summary takes its maximum */
	struct event_summary *seen;	/* per file: what the stream gave */
	struct table_runs *tables;	/* per file: its table as the stream opened it (not by_view) */
	struct prefetch *prefetch;	/* rows read ahead on another thread, or NULL */
	int failed;
};

int events_row_before(const struct event_row *a, const struct event_row *b, size_t nkey);
int events_columns_supported(const char *const *cols, size_t ncols, size_t nkey);
void events_heap_push(struct event_row **heap, size_t *n, struct event_row *r, size_t nkey);
struct event_row *events_heap_pop(struct event_row **heap, size_t *n, size_t nkey);
int events_read_row(sqlite3_stmt *st, struct event_row *r, size_t ncols, int text_col);
void events_row_function(sqlite3_context *ctx, int argc, sqlite3_value **argv);
int events_step_row(struct row_target *t, sqlite3_stmt *st, int packed, struct event_row *r, size_t ncols,
		    int text_col, int *odd);
void events_summary_add(struct event_summary *m, const struct event_row *r, int start_null, int has_end);
int register_row_function(sqlite3 *db, struct row_target *target);
struct event_cache *events_cache_peek(struct trace *trace);
struct event_cache *events_cache_of(struct trace *trace);
void recording_free(struct recording *rec);
struct recording *recording_new(void);
struct spill *spill_new(struct recording *rec);
void spill_free(struct spill *sp);
int spill_flush(struct spill *w);
int64_t spill_mark(struct spill *w);
int spill_put(struct spill *w, const struct event_row *r, size_t ncols, int text_col);
int recording_map(struct recording *rec);
int copy_next(struct copy_reader *rd, struct event_row *r);
struct copy_reader *copy_reader_new(const struct event_stream *s, const struct table_runs *t);
void table_copies_free(struct table_runs *t);
void events_add_run(struct table_runs *t, int64_t first, int64_t last, int sorted, size_t copy, int64_t off);
int events_db_error(sqlite3 *db, const char *view, char *err, size_t errlen);
int events_sql_error(struct trace *trace, const char *view, char *err, size_t errlen);
struct table_runs *table_runs_get(struct trace *trace, size_t file, const char *view, size_t nkey,
				  char *err, size_t errlen, int *ret);

#endif
