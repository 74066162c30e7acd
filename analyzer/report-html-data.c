/*
 * What the HTML report draws beyond the report header and the findings (report-html.h), read from
 * the canonical views in four passes:
 *
 *   kernel names   GROUP BY traceId, nameId, then merged by name (as gpt-trace stats does)
 *   kernel medians every kernel's duration in duration order, counted for the top names only
 *   copies         GROUP BY copyKind, srcKind, dstKind; memsets GROUP BY memKind
 *   timeline       every operation in (trace, device, start) order: each stream's busy time per
 *                  bucket and kind of work, each device's union of busy time, its gaps (per bucket
 *                  and by length)
 *
 * Memory grows with the streams, kernel names and buckets, never with the events: SQLite groups
 * and sorts (spilling to temporary files), this code keeps running sums.
 */
#include "analyzer/report-html.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* ---- a map from three int64 keys to an index ---- */

struct keymap {
	int64_t (*keys)[3];
	size_t *values;		/* index + 1; 0: empty slot */
	size_t cap, count;
};

static uint64_t key_hash(const int64_t *k)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < 3; i++) {
		h ^= (uint64_t)k[i];
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	return h;
}

static void keymap_put(struct keymap *m, const int64_t *key, size_t value);

static void keymap_grow(struct keymap *m)
{
	struct keymap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->values = xcalloc(m->cap, sizeof(*m->values));
	m->count = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.values[i])
			keymap_put(m, old.keys[i], old.values[i] - 1);
	free(old.keys);
	free(old.values);
}

/* The slot of key: where it is, or the empty slot where it would go. */
static size_t keymap_slot(const struct keymap *m, const int64_t *key)
{
	size_t i = (size_t)key_hash(key) & (m->cap - 1);

	while (m->values[i] && memcmp(m->keys[i], key, sizeof(m->keys[i])))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void keymap_put(struct keymap *m, const int64_t *key, size_t value)
{
	size_t i;

	if ((m->count + 1) * 2 > m->cap)
		keymap_grow(m);
	i = keymap_slot(m, key);
	if (!m->values[i]) {
		memcpy(m->keys[i], key, sizeof(m->keys[i]));
		m->count++;
	}
	m->values[i] = value + 1;
}

/* The value of key, or -1. */
static ssize_t keymap_get(const struct keymap *m, const int64_t *key)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = keymap_slot(m, key);
	return m->values[i] ? (ssize_t)(m->values[i] - 1) : -1;
}

static void keymap_release(struct keymap *m)
{
	free(m->keys);
	free(m->values);
}

/* ---- passes ---- */

struct reader {
	struct trace *trace;
	struct report_charts *charts;
	char *err;
	size_t errlen;
};

static int sql_error(struct reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "cannot read %s: %s", what, sqlite3_errmsg(trace_db(r->trace)));
	return -EIO;
}

static int prepare(struct reader *r, const char *what, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(trace_db(r->trace), sql, -1, st, NULL) != SQLITE_OK)
		return sql_error(r, what);
	return 0;
}

static int64_t col_or(sqlite3_stmt *st, int col, int64_t null_value)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? null_value : sqlite3_column_int64(st, col);
}

/* A (traceId, nameId) group of kernels. */
struct kernel_group {
	int64_t trace_id, name_id;	/* name_id -1: NULL */
	int64_t count, total, min, max;
	char *name;
	size_t merged;			/* index into the merged list */
	int nccl;
};

/* Kernels merged by name, before the top ones are chosen. */
struct kernel_name {
	struct chart_kernel k;
	size_t top;			/* 1 + index in charts->kernels, 0 when not shown */
	size_t unsorted;		/* its index before the sort by total time */
	int64_t seen;			/* median pass: durations seen so far */
	double lo;
};

struct kernel_pass {
	struct kernel_group *groups;
	size_t ngroups;
	struct keymap by_key;		/* (traceId, nameId, 0) -> group */
	struct kernel_name *names;
	size_t nnames;
};

static int compare_group_name(const void *pa, const void *pb)
{
	const struct kernel_group *a = pa, *b = pb;

	return strcmp(a->name, b->name);
}

static int compare_name_total(const void *pa, const void *pb)
{
	const struct kernel_name *a = pa, *b = pb;

	if (a->k.total_ns != b->k.total_ns)
		return a->k.total_ns > b->k.total_ns ? -1 : 1;
	return strcmp(a->k.name, b->k.name);
}

