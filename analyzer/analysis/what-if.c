/*
 * The what-if replay (what-if.h): the steady state's calls and operations read once, their
 * constraints recorded, and the graph replayed in the order it ran, each node after the ones it
 * depends on (every constraint points back in time: to a thread's previous call, an operation's
 * launch, its stream's previous operation, a dependency launched before it).
 */
#include "analyzer/analysis/what-if.h"
#include "analyzer/analysis/gaps.h"
#include "analyzer/loader/events.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op_kind { OP_KERNEL, OP_COPY, OP_SET };

/* What bound an operation's start, or a call's end. */
enum bound_by {
	BY_NONE,	/* recorded times kept: outside the replayed window */
	BY_THREAD,	/* a call: its thread's previous call (the host's own time between them) */
	BY_AWAITED,	/* a call: the operation it waited for */
	BY_LAUNCH,	/* an operation: its launch call */
	BY_STREAM,	/* an operation: its stream's previous operation */
	BY_DEP,		/* an operation: an operation on another stream */
	BY_WAKE,	/* a call: a call of another thread, whose end woke this one */
};

/* A top-level call: one that no other call of its thread encloses (a driver call inside a runtime
 * one is not a node: its operations are its parent's, launched that much after the parent began). */
struct call {
	int64_t start, end, name_id, tid;
	unsigned cls;
	int64_t prev;		/* the thread's previous call, -1 */
	int64_t awaited;	/* blocking: the operation it waited for, -1 */
	int64_t woken_by;	/* the call of another thread it waited for, -1 */
	size_t first_op, nops;	/* its operations in struct what_if's launch order */
	/* replayed */
	int64_t rstart, rend;
	enum bound_by by;
	int rcaptured;		/* its launches are a graph fix's (captured()) */
	int rremoved;		/* it launches only kernels a fix removes (removed()) */
};

struct op {
	int64_t start, end, device, stream, corr, name_id, bytes;
	enum op_kind kind;
	int pageable, nccl;
	int64_t call;		/* its launch call in the window, -1: recorded times kept */
	int64_t launch_off;	/* when it was launched, after its call's start (a nested call's) */
	int64_t prev;		/* its stream's previous operation, -1 */
	int64_t dep;		/* the operation on another stream it waited for, -1 */
	enum bound_by by;	/* the constraint its start came least after */
	int64_t slack;		/* by how much */
	int64_t launch_min;	/* the device's shortest launch-to-start time */
	int use_prev;		/* 1: after the stream's previous operation ended; 2: after it started (it
				   overlapped it: programmatic dependent launch); 0: neither */
	/* replayed */
	int64_t rstart, rend;
	enum bound_by rby;	/* the constraint its start came after in the replay */
	int done;
};

struct what_if {
	int64_t trace_id;
	size_t iterations;
	int64_t h0;			/* the window's first call */
	int64_t measured;
	struct call *calls;		/* by start (a nested call after its parent) */
	size_t ncalls;
	struct op *ops;			/* by start */
	size_t nops;
	size_t *launched;		/* op indices by launch call, then start */
};

/* ---- fixes ---- */

static int compare_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

struct what_if_fix *what_if_fix_new(enum what_if_kind kind, int64_t trace_id, int64_t device,
				    const int64_t *name_ids, size_t nnames, double factor)
{
	struct what_if_fix *f = xcalloc(1, sizeof(*f));

	*f = (struct what_if_fix){ .kind = kind, .trace_id = trace_id, .device = device,
				   .factor = factor };
	if (nnames) {
		f->name_ids = xcalloc(nnames, sizeof(*f->name_ids));
		memcpy(f->name_ids, name_ids, nnames * sizeof(*f->name_ids));
		qsort(f->name_ids, nnames, sizeof(*f->name_ids), compare_i64);
		f->nnames = nnames;
	}
	return f;
}

struct name_factor {
	int64_t id;
	double factor;
};

static int compare_name_factor(const void *pa, const void *pb)
{
	return compare_i64(&((const struct name_factor *)pa)->id, &((const struct name_factor *)pb)->id);
}

struct what_if_fix *what_if_fix_new_each(int64_t trace_id, int64_t device, const int64_t *name_ids,
					 const double *factors, size_t nnames)
{
	struct what_if_fix *f = what_if_fix_new(WHAT_IF_KERNELS, trace_id, device, NULL, 0, 1);
	struct name_factor *pairs = xcalloc(nnames ? nnames : 1, sizeof(*pairs));

	for (size_t i = 0; i < nnames; i++)
		pairs[i] = (struct name_factor){ name_ids[i], factors[i] };
	qsort(pairs, nnames, sizeof(*pairs), compare_name_factor);
	f->name_ids = xcalloc(nnames ? nnames : 1, sizeof(*f->name_ids));
	f->factors = xcalloc(nnames ? nnames : 1, sizeof(*f->factors));
	for (size_t i = 0; i < nnames; i++) {
		f->name_ids[i] = pairs[i].id;
		f->factors[i] = pairs[i].factor;
	}
	f->nnames = nnames;
	free(pairs);
	return f;
}

void what_if_fix_free(struct what_if_fix *fix)
{
	if (!fix)
		return;
	free(fix->name_ids);
	free(fix->factors);
	free(fix);
}

static int names_match(const struct what_if_fix *f, int64_t name_id)
{
	return !f->nnames || bsearch(&name_id, f->name_ids, f->nnames, sizeof(int64_t), compare_i64);
}

/* The factor a fix applies to a kernel of this name (one that names_match() accepts). */
static double name_factor(const struct what_if_fix *f, int64_t name_id)
{
	const int64_t *at;

	if (!f->factors)
		return f->factor;
	at = bsearch(&name_id, f->name_ids, f->nnames, sizeof(int64_t), compare_i64);
	return at ? f->factors[at - f->name_ids] : 1.0;
}

