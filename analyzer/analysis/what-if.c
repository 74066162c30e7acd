/*
 * The what-if replay (what-if.h): the graph of the steady state's calls and operations (read by
 * what-if-load.c) replayed in the order it ran, each node after the ones it depends on (every
 * constraint points back in time: to a thread's previous call, an operation's launch, its stream's
 * previous operation, a dependency launched before it), the fixes applied; and its critical path.
 */
#include "analyzer/analysis/what-if-private.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

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
		int64_t lo = what_if_max64(segs[a].start, from), hi = segs[a].end < to ? segs[a].end : to;

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

enum what_if_part what_if_largest_part(const int64_t part_ns[WHAT_IF_PARTS])
{
	int top = WHAT_IF_PARTS;

	for (int p = 0; p < WHAT_IF_PARTS; p++)
		if (part_ns[p] > 0 && (top == WHAT_IF_PARTS || part_ns[p] > part_ns[top]))
			top = p;
	return (enum what_if_part)top;
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
