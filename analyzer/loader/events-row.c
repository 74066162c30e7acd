/*
 * One row of an event stream (events-private.h): the order of rows, the reorder buffer's heap, a row
 * read from a statement (column by column, or packed by one SQL function), and the summaries.
 */
#define _GNU_SOURCE	/* sched_getaffinity */
#include "analyzer/loader/events-private.h"

int event_compare(const struct event_row *a, const struct event_row *b, size_t nkey)
{
	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	for (size_t i = 0; i < nkey; i++) {
		int an = event_null(a, i), bn = event_null(b, i);

		if (an != bn)
			return an ? -1 : 1;
		if (!an && a->v[i] != b->v[i])
			return a->v[i] < b->v[i] ? -1 : 1;
	}
	return 0;
}

/* Sort key, then storage order. */
int events_row_before(const struct event_row *a, const struct event_row *b, size_t nkey)
{
	int c = event_compare(a, b, nkey);

	return c ? c < 0 : a->seq < b->seq;
}

/* Columns a stream can read in order: at most EVENT_MAX_COLS, and a key of none or of the GPU
 * operations' end, deviceId and streamId, first. */
int events_columns_supported(const char *const *cols, size_t ncols, size_t nkey)
{
	return ncols <= EVENT_MAX_COLS && (nkey == 0 || nkey == 3) && nkey <= ncols &&
	       (!nkey || (!strcmp(cols[0], "end") && !strcmp(cols[1], "deviceId") && !strcmp(cols[2], "streamId")));
}

void events_heap_push(struct event_row **heap, size_t *n, struct event_row *r, size_t nkey)
{
	size_t i = (*n)++;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!events_row_before(r, heap[parent], nkey))
			break;
		heap[i] = heap[parent];
		i = parent;
	}
	heap[i] = r;
}

struct event_row *events_heap_pop(struct event_row **heap, size_t *n, size_t nkey)
{
	struct event_row *top = heap[0], *last = heap[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && events_row_before(heap[c + 1], heap[c], nkey))
			c++;
		if (!events_row_before(heap[c], last, nkey))
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (*n)
		heap[i] = last;
	return top;
}

/*
 * A row from its values: vals[0] start, then the stream's columns. Returns 1 when start is not an
 * integer or the first column (end) neither an integer nor NULL: values C cannot compare as SQL would
 * (see find_runs). The values may be unprotected (sqlite3_column_value()), which only matters to
 * other threads: a trace's connection has one.
 */
static int fill_row(sqlite3_value **vals, struct event_row *r, size_t ncols, int text_col)
{
	int type = sqlite3_value_type(vals[0]), odd = type != SQLITE_INTEGER;

	r->start = sqlite3_value_int64(vals[0]);
	r->null = type == SQLITE_NULL ? EVENT_START_NULL : 0;
	for (size_t i = 0; i < ncols; i++) {
		sqlite3_value *v = vals[i + 1];

		type = sqlite3_value_type(v);
		if (i == 0 && type != SQLITE_INTEGER && type != SQLITE_NULL)
			odd = 1;
		if (type == SQLITE_NULL) {
			r->null |= 1u << i;
			r->v[i] = 0;
			if ((int)i == text_col) {
				free(r->text);
				r->text = NULL;
			}
			continue;
		}
		if ((int)i == text_col) {
			const char *t = (const char *)sqlite3_value_text(v);

			free(r->text);
			r->text = t ? xstrdup(t) : NULL;
			r->v[i] = 0;
		} else {
			r->v[i] = sqlite3_value_int64(v);
		}
	}
	return odd;
}

/* A row of a plain SELECT (column 0 rowid or traceId, 1 start, then the stream's): fill_row() over
 * one sqlite3_column_value() per column. */
int events_read_row(sqlite3_stmt *st, struct event_row *r, size_t ncols, int text_col)
{
	sqlite3_value *vals[EVENT_MAX_COLS + 1];

	for (size_t i = 0; i <= ncols; i++)
		vals[i] = sqlite3_column_value(st, (int)i + 1);
	return fill_row(vals, r, ncols, text_col);
}

/* ROW_FUNCTION: argv[0] the rowid, then start and the columns, into the target row. */
void events_row_function(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct row_target *t = sqlite3_user_data(ctx);

	if (t->r && argc >= 2 && (size_t)argc == t->ncols + 2) {
		t->r->seq = sqlite3_value_int64(argv[0]);
		t->odd = fill_row(argv + 1, t->r, t->ncols, t->text_col);
		t->called = 1;
	}
	sqlite3_result_null(ctx);
}

/*
 * sqlite3_step() of a scan in storage order (column 0 the rowid), its row into r (seq: the rowid);
 * *odd as fill_row() says. packed: the statement is made with wrap = ROW_FUNCTION, whose call hands
 * the row over; SQLITE_ROW without the function having run (it cannot happen) is an error.
 */
int events_step_row(struct row_target *t, sqlite3_stmt *st, int packed, struct event_row *r, size_t ncols,
		    int text_col, int *odd)
{
	int rc;

	if (!packed) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*odd = events_read_row(st, r, ncols, text_col);
			r->seq = sqlite3_column_int64(st, 0);
		}
		return rc;
	}
	*t = (struct row_target){ .r = r, .ncols = ncols, .text_col = text_col };
	rc = sqlite3_step(st);
	t->r = NULL;
	*odd = t->odd;
	return rc == SQLITE_ROW && !t->called ? SQLITE_ERROR : rc;
}

void event_summary_merge(struct event_summary *into, const struct event_summary *m)
{
	into->rows += m->rows;
	if (m->has_first && (!into->has_first || m->first < into->first)) {
		into->first = m->first;
		into->has_first = 1;
	}
	if (m->has_last && (!into->has_last || m->last > into->last)) {
		into->last = m->last;
		into->has_last = 1;
	}
}

/* Count a row into a summary: its start (unless NULL) and, with has_end, v[0] as its end. */
void events_summary_add(struct event_summary *m, const struct event_row *r, int start_null, int has_end)
{
	m->rows++;
	if (!start_null && (!m->has_first || r->start < m->first)) {
		m->first = r->start;
		m->has_first = 1;
	}
	if (has_end && !event_null(r, 0) && (!m->has_last || r->v[0] > m->last)) {
		m->last = r->v[0];
		m->has_last = 1;
	}
}
