/*
 * precision: matrix multiplications and convolutions that run FP32 on the CUDA cores (SIMT FFMA)
 * on a GPU with Tensor Cores. PyTorch's default FP32 matmul precision ("highest") does this: an MLP
 * step of 4096-wide layers took 31.0 ms on an H100 against 6.1 ms with TF32 allowed and 3.65 ms
 * under bf16 autocast (tests/gpu/busy/precision.py).
 *
 * Which kernels: told from the names cuBLAS, cuDNN and CUTLASS give their FP32 kernels: an "sgemm"
 * (ampere_sgemm_*, cutlass_80_simt_sgemm_*, implicit_convolve_sgemm), an xmma kernel whose types
 * read "f32f32_f32f32_f32" (FP32 in, FP32 math: the TF32 ones read "tf32"), and cuDNN's legacy FP32
 * engines. The names say the instruction path; the owner (analyzer/analysis/owner.h) says who chose
 * it.
 *
 * Recoverable time, an estimate: each such kernel's time times (1 - FP32 peak / TF32 dense peak) of
 * the device's architecture (NVIDIA's datasheet numbers, by compute capability; the evidence says
 * which). The same kernels under TF32 reach a smaller share of their peak than FP32 SIMT does of
 * its own, so the estimate leans high: on the H100 pair it is 25.5 ms of a measured 24.9 ms per
 * step. Devices before Volta have no Tensor Cores and are left alone; on Volta and Turing the lever
 * is FP16 autocast, and the ratio is FP16's.
 *
 * Where the trace has GPU metrics (gpt-trace run --gpu-metrics), the samples that overlap these
 * kernels confirm it: the evidence gives their tensor-pipe and SM activity (on the H200 precision
 * pair, 0% and 97%). Where those samples show the tensor pipes busy (max_tensor_pct and above), the
 * names misled, and the device gets no finding.
 */
#include "analyzer/analysis/gaps.h"
#include "rules/kernel-groups.h"
#include "analyzer/analysis/kernel-efficiency.h"
#include "analyzer/analysis/owner.h"
#include "rules/program-state.h"
#include "rules/rule-util.h"

#include "common/key-index.h"
#include "common/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_gpu_pct", 5, "%",
	  "report a device when its FP32 SIMT matmuls and convolutions take at least this share of "
	  "its kernel time" },
	{ "compute_major", 9, "major",
	  "compute capability assumed when the trace does not record the device's (9: Hopper)" },
	{ "max_tensor_pct", 10, "%",
	  "with GPU metrics: no finding when the sampled tensor pipes were at least this busy during "
	  "the kernels" },
};

/* Dense peak throughput ratios by architecture, from NVIDIA's datasheets (SXM parts). */
struct arch_peaks {
	int major, minor;		/* from this compute capability on */
	const char *name;
	double fp32_tflops, tf32_tflops, bf16_tflops;	/* tf32 0: none (FP16 stands in) */
};

static const struct arch_peaks arch_table[] = {
	{ 7, 0, "Volta (V100)", 15.7, 0, 125 },
	{ 7, 5, "Turing (T4)", 8.1, 0, 65 },
	{ 8, 0, "Ampere (A100)", 19.5, 156, 312 },
	{ 8, 6, "Ampere (A40, RTX 30)", 37.4, 74.8, 149.7 },
	{ 8, 9, "Ada (L40S, RTX 40)", 91.6, 183, 362 },
	{ 9, 0, "Hopper (H100/H200)", 67, 494.7, 989.4 },
	{ 10, 0, "Blackwell (B200)", 80, 1100, 2250 },
	{ 12, 0, "Blackwell (RTX 50)", 104.8, 209.5, 419 },
};

static const struct arch_peaks *arch_of(int major, int minor)
{
	const struct arch_peaks *best = NULL;

	for (size_t i = 0; i < sizeof(arch_table) / sizeof(arch_table[0]); i++)
		if (major > arch_table[i].major || (major == arch_table[i].major && minor >= arch_table[i].minor))
			best = &arch_table[i];
	return best;
}

/* The FP32 SIMT matmul and convolution kernels, by name. */
static int fp32_simt_matmul(const char *name)
{
	static const char *const marks[] = { "sgemm", "f32f32_f32f32_f32", "wgrad_alg0_engine<float",
					     "wgrad_alg1_engine<float", "dgrad_engine<float",
					     "dgrad2d_alg1_1<float" };

	if (strstr(name, "tf32") || strstr(name, "tensorop"))
		return 0;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (strstr(name, marks[i]))
			return 1;
	return 0;
}

