/*
 * small-kernels: kernels that run for less time than it takes to launch them, so the GPU is bound by
 * launch cost. For each device, the launch cost is the median duration of the API calls that
 * launched its kernels (joined by correlation id; kernels launched from CUDA graphs are left out,
 * their launch is already amortised; so is each kernel's first launch, which with lazy loading
 * also loads its module). A kernel name is small when its median duration is below
 * launch_ratio times that cost, or below max_duration_us when the trace has no launch API records.
 *
 * Recoverable time: fusion or a CUDA graph removes the per-launch cost, which shows up on the GPU as
 * idle time before each small kernel; so it is the sum over small-kernel launches of the device's
 * idle time just before the launch, each capped at one launch cost. Kernels queued back to back
 * contribute nothing, which keeps the estimate honest for programs that are not launch-bound.
 */
#include "rules/gaps.h"
#include "rules/rule-util.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Keys of the per-kernel groups: traceId, deviceId, nameId. */
static const char kernel_count_sql[] =
	"SELECT traceId, deviceId, nameId, COUNT(*) FROM kernels WHERE COALESCE(graphNodeId, 0) = 0"
	" GROUP BY traceId, deviceId, nameId ORDER BY traceId, deviceId, nameId";
static const char kernel_values_sql[] =
	"SELECT traceId, deviceId, nameId, dur FROM kernels WHERE COALESCE(graphNodeId, 0) = 0"
	" ORDER BY traceId, deviceId, nameId, dur";

/*
 * Keys of the launch-cost groups: traceId, deviceId. The first launch of each kernel is left out:
 * with CUDA's lazy loading it also loads the module (milliseconds on the nvFuser fixture), which
 * says nothing about the cost of the launches that repeat. A trace in which every kernel runs once
 * falls back to all launches (launch_any_sql).
 */
#define LAUNCH_JOIN                                                                                \
	" FROM kernels AS k JOIN api_calls AS a"                                                   \
	" ON a.traceId = k.traceId AND a.pid = k.pid AND a.correlationId = k.correlationId"
#define REPEATED                                                                                   \
	" JOIN (SELECT traceId, deviceId, nameId, MIN(start) AS first FROM kernels"                \
	"  WHERE COALESCE(graphNodeId, 0) = 0 GROUP BY traceId, deviceId, nameId) AS f"           \
	" ON f.traceId = k.traceId AND f.deviceId = k.deviceId AND f.nameId = k.nameId"            \
	" WHERE COALESCE(k.graphNodeId, 0) = 0 AND k.start > f.first"
#define ALL " WHERE COALESCE(k.graphNodeId, 0) = 0"
static const char launch_count_sql[] = "SELECT k.traceId, k.deviceId, COUNT(*)" LAUNCH_JOIN REPEATED
	" GROUP BY k.traceId, k.deviceId ORDER BY k.traceId, k.deviceId";
static const char launch_values_sql[] = "SELECT k.traceId, k.deviceId, a.dur" LAUNCH_JOIN REPEATED
	" ORDER BY k.traceId, k.deviceId, a.dur";
static const char launch_any_count_sql[] = "SELECT k.traceId, k.deviceId, COUNT(*)" LAUNCH_JOIN ALL
	" GROUP BY k.traceId, k.deviceId ORDER BY k.traceId, k.deviceId";
static const char launch_any_values_sql[] = "SELECT k.traceId, k.deviceId, a.dur" LAUNCH_JOIN ALL
	" ORDER BY k.traceId, k.deviceId, a.dur";

/* One device's verdict. */
struct device_small {
	int64_t trace_id, device;
	double launch_cost;		/* ns: median launch call, or the assumed cost */
	int measured;			/* launch_cost comes from API records */
	int repeated;			/* ... of launches other than each kernel's first */
	int64_t launch_calls;
	double threshold;		/* ns */
	int64_t kernels, kernel_ns;	/* every (non-graph) kernel of the device */
	int64_t small, small_ns;	/* the small ones */
	size_t names;			/* distinct small kernels */
	int64_t recoverable;
	int64_t first, last;		/* first small launch's start, last one's end */
};

struct small_state {
	struct rule_median *kernels;	/* per (trace, device, name); count 0 marks "not small" */
	size_t nkernels;
	struct device_small *devices;
	size_t ndevices;
};

