/*
 * Event streams (see events.h): each file's raw table read in storage order through a bounded
 * reorder buffer per run, the runs and files merged, instead of SQLite sorting the view.
 *
 * Finding the runs is a scan of rowid, start and the key columns that replays what the reader's
 * buffer will do: while the rows come in order it only remembers the last EVENT_REORDER + 1 of them
 * (the buffer would hand each one on unchanged); at the first row out of order it turns that window
 * into a heap and goes on as the buffer would, and a row that sorts before one the buffer has already
 * handed on cannot be repaired: a new run begins there. So the reader never meets a row it cannot
 * place, and a run read in order (the common case) costs it no heap at all.
 *
 * The same scan applies the view's time filter in C (a sixth of a scan's cost in SQL) and counts
 * the table's rows, first start and last end, which the report and stats would otherwise each get
 * from an aggregate over the whole trace. Where a value is not a plain integer (REAL or TEXT in a
 * damaged or hand-made file), C cannot compare it as SQL would: the scan starts again with the
 * view's SQL filter, and every read of that table keeps it.
 *
 * With event_streams_keep(), the scan reads the kept columns too and writes each row of the view to
 * a temporary file as it goes (struct recording), marking where each run begins; the file is then
 * mapped, and a stream with those columns reads each run from the mapping instead of a cursor (about
 * 15 bytes a kernel and 10 an API call, against the trace's ~100: decoding them costs less than
 * SQLite's stepping). Readers give back the pages behind them, so the copies do not count in the
 * resident size.
 *
 * The first scans of the kept tables are independent, and they are most of a command's work: the
 * first time a table's runs are needed, every kept table not yet scanned is scanned in one batch,
 * on as many threads as the process may run on (struct scan_batch), each with its own connection
 * to the trace. The calling thread takes part on the trace's own connection, so that with one CPU
 * (or one table) nothing changes but the order.
 */
#define _GNU_SOURCE	/* sched_getaffinity */
#include "loader/events.h"
#include "loader/trace-private.h"

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
static int row_before(const struct event_row *a, const struct event_row *b, size_t nkey)
{
	int c = event_compare(a, b, nkey);

	return c ? c < 0 : a->seq < b->seq;
}

/* Columns a stream can read in order: at most EVENT_MAX_COLS, and a key of none or of the GPU
 * operations' end, deviceId and streamId, first. */
static int columns_supported(const char *const *cols, size_t ncols, size_t nkey)
{
	return ncols <= EVENT_MAX_COLS && (nkey == 0 || nkey == 3) && nkey <= ncols &&
	       (!nkey || (!strcmp(cols[0], "end") && !strcmp(cols[1], "deviceId") && !strcmp(cols[2], "streamId")));
}

static void heap_push(struct event_row **heap, size_t *n, struct event_row *r, size_t nkey)
{
	size_t i = (*n)++;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!row_before(r, heap[parent], nkey))
			break;
		heap[i] = heap[parent];
		i = parent;
	}
	heap[i] = r;
}

static struct event_row *heap_pop(struct event_row **heap, size_t *n, size_t nkey)
{
	struct event_row *top = heap[0], *last = heap[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && row_before(heap[c + 1], heap[c], nkey))
			c++;
		if (!row_before(heap[c], last, nkey))
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
static int read_row(sqlite3_stmt *st, struct event_row *r, size_t ncols, int text_col)
{
	sqlite3_value *vals[EVENT_MAX_COLS + 1];

	for (size_t i = 0; i <= ncols; i++)
		vals[i] = sqlite3_column_value(st, (int)i + 1);
	return fill_row(vals, r, ncols, text_col);
}

/* ROW_FUNCTION: argv[0] the rowid, then start and the columns, into the target row. */
static void row_function(sqlite3_context *ctx, int argc, sqlite3_value **argv)
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
static int step_row(struct row_target *t, sqlite3_stmt *st, int packed, struct event_row *r, size_t ncols,
		    int text_col, int *odd)
{
	int rc;

	if (!packed) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*odd = read_row(st, r, ncols, text_col);
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

int event_span_widen(struct trace *trace, const char *view, int64_t *start, int64_t *end, char *err,
		     size_t errlen)
{
	struct event_summary all = { 0 };

	for (size_t t = 0; t < trace_count(trace); t++) {
		struct event_summary m;
		int ret = event_summary_get(trace, view, t, &m, err, errlen);

		if (ret < 0)
			return ret;
		event_summary_merge(&all, &m);
	}
	if (all.has_first && all.has_last) {
		if (all.first < *start)
			*start = all.first;
		if (all.last > *end)
			*end = all.last;
	}
	return 0;
}

/* Count a row into a summary: its start (unless NULL) and, with has_end, v[0] as its end. */
static void summary_add(struct event_summary *m, const struct event_row *r, int start_null, int has_end)
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

/* ---- a table's copy (event_streams_keep) ---- */

#define SPILL_BUF (256 * 1024)

static uint64_t zigzag(uint64_t diff)
{
	return (diff << 1) ^ (uint64_t)((int64_t)diff >> 63);
}

static uint64_t unzigzag(uint64_t u)
{
	return (u >> 1) ^ (0 - (u & 1));
}

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* A varint from p (before end): 0 when it runs past end or is longer than 10 bytes. */
static const unsigned char *get_varint(const unsigned char *p, const unsigned char *end, uint64_t *v)
{
	uint64_t x = 0;

	for (int shift = 0; p < end && shift < 70; shift += 7) {
		x |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80)) {
			*v = x;
			return p;
		}
	}
	return NULL;
}

/* Register ROW_FUNCTION on db, writing into target: 1, or 0 when it cannot be (scans then read
 * their columns one by one). */
static int register_row_function(sqlite3 *db, struct row_target *target)
{
	return sqlite3_create_function(db, ROW_FUNCTION, -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, target, row_function,
				       NULL, NULL) == SQLITE_OK;
}

static void event_cache_free(void *data);

/* The trace's event cache, NULL until cache_of() made it. */
static struct event_cache *cache_peek(struct trace *trace)
{
	return trace_cache(trace, TRACE_CACHE_EVENTS)->data;
}

static struct event_cache *cache_of(struct trace *trace)
{
	struct trace_cache *slot = trace_cache(trace, TRACE_CACHE_EVENTS);

	if (!slot->data) {
		struct event_cache *cache = xcalloc(1, sizeof(*cache));

		cache->packed = register_row_function(trace_db(trace), &cache->target);
		slot->data = cache;
		slot->free = event_cache_free;
	}
	return slot->data;
}

/* The index of column name in c, or c->ncols. */
static size_t column_index(const struct event_columns *c, const char *name)
{
	size_t k = 0;

	while (k < c->ncols && strcmp(c->cols[k], name))
		k++;
	return k;
}

/*
 * Merge set into a kept set of the same view and keys (two commands' streams over one table: the
 * export's and the rules' walk), so that one copy holds both and the table is still read once: the
 * union of the columns, within EVENT_MAX_COLS, with at most one text column. Returns 1 when merged.
 */
static int keep_merge(struct event_cache *cache, const struct event_columns *set)
{
	for (size_t i = 0; i < cache->nkeep; i++) {
		struct event_columns *c = &cache->keep[i];
		const char *text = set->text_col >= 0 ? set->cols[set->text_col] : NULL;
		size_t add = 0;

		if (strcmp(c->view, set->view) || c->nkey != set->nkey)
			continue;
		if (text && c->text_col >= 0 && strcmp(c->cols[c->text_col], text))
			return 0;
		for (size_t k = 0; k < set->ncols; k++)
			add += column_index(c, set->cols[k]) == c->ncols;
		if (c->ncols + add > EVENT_MAX_COLS)
			return 0;
		c->cols = xrealloc((void *)c->cols, (c->ncols + add) * sizeof(*c->cols));
		for (size_t k = 0; k < set->ncols; k++)
			if (column_index(c, set->cols[k]) == c->ncols)
				((char **)c->cols)[c->ncols++] = xstrdup(set->cols[k]);
		if (text)
			c->text_col = (int)column_index(c, text);
		return 1;
	}
	return 0;
}