static int applies(const struct what_if_fix *f, const struct what_if *w, enum what_if_kind kind,
		   int64_t device)
{
	return f->kind == kind && f->trace_id == w->trace_id && (f->device < 0 || f->device == device);
}

/* An operation's duration with the fixes applied. */
static int64_t op_duration(const struct what_if *w, const struct op *o,
			   const struct what_if_fix *const *fixes, size_t n)
{
	double dur = (double)(o->end - o->start);

	for (size_t i = 0; i < n; i++) {
		const struct what_if_fix *f = fixes[i];

		if (o->kind == OP_KERNEL && applies(f, w, WHAT_IF_KERNELS, o->device) &&
		    names_match(f, o->name_id))
			dur *= name_factor(f, o->name_id);
		else if (o->kind == OP_COPY && o->pageable && applies(f, w, WHAT_IF_PINNED, o->device) &&
			 f->factor > 0 && (double)o->bytes / f->factor < dur)
			dur = (double)o->bytes / f->factor;
	}
	return dur < 0 ? 0 : (int64_t)(dur + 0.5);
}

/* A pageable copy that a fix makes pinned: it starts without the staging copy before its DMA
 * (whatever its start was bound by: the staging is what it started after). */
static int pinned(const struct what_if *w, const struct op *o, const struct what_if_fix *const *fixes, size_t n)
{
	for (size_t i = 0; o->kind == OP_COPY && o->pageable && i < n; i++)
		if (applies(fixes[i], w, WHAT_IF_PINNED, o->device))
			return 1;
	return 0;
}

static int call_fixed(const struct what_if *w, const struct call *c, enum what_if_kind kind,
		      const struct what_if_fix *const *fixes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (applies(fixes[i], w, kind, -1) && names_match(fixes[i], c->name_id))
			return 1;
	return 0;
}

/* A call whose operations are all kernels that a graph fix captures. */
static int captured(const struct what_if *w, const struct call *c, const struct what_if_fix *const *fixes,
		    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < c->nops; k++) {
			const struct op *o = &w->ops[w->launched[c->first_op + k]];

			if (o->kind != OP_KERNEL || !applies(fixes[i], w, WHAT_IF_GRAPH, o->device) ||
			    !names_match(fixes[i], o->name_id))
				break;
		}
		if (c->nops && k == c->nops)
			return 1;
	}
	return 0;
}

/* A call that launches only kernels a fix removes (factor 0): it is not made, and the host time
 * since its thread's previous call, up to WHAT_IF_REMOVED_GAP_NS, prepared it and goes with it
 * (rremoved set in this replay). */
static int removed(const struct what_if *w, const struct call *c, const struct what_if_fix *const *fixes,
		   size_t n)
{
	size_t k;

	for (k = 0; k < c->nops; k++) {
		const struct op *o = &w->ops[w->launched[c->first_op + k]];
		size_t i;

		for (i = 0; i < n; i++)
			if (o->kind == OP_KERNEL && applies(fixes[i], w, WHAT_IF_KERNELS, o->device) &&
			    names_match(fixes[i], o->name_id) && name_factor(fixes[i], o->name_id) == 0)
				break;
		if (i == n)
			return 0;
	}
	return c->nops > 0;
}

/* A captured call shortly after another on its thread: part of the same graph launch, it costs
 * nothing (rcaptured of both set in this replay). */
static int in_graph(const struct what_if *w, const struct call *c)
{
	return c->rcaptured && c->prev >= 0 && c->woken_by < 0 && w->calls[c->prev].rcaptured &&
	       c->start - w->calls[c->prev].end <= WHAT_IF_GRAPH_GAP_NS;
}

/* ---- the replay ---- */

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void call_start(struct what_if *w, struct call *c)
{
	c->by = BY_THREAD;
	if (in_graph(w, c) || (c->rremoved && c->prev >= 0 && c->woken_by < 0 &&
			       c->start - w->calls[c->prev].end <= WHAT_IF_REMOVED_GAP_NS)) {
		c->rstart = w->calls[c->prev].rend;	/* no host time between a graph's launches, or
							   before a launch that is not made */
	} else if (c->woken_by >= 0) {
		/* its gap was the wait: what it did after the wake, and no earlier than its previous call */
		const struct call *b = &w->calls[c->woken_by];

		c->rstart = b->rend + (c->start - b->end);
		c->by = BY_WAKE;
		if (c->prev >= 0 && w->calls[c->prev].rend > c->rstart) {
			c->rstart = w->calls[c->prev].rend;
			c->by = BY_THREAD;
		}
	} else if (c->prev >= 0) {
		const struct call *p = &w->calls[c->prev];

		c->rstart = p->rend + (c->start - p->end);
	} else {
		c->rstart = c->start;	/* the thread's first call in the window keeps its time */
	}
}

static void call_end(struct what_if *w, struct call *c, const struct what_if_fix *const *fixes, size_t n)
{
	int64_t dur = c->end - c->start;

	if (call_fixed(w, c, WHAT_IF_NO_CALL, fixes, n) || in_graph(w, c) || c->rremoved) {
		c->rend = c->rstart;
		return;
	}
	if (c->awaited >= 0) {
		const struct op *o = &w->ops[c->awaited];
		int64_t tail = c->end - o->end;	/* what the call took after the operation ended */

		/* a copy made pinned is made asynchronous too (the rule's fix): its call does not wait */
		int own_pinned = o->call >= 0 && &w->calls[o->call] == c && pinned(w, o, fixes, n);

		c->rend = c->rstart + (tail > 0 ? tail : 0);
		if (!call_fixed(w, c, WHAT_IF_NO_WAIT, fixes, n) && !own_pinned && o->rend + tail > c->rend) {
			c->rend = o->rend + tail;
			c->by = BY_AWAITED;
		}
		return;
	}
	c->rend = c->rstart + dur;
}

