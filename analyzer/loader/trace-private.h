/*
 * What the loader's modules share and nobody above them sees: the SQL that reads one file's raw
 * table with the canonical view's column expressions (so a stream of events reads exactly what the
 * view would), the scope in force, and the per-trace caches of the modules above (events.c,
 * strings.c).
 */
#ifndef GPT_LOADER_TRACE_PRIVATE_H
#define GPT_LOADER_TRACE_PRIVATE_H

#include "analyzer/loader/trace.h"

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

#endif