void event_streams_keep(struct trace *trace, const struct event_columns *sets, size_t n)
{
	struct event_cache *cache = cache_of(trace);

	for (size_t i = 0; i < n; i++) {
		struct event_columns *c;

		/* the scan reads end first, then the keys: no copy for other columns */
		if (!columns_supported(sets[i].cols, sets[i].ncols, sets[i].nkey) || !sets[i].ncols ||
		    strcmp(sets[i].cols[0], "end"))
			continue;
		if (keep_merge(cache, &sets[i]))
			continue;
		cache->keep = xrealloc(cache->keep, (cache->nkeep + 1) * sizeof(*cache->keep));
		c = &cache->keep[cache->nkeep++];
		*c = sets[i];
		c->view = xstrdup(sets[i].view);
		c->cols = xcalloc(c->ncols, sizeof(*c->cols));
		for (size_t k = 0; k < c->ncols; k++)
			((char **)c->cols)[k] = xstrdup(sets[i].cols[k]);
	}
}

static void recording_free(struct recording *rec)
{
	if (!rec)
		return;
	if (rec->map)
		munmap((void *)rec->map, (size_t)rec->size);
	close(rec->fd);
	free(rec);
}

/* A new copy in an unlinked file under $TMPDIR; NULL (no copy) when none can be made. */
static struct recording *recording_new(void)
{
	const char *dir = getenv("TMPDIR");
	char *path = xasprintf("%s/gpt-trace-copy-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	struct recording *rec;

	if (fd >= 0)
		unlink(path);
	free(path);
	if (fd < 0)
		return NULL;
	rec = xcalloc(1, sizeof(*rec));
	rec->fd = fd;
	return rec;
}

static struct spill *spill_new(struct recording *rec)
{
	struct spill *sp = xcalloc(1, sizeof(*sp));

