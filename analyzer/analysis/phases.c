/*
 * Phases, iterations and idle attribution (see phases.h). Two reads of the trace: a cheap one that
 * finds the iterations (the NVTX ranges, or the kernel sequence in start order), then one gap walk
 * with attribution that files every operation and every idle ns under its iteration. Per-cause
 * totals are kept per bucket: before the iterations, each of the first WARM_MAX iterations (the only
 * ones that can be warm-up), the rest together, after them, and start-up; so memory grows with the
 * number of iterations and distinct causes, not with the events.
 *
 * Finding the iterations is phases-iterations.c.
 */
#include "analyzer/analysis/phases-private.h"
#include "analyzer/loader/windows.h"
#include "common/strtab.h"

const char *phase_name(enum phase_id id)
{
	static const char *const names[PHASE_COUNT] = { "start-up", "warm-up", "steady", "tear-down" };

	return (unsigned)id < PHASE_COUNT ? names[id] : "?";
}

_Static_assert(PHASE_IDLE_KINDS == IDLE_NKINDS && PHASE_IDLE_UNKNOWN == IDLE_UNKNOWN &&
	       PHASE_IDLE_PROFILER == IDLE_PROFILER, "phases.h's idle kinds are gaps.h's");

const char *phase_idle_kind_name(int kind)
{
	return idle_kind_name((enum idle_kind)kind);
}

const char *idle_cause_label(const struct idle_cause *c, char *buf, size_t len)
{
	char range[160] = "";
	const char *category;

	if (c->range)
		snprintf(range, sizeof(range), " (in NVTX range '%s')", c->range);
	switch (c->kind) {
	case IDLE_SYNC:
		snprintf(buf, len, "blocked in %s%s", c->detail ? c->detail : "a synchronizing call", range);
		break;
	case IDLE_CUDA:
		category = api_category(c->detail);
		snprintf(buf, len, "in %s%s%s%s", c->detail ? c->detail : "a CUDA call", category ? " (" : "",
			 category ? category : "", category ? ")" : "");
		if (c->range && strlen(buf) + strlen(range) < len)
			strcat(buf, range);
		break;
	case IDLE_RANGE:
		snprintf(buf, len, "host code in NVTX range '%s'", c->detail ? c->detail : "");
		break;
	case IDLE_HOST:
		snprintf(buf, len, "host code outside NVTX ranges");
		break;
	case IDLE_LAUNCH:
		snprintf(buf, len, "%s", c->detail ? c->detail : "launch call and launch latency");
		break;
	case IDLE_QUEUED:
		snprintf(buf, len, "issued early, started late (a dependency or launch latency)");
		break;
	case IDLE_PROFILER:
		snprintf(buf, len, "the profiler's own work: %s", c->detail ? c->detail : "kernel replay (--metrics)");
		break;
	default:
		snprintf(buf, len, "no API record of the launch");
	}
	return buf;
}

/* ---- owned strings ---- */

/* s's one copy: equal texts are one pointer, which phase_causes merges by. */
static const char *keep(struct phases *p, const char *s)
{
	return s ? strtab_at(p->strings, strtab_get(p->strings, s, NULL)) : NULL;
}

/* ---- the walk ---- */

/* Idle totals per (bucket, kind, detail, range), keyed by the strings' addresses during the walk. */
struct cause_sums {
	struct key_index index;
	struct idle_cause *items;	/* kind, detail, range point into the walk's strings */
	int *bucket;
	int64_t *trace;
};

/* The unions of time_split: compute, communication, memory, compute or communication. */
enum { UNION_COMPUTE, UNION_COMM, UNION_MEMORY, UNION_COMPUTE_OR_COMM, UNION_CATEGORIES };

struct walk_state {
	struct phases *phases;
	const struct analysis_context *ctx;
	struct cause_sums sums;
	struct time_split (*split)[NBUCKETS];	/* per trace */
	struct key_index kernels;	/* (traceId, nameId) -> is_nccl[], kernel_key[], kernel_last[] */
	int *is_nccl;
	int64_t (*kernel_key)[2];	/* traceId, nameId */
	long *kernel_last;		/* the last iteration that launched it, or -1 */
	int64_t *first_op, *last_first_end, *last_end;	/* per trace */
	struct trace_windows windows;	/* capture windows (analyzer/loader/windows.h) */
	struct key_index union_index;	/* (traceId, deviceId) -> union_end[] */
	int64_t (*union_end)[UNION_CATEGORIES];	/* per device: where each category's union ends so far */
};

