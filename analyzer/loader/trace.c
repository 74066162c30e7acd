/*
 * The trace loader (see trace.h): opens the first file read-only and ATTACHes the others (each
 * checked, recovered or imported, and introspected by trace-file.c), lines their clocks up, and
 * builds the canonical TEMP views over them (views.c). The trace also keeps what the modules above
 * keep per trace (events.c, strings.c) and frees it when it closes.
 */
#include "analyzer/loader/trace.h"
#include "analyzer/loader/trace-private.h"
#include "common/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- spans ---- */

unsigned char *trace_span_slot(struct trace *trace, size_t trace_id, int64_t **span)
{
	if (trace_id >= trace->nfiles)
		return NULL;
	if (!trace->span_known) {
		trace->spans = xcalloc(trace->nfiles, sizeof(*trace->spans));
		trace->span_known = xcalloc(trace->nfiles, 1);
	}
	*span = trace->spans[trace_id];
	return &trace->span_known[trace_id];
}

struct trace_cache *trace_cache(struct trace *trace, enum trace_cache_kind kind)
{
	return &trace->caches[kind];
}

/*
 * A second read-only connection to the trace, for a scan on another thread (events.c): the files
 * under the schema names they have on the trace's own connection ("main", "t1"...), so that
 * trace_event_sql()'s text prepares on either. NULL when it cannot be opened.
 */
sqlite3 *trace_db_reader(const struct trace *trace)
{
	sqlite3 *db = NULL;
	int rc = trace_file_connect(&trace->files[0], &db);

	for (size_t i = 1; rc == SQLITE_OK && i < trace->nfiles; i++)
		rc = trace_file_attach(db, &trace->files[i]);
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* ---- open/close ---- */

/*
 * Line files up by their origins. Our origins are on CUPTI's clock and nsys's are UTC, so each kind
 * of file aligns only with files of its own kind; a file without a known origin stays on its own
 * clock.
 */
static void set_shifts(struct trace *trace)
{
	for (size_t i = 0; i < trace->nfiles; i++) {
		struct trace_file *f = &trace->files[i];
		int64_t min_origin = f->origin;

		f->shift = 0;
		if (f->origin <= 0 || trace->nfiles < 2)
			continue;
		for (size_t j = 0; j < trace->nfiles; j++) {
			const struct trace_file *o = &trace->files[j];

			if (o->format == f->format && o->origin > 0 && o->origin < min_origin)
				min_origin = o->origin;
		}
		f->shift = f->origin - min_origin;
		if (f->shift > TRACE_TIME_MAX)	/* origins that far apart are not one job's clock */
			f->shift = 0;
	}
}

int trace_open(const char *const *paths, size_t npaths, struct trace **out, char *err, size_t errlen)
{
	struct trace *trace;
	int ret;

	*out = NULL;
	if (!npaths) {
		set_err(err, errlen, "no trace file given");
		return -EINVAL;
	}
	trace = xcalloc(1, sizeof(*trace));
	trace->files = xcalloc(npaths, sizeof(*trace->files));
	trace->nfiles = npaths;
	for (size_t i = 0; i < npaths; i++)
		trace->files[i].path = xstrdup(paths[i]);

	for (size_t i = 0; i < npaths; i++) {
		ret = trace_file_open(trace, i, err, errlen);
		if (ret < 0)
			goto out_close;
	}
	set_shifts(trace);
	ret = trace_views_create(trace, err, errlen);
	if (ret < 0)
		goto out_close;
	*out = trace;
	return 0;

out_close:
	trace_close(trace);
	return ret;
}

void trace_close(struct trace *trace)
{
	if (!trace)
		return;
	for (int k = 0; k < TRACE_CACHES; k++) {
		if (trace->caches[k].data && trace->caches[k].free)
			trace->caches[k].free(trace->caches[k].data);
	}
	free(trace->spans);
	free(trace->span_known);
	sqlite3_close(trace->db);
	for (size_t i = 0; i < trace->nfiles; i++)
		trace_file_release(&trace->files[i]);
	free(trace->files);
	free(trace);
}

sqlite3 *trace_db(struct trace *trace)
{
	return trace->db;
}

int trace_view_exists(struct trace *trace, const char *view)
{
	sqlite3_stmt *st;
	int found;

	if (sqlite3_prepare_v2(trace->db, "SELECT 1 FROM temp.sqlite_master WHERE type = 'view' AND name = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, view, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

size_t trace_count(const struct trace *trace)
{
	return trace->nfiles;
}

const char *trace_path(const struct trace *trace, size_t traceId)
{
	return traceId < trace->nfiles ? trace->files[traceId].path : NULL;
}

enum trace_format trace_format(const struct trace *trace, size_t traceId)
{
	return traceId < trace->nfiles ? trace->files[traceId].format : 0;
}