	sp->rec = rec;
	sp->cap = SPILL_BUF;
	sp->buf = xmalloc(sp->cap);
	return sp;
}

static void spill_free(struct spill *sp)
{
	if (!sp)
		return;
	free(sp->buf);
	free(sp);
}

/* Write out the buffer: 0, or -1 when the file cannot take it (a full disk: nothing is kept). */
static int spill_flush(struct spill *w)
{
	size_t done = 0;

	while (done < w->len) {
		ssize_t n = pwrite(w->rec->fd, w->buf + done, w->len - done, (off_t)(w->rec->size + (int64_t)done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	w->rec->size += (int64_t)w->len;
	w->len = 0;
	return 0;
}

/* Where the next row written will begin; from there, no differences to the rows before it. */
static int64_t spill_mark(struct spill *w)
{
	memset(&w->prev, 0, sizeof(w->prev));
	return w->rec->size + (int64_t)w->len;
}

/* Append one row: 0, or -1 when it cannot be written. */
static int spill_put(struct spill *w, const struct event_row *r, size_t ncols, int text_col)
{
	size_t textlen = text_col >= 0 && r->text ? strlen(r->text) : 0;
	size_t need = 10 * (5 + ncols) + textlen;
	struct event_row *prev = &w->prev;
	unsigned char *p;

	if (w->cap - w->len < need) {
		if (spill_flush(w) < 0)
			return -1;
		if (w->cap < need) {
			w->cap = need;
			w->buf = xrealloc(w->buf, w->cap);
		}
	}
	p = w->buf + w->len;
	p = put_varint(p, zigzag((uint64_t)r->start - (uint64_t)prev->start));
	p = put_varint(p, zigzag((uint64_t)r->seq - (uint64_t)prev->seq));
	p = put_varint(p, r->null);
	for (size_t i = 0; i < ncols; i++) {
		if (event_null(r, i))
			continue;
		if ((int)i == text_col) {
			/* 0: a text the reader could not copy (NULL though the column is not). */
			p = put_varint(p, r->text ? textlen + 1 : 0);
			memcpy(p, r->text ? r->text : "", textlen);
			p += textlen;
			continue;
		}
		p = put_varint(p, zigzag((uint64_t)r->v[i] - (uint64_t)prev->v[i]));
		prev->v[i] = r->v[i];
	}
	prev->start = r->start;
	prev->seq = r->seq;
	w->len = (size_t)(p - w->buf);
	return 0;
}

/* Map a copy written in full for reading: 0, or -1 (then it is no copy). */
static int recording_map(struct recording *rec)
{
	void *map;

	if (!rec->size)
		return 0;
	map = mmap(NULL, (size_t)rec->size, PROT_READ, MAP_PRIVATE, rec->fd, 0);
	if (map == MAP_FAILED)
		return -1;
	rec->map = map;
	return 0;
}

/* The next row of a run from the copy into r, with the set's columns: 1, 0 at the run's end, or
 * -1 (a damaged copy). */
static int copy_get(struct copy_reader *rd, struct event_row *r)
{
	const unsigned char *p = rd->p, *end = rd->end;
	size_t ncols = rd->set->ncols;
	int text_col = rd->set->text_col;
	uint64_t u;

	if (p == end)
		return 0;
	if (!(p = get_varint(p, end, &u)))
		return -1;
	r->start = rd->start = (int64_t)((uint64_t)rd->start + unzigzag(u));
	if (!(p = get_varint(p, end, &u)))
		return -1;
	r->seq = rd->seq = (int64_t)((uint64_t)rd->seq + unzigzag(u));
	if (!(p = get_varint(p, end, &u)))
		return -1;
	r->null = (uint32_t)u;
	for (size_t i = 0; i < ncols; i++) {
		if (event_null(r, i)) {
			r->v[i] = 0;
			if ((int)i == text_col) {
				free(r->text);
				r->text = NULL;
			}
			continue;
		}
		if (!(p = get_varint(p, end, &u)))
			return -1;
		if ((int)i == text_col) {
			free(r->text);
			r->text = NULL;
			r->v[i] = 0;
			if (!u)
				continue;
			if ((uint64_t)(end - p) < u - 1)
				return -1;
			r->text = xmalloc((size_t)u);
			memcpy(r->text, p, (size_t)u - 1);
			r->text[u - 1] = 0;
			p += u - 1;
			continue;
		}
		r->v[i] = rd->v[i] = (int64_t)((uint64_t)rd->v[i] + unzigzag(u));
	}
	rd->p = p;
	if (p - rd->kept >= COPY_KEEP) {
		/* Give back the pages read (the file keeps them; a reader that needs one again, as the
		 * next run's first page, reads it back in). */
		uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t from = (uintptr_t)rd->kept & ~(page - 1), to = (uintptr_t)p & ~(page - 1);

		if (to > from)
			madvise((void *)from, to - from, MADV_DONTNEED);
		rd->kept = p;
	}
	return 1;
}

/* The next row of a run from the copy into r, with the stream's columns (see copy_get). */
static int copy_next(struct copy_reader *rd, struct event_row *r)
{
	struct event_row *c = &rd->row;
	int ret;

	if (rd->same)
		return copy_get(rd, r);
	ret = copy_get(rd, c);
	if (ret <= 0)
		return ret;
	r->start = c->start;
	r->seq = c->seq;
	r->null = c->null & EVENT_START_NULL;
	for (size_t i = 0; i < rd->ncols; i++) {
		size_t j = rd->col[i];

		r->null |= (uint32_t)event_null(c, j) << i;
		r->v[i] = c->v[j];
		if ((int)j == rd->set->text_col) {
			free(r->text);
			r->text = c->text;
			c->text = NULL;
		}
	}
	return 1;
}

/* A reader of the copy of t for stream s, or NULL when s has a column the copy does not. */
static struct copy_reader *copy_reader_new(const struct event_stream *s, const struct table_runs *t)
{
	const struct event_columns *set = &cache_peek(s->trace)->keep[t->copy_set];
	struct copy_reader *rd = xcalloc(1, sizeof(*rd));

	rd->set = set;
	rd->same = s->ncols == set->ncols && s->text_col == set->text_col;
	rd->ncols = s->ncols;
	for (size_t i = 0; i < s->ncols; i++) {
		rd->col[i] = SIZE_MAX;
		for (size_t j = 0; j < set->ncols && rd->col[i] == SIZE_MAX; j++)
			if (!strcmp(s->cols[i], set->cols[j]))
				rd->col[i] = j;
		/* a column read as text in one and as an integer in the other cannot be shared */
		if (rd->col[i] == SIZE_MAX || ((int)i == s->text_col) != ((int)rd->col[i] == set->text_col)) {
			free(rd);
			return NULL;
		}
		rd->same &= rd->col[i] == i;
	}
	return rd;
}

/* ---- finding the runs ---- */

static void table_copies_free(struct table_runs *t);

static void event_cache_free(void *data)
{
	struct event_cache *cache = data;

	if (!cache)
		return;
	for (size_t i = 0; i < cache->n; i++) {
		free(cache->items[i].view);
		free(cache->items[i].runs);
		table_copies_free(&cache->items[i]);
	}
	free(cache->items);
	for (size_t i = 0; i < cache->nkeep; i++) {
		for (size_t k = 0; k < cache->keep[i].ncols; k++)
			free((char *)cache->keep[i].cols[k]);
		free((void *)cache->keep[i].cols);
		free((char *)cache->keep[i].view);
	}
	free(cache->keep);
	for (size_t i = 0; i < cache->nscoped; i++)
		free(cache->scoped[i].view);
	free(cache->scoped);
	free(cache);
}

static void table_copies_free(struct table_runs *t)
{
	for (size_t i = 0; i < t->ncopies; i++)
		recording_free(t->copies[i]);
	free(t->copies);
	t->copies = NULL;
	t->ncopies = 0;
}

static void add_run(struct table_runs *t, int64_t first, int64_t last, int sorted, size_t copy, int64_t off)
{
	size_t unsorted = !sorted;

	for (size_t i = 0; i < t->nruns; i++)
		unsorted += !t->runs[i].sorted;
	/* a run out of order holds a reorder buffer of EVENT_REORDER rows while it is read */
	if (t->nruns == EVENT_MAX_RUNS || unsorted > EVENT_MAX_UNSORTED_RUNS) {
		t->unbounded = 1;
		return;
	}
	t->runs = xrealloc(t->runs, (t->nruns + 1) * sizeof(*t->runs));
	t->runs[t->nruns++] = (struct run_span){ first, last, sorted, copy, off };
}

static int db_error(sqlite3 *db, const char *view, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot read %s: %s", view, sqlite3_errmsg(db));
	return -EIO;
}

static int sql_error(struct trace *trace, const char *view, char *err, size_t errlen)
{
	return db_error(trace_db(trace), view, err, errlen);
}

/* ---- a batch of first scans, on several threads ---- */

#define SCAN_MAX_THREADS 8
#define SCAN_TICK 0x10000		/* rows a scan reads between two reports to its batch */
#define SCAN_MIN_PART (256 << 10)	/* rowids: a table is cut in parts no smaller */
#define SCAN_PARTS_PER_THREAD 16
#define SCAN_THREAD_ROWS SCAN_MIN_PART	/* rowids: a smaller job does not get a thread of its own */

/*
 * A table's first scan, or a part of it: with several threads, a big table is cut into ranges of
 * rowids, scanned apart (each its own runs, summary and copy) and put together in rowid order
 * (a run that crosses a cut becomes two, which the merge of runs orders as any other two), so that
 * the threads finish together: a trace's kernels cost about twice its API calls a row.
 */
struct scan_job {
	struct table_runs *t;		/* the table it is (part of) */
	int64_t range[2];		/* its rowids */
	int whole;			/* the whole table: no range */
	int64_t estimate;		/* its rowid span: the biggest go first, and the progress total */
	struct table_runs part;		/* what it found, as if the part were the table */
	struct recording *copy;		/* its copy, written in full; NULL: none */
	int ret;
	char err[256];
};

struct scan_batch {
	struct trace *trace;
	struct scan_job *jobs;		/* by table, each table's parts in rowid order */
	struct scan_job **order;	/* the jobs, biggest first */
	size_t njobs, next;		/* next: the first of order that nobody has taken */
	size_t running;			/* threads other than the caller's still at work */
	pthread_mutex_t lock;
	pthread_cond_t idle;		/* signalled as each of them ends */
	_Atomic int64_t rows;		/* read so far by all, in steps of SCAN_TICK */
	struct progress progress;	/* shown by the calling thread */
	int show;
	char label[96];
};

/* A scan has read SCAN_TICK more rows (or its last few, n): count them; on the calling thread,
 * show them. */
static void scan_tick(struct scan_batch *b, const struct scanner *sc, int64_t n)
{
	int64_t rows = atomic_fetch_add(&b->rows, n) + n;

	if (sc->main && b->show) {
		b->progress.done = rows;
		progress_update(&b->progress);
	}
}

/*
 * Scan rowid, start and the keys of one file's table, replaying the reorder buffer (see the top of
 * the file); range: NULL, or the first and last rowid of the part to scan. A table that is not a
 * table (no rowid) is marked unbounded: ORDER BY reads it. With a copy, the scan reads all of cols
 * (text_col as text) and writes each row of the view to the copy, each run from a mark
 * (run_span.off).
 */
static int find_runs(struct scanner *sc, struct scan_batch *b, struct trace *trace, struct table_runs *t,
		     const int64_t *range, const char *const *cols, size_t ncols, int raw, int text_col,
		     struct spill *copy, char *err, size_t errlen)
{
	/* The reader holds EVENT_REORDER + 1 rows and hands on the smallest: the buffer below holds
	 * EVENT_REORDER and hands one on as the next arrives, which is the same. */
	const size_t window = EVENT_REORDER;
	struct event_row *ring = xcalloc(window, sizeof(*ring)), **heap = NULL, prev, emitted;
	size_t nring = 0, head = 0, nheap = 0;
	int have_prev = 0, have_emitted = 0, sorted = 1, absent, rc, ret = 0, odd = 0;
	int64_t first = 0, last = 0, shift = 0, off = 0;
	int filter = raw && trace_event_filter(trace, t->file, t->view, &shift);
	struct event_row full = { 0 }, row = { 0 }, *r = copy ? &full : &row;
	/* the buffer compares sort keys only, and copies no more of a row */
	const size_t keylen = offsetof(struct event_row, v) + t->nkey * sizeof(int64_t);
	sqlite3_stmt *st = NULL;
	const char *wrap = sc->packed ? ROW_FUNCTION : NULL;
	enum trace_event_sql mode = range ? (raw ? TRACE_SQL_RANGE_RAW : TRACE_SQL_RANGE)
					  : (raw ? TRACE_SQL_SCAN_RAW : TRACE_SQL_SCAN);
	char *sql = trace_event_sql(trace, t->file, t->view, cols, ncols, mode, 0, wrap, &absent);
	int nonint;
	int64_t read = 0;

	memset(&prev, 0, sizeof(prev));
	memset(&emitted, 0, sizeof(emitted));
	if (!sql) {
		free(ring);
		if (absent)
			return 0;
		snprintf(err, errlen, "cannot read %s: out of memory", t->view);
		return -ENOMEM;
	}
	rc = sqlite3_prepare_v2(sc->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		/* Read through ORDER BY instead: the same rows, slower. Said where SQL is being watched,
		 * so that a scan that should work and does not is seen. */
		if (getenv("GPT_TRACE_SQL_PROFILE"))
			fprintf(stderr, "gpt-trace: sql: the scan of %s cannot be prepared (%s); reading it sorted: %.300s\n",
				t->view, sqlite3_errmsg(sc->db), sql);
		sqlite3_free(sql);
		t->unbounded = 1;
		free(ring);
		return 0;
	}
	sqlite3_free(sql);
	if (range) {
		sqlite3_bind_int64(st, 1, range[0]);
		sqlite3_bind_int64(st, 2, range[1]);
	}
	while ((rc = step_row(sc->target, st, wrap != NULL, r, ncols, copy ? text_col : -1, &nonint)) == SQLITE_ROW) {
		if ((++read & (SCAN_TICK - 1)) == 0)
			scan_tick(b, sc, SCAN_TICK);
		r->trace_id = 0;
		if (filter) {
			/* Only integers compare in C as in SQL: anything else, and SQL filters. */
			if (nonint) {
				odd = 1;
				break;
			}
			if (r->start < shift || r->start > TRACE_TIME_MAX ||
			    (!event_null(r, 0) && (r->v[0] < r->start || r->v[0] > TRACE_TIME_MAX))) {
				t->filtered = 1;
				continue;
			}
		}
		t->rows++;
		summary_add(&t->summary, r, (r->null & EVENT_START_NULL) != 0, ncols > 0);
		if (t->nruns == 0 && !have_prev) {
			first = r->seq;
			off = copy ? spill_mark(copy) : 0;
		}
		if (have_emitted && row_before(r, &emitted, t->nkey)) {
			/* The buffer has handed on a later row: this one starts a new run. */
			add_run(t, first, last, sorted, 0, off);
			first = r->seq;
			off = copy ? spill_mark(copy) : 0;
			nring = head = nheap = 0;
			have_prev = have_emitted = 0;
			sorted = 1;
		} else if (sorted && have_prev && row_before(r, &prev, t->nkey)) {
			/* Out of order but repairable: from here on, the buffer as a heap. */
			sorted = 0;
			if (!heap)
				heap = xmalloc((window + 1) * sizeof(*heap));
			nheap = 0;
			for (size_t i = 0; i < nring; i++)
				heap_push(heap, &nheap, &ring[(head + i) % window], t->nkey);
		}
		if (sorted) {
			/* In order: the row leaving the window is the one the buffer hands on. */
			if (nring == window) {
				memcpy(&emitted, &ring[head], keylen);
				have_emitted = 1;
				memcpy(&ring[head], r, keylen);
				head = (head + 1) % window;
			} else {
				memcpy(&ring[(head + nring++) % window], r, keylen);
			}
		} else {
			struct event_row *slot;

			if (nheap == window) {
				slot = heap_pop(heap, &nheap, t->nkey);
				memcpy(&emitted, slot, keylen);
				have_emitted = 1;
			} else {
				slot = &ring[nring++ % window];
			}
			memcpy(slot, r, keylen);
			heap_push(heap, &nheap, slot, t->nkey);
		}
		if (copy && !copy->failed)
			copy->failed = spill_put(copy, r, ncols, text_col) < 0;
		memcpy(&prev, r, keylen);
		have_prev = 1;
		last = r->seq;
		if (t->unbounded)
			break;
	}
	if (odd) {
		rc = SQLITE_DONE;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		ret = db_error(sc->db, t->view, err, errlen);
	} else if (have_prev && !t->unbounded) {
		add_run(t, first, last, sorted, 0, off);
	}
	scan_tick(b, sc, read & (SCAN_TICK - 1));
	sqlite3_finalize(st);
	free(heap);
	free(ring);
	free(full.text);
	if (odd) {
		/* Start again with the view's own filter, which the reads will then also carry; the rows
		 * read so far are read again, so the progress line counts them once. */
		atomic_fetch_sub(&b->rows, read);
		free(t->runs);
		t->runs = NULL;
		t->nruns = 0;
		t->rows = 0;
		t->unbounded = 0;
		memset(&t->summary, 0, sizeof(t->summary));
		t->filtered = 1;
		if (copy) {
			copy->len = 0;
			copy->rec->size = 0;
		}
		return find_runs(sc, b, trace, t, range, cols, ncols, 0, text_col, copy, err, errlen);
	}
	return ret;
}

/*
 * Scan one job's table or part (table_runs.view, .file, .nkey) on sc: with the columns of the kept
 * set of its view and keys, writing a copy, when there is one; else rowid, start and the keys (and
 * end, for the table's summary).
 */
static void scan_job_run(struct scan_batch *b, struct scanner *sc, struct scan_job *job)
{
	static const char *const keys[] = { "end", "deviceId", "streamId" };
	struct event_cache *cache = cache_peek(b->trace);
	struct table_runs *t = &job->part;
	const char *const *cols = keys;
	size_t ncols = t->nkey ? t->nkey : 1;
	struct spill *copy = NULL;
	int text_col = -1;

	for (size_t i = 0; i < cache->nkeep && !copy; i++) {
		const struct event_columns *c = &cache->keep[i];
		struct recording *rec;

		if (c->nkey != t->nkey || strcmp(c->view, t->view) || !(rec = recording_new()))
			continue;
		/* the set's columns begin with end, and with the keys when there are keys */
		copy = spill_new(rec);
		cols = c->cols;
		ncols = c->ncols;
		text_col = c->text_col;
		t->copy_set = i;
	}
	job->ret = find_runs(sc, b, b->trace, t, job->whole ? NULL : job->range, cols, ncols, 1, text_col, copy,
			     job->err, sizeof(job->err));
	if (copy) {
		/* A copy that cannot be written in full (a full disk) is no copy: streams read the table. */
		if (job->ret >= 0 && !t->unbounded && !copy->failed && spill_flush(copy) == 0)
			job->copy = copy->rec;
		else
			recording_free(copy->rec);
		spill_free(copy);
	}
}

/* Take jobs until none is left. */
static void scan_jobs(struct scan_batch *b, struct scanner *sc)
{
	for (;;) {
		struct scan_job *job;

		pthread_mutex_lock(&b->lock);
		job = b->next < b->njobs ? b->order[b->next++] : NULL;
		pthread_mutex_unlock(&b->lock);
		if (!job)
			return;
		scan_job_run(b, sc, job);
	}
}

/* Another thread of the batch, on its own connection (none: it leaves the jobs to the others). */
static void *scan_thread(void *arg)
{
	struct scan_batch *b = arg;
	struct row_target target = { 0 };
	struct scanner sc = { .db = trace_db_reader(b->trace), .target = &target };

	if (sc.db) {
		sc.packed = register_row_function(sc.db, &target);
		scan_jobs(b, &sc);
		sqlite3_close(sc.db);
	}
	pthread_mutex_lock(&b->lock);
	b->running--;
	pthread_cond_signal(&b->idle);
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static size_t share_ways = 1;		/* event_threads_share() */

void event_threads_share(size_t ways)
{
	share_ways = ways ? ways : 1;
}

/* The CPUs this process may run on (its share of them), at most SCAN_MAX_THREADS. */
size_t event_threads(void)
{
	cpu_set_t set;
	long n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);

	n /= (long)share_ways;
	return n < 1 ? 1 : n > SCAN_MAX_THREADS ? SCAN_MAX_THREADS : (size_t)n;
}

static int by_estimate(const void *a, const void *b)
{
	const struct scan_job *x = *(struct scan_job *const *)a, *y = *(struct scan_job *const *)b;

	return x->estimate != y->estimate ? (x->estimate > y->estimate ? -1 : 1) : 0;
}

/* "reading kernels, api_calls": the batch's tables with rows, biggest first (the first table,
 * when none has). */
static void batch_label(struct scan_batch *b)
{
	size_t len = (size_t)snprintf(b->label, sizeof(b->label), "reading"), named = 0;

	for (size_t i = 0; i < b->njobs && len < sizeof(b->label); i++) {
		const struct scan_job *job = b->order[i];
		int seen = 0;

		for (size_t k = 0; k < i; k++)
			seen |= !strcmp(b->order[k]->t->view, job->t->view);
		if (seen || !job->estimate)
			continue;
		len += (size_t)snprintf(b->label + len, sizeof(b->label) - len, "%s %s", named++ ? "," : "",
					job->t->view);
	}
	if (!named)
		snprintf(b->label, sizeof(b->label), "reading %s", b->jobs[0].t->view);
}

/* Run the batch's jobs on nthreads threads, the caller's one of them. */
static void scan_batch_run(struct scan_batch *b, size_t nthreads)
{
	struct event_cache *cache = cache_of(b->trace);
	struct scanner sc = { .db = trace_db(b->trace), .target = &cache->target, .packed = cache->packed,
			      .main = 1 };
	pthread_t threads[SCAN_MAX_THREADS];
	size_t started = 0;
	int64_t total = 0;

	b->order = xcalloc(b->njobs, sizeof(*b->order));
	for (size_t i = 0; i < b->njobs; i++) {
		b->order[i] = &b->jobs[i];
		total += b->jobs[i].estimate;
	}
	qsort(b->order, b->njobs, sizeof(*b->order), by_estimate);
	batch_label(b);
	b->show = progress_visible();
	if (b->show)
		progress_begin(&b->progress, b->label, "rows", total);
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->idle, NULL);
	if (nthreads > b->njobs)
		nthreads = b->njobs;
	/* Only big jobs are worth a thread: its connection and start cost milliseconds (tens of them
	 * where system calls are slow, as under gVisor). */
	while (nthreads > 1 && b->order[nthreads - 1]->estimate < SCAN_THREAD_ROWS)
		nthreads--;
	for (size_t i = 0; i + 1 < nthreads; i++) {
		pthread_mutex_lock(&b->lock);
		b->running++;
		pthread_mutex_unlock(&b->lock);
		if (pthread_create(&threads[started], NULL, scan_thread, b) != 0) {
			pthread_mutex_lock(&b->lock);
			b->running--;
			pthread_mutex_unlock(&b->lock);
			break;
		}
		started++;
	}
	scan_jobs(b, &sc);
	/* Wait for the others, keeping the progress line going. */
	pthread_mutex_lock(&b->lock);
	while (b->running) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 200 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&b->idle, &b->lock, &until);
		if (b->show) {
			b->progress.done = atomic_load(&b->rows);
			progress_update(&b->progress);
		}
	}
	pthread_mutex_unlock(&b->lock);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_cond_destroy(&b->idle);
	pthread_mutex_destroy(&b->lock);
	if (b->show)
		progress_end(&b->progress);
	free(b->order);
}

/*
 * Put a table together from its parts (jobs, in rowid order): rows, summary and runs, each run
 * pointing into its part's copy; a table that now has too many runs is unbounded. The table has
 * copies only when every part has one. Returns 0, or the first part's error (err set).
 */
static int join_parts(struct table_runs *t, struct scan_job *jobs, size_t n, char *err, size_t errlen)
{
	int copies = 1;

	for (size_t i = 0; i < n; i++) {
		if (jobs[i].ret < 0) {
			snprintf(err, errlen, "%s", jobs[i].err);
			return jobs[i].ret;
		}
		copies &= jobs[i].copy != NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const struct table_runs *p = &jobs[i].part;

		t->rows += p->rows;
		t->filtered |= p->filtered;
		t->unbounded |= p->unbounded;
		t->copy_set = p->copy_set;
		event_summary_merge(&t->summary, &p->summary);
		for (size_t r = 0; r < p->nruns && !t->unbounded; r++)
			add_run(t, p->runs[r].first, p->runs[r].last, p->runs[r].sorted, t->ncopies, p->runs[r].off);
		if (copies) {
			t->copies = xrealloc(t->copies, (t->ncopies + 1) * sizeof(*t->copies));
			t->copies[t->ncopies++] = jobs[i].copy;
			jobs[i].copy = NULL;
		}
	}
	for (size_t i = 0; i < t->ncopies && !t->unbounded; i++)
		if (recording_map(t->copies[i]) < 0)
			copies = 0;
	if (t->unbounded || !copies)
		table_copies_free(t);
	return 0;
}

static struct table_runs *find_table(struct event_cache *cache, size_t file, const char *view, size_t nkey)
{
	for (size_t i = 0; i < cache->n; i++) {
		struct table_runs *t = &cache->items[i];

		if (t->file == file && t->nkey == nkey && !strcmp(t->view, view))
			return t;
	}
	return NULL;
}

/* Add the jobs of table t, whose rowids are first to last (a table with no rows: one job); with
 * more than one thread, a big table is cut in parts of about `part` rowids. */
static void add_jobs(struct scan_batch *b, struct table_runs *t, int64_t first, int64_t last, int64_t part)
{
	int64_t span = last >= first ? last - first + 1 : 0;
	int64_t n = part > 0 && span >= 2 * part ? span / part : 1;	/* parts of at least `part` */

	b->jobs = xrealloc(b->jobs, (b->njobs + (size_t)n) * sizeof(*b->jobs));
	for (int64_t i = 0; i < n; i++) {
		struct scan_job *job = &b->jobs[b->njobs++];
		int64_t from = first + span / n * i, to = i + 1 == n ? last : first + span / n * (i + 1) - 1;

		memset(job, 0, sizeof(*job));
		job->t = t;
		job->whole = n == 1;
		job->range[0] = from;
		job->range[1] = to;
		job->estimate = n == 1 ? span : to - from + 1;
		job->part.file = t->file;
		job->part.nkey = t->nkey;
		job->part.view = t->view;
	}
}

/*
 * The runs of one file's table for a sort key of nkey columns: 0 (start alone) or 3 (start, end,
 * deviceId, streamId: the GPU operations). The scan also reads end, for the table's summary. The
 * first call that needs a scan also scans, in the same batch, every kept table (in every file) that
 * has not been scanned and that the scope lets streams read in storage order.
 */
static struct table_runs *table_runs_get(struct trace *trace, size_t file, const char *view, size_t nkey,
					 char *err, size_t errlen, int *ret)
{
	struct event_cache *cache = cache_of(trace);
	struct scan_batch b = { .trace = trace };
	struct table_runs *t = find_table(cache, file, view, nkey), *mine = NULL;
	size_t n = cache->n, ntables, nthreads = event_threads();
	int64_t (*rowids)[2], total = 0, start, end, part;

	if (t)
		return t;
	/* the tables to scan: this one, and the kept ones not scanned yet */
	cache->items = xrealloc(cache->items, (cache->n + 1 + cache->nkeep * trace_count(trace)) *
							   sizeof(*cache->items));
	for (size_t k = 0; k <= cache->nkeep; k++) {
		for (size_t f = 0; f < trace_count(trace); f++) {
			const char *v = k < cache->nkeep ? cache->keep[k].view : view;
			size_t keys = k < cache->nkeep ? cache->keep[k].nkey : nkey;

			if (k == cache->nkeep && f != file)
				continue;
			if (find_table(cache, f, v, keys) || (k < cache->nkeep && trace_scope_window(trace, v, &start, &end)))
				continue;
			t = &cache->items[cache->n++];
			memset(t, 0, sizeof(*t));
			t->file = f;
			t->nkey = keys;
			t->view = xstrdup(v);
		}
	}
	ntables = cache->n - n;
	rowids = xcalloc(ntables, sizeof(*rowids));
	for (size_t i = 0; i < ntables; i++) {
		t = &cache->items[n + i];
		if (trace_event_rowid_range(trace, t->file, t->view, &rowids[i][0], &rowids[i][1]))
			total += rowids[i][1] - rowids[i][0] + 1;
		else
			rowids[i][0] = 1, rowids[i][1] = 0;
	}
	/* Parts small enough for the threads to end together (rows cost unlike amounts in different
	 * tables, and rowids may leave gaps), big enough that a part's own cost does not show. */
	part = total / (int64_t)(SCAN_PARTS_PER_THREAD * nthreads);
	if (part < SCAN_MIN_PART)
		part = SCAN_MIN_PART;
	for (size_t i = 0; i < ntables; i++)
		add_jobs(&b, &cache->items[n + i], rowids[i][0], rowids[i][1], nthreads > 1 ? part : 0);
	free(rowids);
	scan_batch_run(&b, nthreads);
	/* Keep the tables found; one that failed is forgotten (a later read scans it again and meets
	 * the same error); the caller gets its own table's. */
	*ret = 0;
	cache->n = n;
	for (size_t i = 0, j = 0; i < ntables; i++) {
		struct table_runs *it = &cache->items[n + i];
		size_t k = j, nparts;
		int is_mine = it->file == file && it->nkey == nkey && !strcmp(it->view, view), r;
		char part_err[256];

		while (k < b.njobs && b.jobs[k].t == it)
			k++;
		nparts = k - j;
		r = join_parts(it, &b.jobs[j], nparts, part_err, sizeof(part_err));
		for (size_t p = j; p < k; p++) {
			free(b.jobs[p].part.runs);
			recording_free(b.jobs[p].copy);
		}
		j = k;
		if (r < 0) {
			if (is_mine) {
				*ret = r;
				snprintf(err, errlen, "%s", part_err);
			}
			free(it->view);
			free(it->runs);
			table_copies_free(it);
			continue;
		}
		cache->items[cache->n] = *it;
		if (is_mine)
			mine = &cache->items[cache->n];
		cache->n++;
	}
	free(b.jobs);
	return mine;
}

/* ---- the stream ---- */

static void run_init(struct run *r, sqlite3_stmt *st, size_t limit)
{
	memset(r, 0, sizeof(*r));
	r->st = st;
	r->limit = limit;
	r->pool = xcalloc(limit, sizeof(*r->pool));
	r->heap = xmalloc(limit * sizeof(*r->heap));
	r->spare = xmalloc(limit * sizeof(*r->spare));
	for (size_t i = 0; i < limit; i++)
		r->spare[r->nspare++] = &r->pool[limit - 1 - i];
}

static void run_release(struct run *r)
{
	sqlite3_finalize(r->st);
	if (r->copy)
		free(r->copy->row.text);
	free(r->copy);
	for (size_t i = 0; i < r->limit; i++)
		free(r->pool[i].text);
	free(r->pool);
	free(r->heap);
	free(r->spare);
	memset(r, 0, sizeof(*r));
}

static void close_runs(struct event_stream *s)
{
	for (size_t i = 0; i < s->nruns; i++)
		run_release(&s->runs[i]);
	free(s->runs);
	s->runs = NULL;
	s->nruns = 0;
	s->norder = 0;
	s->filled = 0;
	s->last = NULL;
	s->current = NULL;
}

/* The heap of runs by their first rows: a row from one of many runs costs log(runs) comparisons. */
static int run_before(const struct event_stream *s, const struct run *a, const struct run *b)
{
	return row_before(a->heap[0], b->heap[0], s->nkey);
}

static void order_push(struct event_stream *s, struct run *r)
{
	size_t i = s->norder++;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!run_before(s, r, s->order[parent]))
			break;
		s->order[i] = s->order[parent];
		i = parent;
	}
	s->order[i] = r;
}