static void replay_op(struct what_if *w, struct op *o, const struct what_if_fix *const *fixes, size_t n)
{
	int64_t at;

	o->done = 1;
	if (o->call < 0) {
		o->rstart = o->start;
		o->rend = o->end;
		return;
	}
	at = w->calls[o->call].rstart + o->launch_off + o->launch_min;
	o->rby = BY_LAUNCH;
	if (o->use_prev) {
		const struct op *p = &w->ops[o->prev];
		int64_t end = o->use_prev == 2 ? (p->done ? p->rstart : p->start) : p->done ? p->rend : p->end;

		if (end > at) {
			at = end;
			o->rby = BY_STREAM;
		}
	}
	if (o->dep >= 0) {
		const struct op *d = &w->ops[o->dep];
		int64_t end = d->done ? d->rend : d->end;

		if (end > at) {
			at = end;
			o->rby = BY_DEP;
		}
	}
	o->rstart = at + (pinned(w, o, fixes, n) ? 0
			  : o->rby == BY_STREAM && w->calls[o->call].rcaptured
				  ? (o->slack < WHAT_IF_GRAPH_NODE_NS ? o->slack : WHAT_IF_GRAPH_NODE_NS)
				  : o->slack);
	o->rend = o->rstart + op_duration(w, o, fixes, n);
}

struct path {
	const struct what_if *w;
	struct what_if_result *out;
	int64_t end;		/* how far back the path has come */
	int64_t *streams, *stream_ns;
	size_t nstreams;
	int64_t stream;		/* the operation's stream while its own time is added, else -1 */
	struct what_if_segment *segs;	/* when collected: backward in time */
	size_t nsegs, cap;
	int collect;
};

/* The path moves back to `to` (never forward: a stretch is counted once), the time to part. */
static void path_add(struct path *p, enum what_if_part part, int64_t to)
{
	if (p->end <= to)
		return;
	p->out->part_ns[part] += p->end - to;
	if (p->collect) {
		struct what_if_segment *last = p->nsegs ? &p->segs[p->nsegs - 1] : NULL;

		if (last && last->start == p->end && last->part == part && last->stream == p->stream) {
			last->start = to;
		} else {
			if (p->nsegs == p->cap) {
				p->cap = p->cap ? 2 * p->cap : 256;
				p->segs = xrealloc(p->segs, p->cap * sizeof(*p->segs));
			}
			p->segs[p->nsegs++] = (struct what_if_segment){ to, p->end, part, p->stream };
		}
	}
	p->end = to;
}

static void path_stream(struct path *p, int64_t stream, int64_t ns)
{
	size_t s;

	for (s = 0; s < p->nstreams && p->streams[s] != stream; s++)
		;
	if (s == p->nstreams) {
		p->streams = xrealloc(p->streams, (s + 1) * sizeof(*p->streams));
		p->stream_ns = xrealloc(p->stream_ns, (s + 1) * sizeof(*p->stream_ns));
		p->streams[s] = stream;
		p->stream_ns[s] = 0;
		p->nstreams++;
	}
	p->stream_ns[s] += ns;
}

/* From call c's start to what it started after: its thread's previous call, or the call of
 * another thread that woke it. */
static int64_t path_call_start(struct path *p, const struct call *c)
{
	path_add(p, WHAT_IF_HOST, c->rstart);
	if (c->by == BY_WAKE) {
		path_add(p, WHAT_IF_HOST, p->w->calls[c->woken_by].rend);
		return c->woken_by;
	}
	if (c->prev >= 0)
		path_add(p, WHAT_IF_HOST, p->w->calls[c->prev].rend);
	return c->prev;
}

/* From inside call c back to its start, then to its thread's previous call: the next node. */
static int64_t path_call(struct path *p, const struct call *c, int *is_op)
{
	if (c->by == BY_AWAITED) {
		path_add(p, WHAT_IF_HOST, p->w->ops[c->awaited].rend);
		*is_op = 1;
		return c->awaited;
	}
	*is_op = 0;
	return path_call_start(p, c);
}

/* From an operation's end back to what it started after: the next node. */
static int64_t path_op(struct path *p, const struct op *o, int *is_op)
{
	enum what_if_part part = o->kind != OP_KERNEL ? WHAT_IF_COPY : o->nccl ? WHAT_IF_COMM : WHAT_IF_COMPUTE;
	int64_t before = p->end;

	p->stream = o->stream;
	path_add(p, part, o->rstart);
	p->stream = -1;
	path_stream(p, o->stream, before - p->end);
	if (o->call < 0)
		return -1;
	if (o->rby == BY_STREAM && o->use_prev == 2) {
		/* it began while the previous one ran: that time is the previous one's */
		const struct op *q = &p->w->ops[o->prev];

		p->stream = q->stream;
		path_add(p, q->kind != OP_KERNEL ? WHAT_IF_COPY : q->nccl ? WHAT_IF_COMM : WHAT_IF_COMPUTE,
			 o->rstart - o->slack);
		p->stream = -1;
		*is_op = 1;
		return o->prev;
	}
	path_add(p, WHAT_IF_LAUNCH, o->rstart - o->slack);
	if (o->rby == BY_STREAM || o->rby == BY_DEP) {
		int64_t next = o->rby == BY_STREAM ? o->prev : o->dep;

		*is_op = 1;
		return next;
	}
	{
		const struct call *c = &p->w->calls[o->call];

		path_add(p, WHAT_IF_LAUNCH, c->rstart + o->launch_off);
		*is_op = 0;
		return path_call_start(p, c);
	}
}