static void add_cause(struct walk_state *s, int64_t trace_id, int bucket, const struct idle_part *p, int64_t ns)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id * NBUCKETS + bucket, p->kind, (int64_t)(intptr_t)p->detail,
					 (int64_t)(intptr_t)p->range };
	int created;
	size_t i = key_index_get(&s->sums.index, key, &created);

	if (created) {
		s->sums.items = xrealloc(s->sums.items, (i + 1) * sizeof(*s->sums.items));
		s->sums.bucket = xrealloc(s->sums.bucket, (i + 1) * sizeof(*s->sums.bucket));
		s->sums.trace = xrealloc(s->sums.trace, (i + 1) * sizeof(*s->sums.trace));
		s->sums.items[i] = (struct idle_cause){ .kind = p->kind, .detail = p->detail, .range = p->range };
		s->sums.bucket[i] = bucket;
		s->sums.trace[i] = trace_id;
	}
	s->sums.items[i].ns += ns;
	s->sums.items[i].count++;
}

/* Which iteration an operation belongs to: -1 before the first, -2 after the last. */
static long iteration_of(const struct trace_phases *tp, const struct gap *g)
{
	int64_t at = tp->source == ITERATIONS_KERNELS || g->api_start < 0 ? g->next_start : g->api_start;
	size_t lo = 0, hi = tp->niterations;

	if (!tp->niterations || at < tp->iterations[0].host_start)
		return -1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (tp->iterations[mid].host_start <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == tp->niterations && at >= tp->iterations[lo - 1].host_end)
		return -2;
	return (long)lo - 1;
}

/* How much the interval [start, end) adds to a union that so far ends at *union_end. */
static int64_t union_add(int64_t *union_end, int64_t start, int64_t end)
{
	int64_t from = start > *union_end ? start : *union_end, added = end > from ? end - from : 0;

	if (end > *union_end)
		*union_end = end;
	return added;
}

/*
 * The operation's share of its device's unions (time_split's union_*): operations come in start
 * order, so each adds what lies past its category's union so far. Both splits (the bucket's and
 * the iteration's, when there is one) get it.
 */
static void add_unions(struct walk_state *s, const struct gap *g, int nccl, struct time_split *split[2])
{
	int64_t key[KEY_INDEX_WORDS] = { g->trace_id, g->device };
	int created;
	size_t d = key_index_get(&s->union_index, key, &created);
	int64_t *end, added, either = 0;

	if (created) {
		s->union_end = xrealloc(s->union_end, (d + 1) * sizeof(*s->union_end));
		for (int c = 0; c < UNION_CATEGORIES; c++)
			s->union_end[d][c] = INT64_MIN;
	}
	end = s->union_end[d];
	added = union_add(&end[g->next_op != GPU_OP_KERNEL ? UNION_MEMORY : nccl ? UNION_COMM : UNION_COMPUTE],
			  g->next_start, g->next_end);
	if (g->next_op == GPU_OP_KERNEL)
		either = union_add(&end[UNION_COMPUTE_OR_COMM], g->next_start, g->next_end);
	for (int k = 0; k < 2; k++) {
		struct time_split *sp = split[k];

		if (!sp)
			continue;
		if (g->next_op != GPU_OP_KERNEL)
			sp->union_memory_ns += added;
		else if (nccl)
			sp->union_comm_ns += added;
		else
			sp->union_compute_ns += added;
		sp->union_compute_or_comm_ns += either;
	}
}

/* The kernel's index in s->kernels (*is_new set on its first launch), *nccl whether NCCL's. */
static size_t kernel_index(struct walk_state *s, const struct gap *g, int *is_new, int *nccl)
{
	int64_t key[KEY_INDEX_WORDS] = { g->trace_id, g->next_name_id };
	size_t i = key_index_get(&s->kernels, key, is_new);

	if (*is_new) {
		struct fmt_text name;

		s->is_nccl = xrealloc(s->is_nccl, (i + 1) * sizeof(*s->is_nccl));
		s->kernel_key = xrealloc(s->kernel_key, (i + 1) * sizeof(*s->kernel_key));
		s->kernel_last = xrealloc(s->kernel_last, (i + 1) * sizeof(*s->kernel_last));
		s->is_nccl[i] = !strncmp(
		    fmt_kernel_name(&name, s->ctx->trace, g->trace_id, g->next_name_id), "nccl", 4);
		s->kernel_key[i][0] = g->trace_id;
		s->kernel_key[i][1] = g->next_name_id;
		s->kernel_last[i] = -1;
	}
	*nccl = s->is_nccl[i];
	return i;
}

static void unions_release(struct walk_state *s)
{
	key_index_release(&s->union_index);
	free(s->union_end);
	s->union_end = NULL;
}

static void kernels_release(struct walk_state *s)
{
	key_index_release(&s->kernels);
	free(s->is_nccl);
	free(s->kernel_key);
	free(s->kernel_last);
	s->is_nccl = NULL;
	s->kernel_key = NULL;
	s->kernel_last = NULL;
}