/* Put r at the root and sift it down to its place. */
static void order_sift_root(struct event_stream *s, struct run *r)
{
	size_t i = 0, n = s->norder;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && run_before(s, s->order[c + 1], s->order[c]))
			c++;
		if (!run_before(s, s->order[c], r))
			break;
		s->order[i] = s->order[c];
		i = c;
	}
	if (n)
		s->order[i] = r;
}

/* Keep `limit` rows in the run's heap (fewer only at its end). */
static int run_fill(struct event_stream *s, struct run *r, char *err, size_t errlen)
{
	while (!r->done && r->n < r->limit) {
		struct event_row *row = r->spare[--r->nspare];
		int odd, rc = r->copy	  ? copy_next(r->copy, row)
			      : r->by_view ? sqlite3_step(r->st)
					   : step_row(&cache_peek(s->trace)->target, r->st, r->packed, row, s->ncols,
						      s->text_col, &odd);

		if (r->copy ? rc <= 0 : rc != SQLITE_ROW) {
			r->spare[r->nspare++] = row;
			r->done = 1;
			if (r->copy && rc < 0) {
				snprintf(err, errlen, "cannot read %s from its temporary copy: damaged", s->view);
				return -EIO;
			}
			if (!r->copy && rc != SQLITE_DONE)
				return sql_error(s->trace, s->view, err, errlen);
			break;
		}
		if (r->copy) {
			row->trace_id = (int64_t)s->file;
		} else if (r->by_view) {
			row->trace_id = sqlite3_column_int64(r->st, 0);
			row->seq = r->seq++;
			read_row(r->st, row, s->ncols, s->text_col);
		} else {
			row->trace_id = (int64_t)s->file;
		}
		if ((s->scope_start && row->start < s->scope_start) || (s->scope_end && row->start >= s->scope_end)) {
			r->spare[r->nspare++] = row;
			continue;
		}
		heap_push(r->heap, &r->n, row, s->nkey);
	}
	return 0;
}

