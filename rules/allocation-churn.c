/*
 * allocation-churn: device memory allocated and freed inside the steady state. cudaMalloc and
 * cudaFree are slow (tens to hundreds of us), cudaFree synchronizes the device, and the driver's
 * virtual-memory calls behind PyTorch's expandable segments (cuMemCreate, cuMemMap...) are slower
 * still; a loop that allocates every step leaves the GPU idle while the host is inside them. A
 * healthy steady state allocates nothing: buffers are made once, or served from a caching
 * allocator or a stream-ordered pool.
 *
 * The rule reports, per trace, the allocation calls in the scope (per iteration when the scope is
 * the steady state) and the host-wait idle time spent in them, which is the time it would recover
 * and which idle-gaps leaves to it. Host-pinning calls are host-pinning-in-loop's. The fix follows
 * the framework whose kernels ran: PyTorch's caching allocator frees to the driver only on
 * torch.cuda.empty_cache() or when an allocation fails at the memory limit (it frees its cache
 * and retries), JAX's only with the platform allocator.
 */
#include "rules/alloc-tally.h"
#include "analyzer/analysis/owner.h"
#include "rules/rule-util.h"


#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_gap_us", 5, "us", "idle time counts in gaps of at least this long (as idle-gaps)" },
	{ "min_calls", 4, "count", "report a trace from this many allocation calls in the scope" },
	{ "min_per_iteration", 1, "count",
	  "and, when the iterations are known, from this many allocation calls per steady iteration" },
};

/* Which framework's kernels ran in a trace's scope: it decides the fix. */
enum framework { FRAMEWORK_NONE, FRAMEWORK_PYTORCH, FRAMEWORK_XLA };