static int on_op(const struct gap *g, void *arg)
{
	struct walk_state *s = arg;
	struct trace_phases *tp = &s->phases->traces[g->trace_id];
	int nccl = 0, is_new = 0, bucket;
	struct iteration *it = NULL;
	struct time_split *split[2];
	int64_t idle = g->end - g->start;
	size_t kernel = SIZE_MAX;
	long idx;

	if (g->next_op == GPU_OP_KERNEL && g->next_name_id >= 0)
		kernel = kernel_index(s, g, &is_new, &nccl);
	if (g->startup) {
		tp->phase[PHASE_STARTUP].start = g->start;
		tp->phase[PHASE_STARTUP].end = g->end;
		for (size_t i = 0; i < g->nparts; i++)
			add_cause(s, g->trace_id, BUCKET_STARTUP, &g->parts[i], g->parts[i].ns);
		idle = 0;	/* not device idle time; the operation itself still counts below */
	}
	if (s->first_op[g->trace_id] == INT64_MIN)
		s->first_op[g->trace_id] = g->next_start;
	if (is_new && g->next_end > s->last_first_end[g->trace_id])
		s->last_first_end[g->trace_id] = g->next_end;
	if (g->next_end > s->last_end[g->trace_id])
		s->last_end[g->trace_id] = g->next_end;

	if (tp->source == ITERATIONS_NONE) {
		/* Without iterations: warm-up until the last first launch, when that is early. */
		bucket = g->next_start < tp->warmup_until ? BUCKET_PRE : BUCKET_ITER(WARM_MAX);
		idx = -1;
	} else {
		idx = iteration_of(tp, g);
		bucket = idx == -1 ? BUCKET_PRE : idx == -2 ? BUCKET_POST : BUCKET_ITER(idx);
	}
	if (idx >= 0) {
		it = &tp->iterations[idx];
		it->operations++;
		it->new_kernels += is_new;
		if (kernel != SIZE_MAX && idx > s->kernel_last[kernel])
			s->kernel_last[kernel] = idx;
		if (!g->startup && g->start < it->start)
			it->start = g->start;
		if (g->next_start < it->start)
			it->start = g->next_start;
		if (g->next_end > it->end)
			it->end = g->next_end;
	}
	split[0] = &s->split[g->trace_id][bucket];
	split[1] = it ? &it->split : NULL;
	add_unions(s, g, nccl, split);
	for (int k = 0; k < 2; k++) {
		struct time_split *sp = split[k];

		if (!sp)
			continue;
		if (g->next_op != GPU_OP_KERNEL)
			sp->copy_ns += g->next_busy;
		else if (nccl)
			sp->comm_ns += g->next_busy;
		else
			sp->compute_ns += g->next_busy;
		sp->idle_ns += idle;
		for (size_t i = 0; idle && i < g->nparts; i++)
			sp->idle_kind_ns[g->parts[i].kind] += g->parts[i].ns;
	}
	if (idle <= 0)
		return 0;
	for (size_t i = 0; i < g->nparts; i++) {
		struct idle_part p = g->parts[i];

		if (p.kind == IDLE_LAUNCH && is_new)
			p.detail = first_launch;
		add_cause(s, g->trace_id, bucket, &p, p.ns);
		if (it && p.ns > it->top_ns) {
			it->top_ns = p.ns;
			it->top_kind = p.kind;
			it->top_detail = p.detail;	/* made permanent after the walk */
		}
	}
	return 0;
}

/* Empty the walk's state for a walk over n traces. */
static void walk_state_reset(struct walk_state *s, size_t n)
{
	for (size_t t = 0; t < n; t++) {
		struct trace_phases *tp = &s->phases->traces[t];

		for (size_t i = 0; i < tp->niterations; i++) {
			struct iteration *it = &tp->iterations[i];

			*it = (struct iteration){ .host_start = it->host_start, .host_end = it->host_end,
						  .start = INT64_MAX, .end = INT64_MIN, .step = it->step };
		}
		memset(&tp->phase[PHASE_STARTUP], 0, sizeof(tp->phase[PHASE_STARTUP]));
	}
	key_index_release(&s->sums.index);
	free(s->sums.items);
	free(s->sums.bucket);
	free(s->sums.trace);
	memset(&s->sums, 0, sizeof(s->sums));
	kernels_release(s);
	unions_release(s);
	free(s->split);
	s->split = xcalloc(n ? n : 1, sizeof(*s->split));
	for (int k = 0; k < 3; k++) {
		int64_t **a = k == 0 ? &s->first_op : k == 1 ? &s->last_first_end : &s->last_end;

		free(*a);
		*a = xmalloc((n ? n : 1) * sizeof(int64_t));
		for (size_t t = 0; t < n; t++)
			(*a)[t] = INT64_MIN;
	}
}

/* ---- putting the phases together ---- */

static void split_add(struct time_split *to, const struct time_split *from)
{
	to->compute_ns += from->compute_ns;
	to->comm_ns += from->comm_ns;
	to->copy_ns += from->copy_ns;
	to->idle_ns += from->idle_ns;
	for (int k = 0; k < PHASE_IDLE_KINDS; k++)
		to->idle_kind_ns[k] += from->idle_kind_ns[k];
	to->union_compute_ns += from->union_compute_ns;
	to->union_comm_ns += from->union_comm_ns;
	to->union_memory_ns += from->union_memory_ns;
	to->union_compute_or_comm_ns += from->union_compute_or_comm_ns;
}