struct device_precision {
	struct rule_device key;
	const struct arch_peaks *arch;
	int known;			/* arch from the trace */
	int64_t kernel_ns, fp32_ns, launches;
	int64_t first, last;
	unsigned owners_seen;		/* bit per enum kernel_owner, over all kernels */
};

/* What the walk decided about a kernel name: classified once per (trace, name). */
struct name_class {
	int fp32;
	enum kernel_owner owner;
};

/* What the GPU metrics say of a device's FP32 kernels: sampled time and time-weighted means. */
struct sampled {
	int64_t ns;
	double tensor, sm;
};

struct precision_state {
	struct kernel_efficiencies *metrics;	/* NULL: the trace has no GPU metrics */
	const struct arch_peaks *default_arch;
	struct rule_context *ctx;
	struct key_index device_index, name_index;
	struct device_precision *devices;
	size_t ndevices;
	struct kernel_groups kernels;	/* the FP32 ones, weighted by their time */
	struct name_class *names;
	size_t nnames;
};

static struct device_precision *device_get(struct precision_state *s, int64_t trace_id, int64_t device)
{
	int created;
	struct device_precision *d = rule_device_get(&s->device_index, trace_id, device, &s->devices,
						     &s->ndevices, sizeof(*s->devices), &created);

	if (created)
		d->arch = s->default_arch;
	return d;
}

static const struct name_class *name_class(struct precision_state *s, int64_t trace_id, int64_t name_id)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, name_id };
	int created;
	size_t i = rule_slot(&s->name_index, key, &s->names, &s->nnames, sizeof(*s->names), &created);

	if (created) {
		const char *name = NULL;
		char err[256];

		if (trace_string(s->ctx->an.trace, trace_id, name_id, &name, err, sizeof(err)) < 0)
			name = NULL;
		s->names[i].fp32 = name && fp32_simt_matmul(name);
		s->names[i].owner = kernel_owner(name);
	}
	return &s->names[i];
}

static int on_op(const struct gap *g, void *arg)
{
	struct precision_state *s = arg;
	int64_t ns = g->next_end - g->next_start;
	const struct name_class *c;
	struct device_precision *d;
	struct kernel_group *k;

	if (g->next_op != GPU_OP_KERNEL)
		return 0;
	d = device_get(s, g->trace_id, g->device);
	d->kernel_ns += ns;
	c = name_class(s, g->trace_id, g->next_name_id);
	d->owners_seen |= 1u << c->owner;
	if (!c->fp32)
		return 0;
	k = kernel_groups_get(&s->kernels, g->trace_id, g->device, g->next_name_id, NULL);
	k->launches++;
	k->ns += ns;
	k->weight += (double)ns;
	if (!d->launches || g->next_start < d->first)
		d->first = g->next_start;
	if (g->next_end > d->last)
		d->last = g->next_end;
	d->launches++;
	d->fp32_ns += ns;
	return 0;
}

/* The speed-up of the lever: FP32 peak over TF32's (FP16's where the architecture has no TF32). */
static double kept_share(const struct arch_peaks *a, int half)
{
	double fast = half || a->tf32_tflops <= 0 ? a->bf16_tflops : a->tf32_tflops;

	return fast > 0 ? a->fp32_tflops / fast : 1.0;
}

/* Only the program's own kernels among owners: no framework's lever applies. */
static int program_only(const struct owner_weights *owners)
{
	for (int o = 0; o < NR_KERNEL_OWNERS; o++)
		if ((owners->seen & (1u << o)) &&
		    kernel_owner_kind((enum kernel_owner)o) != OWNER_KIND_PROGRAM)
			return 0;
	return 1;
}

