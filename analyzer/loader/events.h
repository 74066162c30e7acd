/*
 * Reading one kind of event in time order, at the speed of a table scan.
 *
 * An ORDER BY over a canonical view makes SQLite sort every row (about 2 s per million kernels on
 * our 2-core machine, 25x a plain scan). Traces are already nearly in time order where they are
 * stored: our writer inserts each CUPTI buffer as it comes, so a table is a few long runs whose rows
 * are at most a few hundred places out of order; nsys exports are often the same. An event stream
 * reads each file's raw table in storage (rowid) order, with the view's own column expressions and
 * filters, one cursor per run, puts the rows of each run back in order through a reorder buffer of
 * EVENT_REORDER rows, and merges the runs and the files. The runs are found once per trace by a scan
 * of the sort key alone, and kept with the trace; a heap orders the runs by their next rows. A
 * table whose disorder no bounded buffer can repair (more than EVENT_MAX_RUNS runs, or more than
 * EVENT_MAX_UNSORTED_RUNS that need the buffer), or a scope only SQL can apply (an NVTX range, a
 * kernel glob), is read through ORDER BY as before: the stream's rows are the same either way.
 *
 * A command that reads the same streams more than once (report: phases, then rules) names their
 * columns first (event_streams_keep): the scan that finds a table's runs then also keeps the view's
 * rows in a temporary copy, and the streams read their runs from it. Each table is read from SQLite
 * once.
 *
 * Rows come out ordered by (traceId, start, the first nkey columns, storage order): the order of
 * "ORDER BY traceId, start, <keys>" over the view, with ties kept in storage order. Memory: at
 * most EVENT_REORDER rows per run, never the table.
 */
#ifndef GPT_LOADER_EVENTS_H
#define GPT_LOADER_EVENTS_H

#include "analyzer/loader/trace.h"

#include <stddef.h>
#include <stdint.h>

#define EVENT_MAX_COLS 24
#define EVENT_REORDER 1024
#define EVENT_MAX_RUNS 4096		/* runs merged; our collector's tables hold ~100 per million rows */
#define EVENT_MAX_UNSORTED_RUNS 64	/* of them, runs that need the reorder buffer */

/* One event: its file, start, and the columns asked for, in the order asked. */
struct event_row {
	/* the sort key first (trace_id, start, seq, null, v[0..nkey)), so that it copies as a prefix */
	int64_t trace_id;
	int64_t start;
	int64_t seq;				/* rowid: ties keep storage order */
	uint32_t null;				/* bit i: column i is NULL; EVENT_START_NULL */
	int64_t v[EVENT_MAX_COLS];		/* integer values (0 where NULL) */
	char *text;				/* the text column's value, NULL when NULL or none */
};

#define EVENT_START_NULL (1u << 31)		/* start is NULL (read as 0) */

struct event_stream;

/*
 * Open a stream over the event view `view` ("kernels", "copies", "sets", "syncs", "api_calls",
 * "nvtx") as currently scoped, with the view columns cols[0..ncols) (at most EVENT_MAX_COLS; start
 * is always read). The first nkey columns join start in the sort key: nkey is 0, or 3 with cols
 * beginning "end", "deviceId", "streamId" (the order of GPU operations). A stream whose cols begin
 * with "end" and that is read to its end leaves the view's summary behind (event_summary_get).
 * text_col: the index of a text column read as text (-1: none). Returns 0 or a negative error with
 * one line in err.
 */
int event_stream_open(struct trace *trace, const char *view, const char *const *cols, size_t ncols,
		      size_t nkey, int text_col, struct event_stream **out, char *err, size_t errlen);

/* The same over file `file` of the trace only: its rows, in the same order (the exporter merges
 * the files of a device by time). */
int event_stream_open_file(struct trace *trace, size_t file, const char *view, const char *const *cols,
			   size_t ncols, size_t nkey, int text_col, struct event_stream **out, char *err,
			   size_t errlen);