static struct device_small *device_of(struct small_state *s, int64_t trace_id, int64_t device)
{
	for (size_t i = 0; i < s->ndevices; i++)
		if (s->devices[i].trace_id == trace_id && s->devices[i].device == device)
			return &s->devices[i];
	return NULL;
}

static int on_launch(const struct gap *g, void *arg)
{
	struct small_state *s = arg;
	int64_t key[3] = { g->trace_id, g->device, g->next_name_id };
	const struct rule_median *k;
	struct device_small *d;
	int64_t idle;

	if (g->next_op != GPU_OP_KERNEL || g->next_graph_node)
		return 0;
	k = rule_median_find(s->kernels, s->nkernels, 3, key);
	d = device_of(s, g->trace_id, g->device);
	if (!k || !d || k->median >= d->threshold)
		return 0;
	if (!d->first || g->end < d->first)
		d->first = g->end;
	if (g->next_end > d->last)
		d->last = g->next_end;
	idle = g->end - g->start;
	d->recoverable += idle < (int64_t)d->launch_cost ? idle : (int64_t)d->launch_cost;
	return 0;
}

static int compare_small(const void *pa, const void *pb)
{
	const struct rule_median *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->key[2] < b->key[2] ? -1 : a->key[2] > b->key[2];
}

static void report_device(const struct rule *rule, struct rule_context *ctx, struct small_state *s,
			  struct device_small *d, const struct rule_clock *clock)
{
	struct rule_text t1, t2, t3, t4;
	struct rule_median *small = xcalloc(d->names ? d->names : 1, sizeof(*small));
	size_t n = 0;
	struct finding *f;

	for (size_t i = 0; i < s->nkernels; i++) {
		const struct rule_median *k = &s->kernels[i];

		if (k->key[0] == d->trace_id && k->key[1] == d->device && k->median < d->threshold)
			small[n++] = *k;
	}
	qsort(small, n, sizeof(*small), compare_small);
	f = findings_add(ctx->out, rule, rule_severity(d->recoverable, rule_clock_span(clock, d->trace_id)),
			 d->recoverable,
			 "Fuse the small kernels (torch.compile, nvFuser or a hand-written fused kernel), "
			 "capture the launch sequence in a CUDA graph, or give each launch more work "
			 "(larger batches).",
			 "%s: %" PRId64 " launch%s of %zu kernel%s run shorter than the %s it takes to "
			 "launch them",
			 fmt_device(&t1, ctx, d->trace_id, d->device), d->small, plural_es(d->small), d->names,
			 plural((int64_t)d->names), fmt_duration(&t2, (int64_t)d->launch_cost));
	f->device = (int32_t)d->device;
	f->start = d->first;
	f->end = d->last;
	if (d->measured)
		finding_evidence(f, "launch cost: median launch API call %s over %" PRId64 " launches%s",
				 fmt_duration(&t1, (int64_t)d->launch_cost), d->launch_calls,
				 d->repeated ? " (first launch of each kernel left out)" : "");
	else
		finding_evidence(f, "launch cost: no launch API records in the trace; assumed %s "
				 "(max_duration_us)", fmt_duration(&t1, (int64_t)d->launch_cost));
	finding_evidence(f, "small kernels: %" PRId64 " of %" PRId64 " launches, %s of %s kernel time (%s)",
			 d->small, d->kernels, fmt_duration(&t1, d->small_ns),
			 fmt_duration(&t2, d->kernel_ns),
			 fmt_percent(&t3, d->kernel_ns ? (double)d->small_ns / (double)d->kernel_ns : 0));
	for (size_t i = 0; i < n && i < 5; i++)
		finding_evidence(f, "%s: %" PRId64 " launch%s, median %s, total %s",
				 rule_kernel_name(&t1, ctx, small[i].key[0], small[i].key[2]),
				 small[i].count, plural_es(small[i].count), fmt_duration(&t2, (int64_t)small[i].median),
				 fmt_duration(&t3, (int64_t)small[i].sum));
	if (n > 5)
		finding_evidence(f, "... and %zu more small kernel%s", n - 5, plural((int64_t)(n - 5)));
	finding_evidence(f, "GPU idle before small kernels, up to one launch cost each: %s",
			 fmt_duration(&t4, d->recoverable));
	free(small);
}