static int64_t split_total(const struct time_split *s)
{
	return s->compute_ns + s->comm_ns + s->copy_ns + s->idle_ns;
}

int time_split_union(const struct time_split *s, struct union_shares *u)
{
	int64_t total = split_total(s);

	memset(u, 0, sizeof(*u));
	u->overlap_ns = s->union_compute_ns + s->union_comm_ns - s->union_compute_or_comm_ns;
	if (s->union_comm_ns <= 0 || total <= 0)
		return 0;
	u->compute = 100.0 * (double)s->union_compute_ns / (double)total;
	u->comm = 100.0 * (double)s->union_comm_ns / (double)total;
	u->memory = 100.0 * (double)s->union_memory_ns / (double)total;
	u->idle = 100.0 * (double)s->idle_ns / (double)total;
	u->overlap = 100.0 * (double)u->overlap_ns / (double)s->union_comm_ns;
	return 1;
}

static int compare_causes(const void *pa, const void *pb)
{
	const struct idle_cause *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->kind - b->kind;
}

static int compare_ns(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* The causes of the buckets [from, to] of one trace, merged by (kind, detail, range), largest first. */
static void phase_causes(struct phases *p, struct walk_state *s, struct phase *ph, int from, int to,
			 int64_t trace_id)
{
	for (size_t i = 0; i < s->sums.index.count; i++) {
		const struct idle_cause *c = &s->sums.items[i];
		const char *detail = keep(p, c->detail), *range = keep(p, c->range);
		struct idle_cause *m = NULL;

		if (s->sums.bucket[i] < from || s->sums.bucket[i] > to || s->sums.trace[i] != trace_id)
			continue;
		for (size_t j = 0; j < ph->ncauses && !m; j++)
			if (ph->causes[j].kind == c->kind && ph->causes[j].detail == detail && ph->causes[j].range == range)
				m = &ph->causes[j];
		if (!m) {
			ph->causes = xrealloc(ph->causes, (ph->ncauses + 1) * sizeof(*ph->causes));
			m = &ph->causes[ph->ncauses++];
			*m = (struct idle_cause){ .kind = c->kind, .detail = detail, .range = range };
		}
		m->ns += c->ns;
		m->count += c->count;
	}
	if (ph->ncauses > 1)
		qsort(ph->causes, ph->ncauses, sizeof(*ph->causes), compare_causes);
}

static void phase_set(struct phase *ph, int64_t start, int64_t end, char *reason)
{
	ph->start = start;
	ph->end = end > start ? end : start;
	free(ph->reason);
	ph->reason = reason;
}

static void buckets_into(struct phases *p, struct walk_state *s, struct trace_phases *tp, enum phase_id id,
			 int from, int to)
{
	for (int b = from; b <= to; b++)
		split_add(&tp->phase[id].split, &s->split[tp->trace_id][b]);
	phase_causes(p, s, &tp->phase[id], from, to, tp->trace_id);
}

/* Warm-up iterations, the steady statistics, the phases' bounds and reasons of one trace. */
/* A trace with no GPU work: all of it start-up. */
static void assemble_no_gpu(struct trace_phases *tp, int64_t trace_end)
{
	struct phase *startup = &tp->phase[PHASE_STARTUP];

	phase_set(startup, startup->start, trace_end, xstrdup("the trace has no GPU work"));
	for (int i = PHASE_WARMUP; i < PHASE_COUNT; i++)
		phase_set(&tp->phase[i], trace_end, trace_end, xstrdup("no GPU work"));
}

/* No iterations: warm-up to the end of the last first launch of a kernel, the rest steady. */
static void assemble_no_iterations(struct phases *p, struct walk_state *s, struct trace_phases *tp,
				   int64_t first_op, int64_t trace_end)
{
	int64_t until = tp->warmup_until > first_op ? tp->warmup_until : first_op;

	if (until > trace_end)
		until = trace_end;

	buckets_into(p, s, tp, PHASE_WARMUP, BUCKET_PRE, BUCKET_PRE);
	buckets_into(p, s, tp, PHASE_STEADY, BUCKET_ITER(WARM_MAX), BUCKET_ITER(WARM_MAX));
	phase_set(&tp->phase[PHASE_WARMUP], first_op, until,
		  xstrdup(tp->warmup_until == INT64_MAX
				  ? "no iterations found, and most kernel launches are first launches: nothing "
				    "repeats, so there is no steady state to judge"
				  : until > first_op ? "no iterations found: from the first GPU operation to the end of "
						       "the last first launch of a kernel"
						     : "no iterations found, and kernels are first launched throughout: "
						       "no warm-up is set apart"));
	phase_set(&tp->phase[PHASE_STEADY], until, trace_end,
		  xstrdup("no iterations found (no repeating NVTX range, no repeating kernel sequence): the "
			  "rest of the trace"));
	phase_set(&tp->phase[PHASE_TEARDOWN], trace_end, trace_end, xstrdup("no iterations found"));
	tp->first_steady = 0;
}

/* The warm-up iterations, and why each counts as warm-up. */
struct warmup {
	size_t w;				/* iterations 0 .. w - 1 are warm-up */
	int64_t new_kernels, slow, once, once_kernels;
	/* by iteration: how many kernels launch for the last time in it, and one of them + 1 */
	size_t nlast[WARM_MAX], last_of[WARM_MAX];
};

/* Mark the warm-up iterations among the first: those that launch a kernel for the first or the last
 * time, then the slow ones that follow them. */
static void find_warmup(struct walk_state *s, struct trace_phases *tp, struct warmup *wu)
{
	size_t n = tp->niterations, limit = n / 2 < WARM_MAX ? n / 2 : WARM_MAX, w = 0;
	int64_t *d = xmalloc(n * sizeof(*d)), median;

	for (size_t i = 0; i < n; i++)
		d[i] = split_total(&tp->iterations[i].split);
	qsort(d, n, sizeof(*d), compare_ns);
	median = d[n / 2];
	free(d);
	/* One-time work (DDP rebuilding its buckets at the second step, say): a kernel that no later
	   iteration launches again. */
	for (size_t k = 0; k < s->kernels.count; k++) {
		long it = s->kernel_last[k];

		if (s->kernel_key[k][0] != tp->trace_id || it < 0 || (size_t)it >= limit)
			continue;
		if (!wu->nlast[it]++)
			wu->last_of[it] = k + 1;
	}
	/* Kernels launched for the first or the last time mark warm-up wherever they are among the
	   first iterations; a slow iteration only when it follows the warm-up (or is the first): a
	   straggler or a checkpoint every few steps is a cost of the steady state. In a trace recorded
	   in windows, the first iteration shows every kernel for the first time because the window
	   opened there (GPT-2's step 10 of 30 "launched 62 kernels for the first time"), and is not the
	   program's first: neither makes it warm-up. */
	for (size_t i = 0; i < limit; i++)
		if ((tp->iterations[i].new_kernels > 0 && !(tp->windowed && i == 0)) || wu->last_of[i])
			w = i + 1;
	while (w < limit && !(tp->windowed && w == 0) && split_total(&tp->iterations[w].split) > 2 * median)
		w++;
	for (size_t i = 0; i < w; i++) {
		tp->iterations[i].warmup = 1;
		wu->new_kernels += tp->iterations[i].new_kernels;
		wu->slow += split_total(&tp->iterations[i].split) > 2 * median;
		wu->once += wu->nlast[i] != 0;
		wu->once_kernels += (int64_t)wu->nlast[i];
	}
	wu->w = w;
	tp->first_steady = w;
}

/* The steady iterations' median and p90, and the five slowest, slowest first (earlier first among
 * equals). */
static void steady_iterations(struct trace_phases *tp, size_t w)
{
	size_t n = tp->niterations, nsteady = n - w;
	int64_t *d = xmalloc(n * sizeof(*d));

	for (size_t i = 0; i < nsteady; i++)
		d[i] = split_total(&tp->iterations[w + i].split);
	qsort(d, nsteady, sizeof(*d), compare_ns);
	tp->median_ns = d[nsteady / 2];
	tp->p90_ns = d[(nsteady * 9) / 10 < nsteady ? (nsteady * 9) / 10 : nsteady - 1];
	for (size_t i = w; i < n; i++) {
		int64_t di = split_total(&tp->iterations[i].split);
		size_t pos = tp->nslowest;

		while (pos > 0 && split_total(&tp->iterations[tp->slowest[pos - 1]].split) < di)
			pos--;
		if (pos >= 5)
			continue;
		if (tp->nslowest < 5)
			tp->nslowest++;
		memmove(&tp->slowest[pos + 1], &tp->slowest[pos], (tp->nslowest - 1 - pos) * sizeof(size_t));
		tp->slowest[pos] = i;
	}
	free(d);
}

/* The warm-up phase, with the reasons its iterations are warm-up. */
static void warmup_phase(struct walk_state *s, struct trace_phases *tp, int64_t first_op, const struct warmup *wu)
{
	size_t w = wu->w;
	char which[32], why[512] = "";

	if (!w) {
		phase_set(&tp->phase[PHASE_WARMUP], first_op, tp->iterations[0].start,
			  xstrdup("from the first GPU operation to the first iteration (no iteration launched "
				  "new or one-time kernels, or ran slow)"));
		return;
	}
	snprintf(which, sizeof(which), w > 1 ? "iterations 1-%zu" : "iteration 1", w);
	if (wu->new_kernels)
		snprintf(why, sizeof(why), "launched %" PRId64 " kernel%s for the first time", wu->new_kernels,
			 wu->new_kernels == 1 ? "" : "s");
	if (wu->slow)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s%" PRId64
			 " took over twice the median iteration", wu->new_kernels ? "; " : "", wu->slow);
	if (wu->once) {
		/* name one: the kernel of the last iteration with one-time work */
		size_t k = 0, i = w;
		struct fmt_text name;

		while (i-- > 0 && !k)
			k = wu->last_of[i];
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 "%s%" PRId64
			 " launched %s that no later iteration launches (one-time work%s %s)",
			 wu->new_kernels || wu->slow ? "; " : "", wu->once,
			 wu->once_kernels == 1 ? "a kernel" : "kernels",
			 wu->once_kernels == 1 ? ":" : ", such as",
			 fmt_kernel_name(&name, s->ctx->trace, s->kernel_key[k - 1][0],
					 s->kernel_key[k - 1][1]));
	}
	phase_set(&tp->phase[PHASE_WARMUP], first_op, tp->iterations[w].start,
		  xasprintf("from the first GPU operation to iteration %zu: %s %s", w + 1, which, why));
}

