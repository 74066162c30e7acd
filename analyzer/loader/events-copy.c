/*
 * A table's compact copy (event_streams_keep, events-private.h): the columns kept, the temporary
 * file a first scan writes each row to (varints, a mark where each run begins), mapped and read back
 * run by run; and the trace's event cache that holds them.
 */
#define _GNU_SOURCE	/* sched_getaffinity */
#include "analyzer/loader/events-private.h"

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
int register_row_function(sqlite3 *db, struct row_target *target)
{
	return sqlite3_create_function(db, ROW_FUNCTION, -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, target, events_row_function,
				       NULL, NULL) == SQLITE_OK;
}

static void event_cache_free(void *data);

/* The trace's event cache, NULL until events_cache_of() made it. */
struct event_cache *events_cache_peek(struct trace *trace)
{
	return trace_cache(trace, TRACE_CACHE_EVENTS)->data;
}

struct event_cache *events_cache_of(struct trace *trace)
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
	struct event_cache *cache = events_cache_of(trace);

	for (size_t i = 0; i < n; i++) {
		struct event_columns *c;

		/* the scan reads end first, then the keys: no copy for other columns */
		if (!events_columns_supported(sets[i].cols, sets[i].ncols, sets[i].nkey) || !sets[i].ncols ||
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

void recording_free(struct recording *rec)
{
	if (!rec)
		return;
	if (rec->map)
		munmap((void *)rec->map, (size_t)rec->size);
	close(rec->fd);
	free(rec);
}

/* A new copy in an unlinked file under $TMPDIR; NULL (no copy) when none can be made. */
struct recording *recording_new(void)
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

struct spill *spill_new(struct recording *rec)
{
	struct spill *sp = xcalloc(1, sizeof(*sp));

	sp->rec = rec;
	sp->cap = SPILL_BUF;
	sp->buf = xmalloc(sp->cap);
	return sp;
}

void spill_free(struct spill *sp)
{
	if (!sp)
		return;
	free(sp->buf);
	free(sp);
}

/* Write out the buffer: 0, or -1 when the file cannot take it (a full disk: nothing is kept). */
int spill_flush(struct spill *w)
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
int64_t spill_mark(struct spill *w)
{
	memset(&w->prev, 0, sizeof(w->prev));
	return w->rec->size + (int64_t)w->len;
}

/* Append one row: 0, or -1 when it cannot be written. */
int spill_put(struct spill *w, const struct event_row *r, size_t ncols, int text_col)
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
int recording_map(struct recording *rec)
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
int copy_next(struct copy_reader *rd, struct event_row *r)
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
struct copy_reader *copy_reader_new(const struct event_stream *s, const struct table_runs *t)
{
	const struct event_columns *set = &events_cache_peek(s->trace)->keep[t->copy_set];
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

void table_copies_free(struct table_runs *t)
{
	for (size_t i = 0; i < t->ncopies; i++)
		recording_free(t->copies[i]);
	free(t->copies);
	t->copies = NULL;
	t->ncopies = 0;
}

void events_add_run(struct table_runs *t, int64_t first, int64_t last, int sorted, size_t copy, int64_t off)
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

int events_db_error(sqlite3 *db, const char *view, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot read %s: %s", view, sqlite3_errmsg(db));
	return -EIO;
}

int events_sql_error(struct trace *trace, const char *view, char *err, size_t errlen)
{
	return events_db_error(trace_db(trace), view, err, errlen);
}
