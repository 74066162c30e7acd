/*
 * small-kernels: kernels that run for less time than it takes to launch them, so the GPU is bound
 * by launch cost. For each device, the launch cost is the median duration of the API calls that
 * launched its kernels (joined by correlation id; kernels launched from CUDA graphs are left out,
 * their launch is already amortised; so is each kernel's first launch, which with lazy loading
 * also loads its module, and every launch that --metrics replayed, whose call holds the replay).
 * A kernel name is small when its median duration is below
 * launch_ratio times that cost, or below max_duration_us when the trace has no launch API records.
 *
 * Recoverable time: fusion or a CUDA graph removes the per-launch cost, which shows up on the GPU
 * as idle time before each small kernel; so it is the sum over small-kernel launches of the
 * device's idle time just before the launch, each capped at one launch cost. Kernels queued back to
 * back contribute nothing, which keeps the estimate honest for programs that are not launch-bound.
 *
 * All of it comes from one gap walk; medians come from duration histograms (below), exact
 * when the values in the median's bucket are equal and within 0.8% otherwise.
 */
#include "analyzer/analysis/gaps.h"
#include "rules/kernel-groups.h"
#include "rules/program-state.h"
#include "rules/rule-util.h"

#include "common/key-index.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dur_bucket {
	int64_t id;
	int64_t count;
	double sum;
	int64_t min, max;
};

/*
 * Durations in a log-linear histogram: exact below 256 ns, then 128 buckets per power of two
 * (0.8% wide), each keeping its count, sum, smallest and largest value. A median read from it is
 * interpolated inside the median's bucket: exact when the values there are equal, within 0.8%
 * otherwise. Memory grows with the number of occupied buckets (a few dozen for one kernel's
 * durations), not with the values.
 */
#define DUR_HIST_RECENT                                                                            \
	4096 /* slots of the recent-bucket table (made past DUR_HIST_UNSORTED buckets) */
#define DUR_HIST_UNSORTED 64 /* new buckets kept unsorted at the end, at most */
struct dur_hist {
	struct dur_bucket *buckets; /* occupied ones: [0, sorted) by bucket, then newer ones */
	size_t n, cap, sorted;
	uint32_t *recent; /* DUR_HIST_RECENT slots: the position + 1 of a bucket whose id
			     falls in the slot (0: none), cleared when positions move;
			     NULL while there are few buckets */
	int64_t count;
	double sum;
};

static int64_t bucket_of(int64_t ns)
{
	int e;

	if (ns < 256)
		return ns < 0 ? 0 : ns;
	e = 63 - __builtin_clzll((unsigned long long)ns);
	return 256 + (int64_t)(e - 8) * 128 + ((ns >> (e - 7)) & 127);
}

static int compare_buckets(const void *pa, const void *pb)
{
	const struct dur_bucket *a = pa, *b = pb;

	return (a->id > b->id) - (a->id < b->id);
}

/* Sort the buckets added since the last time into place (queries read them in order). */
static void dur_hist_settle(struct dur_hist *hist)
{
	if (hist->sorted == hist->n)
		return;
	qsort(hist->buckets, hist->n, sizeof(*hist->buckets), compare_buckets);
	hist->sorted = hist->n;
	if (hist->recent)
		memset(hist->recent, 0,
		       DUR_HIST_RECENT * sizeof(*hist->recent)); /* positions moved */
}

