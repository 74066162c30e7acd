/*
 * gpt-trace stats: the summary tables of stats.h, computed (the groups they are made with:
 * groups.c; their output: write.c).
 *
 * Every table is made the same way: rows go through a small hash table keyed by up to three
 * integers (traceId and nameId, or the copy kinds, or a stream) that keeps count, sum, extremes and
 * a running variance per key; groups that share a label across traces (the same kernel name in two
 * per-process files) are then merged. Kernels, copies and memsets come from one operations pass in
 * time order over the loader's event streams (analyzer/loader/events.h), each table read once,
 * which also makes each device's busy time (the union of its operations' intervals) and the stream
 * table; API calls (and NVTX ranges) from one host pass over their streams (stats_host); syncs from
 * one unsorted scan. With stats_keep(), the scan that finds each table's storage order keeps the
 * columns these passes read, so SQLite reads each table once. Medians come from the same passes:
 * each group counts its distinct durations (a kernel's jitter takes few values), and a row's median
 * is read from its groups' counts in order (medians_from_counts). A table whose durations take more
 * than VALUE_COUNTS_MAX distinct values in all takes a second pass: the durations sorted by
 * duration alone; each row finds its group in the hash, counts its position, and the group's median
 * is read when its middle position passes by. Memory is the hash (distinct keys, and at most
 * VALUE_COUNTS_MAX counted values), not the events.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyzer/stats/stats.h"
#include "analyzer/stats/groups.h"
#include "analyzer/stats/efficiency.h"
#include "common/corr-map.h"
#include "common/value-counts.h"
#include "analyzer/loader/events.h"
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

static int on_sqlite_progress(void *arg)
{
	progress_update(arg);
	return 0;
}

/* ---- the tables ---- */

/* The kernel table from the operations pass's groups (traceId, nameId): one row per name. */
static int stats_kernels(struct stats_pass *p, struct stats *st, struct group_map *map, const struct value_budget *values)
{
	stats_merge_by_name(p, map, &st->kernels);
	stats_sort_rows(&st->kernels, map);
	for (size_t i = 0; i < st->kernels.count; i++)
		st->kernel_ns += st->kernels.rows[i].sum.total;
	if (!values->over) {
		stats_medians_from_counts(map, &st->kernels);
		return 0;
	}
	return stats_pass_medians(p, "kernel medians", "SELECT traceId, nameId, 0, dur FROM kernels ORDER BY dur", map,
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
static int stats_memops(struct stats_pass *p, struct stats *st, struct group_map *map, const struct value_budget *values)
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
		stats_table_push(&st->memops, &cap, &r);
	}
	stats_sort_rows(&st->memops, map);
	if (!values->over) {
		stats_medians_from_counts(map, &st->memops);
		return 0;
	}
	return stats_pass_medians(p, "memory operation medians",
			    "SELECT copyKind, srcKind, dstKind, dur FROM copies "
			    "UNION ALL SELECT -1, memKind, NULL, dur FROM sets ORDER BY 4", map, &st->memops);
}

/* The API table from its groups (traceId, nameId): one row per name. */
static int api_table(struct stats_pass *p, struct stats *st, struct group_map *map, const struct value_budget *values)
{
	stats_merge_by_name(p, map, &st->api);
	stats_sort_rows(&st->api, map);
	if (!values->over) {
		stats_medians_from_counts(map, &st->api);
		return 0;
	}
	return stats_pass_medians(p, "API medians", "SELECT traceId, nameId, 0, dur FROM api_calls ORDER BY dur", map,
			    &st->api);
}

/* Widen the span to the first start and last end of every file's rows of view. */
static int widen_by(struct stats_pass *p, struct stats *st, const char *view)
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
		g = group_map_get(&t->kernels, key, 1);
		stats_summary_add(&g->sum, dur, 0);
		value_counts_add(&g->values, &t->kernel_values, dur);
	} else {
		key[0] = view == 1 ? event_int(r, 4, KEY_NULL) : -1;
		key[1] = event_int(r, view == 1 ? 5 : 4, KEY_NULL);
		key[2] = view == 1 ? event_int(r, 6, KEY_NULL) : KEY_NULL;
		g = group_map_get(&t->memops, key, 1);
		stats_summary_add(&g->sum, dur, event_int(r, 3, 0));
		value_counts_add(&g->values, &t->memop_values, dur);
	}
	stats_summary_add(&group_map_get(t->streams, skey, 1)->sum, dur, 0);
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