/* Walk the critical path back from the node that ends last, adding each stretch to its part (and,
 * with segs, collecting the stretches: *segs, *nsegs, in time order). */
static void critical_path(const struct what_if *w, struct what_if_result *out, struct what_if_segment **segs,
			  size_t *nsegs)
{
	struct path p = { .w = w, .out = out, .end = w->h0, .stream = -1, .collect = segs != NULL };
	int64_t node = -1, best = 0;
	int is_op = 0;
	size_t guard = w->ncalls + w->nops + 1;

	for (size_t i = 0; i < w->ncalls; i++)
		if (w->calls[i].rend > p.end) {
			p.end = w->calls[i].rend;
			node = (int64_t)i;
		}
	for (size_t i = 0; i < w->nops; i++)
		if (w->ops[i].call >= 0 && w->ops[i].rend > p.end) {
			p.end = w->ops[i].rend;
			node = (int64_t)i;
			is_op = 1;
		}
	out->window_ns = p.end - w->h0;
	out->top_stream = -1;
	while (node >= 0 && guard--)
		node = is_op ? path_op(&p, &w->ops[node], &is_op) : path_call(&p, &w->calls[node], &is_op);
	path_add(&p, WHAT_IF_HOST, w->h0);	/* before the path's first node */
	for (size_t s = 0; s < p.nstreams; s++)
		if (p.stream_ns[s] > best) {
			best = p.stream_ns[s];
			out->top_stream = p.streams[s];
		}
	free(p.streams);
	free(p.stream_ns);
	if (segs) {
		for (size_t i = 0; i < p.nsegs / 2; i++) {
			struct what_if_segment t = p.segs[i];

			p.segs[i] = p.segs[p.nsegs - 1 - i];
			p.segs[p.nsegs - 1 - i] = t;
		}
		*segs = p.segs;
		*nsegs = p.nsegs;
	}
}

void what_if_replay(struct what_if *w, const struct what_if_fix *const *fixes, size_t n,
		    struct what_if_result *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < w->nops; i++)
		w->ops[i].done = 0;
	for (size_t i = 0; i < w->nops; i++)
		if (w->ops[i].call < 0)
			replay_op(w, &w->ops[i], fixes, n);
	/* In the order the calls ran, each call's operations between its start and its end (a
	 * blocking copy waits for the copy it launched itself). */
	for (size_t i = 0; i < w->ncalls; i++) {
		struct call *c = &w->calls[i];

		c->rcaptured = captured(w, c, fixes, n);
		c->rremoved = removed(w, c, fixes, n);
		call_start(w, c);
		for (size_t k = 0; k < c->nops; k++)
			replay_op(w, &w->ops[w->launched[c->first_op + k]], fixes, n);
		call_end(w, c, fixes, n);
	}
	critical_path(w, out, NULL, NULL);
}

void what_if_critical_path(struct what_if *w, struct what_if_segment **out, size_t *n)
{
	struct what_if_result res;

	what_if_replay(w, NULL, 0, &res);
	memset(&res, 0, sizeof(res));
	critical_path(w, &res, out, n);
}

int64_t what_if_path_parts(const struct what_if_segment *segs, size_t n, int64_t from, int64_t to,
			   int64_t part_ns[WHAT_IF_PARTS])
{
	size_t a = 0, b = n;
	int64_t covered = 0;

	while (a < b) {	/* the first stretch that ends after from */
		size_t m = a + (b - a) / 2;

		if (segs[m].end <= from)
			a = m + 1;
		else
			b = m;
	}
	for (; a < n && segs[a].start < to; a++) {
		int64_t lo = max64(segs[a].start, from), hi = segs[a].end < to ? segs[a].end : to;

		if (hi > lo) {
			part_ns[segs[a].part] += hi - lo;
			covered += hi - lo;
		}
	}
	return covered;
}

int64_t what_if_measured(const struct what_if *w)
{
	return w->measured;
}

size_t what_if_iterations(const struct what_if *w)
{
	return w->iterations;
}

int64_t what_if_trace(const struct what_if *w)
{
	return w->trace_id;
}

const char *what_if_part_name(enum what_if_part part)
{
	static const char *const names[WHAT_IF_PARTS] = {
		[WHAT_IF_HOST] = "host", [WHAT_IF_COMPUTE] = "compute", [WHAT_IF_COMM] = "communication",
		[WHAT_IF_COPY] = "copies", [WHAT_IF_LAUNCH] = "launch and queue",
	};

	return (unsigned)part < WHAT_IF_PARTS ? names[part] : "?";
}

const char *what_if_part_id(enum what_if_part part)
{
	static const char *const ids[WHAT_IF_PARTS] = {
		[WHAT_IF_HOST] = "host", [WHAT_IF_COMPUTE] = "compute", [WHAT_IF_COMM] = "comm",
		[WHAT_IF_COPY] = "copy", [WHAT_IF_LAUNCH] = "launch",
	};

	return (unsigned)part < WHAT_IF_PARTS ? ids[part] : "?";
}

void what_if_free(struct what_if *w)
{
	if (!w)
		return;
	free(w->calls);
	free(w->ops);
	free(w->launched);
	free(w);
}

/* ---- reading the steady state ---- */

/* The walk's columns (gaps.c), so that the report's kept copies of the tables serve these streams. */
static const char *const kernel_cols[] = { "end", "deviceId", "streamId", "graphNodeId", "correlationId",
					   "pid", "nameId", "gridX", "gridY", "gridZ" };
