/*
 * gpt-trace stats: the summary tables of stats.h, computed (their output: write.c).
 *
 * Every table is made the same way: rows go through a small hash table keyed by up to three integers
 * (traceId and nameId, or the copy kinds, or a stream) that keeps count, sum, extremes and a running
 * variance per key; groups that share a label across traces (the same kernel name in two
 * per-process files) are then merged. Kernels, copies and memsets come from one operations pass in
 * time order over the loader's event streams (loader/events.h), each table read once, which also
 * makes each device's busy time (the union of its operations' intervals) and the stream table; API
 * calls (and NVTX ranges) from one host pass over their streams (stats_host); syncs from one unsorted
 * scan. With stats_keep(), the scan that finds each table's storage order keeps the columns these
 * passes read, so SQLite reads each table once. Medians come from the same passes: each group counts
 * its distinct durations (a kernel's jitter takes few values), and a row's median is read from its
 * groups' counts in order (medians_from_counts). A table whose durations take more than
 * VALUE_COUNTS_MAX distinct values in all takes a second pass: the durations sorted by duration
 * alone; each row finds its group in the hash, counts its position, and the group's median is read
 * when its middle position passes by. Memory is the hash (distinct keys, and at most
 * VALUE_COUNTS_MAX counted values), not the events.
 */
#define _GNU_SOURCE /* qsort_r */
#include "stats/stats.h"
#include "stats/efficiency.h"
#include "common/corr-map.h"
#include "common/value-counts.h"
#include "loader/events.h"
#include "common/key-index.h"
#include "common/progress.h"
#include "common/strtab.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEY_NULL STATS_KEY_NULL

/* ---- a hash of groups keyed by three integers ---- */

struct group {
	int64_t key[3];
	struct stats_summary sum;
	int64_t seen;		/* pass two: rows of this group seen so far */
	double lo;		/* pass two: the lower middle value */
	size_t merged;		/* index of the row of the output table this group feeds */
	struct value_counts *values;	/* its distinct durations (counted passes), NULL: none yet */
};

struct group_map {
	struct key_index index;	/* key -> groups[] */
	struct group *groups;	/* dense, in order of first appearance */
	size_t count, cap;
};

/* The group of key, created when create is set; NULL when absent. */
static struct group *map_get(struct group_map *m, const int64_t *key, int create)
{
	const int64_t k[KEY_INDEX_WORDS] = { key[0], key[1], key[2] };
	int created;
	size_t i;

	if (!create) {
		i = key_index_find(&m->index, k);
		return i == SIZE_MAX ? NULL : &m->groups[i];
	}
	i = key_index_get(&m->index, k, &created);
	if (created) {
		if (m->count == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 64;
			m->groups = xrealloc(m->groups, m->cap * sizeof(*m->groups));
		}
		memset(&m->groups[i], 0, sizeof(struct group));
		memcpy(m->groups[i].key, key, sizeof(m->groups[i].key));
		m->count++;
	}
	return &m->groups[i];
}

static void map_release(struct group_map *m)
{
	for (size_t i = 0; i < m->count; i++)
		value_counts_free(m->groups[i].values);
	free(m->groups);
	key_index_release(&m->index);
	memset(m, 0, sizeof(*m));
}

/* The row of table labelled text, created (with a copy of text) when absent; labels holds the
 * table's labels, row i labelled by its string i. */
static size_t row_for_label(struct strtab *labels, struct stats_table *table, size_t *cap, const char *text)
{
	int created;
	size_t row = strtab_get(labels, text, &created);

	if (!created)
		return row;
	if (table->count == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		table->rows = xrealloc(table->rows, *cap * sizeof(*table->rows));
	}
	memset(&table->rows[table->count], 0, sizeof(table->rows[0]));
	table->rows[table->count].label = xstrdup(text);
	table->rows[table->count].key[0] = table->rows[table->count].key[1] = -1;
	table->rows[table->count].key[2] = -1;
	return table->count++;
}

/* ---- summaries ---- */

static void summary_add(struct stats_summary *s, int64_t dur, int64_t bytes)
{
	double delta;

	if (!s->count || dur < s->min)
		s->min = dur;
	if (!s->count || dur > s->max)
		s->max = dur;
	s->count++;
	s->total = sat_add64(s->total, dur);
	s->bytes = sat_add64(s->bytes, bytes);
	delta = (double)dur - s->mean;
	s->mean += delta / (double)s->count;
	s->m2 += delta * ((double)dur - s->mean);
}

