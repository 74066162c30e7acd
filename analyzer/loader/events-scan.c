/*
 * Finding the runs (events-private.h): the first scan of a table, replaying the reorder buffer and
 * writing its copy, and the batch that runs the first scans of every kept table at once, on several
 * threads, big tables cut into parts by rowid.
 */
#define _GNU_SOURCE	/* sched_getaffinity */
#include "analyzer/loader/events-private.h"

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
/*
 * The reorder buffer replayed over a table's rows: the reader holds EVENT_REORDER + 1 rows and hands
 * on the smallest; this holds EVENT_REORDER and hands one on as the next arrives, which is the same.
 * It compares sort keys only, and copies no more of a row (keylen).
 */
struct reorder {
	struct event_row *ring, **heap, prev, emitted;
	size_t window, nring, head, nheap, keylen;
	int have_prev, have_emitted, sorted;
	int64_t first, last, off;	/* the current run: its first and last rowid, where its copy begins */
};

static void reorder_init(struct reorder *o, size_t nkey)
{
	memset(o, 0, sizeof(*o));
	o->window = EVENT_REORDER;
	o->ring = xcalloc(o->window, sizeof(*o->ring));
	o->keylen = offsetof(struct event_row, v) + nkey * sizeof(int64_t);
	o->sorted = 1;
}

static void reorder_release(struct reorder *o)
{
	free(o->heap);
	free(o->ring);
}

/* The row into the buffer as the reader would take it: a row that sorts before one already handed
 * on ends the run; the first row out of order turns the window into a heap. */
static void reorder_row(struct reorder *o, struct table_runs *t, const struct event_row *r, struct spill *copy)
{
	if (t->nruns == 0 && !o->have_prev) {
		o->first = r->seq;
		o->off = copy ? spill_mark(copy) : 0;
	}
	if (o->have_emitted && events_row_before(r, &o->emitted, t->nkey)) {
		/* The buffer has handed on a later row: this one starts a new run. */
		events_add_run(t, o->first, o->last, o->sorted, 0, o->off);
		o->first = r->seq;
		o->off = copy ? spill_mark(copy) : 0;
		o->nring = o->head = o->nheap = 0;
		o->have_prev = o->have_emitted = 0;
		o->sorted = 1;
	} else if (o->sorted && o->have_prev && events_row_before(r, &o->prev, t->nkey)) {
		/* Out of order but repairable: from here on, the buffer as a heap. */
		o->sorted = 0;
		if (!o->heap)
			o->heap = xmalloc((o->window + 1) * sizeof(*o->heap));
		o->nheap = 0;
		for (size_t i = 0; i < o->nring; i++)
			events_heap_push(o->heap, &o->nheap, &o->ring[(o->head + i) % o->window], t->nkey);
	}
	if (o->sorted) {
		/* In order: the row leaving the window is the one the buffer hands on. */
		if (o->nring == o->window) {
			memcpy(&o->emitted, &o->ring[o->head], o->keylen);
			o->have_emitted = 1;
			memcpy(&o->ring[o->head], r, o->keylen);
			o->head = (o->head + 1) % o->window;
		} else {
			memcpy(&o->ring[(o->head + o->nring++) % o->window], r, o->keylen);
		}
	} else {
		struct event_row *slot;

		if (o->nheap == o->window) {
			slot = events_heap_pop(o->heap, &o->nheap, t->nkey);
			memcpy(&o->emitted, slot, o->keylen);
			o->have_emitted = 1;
		} else {
			slot = &o->ring[o->nring++ % o->window];
		}
		memcpy(slot, r, o->keylen);
		events_heap_push(o->heap, &o->nheap, slot, t->nkey);
	}
}

/* The scan's statement (bound to the rowid range, if any); *st NULL with 0: the table is absent,
 * or the scan cannot be prepared and the table is read sorted instead (unbounded). */