static char *lookup_name(sqlite3_stmt *st, int64_t trace_id, int64_t name_id)
{
	char *s = NULL;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, trace_id);
	sqlite3_bind_int64(st, 2, name_id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		s = xstrdup((const char *)sqlite3_column_text(st, 0));
	return s;
}

/* Groups by (traceId, nameId), their names, the merge by name, the top CHART_TOP_KERNELS. */
static int read_kernel_names(struct reader *r, struct kernel_pass *kp)
{
	struct report_charts *c = r->charts;
	sqlite3_stmt *st, *names;
	size_t cap = 0, *moved;
	int rc, ret;

	ret = prepare(r, "kernel statistics",
		      "SELECT traceId, nameId, count(*), sum(end - start), min(end - start), max(end - start) "
		      "FROM kernels WHERE start IS NOT NULL AND end IS NOT NULL GROUP BY traceId, nameId", &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (kp->ngroups == cap) {
			cap = cap ? cap * 2 : 64;
			kp->groups = xrealloc(kp->groups, cap * sizeof(*kp->groups));
		}
		kp->groups[kp->ngroups++] = (struct kernel_group){
			.trace_id = sqlite3_column_int64(st, 0), .name_id = col_or(st, 1, -1),
			.count = sqlite3_column_int64(st, 2), .total = sqlite3_column_int64(st, 3),
			.min = sqlite3_column_int64(st, 4), .max = sqlite3_column_int64(st, 5),
		};
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_error(r, "kernel statistics");
	ret = prepare(r, "kernel names", "SELECT value FROM strings WHERE traceId = ?1 AND id = ?2", &names);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < kp->ngroups; i++) {
		struct kernel_group *g = &kp->groups[i];

		g->name = g->name_id < 0 ? NULL : lookup_name(names, g->trace_id, g->name_id);
		if (!g->name) {
			char buf[64];

			snprintf(buf, sizeof(buf), g->name_id < 0 ? "(unnamed)" : "(name id %" PRId64 ")", g->name_id);
			g->name = xstrdup(buf);
		}
		g->nccl = !strncmp(g->name, "nccl", 4);
	}
	sqlite3_finalize(names);

	/* merge by name: sort the groups by name, one entry per run of equal names */
	if (kp->ngroups)
		qsort(kp->groups, kp->ngroups, sizeof(*kp->groups), compare_group_name);
	kp->names = xcalloc(kp->ngroups ? kp->ngroups : 1, sizeof(*kp->names));
	for (size_t i = 0; i < kp->ngroups; i++) {
		struct kernel_group *g = &kp->groups[i];
		int64_t key[3] = { g->trace_id, g->name_id, 0 };
		struct kernel_name *n;

		if (!kp->nnames || strcmp(kp->names[kp->nnames - 1].k.name, g->name)) {
			n = &kp->names[kp->nnames];
			n->k = (struct chart_kernel){ .name = g->name, .min_ns = g->min, .max_ns = g->max };
			n->unsorted = kp->nnames++;
		}
		g->merged = kp->nnames - 1;
		n = &kp->names[kp->nnames - 1];
		n->k.count += g->count;
		n->k.total_ns = sat_add64(n->k.total_ns, g->total);
		if (g->min < n->k.min_ns)
			n->k.min_ns = g->min;
		if (g->max > n->k.max_ns)
			n->k.max_ns = g->max;
		c->kernel_ns = sat_add64(c->kernel_ns, g->total);
		keymap_put(&kp->by_key, key, i);
	}
	c->kernel_names = (int64_t)kp->nnames;
	/* the top names first; groups follow their name to its new place */
	if (kp->nnames)
		qsort(kp->names, kp->nnames, sizeof(*kp->names), compare_name_total);
	moved = xcalloc(kp->nnames ? kp->nnames : 1, sizeof(*moved));
	for (size_t i = 0; i < kp->nnames; i++)
		moved[kp->names[i].unsorted] = i;
	for (size_t i = 0; i < kp->ngroups; i++)
		kp->groups[i].merged = moved[kp->groups[i].merged];
	free(moved);
	c->nkernels = kp->nnames < CHART_TOP_KERNELS ? kp->nnames : CHART_TOP_KERNELS;
	c->kernels = xcalloc(c->nkernels ? c->nkernels : 1, sizeof(*c->kernels));
	for (size_t i = 0; i < c->nkernels; i++)
		kp->names[i].top = i + 1;
	return 0;
}