static const char *const copy_cols[] = { "end", "deviceId", "streamId", "graphNodeId", "correlationId",
					 "pid", "bytes", "copyKind", "srcKind", "dstKind" };
static const char *const set_cols[] = { "end", "deviceId", "streamId", "graphNodeId", "correlationId",
					"pid", "bytes", "memKind" };
static const char *const call_cols[] = { "end", "globalTid", "pid", "correlationId", "nameId" };

/* A nested call's correlation id, the top-level call it is in, and how long after its start. */
struct corr_entry {
	int64_t corr, call, offset;
};

static int compare_corr(const void *pa, const void *pb)
{
	const struct corr_entry *a = pa, *b = pb;

	return (a->corr > b->corr) - (a->corr < b->corr);
}

struct loading {
	struct what_if *w;
	struct corr_entry *corr;
	size_t ncorr, cap;
	const struct api_names *names;
	int64_t (*top)[2];		/* per thread: tid, its current top-level call */
	size_t nthreads;
};

/* The thread's current top-level call (-1: none yet), and its slot. */
static int64_t *thread_top(struct loading *l, int64_t tid)
{
	size_t t;

	for (t = 0; t < l->nthreads && l->top[t][0] != tid; t++)
		;
	if (t == l->nthreads) {
		l->top = xrealloc(l->top, (t + 1) * sizeof(*l->top));
		l->top[t][0] = tid;
		l->top[t][1] = -1;
		l->nthreads++;
	}
	return &l->top[t][1];
}

/* One call: a new top-level call of its thread, or one nested in the current one (or the same
 * span twice: a runtime call and its driver twin starting together). */
static void add_call(struct loading *l, const struct event_row *r)
{
	struct what_if *w = l->w;
	int64_t start = r->start, end = event_int(r, 0, r->start), tid = event_int(r, 1, 0);
	int64_t name_id = event_int(r, 4, -1);
	unsigned cls = api_names_class(l->names, w->trace_id, name_id);
	int64_t *top = thread_top(l, tid);

	if (cls & API_REPLAYED)
		return;
	if (end < start)
		end = start;
	if (*top >= 0 && start < w->calls[*top].end) {
		w->calls[*top].cls |= cls;	/* cudaMemcpy's cuMemcpy: the parent blocks too */
	} else if (*top >= 0 && start == w->calls[*top].start) {
		w->calls[*top].cls |= cls;	/* the longer of two starting together */
		w->calls[*top].end = end;
	} else {
		if ((w->ncalls & (w->ncalls - 1)) == 0)	/* grown at each power of two */
			w->calls = xrealloc(w->calls, (w->ncalls ? 2 * w->ncalls : 1) * sizeof(*w->calls));
		w->calls[w->ncalls] = (struct call){ .start = start, .end = end, .name_id = name_id, .tid = tid,
						     .cls = cls, .prev = *top, .awaited = -1, .woken_by = -1 };
		*top = (int64_t)w->ncalls++;
	}
	if (l->ncorr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->corr = xrealloc(l->corr, l->cap * sizeof(*l->corr));
	}
	l->corr[l->ncorr++] = (struct corr_entry){ event_int(r, 3, -1), *top, start - w->calls[*top].start };
}

/* The trace's calls that start in [h0, *h1), in start order, as top-level calls. Past
 * WHAT_IF_MAX_CALLS the window ends at the next steady iteration's start: *h1 and *iterations say
 * where, and how many iterations it holds. */
static int read_calls(const struct analysis_context *a, struct loading *l, const struct trace_phases *tp,
		      int64_t h0, int64_t *h1, size_t *iterations, char *err, size_t errlen)
{
	struct event_stream *st;
	const struct event_row *r;
	int ret = event_stream_open(a->trace, "api_calls", call_cols, sizeof(call_cols) / sizeof(call_cols[0]), 0,
				    -1, &st, err, errlen);
	int capped = 0;

	if (ret < 0)
		return ret;
	while ((ret = event_stream_next(st, &r, err, errlen)) > 0) {
		if (r->trace_id != l->w->trace_id || r->start < h0 || (r->null & EVENT_START_NULL))
			continue;
		if (r->start >= *h1)
			break;
		if (!capped && l->w->ncalls >= WHAT_IF_MAX_CALLS) {
			for (size_t i = tp->first_steady + 1; i < tp->niterations; i++)
				if (tp->iterations[i].host_start > r->start) {
					*h1 = tp->iterations[i].host_start;
					*iterations = i - tp->first_steady;
					break;
				}
			capped = 1;
			if (r->start >= *h1)
				break;
		}
		add_call(l, r);
	}
	event_stream_close(st);
	if (ret < 0)
		return ret;
	if (l->ncorr)
		qsort(l->corr, l->ncorr, sizeof(*l->corr), compare_corr);
	return 0;
}

/* One stream of operations (kernels, copies or sets) with its next row in the window. */
struct op_input {
	struct event_stream *s;
	const struct event_row *row;
	enum op_kind kind;
};

static int op_next(struct op_input *in, int64_t trace_id, int64_t h0, int64_t g1, char *err, size_t errlen)
{
	int ret;

	while ((ret = event_stream_next(in->s, &in->row, err, errlen)) > 0) {
		const struct event_row *r = in->row;

		if (r->trace_id != trace_id || event_int(r, 0, r->start) < h0)
			continue;
		if (r->start > g1)
			break;
		return 1;
	}
	in->row = NULL;
	return ret < 0 ? ret : 0;
}

