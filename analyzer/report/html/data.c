/*
 * What the HTML report draws beyond the report header and the findings (html.h), read in one
 * pass (two when the medians need the sort):
 *
 *   operations     the kernels, copies and memsets in time order (analyzer/loader/events.h: after
 * the report's walks, from the tables' temporary copies, without SQLite), summed per (traceId,
 * nameId) (then merged by name, as gpt-trace stats does), per copy kind, per stream (busy time per
 * bucket and kind of work) and per device (the union of its busy time, its gaps per bucket and by
 * length) kernel medians from the durations each (traceId, nameId) counted in the first pass
 *                  (value-counts.h); past their budget, every kernel's duration in duration order
 *                  (an SQLite sort), counted for the top names only
 *
 * The sums come out as the former GROUP BY and (trace, device, start) ordered queries gave them:
 * groups in key order, lanes chosen in the order their streams first appear on each device.
 * Memory grows with the streams, kernel names, copy kinds, buckets and distinct kernel durations
 * (at most VALUE_COUNTS_MAX), never with the events. The cross-rank page reads each rank's lanes
 * the same way, over windows it chooses (report_charts_read_windows).
 */
#include "analyzer/report/html/html.h"
#include "common/value-counts.h"
#include "common/key-index.h"
#include "common/util.h"
#include "analyzer/loader/events.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

/* A (traceId, nameId) group of kernels, for the charts (the rules group theirs by device too:
 * rules/kernel-groups.h). */
struct chart_group {
	int64_t trace_id, name_id;	/* name_id -1: NULL */
	int64_t count, total, min, max;
	char *name;
	size_t merged;			/* index into the merged list */
	int nccl;
	struct value_counts *values;	/* its distinct durations (value-counts.h) */
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
	struct chart_group *groups;
	size_t ngroups;
	struct value_budget values;	/* of the groups' counted durations */
	struct key_index by_key;	/* (traceId, nameId) -> group */
	struct kernel_name *names;
	size_t nnames;
};

static int compare_group_name(const void *pa, const void *pb)
{
	const struct chart_group *a = pa, *b = pb;

	return strcmp(a->name, b->name);
}

static int compare_name_total(const void *pa, const void *pb)
{
	const struct kernel_name *a = pa, *b = pb;

	if (a->k.total_ns != b->k.total_ns)
		return a->k.total_ns > b->k.total_ns ? -1 : 1;
	return strcmp(a->k.name, b->k.name);
}

/* A copy of the name of a kernel (its StringIds id), or NULL. */
static char *lookup_name(struct trace *trace, int64_t trace_id, int64_t name_id)
{
	const char *name;
	char err[256];

	return trace_string(trace, trace_id, name_id, &name, err, sizeof(err)) == 0 && name ? xstrdup(name) : NULL;
}

static int compare_group_key(const void *pa, const void *pb)
{
	const struct chart_group *a = pa, *b = pb;

	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	return (a->name_id > b->name_id) - (a->name_id < b->name_id);
}

