/*
 * GPU idle gaps and their causes (see gaps.h for the definitions); the classes of API names are
 * api-names.c's, the table of launches in flight pending-calls.c's.
 *
 * The loader's time-ordered event streams (analyzer/loader/events.h: each table read in storage
 * order, no SQL sort) are merged: the GPU operations (kernels, copies, memsets), the API calls
 * (those that issue or block, classified by nameId, never by reading names row by row; every call
 * when gaps are attributed) and, for attribution, the NVTX ranges. An API call always starts before
 * the operation it issues, so by the time an operation comes up its call has been read: calls that
 * issue work wait in a table keyed by correlation id until their operation arrives (launches in
 * flight - a few thousand at most, since CUDA's launch queues are bounded; the table drops the
 * oldest beyond PENDING_CALLS_MAX), and blocking calls are kept per host thread in a ring of the
 * most recent ones. An operation's gap is blamed by asking its issuing thread's ring whether a
 * blocking call other than its own was running when the device went idle. Calls on one thread do
 * not overlap, so only calls made while the device idled can push the one that matters out of the
 * ring; RECENT_CALLS of them in one gap would have to happen first. This replaces a SQL join of
 * every operation with its API call, which cost SQLite an index over all API calls per walk.
 */
#include "analyzer/analysis/gaps.h"
#include "analyzer/analysis/pending-calls.h"
#include "analyzer/analysis/profiler-time.h"

#include "analyzer/loader/events.h"
#include "analyzer/loader/windows.h"

#include "common/key-index.h"
#include "common/progress.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECENT_CALLS 16

/* ---- the walk ---- */

/* One API call of a host thread, kept while a gap may still reach back to it. */
struct host_call {
	int64_t start, end;
	const char *name;	/* owned by the api_names; "?" when unknown */
	unsigned cls;
};

/* One NVTX range of a host thread. */
struct host_range {
	int64_t start, end;
	const char *text;	/* interned by the walker */
};

/*
 * A host thread's recent activity, in start order. Entries that end before every device's last work
 * ended (the horizon) can no longer overlap a gap and are dropped when the arrays grow.
 */
struct host_thread {
	struct host_call *calls;
	size_t ncalls, calls_cap;
	struct host_range *ranges;
	size_t nranges, ranges_cap;
};

struct walker {
	const struct api_names *names;
	struct key_index thread_index;		/* (traceId, globalTid) -> threads[] */
	struct host_thread *threads;
	size_t nthreads;
	struct pending_calls pending;		/* issuing calls whose operation has not come up yet */
	size_t last_device;			/* index of the device of the previous operation */
	int64_t trace_id;			/* the trace being walked */
	int64_t trace_first;			/* its first API call or NVTX range; INT64_MAX: none */
	int trace_has_op;			/* its first operation was seen */
	int64_t horizon;			/* no gap of this trace can start before it */
	struct gap_walk *walk;			/* its texts: interned NVTX texts, open addressing */
	struct idle_part *parts[2];		/* the current gap's parts, and its start-up twin's */
	size_t parts_cap[2];
	int64_t class_of[2];			/* the (traceId, nameId) of the last call classified, */
	unsigned class_last;			/* and its class (class_of[0] -1: none yet) */
	struct trace_windows windows;		/* capture windows of the traces (none: recorded whole) */
};

/* api_names_class() of a call, remembering the last answer: calls come in runs of one name. */
static unsigned call_class(struct walker *w, const struct event_row *call, size_t name_col)
{
	if (w->class_of[0] != call->trace_id || w->class_of[1] != call->v[name_col]) {
		w->class_of[0] = call->trace_id;
		w->class_of[1] = call->v[name_col];
		w->class_last = api_names_class(w->names, call->trace_id, call->v[name_col]);
	}
	return w->class_last;
}

static uint64_t text_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The walk's copy of s, one per distinct text. */
static const char *intern(struct walker *w, const char *s)
{
	struct gap_walk *walk = w->walk;
	size_t i, mask;

	if ((walk->ntexts + 1) * 2 > walk->texts_cap) {
		char **old = walk->texts;
		size_t oldcap = walk->texts_cap;

		walk->texts_cap = walk->texts_cap ? 2 * walk->texts_cap : 256;
		walk->texts = xcalloc(walk->texts_cap, sizeof(*walk->texts));
		mask = walk->texts_cap - 1;
		for (size_t j = 0; j < oldcap; j++) {
			if (!old[j])
				continue;
			for (i = text_hash(old[j]) & mask; walk->texts[i]; i = (i + 1) & mask)
				;
			walk->texts[i] = old[j];
		}
		free(old);
	}
	mask = walk->texts_cap - 1;
	for (i = text_hash(s) & mask; walk->texts[i]; i = (i + 1) & mask)
		if (!strcmp(walk->texts[i], s))
			return walk->texts[i];
	walk->texts[i] = xstrdup(s);
	walk->ntexts++;
	return walk->texts[i];
}