static void add_op(struct loading *l, const struct op_input *in)
{
	struct what_if *w = l->w;
	const struct event_row *r = in->row;
	struct corr_entry key = { .corr = event_int(r, 4, -1) }, *c;
	struct op *o;

	if ((w->nops & (w->nops - 1)) == 0)
		w->ops = xrealloc(w->ops, (w->nops ? 2 * w->nops : 1) * sizeof(*w->ops));
	o = &w->ops[w->nops++];
	*o = (struct op){ .kind = in->kind, .start = r->start, .end = event_int(r, 0, r->start),
			  .device = event_int(r, 1, 0), .stream = event_int(r, 2, 0), .corr = key.corr,
			  .name_id = in->kind == OP_KERNEL ? event_int(r, 6, -1) : -1,
			  .bytes = in->kind == OP_KERNEL ? 0 : event_int(r, 6, 0),
			  .pageable = in->kind == OP_COPY && (event_int(r, 8, -1) == 0 || event_int(r, 9, -1) == 0),
			  .call = -1, .prev = -1, .dep = -1 };
	if (o->end < o->start)
		o->end = o->start;
	c = l->ncorr ? bsearch(&key, l->corr, l->ncorr, sizeof(*l->corr), compare_corr) : NULL;
	if (c) {
		o->call = c->call;
		o->launch_off = c->offset;
	}
}

/* The operations that end at or after h0 and start by g1, merged from the three views by start. */
static int read_ops(const struct analysis_context *a, struct loading *l, int64_t h0, int64_t g1, char *err,
		    size_t errlen)
{
	struct op_input in[3] = {
		{ .kind = OP_KERNEL }, { .kind = OP_COPY }, { .kind = OP_SET },
	};
	static const char *const views[3] = { "kernels", "copies", "sets" };
	const char *const *cols[3] = { kernel_cols, copy_cols, set_cols };
	const size_t ncols[3] = { sizeof(kernel_cols) / sizeof(kernel_cols[0]), sizeof(copy_cols) / sizeof(copy_cols[0]),
				  sizeof(set_cols) / sizeof(set_cols[0]) };
	int ret = 0;

	for (int k = 0; k < 3 && !ret; k++) {
		ret = event_stream_open(a->trace, views[k], cols[k], ncols[k], 3, -1, &in[k].s, err, errlen);
		if (!ret)
			ret = op_next(&in[k], l->w->trace_id, h0, g1, err, errlen);
		ret = ret < 0 ? ret : 0;
	}
	while (!ret) {
		int best = -1;

		for (int k = 0; k < 3; k++)
			if (in[k].row && (best < 0 || in[k].row->start < in[best].row->start ||
					  (in[k].row->start == in[best].row->start &&
					   event_int(in[k].row, 0, 0) < event_int(in[best].row, 0, 0))))
				best = k;
		if (best < 0)
			break;
		add_op(l, &in[best]);
		ret = op_next(&in[best], l->w->trace_id, h0, g1, err, errlen);
		ret = ret < 0 ? ret : 0;
	}
	for (int k = 0; k < 3; k++)
		if (in[k].s)
			event_stream_close(in[k].s);
	return ret;
}

/* NCCL's kernels by name: their time is communication. */
static void mark_nccl(const struct analysis_context *a, struct what_if *w)
{
	int64_t last = INT64_MIN;
	int nccl = 0;

	for (size_t i = 0; i < w->nops; i++) {
		const struct op *o = &w->ops[i];
		const char *name = NULL;
		char why[256];

		if (o->kind != OP_KERNEL)
			continue;
		if (o->name_id != last) {
			last = o->name_id;
			nccl = trace_string(a->trace, w->trace_id, o->name_id, &name, why, sizeof(why)) == 0 &&
			       name && !strncmp(name, "nccl", 4);
		}
		w->ops[i].nccl = nccl;
	}
}

static const struct what_if *sort_w;	/* qsort's context: single-threaded loading */

static int compare_launched(const void *pa, const void *pb)
{
	const struct op *a = &sort_w->ops[*(const size_t *)pa], *b = &sort_w->ops[*(const size_t *)pb];

	if (a->call != b->call)
		return (a->call > b->call) - (a->call < b->call);
	return (a->start > b->start) - (a->start < b->start);
}

static int compare_end(const void *pa, const void *pb)
{
	const struct op *a = &sort_w->ops[*(const size_t *)pa], *b = &sort_w->ops[*(const size_t *)pb];

	return (a->end > b->end) - (a->end < b->end);
}

static int64_t launched_at(const struct what_if *w, const struct op *o)
{
	return o->call < 0 ? INT64_MIN : w->calls[o->call].start + o->launch_off;
}

/* The latest-ending operation, of by_end[0, n), that ends in [lo, hi] and passes ok(); -1 when none.
 * Looks back at most 64 operations. */
static int64_t latest_end(const struct what_if *w, const size_t *by_end, size_t n, int64_t lo, int64_t hi,
			  int (*ok)(const struct what_if *, const struct op *, const void *), const void *arg)
{
	size_t a = 0, b = n;

	while (a < b) {	/* the first ending after hi */
		size_t m = a + (b - a) / 2;

		if (w->ops[by_end[m]].end <= hi)
			a = m + 1;
		else
			b = m;
	}
	for (size_t k = a, steps = 0; k-- > 0 && steps < 64; steps++) {
		const struct op *o = &w->ops[by_end[k]];

		if (o->end < lo)
			break;
		if (ok(w, o, arg))
			return (int64_t)by_end[k];
	}
	return -1;
}

/* A blocking call waits for an operation launched before it (by any thread) or by itself. */
static int awaitable(const struct what_if *w, const struct op *o, const void *arg)
{
	const struct call *c = arg;

	return launched_at(w, o) <= c->end && (o->call < 0 || w->calls[o->call].start <= c->start);
}

