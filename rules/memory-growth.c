/*
 * memory-growth: a device's memory in use rises from iteration to iteration in the steady state: a
 * leak. In PyTorch the usual cause is a reference kept across steps to a tensor that holds its
 * autograd graph (a loss appended to a list for logging, outputs kept for metrics), and the graph
 * holds the forward pass's activations; the caching allocator then asks CUDA for new segments every
 * step (allocation-churn counts what that costs) until the device is full. Memory in use is read at
 * the end of each steady iteration (analyzer/analysis/memory-use.h); the rule fires on a
 * least-squares growth of at least min_mb_per_iteration that rises in at least min_rising_pct of
 * the iterations.
 */
#include "rules/memory-rule.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>

static const struct rule_param params[] = {
	{ "min_mb_per_iteration", 1, "MB", "report a device whose memory in use grows at least this much per iteration" },
	{ "min_rising_pct", 50, "%", "and rises in at least this share of the steady iterations" },
	{ "min_iterations", 4, "count", "steady iterations needed to judge a trend" },
};

static void report_device(const struct rule *rule, struct rule_context *ctx,
			  const struct memory_device *d, const struct span_clock *clock)
{
	struct fmt_text t1, t2, t3, t4;
	struct finding *f;
	double left;

	f = findings_add(
	    ctx->out, rule, SEVERITY_WARNING, 0,
	    "Something keeps a reference to each step's tensors: for logging keep loss.item() or "
	    "loss.detach().clone(), not the loss (its graph holds the step's activations; even a "
	    "detached loss can hold the buffer it was reduced from), and clear lists or caches "
	    "that "
	    "gain an entry every step. "
	    "torch.cuda.memory._record_memory_history() and torch.cuda.memory._snapshot() show the "
	    "stack that allocated what stays.",
	    "%s: memory in use grows by %s per iteration in the steady state (%s after the first "
	    "steady iteration, %s after the last; it rose in %" PRId64 " of %" PRId64 ")",
	    fmt_device(&t1, ctx->an.trace, d->trace_id, d->device),
	    fmt_bytes(&t2, d->growth_per_iteration), fmt_bytes(&t3, (double)d->steady_first_bytes),
	    fmt_bytes(&t4, (double)d->steady_last_bytes), d->growing_iterations,
	    d->steady_iterations - 1);
	f->device = (int32_t)d->device;
	if (d->capacity > 0 && d->growth_per_iteration > 0) {
		left = ((double)d->capacity - (double)d->steady_last_bytes) / d->growth_per_iteration;
		finding_evidence(f, "at this rate the %s device is full after about %.0f more iterations",
				 fmt_bytes(&t1, (double)d->capacity), left > 0 ? left : 0);
	}
	finding_evidence(f, "steady state: %" PRId64 " allocation%s (%s), %" PRId64 " release%s over %" PRId64
			 " iterations", d->steady_allocs, plural(d->steady_allocs),
			 fmt_bytes(&t1, (double)d->steady_alloc_bytes), d->steady_releases, plural(d->steady_releases),
			 d->steady_iterations);
	finding_evidence(f, "peak %s at %s", fmt_bytes(&t1, (double)d->peak_bytes), fmt_at(&t2, clock, d->peak_at));
	for (size_t i = 0; i < d->nlargest && i < 3; i++) {
		const struct memory_alloc *a = &d->largest[i];

		if (!a->iteration)
			continue;
		finding_evidence(f, "allocation of %s in iteration #%" PRId64 " by %s%s%s%s",
				 fmt_bytes(&t1, (double)a->bytes), a->iteration, a->call ? fmt_name(&t3, a->call) : "?",
				 a->range ? " in NVTX range '" : "", a->range ? fmt_name(&t4, a->range) : "",
				 a->range ? "'" : "");
	}
}

/* A trend over enough steady iterations: growth of at least min_mb_per_iteration, rising often enough. */
static int growing(const struct rule *rule, struct rule_context *ctx, const struct memory_device *d)
{
	double min_growth = rule_param(ctx, rule, "min_mb_per_iteration") * 1048576.0;
	double min_rising = rule_param(ctx, rule, "min_rising_pct") / 100.0;
	double min_iterations = rule_param(ctx, rule, "min_iterations");

	return !((double)d->steady_iterations < min_iterations || d->growth_per_iteration < min_growth ||
		 (double)d->growing_iterations < min_rising * (double)(d->steady_iterations - 1));
}

static int memory_growth_run(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen)
{
	if (!ctx->steady)
		return 0;	/* no iterations to compare */
	return memory_rule_run(rule, ctx, growing, report_device, err, errlen);
}

const struct rule rule_memory_growth = {
	.id = "memory-growth",
	.title = "GPU memory grows every iteration",
	.measures = "memory in use at the end of each steady iteration (from the allocation records): its "
		    "growth per iteration and how often it rises",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = memory_growth_run,
};