static struct host_thread *thread_get(struct walker *w, int64_t trace_id, int64_t tid, int create)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, tid };
	size_t i;
	int created;

	if (!create) {
		i = key_index_find(&w->thread_index, key);
		return i == SIZE_MAX ? NULL : &w->threads[i];
	}
	i = key_index_get(&w->thread_index, key, &created);
	if (created) {
		w->threads = xrealloc(w->threads, (i + 1) * sizeof(*w->threads));
		memset(&w->threads[i], 0, sizeof(w->threads[i]));
		w->nthreads = i + 1;
	}
	return &w->threads[i];
}

/*
 * Make room for one more entry of a thread's calls or ranges: when full, first drop the entries that
 * ended before the horizon (kept in order), and grow only if that freed too little.
 */
#define HOST_RESERVE(w, arr, n, cap)                                                      \
	do {                                                                              \
		if ((n) == (cap)) {                                                       \
			size_t kept_ = 0;                                                 \
			for (size_t i_ = 0; i_ < (n); i_++)                               \
				if ((arr)[i_].end >= (w)->horizon)                        \
					(arr)[kept_++] = (arr)[i_];                       \
			(n) = kept_;                                                      \
			if ((n) * 2 >= (cap)) {                                           \
				(cap) = (cap) ? 2 * (cap) : 64;                           \
				(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));          \
			}                                                                 \
		}                                                                         \
	} while (0)

/*
 * Capture windows (analyzer/loader/windows.h): time outside them was not recorded, so no gap spans
 * a window edge; the first operation of a window has no gap before it, as a device's first
 * operation has none, and a trace recorded in windows has no start-up (its first window's start is
 * not the program's). Returns the time taken out of the gap: between windows.
 */
static int64_t clip_to_window(const struct walker *w, struct gap *g)
{
	const struct trace_window *win;
	int64_t outside;

	if (!w->windows.count || g->end <= g->start)
		return 0;
	win = trace_windows_at(&w->windows, g->trace_id, g->end);
	if (!win || g->start >= win->start)
		return 0;
	outside = g->end - g->start;
	g->start = g->end;
	return outside;
}

int64_t gap_device_active(const struct gap_device *device)
{
	return device->last - device->first - device->outside;
}

static int startup_before(const struct walker *w, int64_t trace_id, int64_t start)
{
	return w->trace_first < start && !trace_windows_has(&w->windows, trace_id);
}

/* A new trace begins: what was kept of the last one can no longer matter. */
static void trace_begin(struct walker *w, int64_t trace_id)
{
	for (size_t i = 0; i < w->nthreads; i++) {
		w->threads[i].ncalls = 0;
		w->threads[i].nranges = 0;
	}
	w->trace_id = trace_id;
	w->trace_first = INT64_MAX;
	w->trace_has_op = 0;
	w->horizon = INT64_MIN;
}

/* Columns of the API call stream, and of the NVTX range stream. */
enum { CALL_END, CALL_TID, CALL_PID, CALL_CORRELATION, CALL_NAME, CALL_NCOLS };
enum { RANGE_END, RANGE_TID, RANGE_TEXT, RANGE_NCOLS };

/* Take one API call from the stream: into its thread's history, and an issuing call into the
 * pending table. */
static void take_call(struct walker *w, const struct event_row *row, unsigned cls)
{
	int64_t trace_id = row->trace_id, name_id = row->v[CALL_NAME];
	int64_t start = row->start, end = row->v[CALL_END];

	if (trace_id != w->trace_id)
		trace_begin(w, trace_id);
	if (start < w->trace_first)
		w->trace_first = start;
	if (!event_null(row, CALL_TID)) {
		struct host_thread *t = thread_get(w, trace_id, row->v[CALL_TID], 1);
		struct host_call *c;

		HOST_RESERVE(w, t->calls, t->ncalls, t->calls_cap);
		c = &t->calls[t->ncalls++];
		c->start = start;
		c->end = end < start ? start : end;
		c->name = api_names_name(w->names, trace_id, name_id);
		c->cls = cls;
	}
	if ((cls & API_ISSUES) && !event_null(row, CALL_CORRELATION)) {
		struct pending_call call = {
			.trace_id = trace_id,
			.pid = row->v[CALL_PID],
			.correlation = row->v[CALL_CORRELATION],
			.start = start,
			.end = end,
			.tid = event_int(row, CALL_TID, -1),
			.name_id = name_id,
			.cls = cls,
		};

		pending_calls_add(&w->pending, &call);
	}
}