/* The median of each top name: durations in order, the middle one (or the mean of the two). */
static int read_kernel_medians(struct reader *r, struct kernel_pass *kp)
{
	struct report_charts *c = r->charts;
	sqlite3_stmt *st;
	int rc, ret;

	if (!c->nkernels)
		return 0;
	ret = prepare(r, "kernel medians",
		      "SELECT traceId, nameId, end - start FROM kernels "
		      "WHERE start IS NOT NULL AND end IS NOT NULL ORDER BY 3", &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[3] = { sqlite3_column_int64(st, 0), col_or(st, 1, -1), 0 };
		ssize_t g = keymap_get(&kp->by_key, key);
		struct kernel_name *n;
		int64_t dur = sqlite3_column_int64(st, 2);

		if (g < 0)
			continue;
		n = &kp->names[kp->groups[g].merged];
		if (!n->top)
			continue;
		if (n->seen == (n->k.count - 1) / 2)
			n->lo = (double)dur;
		if (n->seen == n->k.count / 2)
			n->k.median_ns = (n->lo + (double)dur) / 2;
		n->seen++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_error(r, "kernel medians");
	for (size_t i = 0; i < c->nkernels; i++) {
		c->kernels[i] = kp->names[i].k;
		c->kernels[i].name = xstrdup(kp->names[i].k.name);
	}
	return 0;
}

static void kernel_pass_release(struct kernel_pass *kp)
{
	for (size_t i = 0; i < kp->ngroups; i++)
		free(kp->groups[i].name);
	free(kp->groups);
	free(kp->names);
	keymap_release(&kp->by_key);
}

static int compare_copy_total(const void *pa, const void *pb)
{
	const struct chart_copy *a = pa, *b = pb;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return a->copy_kind != b->copy_kind ? (a->copy_kind < b->copy_kind ? -1 : 1) : 0;
}

static int read_copies(struct reader *r)
{
	struct report_charts *c = r->charts;
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, ret;

	ret = prepare(r, "copies",
		      "SELECT copyKind, srcKind, dstKind, count(*), sum(bytes), sum(end - start) FROM copies "
		      "WHERE start IS NOT NULL AND end IS NOT NULL GROUP BY 1, 2, 3 "
		      "UNION ALL SELECT -1, memKind, NULL, count(*), sum(bytes), sum(end - start) FROM sets "
		      "WHERE start IS NOT NULL AND end IS NOT NULL GROUP BY 2", &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (c->ncopies == cap) {
			cap = cap ? cap * 2 : 16;
			c->copies = xrealloc(c->copies, cap * sizeof(*c->copies));
		}
		c->copies[c->ncopies++] = (struct chart_copy){
			.copy_kind = col_or(st, 0, -1), .src_kind = col_or(st, 1, -1), .dst_kind = col_or(st, 2, -1),
			.count = sqlite3_column_int64(st, 3), .bytes = col_or(st, 4, 0),
			.total_ns = sqlite3_column_int64(st, 5),
		};
		/* a copy with an unknown kind is not a memset */
		if (c->copies[c->ncopies - 1].copy_kind == -1 && sqlite3_column_type(st, 0) == SQLITE_NULL)
			c->copies[c->ncopies - 1].copy_kind = 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_error(r, "copies");
	if (c->ncopies)
		qsort(c->copies, c->ncopies, sizeof(*c->copies), compare_copy_total);
	return 0;
}

/* ---- the timeline ---- */

/* end - start, held at INT64_MAX or INT64_MIN rather than overflowing on a corrupt trace's times */
static int64_t span_of(int64_t start, int64_t end)
{
	int64_t span;

	if (__builtin_sub_overflow(end, start, &span))
		return end > start ? INT64_MAX : INT64_MIN;
	return span;
}

/* Add the overlap of [s, e) with each bucket of w to v[bucket * stride]. */
static void spread(const struct chart_window *w, int64_t s, int64_t e, int64_t *v, size_t stride)
{
	int64_t b;

	if (s < w->start)
		s = w->start;
	if (e > w->end)
		e = w->end;
	if (e <= s)
		return;
	for (b = (s - w->start) / w->width; b < CHART_BUCKETS; b++) {
		int64_t lo = sat_add64(w->start, b * w->width), hi = sat_add64(lo, w->width);

		if (lo >= e)
			break;
		v[(size_t)b * stride] += (e < hi ? e : hi) - (s > lo ? s : lo);
	}
}

static void gap_bins_init(struct chart_gap_bin *bins)
{
	static const int steps[3] = { 1, 2, 5 };
	int64_t decade = 1000;

	bins[0] = (struct chart_gap_bin){ 0, 1000, 0, 0 };
	for (int i = 1; i < CHART_GAP_BINS; i++) {
		bins[i].lo_ns = steps[(i - 1) % 3] * decade;
		if ((i - 1) % 3 == 2)
			decade *= 10;
		bins[i].hi_ns = i + 1 < CHART_GAP_BINS ? steps[i % 3] * decade : 0;
	}
}

static void gap_bins_add(struct chart_gap_bin *bins, int64_t gap)
{
	int i = CHART_GAP_BINS - 1;

	while (i > 0 && gap < bins[i].lo_ns)
		i--;
	bins[i].count++;
	bins[i].ns += gap;
}

static struct chart_lane *lane_get(struct report_charts *c, struct keymap *lanes, size_t *cap, int64_t trace_id,
				   int64_t device, int64_t stream)
{
	int64_t key[3] = { trace_id, device, stream };
	ssize_t i = keymap_get(lanes, key);
	struct chart_lane *l;

	if (i >= 0)
		return &c->lanes[i];
	if (stream != -1 && c->nlanes >= CHART_LANES_MAX)	/* the rest of the device's streams, merged */
		return lane_get(c, lanes, cap, trace_id, device, -1);
	if (c->nlanes == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		c->lanes = xrealloc(c->lanes, *cap * sizeof(*c->lanes));
	}
	l = &c->lanes[c->nlanes];
	*l = (struct chart_lane){ .trace_id = trace_id, .device = device, .stream = stream };
	for (size_t w = 0; w < c->nwindows; w++)
		l->busy[w] = xcalloc(CHART_BUCKETS, sizeof(*l->busy[w]));
	keymap_put(lanes, key, c->nlanes);
	return &c->lanes[c->nlanes++];
}

static int compare_lanes(const void *pa, const void *pb)
{
	const struct chart_lane *a = pa, *b = pb;

	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if ((a->stream == -1) != (b->stream == -1))	/* the merged lane last */
		return a->stream == -1 ? 1 : -1;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

static int read_timeline(struct reader *r, const struct kernel_pass *kp)
{
	struct report_charts *c = r->charts;
	struct keymap lanes = { 0 };
	struct chart_device *dev = NULL;
	size_t lane_cap = 0, dev_cap = 0;
	int64_t dev_end = 0;
	sqlite3_stmt *st;
	int rc, ret;

	ret = prepare(r, "the timeline",
		      "SELECT traceId, deviceId, streamId, start, end, nameId, 0 FROM kernels WHERE end >= start "
		      "UNION ALL SELECT traceId, deviceId, streamId, start, end, NULL, 1 FROM copies WHERE end >= start "
		      "UNION ALL SELECT traceId, deviceId, streamId, start, end, NULL, 2 FROM sets WHERE end >= start "
		      "ORDER BY 1, 2, 4", &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t t = sqlite3_column_int64(st, 0), d = col_or(st, 1, -1), s = sqlite3_column_int64(st, 3);
		int64_t e = sqlite3_column_int64(st, 4), kind = sqlite3_column_int64(st, 6);
		struct chart_lane *l = lane_get(c, &lanes, &lane_cap, t, d, col_or(st, 2, -1));
		int work = kind ? CHART_COPY : CHART_COMPUTE;

		if (!kind) {
			int64_t key[3] = { t, col_or(st, 5, -1), 0 };
			ssize_t g = keymap_get(&kp->by_key, key);

			if (g >= 0 && kp->groups[g].nccl)
				work = CHART_COMM;
		}
		l->ops++;
		l->busy_ns = sat_add64(l->busy_ns, span_of(s, e));
		for (size_t w = 0; w < c->nwindows; w++)
			spread(&c->windows[w], s, e, &l->busy[w][0][work], CHART_WORKS);

		if (!dev || dev->trace_id != t || dev->device != d) {
			if (dev)
				dev->last = dev_end;
			if (c->ndevices == dev_cap) {
				dev_cap = dev_cap ? dev_cap * 2 : 4;
				c->devices = xrealloc(c->devices, dev_cap * sizeof(*c->devices));
			}
			dev = &c->devices[c->ndevices++];
			*dev = (struct chart_device){ .trace_id = t, .device = d, .first = s };
			for (size_t w = 0; w < c->nwindows; w++)
				dev->idle[w] = xcalloc(CHART_BUCKETS, sizeof(*dev->idle[w]));
			dev_end = s;
		}
		if (s > dev_end) {
			dev->gaps++;
			dev->idle_ns = sat_add64(dev->idle_ns, span_of(dev_end, s));
			gap_bins_add(c->gap_bins, s - dev_end);
			for (size_t w = 0; w < c->nwindows; w++)
				spread(&c->windows[w], dev_end, s, dev->idle[w], 1);
			dev_end = s;
		}
		if (e > dev_end) {
			dev->busy_ns = sat_add64(dev->busy_ns, span_of(dev_end, e));
			dev_end = e;
		}
	}
	if (dev)
		dev->last = dev_end;
	sqlite3_finalize(st);
	keymap_release(&lanes);
	if (rc != SQLITE_DONE)
		return sql_error(r, "the timeline");
	if (c->nlanes)
		qsort(c->lanes, c->nlanes, sizeof(*c->lanes), compare_lanes);
	return 0;
}

/* Cut [start, end) into CHART_BUCKETS buckets of a whole number of ns. */
static struct chart_window window_of(int64_t start, int64_t end)
{
	int64_t span, width, len;

	/* held at INT64_MAX rather than overflowing on a corrupt trace's times */
	if (__builtin_sub_overflow(end, start, &span))
		span = INT64_MAX;
	width = span / CHART_BUCKETS + (span % CHART_BUCKETS != 0);
	if (width < 1)
		width = 1;
	if (__builtin_mul_overflow(width, (int64_t)CHART_BUCKETS, &len))
		len = INT64_MAX;
	return (struct chart_window){ start, sat_add64(start, len), width };
}

int report_charts_read(struct trace *trace, struct report_header *hdr, char *err, size_t errlen)
{
	struct report_charts *c = xcalloc(1, sizeof(*c));
	struct reader r = { trace, c, err, errlen };
	struct kernel_pass kp = { 0 };
	int64_t steady_start = 0, steady_end = 0;
	int ret;

	report_charts_free(hdr->charts);
	hdr->charts = NULL;
	gap_bins_init(c->gap_bins);
	if (hdr->ndevices && hdr->end > hdr->start) {
		c->windows[c->nwindows++] = window_of(hdr->start, hdr->end);
		if (hdr->phases)
			phases_steady_window(hdr->phases, &steady_start, &steady_end);
		/* zoom in when the steady state is less than half the span: start-up often dwarfs it */
		if (steady_end > steady_start && 2 * (steady_end - steady_start) < hdr->end - hdr->start)
			c->windows[c->nwindows++] = window_of(steady_start, steady_end);
	}
	ret = read_kernel_names(&r, &kp);
	if (!ret)
		ret = read_kernel_medians(&r, &kp);
	if (!ret)
		ret = read_copies(&r);
	if (!ret)
		ret = read_timeline(&r, &kp);
	kernel_pass_release(&kp);
	if (ret < 0) {
		report_charts_free(c);
		return ret;
	}
	hdr->charts = c;
	return 0;
}

void report_charts_free(struct report_charts *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nlanes; i++)
		for (size_t w = 0; w < CHART_WINDOWS; w++)
			free(c->lanes[i].busy[w]);
	for (size_t i = 0; i < c->ndevices; i++)
		for (size_t w = 0; w < CHART_WINDOWS; w++)
			free(c->devices[i].idle[w]);
	for (size_t i = 0; i < c->nkernels; i++)
		free(c->kernels[i].name);
	free(c->lanes);
	free(c->devices);
	free(c->kernels);
	free(c->copies);
	free(c);
}