const char *iteration_start_words(const struct trace_phases *tp, char *buf, size_t len)
{
	struct fmt_text gap;

	switch (tp->start_by) {
	case ITERATION_START_GAP:
		if (tp->period_multiple > 1)
			snprintf(buf, len, "a sequence of %" PRId64 " kernels repeats %" PRId64 " times between idle gaps "
				 "that recur once per period (median %s): identical layers of one step; each "
				 "iteration starts after the gap, its first kernel %s", tp->period_ops / tp->period_multiple,
				 tp->period_multiple, fmt_duration(&gap, tp->start_gap_ns), tp->source_name);
		else
			snprintf(buf, len, "each iteration starts after the idle gap that recurs once per period "
				 "(median %s), its first kernel %s", fmt_duration(&gap, tp->start_gap_ns), tp->source_name);
		break;
	case ITERATION_START_OPTIMIZER:
		snprintf(buf, len, "no idle gap recurs once per period: each iteration starts at the optimizer's "
			 "first kernel, %s", tp->source_name);
		break;
	default:
		if (tp->period_unmarked)
			snprintf(buf, len, "each iteration begins with %s (no idle gap or copy recurs once per "
				 "period or a multiple of it, and no optimizer kernel was found: an iteration may be "
				 "one layer of the step)", tp->source_name);
		else
			snprintf(buf, len, "each iteration begins with %s (no idle gap recurs once per period, and "
				 "no optimizer kernel was found; the same copies are in each)", tp->source_name);
	}
	return buf;
}