/* Keep an interval of the profiler's among its thread's calls: what it covers is the profiler's. */
static void take_overhead(struct walker *w, const struct profiler_interval *o)
{
	struct host_thread *t;
	struct host_call *c;

	if (o->trace_id != w->trace_id)
		trace_begin(w, o->trace_id);
	t = thread_get(w, o->trace_id, o->tid, 1);
	HOST_RESERVE(w, t->calls, t->ncalls, t->calls_cap);
	c = &t->calls[t->ncalls++];
	c->start = o->start;
	c->end = o->end;
	c->name = intern(w, o->name);
	c->cls = API_REPLAYED;
}

/* Take one NVTX range. */
static void take_range(struct walker *w, const struct event_row *row)
{
	int64_t trace_id = row->trace_id, start = row->start;
	struct host_thread *t;
	struct host_range *r;

	if (trace_id != w->trace_id)
		trace_begin(w, trace_id);
	if (start < w->trace_first)
		w->trace_first = start;
	t = thread_get(w, trace_id, row->v[RANGE_TID], 1);
	HOST_RESERVE(w, t->ranges, t->nranges, t->ranges_cap);
	r = &t->ranges[t->nranges++];
	r->start = start;
	r->end = row->v[RANGE_END];
	r->text = intern(w, row->text ? row->text : "");
}

static struct gap_device *device_find(struct gap_walk *walk, struct walker *w, int64_t trace_id,
				      int64_t device)
{
	struct gap_device *d;

	if (w->last_device < walk->ndevices) {
		d = &walk->devices[w->last_device];
		if (d->trace_id == trace_id && d->device == device)
			return d;
	}
	for (size_t i = 0; i < walk->ndevices; i++) {
		if (walk->devices[i].trace_id == trace_id && walk->devices[i].device == device) {
			w->last_device = i;
			return &walk->devices[i];
		}
	}
	walk->devices = xrealloc(walk->devices, (walk->ndevices + 1) * sizeof(*walk->devices));
	d = &walk->devices[walk->ndevices];
	memset(d, 0, sizeof(*d));
	d->trace_id = trace_id;
	d->device = device;
	w->last_device = walk->ndevices++;
	return d;
}

/* The earliest time a later gap of the current trace can start: every device's work up to then. */
static void update_horizon(struct gap_walk *walk, struct walker *w)
{
	int64_t h = INT64_MAX;

	for (size_t i = 0; i < walk->ndevices; i++)
		if (walk->devices[i].trace_id == w->trace_id && walk->devices[i].last < h)
			h = walk->devices[i].last;
	w->horizon = h == INT64_MAX ? INT64_MIN : h;
}

/*
 * The index of the first call of t that may contain or follow time at: calls on one thread follow
 * each other, except for a runtime call around the driver call it makes, so the call containing at
 * is at most a few entries before the first call that starts after it.
 */
static size_t first_call_at(const struct host_thread *t, int64_t at)
{
	size_t lo = 0, hi = t->ncalls;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->calls[mid].start <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 3 ? lo - 3 : 0;
}

/* Blame one gap; g->start and g->api_* are filled in, t is the issuing thread or NULL. */
static void classify(struct gap *g, const struct host_thread *t)
{
	g->cause = GAP_OTHER;
	if (g->api_start < 0 || g->api_end <= g->start)
		return;
	g->cause = GAP_HOST_WAIT;
	if (!t)
		return;
	for (size_t i = first_call_at(t, g->start); i < t->ncalls && t->calls[i].start <= g->start; i++) {
		const struct host_call *c = &t->calls[i];

		/* The operation's own blocking copy does not count: it is what the host is issuing. */
		if ((c->cls & API_BLOCKS) && c->end >= g->start && c->start != g->api_start) {
			g->cause = GAP_SYNC_WAIT;
			g->blocker = c->name;
			g->blocker_start = c->start;
			g->blocker_end = c->end;
			return;
		}
	}
}

/* The parts go to the walker's buffer `buf` (0: the gap; 1: the start-up interval). */
static void add_part(struct walker *w, int buf, struct gap *g, enum idle_kind kind, const char *detail,
		     const char *range, int64_t ns)
{
	struct idle_part *p;

	if (ns <= 0)
		return;
	/* Parts with a name repeat within a gap (a range entered many times): merge them. */
	for (size_t i = g->nparts; i-- > 0;) {
		p = &g->parts[i];
		if (p->kind == kind && p->detail == detail && p->range == range) {
			p->ns += ns;
			return;
		}
	}
	if (g->nparts == w->parts_cap[buf]) {
		w->parts_cap[buf] = w->parts_cap[buf] ? 2 * w->parts_cap[buf] : 16;
		w->parts[buf] = xrealloc(w->parts[buf], w->parts_cap[buf] * sizeof(*w->parts[buf]));
		g->parts = w->parts[buf];
	}
	g->parts[g->nparts++] = (struct idle_part){ .kind = kind, .detail = detail, .range = range, .ns = ns };
}

