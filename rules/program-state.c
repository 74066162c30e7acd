/*
 * What the program already does, from its kernels' names (see program-state.h). The patterns were
 * read off real traces on the H200 (tests/gpu/busy/advice.py, 2026-12-02): resnet50 in NCHW runs
 * cuDNN's NHWC convolutions (`..._nhwckrsc_nhwc_...`) between nchwToNhwcKernel/nhwcToNchwKernel
 * conversions and NCHW batch norms (`bn_fw_tr_1C11_kernel_NCHW`, `bn_bw_1C11_kernel_new`); in
 * channels_last the conversions are gone and batch norm runs `batchnorm_*_nhwc_*`. cuBLAS's nvjet
 * GEMMs name their type only sometimes (`nvjet_sm90_hsh_*` in fp16; `nvjet_sm90_tst_*` in bf16 and
 * FP32 alike), so 16-bit work is also told from ATen's element-wise kernels, whose template
 * arguments name c10::BFloat16 or c10::Half.
 */
#define _GNU_SOURCE
#include "rules/program-state.h"
#include "analyzer/analysis/owner.h"
#include "rules/rule-util.h"

#include <stdio.h>
#include <string.h>

static int any_of(const char *name, const char *const *marks, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasestr(name, marks[i]))
			return 1;
	return 0;
}

#define ANY_OF(name, marks) any_of(name, marks, sizeof(marks) / sizeof(marks[0]))

int program_layout_kernel(const char *name)
{
	return name && (strstr(name, "nchwToNhwc") || strstr(name, "nhwcToNchw"));
}

int program_nchw_kernel(const char *name)
{
	return name && !program_layout_kernel(name) && (strstr(name, "1C11") || strcasestr(name, "nchw"));
}

static int matrix_kernel(const char *name)
{
	static const char *const marks[] = { "gemm", "xmma", "nvjet", "tensorop", "hmma", "wgmma",
					     "fprop", "dgrad", "wgrad", "convolve" };

	return ANY_OF(name, marks);
}

static int convolution(const char *name)
{
	static const char *const marks[] = { "fprop", "dgrad", "wgrad", "convolve", "conv2d",
					     "implicit_gemm", "cudnn::detail::conv" };

	static const char *const attention[] = { "sdpa", "flash", "fmha", "attention" };

	return ANY_OF(name, marks) && !ANY_OF(name, attention);	/* cuDNN's SDPA says fprop too */
}

static int half_typed(const char *name)
{
	static const char *const marks[] = { "bf16", "f16", "fp16", "hgemm", "_hsh_", "_bsb_", "_hss_",
					     "_bss_", "c10::BFloat16", "c10::Half", "__half", "bfloat16" };

	return ANY_OF(name, marks);
}

static int typed(const char *name)
{
	static const char *const marks[] = { "f32", "fp32", "tf32", "sgemm", "dgemm", "f64", "_sss_",
					     "_ddd_" };

	return half_typed(name) || ANY_OF(name, marks);
}

struct state_read {
	struct program_state *p;
};

static void row(sqlite3_stmt *st, void *arg)
{
	struct program_state *p = ((struct state_read *)arg)->p;
	const char *name = analysis_column_text(st, 0);
	int64_t launches = sqlite3_column_int64(st, 1), ns = sqlite3_column_int64(st, 2);
	enum kernel_owner owner = kernel_owner(name);

	p->launches += launches;
	p->kernel_ns += ns;
	p->graph_launches += sqlite3_column_int64(st, 3);
	if (owner == OWNER_INDUCTOR || owner == OWNER_TRITON)
		p->compiled_launches += launches;
	if (strstr(name, "multi_tensor_apply") || strcasestr(name, "fused_adam") ||
	    strcasestr(name, "multi_tensor_adam"))
		p->optimizer_launches += launches;
	if (program_layout_kernel(name)) {
		p->layout_ns += ns;
		p->layout_launches += launches;
		return;
	}
	if (program_nchw_kernel(name))
		p->nchw_ns += ns;
	if (matrix_kernel(name)) {
		p->matrix_ns += ns;
		if (typed(name))
			p->matrix_typed_ns += ns;
		if (half_typed(name))
			p->matrix_half_ns += ns;
		if (convolution(name)) {
			p->conv_ns += ns;
			if (strcasestr(name, "nhwc"))
				p->conv_nhwc_ns += ns;
		}
	} else if (owner == OWNER_ATEN && (strstr(name, "elementwise") || strstr(name, "reduce_kernel"))) {
		p->aten_ns += ns;
		if (half_typed(name))
			p->aten_half_ns += ns;
	}
}

int program_state_read(struct rule_context *ctx, struct program_state *out, char *err,
		       size_t errlen)
{
	static const char sql[] =
		"SELECT name, count(*), sum(dur), sum(coalesce(graphNodeId, 0) <> 0) FROM kernels "
		"GROUP BY traceId, nameId";
	struct state_read r = { out };
	int ret;

	if (ctx->program && ctx->program->cached) {
		*out = *ctx->program;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	ret = analysis_query(&ctx->an, sql, row, &r, err, errlen);
	if (!ret && ctx->program) {
		*ctx->program = *out;
		ctx->program->cached = 1;
	}
	return ret;
}

int program_channels_last(const struct program_state *p)
{
	return p->conv_ns > 0 && !p->layout_launches && p->conv_nhwc_ns * 2 >= p->conv_ns &&
	       p->nchw_ns * 10 < p->conv_ns;
}

int program_mixed_precision(const struct program_state *p)
{
	if (p->matrix_typed_ns * 2 >= p->matrix_ns && p->matrix_typed_ns > 0)
		return p->matrix_half_ns * 2 >= p->matrix_typed_ns;
	return p->aten_ns > 0 && p->aten_half_ns * 2 >= p->aten_ns;
}

int program_graphs(const struct program_state *p)
{
	return p->graph_launches > 0;
}

int program_compiled(const struct program_state *p)
{
	return p->compiled_launches > 0;
}

int program_fused_optimizer(const struct program_state *p)
{
	return p->optimizer_launches > 0;
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

void program_state_evidence(struct finding *f, const struct program_state *p)
{
	char layout[160] = "no convolutions", precision[96];

	if (p->layout_launches)
		snprintf(layout, sizeof(layout), "NCHW (%lld cuDNN layout conversions)",
			 (long long)p->layout_launches);
	else if (program_channels_last(p))
		snprintf(layout, sizeof(layout), "channels_last (NHWC convolutions, no layout conversions)");
	else if (p->conv_ns)
		snprintf(layout, sizeof(layout), "convolutions %.0f%% on NHWC kernels", share(p->conv_nhwc_ns, p->conv_ns));
	if (p->matrix_typed_ns * 2 >= p->matrix_ns && p->matrix_typed_ns > 0)
		snprintf(precision, sizeof(precision), "bf16/fp16 on %.0f%% of matrix time",
			 share(p->matrix_half_ns, p->matrix_typed_ns));
	else if (p->aten_ns)
		snprintf(precision, sizeof(precision), "bf16/fp16 on %.0f%% of element-wise time",
			 share(p->aten_half_ns, p->aten_ns));
	else
		snprintf(precision, sizeof(precision), "precision not told (no kernel names a type)");
	finding_evidence(f, "signs read in the trace: %s; %s; %s; %s; %s", layout, precision,
			 program_graphs(p) ? "CUDA graphs" : "no CUDA graphs",
			 program_compiled(p) ? "torch.compile (Triton) kernels" : "no torch.compile kernels",
			 program_fused_optimizer(p) ? "foreach/fused optimizer" : "no foreach or fused optimizer");
}