/* The steady state (from the first steady iteration to the end of the last) and the tear-down. */
static void steady_phases(struct trace_phases *tp, size_t w, int64_t trace_end)
{
	size_t n = tp->niterations;
	char words[256];

	if (tp->source == ITERATIONS_KERNELS)
		phase_set(&tp->phase[PHASE_STEADY], tp->iterations[w].start, tp->iterations[n - 1].end,
			  xasprintf("iterations %zu-%zu of %zu: the kernel sequence repeats every %" PRId64
				    " kernel%s; %s", w + 1, n, n, tp->period_ops, tp->period_ops == 1 ? "" : "s",
				    iteration_start_words(tp, words, sizeof(words))));
	else
		phase_set(&tp->phase[PHASE_STEADY], tp->iterations[w].start, tp->iterations[n - 1].end,
			  xasprintf("iterations %zu-%zu of %zu: NVTX range '%s'%s", w + 1, n, n, tp->source_name,
				    tp->source == ITERATIONS_STEP ? " (--step)" : ", the repeating range covering "
										   "the most time"));
	phase_set(&tp->phase[PHASE_TEARDOWN], tp->phase[PHASE_STEADY].end, trace_end,
		  xstrdup("after the last iteration"));
}

/* A trace's phases from its walk: start-up, then warm-up, steady state and tear-down by its
 * iterations (or without them). */
static void assemble(struct phases *p, struct walk_state *s, struct trace_phases *tp, int64_t trace_end)
{
	int64_t first_op = s->first_op[tp->trace_id];
	struct phase *startup = &tp->phase[PHASE_STARTUP];
	struct warmup wu = { 0 };

	if (first_op == INT64_MIN) {
		assemble_no_gpu(tp, trace_end);
		return;
	}
	tp->gpu_work = 1;
	if (startup->end <= startup->start)
		startup->start = startup->end = first_op;
	phase_set(startup, startup->start, startup->end,
		  xstrdup("from the trace's first event to its first GPU operation"));
	buckets_into(p, s, tp, PHASE_STARTUP, BUCKET_STARTUP, BUCKET_STARTUP);
	if (s->last_end[tp->trace_id] > trace_end)
		trace_end = s->last_end[tp->trace_id];

	for (size_t i = 0; i < tp->niterations; i++) {
		struct iteration *it = &tp->iterations[i];

		if (!it->operations)
			it->start = it->end = it->host_start;
		it->top_detail = keep(p, it->top_detail);
	}
	if (!tp->niterations) {
		assemble_no_iterations(p, s, tp, first_op, trace_end);
		return;
	}
	find_warmup(s, tp, &wu);
	steady_iterations(tp, wu.w);
	buckets_into(p, s, tp, PHASE_WARMUP, BUCKET_PRE, (int)wu.w);
	buckets_into(p, s, tp, PHASE_STEADY, (int)wu.w + 1, BUCKET_ITER(WARM_MAX));
	buckets_into(p, s, tp, PHASE_TEARDOWN, BUCKET_POST, BUCKET_POST);
	warmup_phase(s, tp, first_op, &wu);
	steady_phases(tp, wu.w, trace_end);
}