/* The innermost range of t containing time at (latest start; NULL if none). */
static const char *range_at(const struct host_thread *t, int64_t at)
{
	const struct host_range *best = NULL;

	for (size_t i = 0; t && i < t->nranges && t->ranges[i].start <= at; i++) {
		const struct host_range *r = &t->ranges[i];

		if (r->end > at && (!best || r->start > best->start ||
				    (r->start == best->start && r->end < best->end)))
			best = r;
	}
	return best ? best->text : NULL;
}

/* Host code from a to b on thread t, outside CUDA calls: split by the innermost NVTX range. */
static void attribute_host(struct walker *w, int buf, struct gap *g, const struct host_thread *t, int64_t a,
			   int64_t b)
{
	while (a < b) {
		const struct host_range *inner = NULL;
		int64_t next = b;

		/* The innermost range at a, and the next range boundary after a. */
		for (size_t i = 0; t && i < t->nranges && t->ranges[i].start < b; i++) {
			const struct host_range *r = &t->ranges[i];

			if (r->start > a) {
				if (r->start < next)
					next = r->start;
				continue;
			}
			if (r->end <= a)
				continue;
			if (r->end < next)
				next = r->end;
			if (!inner || r->start > inner->start || (r->start == inner->start && r->end < inner->end))
				inner = r;
		}
		if (inner)
			add_part(w, buf, g, IDLE_RANGE, inner->text, NULL, next - a);
		else
			add_part(w, buf, g, IDLE_HOST, NULL, NULL, next - a);
		a = next;
	}
}

/*
 * Split the gap by what its issuing thread did: from the gap's start to the issuing call, the
 * thread's other CUDA calls and its host code (inside NVTX ranges or not); from the issuing call to
 * the operation's start, the launch. g->start may be the trace's first event (startup).
 */
static void attribute(struct walker *w, int buf, struct gap *g, const struct host_thread *t)
{
	int64_t a = g->start, host_end;

	g->parts = w->parts[buf];
	g->nparts = 0;
	if (g->end <= g->start)
		return;
	if (g->api_start < 0) {
		add_part(w, buf, g, IDLE_UNKNOWN, NULL, NULL, g->end - g->start);
		return;
	}
	if (g->api_end <= g->start) {
		add_part(w, buf, g, IDLE_QUEUED, NULL, NULL, g->end - g->start);
		return;
	}
	host_end = g->api_start > g->end ? g->end : g->api_start;
	if (host_end < a)
		host_end = a;
	if (t) {
		for (size_t i = first_call_at(t, a); i < t->ncalls && a < host_end; i++) {
			const struct host_call *c = &t->calls[i];
			int64_t from, to;

			if (c->start >= host_end)
				break;
			if (c->end <= a)
				continue;
			from = c->start > a ? c->start : a;
			to = c->end < host_end ? c->end : host_end;
			attribute_host(w, buf, g, t, a, from);
			if (c->cls & API_REPLAYED)	/* a replayed launch (NULL: "kernel replay"), an overhead */
				add_part(w, buf, g, IDLE_PROFILER, (c->cls & API_LAUNCH) ? NULL : c->name, NULL,
					 to - from);
			else
				add_part(w, buf, g, (c->cls & API_BLOCKS) ? IDLE_SYNC : IDLE_CUDA, c->name,
					 range_at(t, c->start), to - from);
			a = to;
		}
	}
	attribute_host(w, buf, g, t, a, host_end);
	add_part(w, buf, g, (g->api_class & API_REPLAYED) ? IDLE_PROFILER : IDLE_LAUNCH, NULL, NULL, g->end - host_end);
}

/*
 * The GPU operations: kernels, copies and memsets, each a stream in (traceId, start, end, deviceId,
 * streamId) order, merged here (ties: kernels, then copies, then memsets).
 */
enum { OP_END, OP_DEVICE, OP_STREAM, OP_GRAPH_NODE, OP_CORRELATION, OP_PID, OP_COL6, OP_COL7, OP_COL8,
       OP_COL9 };
#define OP_NKEY 3

struct op_input {
	struct event_stream *s;
	const struct event_row *row;	/* its next row, NULL at its end */
};

static const char *const kernel_cols[] = { "end", "deviceId", "streamId", "graphNodeId", "correlationId",
					   "pid", "nameId", "gridX", "gridY", "gridZ" };