/* Chan et al.'s pairwise combination of two running variances. */
static void summary_merge(struct stats_summary *a, const struct stats_summary *b)
{
	double n, delta;

	if (!b->count)
		return;
	if (!a->count) {
		*a = *b;
		return;
	}
	n = (double)(a->count + b->count);
	delta = b->mean - a->mean;
	a->m2 += b->m2 + delta * delta * (double)a->count * (double)b->count / n;
	a->mean += delta * (double)b->count / n;
	a->min = b->min < a->min ? b->min : a->min;
	a->max = b->max > a->max ? b->max : a->max;
	a->count += b->count;
	a->total = sat_add64(a->total, b->total);
	a->bytes = sat_add64(a->bytes, b->bytes);
}

double stats_mean(const struct stats_summary *s)
{
	return s->count ? (double)s->total / (double)s->count : 0.0;
}

double stats_stddev(const struct stats_summary *s)
{
	return s->count > 1 ? sqrt(s->m2 / (double)(s->count - 1)) : 0.0;
}

/* ---- exact medians from counted durations (value-counts.h) ---- */

/* The median of each row of table from its groups' counted durations; the counts are freed. */
static void medians_from_counts(struct group_map *map, struct stats_table *table)
{
	size_t *first = xmalloc((table->count + 1) * sizeof(*first)), *order, n = map->count;
	struct value_counts **sets = xmalloc((n ? n : 1) * sizeof(*sets));

	/* the groups by row (a counting sort): row r's are sets[first[r] .. first[r + 1]) */
	memset(first, 0, (table->count + 1) * sizeof(*first));
	for (size_t g = 0; g < n; g++)
		first[map->groups[g].merged + 1]++;
	for (size_t r = 0; r < table->count; r++)
		first[r + 1] += first[r];
	order = xmalloc((table->count + 1) * sizeof(*order));
	memcpy(order, first, (table->count + 1) * sizeof(*order));
	for (size_t g = 0; g < n; g++)
		sets[order[map->groups[g].merged]++] = map->groups[g].values;
	for (size_t r = 0; r < table->count; r++)
		table->rows[r].sum.median = value_counts_median(sets + first[r], first[r + 1] - first[r],
								 table->rows[r].sum.count);
	for (size_t g = 0; g < n; g++) {
		value_counts_free(map->groups[g].values);
		map->groups[g].values = NULL;
	}
	free(order);
	free(first);
	free(sets);
}

/* ---- SQL plumbing ---- */

struct pass {
	struct trace *trace;
	char *err;
	size_t errlen;
	struct progress progress;	/* events read by the passes so far, of all they will read */
};

/*
 * The progress line counts the rows each pass reads, a tick per row (SQLite's progress handler keeps
 * it fresh inside a query that sorts). Totals come from the loader's summaries, and only when the
 * line can show.
 */
static int64_t view_rows(struct pass *p, const char *view)
{
	int64_t n = 0;

	for (size_t t = 0; t < trace_count(p->trace); t++) {
		struct event_summary m;

		if (event_summary_get(p->trace, view, t, &m, p->err, p->errlen) < 0)
			return 0;
		n += m.rows;
	}
	return n;
}

static int on_sqlite_progress(void *arg)
{
	progress_update(arg);
	return 0;
}

static int sql_error(struct pass *p, const char *what)
{
	snprintf(p->err, p->errlen, "cannot compute %s: %s", what, sqlite3_errmsg(trace_db(p->trace)));
	return -EIO;
}

static int prepare(struct pass *p, const char *what, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(trace_db(p->trace), sql, -1, st, NULL) != SQLITE_OK)
		return sql_error(p, what);
	return 0;
}

static int64_t col_key(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? KEY_NULL : sqlite3_column_int64(st, i);
}

static void table_push(struct stats_table *t, size_t *cap, const struct stats_row *row)
{
	if (t->count == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		t->rows = xrealloc(t->rows, *cap * sizeof(*t->rows));
	}
	t->rows[t->count++] = *row;
}

static void table_release(struct stats_table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->rows[i].label);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/*
 * The medians' second pass: sql returns (key0, key1, key2, dur) ordered by dur over the rows the
 * groups were made of; the median of each output row (merged groups) is the middle of its values in
 * that order.
 */
static int pass_medians(struct pass *p, const char *what, const char *sql, struct group_map *map,
			struct stats_table *table)
{
	struct group_map counters = { 0 };
	sqlite3_stmt *st;
	int rc, ret;

	/* one counter per output row, keyed by its index */
	for (size_t i = 0; i < table->count; i++) {
		int64_t key[3] = { (int64_t)i, 0, 0 };

		map_get(&counters, key, 1);
	}
	ret = prepare(p, what, sql, &st);
	if (ret < 0) {
		map_release(&counters);
		return ret;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[3] = { col_key(st, 0), col_key(st, 1), col_key(st, 2) };
		struct group *g = map_get(map, key, 0), *c;
		struct stats_row *row;
		int64_t n, dur = sqlite3_column_int64(st, 3);

		if (!g || sqlite3_column_type(st, 3) == SQLITE_NULL)
			continue;
		row = &table->rows[g->merged];
		c = &counters.groups[g->merged];
		n = row->sum.count;
		if (c->seen == (n - 1) / 2)
			c->lo = (double)dur;
		if (c->seen == n / 2)
			row->sum.median = (c->lo + (double)dur) / 2;
		c->seen++;
	}
	sqlite3_finalize(st);
	map_release(&counters);
	return rc == SQLITE_DONE ? 0 : sql_error(p, what);
}