/* The (traceId, nameId) groups of the operations pass, merged by name; the top CHART_TOP_KERNELS. */
static int merge_kernel_names(struct reader *r, struct kernel_pass *kp)
{
	struct report_charts *c = r->charts;
	size_t *moved;

	/* in key order, as GROUP BY gave them: the sort by name below is not stable */
	if (kp->ngroups)
		qsort(kp->groups, kp->ngroups, sizeof(*kp->groups), compare_group_key);
	/* merge by name: sort the groups by name, one entry per run of equal names */
	if (kp->ngroups)
		qsort(kp->groups, kp->ngroups, sizeof(*kp->groups), compare_group_name);
	kp->names = xcalloc(kp->ngroups ? kp->ngroups : 1, sizeof(*kp->names));
	for (size_t i = 0; i < kp->ngroups; i++) {
		struct chart_group *g = &kp->groups[i];
		int64_t key[KEY_INDEX_WORDS] = { g->trace_id, g->name_id };
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
		key_index_get(&kp->by_key, key, NULL);	/* i: the groups' keys are distinct */
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
	if (!kp->values.over) {
		/* from the counted durations of each top name's groups */
		struct value_counts **sets = xmalloc((kp->ngroups ? kp->ngroups : 1) * sizeof(*sets));

		for (size_t i = 0; i < c->nkernels; i++) {
			size_t n = 0;

			for (size_t g = 0; g < kp->ngroups; g++)
				if (kp->groups[g].merged == i)
					sets[n++] = kp->groups[g].values;
			kp->names[i].k.median_ns = value_counts_median(sets, n, kp->names[i].k.count);
		}
		free(sets);
		goto done;
	}
	ret = prepare(r, "kernel medians",
		      "SELECT traceId, nameId, end - start FROM kernels "
		      "WHERE start IS NOT NULL AND end IS NOT NULL ORDER BY 3", &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[KEY_INDEX_WORDS] = { sqlite3_column_int64(st, 0), col_or(st, 1, -1) };
		size_t g = key_index_find(&kp->by_key, key);
		struct kernel_name *n;
		int64_t dur = sqlite3_column_int64(st, 2);

		if (g == SIZE_MAX)
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
done:
	for (size_t i = 0; i < c->nkernels; i++) {
		c->kernels[i] = kp->names[i].k;
		c->kernels[i].name = xstrdup(kp->names[i].k.name);
	}
	return 0;
}

static void kernel_pass_release(struct kernel_pass *kp)
{
	for (size_t i = 0; i < kp->ngroups; i++) {
		free(kp->groups[i].name);
		value_counts_free(kp->groups[i].values);
	}
	free(kp->groups);
	free(kp->names);
	key_index_release(&kp->by_key);
}

static int compare_copy_total(const void *pa, const void *pb)
{
	const struct chart_copy *a = pa, *b = pb;

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return a->copy_kind != b->copy_kind ? (a->copy_kind < b->copy_kind ? -1 : 1) : 0;
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

/* ---- the operations pass ---- */

/* The columns read (read_operations): end and the keys, then nameId (kernels), bytes and the kinds
 * (copies: copyKind, srcKind, dstKind; memsets: memKind). */
enum { OP_END, OP_DEVICE, OP_STREAM, OP_NAME, OP_BYTES = 3, OP_COPY_KIND, OP_SRC_KIND, OP_DST_KIND,
       OP_MEM_KIND = 4 };

/* A copy kind (or memset kind) and its sums, with the NULLs of its key. */
struct copy_group {
	int memset;			/* 0: a copy (copyKind, srcKind, dstKind); 1: a memset (memKind) */
	int64_t key[3];			/* NULL as 0, flagged in null */
	unsigned null;			/* bit i: key[i] is NULL */
	int64_t count, bytes, total;
};

/* A stream's lane before the lanes are chosen, and when it first ran. */
struct stream_lane {
	struct chart_lane lane;
	int64_t first;
};

struct op_pass {
	struct key_index groups;	/* (traceId, nameId or -1) -> kp->groups */
	struct copy_group *copies;
	size_t ncopies;
	struct stream_lane *lanes;	/* every stream; chosen and merged afterwards */
	size_t nlanes;
	struct key_index lane_index;	/* (traceId, deviceId, streamId) -> lanes */
	struct chart_device *devices;	/* in order of first operation; sorted afterwards */
	int64_t *dev_end;		/* the end of the union so far, per device */
	size_t ndevices;
	struct key_index device_index;	/* (traceId, deviceId) -> devices */
	struct trace *trace;		/* for the kernels' names */
};

static struct chart_group *group_get(struct op_pass *op, struct kernel_pass *kp, int64_t trace_id, int64_t name_id)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, name_id };
	size_t i = key_index_find(&op->groups, key);
	struct chart_group *g;

	if (i != SIZE_MAX)
		return &kp->groups[i];
	kp->groups = xrealloc(kp->groups, (kp->ngroups + 1) * sizeof(*kp->groups));
	g = &kp->groups[kp->ngroups];
	*g = (struct chart_group){ .trace_id = trace_id, .name_id = name_id, .min = INT64_MAX, .max = INT64_MIN };
	g->name = name_id < 0 ? NULL : lookup_name(op->trace, trace_id, name_id);
	if (!g->name) {
		char buf[64];

		snprintf(buf, sizeof(buf), name_id < 0 ? "(unnamed)" : "(name id %" PRId64 ")", name_id);
		g->name = xstrdup(buf);
	}
	g->nccl = !strncmp(g->name, "nccl", 4);
	key_index_get(&op->groups, key, NULL);		/* kp->ngroups: only here are groups made */
	return &kp->groups[kp->ngroups++];
}

static void copy_add(struct op_pass *op, int memset, const struct event_row *row, const size_t *cols, size_t n,
		     int64_t dur)
{
	struct copy_group k = { .memset = memset };
	struct copy_group *g = NULL;

	for (size_t i = 0; i < n; i++) {
		k.key[i] = row->v[cols[i]];
		k.null |= (unsigned)event_null(row, cols[i]) << i;
	}
	for (size_t i = 0; i < op->ncopies && !g; i++)
		if (op->copies[i].memset == memset && op->copies[i].null == k.null &&
		    !memcmp(op->copies[i].key, k.key, sizeof(k.key)))
			g = &op->copies[i];
	if (!g) {
		op->copies = xrealloc(op->copies, (op->ncopies + 1) * sizeof(*op->copies));
		g = &op->copies[op->ncopies++];
		*g = k;
	}
	g->count++;
	g->bytes = sat_add64(g->bytes, event_int(row, OP_BYTES, 0));
	g->total = sat_add64(g->total, dur);
}

static struct stream_lane *stream_lane_get(struct op_pass *op, const struct report_charts *c, int64_t trace_id,
					   int64_t device, int64_t stream, int64_t start)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, device, stream };
	size_t i = key_index_find(&op->lane_index, key);
	struct stream_lane *l;

	if (i != SIZE_MAX)
		return &op->lanes[i];
	op->lanes = xrealloc(op->lanes, (op->nlanes + 1) * sizeof(*op->lanes));
	l = &op->lanes[op->nlanes];
	*l = (struct stream_lane){ .lane = { .trace_id = trace_id, .device = device, .stream = stream }, .first = start };
	for (size_t w = 0; w < c->nwindows; w++)
		l->lane.busy[w] = xcalloc(CHART_BUCKETS, sizeof(*l->lane.busy[w]));
	key_index_get(&op->lane_index, key, NULL);	/* op->nlanes */
	return &op->lanes[op->nlanes++];
}

