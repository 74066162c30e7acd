/*
 * tensor-idle: matrix products and convolutions on the Tensor Core path whose tensor pipes the GPU
 * metrics show mostly idle while they run (issue 23). Needs `gpt-trace run --gpu-metrics` (or an
 * nsys export with GPU metrics); without samples it says nothing.
 *
 * Which kernels: those whose names say a Tensor Core path (tensorop, xmma or implicit_gemm with a
 * 16-bit or TF32 type, nvjet, hmma, wgmma, s1688/s16816 CUTLASS tiles), with the tensor pipes
 * sampled under max_tensor_pct while they ran. FP32 SIMT kernels are the precision rule's.
 *
 * Seen on an H200 (tests/gpu/busy/vocab.py, 2026-11-27): GPT-2 with its 50257-token vocabulary runs
 * the LM head's GEMMs on cutlass_75_tensorop_bf16_s1688gemm_*_align1 at 18-28% tensor activity
 * (31% of the steady state's kernel time); padded to 50304 tokens, cuBLAS picks its nvjet kernels
 * and those GEMMs leave the top of the table. resnet18 in FP32 NCHW runs cuDNN's TF32 convolutions
 * at 13-23%.
 *
 * Recoverable time, an estimate: each kernel's time times (1 - its tensor share / reference_pct),
 * the reference being what well-shaped bf16 GEMMs reached on the H200 (73-82%,
 * tests/fixtures/gpu/busy/precision-bf16); then times the share of the steady state the GPU was busy,
 * since kernel time saved in a step that waits on the host is not all wall time saved. On the
 * vocabulary pair: estimated 0.83 ms per step, measured 0.57 ms untraced (docs/gpu-metrics.md).
 *
 * Replayed (docs/what-if.md) with each kernel at its own share of the reference: on a host-bound
 * step, as the vocabulary pair's traced one, that saves next to nothing.
 */
#include "analyzer/analysis/kernel-efficiency.h"
#include "analyzer/analysis/owner.h"
#include "rules/program-state.h"
#include "rules/rule-util.h"

#include "common/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "max_tensor_pct", 40, "%",
	  "a Tensor Core kernel counts as idle-piped when its tensor pipes were active less than this" },
	{ "min_gpu_pct", 10, "%",
	  "report when such kernels take at least this share of the kernel time" },
	{ "reference_pct", 75, "%",
	  "the tensor-pipe activity well-shaped GEMMs reach (bf16 on the H200: 73-82%)" },
};

/* Does the name say a Tensor Core path? */
static int tensor_path(const char *name)
{
	static const char *const marks[] = { "tensorop", "nvjet", "hmma", "wgmma", "s1688", "s16816",
					     "_tf32", "tf32f32", "bf16", "f16f16", "_h_", "i8816" };
	static const char *const matrix[] = { "gemm", "xmma", "nvjet", "conv", "tensorop", "hmma" };
	int is_matrix = 0;

	for (size_t i = 0; i < sizeof(matrix) / sizeof(matrix[0]) && !is_matrix; i++)
		is_matrix = strstr(name, matrix[i]) != NULL;
	if (!is_matrix)
		return 0;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (strstr(name, marks[i]))
			return 1;
	return 0;
}

/* CUTLASS's narrow-load kernels: an operand dimension that is not a multiple of the vector width. */
static int narrow_aligned(const char *name)
{
	return strstr(name, "align1") || strstr(name, "align2") || strstr(name, "align4");
}

struct idle_kernel {
	const struct kernel_efficiency *k;
	enum kernel_owner owner;
	double saving_ns;
};

struct idle_summary {
	struct idle_kernel *items;
	size_t count;
	int64_t time_ns;
	double saving_ns, weighted_tensor;
	int narrow, cudnn;
	struct owner_weights owners;
};

static void collect(const struct kernel_efficiencies *e, double max_tensor, double reference,
		    struct idle_summary *s)
{
	for (size_t i = 0; i < e->count; i++) {
		const struct kernel_efficiency *k = &e->kernels[i];
		struct idle_kernel *it;
		double keep;

		if (k->bound == KERNEL_BOUND_UNKNOWN || isnan(k->tensor_pct) || k->tensor_pct >= max_tensor ||
		    !tensor_path(k->name))
			continue;
		s->items = xrealloc(s->items, (s->count + 1) * sizeof(*s->items));
		it = &s->items[s->count++];
		it->k = k;
		it->owner = kernel_owner(k->name);
		keep = k->tensor_pct / reference;
		it->saving_ns = (double)k->time_ns * (1.0 - (keep < 1.0 ? keep : 1.0));
		s->time_ns += k->time_ns;
		s->saving_ns += it->saving_ns;
		s->weighted_tensor += k->tensor_pct * (double)k->time_ns;
		s->narrow |= narrow_aligned(k->name);
		s->cudnn |= it->owner == OWNER_CUDNN;
		owner_weights_add(&s->owners, it->owner, it->saving_ns);
	}
}

