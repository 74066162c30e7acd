/*
 * near-oom: a device's memory in use peaks close to its capacity, so the next larger batch,
 * sequence or model fails with an out-of-memory error (and PyTorch's caching allocator, near its
 * limit, starts freeing its cache and retrying, which allocation-churn sees as cudaFree/cudaMalloc
 * in the loop). The peak comes from the allocation records (analyzer/analysis/memory-use.h) against
 * TARGET_INFO_GPU.totalMemory; what CUDA reserves for its context is not in the records, so the
 * true headroom is a little smaller than shown. No time is recovered: the finding is about
 * headroom.
 */
#include "rules/memory-rule.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "max_pct", 90, "%", "report a device whose memory in use peaks at or above this share of its capacity" },
};

static void report_device(const struct rule *rule, struct rule_context *ctx,
			  const struct memory_device *d, const struct span_clock *clock)
{
	struct fmt_text t1, t2, t3, t4, t5, t6;
	double share = (double)d->peak_bytes / (double)d->capacity;
	char where[3 * FMT_NAME_MAX] = "";
	struct finding *f;
	size_t len;

	if (d->peak_iteration)
		snprintf(where, sizeof(where), ", iteration #%" PRId64, d->peak_iteration);
	len = strlen(where);
	if (d->peak_range)
		snprintf(where + len, sizeof(where) - len, ", NVTX range '%s'", fmt_name(&t5, d->peak_range));
	len = strlen(where);
	if (d->peak_kernel)
		snprintf(where + len, sizeof(where) - len, ", after kernel %s", fmt_name(&t6, d->peak_kernel));
	f = findings_add(
	    ctx->out, rule,
	    memory_pool_reserved(d) ? SEVERITY_INFO
	    : share >= 0.97	    ? SEVERITY_CRITICAL
				    : SEVERITY_WARNING,
	    0,
	    "Lower the peak before the next larger batch fails: activation checkpointing "
	    "(torch.utils.checkpoint; JAX: jax.checkpoint) recomputes activations instead of "
	    "keeping "
	    "them, mixed precision (torch.autocast with bfloat16) halves them, a smaller "
	    "micro-batch with "
	    "gradient accumulation keeps the effective batch; PYTORCH_CUDA_ALLOC_CONF="
	    "expandable_segments:True limits fragmentation. torch.cuda.memory_summary() and "
	    "torch.cuda.memory._record_memory_history() show what holds the peak.",
	    "%s peaks at %s in use, %s of its %s, at %s%s",
	    fmt_device(&t1, ctx->an.trace, d->trace_id, d->device),
	    fmt_bytes(&t2, (double)d->peak_bytes), fmt_percent(&t3, share),
	    fmt_bytes(&t4, (double)d->capacity), fmt_at(&t5, clock, d->peak_at), where);
	f->device = (int32_t)d->device;
	f->start = f->end = d->peak_at;
	if (memory_pool_reserved(d))
		finding_evidence(f, "most of it is one allocation of %s, a pool reserved up front (JAX/XLA "
				 "preallocates 75%% of the GPU; XLA_PYTHON_CLIENT_MEM_FRACTION sets the share): "
				 "the pool's size is a setting, and how full it is the records cannot tell",
				 fmt_bytes(&t1, (double)memory_pool_reserved(d)));
	finding_evidence(f, "headroom left: %s (CUDA's own context, a few hundred MB, is not in the records "
			 "and comes off it too)", fmt_bytes(&t1, (double)(d->capacity - d->peak_bytes)));
	for (size_t i = 0; i < d->nlargest; i++) {
		const struct memory_alloc *a = &d->largest[i];

		finding_evidence(f, "allocation of %s at %s by %s%s%s%s", fmt_bytes(&t1, (double)a->bytes),
				 fmt_at(&t2, clock, a->start), a->call ? fmt_name(&t3, a->call) : "an unrecorded call",
				 a->range ? " in NVTX range '" : "", a->range ? fmt_name(&t4, a->range) : "",
				 a->range ? "'" : "");
	}
}

static int near_full(const struct rule *rule, struct rule_context *ctx, const struct memory_device *d)
{
	double max_pct = rule_param(ctx, rule, "max_pct");

	return !(d->capacity <= 0 || (double)d->peak_bytes * 100.0 < max_pct * (double)d->capacity);
}

static int near_oom_run(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen)
{
	return memory_rule_run(rule, ctx, near_full, report_device, err, errlen);
}

const struct rule rule_near_oom = {
	.id = "near-oom",
	.title = "GPU memory peaks near capacity",
	.measures = "each device's peak memory in use (from the allocation records) against its capacity",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = near_oom_run,
};