/* The columns of a stream, as event_stream_open() takes them. */
struct event_columns {
	const char *view;
	const char *const *cols;
	size_t ncols, nkey;
	int text_col;
};

/*
 * For every command that reads streams (report: the phases walk the whole trace, the rules the
 * steady state; stats, diff and export read each table once, and a copy still beats the scan that
 * finds the runs followed by a second read of every row): call before anything reads the trace.
 * Sets of the same view and keys, from several calls, merge into one with the union of their
 * columns (at most EVENT_MAX_COLS, one text column). The scan that finds a table's runs (the first read of it, for a stream or a summary) then
 * reads the columns of the set for its view and keeps the view's rows in a temporary file (unlinked,
 * in $TMPDIR; varints, about 15 bytes a kernel and 10 an API call), and every stream whose columns
 * are among those, in any time window, reads them from there instead of the trace: each table is
 * read from SQLite once. The rows are the same either way. A copy that cannot be written in full (a
 * full disk) is given up, and streams read the trace. The copies last until the trace is closed.
 */
void event_streams_keep(struct trace *trace, const struct event_columns *sets, size_t n);

/*
 * With more than one CPU, the loader scans tables and reads streams ahead on several threads (with
 * the same rows as on one). A process that is one of `ways` working at once (the cross-rank
 * summary's workers) takes its share of the CPUs from now on: at least one, then no thread.
 */
void event_threads_share(size_t ways);
/* The threads the loader may use (its share of the CPUs, at most 8): 1 means none but the caller's.
 * A command that can work on two threads itself (the Perfetto writer) asks it too. */
size_t event_threads(void);

/* The next row (valid until the next call): 1, 0 at the end, or a negative error with err set. */
int event_stream_next(struct event_stream *s, const struct event_row **row, char *err, size_t errlen);

/* How many rows the stream will give at most (the tables' rows in its view, before the scope). */
int64_t event_stream_total(const struct event_stream *s);

void event_stream_close(struct event_stream *s);

static inline int event_null(const struct event_row *r, size_t col)
{
	return (r->null >> col) & 1;
}

static inline int64_t event_int(const struct event_row *r, size_t col, int64_t if_null)
{
	return event_null(r, col) ? if_null : r->v[col];
}

/* What a view holds for one file: rows, the first start and the last end (has_*: not all NULL). */
struct event_summary {
	int64_t rows, first, last;
	int has_first, has_last;
};

/*
 * The summary of view (an event view) for file trace_id within the current scope, as
 * "SELECT count(*), min(start), max(end)" would give it: free when a stream has read the view to its
 * end in this scope or when there is no scope (the scan that finds the runs counted it), else that
 * query. Returns 0 or a negative error with one line in err.
 */
int event_summary_get(struct trace *trace, const char *view, size_t trace_id, struct event_summary *out,
		      char *err, size_t errlen);
/* Fold m into `into`: its rows added, the earlier first start and the later last end. */
void event_summary_merge(struct event_summary *into, const struct event_summary *m);
/* Widen [*start, *end] to the first start and last end of view's rows in every file, from the
 * summaries (free after a stream has read the view, else one scan). Returns 0 or a negative error. */
int event_span_widen(struct trace *trace, const char *view, int64_t *start, int64_t *end, char *err,
		     size_t errlen);

/*
 * The first start and the last end of the GPU operations and API calls of trace traceId within the
 * current scope: 1, or 0 with both 0 when there are none, or a negative error with one line in err.
 * Remembered until the scope changes, so every rule may ask (each answer is a scan of the trace,
 * or the summaries a stream left).
 */
int trace_span(struct trace *trace, size_t trace_id, int64_t *start, int64_t *end, char *err, size_t errlen);

/* Compare two rows by (traceId, start, the first nkey columns with NULL first); 0 when equal. */
int event_compare(const struct event_row *a, const struct event_row *b, size_t nkey);

#endif