static const char *const copy_cols[] = { "end", "deviceId", "streamId", "graphNodeId", "correlationId",
					 "pid", "bytes", "copyKind", "srcKind", "dstKind" };
static const char *const set_cols[] = { "end", "deviceId", "streamId", "graphNodeId", "correlationId",
					"pid", "bytes", "memKind" };	/* memKind: for the HTML report's charts */
static const char *const call_cols[CALL_NCOLS] = { "end", "globalTid", "pid", "correlationId", "nameId" };
static const char *const range_cols[RANGE_NCOLS] = { "end", "globalTid", "text" };

/* What the walk reads: the GPU operations (indexed by enum gpu_op), the API calls, the NVTX ranges. */
static const struct event_columns walk_streams[] = {
	{ "kernels", kernel_cols, sizeof(kernel_cols) / sizeof(kernel_cols[0]), OP_NKEY, -1 },
	{ "copies", copy_cols, sizeof(copy_cols) / sizeof(copy_cols[0]), OP_NKEY, -1 },
	{ "sets", set_cols, sizeof(set_cols) / sizeof(set_cols[0]), OP_NKEY, -1 },
	{ "api_calls", call_cols, CALL_NCOLS, 0, -1 },
	{ "nvtx", range_cols, RANGE_NCOLS, 0, RANGE_TEXT },
};
#define WALK_CALLS 3
#define WALK_RANGES 4

void gap_walk_keep(struct trace *trace)
{
	event_streams_keep(trace, walk_streams, sizeof(walk_streams) / sizeof(walk_streams[0]));
}

static int walk_stream_open(const struct analysis_context *ctx, size_t which,
			    struct event_stream **s, char *err, size_t errlen)
{
	const struct event_columns *c = &walk_streams[which];

	return event_stream_open(ctx->trace, c->view, c->cols, c->ncols, c->nkey, c->text_col, s, err, errlen);
}

static int op_open(const struct analysis_context *ctx, struct op_input *in, enum gpu_op kind,
		   char *err, size_t errlen)
{
	int ret = walk_stream_open(ctx, (size_t)kind, &in->s, err, errlen);

	if (!ret)
		ret = event_stream_next(in->s, &in->row, err, errlen);
	return ret < 0 ? ret : 0;
}

/* gridX * gridY * gridZ as SQLite computes it: NULL if any is NULL, held at the int64 bounds. */
static int64_t blocks_of(const struct event_row *r)
{
	int64_t n = 1;

	for (int i = OP_COL7; i <= OP_COL9; i++) {
		int64_t out;

		if (event_null(r, i))
			return -1;
		if (__builtin_mul_overflow(n, r->v[i], &out))
			out = (n < 0) != (r->v[i] < 0) ? INT64_MIN : INT64_MAX;
		n = out;
	}
	return n;
}

/* An input stream that may be absent (s NULL: no rows). */
struct input {
	struct event_stream *s;
	const struct event_row *row;
};

static int input_next(struct input *in, char *err, size_t errlen)
{
	int ret;

	if (!in->s) {
		in->row = NULL;
		return 0;
	}
	ret = event_stream_next(in->s, &in->row, err, errlen);
	return ret < 0 ? ret : 0;
}

/* Whether (trace_id, start) a comes no later than b, in the walk's (traceId, start) order. */
static int at_or_before(int64_t trace_a, int64_t start_a, int64_t trace_b, int64_t start_b)
{
	return trace_a < trace_b || (trace_a == trace_b && start_a <= start_b);
}

static int input_before(const struct input *in, int64_t trace_id, int64_t start)
{
	return in->row && at_or_before(in->row->trace_id, in->row->start, trace_id, start);
}

/* Give one API call to the visitors that count calls of its class. */
static void pass_call(const struct gap_walk *walk, const struct event_row *row, unsigned cls)
{
	struct gap_call call = { .trace_id = row->trace_id, .name_id = row->v[CALL_NAME], .start = row->start,
				 .end = row->v[CALL_END], .has_end = !event_null(row, CALL_END), .cls = cls };

	if (event_null(row, CALL_NAME))
		return;
	for (size_t i = 0; i < walk->nvisitors; i++)
		if (walk->visitors[i].on_call && (walk->visitors[i].calls & cls))
			walk->visitors[i].on_call(&call, walk->visitors[i].arg);
}

/* One run of gap_walk(its inputs, and what its visitors need. */
struct walk_run {
	const char *who; /* starts its error lines (the analysis context's) */
	struct gap_walk *walk;
	struct walker w;
	struct api_names own_names;	/* when the caller gave no names */
	struct op_input ops[3];		/* by enum gpu_op */
	struct input calls, ranges;
	struct profiler_time profiler;	/* measured launches; intervals when attributing */
	size_t next_overhead;		/* the next of profiler.intervals to take */
	int attributing, startup;	/* some visitor wants the gaps split by cause, the start-up */
	unsigned api;			/* the classes of calls the walker keeps */
	unsigned call_classes;		/* the classes of calls some visitor counts */
	struct progress progress;
	char why[256];
};