/*
 * Merge groups keyed (traceId, nameId) into one row per name, so that a kernel seen in several
 * per-process traces is one row.
 */
static void merge_by_name(struct pass *p, struct group_map *map, struct stats_table *table)
{
	struct strtab names = { 0 };
	size_t cap = 0;

	for (size_t i = 0; i < map->count; i++) {
		struct group *g = &map->groups[i];
		const char *name = NULL;
		char *label;
		size_t row;

		/* a name that cannot be read is shown by its id, as one that is absent */
		if (g->key[1] != KEY_NULL && trace_string(p->trace, g->key[0], g->key[1], &name, p->err, p->errlen) < 0)
			name = NULL;
		if (name)
			label = xstrdup(name);
		else
			label = g->key[1] == KEY_NULL ? xstrdup("(unnamed)")
						      : xasprintf("(name id %" PRId64 ")", g->key[1]);
		row = row_for_label(&names, table, &cap, label);
		free(label);
		summary_merge(&table->rows[row].sum, &g->sum);
		g->merged = row;
	}
	strtab_release(&names);
}

static int compare_total_desc(const void *pa, const void *pb)
{
	const struct stats_row *a = pa, *b = pb;

	if (a->sum.total != b->sum.total)
		return a->sum.total > b->sum.total ? -1 : 1;
	return strcmp(a->label, b->label);
}

static int compare_index_total_desc(const void *pa, const void *pb, void *arg)
{
	const struct stats_row *rows = arg;

	return compare_total_desc(&rows[*(const size_t *)pa], &rows[*(const size_t *)pb]);
}

/* Sort rows by total time, most first, and re-point the groups of map at their rows. */
static void sort_rows(struct stats_table *t, struct group_map *map)
{
	size_t n = t->count ? t->count : 1;
	size_t *order = xmalloc(n * sizeof(*order)), *where = xmalloc(n * sizeof(*where));
	struct stats_row *sorted = xmalloc(n * sizeof(*sorted));

	for (size_t i = 0; i < t->count; i++)
		order[i] = i;
	qsort_r(order, t->count, sizeof(*order), compare_index_total_desc, t->rows);
	for (size_t i = 0; i < t->count; i++) {
		sorted[i] = t->rows[order[i]];
		where[order[i]] = i;
	}
	if (t->count)
		memcpy(t->rows, sorted, t->count * sizeof(*sorted));
	for (size_t g = 0; map && g < map->count; g++)
		map->groups[g].merged = where[map->groups[g].merged];
	free(sorted);
	free(where);
	free(order);
}

/* ---- the tables ---- */

/* The kernel table from the operations pass's groups (traceId, nameId): one row per name. */
static int stats_kernels(struct pass *p, struct stats *st, struct group_map *map, const struct value_budget *values)
{
	merge_by_name(p, map, &st->kernels);
	sort_rows(&st->kernels, map);
	for (size_t i = 0; i < st->kernels.count; i++)
		st->kernel_ns += st->kernels.rows[i].sum.total;
	if (!values->over) {
		medians_from_counts(map, &st->kernels);
		return 0;
	}
	return pass_medians(p, "kernel medians", "SELECT traceId, nameId, 0, dur FROM kernels ORDER BY dur", map,
			    &st->kernels);
}