static void dur_hist_add(struct dur_hist *hist, int64_t ns)
{
	int64_t id = bucket_of(ns);
	size_t lo = 0, hi = hist->sorted, slot = (size_t)id & (DUR_HIST_RECENT - 1), at = SIZE_MAX;

	/* many buckets (a call's durations spread wide): remember where each id was found; a few
	 * (one kernel's jitter): the search is short enough */
	if (!hist->recent && hist->n >= DUR_HIST_UNSORTED)
		hist->recent = xcalloc(DUR_HIST_RECENT, sizeof(*hist->recent));
	if (hist->recent && hist->recent[slot] && hist->buckets[hist->recent[slot] - 1].id == id)
		at = hist->recent[slot] - 1;
	/* else the sorted buckets, then the few added since they were sorted */
	while (at == SIZE_MAX && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hist->buckets[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at == SIZE_MAX && lo < hist->sorted && hist->buckets[lo].id == id)
		at = lo;
	for (size_t i = hist->sorted; at == SIZE_MAX && i < hist->n; i++)
		if (hist->buckets[i].id == id)
			at = i;
	if (at == SIZE_MAX) {
		/* a new bucket goes at the end (no shifting the others); sorted DUR_HIST_UNSORTED
		 * at a time */
		if (hist->n - hist->sorted >= DUR_HIST_UNSORTED)
			dur_hist_settle(hist);
		if (hist->n == hist->cap) {
			hist->cap = hist->cap ? 2 * hist->cap : 8;
			hist->buckets = xrealloc(hist->buckets, hist->cap * sizeof(*hist->buckets));
		}
		at = hist->n++;
		hist->buckets[at] = (struct dur_bucket){id, 0, 0, ns, ns};
	}
	if (ns < hist->buckets[at].min)
		hist->buckets[at].min = ns;
	if (ns > hist->buckets[at].max)
		hist->buckets[at].max = ns;
	hist->buckets[at].count++;
	hist->buckets[at].sum += (double)ns;
	hist->count++;
	hist->sum += (double)ns;
	if (hist->recent)
		hist->recent[slot] = (uint32_t)at + 1;
}

/*
 * The (estimated) value at rank pos, 0-based, in sorted order: within its bucket, interpolated
 * between the bucket's smallest and largest value - exact when they are equal, and close for the
 * evenly spread values of one kernel's jitter.
 */
static double value_at(const struct dur_hist *hist, int64_t pos)
{
	for (size_t i = 0; i < hist->n; i++) {
		const struct dur_bucket *b = &hist->buckets[i];

		if (pos < b->count)
			return b->count == 1
				   ? (double)b->min
				   : (double)b->min + (double)(b->max - b->min) * (double)pos /
							  (double)(b->count - 1);
		pos -= b->count;
	}
	return 0;
}

/* The smallest value added (exact: each bucket keeps its own); 0 when there is none. */
static int64_t dur_hist_min(const struct dur_hist *hist)
{
	int64_t min = 0;

	for (size_t i = 0; i < hist->n; i++)
		if (!i || hist->buckets[i].min < min)
			min = hist->buckets[i].min;
	return min;
}

static double dur_hist_median(struct dur_hist *hist)
{
	dur_hist_settle(hist);
	if (!hist->count)
		return 0;
	if (hist->count % 2)
		return value_at(hist, hist->count / 2);
	return (value_at(hist, hist->count / 2 - 1) + value_at(hist, hist->count / 2)) / 2;
}

/* The sum of min(value, cap) over the values (per bucket, from its mean where it straddles cap). */
static double dur_hist_sum_capped(struct dur_hist *hist, double cap)
{
	double total = 0;

	dur_hist_settle(hist);
	for (size_t i = 0; i < hist->n; i++) {
		double mean = hist->buckets[i].sum / (double)hist->buckets[i].count;

		total += mean < cap ? hist->buckets[i].sum : cap * (double)hist->buckets[i].count;
	}
	return total;
}

static void dur_hist_release(struct dur_hist *hist)
{
	free(hist->buckets);
	free(hist->recent);
	memset(hist, 0, sizeof(*hist));
}

static const struct rule_param params[] = {
	{ "launch_ratio", 1.0, "x",
	  "a kernel is small when its median duration is below this multiple of the median "
	  "launch-API duration" },
	{ "max_duration_us", 5, "us",
	  "small-kernel threshold, and assumed launch cost, when the trace has no launch API records" },
	{ "min_launches", 100, "count", "report a device with at least this many small-kernel launches" },
	{ "min_gpu_pct", 10, "%",
	  "or whose small kernels take at least this share of its kernel time" },
};

/* One kernel name on one device; a small one is weighted by its launches. */
struct small_kernel {
	struct kernel_group group;
	struct dur_hist durations;
	struct dur_hist idle_before;	/* device idle time before each launch */
	int64_t first, last;
	double median;			/* of durations */
	int small;
};

/* One device's launches and verdict. */
struct device_small {
	struct rule_device key;
	struct dur_hist launches;	/* launch calls of kernels, but each kernel's first */
	struct dur_hist first_launches;	/* each kernel's first launch call */
	int few;			/* launch_cost is the shortest of fewer than LAUNCH_COST_MIN_CALLS */
	double launch_cost;		/* ns: median launch call, or the assumed cost */
	int measured;			/* launch_cost comes from API records */
	int repeated;			/* ... of launches other than each kernel's first */
	int64_t launch_calls;
	int64_t replayed;		/* launch calls left out: --metrics replayed them */
	double threshold;		/* ns */
	int64_t kernels, kernel_ns;	/* every (non-graph) kernel of the device */
	int64_t small, small_ns;	/* the small ones */
	size_t names;			/* distinct small kernels */
	double recoverable;
	int64_t first, last;		/* first small launch's start, last one's end */
};

struct small_state {
	struct kernel_groups kernels;	/* struct small_kernel */
	struct key_index device_index;	/* (trace, device) -> devices[] */
	struct device_small *devices;
	size_t ndevices;
	int64_t idle_gap_min;		/* idle-gaps' min_gap_us, in ns */
};

extern const struct rule rule_idle_gaps;

static struct device_small *device_get(struct small_state *s, int64_t trace_id, int64_t device)
{
	return rule_device_get(&s->device_index, trace_id, device, &s->devices, &s->ndevices,
			       sizeof(*s->devices), NULL);
}

static int on_launch(const struct gap *g, void *arg)
{
	struct small_state *s = arg;
	struct device_small *d;
	struct small_kernel *k;
	int created;

	/* Kernels launched from a graph share one launch call: their launch cost is amortised. */
	if (g->next_op != GPU_OP_KERNEL || g->next_graph_node)
		return 0;
	k = kernel_groups_get(&s->kernels, g->trace_id, g->device, g->next_name_id, &created);
	if (created)
		k->first = g->next_start;
	dur_hist_add(&k->durations, g->next_end - g->next_start);
	/* Idle time that another rule claims is not counted twice: drains belong to excessive-sync and
	 * sync-memcpy, host-wait gaps of idle-gaps' size to idle-gaps. */
	if (g->cause != GAP_SYNC_WAIT && !(g->cause == GAP_HOST_WAIT && g->end - g->start >= s->idle_gap_min))
		dur_hist_add(&k->idle_before, g->end - g->start);
	k->last = g->next_end;
	d = device_get(s, g->trace_id, g->device);
	/* A launch that --metrics replayed lasts as long as its replay passes: not a launch cost. */
	if (g->api_start >= 0 && (g->api_class & API_REPLAYED))
		d->replayed++;
	else if (g->api_start >= 0 && (g->api_class & API_LAUNCH))
		dur_hist_add(created ? &d->first_launches : &d->launches, g->api_end - g->api_start);
	return 0;
}

static int is_small(const void *record)
{
	return ((const struct small_kernel *)record)->small;
}

static void kernel_line(struct finding *f, struct rule_context *ctx, const void *record)
{
	const struct small_kernel *k = record;
	int64_t trace_id = k->group.trace_id, name_id = k->group.name_id;
	struct fmt_text t1, t2, t3;

	finding_evidence(f, "%s (%s): %" PRId64 " launch%s, median %s, total %s",
			 fmt_kernel_name(&t1, ctx->an.trace, trace_id, name_id),
			 kernel_owner_name(kernel_owner_of(ctx->an.trace, trace_id, name_id)),
			 k->durations.count, plural_es(k->durations.count),
			 fmt_duration(&t2, (int64_t)k->median),
			 fmt_duration(&t3, (int64_t)k->durations.sum));
}

/* A device with min_launches small launches, or small kernels taking min_gpu_pct of its time. */
static int wanted(const struct rule *rule, struct rule_context *ctx, const void *record)
{
	const struct device_small *d = record;
	double min_launches = rule_param(ctx, rule, "min_launches");
	double min_gpu_pct = rule_param(ctx, rule, "min_gpu_pct");

	return d->small && ((double)d->small >= min_launches ||
			    (double)d->small_ns * 100.0 >= min_gpu_pct * (double)d->kernel_ns);
}

/* PyTorch's small kernels: the levers the program has not pulled yet (program-state.h). */
static const char *aten_fix(const struct program_state *p)
{
	if (program_graphs(p))
		return "These are PyTorch's own kernels launched outside the program's CUDA graphs: capture "
		       "this part of the step too (torch.cuda.graph, or torch.compile(mode=\"reduce-overhead\") "
		       "around it), or let torch.compile fuse them.";
	if (program_compiled(p))
		return "These are PyTorch's own kernels, outside what torch.compile already fuses: extend it "
		       "to the code that launches them (torch._dynamo.explain lists graph breaks), and use "
		       "mode=\"reduce-overhead\" to replay the step as a CUDA graph.";
	if (program_fused_optimizer(p))
		return "These are PyTorch's own kernels: let torch.compile fuse them (mode=\"reduce-overhead\" "
		       "also adds CUDA graphs), or capture the step in a CUDA graph (torch.cuda.graph); the "
		       "optimizer already runs foreach or fused kernels.";
	return kernel_owner_fix(OWNER_ATEN, FIX_LAUNCHES);
}

/* " (first launch of each kernel left out, and 3 launches that --metrics replayed)", or "" */
static const char *left_out_text(struct fmt_text *t, const struct device_small *d)
{
	char replayed[96] = "";

	if (d->replayed)
		snprintf(replayed, sizeof(replayed), "%" PRId64 " launch%s that --metrics replayed", d->replayed,
			 plural_es(d->replayed));
	if (d->repeated && d->replayed)
		snprintf(t->s, sizeof(t->s), " (first launch of each kernel left out, and %s)", replayed);
	else if (d->repeated)
		snprintf(t->s, sizeof(t->s), " (first launch of each kernel left out)");
	else if (d->replayed)
		snprintf(t->s, sizeof(t->s), " (%s left out)", replayed);
	else
		t->s[0] = '\0';
	return t->s;
}

static void report_device(const struct rule *rule, struct rule_context *ctx, void *state,
			  const void *record, const struct span_clock *clock)
{
	struct small_state *s = state;
	const struct device_small *d = record;
	int64_t trace_id = d->key.trace_id, device = d->key.device;
	struct fmt_text t1, t2, t3, t4;
	struct owner_weights owners = { 0 };
	struct finding *f;

	struct program_state program;
	char err[256];
	int known;

	kernel_groups_owners(&s->kernels, ctx, trace_id, device, &owners);
	known = program_state_read(ctx, &program, err, sizeof(err)) == 0;
	f = findings_add(
	    ctx->out, rule,
	    rule_severity((int64_t)d->recoverable, span_clock_span(clock, trace_id)),
	    (int64_t)d->recoverable,
	    known && owner_weights_top(&owners) == OWNER_ATEN
		? aten_fix(&program)
		: owner_fix(
		      &owners, FIX_LAUNCHES,
		      "Fuse the small kernels (torch.compile, nvFuser or a hand-written fused "
		      "kernel), capture the launch sequence in a CUDA graph, or give each launch "
		      "more work (larger batches)."),
	    "%s: %" PRId64 " launch%s of %zu kernel%s run shorter than the %s it takes to "
	    "launch them",
	    fmt_device(&t1, ctx->an.trace, trace_id, device), d->small, plural_es(d->small),
	    d->names, plural((int64_t)d->names), fmt_duration(&t2, (int64_t)d->launch_cost));
	f->device = (int32_t)device;
	f->owner = owner_weights_top(&owners);
	f->start = d->first;
	f->end = d->last;
	if (d->measured)
		finding_evidence(f, "launch cost: %s launch API call %s over %" PRId64 " launch%s%s",
				 d->few ? "shortest" : "median", fmt_duration(&t1, (int64_t)d->launch_cost),
				 d->launch_calls, plural_es(d->launch_calls), left_out_text(&t2, d));
	else if (d->replayed)
		finding_evidence(f, "launch cost: unknown, every launch call timed was one that --metrics "
				 "replayed (%" PRId64 "), whose time is the replay's; assumed %s (max_duration_us)",
				 d->replayed, fmt_duration(&t1, (int64_t)d->launch_cost));
	else
		finding_evidence(f, "launch cost: no launch API records in the trace; assumed %s "
				 "(max_duration_us)", fmt_duration(&t1, (int64_t)d->launch_cost));
	finding_evidence(f, "small kernels: %" PRId64 " of %" PRId64 " launches, %s of %s kernel time (%s)",
			 d->small, d->kernels, fmt_duration(&t1, d->small_ns),
			 fmt_duration(&t2, d->kernel_ns),
			 fmt_percent(&t3, d->kernel_ns ? (double)d->small_ns / (double)d->kernel_ns : 0));
	kernel_groups_evidence(&s->kernels, f, ctx, trace_id, device, kernel_line, "small kernel");
	owner_evidence(f, &owners, "small launches");
	if (known && owner_weights_top(&owners) == OWNER_ATEN)	/* the lever it chose from them */
		program_state_evidence(f, &program);
	finding_evidence(f, "GPU idle before small kernels, up to one launch cost each: %s",
			 fmt_duration(&t4, (int64_t)d->recoverable));
	/* replayed as the fix that keeps the kernels as they are: their launches in a CUDA graph */
	finding_what_if(f, kernel_groups_fix(&s->kernels, WHAT_IF_GRAPH, trace_id, device, 1));
}

/* One pass: every kernel's duration and the idle time before it, every launch call's. */
static int small_kernels_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
			       void **state, char *err, size_t errlen)
{
	struct small_state *s = xcalloc(1, sizeof(*s));

	(void)rule;
	(void)err;
	(void)errlen;
	kernel_groups_init(&s->kernels, sizeof(struct small_kernel));
	s->idle_gap_min = (int64_t)(rule_param(ctx, &rule_idle_gaps, "min_gap_us") * 1e3);
	*visitor = (struct gap_visitor){ .min_gap = 0, .fn = on_launch, .arg = s };
	*state = s;
	return 0;
}