/* What the visitors need: attribution, the start-up, which calls kept and which passed on. */
static void walk_needs(struct walk_run *r)
{
	const struct gap_walk *walk = r->walk;

	for (size_t i = 0; i < walk->nvisitors; i++) {
		const struct gap_visitor *v = &walk->visitors[i];

		if (!v->fn)
			continue;
		r->attributing |= v->attribute;
		r->startup |= v->startup;
		r->api |= v->api ? v->api : API_ISSUES | API_BLOCKS;
	}
	for (size_t i = 0; i < walk->nvisitors; i++)
		if (walk->visitors[i].on_call)
			r->call_classes |= walk->visitors[i].calls;
	/* What the host did in a gap needs every call, not only those that issue or block. */
	if (r->attributing)
		r->api = ~0u;
}

/* Open the operations' streams, the calls' and (when attributing) the ranges', each at its first row. */
static int walk_open(struct walk_run *r, const struct analysis_context *ctx)
{
	int ret = profiler_time_load(ctx->trace, r->attributing, &r->profiler, r->why, sizeof(r->why));

	for (int k = 0; k < 3 && !ret; k++)
		ret = op_open(ctx, &r->ops[k], (enum gpu_op)k, r->why, sizeof(r->why));
	if (!ret)
		ret = trace_windows_load(ctx->trace, &r->w.windows, r->why, sizeof(r->why));
	if (!ret)
		ret = walk_stream_open(ctx, WALK_CALLS, &r->calls.s, r->why, sizeof(r->why));
	if (!ret && r->attributing)
		ret = walk_stream_open(ctx, WALK_RANGES, &r->ranges.s, r->why, sizeof(r->why));
	if (!ret)
		ret = input_next(&r->calls, r->why, sizeof(r->why));
	if (!ret)
		ret = input_next(&r->ranges, r->why, sizeof(r->why));
	if (ret < 0)
		return ret;
	if (r->walk->progress)
		progress_begin(&r->progress, r->walk->progress, "GPU operations",
			       event_stream_total(r->ops[0].s) + event_stream_total(r->ops[1].s) +
			       event_stream_total(r->ops[2].s));
	return 0;
}

/* The next GPU operation of the three streams (ties: kernels, then copies, then memsets). */
static const struct event_row *next_op(const struct walk_run *r, int *kind)
{
	const struct event_row *op = NULL;

	for (int k = 0; k < 3; k++)
		if (r->ops[k].row && (!op || event_compare(r->ops[k].row, op, OP_NKEY) < 0)) {
			op = r->ops[k].row;
			*kind = k;
		}
	return op;
}

/* One API call: kept by the walker when wanted, passed to the visitors that count its class. */
static void walk_call(struct walk_run *r, const struct event_row *row)
{
	unsigned cls = call_class(&r->w, row, CALL_NAME);

	if ((cls & API_LAUNCH) && !event_null(row, CALL_CORRELATION) &&
	    profiler_time_replayed(&r->profiler, row->trace_id, row->v[CALL_CORRELATION]))
		cls |= API_REPLAYED;
	if (r->attributing || (cls & r->api))
		take_call(&r->w, row, cls);
	if (cls & r->call_classes)
		pass_call(r->walk, row, cls);
}

/* The NVTX ranges and API calls up to an operation's start; ranges first: a range opened at the
 * instant of a call is around it. */
static int walk_host_until(struct walk_run *r, int64_t trace_id, int64_t start)
{
	struct input *ranges = &r->ranges, *calls = &r->calls;
	int ret;

	for (;;) {
		int before_r = input_before(ranges, trace_id, start), before_c = input_before(calls, trace_id, start);
		const struct profiler_interval *o = r->next_overhead < r->profiler.n ?
						    &r->profiler.intervals[r->next_overhead] : NULL;

		/* The profiler's intervals before the calls and ranges that start with or inside them. */
		if (o && at_or_before(o->trace_id, o->start, trace_id, start) &&
		    (!before_r || at_or_before(o->trace_id, o->start, ranges->row->trace_id, ranges->row->start)) &&
		    (!before_c || at_or_before(o->trace_id, o->start, calls->row->trace_id, calls->row->start))) {
			take_overhead(&r->w, o);
			r->next_overhead++;
			continue;
		}
		if (before_r && (!before_c || at_or_before(ranges->row->trace_id, ranges->row->start,
							   calls->row->trace_id, calls->row->start))) {
			/* Only ranges that have a thread and last: marks and unclosed ranges do not. */
			if (!event_null(ranges->row, RANGE_TID) && !event_null(ranges->row, RANGE_END) &&
			    ranges->row->v[RANGE_END] > ranges->row->start)
				take_range(&r->w, ranges->row);
			ret = input_next(ranges, r->why, sizeof(r->why));
		} else if (before_c) {
			walk_call(r, calls->row);
			ret = input_next(calls, r->why, sizeof(r->why));
		} else {
			return 0;
		}
		if (ret < 0)
			return ret;
	}
}