static size_t device_get(struct op_pass *op, const struct report_charts *c, int64_t trace_id, int64_t device,
			 int64_t start)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, device };
	size_t i = key_index_find(&op->device_index, key);
	struct chart_device *d;

	if (i != SIZE_MAX)
		return i;
	op->devices = xrealloc(op->devices, (op->ndevices + 1) * sizeof(*op->devices));
	op->dev_end = xrealloc(op->dev_end, (op->ndevices + 1) * sizeof(*op->dev_end));
	d = &op->devices[op->ndevices];
	*d = (struct chart_device){ .trace_id = trace_id, .device = device, .first = start };
	for (size_t w = 0; w < c->nwindows; w++)
		d->idle[w] = xcalloc(CHART_BUCKETS, sizeof(*d->idle[w]));
	op->dev_end[op->ndevices] = start;
	key_index_get(&op->device_index, key, NULL);	/* op->ndevices */
	return op->ndevices++;
}

/* One operation: its name or kind's sums, its stream's busy time, its device's union and gaps. */
static void add_operation(struct op_pass *op, struct kernel_pass *kp, struct report_charts *c, int kind,
			  const struct event_row *row)
{
	static const size_t copy_keys[] = { OP_COPY_KIND, OP_SRC_KIND, OP_DST_KIND }, set_keys[] = { OP_MEM_KIND };
	int64_t t = row->trace_id, s = row->start, e = row->v[OP_END];
	int64_t d = event_int(row, OP_DEVICE, -1);
	int work = kind ? CHART_COPY : CHART_COMPUTE;
	struct stream_lane *l;
	size_t di;

	/* the views leave out times that cannot be; a NULL start or end has no duration */
	if ((row->null & EVENT_START_NULL) || event_null(row, OP_END) || e < s)
		return;
	if (kind == 0) {
		struct chart_group *g = group_get(op, kp, t, event_int(row, OP_NAME, -1));

		g->count++;
		g->total = sat_add64(g->total, e - s);
		value_counts_add(&g->values, &kp->values, e - s);
		if (e - s < g->min)
			g->min = e - s;
		if (e - s > g->max)
			g->max = e - s;
		if (g->nccl)
			work = CHART_COMM;
	} else {
		copy_add(op, kind == 2, row, kind == 1 ? copy_keys : set_keys, kind == 1 ? 3 : 1, e - s);
	}
	l = stream_lane_get(op, c, t, d, event_int(row, OP_STREAM, -1), s);
	l->lane.ops++;
	l->lane.busy_ns = sat_add64(l->lane.busy_ns, span_of(s, e));
	for (size_t w = 0; w < c->nwindows; w++)
		spread(&c->windows[w], s, e, &l->lane.busy[w][0][work], CHART_WORKS);

	di = device_get(op, c, t, d, s);
	if (s > op->dev_end[di]) {
		struct chart_device *dev = &op->devices[di];

		dev->gaps++;
		dev->idle_ns = sat_add64(dev->idle_ns, span_of(op->dev_end[di], s));
		gap_bins_add(c->gap_bins, s - op->dev_end[di]);
		for (size_t w = 0; w < c->nwindows; w++)
			spread(&c->windows[w], op->dev_end[di], s, dev->idle[w], 1);
		op->dev_end[di] = s;
	}
	if (e > op->dev_end[di]) {
		op->devices[di].busy_ns = sat_add64(op->devices[di].busy_ns, span_of(op->dev_end[di], e));
		op->dev_end[di] = e;
	}
}