/*
 * Fewer launches than this, and their median is no launch cost: on HTA's MI250 trace the steady
 * state's 2 launches, one a hipLaunchKernel blocked for 6.5 ms, gave 3.27 ms where the trace's
 * other 12 calls took 4-13 us. The shortest of them is taken then: a launch costs at most that.
 */
#define LAUNCH_COST_MIN_CALLS 5

/* The median of h, or its shortest value when it holds fewer than LAUNCH_COST_MIN_CALLS. */
static double launch_cost_of(struct device_small *d, struct dur_hist *h)
{
	d->few = h->count < LAUNCH_COST_MIN_CALLS;
	return d->few ? (double)dur_hist_min(h) : dur_hist_median(h);
}

/* Each device's launch cost, and the duration under which its kernels are small. */
static void launch_costs(struct small_state *s, double ratio, double max_duration)
{
	for (size_t i = 0; i < s->ndevices; i++) {
		struct device_small *d = &s->devices[i];

		/* Lazy loading makes a kernel's first launch load its module (milliseconds on the
		 * nvFuser fixture); only a trace whose kernels all ran once falls back to those. */
		if (d->launches.count) {
			d->measured = d->repeated = 1;
			d->launch_cost = launch_cost_of(d, &d->launches);
			d->launch_calls = d->launches.count;
		} else if (d->first_launches.count) {
			d->measured = 1;
			d->launch_cost = launch_cost_of(d, &d->first_launches);
			d->launch_calls = d->first_launches.count;
		} else {
			d->launch_cost = max_duration;
		}
		d->threshold = d->measured ? ratio * d->launch_cost : max_duration;
	}
}

