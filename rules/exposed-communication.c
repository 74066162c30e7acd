/*
 * exposed-communication: NCCL collectives during which the device computes nothing else, so the
 * step waits for the network. Data-parallel training hides gradient all-reduces behind the
 * backward pass (DDP's buckets, FSDP's prefetch); when it does not, the communication is on the
 * step's critical path.
 *
 * Over one trace: each rank's (trace's) NCCL kernel time not overlapped by compute kernels or
 * copies on its device. Across the ranks of a job (ranks/): the exposed time of the rank that
 * arrived last at each collective, averaged over ranks. That rank waited for no one, so its exposed
 * time is the transfers themselves; the rest of the exposed time is waiting for a late rank, which
 * is the straggler rule's.
 *
 * Recoverable time, an upper bound: the exposed time, were all of it overlapped with compute.
 */
#include "rules/job-rules.h"
#include "rules/rule-util.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_exposed_pct", 5, "%", "report when exposed communication reaches this share of the span" },
};

static const char fix[] =
	"Overlap communication with compute: let DDP all-reduce gradient buckets during the backward "
	"pass (no torch.cuda.synchronize() or .item() between backward and the reduction, a smaller "
	"bucket_cap_mb), prefetch FSDP's all-gathers, or make the messages fewer and larger.";

static void comm_evidence(struct finding *f, const int64_t *comm, const int64_t *exposed)
{
	struct fmt_text t1, t2;

	for (int type = 0; type < COLLECTIVE_TYPES; type++) {
		if (!comm[type])
			continue;
		finding_evidence(f, "%s: %s, %s of it exposed", collective_type_name(type),
				 fmt_duration(&t1, comm[type]), fmt_duration(&t2, exposed[type]));
	}
}

static int exposed_run(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen)
{
	struct span_clock clock = {0};
	double min_pct = rule_param(ctx, rule, "min_exposed_pct");
	int ret;

	ret = span_clock_init(&clock, &ctx->an, err, errlen);
	if (ret < 0)
		return ret;
	for (size_t t = 0; t < trace_count(ctx->an.trace); t++) {
		struct trace_collectives list;
		int64_t comm[COLLECTIVE_TYPES] = { 0 }, exposed[COLLECTIVE_TYPES] = { 0 }, total = 0, span;
		struct fmt_text t1, t2;
		struct finding *f;

		ret = collectives_read(ctx->an.trace, (int64_t)t, &list, err, errlen);
		if (ret < 0)
			break;
		for (size_t i = 0; i < list.count; i++) {
			const struct collective *c = &list.items[i];
			int64_t e = c->end - c->start - c->overlap_ns;

			comm[c->type] = sat_add64(comm[c->type], c->end - c->start);
			exposed[c->type] = sat_add64(exposed[c->type], e);
			total = sat_add64(total, e);
		}
		collectives_release(&list);
		span = span_clock_span(&clock, (int64_t)t);
		if (!total || span <= 0 || (double)total < (double)span * min_pct / 100.0)
			continue;
		f = findings_add(ctx->out, rule, rule_severity(total, span), total, fix,
				 "%s%sNCCL communication exposed for %s (%s of the span): nothing "
				 "else ran on the GPU",
				 trace_count(ctx->an.trace) > 1 ? trace_path(ctx->an.trace, t) : "",
				 trace_count(ctx->an.trace) > 1 ? ": " : "",
				 fmt_duration(&t1, total),
				 fmt_percent(&t2, (double)total / (double)span));
		comm_evidence(f, comm, exposed);
		f->owner = OWNER_NCCL;
	}
	span_clock_release(&clock);
	return ret;
}

const struct rule rule_exposed_communication = {
	.id = "exposed-communication",
	.title = "Communication not overlapped with compute",
	.measures = "NCCL kernel time during which the device runs no compute kernel or copy (per trace, "
		    "and across the ranks of a job without the time spent waiting for a late rank)",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = exposed_run,
};

void exposed_communication_judge(struct rule_context *ctx, const struct job_digest *job)
{
	double min_pct = rule_param(ctx, &rule_exposed_communication, "min_exposed_pct");
	int64_t total = 0, waiting = 0;
	struct fmt_text t1, t2, t3;
	struct finding *f;

	for (int type = 0; type < COLLECTIVE_TYPES; type++) {
		total = sat_add64(total, job->exposed_transfer_ns[type]);
		waiting = sat_add64(waiting, job->exposed_ns[type] - job->exposed_transfer_ns[type]);
	}
	if (!total || job->steady_ns <= 0 || (double)total < (double)job->steady_ns * min_pct / 100.0)
		return;
	f = findings_add(ctx->out, &rule_exposed_communication, rule_severity(total, job->steady_ns), total, fix,
			 "NCCL communication exposed for %s per rank (%s of the steady state), besides %s waiting "
			 "for late ranks", fmt_duration(&t1, total),
			 fmt_percent(&t2, (double)total / (double)job->steady_ns),
			 fmt_duration(&t3, waiting > 0 ? waiting : 0));
	comm_evidence(f, job->comm_ns, job->exposed_transfer_ns);
	f->owner = OWNER_NCCL;
}