static int compare_copy_groups(const void *pa, const void *pb)
{
	const struct copy_group *a = pa, *b = pb;

	if (a->memset != b->memset)
		return a->memset - b->memset;
	for (int i = 0; i < 3; i++) {
		int an = (a->null >> i) & 1, bn = (b->null >> i) & 1;

		if (an != bn)			/* NULL first, as GROUP BY */
			return an ? -1 : 1;
		if (!an && a->key[i] != b->key[i])
			return a->key[i] < b->key[i] ? -1 : 1;
	}
	return 0;
}

/* The copy kinds, copies in (copyKind, srcKind, dstKind) order then memsets by memKind, largest
 * total first. */
static void finish_copies(struct op_pass *op, struct report_charts *c)
{
	if (op->ncopies)
		qsort(op->copies, op->ncopies, sizeof(*op->copies), compare_copy_groups);
	c->copies = xcalloc(op->ncopies ? op->ncopies : 1, sizeof(*c->copies));
	for (size_t i = 0; i < op->ncopies; i++) {
		const struct copy_group *g = &op->copies[i];
		struct chart_copy *k = &c->copies[c->ncopies++];

		*k = (struct chart_copy){ .count = g->count, .bytes = g->bytes, .total_ns = g->total };
		if (g->memset) {
			k->copy_kind = -1;
			k->src_kind = g->null & 1 ? -1 : g->key[0];
			k->dst_kind = -1;
		} else {
			/* a copy with an unknown kind is not a memset */
			k->copy_kind = g->null & 1 ? 0 : g->key[0];
			k->src_kind = g->null & 2 ? -1 : g->key[1];
			k->dst_kind = g->null & 4 ? -1 : g->key[2];
		}
	}
	if (c->ncopies)
		qsort(c->copies, c->ncopies, sizeof(*c->copies), compare_copy_total);
}

static int compare_devices(const void *pa, const void *pb)
{
	const struct chart_device *a = pa, *b = pb;

	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	return (a->device > b->device) - (a->device < b->device);
}