static int small_kernels_run(const struct rule *rule, struct rule_context *ctx, char *err,
			     size_t errlen)
{
	double ratio = rule_param(ctx, rule, "launch_ratio");
	double max_duration = rule_param(ctx, rule, "max_duration_us") * 1e3;
	double min_launches = rule_param(ctx, rule, "min_launches");
	double min_gpu_pct = rule_param(ctx, rule, "min_gpu_pct");
	struct small_state s = { 0 };
	struct rule_median *launches = NULL, *any_launches = NULL;
	size_t nlaunches = 0, nany = 0;
	struct gap_walk walk = { .min_gap = 0, .fn = on_launch, .arg = &s };
	struct rule_clock clock = { 0 };
	int ret, fire = 0;

	ret = rule_medians(rule, ctx, kernel_count_sql, kernel_values_sql, 3, &s.kernels, &s.nkernels,
			   err, errlen);
	if (ret < 0)
		goto out;
	ret = rule_medians(rule, ctx, launch_count_sql, launch_values_sql, 2, &launches, &nlaunches,
			   err, errlen);
	if (ret < 0)
		goto out;
	/* Only a device whose kernels all ran once needs the fallback; usually none does. */
	for (size_t i = 0; i < s.nkernels; i++) {
		if (!rule_median_find(launches, nlaunches, 2, s.kernels[i].key)) {
			ret = rule_medians(rule, ctx, launch_any_count_sql, launch_any_values_sql, 2,
					   &any_launches, &nany, err, errlen);
			if (ret < 0)
				goto out;
			break;
		}
	}

	/* One verdict per device, from its kernels' medians and its launch cost. */
	for (size_t i = 0; i < s.nkernels; i++) {
		const struct rule_median *k = &s.kernels[i];
		struct device_small *d = device_of(&s, k->key[0], k->key[1]);

		if (!d) {
			const struct rule_median *l = rule_median_find(launches, nlaunches, 2, k->key);

			if (!l)
				l = rule_median_find(any_launches, nany, 2, k->key);

			s.devices = xrealloc(s.devices, (s.ndevices + 1) * sizeof(*s.devices));
			d = &s.devices[s.ndevices++];
			memset(d, 0, sizeof(*d));
			d->trace_id = k->key[0];
			d->device = k->key[1];
			d->measured = l != NULL;
			d->repeated = l && l >= launches && l < launches + nlaunches;
			d->launch_cost = l ? l->median : max_duration;
			d->launch_calls = l ? l->count : 0;
			d->threshold = l ? ratio * l->median : max_duration;
		}
		d->kernels += k->count;
		d->kernel_ns += (int64_t)k->sum;
		if (k->median < d->threshold) {
			d->small += k->count;
			d->small_ns += (int64_t)k->sum;
			d->names++;
		}
	}
	for (size_t i = 0; i < s.ndevices; i++)
		if (s.devices[i].small &&
		    ((double)s.devices[i].small >= min_launches ||
		     (double)s.devices[i].small_ns * 100.0 >= min_gpu_pct * (double)s.devices[i].kernel_ns))
			fire = 1;
	if (!fire)
		goto out;

	ret = rule_clock_init(&clock, rule, ctx, err, errlen);
	if (ret < 0)
		goto out;
	ret = gap_walk(rule, ctx, &walk, err, errlen);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < s.ndevices; i++) {
		struct device_small *d = &s.devices[i];

		if (d->small && ((double)d->small >= min_launches ||
				 (double)d->small_ns * 100.0 >= min_gpu_pct * (double)d->kernel_ns))
			report_device(rule, ctx, &s, d, &clock);
	}
out:
	gap_walk_release(&walk);
	rule_clock_release(&clock);
	free(launches);
	free(any_launches);
	free(s.kernels);
	free(s.devices);
	return ret;
}

const struct rule rule_small_kernels = {
	.id = "small-kernels",
	.title = "Kernels shorter than their launch",
	.measures = "kernels whose median duration is below the median duration of the API call "
		    "that launches them, so the GPU waits on launches rather than on work",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = small_kernels_run,
};