/* A dependency: on another stream of the device, launched before the operation. */
static int dependency(const struct what_if *w, const struct op *o, const void *arg)
{
	const struct op *of = arg;

	return o->device == of->device && o->stream != of->stream && launched_at(w, o) <= launched_at(w, of);
}

static int compare_call_end(const void *pa, const void *pb)
{
	const struct call *a = &sort_w->calls[*(const size_t *)pa], *b = &sort_w->calls[*(const size_t *)pb];

	return (a->end > b->end) - (a->end < b->end);
}

/*
 * Threads that wait for each other without a CUDA call (PyTorch's autograd thread for the main
 * one's backward(), the main one for the backward pass's end): a call after a gap of at least
 * WHAT_IF_GAP_NS on its thread that starts at most WHAT_IF_WAKE_NS, and half the gap, after a call
 * of another thread ended inside that gap was woken by it.
 */
static void woken(struct what_if *w)
{
	size_t *by_end = xcalloc(w->ncalls ? w->ncalls : 1, sizeof(*by_end));

	sort_w = w;
	for (size_t i = 0; i < w->ncalls; i++)
		by_end[i] = i;
	qsort(by_end, w->ncalls, sizeof(*by_end), compare_call_end);
	for (size_t i = 0; i < w->ncalls; i++) {
		struct call *c = &w->calls[i];
		int64_t prev_end;
		size_t a = 0, b = w->ncalls;

		if (c->prev < 0 || c->start - w->calls[c->prev].end < WHAT_IF_GAP_NS)
			continue;
		prev_end = w->calls[c->prev].end;
		while (a < b) {	/* the first call ending after c's start */
			size_t m = a + (b - a) / 2;

			if (w->calls[by_end[m]].end <= c->start)
				a = m + 1;
			else
				b = m;
		}
		for (size_t k = a, steps = 0; k-- > 0 && steps < 64; steps++) {
			const struct call *o = &w->calls[by_end[k]];

			if (o->end < c->start - WHAT_IF_WAKE_NS || o->end <= prev_end ||
			    c->start - o->end > (c->start - prev_end) / 2)
				break;
			if (o->tid != c->tid && o->start < c->start) {
				c->woken_by = (int64_t)by_end[k];
				break;
			}
		}
	}
	free(by_end);
}

/* Each operation's constraints and which bound it; each blocking call's awaited operation. */
static void link(struct what_if *w)
{
	size_t *by_end = xcalloc(w->nops ? w->nops : 1, sizeof(*by_end));
	int64_t (*last)[3] = NULL;	/* device, stream, its latest operation */
	size_t nstreams = 0;
	int64_t (*minimum)[2] = NULL;	/* device, shortest launch-to-start */
	size_t ndevices = 0, d;

	sort_w = w;
	for (size_t i = 0; i < w->nops; i++)
		by_end[i] = i;
	qsort(by_end, w->nops, sizeof(*by_end), compare_end);
	for (size_t i = 0; i < w->nops; i++) {	/* ops are in start order: the stream's previous */
		struct op *o = &w->ops[i];
		size_t s;

		for (s = 0; s < nstreams && (last[s][0] != o->device || last[s][1] != o->stream); s++)
			;
		if (s == nstreams) {
			last = xrealloc(last, (nstreams + 1) * sizeof(*last));
			last[nstreams][0] = o->device;
			last[nstreams][1] = o->stream;
			last[nstreams++][2] = -1;
		}
		o->prev = last[s][2];
		last[s][2] = (int64_t)i;
		if (o->call < 0)
			continue;
		for (d = 0; d < ndevices && minimum[d][0] != o->device; d++)
			;
		if (d == ndevices) {
			minimum = xrealloc(minimum, (ndevices + 1) * sizeof(*minimum));
			minimum[ndevices][0] = o->device;
			minimum[ndevices++][1] = INT64_MAX;
		}
		if (o->start - launched_at(w, o) >= 0 && o->start - launched_at(w, o) < minimum[d][1])
			minimum[d][1] = o->start - launched_at(w, o);
	}
	for (size_t i = 0; i < w->nops; i++) {
		struct op *o = &w->ops[i];
		int64_t launch, stream = INT64_MAX, dep = INT64_MAX;

		if (o->call < 0)
			continue;
		for (d = 0; minimum[d][0] != o->device; d++)
			;
		o->launch_min = minimum[d][1] == INT64_MAX ? 0 : minimum[d][1];
		launch = o->start - launched_at(w, o) - o->launch_min;
		if (launch < 0) {	/* recorded before its launch (clock skew): starts at it */
			o->launch_min += launch;
			launch = 0;
		}
		if (o->prev >= 0 && w->ops[o->prev].end <= o->start) {
			o->use_prev = 1;
			stream = o->start - w->ops[o->prev].end;
		} else if (o->prev >= 0 && w->ops[o->prev].start <= o->start) {
			o->use_prev = 2;	/* it began before the previous one ended */
			stream = o->start - w->ops[o->prev].start;
		}
		o->dep = latest_end(w, by_end, w->nops, o->start - WHAT_IF_DEP_NS, o->start, dependency, o);
		if (o->dep >= 0)
			dep = o->start - w->ops[o->dep].end;
		if (dep >= launch || dep >= stream)
			o->dep = -1, dep = INT64_MAX;
		o->by = BY_LAUNCH;
		o->slack = launch;
		if (stream < o->slack) {
			o->by = BY_STREAM;
			o->slack = stream;
		}
		if (dep < o->slack) {
			o->by = BY_DEP;
			o->slack = dep;
		}
	}
	for (size_t i = 0; i < w->ncalls; i++) {
		struct call *c = &w->calls[i];

		if (c->cls & API_BLOCKS) {
			c->awaited = latest_end(w, by_end, w->nops, c->start, c->end, awaitable, c);
		} else if (c->end - c->start >= WHAT_IF_WAIT_NS) {
			/* A call that blocks without saying so: a copy from pageable memory, a launch into
			 * a full queue. It waited when it returned promptly after an operation ended. */
			int64_t o = latest_end(w, by_end, w->nops, c->start, c->end, awaitable, c);

			if (o >= 0 && c->end - w->ops[o].end <= WHAT_IF_WAIT_NS)
				c->awaited = o;
		}
	}
	woken(w);
	/* each call's operations, in launch order */
	w->launched = xcalloc(w->nops ? w->nops : 1, sizeof(*w->launched));
	for (size_t i = 0; i < w->nops; i++)
		w->launched[i] = i;
	qsort(w->launched, w->nops, sizeof(*w->launched), compare_launched);
	for (size_t i = w->nops; i-- > 0;) {
		const struct op *o = &w->ops[w->launched[i]];

		if (o->call >= 0) {
			w->calls[o->call].first_op = i;
			w->calls[o->call].nops++;
		}
	}
	/* A copy from or to pageable memory holds its call until the last chunk is handed to the DMA,
	 * a few us before the copy ends: the call waits for its own copy. */
	for (size_t i = 0; i < w->ncalls; i++) {
		struct call *c = &w->calls[i];

		for (size_t k = 0; k < c->nops; k++) {
			size_t j = w->launched[c->first_op + k];
			const struct op *o = &w->ops[j];

			if (o->kind == OP_COPY && o->pageable && c->end > o->start &&
			    (c->awaited < 0 || w->ops[c->awaited].end < o->end))
				c->awaited = (int64_t)j;
		}
	}
	free(by_end);
	free(last);
	free(minimum);
}

