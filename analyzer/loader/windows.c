/*
 * Capture windows (see windows.h): a few rows per trace, read once into a sorted array.
 */
#include "analyzer/loader/windows.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

int trace_windows_load(struct trace *trace, struct trace_windows *out, char *err, size_t errlen)
{
	static const char sql[] = "SELECT traceId, start, end FROM windows WHERE start IS NOT NULL "
				  "ORDER BY traceId, start";
	sqlite3 *db = trace_db(trace);
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read the capture windows: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct trace_window *w;

		if (out->count == cap) {
			cap = cap ? 2 * cap : 8;
			out->list = xrealloc(out->list, cap * sizeof(*out->list));
		}
		w = &out->list[out->count++];
		w->trace_id = sqlite3_column_int64(st, 0);
		w->start = sqlite3_column_int64(st, 1);
		w->end = sqlite3_column_type(st, 2) == SQLITE_NULL ? TRACE_TIME_MAX
								   : sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read the capture windows: %s", sqlite3_errmsg(db));
		trace_windows_release(out);
		return -EIO;
	}
	return 0;
}

int trace_windows_has(const struct trace_windows *windows, int64_t trace_id)
{
	for (size_t i = 0; i < windows->count; i++)
		if (windows->list[i].trace_id == trace_id)
			return 1;
	return 0;
}

const struct trace_window *trace_windows_at(const struct trace_windows *windows, int64_t trace_id,
					    int64_t t)
{
	for (size_t i = 0; i < windows->count; i++) {
		const struct trace_window *w = &windows->list[i];

		if (w->trace_id == trace_id && t >= w->start && t < w->end)
			return w;
	}
	return NULL;
}

void trace_windows_release(struct trace_windows *windows)
{
	free(windows->list);
	memset(windows, 0, sizeof(*windows));
}