/* The framework's levers, from whose kernels ran beside the FP32 ones. */
static const char *fix_text(const struct device_precision *d, const struct owner_weights *owners,
			    const struct program_state *p)
{
	if (program_only(owners))
		return "Run these matrix products on the Tensor Cores: call cuBLAS with "
		       "CUBLAS_COMPUTE_32F_FAST_TF32 (or cublasLt with TF32 or BF16 inputs), or use WMMA/mma.sync "
		       "instructions in the kernel. TF32 keeps FP32's range with a 10-bit mantissa: compare "
		       "the results against the FP32 ones once.";
	if (d->arch && d->arch->tf32_tflops <= 0)
		return "This GPU's Tensor Cores take FP16: run the model under torch.autocast(\"cuda\", "
		       "dtype=torch.float16) with a GradScaler (JAX: compute in jnp.float16 with loss "
		       "scaling). Check that the loss curve still matches.";
	if (d->owners_seen & (1u << OWNER_XLA))
		return "Let XLA use the Tensor Cores for FP32 dots and convolutions: "
		       "jax.default_matmul_precision(\"tensorfloat32\") (or \"bfloat16\"), or "
		       "precision=jax.lax.Precision.DEFAULT on the dots; or compute in bfloat16. TF32 keeps "
		       "FP32's range with a 10-bit mantissa: check that the loss curve still matches.";
	if (program_mixed_precision(p))
		return "Most of the program already computes in bf16/fp16: these FP32 products run outside "
		       "its torch.autocast region (a loss, an FP32 head, a custom op, or code autocast does "
		       "not cover). Extend the autocast region over them, or allow TF32 for what must stay "
		       "FP32: torch.set_float32_matmul_precision(\"high\"). TF32 keeps FP32's range with a "
		       "10-bit mantissa: check that the loss curve still matches.";
	return "Allow TF32 on the Tensor Cores for FP32 matmuls and convolutions: "
	       "torch.set_float32_matmul_precision(\"high\") (or torch.backends.cuda.matmul.allow_tf32 = "
	       "True, and torch.backends.cudnn.allow_tf32 = True for convolutions), or run the forward "
	       "pass under torch.autocast(\"cuda\", dtype=torch.bfloat16) for twice that again. Outside "
	       "PyTorch: CUBLAS_COMPUTE_32F_FAST_TF32 in cuBLAS. TF32 keeps FP32's range with a 10-bit "
	       "mantissa: check that the loss curve still matches.";
}

/* The samples over the FP32 kernels, by name over every device (kernel_efficiency merges them). */
static struct sampled sampled_of(struct precision_state *s)
{
	struct sampled out = { 0 };

	for (size_t i = 0; s->metrics && i < s->metrics->count; i++) {
		const struct kernel_efficiency *k = &s->metrics->kernels[i];
		double w = (double)k->sampled_ns;

		if (k->sampled_ns <= 0 || isnan(k->tensor_pct) || !fp32_simt_matmul(k->name))
			continue;
		out.tensor += k->tensor_pct * w;
		out.sm += (isnan(k->sm_pct) ? 0 : k->sm_pct) * w;
		out.ns += k->sampled_ns;
	}
	if (out.ns) {
		out.tensor /= (double)out.ns;
		out.sm /= (double)out.ns;
	}
	return out;
}

static void kernel_line(struct finding *f, struct rule_context *ctx, const void *record)
{
	const struct kernel_group *k = record;
	struct fmt_text t1, t2;

	finding_evidence(f, "%s (%s): %" PRId64 " launch%s, %s",
			 fmt_kernel_name(&t1, ctx->an.trace, k->trace_id, k->name_id),
			 kernel_owner_name(kernel_owner_of(ctx->an.trace, k->trace_id, k->name_id)),
			 k->launches, plural_es(k->launches), fmt_duration(&t2, k->ns));
}

static void report_device(const struct rule *rule, struct rule_context *ctx,
			  struct precision_state *s, const struct device_precision *d,
			  const struct span_clock *clock, const struct sampled *seen)
{
	double keep = kept_share(d->arch, 0), keep_half = kept_share(d->arch, 1);
	int64_t saving = (int64_t)((double)d->fp32_ns * (1.0 - keep));
	int64_t trace_id = d->key.trace_id, device = d->key.device;
	struct fmt_text t1, t2, t3;
	struct owner_weights owners = { 0 };
	struct finding *f;

	struct program_state program;
	char err[256];
	int known;

	kernel_groups_owners(&s->kernels, ctx, trace_id, device, &owners);
	known = program_state_read(ctx, &program, err, sizeof(err)) == 0;
	if (!known)
		memset(&program, 0, sizeof(program));
	f = findings_add(
	    ctx->out, rule, rule_severity(saving, span_clock_span(clock, trace_id)), saving,
	    fix_text(d, &owners, &program),
	    "%s: %s of FP32 matrix products on the CUDA cores (%s of kernel time) while the "
	    "Tensor Cores idle",
	    fmt_device(&t1, ctx->an.trace, trace_id, device), fmt_duration(&t2, d->fp32_ns),
	    fmt_percent(&t3, d->kernel_ns ? (double)d->fp32_ns / (double)d->kernel_ns : 0));
	f->device = (int32_t)device;
	f->owner = owner_weights_top(&owners);
	f->start = d->first;
	f->end = d->last;
	finding_what_if(f, kernel_groups_fix(&s->kernels, WHAT_IF_KERNELS, trace_id, device, keep));
	finding_evidence(f, "%s%s: FP32 %.1f, %s %.1f TFLOP/s dense: these kernels would take about %s "
			 "instead of %s (%s with BF16: %s)",
			 d->arch->name, d->known ? "" : " (assumed: the trace does not record the GPU; "
			 "precision.compute_major)", d->arch->fp32_tflops,
			 d->arch->tf32_tflops > 0 ? "TF32" : "FP16",
			 d->arch->tf32_tflops > 0 ? d->arch->tf32_tflops : d->arch->bf16_tflops,
			 fmt_duration(&t1, (int64_t)((double)d->fp32_ns * keep)),
			 fmt_duration(&t2, d->fp32_ns), d->arch->tf32_tflops > 0 ? "or" : "same",
			 fmt_duration(&t3, (int64_t)((double)d->fp32_ns * keep_half)));
	kernel_groups_evidence(&s->kernels, f, ctx, trace_id, device, kernel_line, "kernel");
	if (seen->ns)
		finding_evidence(f, "GPU metrics confirm it: over %s of these kernels the tensor pipes were "
				 "%.0f%% busy and the SMs %.0f%%", fmt_duration(&t1, seen->ns), seen->tensor,
				 seen->sm);
	if (known)
		program_state_evidence(f, &program);
}