static int prepare(struct event_stream *s, const char *sql, sqlite3_stmt **st, char *err, size_t errlen)
{
	if (!sql) {
		snprintf(err, errlen, "cannot read %s: out of memory", s->view);
		return -ENOMEM;
	}
	if (sqlite3_prepare_v2(trace_db(s->trace), sql, -1, st, NULL) != SQLITE_OK)
		return sql_error(s->trace, s->view, err, errlen);
	return 0;
}

static struct run *add_stream_run(struct event_stream *s, sqlite3_stmt *st, size_t limit)
{
	s->runs = xrealloc(s->runs, (s->nruns + 1) * sizeof(*s->runs));
	run_init(&s->runs[s->nruns], st, limit);
	return &s->runs[s->nruns++];
}

/* Open the cursors of file s->file: one per run, or one sorted query. */
static int open_file_runs(struct event_stream *s, char *err, size_t errlen)
{
	const char *const *cols = (const char *const *)s->cols;
	const struct table_runs *t = &s->tables[s->file];
	sqlite3_stmt *st = NULL;
	char *sql;
	int ret = 0, absent;

	if (!t->rows && !t->unbounded)
		return 0;
	if (t->ncopies) {
		struct copy_reader *first = copy_reader_new(s, t);

		for (size_t i = 0; first && i < t->nruns; i++) {
			struct run *r = add_stream_run(s, NULL, t->runs[i].sorted ? 1 : EVENT_REORDER + 1);
			const struct recording *copy = t->copies[t->runs[i].copy];
			int next_here = i + 1 < t->nruns && t->runs[i + 1].copy == t->runs[i].copy;

			r->copy = i ? copy_reader_new(s, t) : first;
			r->copy->p = r->copy->kept = copy->map + t->runs[i].off;
			r->copy->end = copy->map + (next_here ? t->runs[i + 1].off : copy->size);
		}
		if (first)
			return 0;
	}
	if (t->unbounded) {
		sql = trace_event_sql(s->trace, s->file, s->view, cols, s->ncols, TRACE_SQL_SORTED, s->nkey, NULL,
				      &absent);
		ret = prepare(s, sql, &st, err, errlen);
		sqlite3_free(sql);
		if (ret < 0)
			return ret;
		add_stream_run(s, st, 1);
		return 0;
	}
	for (size_t i = 0; i < t->nruns; i++) {
		const char *wrap = cache_of(s->trace)->packed ? ROW_FUNCTION : NULL;

		sql = trace_event_sql(s->trace, s->file, s->view, cols, s->ncols,
				      t->filtered ? TRACE_SQL_RANGE : TRACE_SQL_RANGE_RAW, 0, wrap, &absent);
		ret = prepare(s, sql, &st, err, errlen);
		sqlite3_free(sql);
		if (ret < 0)
			return ret;
		sqlite3_bind_int64(st, 1, t->runs[i].first);
		sqlite3_bind_int64(st, 2, t->runs[i].last);
		add_stream_run(s, st, t->runs[i].sorted ? 1 : EVENT_REORDER + 1)->packed = wrap != NULL;
	}
	return 0;
}