/* The gap's operation: what it is, and the API call that issued it (its thread in *t, or NULL). */
static void gap_of_op(struct walk_run *r, const struct event_row *op, int kind, struct gap *g,
		      const struct host_thread **t)
{
	struct walker *w = &r->w;
	struct pending_call *call = NULL;
	int64_t start = op->start, end = op->v[OP_END];

	memset(g, 0, sizeof(*g));
	g->trace_id = op->trace_id;
	g->device = op->v[OP_DEVICE];
	g->stream = op->v[OP_STREAM];
	g->next_op = (enum gpu_op)kind;
	g->next_name_id = kind == GPU_OP_KERNEL ? event_int(op, OP_COL6, -1) : -1;
	g->next_start = start;
	g->next_end = end < start ? start : end;
	g->next_graph_node = event_int(op, OP_GRAPH_NODE, 0);
	g->bytes = kind != GPU_OP_KERNEL ? event_int(op, OP_COL6, -1) : -1;
	g->copy_kind = kind == GPU_OP_COPY ? (int)event_int(op, OP_COL7, -1) : -1;
	g->src_kind = kind == GPU_OP_COPY ? (int)event_int(op, OP_COL8, -1) : -1;
	g->dst_kind = kind == GPU_OP_COPY ? (int)event_int(op, OP_COL9, -1) : -1;
	g->next_blocks = kind == GPU_OP_KERNEL ? blocks_of(op) : -1;
	g->api_start = g->api_end = g->api_name_id = -1;
	*t = NULL;
	if (!event_null(op, OP_CORRELATION))
		call = pending_calls_find(&w->pending, op->trace_id, op->v[OP_PID], op->v[OP_CORRELATION]);
	if (!call)
		return;
	g->api_start = call->start;
	g->api_end = call->end;
	g->api_name_id = call->name_id;
	g->api_class = call->cls;
	if (call->tid >= 0)
		*t = thread_get(w, op->trace_id, call->tid, 0);
	/* A graph launch issues many operations; keep it for the others. */
	if (!(call->cls & API_GRAPH))
		pending_calls_remove(&w->pending, call);
}

/*
 * The gap on the operation's device: from the device's last busy instant to the operation's start
 * (none before a device's first operation), and the busy time the operation adds. Returns whether
 * it is the trace's first operation.
 */
static int gap_on_device(struct walk_run *r, const struct event_row *op, struct gap *g)
{
	struct gap_device *d = device_find(r->walk, &r->w, op->trace_id, g->device);
	int64_t start = op->start, end = op->v[OP_END];
	int first_op;

	if (end < start)
		end = start;
	first_op = !r->w.trace_has_op;
	r->w.trace_has_op = 1;
	if (!d->ops++) {
		/* Idle time before a device's first operation is not a gap. */
		d->first = start;
		d->last = start;
	}
	g->start = d->last;
	g->end = start > d->last ? start : d->last;
	d->outside += clip_to_window(&r->w, g);
	g->next_busy = end > d->last ? end - (start > d->last ? start : d->last) : 0;
	d->busy += g->next_busy;
	if (end > d->last)
		d->last = end;
	return first_op;
}

/* Hand the gap (or, for a visitor that wants it, the trace's start-up) to every visitor. */
static int visit_gap(struct walk_run *r, const struct gap *g, const struct gap *first, int with_startup,
		     char *err, size_t errlen)
{
	const struct gap_walk *walk = r->walk;
	int ret;

	for (size_t i = 0; i < walk->nvisitors; i++) {
		const struct gap_visitor *v = &walk->visitors[i];
		const struct gap *seen = g;

		if (!v->fn)
			continue;
		if (with_startup && v->startup)
			seen = first;
		else if (g->end - g->start < v->min_gap)
			continue;
		ret = v->fn(seen, v->arg);
		if (ret < 0) {
			snprintf(err, errlen, "%s: cannot process an idle gap", r->who);
			return ret;
		}
	}
	return 0;
}

/* One GPU operation: the host events before it, its gap classified (and split by cause), the
 * trace's start-up before its first operation, then the visitors. */