static const char *memcpy_kind(int64_t k)
{
	static const char *const names[] = { "unknown copy", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
					     "DtoA", "DtoD", "HtoH", "PtoP", "unified HtoD", "unified DtoH",
					     "unified DtoD" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "copy";
}

static const char *mem_kind(int64_t k)
{
	static const char *const names[] = { "pageable", "pinned", "device", "array", "managed",
					     "device static", "managed static", "unknown" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "unknown";
}

/* The memory operation table from the operations pass's groups (copy kind, source and destination
 * memory; memsets: -1, memory kind). */
static int stats_memops(struct pass *p, struct stats *st, struct group_map *map, const struct value_budget *values)
{
	size_t cap = 0;

	for (size_t i = 0; i < map->count; i++) {
		struct group *g = &map->groups[i];
		struct stats_row r = { .key = { g->key[0], g->key[1], g->key[2] }, .sum = g->sum };

		if (g->key[0] == -1)
			r.label = xasprintf("memset (%s)", g->key[1] == KEY_NULL ? "unknown" : mem_kind(g->key[1]));
		else if (g->key[1] == KEY_NULL && g->key[2] == KEY_NULL)
			r.label = xasprintf("%s", memcpy_kind(g->key[0]));
		else
			r.label = xasprintf("%s (%s to %s)", memcpy_kind(g->key[0]),
					    g->key[1] == KEY_NULL ? "unknown" : mem_kind(g->key[1]),
					    g->key[2] == KEY_NULL ? "unknown" : mem_kind(g->key[2]));
		g->merged = st->memops.count;
		table_push(&st->memops, &cap, &r);
	}
	sort_rows(&st->memops, map);
	if (!values->over) {
		medians_from_counts(map, &st->memops);
		return 0;
	}
	return pass_medians(p, "memory operation medians",
			    "SELECT copyKind, srcKind, dstKind, dur FROM copies "
			    "UNION ALL SELECT -1, memKind, NULL, dur FROM sets ORDER BY 4", map, &st->memops);
}

/* The API table from its groups (traceId, nameId): one row per name. */
static int api_table(struct pass *p, struct stats *st, struct group_map *map, const struct value_budget *values)
{
	merge_by_name(p, map, &st->api);
	sort_rows(&st->api, map);
	if (!values->over) {
		medians_from_counts(map, &st->api);
		return 0;
	}
	return pass_medians(p, "API medians", "SELECT traceId, nameId, 0, dur FROM api_calls ORDER BY dur", map,
			    &st->api);
}

/* Widen the span to the first start and last end of every file's rows of view. */
static int widen_by(struct pass *p, struct stats *st, const char *view)
{
	return event_span_widen(p->trace, view, &st->start, &st->end, p->err, p->errlen);
}

/* end - start of a busy interval (end >= start), held at INT64_MAX for a corrupt trace's times */
static int64_t busy_span(int64_t start, int64_t end)
{
	int64_t span;

	return __builtin_sub_overflow(end, start, &span) ? INT64_MAX : span;
}

/*
 * The operations pass: kernels, copies and memsets in time order, from the loader's event streams
 * merged by start, each table read once. Every operation widens the span and feeds its device's
 * busy time (the union of its intervals: one open interval per device); with tables (the stats
 * command), also its kernel or memory operation group, its durations (for the medians) and its
 * stream's row.
 */
struct op_tables {
	struct group_map kernels;	/* (traceId, nameId) */
	struct group_map memops;	/* (copyKind, srcKind, dstKind); memsets (-1, memKind, NULL) */
	struct group_map *streams;	/* (traceId, deviceId, streamId) */
	struct value_budget kernel_values, memop_values;
	struct corr_map *launches;	/* NULL, or the kernels' time per correlation id (LAUNCH_*) */
};

/* A word of the launches map: the kernels of one correlation id, their count and total duration
 * (both saturating; a NULL or negative duration adds 0). */
#define LAUNCH_DUR_BITS 44
#define LAUNCH_DUR_MAX ((1ull << LAUNCH_DUR_BITS) - 1)
#define LAUNCH_COUNT_MAX ((1ull << (64 - LAUNCH_DUR_BITS)) - 1)

static const char *const op_views[] = { "kernels", "copies", "sets" };
static const char *const busy_cols[] = { "end", "deviceId", "streamId" };
static const char *const kernel_cols[] = { "end", "deviceId", "streamId", "nameId", "correlationId" };
static const char *const copy_cols[] = { "end", "deviceId", "streamId", "bytes", "copyKind", "srcKind", "dstKind" };
static const char *const set_cols[] = { "end", "deviceId", "streamId", "bytes", "memKind" };

/* One operation (both start and end known) into the tables. */
static void op_tables_add(struct op_tables *t, int view, const struct event_row *r)
{
	int64_t dur = r->v[0] - r->start, key[3];
	int64_t skey[3] = { r->trace_id, event_int(r, 1, KEY_NULL), event_int(r, 2, KEY_NULL) };
	struct group *g;

	if (view == 0) {
		key[0] = r->trace_id;
		key[1] = event_int(r, 3, KEY_NULL);
		key[2] = 0;
		g = map_get(&t->kernels, key, 1);
		summary_add(&g->sum, dur, 0);
		value_counts_add(&g->values, &t->kernel_values, dur);
	} else {
		key[0] = view == 1 ? event_int(r, 4, KEY_NULL) : -1;
		key[1] = event_int(r, view == 1 ? 5 : 4, KEY_NULL);
		key[2] = view == 1 ? event_int(r, 6, KEY_NULL) : KEY_NULL;
		g = map_get(&t->memops, key, 1);
		summary_add(&g->sum, dur, event_int(r, 3, 0));
		value_counts_add(&g->values, &t->memop_values, dur);
	}
	summary_add(&map_get(t->streams, skey, 1)->sum, dur, 0);
}

/* A kernel (columns as kernel_cols) into the launches map. */
static void launch_add(struct corr_map *launches, const struct event_row *r)
{
	uint64_t *w = event_null(r, 4) ? NULL : corr_map_at(launches, (size_t)r->trace_id, r->v[4]);
	uint64_t count, dur;

	if (!w)
		return;
	count = *w >> LAUNCH_DUR_BITS;
	dur = *w & LAUNCH_DUR_MAX;
	if (count < LAUNCH_COUNT_MAX)
		count++;
	if (!event_null(r, 0) && !(r->null & EVENT_START_NULL) && r->v[0] > r->start)
		dur = (uint64_t)(r->v[0] - r->start) >= LAUNCH_DUR_MAX - dur ? LAUNCH_DUR_MAX
									: dur + (uint64_t)(r->v[0] - r->start);
	*w = count << LAUNCH_DUR_BITS | dur;
}

static int operations_pass(struct pass *p, struct stats *st, struct op_tables *tables)
{
	struct group_map map = { 0 };	/* key: traceId, deviceId; sum.min/max hold the open interval */
	struct event_stream *in[3] = { NULL };
	const struct event_row *row[3] = { NULL };
	size_t cap = 0;
	int ret = 0;

	for (int k = 0; k < 3 && !ret; k++) {
		const char *const *cols = !tables ? busy_cols : k == 0 ? kernel_cols : k == 1 ? copy_cols : set_cols;
		size_t ncols = !tables ? 3 : k == 0 ? (tables->launches ? 5 : 4) : k == 1 ? 7 : 5;

		ret = event_stream_open(p->trace, op_views[k], cols, ncols, 3, -1, &in[k], p->err, p->errlen);
		if (!ret)
			ret = event_stream_next(in[k], &row[k], p->err, p->errlen) < 0 ? -EIO : 0;
	}
	while (!ret) {
		const struct event_row *r = NULL;
		struct group *g;
		int64_t s, e, key[3];
		int k = -1;

		for (int i = 0; i < 3; i++)
			if (row[i] && (!r || event_compare(row[i], r, 3) < 0)) {
				r = row[i];
				k = i;
			}
		if (!r)
			break;
		progress_tick(&p->progress);
		if (k == 0 && tables && tables->launches)
			launch_add(tables->launches, r);
		if (!event_null(r, 0) && !(r->null & EVENT_START_NULL)) {
			s = r->start;
			e = r->v[0];
			/* the devices' span (no tables) is that of their busy intervals */
			if (tables || e >= s) {
				if (s < st->start)
					st->start = s;
				if (e > st->end)
					st->end = e;
			}
			if (tables)
				op_tables_add(tables, k, r);
		}
		/* busy time as "WHERE end >= start": a NULL end or start is left out */
		if (!event_null(r, 0) && !(r->null & EVENT_START_NULL) && r->v[0] >= r->start) {
			key[0] = r->trace_id;
			key[1] = event_int(r, 1, KEY_NULL);
			key[2] = 0;
			s = r->start;
			e = r->v[0];
			g = map_get(&map, key, 1);
			if (!g->seen) {
				g->sum.min = s;
				g->sum.max = e;
				g->seen = 1;
			} else if (s > g->sum.max) {
				g->sum.total = sat_add64(g->sum.total, busy_span(g->sum.min, g->sum.max));
				g->sum.min = s;
				g->sum.max = e;
			} else if (e > g->sum.max) {
				g->sum.max = e;
			}
			g->sum.count++;
		}
		if (event_stream_next(in[k], &row[k], p->err, p->errlen) < 0)
			ret = -EIO;
	}
	for (int k = 0; k < 3; k++)
		event_stream_close(in[k]);
	if (ret < 0) {
		map_release(&map);
		return ret;
	}
	for (size_t i = 0; i < map.count; i++) {
		struct group *g = &map.groups[i];
		struct stats_row r = { .key = { g->key[0], g->key[1], -1 } };

		r.busy_ns = sat_add64(g->sum.total, busy_span(g->sum.min, g->sum.max));
		r.sum.count = g->sum.count;
		r.label = trace_device_label(p->trace, g->key[0], g->key[1]);
		table_push(&st->devices, &cap, &r);
	}
	map_release(&map);
	return 0;
}

static int compare_keys(const void *pa, const void *pb)
{
	const struct stats_row *a = pa, *b = pb;

	for (int i = 0; i < 3; i++) {
		if (a->key[i] != b->key[i])
			return a->key[i] < b->key[i] ? -1 : 1;
	}
	return 0;
}

static void sort_by_keys(struct stats_table *t)
{
	if (t->count > 1)
		qsort(t->rows, t->count, sizeof(*t->rows), compare_keys);
}

static void stats_streams(struct stats *st, struct group_map *streams)
{
	size_t cap = 0;

	for (size_t i = 0; i < streams->count; i++) {
		struct group *g = &streams->groups[i];
		struct stats_row r = { .key = { g->key[0], g->key[1], g->key[2] }, .sum = g->sum };

		r.busy_ns = g->sum.total;
		if (g->key[2] == KEY_NULL)
			r.label = xstrdup("stream ?");
		else
			r.label = xasprintf("stream %" PRId64, g->key[2]);
		table_push(&st->streams, &cap, &r);
	}
	sort_by_keys(&st->streams);
	sort_by_keys(&st->devices);
}

/*
 * The host pass: the API table, and NVTX ranges with the GPU time of the kernels launched inside
 * them. When the trace has ranges, the operations pass has summed each correlation id's kernels
 * (count and duration) in the launches map; one pass over the API calls and the ranges in time order
 * (ranges first at the same time) then keeps the ranges open on each thread: a range opens an
 * accumulator, each API call adds its correlation id's kernels to every range open on its thread at
 * that time, and a range that has ended folds into the row of its text. Nested ranges each count
 * their launches (inclusive time, as a profiler's call tree). Memory: the threads and their open
 * ranges; the map gives its pages back behind the pass.
 */
struct open_range {
	int64_t end;
	size_t row;
	int64_t launched, launched_ns;
};

struct thread_ranges {
	struct open_range *open;
	size_t n, cap;
};

static void close_range(struct stats_table *t, const struct open_range *r)
{
	t->rows[r->row].launched += r->launched;
	t->rows[r->row].launched_ns += r->launched_ns;
}

/* Fold the ranges of thread th that ended by time t into their rows. */
static void close_ended(struct stats_table *t, struct thread_ranges *th, int64_t time)
{
	size_t keep = 0;

	for (size_t i = 0; i < th->n; i++) {
		if (th->open[i].end <= time)
			close_range(t, &th->open[i]);
		else
			th->open[keep++] = th->open[i];
	}
	th->n = keep;
}

/* Whether the trace has NVTX ranges (then the operations pass fills the launches map). */
static int nvtx_ranges(struct pass *p, int64_t *n)
{
	sqlite3_stmt *q;
	int ret = prepare(p, "NVTX statistics", "SELECT count(*) FROM nvtx WHERE end IS NOT NULL", &q);

	*n = 0;
	if (ret < 0)
		return ret;
	if (sqlite3_step(q) == SQLITE_ROW)
		*n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return 0;
}

/* The launches map, sized by each file's kernel correlation ids (one scan of that column). */
static int launches_new(struct pass *p, struct corr_map **out)
{
	size_t n = trace_count(p->trace);
	int64_t *lo = xmalloc((n ? n : 1) * sizeof(*lo)), *hi = xmalloc((n ? n : 1) * sizeof(*hi));
	uint64_t *ids = xcalloc(n ? n : 1, sizeof(*ids));
	sqlite3_stmt *q;
	int rc, ret;

	for (size_t t = 0; t < n; t++) {
		lo[t] = INT64_MAX;
		hi[t] = INT64_MIN;
	}
	ret = prepare(p, "NVTX statistics", "SELECT traceId, correlationId FROM kernels WHERE correlationId IS NOT NULL",
		      &q);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(q, 0), c = sqlite3_column_int64(q, 1);

		progress_tick(&p->progress);
		if (t < 0 || (size_t)t >= n)
			continue;
		if (c < lo[t])
			lo[t] = c;
		if (c > hi[t])
			hi[t] = c;
		ids[t]++;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		ret = sql_error(p, "NVTX statistics");
	else if (corr_map_new(out, lo, hi, ids, n) < 0)
		ret = -ENOMEM;
out:
	free(lo);
	free(hi);
	free(ids);
	return ret;
}

static const char *const api_cols[] = { "end", "nameId", "globalTid", "correlationId" };
static const char *const range_cols[] = { "end", "globalTid", "eventType", "text" };

/* The host pass's state: the API table's groups, and the NVTX ranges open on each thread. */
struct host_pass {
	struct pass *p;
	struct stats *st;
	struct corr_map *launches;		/* NULL: no NVTX table (no launches to credit) */
	struct group_map api;			/* (traceId, nameId): the API table's groups */
	struct value_budget api_values;
	struct strtab texts;			/* the rows' labels */
	struct group_map thread_index;		/* (traceId, globalTid); merged: threads */
	struct thread_ranges *threads;
	size_t nthreads, cap;
};

/* The API table: every call with a start and an end, by name; each widens the span. */
static void host_api_call(struct host_pass *h, const struct event_row *r)
{
	int64_t akey[3] = { r->trace_id, event_int(r, 1, KEY_NULL), 0 };
	struct group *g = map_get(&h->api, akey, 1);

	summary_add(&g->sum, r->v[0] - r->start, 0);
	value_counts_add(&g->values, &h->api_values, r->v[0] - r->start);
	if (r->start < h->st->start)
		h->st->start = r->start;
	if (r->v[0] > h->st->end)
		h->st->end = r->v[0];
}

/* Rows the NVTX table ignores: a range without a proper span or of another kind (k 0), a call
 * without a correlation id (k 1). */
static int host_ignored(int k, const struct event_row *r)
{
	if (k == 1)
		return event_null(r, 3);
	return event_null(r, 0) || (r->null & EVENT_START_NULL) || r->v[0] < r->start ||
	       (!event_null(r, 2) && r->v[2] != 59 && r->v[2] != 60);
}

/* A call that launched kernels credits their count and time to the ranges open on its thread. */
static void host_launch(struct host_pass *h, const struct event_row *r, const int64_t *key)
{
	uint64_t *w = corr_map_at(h->launches, (size_t)r->trace_id, r->v[3]);
	struct thread_ranges *th;
	struct group *g;

	/* an API call that launched no kernel, on a thread with no range: nothing to add */
	if (!w || !*w || !(g = map_get(&h->thread_index, key, 0)))
		return;
	th = &h->threads[g->merged];
	close_ended(&h->st->nvtx, th, r->start);
	for (size_t i = 0; i < th->n; i++) {
		th->open[i].launched += (int64_t)(*w >> LAUNCH_DUR_BITS);
		th->open[i].launched_ns += (int64_t)(*w & LAUNCH_DUR_MAX);
	}
}

/* A range opens on its thread (those that ended before it close) and counts in its text's row. */
static void host_range(struct host_pass *h, const struct event_row *r, const int64_t *key)
{
	struct group *g = map_get(&h->thread_index, key, 1);
	struct thread_ranges *th;
	size_t at;

	if (!g->seen) {
		g->seen = 1;
		g->merged = h->nthreads;
		h->threads = xrealloc(h->threads, (h->nthreads + 1) * sizeof(*h->threads));
		h->threads[h->nthreads++] = (struct thread_ranges){ 0 };
	}
	th = &h->threads[g->merged];
	close_ended(&h->st->nvtx, th, r->start);
	at = row_for_label(&h->texts, &h->st->nvtx, &h->cap, r->text ? r->text : "(unnamed)");
	summary_add(&h->st->nvtx.rows[at].sum, r->v[0] - r->start, 0);
	if (th->n == th->cap) {
		th->cap = th->cap ? th->cap * 2 : 16;
		th->open = xrealloc(th->open, th->cap * sizeof(*th->open));
	}
	th->open[th->n++] = (struct open_range){ .end = r->v[0], .row = at };
}

/* One host row: k 0 an NVTX range, k 1 an API call. */
static void host_row(struct host_pass *h, int k, const struct event_row *r)
{
	int64_t key[3];

	if (k == 1 && !event_null(r, 0) && !(r->null & EVENT_START_NULL))
		host_api_call(h, r);
	if (!h->launches || host_ignored(k, r))
		return;
	key[0] = r->trace_id;
	key[1] = event_int(r, k == 0 ? 1 : 2, KEY_NULL);
	key[2] = 0;
	if (k == 1)
		host_launch(h, r, key);
	else
		host_range(h, r, key);
}

static int stats_host(struct pass *p, struct stats *st, struct corr_map *launches)
{
	struct host_pass h = { .p = p, .st = st, .launches = launches };
	struct event_stream *in[2] = { NULL };
	const struct event_row *row[2] = { NULL };
	int ret;

	ret = launches ? event_stream_open(p->trace, "nvtx", range_cols, 4, 0, 3, &in[0], p->err, p->errlen) : 0;
	if (!ret)
		ret = event_stream_open(p->trace, "api_calls", api_cols, 4, 0, -1, &in[1], p->err, p->errlen);
	for (int k = 0; k < 2 && !ret; k++)
		ret = in[k] && event_stream_next(in[k], &row[k], p->err, p->errlen) < 0 ? -EIO : 0;
	while (!ret) {
		/* a range before an API call at the same time */
		int k = row[0] && (!row[1] || event_compare(row[0], row[1], 0) <= 0) ? 0 : row[1] ? 1 : -1;

		if (k < 0)
			break;
		progress_tick(&p->progress);
		host_row(&h, k, row[k]);
		if (event_stream_next(in[k], &row[k], p->err, p->errlen) < 0)
			ret = -EIO;
	}
	for (size_t t = 0; t < h.nthreads; t++) {
		for (size_t i = 0; i < h.threads[t].n; i++)
			close_range(&st->nvtx, &h.threads[t].open[i]);
		free(h.threads[t].open);
	}
	free(h.threads);
	for (int k = 0; k < 2; k++)
		event_stream_close(in[k]);
	strtab_release(&h.texts);
	map_release(&h.thread_index);
	if (ret >= 0) {
		sort_rows(&st->nvtx, NULL);
		ret = api_table(p, st, &h.api, &h.api_values);
	}
	map_release(&h.api);
	return ret;
}

/* An empty scope has no span: 0, 0 rather than the sentinels. */
static void fix_span(struct stats *st)
{
	if (st->start > st->end)
		st->start = st->end = 0;
}

void stats_keep(struct trace *trace)
{
	const struct event_columns sets[] = {
		{ "kernels", kernel_cols, sizeof(kernel_cols) / sizeof(kernel_cols[0]), 3, -1 },
		{ "copies", copy_cols, sizeof(copy_cols) / sizeof(copy_cols[0]), 3, -1 },
		{ "sets", set_cols, sizeof(set_cols) / sizeof(set_cols[0]), 3, -1 },
		{ "api_calls", api_cols, sizeof(api_cols) / sizeof(api_cols[0]), 0, -1 },
		{ "nvtx", range_cols, sizeof(range_cols) / sizeof(range_cols[0]), 0, 3 },
	};

	event_streams_keep(trace, sets, sizeof(sets) / sizeof(sets[0]));
}

int stats_compute(struct trace *trace, struct stats **out, char *err, size_t errlen)
{
	struct pass p = { .trace = trace, .err = err, .errlen = errlen };
	struct group_map streams = { 0 };
	struct op_tables tables = { .streams = &streams };
	struct stats *st = xcalloc(1, sizeof(*st));
	int64_t api = 0, nvtx = 0, kernels = 0, nranges = 0;
	int ret;

	*out = NULL;
	st->ntraces = trace_count(trace);
	st->start = INT64_MAX;
	st->end = INT64_MIN;
	if (progress_visible()) {
		int64_t ops;

		kernels = view_rows(&p, "kernels");
		ops = kernels + view_rows(&p, "copies") + view_rows(&p, "sets");
		api = view_rows(&p, "api_calls");
		nvtx = view_rows(&p, "nvtx");
		/* every pass ticks per row: the operations and API calls once; with NVTX ranges, the
		 * kernels' correlation ids and the ranges too (the syncs' span is their summary's) */
		progress_begin(&p.progress, "stats", "events", ops + api + (nvtx ? kernels + nvtx : 0));
		sqlite3_progress_handler(trace_db(trace), 1 << 20, on_sqlite_progress, &p.progress);
	}
	ret = nvtx_ranges(&p, &nranges);
	if (!ret && nranges)
		ret = launches_new(&p, &tables.launches);
	if (!ret)
		ret = operations_pass(&p, st, &tables);
	if (!ret)
		ret = stats_kernels(&p, st, &tables.kernels, &tables.kernel_values);
	if (!ret)
		ret = stats_memops(&p, st, &tables.memops, &tables.memop_values);
	if (!ret)
		ret = widen_by(&p, st, "syncs");
	if (!ret)
		stats_streams(st, &streams);
	if (!ret)
		ret = stats_host(&p, st, tables.launches);
	sqlite3_progress_handler(trace_db(trace), 0, NULL, NULL);
	progress_end(&p.progress);
	map_release(&tables.kernels);
	map_release(&tables.memops);
	corr_map_free(tables.launches);
	map_release(&streams);
	if (ret < 0) {
		stats_free(st);
		return ret;
	}
	fix_span(st);
	*out = st;
	return 0;
}

/* The devices' span widened by API calls and syncs; then *out is st, or st is freed on failure. */
static int widen_span(struct pass *p, struct stats *st, struct stats **out)
{
	int ret = widen_by(p, st, "api_calls");

	if (!ret)
		ret = widen_by(p, st, "syncs");
	if (ret < 0) {
		stats_free(st);
		return ret;
	}
	sort_by_keys(&st->devices);
	fix_span(st);
	*out = st;
	return 0;
}

int stats_compute_devices(struct trace *trace, struct stats **out, char *err, size_t errlen)
{
	struct pass p = { .trace = trace, .err = err, .errlen = errlen };
	struct stats *st = xcalloc(1, sizeof(*st));
	int ret;

	*out = NULL;
	st->ntraces = trace_count(trace);
	st->start = INT64_MAX;
	st->end = INT64_MIN;
	ret = operations_pass(&p, st, NULL);
	if (ret < 0) {
		stats_free(st);
		return ret;
	}
	return widen_span(&p, st, out);
}

void stats_free(struct stats *st)
{
	if (!st)
		return;
	table_release(&st->kernels);
	table_release(&st->memops);
	table_release(&st->api);
	table_release(&st->devices);
	table_release(&st->streams);
	table_release(&st->nvtx);
	stats_efficiency_free(st->efficiency);
	free(st);
}
