/*
 * The profiler's own time in a trace (profiler-time.h), read from the kernel metrics and the
 * profiler_overhead view.
 */
#include "analyzer/analysis/profiler-time.h"

#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* The correlation ids of the kernel metrics' rows, counters and SASS alike (both replay or patch
 * the kernel inside its launch call); none without the view (a trace recorded without --metrics). */
static int load_replayed(struct trace *trace, sqlite3 *db, struct profiler_time *pt)
{
	sqlite3_stmt *st;
	int rc;

	if (!trace_view_exists(trace, "gpt_all_kernel_metrics"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT traceId, correlationId FROM gpt_all_kernel_metrics"
			       " WHERE correlationId IS NOT NULL", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[KEY_INDEX_WORDS] = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1) };

		key_index_get(&pt->replayed, key, NULL);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int load_intervals(sqlite3 *db, struct profiler_time *pt)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT traceId, start, \"end\", globalTid, name FROM gpt_all_profiler_overhead"
			       " WHERE globalTid IS NOT NULL AND start IS NOT NULL AND \"end\" >= start"
			       " ORDER BY traceId, start", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 4);

		if (pt->n == cap) {
			cap = cap ? 2 * cap : 64;
			pt->intervals = xrealloc(pt->intervals, cap * sizeof(*pt->intervals));
		}
		pt->intervals[pt->n++] = (struct profiler_interval){
			.trace_id = sqlite3_column_int64(st, 0), .start = sqlite3_column_int64(st, 1),
			.end = sqlite3_column_int64(st, 2), .tid = sqlite3_column_int64(st, 3),
			.name = xstrdup(name ? name : "profiler overhead"),
		};
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int profiler_time_load(struct trace *trace, int with_intervals, struct profiler_time *pt, char *why, size_t len)
{
	sqlite3 *db = trace_db(trace);

	memset(pt, 0, sizeof(*pt));
	if (load_replayed(trace, db, pt) < 0 || (with_intervals && load_intervals(db, pt) < 0)) {
		snprintf(why, len, "cannot read the profiler's time (kernel metrics, PROFILER_OVERHEAD): %s",
			 sqlite3_errmsg(db));
		profiler_time_release(pt);
		return -EIO;
	}
	return 0;
}

int profiler_time_replayed(const struct profiler_time *pt, int64_t trace_id, int64_t correlation)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, correlation };

	return pt->replayed.count && key_index_find(&pt->replayed, key) != SIZE_MAX;
}

void profiler_time_release(struct profiler_time *pt)
{
	key_index_release(&pt->replayed);
	for (size_t i = 0; i < pt->n; i++)
		free(pt->intervals[i].name);
	free(pt->intervals);
	memset(pt, 0, sizeof(*pt));
}