static void prefetch_start(struct event_stream *s);

static int stream_open(struct trace *trace, size_t only, const char *view, const char *const *cols,
		       size_t ncols, size_t nkey, int text_col, struct event_stream **out, char *err,
		       size_t errlen)
{
	struct event_stream *s;
	int ret = 0;

	*out = NULL;
	if (!columns_supported(cols, ncols, nkey)) {
		snprintf(err, errlen, "cannot read %s: unsupported columns", view);
		return -EINVAL;
	}
	s = xcalloc(1, sizeof(*s));
	s->trace = trace;
	s->view = xstrdup(view);
	s->cols = xcalloc(ncols ? ncols : 1, sizeof(*s->cols));
	for (size_t i = 0; i < ncols; i++)
		s->cols[i] = xstrdup(cols[i]);
	s->ncols = ncols;
	s->nkey = nkey;
	s->text_col = text_col;
	s->only = only;
	s->end_col = ncols && !strcmp(cols[0], "end");
	s->seen = xcalloc(trace_count(trace) ? trace_count(trace) : 1, sizeof(*s->seen));
	s->by_view = trace_scope_window(trace, view, &s->scope_start, &s->scope_end);
	if (s->by_view) {
		/* The view applies the whole scope; its SQL sorts. */
		sqlite3_str *q = sqlite3_str_new(NULL);
		sqlite3_stmt *st = NULL;
		char *sql;

		sqlite3_str_appendall(q, "SELECT traceId, start");
		for (size_t i = 0; i < ncols; i++)
			sqlite3_str_appendf(q, ", \"%w\"", cols[i]);
		sqlite3_str_appendf(q, " FROM \"%w\"", view);
		if (only != SIZE_MAX)
			sqlite3_str_appendf(q, " WHERE traceId = %lld", (long long)only);
		sqlite3_str_appendall(q, " ORDER BY 1, 2");
		for (size_t i = 0; i < nkey; i++)
			sqlite3_str_appendf(q, ", %d", (int)i + 3);
		sql = sqlite3_str_finish(q);
		ret = prepare(s, sql, &st, err, errlen);
		sqlite3_free(sql);
		if (!ret)
			add_stream_run(s, st, 1)->by_view = 1;
		s->scope_start = s->scope_end = 0;
	} else {
		/* Find every file's runs now, so that the total is known and errors come early. */
		s->tables = xcalloc(trace_count(trace) ? trace_count(trace) : 1, sizeof(*s->tables));
		for (size_t f = 0; f < trace_count(trace) && !ret; f++) {
			struct table_runs *t;

			if (only != SIZE_MAX && f != only)
				continue;
			t = table_runs_get(trace, f, view, nkey, err, errlen, &ret);
			if (t) {
				s->total += t->rows;
				s->tables[f] = *t;
			}
		}
		s->file = only != SIZE_MAX ? only : 0;
		if (!ret)
			ret = open_file_runs(s, err, errlen);
		if (!ret)
			prefetch_start(s);
	}
	if (ret < 0) {
		event_stream_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

int event_stream_open(struct trace *trace, const char *view, const char *const *cols, size_t ncols,
		      size_t nkey, int text_col, struct event_stream **out, char *err, size_t errlen)
{
	return stream_open(trace, SIZE_MAX, view, cols, ncols, nkey, text_col, out, err, errlen);
}

int event_stream_open_file(struct trace *trace, size_t file, const char *view, const char *const *cols,
			   size_t ncols, size_t nkey, int text_col, struct event_stream **out, char *err,
			   size_t errlen)
{
	if (file >= trace_count(trace)) {
		*out = NULL;
		snprintf(err, errlen, "cannot read %s: no file %zu", view, file);
		return -EINVAL;
	}
	return stream_open(trace, file, view, cols, ncols, nkey, text_col, out, err, errlen);
}

static void remember(struct event_stream *s);

/* The next row of the stream's runs and files, on whichever thread reads them (see struct
 * prefetch): the end of the stream says so (*row NULL, 0) without remembering its summary. */
static int stream_next(struct event_stream *s, const struct event_row **row, char *err, size_t errlen)
{
	for (;;) {
		struct run *best;
		int ret;

		if (!s->filled) {
			s->order = xrealloc(s->order, (s->nruns ? s->nruns : 1) * sizeof(*s->order));
			s->norder = 0;
			for (size_t i = 0; i < s->nruns; i++) {
				ret = run_fill(s, &s->runs[i], err, errlen);
				if (ret < 0)
					return ret;
				if (s->runs[i].n)
					order_push(s, &s->runs[i]);
			}
			s->filled = 1;
		} else if (s->last) {
			/* only the run the last row came from, the root, has changed */
			s->last->spare[s->last->nspare++] = s->current;
			ret = run_fill(s, s->last, err, errlen);
			if (ret < 0)
				return ret;
			if (s->last->n)
				order_sift_root(s, s->last);
			else if (--s->norder)
				order_sift_root(s, s->order[s->norder]);
			s->last = NULL;
		}
		if (s->norder) {
			best = s->order[0];
			s->current = heap_pop(best->heap, &best->n, s->nkey);
			s->last = best;
			if ((size_t)s->current->trace_id < trace_count(s->trace))
				summary_add(&s->seen[s->current->trace_id], s->current,
					    (s->current->null & EVENT_START_NULL) != 0, s->end_col);
			*row = s->current;
			return 1;
		}
		/* This file is done: the next one, if the stream reads files one by one. */
		close_runs(s);
		if (s->by_view || s->only != SIZE_MAX || s->file + 1 >= trace_count(s->trace)) {
			*row = NULL;
			return 0;
		}
		s->file++;
		ret = open_file_runs(s, err, errlen);
		if (ret < 0)
			return ret;
	}
}

/*
 * Reading ahead. Decoding a copy's runs and merging them is about 40% of a walk over the streams;
 * with more than one CPU, a big stream whose every run comes from copies (no SQL: a connection is
 * one thread's) has another thread do it, PREFETCH_ROWS rows at a time into a ring of blocks, while
 * the caller works on the rows before them. Only the columns asked for are copied; streams with a
 * text column are not read ahead.
 */
#define PREFETCH_ROWS 2048
#define PREFETCH_BLOCKS 4
#define PREFETCH_MIN_ROWS (256 << 10)

struct prefetch {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;			/* a block filled, a block given back, the end, stop */
	struct event_row *rows[PREFETCH_BLOCKS];
	size_t n[PREFETCH_BLOCKS];
	size_t head, full;			/* the ring: full blocks from head, the caller's first */
	size_t pos;				/* the caller's next row in the head block */
	int holding;				/* the caller reads the head block */
	int done, stop, ret, remembered;
	size_t rowlen;				/* bytes of a row copied: the key and the columns */
	char err[256];
};

static void *prefetch_thread(void *arg)
{
	struct event_stream *s = arg;
	struct prefetch *pf = s->prefetch;
	int ret = 1;

	while (ret > 0) {
		struct event_row *block;
		size_t n = 0, i;

		pthread_mutex_lock(&pf->lock);
		while (pf->full == PREFETCH_BLOCKS && !pf->stop)
			pthread_cond_wait(&pf->cond, &pf->lock);
		i = (pf->head + pf->full) % PREFETCH_BLOCKS;
		ret = pf->stop ? 0 : 1;
		pthread_mutex_unlock(&pf->lock);
		if (!ret)
			break;
		block = pf->rows[i];
		while (n < PREFETCH_ROWS) {
			const struct event_row *row;

			ret = stream_next(s, &row, pf->err, sizeof(pf->err));
			if (ret <= 0)
				break;
			memcpy(&block[n++], row, pf->rowlen);
		}
		pthread_mutex_lock(&pf->lock);
		pf->n[i] = n;
		if (n)
			pf->full++;
		if (ret <= 0) {
			pf->done = 1;
			pf->ret = ret;
		}
		pthread_cond_broadcast(&pf->cond);
		pthread_mutex_unlock(&pf->lock);
	}
	return NULL;
}

static void prefetch_free(struct prefetch *pf)
{
	pthread_cond_destroy(&pf->cond);
	pthread_mutex_destroy(&pf->lock);
	for (size_t i = 0; i < PREFETCH_BLOCKS; i++)
		free(pf->rows[i]);
	free(pf);
}

/* Read s ahead on another thread when it is worth it and safe (see above). */
static void prefetch_start(struct event_stream *s)
{
	struct prefetch *pf;

	if (s->by_view || s->text_col >= 0 || s->total < PREFETCH_MIN_ROWS || event_threads() < 2)
		return;
	for (size_t f = 0; f < trace_count(s->trace); f++) {
		const struct table_runs *t = &s->tables[f];
		struct copy_reader *rd;

		if ((s->only != SIZE_MAX && f != s->only) || (!t->rows && !t->unbounded))
			continue;
		if (t->unbounded || !t->ncopies || !(rd = copy_reader_new(s, t)))
			return;
		free(rd);
	}
	pf = xcalloc(1, sizeof(*pf));
	pf->rowlen = offsetof(struct event_row, v) + s->ncols * sizeof(int64_t);
	for (size_t i = 0; i < PREFETCH_BLOCKS; i++)
		pf->rows[i] = xcalloc(PREFETCH_ROWS, sizeof(struct event_row));
	pthread_mutex_init(&pf->lock, NULL);
	pthread_cond_init(&pf->cond, NULL);
	s->prefetch = pf;
	if (pthread_create(&pf->thread, NULL, prefetch_thread, s) != 0) {
		/* read on this thread, as without */
		s->prefetch = NULL;
		prefetch_free(pf);
	}
}

static void prefetch_stop(struct event_stream *s)
{
	struct prefetch *pf = s->prefetch;

	if (!pf)
		return;
	pthread_mutex_lock(&pf->lock);
	pf->stop = 1;
	pthread_cond_broadcast(&pf->cond);
	pthread_mutex_unlock(&pf->lock);
	pthread_join(pf->thread, NULL);
	prefetch_free(pf);
	s->prefetch = NULL;
}

/* event_stream_next() from the blocks read ahead. */
static int prefetch_next(struct event_stream *s, const struct event_row **row, char *err, size_t errlen)
{
	struct prefetch *pf = s->prefetch;
	int ret;

	if (pf->holding && pf->pos < pf->n[pf->head]) {
		*row = &pf->rows[pf->head][pf->pos++];
		return 1;
	}
	pthread_mutex_lock(&pf->lock);
	if (pf->holding) {
		pf->head = (pf->head + 1) % PREFETCH_BLOCKS;
		pf->full--;
		pf->holding = 0;
		pthread_cond_broadcast(&pf->cond);
	}
	while (!pf->full && !pf->done)
		pthread_cond_wait(&pf->cond, &pf->lock);
	if (pf->full) {
		pf->holding = 1;
		pf->pos = 1;
		*row = &pf->rows[pf->head][0];
		pthread_mutex_unlock(&pf->lock);
		return 1;
	}
	ret = pf->ret;
	pthread_mutex_unlock(&pf->lock);
	*row = NULL;
	if (ret < 0) {
		snprintf(err, errlen, "%s", pf->err);
		return ret;
	}
	/* The other thread has ended: what it saw is the caller's to keep. */
	if (!pf->remembered && s->end_col)
		remember(s);
	pf->remembered = 1;
	return 0;
}

int event_stream_next(struct event_stream *s, const struct event_row **row, char *err, size_t errlen)
{
	int ret;

	if (s->prefetch)
		return prefetch_next(s, row, err, errlen);
	ret = stream_next(s, row, err, errlen);
	if (ret == 0 && !s->by_view && s->end_col)
		remember(s);
	return ret;
}

/* A stream read to its end: what it gave is the view's summary in this scope. */
static void remember(struct event_stream *s)
{
	struct event_cache *cache = cache_peek(s->trace);

	for (size_t f = 0; cache && f < trace_count(s->trace); f++) {
		struct scoped_summary *m;

		if (s->only != SIZE_MAX && f != s->only)
			continue;
		cache->scoped = xrealloc(cache->scoped, (cache->nscoped + 1) * sizeof(*cache->scoped));
		m = &cache->scoped[cache->nscoped++];
		m->view = xstrdup(s->view);
		m->file = f;
		m->scope_start = s->scope_start;
		m->scope_end = s->scope_end;
		m->summary = s->seen[f];
	}
}

int event_summary_get(struct trace *trace, const char *view, size_t trace_id, struct event_summary *out,
		      char *err, size_t errlen)
{
	struct event_cache *cache;
	int64_t start, end;
	sqlite3_stmt *st;
	char *sql;
	int rc, ret = 0;

	memset(out, 0, sizeof(*out));
	if (trace_id >= trace_count(trace))
		return 0;
	if (!trace_scope_window(trace, view, &start, &end)) {
		cache = cache_peek(trace);
		for (size_t i = 0; cache && i < cache->nscoped; i++) {
			const struct scoped_summary *m = &cache->scoped[i];

			if (m->file == trace_id && m->scope_start == start && m->scope_end == end &&
			    !strcmp(m->view, view)) {
				*out = m->summary;
				return 0;
			}
		}
		if (!start && !end) {
			/* The whole table: the scan that finds the runs counts it too. */
			int ops = !strcmp(view, "kernels") || !strcmp(view, "copies") || !strcmp(view, "sets");
			struct table_runs *t = table_runs_get(trace, trace_id, view, ops ? 3 : 0, err, errlen, &ret);

			if (!t)
				return ret;
			if (!t->unbounded) {
				*out = t->summary;
				return 0;
			}
		}
	}
	sql = sqlite3_mprintf("SELECT count(*), min(start), max(end) FROM \"%w\" WHERE traceId = %lld", view,
			      (long long)trace_id);
	if (!sql) {
		snprintf(err, errlen, "cannot read %s: out of memory", view);
		return -ENOMEM;
	}
	rc = sqlite3_prepare_v2(trace_db(trace), sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return sql_error(trace, view, err, errlen);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->rows = sqlite3_column_int64(st, 0);
		out->has_first = sqlite3_column_type(st, 1) != SQLITE_NULL;
		out->first = sqlite3_column_int64(st, 1);
		out->has_last = sqlite3_column_type(st, 2) != SQLITE_NULL;
		out->last = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : sql_error(trace, view, err, errlen);
}

int64_t event_stream_total(const struct event_stream *s)
{
	return s->total;
}

void event_stream_close(struct event_stream *s)
{
	if (!s)
		return;
	prefetch_stop(s);
	close_runs(s);
	free(s->order);
	free(s->seen);
	free(s->tables);
	for (size_t i = 0; i < s->ncols; i++)
		free(s->cols[i]);
	free(s->cols);
	free(s->view);
	free(s);
}

/* ---- spans ---- */

int trace_span(struct trace *trace, size_t trace_id, int64_t *start, int64_t *end, char *err, size_t errlen)
{
	static const char *const views[] = { "kernels", "copies", "sets", "api_calls" };
	int64_t *span;
	unsigned char *known = trace_span_slot(trace, trace_id, &span);

	*start = *end = 0;
	if (!known)
		return 0;
	/* known: 0 not yet asked, 1 no events, 2 events */
	if (!*known) {
		struct event_summary all = { 0 };

		for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
			struct event_summary m;
			int ret = event_summary_get(trace, views[v], trace_id, &m, err, errlen);

			if (ret < 0)
				return ret;
			event_summary_merge(&all, &m);
		}
		/* as MIN(s), MAX(e) over the views: a NULL first start means no span */
		span[0] = all.has_first ? all.first : 0;
		span[1] = all.has_first && all.has_last ? all.last : 0;
		*known = (unsigned char)(1 + all.has_first);
	}
	*start = span[0];
	*end = span[1];
	return *known == 2;
}