static int walk_op(struct walk_run *r, const struct event_row *op, int kind, char *err, size_t errlen)
{
	const struct host_thread *t;
	struct gap g, first;
	int first_op, with_startup, ret;

	ret = walk_host_until(r, op->trace_id, op->start);
	if (ret < 0)
		return ret;
	if (op->trace_id != r->w.trace_id)
		trace_begin(&r->w, op->trace_id);
	gap_of_op(r, op, kind, &g, &t);
	first_op = gap_on_device(r, op, &g);
	if (g.end - g.start > 0) {
		classify(&g, t);
		if (r->attributing)
			attribute(&r->w, 0, &g, t);
	} else {
		g.cause = GAP_OTHER;
	}
	/* The trace's start-up, for the visitors that want it: from its first event to its first
	 * operation (the others see that operation with no gap before it, as every device's first). */
	with_startup = first_op && startup_before(&r->w, op->trace_id, op->start);
	if (with_startup && r->startup) {
		first = g;
		first.startup = 1;
		first.start = r->w.trace_first;
		first.end = op->start;
		first.cause = GAP_OTHER;
		if (r->attributing)
			attribute(&r->w, 1, &first, t);
	}
	return visit_gap(r, &g, &first, with_startup, err, errlen);
}

static void walk_release(struct walk_run *r)
{
	struct walker *w = &r->w;

	progress_end(&r->progress);
	for (int k = 0; k < 3; k++)
		event_stream_close(r->ops[k].s);
	event_stream_close(r->calls.s);
	event_stream_close(r->ranges.s);
	key_index_release(&w->thread_index);
	for (size_t i = 0; i < w->nthreads; i++) {
		free(w->threads[i].calls);
		free(w->threads[i].ranges);
	}
	free(w->threads);
	pending_calls_release(&w->pending);
	free(w->parts[0]);
	free(w->parts[1]);
	trace_windows_release(&w->windows);
	profiler_time_release(&r->profiler);
	api_names_release(&r->own_names);
}

int gap_walk(const struct analysis_context *ctx, struct gap_walk *walk, char *err, size_t errlen)
{
	struct walk_run run = {.who = ctx->who ? ctx->who : "analysis",
			       .walk = walk,
			       .w = {.trace_id = -1, .walk = walk, .class_of = {-1, 0}}};
	struct walk_run *r = &run;
	const struct event_row *op;
	int ret, kind = -1;

	walk->devices = NULL;
	walk->ndevices = 0;
	walk->texts = NULL;
	walk->ntexts = walk->texts_cap = 0;
	r->w.names = walk->names;
	if (!r->w.names) {
		ret = api_names_load(ctx, &r->own_names, err, errlen);
		if (ret < 0)
			return ret;
		r->w.names = &r->own_names;
	}
	walk_needs(r);
	ret = walk_open(r, ctx);
	while (!ret && (op = next_op(r, &kind))) {
		ret = walk_op(r, op, kind, err, errlen);
		if (!ret)
			update_horizon(walk, &r->w);
		if (!ret)
			progress_tick(&r->progress);
		if (!ret)
			ret = event_stream_next(r->ops[kind].s, &r->ops[kind].row, r->why, sizeof(r->why));
		if (ret > 0)
			ret = 0;
	}
	/* The calls after the last operation, for the visitors that count calls. */
	while (r->call_classes && r->calls.row && ret == 0) {
		unsigned cls = call_class(&r->w, r->calls.row, CALL_NAME);

		if (cls & r->call_classes)
			pass_call(walk, r->calls.row, cls);
		ret = input_next(&r->calls, r->why, sizeof(r->why));
	}
	if (ret < 0 && r->why[0])
		snprintf(err, errlen, "%s: %s", r->who, r->why);
	walk_release(r);
	if (ret < 0)
		gap_walk_release(walk);
	return ret;
}

void gap_walk_release(struct gap_walk *walk)
{
	free(walk->devices);
	walk->devices = NULL;
	walk->ndevices = 0;
	for (size_t i = 0; i < walk->texts_cap; i++)
		free(walk->texts[i]);
	free(walk->texts);
	walk->texts = NULL;
	walk->ntexts = walk->texts_cap = 0;
}

int64_t gap_profiler_ns(const struct gap *g)
{
	int64_t ns = 0;

	for (size_t i = 0; i < g->nparts; i++)
		if (g->parts[i].kind == IDLE_PROFILER)
			ns += g->parts[i].ns;
	return ns;
}

const char *gap_cause_name(enum gap_cause cause)
{
	switch (cause) {
	case GAP_HOST_WAIT:
		return "host-wait";
	case GAP_SYNC_WAIT:
		return "sync-wait";
	case GAP_OTHER:
		break;
	}
	return "other";
}
