/*
 * Reading a trace's steady state into the what-if replay's graph (what-if.h): its calls and
 * operations from the loader's event streams, in time order, then each one's constraints (its
 * launch, its stream's previous operation, a dependency on another stream, the operation a blocking
 * call waited for, the thread that woke a waiting one).
 */
#include "analyzer/analysis/what-if-private.h"
#include "analyzer/analysis/gaps.h"
#include "analyzer/loader/events.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Each operation's previous one on its stream; per device, the shortest launch-to-start time of the
 * operations launched in the window: minimum[d] = {device, ns}, *ndevices of them (free() it). */
static int64_t (*stream_order(struct what_if *w, size_t *ndevices))[2]
{
	int64_t (*last)[3] = NULL;	/* device, stream, its latest operation */
	int64_t (*minimum)[2] = NULL;
	size_t nstreams = 0, d;

	*ndevices = 0;
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
		for (d = 0; d < *ndevices && minimum[d][0] != o->device; d++)
			;
		if (d == *ndevices) {
			minimum = xrealloc(minimum, (*ndevices + 1) * sizeof(*minimum));
			minimum[*ndevices][0] = o->device;
			minimum[(*ndevices)++][1] = INT64_MAX;
		}
		if (o->start - launched_at(w, o) >= 0 && o->start - launched_at(w, o) < minimum[d][1])
			minimum[d][1] = o->start - launched_at(w, o);
	}
	free(last);
	return minimum;
}

/* Each launched operation's constraints (launch, stream, dependency) and the one it started least
 * after. by_end: the operations by end. */
static void op_constraints(struct what_if *w, const size_t *by_end, const int64_t (*minimum)[2], size_t ndevices)
{
	for (size_t i = 0; i < w->nops; i++) {
		struct op *o = &w->ops[i];
		int64_t launch, stream = INT64_MAX, dep = INT64_MAX;
		size_t d;

		if (o->call < 0)
			continue;
		for (d = 0; d < ndevices && minimum[d][0] != o->device; d++)
			;
		o->launch_min = d == ndevices || minimum[d][1] == INT64_MAX ? 0 : minimum[d][1];
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
}

/* Each blocking call's awaited operation, and the calls that blocked without saying so. */
static void blocking_calls(struct what_if *w, const size_t *by_end)
{
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
}

/* Each call's operations in launch order (w->launched); a pageable copy's call waits for its copy. */
static void launch_order(struct what_if *w)
{
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
}

/* Each operation's constraints and which bound it; each blocking call's awaited operation. */
static void link(struct what_if *w)
{
	size_t *by_end = xcalloc(w->nops ? w->nops : 1, sizeof(*by_end));
	int64_t (*minimum)[2];
	size_t ndevices;

	sort_w = w;
	for (size_t i = 0; i < w->nops; i++)
		by_end[i] = i;
	qsort(by_end, w->nops, sizeof(*by_end), compare_end);
	minimum = stream_order(w, &ndevices);
	op_constraints(w, by_end, (const int64_t (*)[2])minimum, ndevices);
	blocking_calls(w, by_end);
	woken(w);
	launch_order(w);
	free(by_end);
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
	g1 = what_if_max64(h1, tp->iterations[tp->niterations - 1].end);
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
		g1 = what_if_max64(h1, tp->iterations[tp->first_steady + w->iterations - 1].end);
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
			end = what_if_max64(end, w->calls[i].end);
		for (size_t i = 0; i < w->nops; i++)
			if (w->ops[i].call >= 0)
				end = what_if_max64(end, w->ops[i].end);
		w->measured = end - w->h0;
	}
	*out = w;
	return 0;
}