/* Each trace's iterations: the ranges --step names, else a repeating NVTX range, else the period of
 * the kernel sequence. Returns 0 or a negative error with one line in err. */
/*
 * Capture windows (analyzer/loader/windows.h). Iterations are counted within windows: one that
 * would reach past the end of the window it starts in (the kernel sequence's last iteration of a
 * window, whose next anchor launch is in the next window; a range left open when the window closed)
 * ends there.
 */
static void iterations_within_windows(struct trace_phases *tp, const struct trace_windows *windows)
{
	tp->windowed = trace_windows_has(windows, tp->trace_id);
	for (size_t i = 0; i < tp->niterations; i++) {
		struct iteration *it = &tp->iterations[i];
		const struct trace_window *win = trace_windows_at(windows, tp->trace_id, it->host_start);

		if (win && it->host_end > win->end)
			it->host_end = win->end;
	}
}

/* A trace recorded in windows has no start-up: its first window's start is not the program's. */
static void startup_of_windows(struct trace_phases *tp, const struct trace_windows *windows)
{
	struct phase *startup = &tp->phase[PHASE_STARTUP];

	if (!tp->gpu_work || !trace_windows_has(windows, tp->trace_id))
		return;
	free(startup->reason);
	startup->reason = xstrdup("the trace was recorded in capture windows (gpt-trace run --delay, "
				  "--capture-range ...): the program's start-up is outside them");
}

static int find_iterations(const struct analysis_context *ctx, struct phases *p, const char *step,
			   char *err, size_t errlen)
{
	size_t found = 0;
	regex_t re;
	int ret = 0;

	if (step) {
		int rc = regcomp(&re, step, REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char msg[128];

			regerror(rc, &re, msg, sizeof(msg));
			snprintf(err, errlen, "invalid --step '%s': %s", step, msg);
			return -EINVAL;
		}
	}
	for (size_t t = 0; t < p->ntraces && !ret; t++) {
		struct trace_phases *tp = &p->traces[t];
		int64_t last_first_end;

		tp->trace_id = (int64_t)t;
		if (step) {
			ret = collect_ranges(ctx, tp, &re, NULL, err, errlen);
			if (!ret && tp->niterations) {
				tp->source = ITERATIONS_STEP;
				tp->source_name = xstrdup(step);
			}
		} else {
			ret = find_nvtx_step(ctx, tp, err, errlen);
		}
		if (!ret && !tp->niterations)
			ret = find_kernel_period(ctx, tp, &last_first_end, err, errlen);
		if (step && tp->source == ITERATIONS_STEP)
			found++;
	}
	if (step)
		regfree(&re);
	if (!ret && step && !found) {
		snprintf(err, errlen, "--step '%s' matches no NVTX range of the trace", step);
		ret = -ENOENT;
	}
	return ret;
}

/* The profiler's steps that hold no GPU work (the last one cut short, a step whose kernels ran after
 * the recording stopped) are no iterations: the others are kept, to be walked again. */
static void drop_steps_without_work(struct trace_phases *tp)
{
	struct iteration *old = tp->iterations;
	size_t n = tp->niterations;

	tp->iterations = NULL;
	tp->niterations = 0;
	for (size_t i = 0; i < n; i++) {
		if (!old[i].operations)
			continue;
		add_iteration(tp, old[i].host_start, old[i].host_end);
		tp->iterations[tp->niterations - 1].step = old[i].step;
	}
	free(old);
}

/* A repeating NVTX range that holds no GPU work (a CPU-side pass) in 3 instances is not the step: the
 * kernel sequence instead; the profiler's ProfilerStep#N stays if one of its steps holds GPU work.
 * Returns 1 when a trace changed (walk again), 0, or a negative error. */
static int drop_empty_ranges(const struct analysis_context *ctx, struct phases *p, char *err,
			     size_t errlen)
{
	int again = 0, ret = 0;

	for (size_t t = 0; !ret && t < p->ntraces; t++) {
		struct trace_phases *tp = &p->traces[t];
		size_t with_work = 0;
		int64_t last_first_end;

		if (tp->source != ITERATIONS_NVTX)
			continue;
		for (size_t i = 0; i < tp->niterations; i++)
			with_work += tp->iterations[i].operations > 0;
		if (tp->source_name && !strcmp(tp->source_name, "ProfilerStep#") && with_work >= 1) {
			if (with_work < tp->niterations) {
				drop_steps_without_work(tp);
				again = 1;
			}
			continue;
		}
		if (with_work >= 3)
			continue;
		free(tp->iterations);
		free(tp->source_name);
		tp->iterations = NULL;
		tp->source_name = NULL;
		tp->niterations = 0;
		tp->source = ITERATIONS_NONE;
		ret = find_kernel_period(ctx, tp, &last_first_end, err, errlen);
		again = 1;
	}
	return ret < 0 ? ret : again;
}