/* Each device's totals and small kernels; only the small ones are kept, ranked by launches. */
static void find_small(struct small_state *s)
{
	for (size_t i = 0; i < s->kernels.count; i++) {
		struct small_kernel *k = kernel_groups_at(&s->kernels, i);
		struct device_small *d = device_get(s, k->group.trace_id, k->group.device);

		d->kernels += k->durations.count;
		d->kernel_ns += (int64_t)k->durations.sum;
		k->median = dur_hist_median(&k->durations);
		if (k->median >= d->threshold) {
			dur_hist_release(&k->durations);
			dur_hist_release(&k->idle_before);
			continue;
		}
		k->small = 1;
		k->group.weight = (double)k->durations.count;
		d->small += k->durations.count;
		d->small_ns += (int64_t)k->durations.sum;
		d->names++;
		d->recoverable += dur_hist_sum_capped(&k->idle_before, d->launch_cost);
		if (!d->first || k->first < d->first)
			d->first = k->first;
		if (k->last > d->last)
			d->last = k->last;
	}
	kernel_groups_keep(&s->kernels, is_small);
	kernel_groups_rank(&s->kernels);
}

static void state_free(struct small_state *s)
{
	for (size_t i = 0; i < s->kernels.count; i++) {
		struct small_kernel *k = kernel_groups_at(&s->kernels, i);

		dur_hist_release(&k->durations);
		dur_hist_release(&k->idle_before);
	}
	kernel_groups_release(&s->kernels);
	for (size_t i = 0; i < s->ndevices; i++) {
		dur_hist_release(&s->devices[i].launches);
		dur_hist_release(&s->devices[i].first_launches);
	}
	free(s->devices);
	key_index_release(&s->device_index);
	free(s);
}

static int small_kernels_finish(const struct rule *rule, struct rule_context *ctx, void *state,
				const struct gap_walk *walk, char *err, size_t errlen)
{
	struct small_state *s = state;
	int ret = 0;

	if (walk) {
		launch_costs(s, rule_param(ctx, rule, "launch_ratio"),
			     rule_param(ctx, rule, "max_duration_us") * 1e3);
		find_small(s);
		ret = rule_report_each(rule, ctx, s, s->devices, s->ndevices, sizeof(*s->devices),
				       wanted, report_device, err, errlen);
	}
	state_free(s);
	return ret;
}

const struct rule rule_small_kernels = {
	.id = "small-kernels",
	.title = "Kernels shorter than their launch",
	.measures = "kernels whose median duration is below the median duration of the API call "
		    "that launches them, so the GPU waits on launches rather than on work",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = small_kernels_begin,
	.finish = small_kernels_finish,
};