/* A device's streams in the order they first ran (then by stream). */
static int compare_lane_first(const void *pa, const void *pb)
{
	const struct stream_lane *a = pa, *b = pb;

	if (a->lane.trace_id != b->lane.trace_id)
		return a->lane.trace_id < b->lane.trace_id ? -1 : 1;
	if (a->lane.device != b->lane.device)
		return a->lane.device < b->lane.device ? -1 : 1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return (a->lane.stream > b->lane.stream) - (a->lane.stream < b->lane.stream);
}

/* Add lane b's sums to a (and free b's buckets). */
static void lane_merge(struct chart_lane *a, struct chart_lane *b, size_t nwindows)
{
	a->ops += b->ops;
	a->busy_ns = sat_add64(a->busy_ns, b->busy_ns);
	for (size_t w = 0; w < nwindows; w++) {
		for (size_t i = 0; i < CHART_BUCKETS; i++)
			for (size_t k = 0; k < CHART_WORKS; k++)
				a->busy[w][i][k] += b->busy[w][i][k];
		free(b->busy[w]);
		b->busy[w] = NULL;
	}
}

/*
 * The lanes drawn: streams take lanes as they first appear on each device, devices in order, until
 * CHART_LANES_MAX; the streams after that go to their device's merged lane (stream -1, where
 * operations without a stream go too), which is made the first time it is needed and takes a lane.
 */
static void finish_lanes(struct op_pass *op, struct report_charts *c)
{
	int64_t trace_id = 0, device = 0;	/* of the lane before */
	size_t cap = 0;

	if (op->nlanes)
		qsort(op->lanes, op->nlanes, sizeof(*op->lanes), compare_lane_first);
	for (size_t i = 0, dev_first = 0; i < op->nlanes; i++) {
		struct chart_lane *l = &op->lanes[i].lane, *merged = NULL;

		if (i && (l->trace_id != trace_id || l->device != device))
			dev_first = c->nlanes;
		trace_id = l->trace_id;
		device = l->device;
		if (l->stream == -1 || c->nlanes >= CHART_LANES_MAX) {
			/* into the device's merged lane, when it has one already */
			for (size_t j = dev_first; j < c->nlanes && !merged; j++)
				if (c->lanes[j].stream == -1)
					merged = &c->lanes[j];
			if (merged) {
				lane_merge(merged, l, c->nwindows);
				continue;
			}
		}
		if (c->nlanes == cap) {
			cap = cap ? cap * 2 : 16;
			c->lanes = xrealloc(c->lanes, cap * sizeof(*c->lanes));
		}
		c->lanes[c->nlanes] = *l;
		if (l->stream != -1 && c->nlanes >= CHART_LANES_MAX) {
			/* the device's merged lane, made by its first stream past the limit */
			struct chart_lane m = { .trace_id = l->trace_id, .device = l->device, .stream = -1 };

			for (size_t w = 0; w < c->nwindows; w++)
				m.busy[w] = xcalloc(CHART_BUCKETS, sizeof(*m.busy[w]));
			lane_merge(&m, l, c->nwindows);
			c->lanes[c->nlanes] = m;
		}
		c->nlanes++;
		memset(l, 0, sizeof(*l));
	}
	if (c->nlanes)
		qsort(c->lanes, c->nlanes, sizeof(*c->lanes), compare_lanes);
}

static void op_pass_release(struct op_pass *op, size_t nwindows)
{
	key_index_release(&op->groups);
	free(op->copies);
	for (size_t i = 0; i < op->nlanes; i++)
		for (size_t w = 0; w < nwindows; w++)
			free(op->lanes[i].lane.busy[w]);
	free(op->lanes);
	key_index_release(&op->lane_index);
	for (size_t i = 0; i < op->ndevices; i++)
		for (size_t w = 0; w < nwindows; w++)
			free(op->devices[i].idle[w]);
	free(op->devices);
	free(op->dev_end);
	key_index_release(&op->device_index);
}