static int operations_pass(struct stats_pass *p, struct stats *st, struct op_tables *tables)
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
			g = group_map_get(&map, key, 1);
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
		group_map_release(&map);
		return ret;
	}
	for (size_t i = 0; i < map.count; i++) {
		struct group *g = &map.groups[i];
		struct stats_row r = { .key = { g->key[0], g->key[1], -1 } };

		r.busy_ns = sat_add64(g->sum.total, busy_span(g->sum.min, g->sum.max));
		r.sum.count = g->sum.count;
		r.label = trace_device_label(p->trace, g->key[0], g->key[1]);
		stats_table_push(&st->devices, &cap, &r);
	}
	group_map_release(&map);
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
		stats_table_push(&st->streams, &cap, &r);
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
static int nvtx_ranges(struct stats_pass *p, int64_t *n)
{
	sqlite3_stmt *q;
	int ret = stats_pass_prepare(p, "NVTX statistics", "SELECT count(*) FROM nvtx WHERE end IS NOT NULL", &q);

	*n = 0;
	if (ret < 0)
		return ret;
	if (sqlite3_step(q) == SQLITE_ROW)
		*n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return 0;
}

/* The launches map, sized by each file's kernel correlation ids (one scan of that column). */
static int launches_new(struct stats_pass *p, struct corr_map **out)
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
	ret = stats_pass_prepare(p, "NVTX statistics", "SELECT traceId, correlationId FROM kernels WHERE correlationId IS NOT NULL",
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
		ret = stats_pass_error(p, "NVTX statistics");
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
	struct stats_pass *p;
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
	struct group *g = group_map_get(&h->api, akey, 1);

	stats_summary_add(&g->sum, r->v[0] - r->start, 0);
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
	if (!w || !*w || !(g = group_map_get(&h->thread_index, key, 0)))
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
	struct group *g = group_map_get(&h->thread_index, key, 1);
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
	at = stats_row_for_label(&h->texts, &h->st->nvtx, &h->cap, r->text ? r->text : "(unnamed)");
	stats_summary_add(&h->st->nvtx.rows[at].sum, r->v[0] - r->start, 0);
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

static int stats_host(struct stats_pass *p, struct stats *st, struct corr_map *launches)
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
	group_map_release(&h.thread_index);
	if (ret >= 0) {
		stats_sort_rows(&st->nvtx, NULL);
		ret = api_table(p, st, &h.api, &h.api_values);
	}
	group_map_release(&h.api);
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
	struct stats_pass p = { .trace = trace, .err = err, .errlen = errlen };
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

		kernels = stats_pass_rows(&p, "kernels");
		ops = kernels + stats_pass_rows(&p, "copies") + stats_pass_rows(&p, "sets");
		api = stats_pass_rows(&p, "api_calls");
		nvtx = stats_pass_rows(&p, "nvtx");
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
	group_map_release(&tables.kernels);
	group_map_release(&tables.memops);
	corr_map_free(tables.launches);
	group_map_release(&streams);
	if (ret < 0) {
		stats_free(st);
		return ret;
	}
	fix_span(st);
	*out = st;
	return 0;
}

/* The devices' span widened by API calls and syncs; then *out is st, or st is freed on failure. */
static int widen_span(struct stats_pass *p, struct stats *st, struct stats **out)
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
	struct stats_pass p = { .trace = trace, .err = err, .errlen = errlen };
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
	stats_table_release(&st->kernels);
	stats_table_release(&st->memops);
	stats_table_release(&st->api);
	stats_table_release(&st->devices);
	stats_table_release(&st->streams);
	stats_table_release(&st->nvtx);
	stats_efficiency_free(st->efficiency);
	free(st);
}