static void first_launch_row(sqlite3_stmt *st, void *arg)
{
	if (sqlite3_column_type(st, 0) != SQLITE_NULL)
		*(int64_t *)arg = sqlite3_column_int64(st, 0);
}

/* Iterations found in the kernel sequence begin on the GPU, and a GPU-bound program's host launched
 * their work earlier, ahead of it: the window's first call is the one that launched the first
 * steady iteration's first operation (*h0 moved back to it; left alone when it is not found). */
static int first_launch(const struct analysis_context *a, const struct trace_phases *tp, int64_t *h0, char *err,
			size_t errlen)
{
	int64_t t = tp->trace_id, at = tp->iterations[tp->first_steady].start, launch = INT64_MAX;
	char sql[1024];
	int ret;

	snprintf(sql, sizeof(sql),
		 "WITH op AS (SELECT start, correlationId FROM (SELECT start, correlationId FROM kernels WHERE "
		 "traceId = %" PRId64 " AND start >= %" PRId64 " UNION ALL SELECT start, correlationId FROM copies "
		 "WHERE traceId = %" PRId64 " AND start >= %" PRId64 " UNION ALL SELECT start, correlationId FROM sets "
		 "WHERE traceId = %" PRId64 " AND start >= %" PRId64 ") ORDER BY start LIMIT 1) "
		 "SELECT max(start) FROM api_calls WHERE traceId = %" PRId64 " AND start <= (SELECT start FROM op) "
		 "AND correlationId = (SELECT correlationId FROM op)",
		 t, at, t, at, t, at, t);
	ret = analysis_query(a, sql, first_launch_row, &launch, err, errlen);
	if (!ret && launch < *h0)
		*h0 = launch;
	return ret;
}

int what_if_load(const struct analysis_context *a, const struct trace_phases *tp, struct what_if **out,
		 char *err, size_t errlen)
{
	struct api_names names = { 0 };
	struct loading l = { 0 };
	struct what_if *w;
	int64_t h0, h1, g1;
	int ret;

	*out = NULL;
	if (!tp->niterations || tp->first_steady >= tp->niterations)
		return 1;
	h0 = tp->iterations[tp->first_steady].host_start;
	h1 = tp->iterations[tp->niterations - 1].host_end;
	g1 = max64(h1, tp->iterations[tp->niterations - 1].end);
	if (h1 <= h0)
		return 1;
	if (tp->source == ITERATIONS_KERNELS && (ret = first_launch(a, tp, &h0, err, errlen)) < 0)
		return ret;
	ret = api_names_load(a, &names, err, errlen);
	if (ret < 0)
		return ret;
	w = xcalloc(1, sizeof(*w));
	w->trace_id = tp->trace_id;
	w->iterations = tp->niterations - tp->first_steady;
	l.w = w;
	l.names = &names;
	ret = read_calls(a, &l, tp, h0, &h1, &w->iterations, err, errlen);
	if (!ret && w->iterations < tp->niterations - tp->first_steady)	/* capped */
		g1 = max64(h1, tp->iterations[tp->first_steady + w->iterations - 1].end);
	if (!ret)
		ret = read_ops(a, &l, h0, g1, err, errlen);
	free(l.corr);
	free(l.top);
	api_names_release(&names);
	if (ret < 0 || !w->ncalls) {
		what_if_free(w);
		return ret < 0 ? ret : 1;
	}
	mark_nccl(a, w);
	link(w);
	w->h0 = w->calls[0].start;
	{
		int64_t end = w->h0;

		for (size_t i = 0; i < w->ncalls; i++)
			end = max64(end, w->calls[i].end);
		for (size_t i = 0; i < w->nops; i++)
			if (w->ops[i].call >= 0)
				end = max64(end, w->ops[i].end);
		w->measured = end - w->h0;
	}
	*out = w;
	return 0;
}