/* The kernels, copies and memsets in time order: every sum of the charts but the medians. */
static int read_operations(struct reader *r, struct kernel_pass *kp)
{
	static const char *const kernel_cols[] = { "end", "deviceId", "streamId", "nameId" };
	static const char *const copy_cols[] = { "end", "deviceId", "streamId", "bytes", "copyKind", "srcKind",
						 "dstKind" };
	static const char *const set_cols[] = { "end", "deviceId", "streamId", "bytes", "memKind" };
	struct report_charts *c = r->charts;
	struct event_stream *in[3] = { NULL };
	const struct event_row *row[3] = { NULL };
	struct op_pass op = { .trace = r->trace };
	int ret;

	ret = event_stream_open(r->trace, "kernels", kernel_cols, 4, 3, -1, &in[0], r->err, r->errlen);
	if (!ret)
		ret = event_stream_open(r->trace, "copies", copy_cols, 7, 3, -1, &in[1], r->err, r->errlen);
	if (!ret)
		ret = event_stream_open(r->trace, "sets", set_cols, 5, 3, -1, &in[2], r->err, r->errlen);
	for (int k = 0; k < 3 && ret >= 0; k++)
		ret = event_stream_next(in[k], &row[k], r->err, r->errlen);
	while (ret >= 0) {
		int k = -1;

		for (int i = 0; i < 3; i++)
			if (row[i] && (k < 0 || event_compare(row[i], row[k], 3) < 0))
				k = i;
		if (k < 0)
			break;
		add_operation(&op, kp, c, k, row[k]);
		ret = event_stream_next(in[k], &row[k], r->err, r->errlen);
	}
	for (int k = 0; k < 3; k++)
		event_stream_close(in[k]);
	if (ret >= 0) {
		ret = 0;
		finish_copies(&op, c);
		finish_lanes(&op, c);
		if (op.ndevices)
			qsort(op.devices, op.ndevices, sizeof(*op.devices), compare_devices);
		/* sorted, the end of each device's union is found again as its last */
		for (size_t i = 0; i < op.ndevices; i++) {
			int64_t key[KEY_INDEX_WORDS] = { op.devices[i].trace_id, op.devices[i].device };

			op.devices[i].last = op.dev_end[key_index_find(&op.device_index, key)];
		}
		c->devices = op.devices;
		c->ndevices = op.ndevices;
		op.devices = NULL;
		op.ndevices = 0;
	}
	op_pass_release(&op, c->nwindows);
	return ret;
}

struct chart_window html_chart_window(int64_t start, int64_t end)
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
		c->windows[c->nwindows++] = html_chart_window(hdr->start, hdr->end);
		if (hdr->phases)
			phases_steady_window(hdr->phases, &steady_start, &steady_end);
		/* zoom in when the steady state is less than half the span: start-up often dwarfs it */
		if (steady_end > steady_start && 2 * (steady_end - steady_start) < hdr->end - hdr->start)
			c->windows[c->nwindows++] = html_chart_window(steady_start, steady_end);
	}
	ret = read_operations(&r, &kp);
	if (!ret)
		ret = merge_kernel_names(&r, &kp);
	if (!ret)
		ret = read_kernel_medians(&r, &kp);
	if (!ret)
		ret = html_util_read(trace, hdr, c, err, errlen);
	kernel_pass_release(&kp);
	if (ret < 0) {
		report_charts_free(c);
		return ret;
	}
	hdr->charts = c;
	return 0;
}

int report_charts_read_windows(struct trace *trace, const struct chart_window *windows, size_t nwindows,
			       struct report_charts **out, char *err, size_t errlen)
{
	struct report_charts *c = xcalloc(1, sizeof(*c));
	struct reader r = { trace, c, err, errlen };
	struct kernel_pass kp = { 0 };
	int ret;

	gap_bins_init(c->gap_bins);
	for (size_t w = 0; w < nwindows && w < CHART_WINDOWS; w++)
		c->windows[c->nwindows++] = windows[w];
	ret = read_operations(&r, &kp);
	kernel_pass_release(&kp);
	if (ret < 0) {
		report_charts_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

void report_charts_free(struct report_charts *c)
{
	if (!c)
		return;
	html_util_release(c);
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
