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
 *
 * Here: the streams and their read-ahead; the first scans are events-scan.c, the copies
 * events-copy.c, rows and summaries events-row.c.
 */
#define _GNU_SOURCE	/* sched_getaffinity */
#include "analyzer/loader/events-private.h"

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
	return events_row_before(a->heap[0], b->heap[0], s->nkey);
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
					   : events_step_row(&events_cache_peek(s->trace)->target, r->st, r->packed, row, s->ncols,
						      s->text_col, &odd);

		if (r->copy ? rc <= 0 : rc != SQLITE_ROW) {
			r->spare[r->nspare++] = row;
			r->done = 1;
			if (r->copy && rc < 0) {
				snprintf(err, errlen, "cannot read %s from its temporary copy: damaged", s->view);
				return -EIO;
			}
			if (!r->copy && rc != SQLITE_DONE)
				return events_sql_error(s->trace, s->view, err, errlen);
			break;
		}
		if (r->copy) {
			row->trace_id = (int64_t)s->file;
		} else if (r->by_view) {
			row->trace_id = sqlite3_column_int64(r->st, 0);
			row->seq = r->seq++;
			events_read_row(r->st, row, s->ncols, s->text_col);
		} else {
			row->trace_id = (int64_t)s->file;
		}
		if ((s->scope_start && row->start < s->scope_start) || (s->scope_end && row->start >= s->scope_end)) {
			r->spare[r->nspare++] = row;
			continue;
		}
		events_heap_push(r->heap, &r->n, row, s->nkey);
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
		return events_sql_error(s->trace, s->view, err, errlen);
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
		const char *wrap = events_cache_of(s->trace)->packed ? ROW_FUNCTION : NULL;

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
	if (!events_columns_supported(cols, ncols, nkey)) {
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
			s->current = events_heap_pop(best->heap, &best->n, s->nkey);
			s->last = best;
			if ((size_t)s->current->trace_id < trace_count(s->trace))
				events_summary_add(&s->seen[s->current->trace_id], s->current,
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
	struct event_cache *cache = events_cache_peek(s->trace);

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
		cache = events_cache_peek(trace);
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
		return events_sql_error(trace, view, err, errlen);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->rows = sqlite3_column_int64(st, 0);
		out->has_first = sqlite3_column_type(st, 1) != SQLITE_NULL;
		out->first = sqlite3_column_int64(st, 1);
		out->has_last = sqlite3_column_type(st, 2) != SQLITE_NULL;
		out->last = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : events_sql_error(trace, view, err, errlen);
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