/* The walk over the iterations; once more when an NVTX step turned out empty. */
static int walk_iterations(const struct analysis_context *ctx, struct phases *p,
			   struct walk_state *s, struct gap_walk *walk, char *err, size_t errlen)
{
	int ret = 0;

	for (int attempt = 0; !ret && attempt < 2; attempt++) {
		int again = 0;

		walk_state_reset(s, p->ntraces);
		for (size_t t = 0; t < p->ntraces; t++)
			iterations_within_windows(&p->traces[t], &s->windows);
		gap_walk_release(walk);
		ret = gap_walk(ctx, walk, err, errlen);
		if (!ret && !attempt) {
			again = drop_empty_ranges(ctx, p, err, errlen);
			if (again < 0)
				ret = again;
		}
		if (!again)
			break;
	}
	return ret;
}

/* Every device that ran anything, as the walk measured it. */
static void copy_devices(struct phases *p, const struct gap_walk *walk)
{
	p->devices = xcalloc(walk->ndevices ? walk->ndevices : 1, sizeof(*p->devices));
	p->ndevices = walk->ndevices;
	for (size_t i = 0; i < walk->ndevices; i++)
		p->devices[i] = (struct phase_device){
			.trace_id = walk->devices[i].trace_id, .device = walk->devices[i].device,
			.first = walk->devices[i].first, .last = walk->devices[i].last,
			.busy_ns = walk->devices[i].busy, .operations = walk->devices[i].ops,
		};
}

static void walk_state_release(struct walk_state *s)
{
	key_index_release(&s->sums.index);
	free(s->sums.items);
	free(s->sums.bucket);
	free(s->sums.trace);
	kernels_release(s);
	unions_release(s);
	free(s->split);
	free(s->first_op);
	free(s->last_first_end);
	free(s->last_end);
	trace_windows_release(&s->windows);
}

int phases_compute(struct trace *trace, const char *step, struct phases **out, char *err, size_t errlen)
{
	struct analysis_context ctx = {.trace = trace, .who = "phases"};
	struct phases *p = xcalloc(1, sizeof(*p));
	struct walk_state s = { .phases = p, .ctx = &ctx };
	struct gap_visitor visitor = { .attribute = 1, .startup = 1, .fn = on_op, .arg = &s };
	struct gap_walk walk = { .visitors = &visitor, .nvisitors = 1, .progress = "phases" };
	struct span_clock clock = {0};
	struct api_names names = { 0 };
	size_t n = trace_count(trace);
	int ret;

	*out = NULL;
	p->strings = xcalloc(1, sizeof(struct strtab));
	p->ntraces = n;
	p->traces = xcalloc(n ? n : 1, sizeof(*p->traces));
	ret = find_iterations(&ctx, p, step, err, errlen);
	if (!ret)
		ret = trace_windows_load(trace, &s.windows, err, errlen);
	if (ret < 0)
		goto out;
	/* The causes point to call names: the names must outlive the walk, until assemble() copies them. */
	ret = api_names_load(&ctx, &names, err, errlen);
	walk.names = &names;
	if (!ret)
		ret = walk_iterations(&ctx, p, &s, &walk, err, errlen);
	if (!ret)
		ret = span_clock_init(&clock, &ctx, err, errlen);
	if (!ret)
		copy_devices(p, &walk);
	for (size_t t = 0; !ret && t < n; t++) {
		assemble(p, &s, &p->traces[t], clock.span_end[t]);
		startup_of_windows(&p->traces[t], &s.windows);
	}
out:
	gap_walk_release(&walk);
	api_names_release(&names);
	span_clock_release(&clock);
	walk_state_release(&s);
	if (ret < 0) {
		phases_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

void phases_keep_walk(struct trace *trace)
{
	gap_walk_keep(trace);
}

void phases_free(struct phases *p)
{
	if (!p)
		return;
	for (size_t t = 0; t < p->ntraces; t++) {
		struct trace_phases *tp = &p->traces[t];

		for (int i = 0; i < PHASE_COUNT; i++) {
			free(tp->phase[i].reason);
			free(tp->phase[i].causes);
		}
		free(tp->iterations);
		free(tp->source_name);
	}
	free(p->traces);
	free(p->devices);
	if (p->strings)
		strtab_release(p->strings);
	free(p->strings);
	free(p);
}

void phases_steady_window(const struct phases *p, int64_t *start, int64_t *end)
{
	*start = *end = 0;
	for (size_t t = 0; t < p->ntraces; t++) {
		const struct phase *ph = &p->traces[t].phase[PHASE_STEADY];

		if (ph->end <= ph->start)
			continue;
		if (!*end || ph->start < *start)
			*start = ph->start;
		if (ph->end > *end)
			*end = ph->end;
	}
}