static int scan_prepare(struct scanner *sc, struct trace *trace, struct table_runs *t, const int64_t *range,
			const char *const *cols, size_t ncols, int raw, sqlite3_stmt **st, char *err, size_t errlen)
{
	const char *wrap = sc->packed ? ROW_FUNCTION : NULL;
	enum trace_event_sql mode = range ? (raw ? TRACE_SQL_RANGE_RAW : TRACE_SQL_RANGE)
					  : (raw ? TRACE_SQL_SCAN_RAW : TRACE_SQL_SCAN);
	int absent;
	char *sql = trace_event_sql(trace, t->file, t->view, cols, ncols, mode, 0, wrap, &absent);

	*st = NULL;
	if (!sql) {
		if (absent)
			return 0;
		snprintf(err, errlen, "cannot read %s: out of memory", t->view);
		return -ENOMEM;
	}
	if (sqlite3_prepare_v2(sc->db, sql, -1, st, NULL) != SQLITE_OK) {
		/* Read through ORDER BY instead: the same rows, slower. Said where SQL is being watched,
		 * so that a scan that should work and does not is seen. */
		if (getenv("GPT_TRACE_SQL_PROFILE"))
			fprintf(stderr, "gpt-trace: sql: the scan of %s cannot be prepared (%s); reading it sorted: %.300s\n",
				t->view, sqlite3_errmsg(sc->db), sql);
		sqlite3_free(sql);
		*st = NULL;
		t->unbounded = 1;
		return 0;
	}
	sqlite3_free(sql);
	if (range) {
		sqlite3_bind_int64(*st, 1, range[0]);
		sqlite3_bind_int64(*st, 2, range[1]);
	}
	return 0;
}

/* Forget what a scan that met a value C cannot compare found, to start again with SQL's filter;
 * the rows read so far are read again, so the progress line counts them once. */
static void scan_forget(struct scan_batch *b, struct table_runs *t, struct spill *copy, int64_t read)
{
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
}

static int find_runs(struct scanner *sc, struct scan_batch *b, struct trace *trace, struct table_runs *t,
		     const int64_t *range, const char *const *cols, size_t ncols, int raw, int text_col,
		     struct spill *copy, char *err, size_t errlen)
{
	struct reorder o;
	int rc, ret, odd = 0, nonint;
	int64_t shift = 0, read = 0;
	int filter = raw && trace_event_filter(trace, t->file, t->view, &shift);
	struct event_row full = { 0 }, row = { 0 }, *r = copy ? &full : &row;
	sqlite3_stmt *st;

	ret = scan_prepare(sc, trace, t, range, cols, ncols, raw, &st, err, errlen);
	if (ret < 0 || !st)
		return ret;
	reorder_init(&o, t->nkey);
	while ((rc = events_step_row(sc->target, st, sc->packed, r, ncols, copy ? text_col : -1, &nonint)) ==
	       SQLITE_ROW) {
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
		events_summary_add(&t->summary, r, (r->null & EVENT_START_NULL) != 0, ncols > 0);
		reorder_row(&o, t, r, copy);
		if (copy && !copy->failed)
			copy->failed = spill_put(copy, r, ncols, text_col) < 0;
		memcpy(&o.prev, r, o.keylen);
		o.have_prev = 1;
		o.last = r->seq;
		if (t->unbounded)
			break;
	}
	if (!odd && rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = events_db_error(sc->db, t->view, err, errlen);
	else if (!odd && o.have_prev && !t->unbounded)
		events_add_run(t, o.first, o.last, o.sorted, 0, o.off);
	scan_tick(b, sc, read & (SCAN_TICK - 1));
	sqlite3_finalize(st);
	reorder_release(&o);
	free(full.text);
	if (odd) {
		/* Start again with the view's own filter, which the reads will then also carry. */
		scan_forget(b, t, copy, read);
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
	struct event_cache *cache = events_cache_peek(b->trace);
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
	struct event_cache *cache = events_cache_of(b->trace);
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
			events_add_run(t, p->runs[r].first, p->runs[r].last, p->runs[r].sorted, t->ncopies, p->runs[r].off);
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
struct table_runs *table_runs_get(struct trace *trace, size_t file, const char *view, size_t nkey,
				  char *err, size_t errlen, int *ret)
{
	struct event_cache *cache = events_cache_of(trace);
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