/* The lever, by cause and by what the program already does (program-state.h). */
static const char *fix_text(const struct idle_summary *s, const struct program_state *p)
{
	if (s->narrow)
		return "Pad the dimensions of these matrix products to multiples of 8 (16-bit types; 16 for "
		       "8-bit): the align1/align2 kernels are cuBLAS's fallback when an operand's leading "
		       "dimension is odd. Typical culprits are a vocabulary (GPT-2's 50257 tokens: pad the "
		       "embedding and LM head to 50304, as nanoGPT does), a hidden or head size, or "
		       "batch x sequence; padded rows cost less than the narrow loads.";
	if (s->cudnn && !program_mixed_precision(p))
		return "Run the forward pass under torch.autocast(\"cuda\", dtype=torch.bfloat16): cuDNN's "
		       "16-bit convolutions keep the tensor pipes busier than TF32 ones; "
		       "torch.backends.cudnn.benchmark = True lets it pick the fastest algorithm for the "
		       "shapes. (An NCHW model's layout conversions are layout-conversion's finding.)";
	if (s->cudnn)
		return "The convolutions already run in 16 bits: give each call more work (a larger "
		       "batch), let cuDNN pick the fastest algorithm for the shapes "
		       "(torch.backends.cudnn.benchmark = True), or let torch.compile choose the "
		       "kernels (mode=\"max-autotune\").";
	return "These matrix products are too small or too skinny to fill the Tensor Cores: give each "
	       "call more work (a larger batch, fused projections such as one QKV GEMM instead of three), "
	       "keep dimensions multiples of 64, or let torch.compile pick the kernels.";
}

/* The fix as replayed: each idle-piped kernel at its tensor share of the reference (the mean of its
   launch configurations', by time), the others as they were. */
static double replayed_factor(const char *name, void *arg)
{
	const struct idle_summary *s = arg;
	double ns = 0, kept = 0;

	for (size_t i = 0; i < s->count; i++)
		if (!strcmp(s->items[i].k->name, name)) {
			ns += (double)s->items[i].k->time_ns;
			kept += (double)s->items[i].k->time_ns - s->items[i].saving_ns;
		}
	return ns > 0 ? kept / ns : -1;
}

static struct finding *report(const struct rule *rule, struct rule_context *ctx,
			      const struct kernel_efficiencies *e, const struct idle_summary *s,
			      double reference, const struct span_clock *clock, const struct program_state *p)
{
	int64_t span = span_clock_total_span(clock);
	double busy = span > 0 ? (double)e->total_ns / (double)span : 1.0;
	int64_t saving;
	struct fmt_text t1, t2, t3;
	struct finding *f;
	size_t shown = 0;

	if (busy > 1.0)
		busy = 1.0;
	saving = (int64_t)(s->saving_ns * busy);
	f = findings_add(ctx->out, rule, rule_severity(saving, span), saving, fix_text(s, p),
			 "%s of Tensor Core matrix products (%s of kernel time) ran with the tensor pipes "
			 "%.0f%% busy on average (sampled)",
			 fmt_duration(&t1, s->time_ns), fmt_percent(&t2, (double)s->time_ns / (double)e->total_ns),
			 s->weighted_tensor / (double)s->time_ns);
	f->owner = owner_weights_top(&s->owners);
	if (clock->ntraces == 1) {	/* the steady state it judges: a row on the HTML timeline */
		f->start = clock->span_start[0];
		f->end = clock->span_end[0];
	}
	finding_evidence(f, "at %.0f%% tensor activity, what well-shaped bf16 GEMMs reach, they would take "
			 "%s less; the GPU was busy %s of the steady state, so the estimate is that share: %s",
			 reference, fmt_duration(&t1, (int64_t)s->saving_ns), fmt_percent(&t2, busy),
			 fmt_duration(&t3, saving));
	for (size_t i = 0; i < s->count && shown < 5; i++, shown++) {
		const struct kernel_efficiency *k = s->items[i].k;

		finding_evidence(f, "%s (%s): %" PRId64 " launch%s, %s, tensor pipes %.0f%%, SMs %.0f%%",
				 fmt_name(&t1, k->name), kernel_owner_name(s->items[i].owner), k->launches,
				 plural_es(k->launches), fmt_duration(&t2, k->time_ns), k->tensor_pct, k->sm_pct);
	}
	if (s->count > shown)
		finding_evidence(f, "... and %zu more kernel%s", s->count - shown, plural((int64_t)(s->count - shown)));
	program_state_evidence(f, p);
	return f;
}

static int tensor_idle_run(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen)
{
	double max_tensor = rule_param(ctx, rule, "max_tensor_pct");
	double reference = rule_param(ctx, rule, "reference_pct");
	struct kernel_efficiencies *e = NULL;
	struct idle_summary s = { 0 };
	struct span_clock clock = {0};
	int ret = kernel_efficiency_compute(ctx->an.trace, 0, 0, &e, err, errlen);

	if (ret <= 0)
		return ret;
	collect(e, max_tensor, reference > 0 ? reference : 75, &s);
	if (s.count && e->total_ns > 0 &&
	    (double)s.time_ns * 100.0 >= rule_param(ctx, rule, "min_gpu_pct") * (double)e->total_ns) {
		struct program_state p;

		ret = program_state_read(ctx, &p, err, errlen);
		if (ret >= 0)
			ret = span_clock_init(&clock, &ctx->an, err, errlen);
		if (ret >= 0) {
			struct finding *f = report(rule, ctx, e, &s, reference, &clock, &p);
			struct what_if_fix *fix = NULL;

			if (clock.ntraces == 1)	/* a replay is one trace's */
				ret = rule_kernels_fix(ctx, 0, replayed_factor, &s, &fix, err, errlen);
			finding_what_if(f, fix);
		}
		span_clock_release(&clock);
	}
	free(s.items);
	kernel_efficiency_free(e);
	return ret < 0 ? ret : 0;
}

const struct rule rule_tensor_idle = {
	.id = "tensor-idle",
	.title = "Tensor Core kernels with idle tensor pipes",
	.measures = "GPU time in matrix kernels on the Tensor Core path whose sampled tensor-pipe activity "
		    "stayed low, and what well-shaped ones would save",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = tensor_idle_run,
};