static const char gpus_sql[] = "SELECT traceId, id, MAX(computeMajor), MAX(computeMinor) FROM gpus "
			       "WHERE computeMajor > 0 GROUP BY traceId, id";

static void state_free(struct precision_state *s)
{
	if (!s)
		return;
	kernel_efficiency_free(s->metrics);
	key_index_release(&s->device_index);
	key_index_release(&s->name_index);
	kernel_groups_release(&s->kernels);
	free(s->devices);
	free(s->names);
	free(s);
}

/* A device's compute capability from the trace's GPU table. */
static void gpu_row(sqlite3_stmt *row, void *arg)
{
	struct device_precision *d = device_get(arg, sqlite3_column_int64(row, 0),
						sqlite3_column_int64(row, 1));

	d->arch = arch_of(sqlite3_column_int(row, 2), sqlite3_column_int(row, 3));
	d->known = 1;
}

static int precision_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
			   void **state, char *err, size_t errlen)
{
	struct precision_state *s = xcalloc(1, sizeof(*s));
	int ret;

	s->ctx = ctx;
	kernel_groups_init(&s->kernels, sizeof(struct kernel_group));
	s->default_arch = arch_of((int)rule_param(ctx, rule, "compute_major"), 0);
	if (!s->default_arch)
		s->default_arch = &arch_table[0];
	ret = analysis_query(&ctx->an, gpus_sql, gpu_row, s, err, errlen);
	*visitor = (struct gap_visitor){ .min_gap = 0, .fn = on_op, .arg = s };
	if (ret < 0) {
		state_free(s);
		s = NULL;
	}
	*state = s;
	return ret;
}

static int precision_finish(const struct rule *rule, struct rule_context *ctx, void *state,
			    const struct gap_walk *walk, char *err, size_t errlen)
{
	double min_gpu_pct = rule_param(ctx, rule, "min_gpu_pct");
	struct precision_state *s = state;
	struct span_clock clock = {0};
	int ret = 0;

	if (!walk)
		goto out;
	kernel_groups_rank(&s->kernels);
	for (size_t i = 0; i < s->ndevices; i++) {
		const struct device_precision *d = &s->devices[i];
		struct sampled seen;

		/* No Tensor Cores before Volta; arch NULL means older than the table. */
		if (!d->launches || !d->arch || (double)d->fp32_ns * 100.0 < min_gpu_pct * (double)d->kernel_ns)
			continue;
		if (!s->metrics &&
		    kernel_efficiency_compute(ctx->an.trace, 0, 0, &s->metrics, err, errlen) < 0)
			s->metrics = NULL;	/* unreadable samples: judged by names alone */
		seen = sampled_of(s);
		if (seen.ns && seen.tensor >= rule_param(ctx, rule, "max_tensor_pct"))
			continue;
		ret = span_clock_once(&clock, &ctx->an, err, errlen);
		if (ret < 0)
			goto out;
		report_device(rule, ctx, s, d, &clock, &seen);
	}
out:
	span_clock_release(&clock);
	state_free(s);
	return ret;
}

const struct rule rule_precision = {
	.id = "precision",
	.title = "FP32 matrix products off the Tensor Cores",
	.measures = "GPU time in FP32 SIMT matmuls and convolutions on a GPU with Tensor Cores, and what "
		    "TF32 or BF16 would save",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = precision_begin,
	.finish = precision_finish,
};
