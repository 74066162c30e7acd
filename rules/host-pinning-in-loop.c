/*
 * host-pinning-in-loop: host memory pinned (page-locked) inside the steady state: cudaHostAlloc,
 * cudaMallocHost, cudaHostRegister (and the driver's cuMemHostAlloc, cuMemHostRegister) with their
 * frees. Pinning asks the operating system to lock and map every page, which takes milliseconds
 * for large buffers and holds the host while the GPU runs dry; pinned buffers are meant to be
 * made once and reused as staging memory. The time it would recover is the host-wait idle time
 * spent in these calls (idle-gaps leaves it to this rule); the evidence lists the calls per
 * iteration when the scope is the steady state. Replayed (docs/what-if.md) as the pinning calls not
 * made.
 */
#include "rules/alloc-tally.h"
#include "rules/rule-util.h"


#include <inttypes.h>
#include <stdio.h>

static const struct rule_param params[] = {
	{ "min_gap_us", 5, "us", "idle time counts in gaps of at least this long (as idle-gaps)" },
	{ "min_calls", 2, "count", "report a trace from this many pinning calls in the scope" },
};

static int report_trace(const struct rule *rule, struct rule_context *ctx,
			const struct alloc_tally *t, int64_t trace_id,
			const struct span_clock *clock, char *err, size_t errlen)
{
	const struct alloc_trace *tr = alloc_tally_trace(t, trace_id);
	int64_t calls, call_ns, claim, iterations = rule_steady_iterations(ctx, trace_id);
	struct fmt_text t1, t2;
	char per[64] = "";
	struct finding *f;

	(void)err;
	(void)errlen;
	if (!tr)
		return 0;
	calls = tr->calls[1];
	call_ns = tr->call_ns[1];
	claim = tr->claim[1];
	if (calls < (int64_t)rule_param(ctx, rule, "min_calls"))
		return 0;
	if (iterations > 0)
		snprintf(per, sizeof(per), ", %.1f per iteration", (double)calls / (double)iterations);
	f = findings_add(
	    ctx->out, rule, rule_severity(claim, span_clock_span(clock, trace_id)), claim,
	    "Pin once: allocate the pinned staging buffers (cudaHostAlloc, cudaMallocHost) or "
	    "register the host memory (cudaHostRegister) before the loop and copy through them "
	    "every "
	    "step. PyTorch: let the DataLoader pin in its worker (pin_memory=True) instead of "
	    "calling "
	    "tensor.pin_memory() in the loop, or keep one pinned buffer and copy_() into it.",
	    "%" PRId64 " host-pinning calls in the %s%s: %s inside them while the GPU idled %s "
	    "waiting for the host",
	    calls, ctx->steady ? "steady state" : "scope", per, fmt_duration(&t1, call_ns),
	    fmt_duration(&t2, tr->host_idle));
	alloc_tally_evidence(f, t, trace_id, 0);
	finding_what_if(f, alloc_tally_fix(t, trace_id));	/* replayed as allocation-churn's: not made */
	return 0;
}

static int pinning_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
			 void **state, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*state = alloc_tally_new(ctx, 1, (int64_t)(rule_param(ctx, rule, "min_gap_us") * 1e3), visitor);
	return 0;
}

static int pinning_finish(const struct rule *rule, struct rule_context *ctx, void *state,
			  const struct gap_walk *walk, char *err, size_t errlen)
{
	return alloc_tally_report(state, rule, ctx, walk, report_trace, err, errlen);
}

const struct rule rule_host_pinning_in_loop = {
	.id = "host-pinning-in-loop",
	.title = "Host memory pinned in the loop",
	.measures = "host-pinning calls in the steady state (cudaHostAlloc, cudaMallocHost, cudaHostRegister "
		    "and their frees), and the GPU idle time while the host is inside them",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = pinning_begin,
	.finish = pinning_finish,
};