static int framework_of(struct rule_context *ctx, int64_t trace_id, enum framework *out, char *err,
			size_t errlen)
{
	static const char sql[] = "SELECT DISTINCT nameId FROM kernels WHERE traceId = ? LIMIT 4096";
	sqlite3_stmt *st;
	int ret, rc;

	*out = FRAMEWORK_NONE;
	ret = analysis_prepare(&ctx->an, sql, &st, err, errlen);
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, trace_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && *out == FRAMEWORK_NONE) {
		const char *name = NULL;
		enum kernel_owner owner;

		if (trace_string(ctx->an.trace, trace_id, sqlite3_column_int64(st, 0), &name, err,
				 errlen) < 0 ||
		    !name)
			continue;
		owner = kernel_owner(name);
		if (owner == OWNER_ATEN || owner == OWNER_INDUCTOR)
			*out = FRAMEWORK_PYTORCH;
		else if (owner == OWNER_XLA)
			*out = FRAMEWORK_XLA;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = analysis_step_error(&ctx->an, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

static const char *fix_text(enum framework framework, int frees, int pooled)
{
	if (framework == FRAMEWORK_PYTORCH)
		return frees
		       ? "PyTorch's caching allocator returns memory to CUDA only when emptied: remove "
			 "torch.cuda.empty_cache() from the loop (call it, if at all, between phases). Without "
			 "one, the allocator is at the device's limit or fragmented and frees its cache to retry "
			 "(torch.cuda.memory_stats()['num_alloc_retries'] counts it): set "
			 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or lower the peak (a smaller "
			 "micro-batch, activation checkpointing, mixed precision)."
		       : "PyTorch's caching allocator is still growing every step: the step's memory differs "
			 "from step to step (varying shapes). Pad inputs to a few fixed shapes, or set "
			 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so that segments grow in place.";
	if (framework == FRAMEWORK_XLA)
		return "XLA allocates from its own pool unless told otherwise: drop "
		       "XLA_PYTHON_CLIENT_ALLOCATOR=platform (it allocates and frees every buffer through CUDA), "
		       "and keep XLA_PYTHON_CLIENT_PREALLOCATE at its default.";
	if (pooled)
		return "The stream-ordered pool returns its memory to the driver at every synchronization: "
		       "raise its release threshold (cudaMemPoolSetAttribute(pool, "
		       "cudaMemPoolAttrReleaseThreshold, UINT64_MAX)) so freed memory stays in the pool.";
	return "Allocate once, before the loop, and reuse the buffers (sized for the largest step); where "
	       "sizes vary, allocate stream-ordered from a pool (cudaMallocAsync/cudaFreeAsync with "
	       "cudaMemPoolAttrReleaseThreshold raised) so steady-state allocations never reach the driver. "
	       "cudaFree also synchronizes the device.";
}

/* "cudaFree_v3020 205, cudaMalloc_v3020 205": a trace's calls by name, up to three. */
static void calls_text(char *buf, size_t len, const struct alloc_tally *t, int64_t trace_id, int *frees,
		       int *pooled)
{
	struct fmt_text name;
	size_t used = 0, shown = 0;

	buf[0] = '\0';
	*frees = *pooled = 0;
	for (size_t i = 0; i < t->nnames; i++) {
		const struct alloc_name *n = &t->names[i];

		if (n->trace_id != trace_id)
			continue;
		*frees |= strstr(n->name, "Free") != NULL && !strstr(n->name, "Async");
		*pooled |= strstr(n->name, "Async") != NULL;
		if (shown++ < 3 && used < len) {
			snprintf(buf + used, len - used, "%s%s %" PRId64, shown > 1 ? ", " : "",
				 fmt_name(&name, n->name), n->calls);
			used = strlen(buf);
		}
	}
}

static int report_trace(const struct rule *rule, struct rule_context *ctx,
			const struct alloc_tally *t, int64_t trace_id,
			const struct span_clock *clock, char *err, size_t errlen)
{
	const struct alloc_trace *tr = alloc_tally_trace(t, trace_id);
	int64_t calls, call_ns, claim, iterations = rule_steady_iterations(ctx, trace_id);
	struct fmt_text t1, t2;
	char names[FMT_NAME_MAX * 4], per[64] = "";
	enum framework framework;
	int frees, pooled, ret;
	struct finding *f;

	if (!tr)
		return 0;
	calls = tr->calls[0];
	call_ns = tr->call_ns[0];
	claim = tr->claim[0];
	if (calls < (int64_t)rule_param(ctx, rule, "min_calls") ||
	    (iterations > 0 && (double)calls < rule_param(ctx, rule, "min_per_iteration") * (double)iterations))
		return 0;
	ret = framework_of(ctx, trace_id, &framework, err, errlen);
	if (ret < 0)
		return ret;
	calls_text(names, sizeof(names), t, trace_id, &frees, &pooled);
	if (iterations > 0)
		snprintf(per, sizeof(per), ", %.1f per iteration", (double)calls / (double)iterations);
	f = findings_add(
	    ctx->out, rule, rule_severity(claim, span_clock_span(clock, trace_id)), claim,
	    fix_text(framework, frees, pooled),
	    "%" PRId64 " allocation calls in the %s%s (%s): %s inside them while the GPU idled %s "
	    "waiting for the host",
	    calls, ctx->steady ? "steady state" : "scope", per, names, fmt_duration(&t1, call_ns),
	    fmt_duration(&t2, tr->host_idle));
	finding_what_if(f, alloc_tally_fix(t, trace_id));
	alloc_tally_evidence(f, t, trace_id, iterations);
	finding_evidence(f, "saving: the host-wait idle time that followed the calls, at most their time (%s of %s "
			 "in the calls): the host gets that time back, and cudaFree's device synchronization no longer "
			 "empties the queue", fmt_duration(&t1, claim), fmt_duration(&t2, call_ns));
	finding_evidence(f, "framework: %s", framework == FRAMEWORK_PYTORCH ? "PyTorch (ATen or Inductor kernels)"
					     : framework == FRAMEWORK_XLA ? "XLA (JAX or TensorFlow kernels)"
									  : "none recognized (CUDA C/C++)");
	return 0;
}

static int churn_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
		       void **state, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*state = alloc_tally_new(ctx, 0, (int64_t)(rule_param(ctx, rule, "min_gap_us") * 1e3), visitor);
	return 0;
}

static int churn_finish(const struct rule *rule, struct rule_context *ctx, void *state,
			const struct gap_walk *walk, char *err, size_t errlen)
{
	return alloc_tally_report(state, rule, ctx, walk, report_trace, err, errlen);
}

const struct rule rule_allocation_churn = {
	.id = "allocation-churn",
	.title = "Memory allocated and freed in the loop",
	.measures = "device-memory allocation calls in the steady state (cudaMalloc, cudaFree, cuMem*, "
		    "pools) per iteration, and the GPU idle time while the host is inside them",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = churn_begin,
	.finish = churn_finish,
};
