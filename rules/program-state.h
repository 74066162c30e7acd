/*
 * What the program already does, read from its kernels' names (issue 38): before a rule advises a
 * change, it looks here for signs that the program made it, and advises the next lever instead.
 * A finding that advises says which signs it read, in one line (program_state_line).
 *
 *   channels_last       convolutions on NHWC kernels and no cuDNN nchwToNhwc/nhwcToNchw conversions
 *   mixed precision     bf16/fp16 on most of the matrix time (kernel names with a 16-bit type), or,
 *                       where the matrix kernels' names say no type (cuBLAS's nvjet), on most of
 *                       ATen's element-wise time (c10::BFloat16 / c10::Half template arguments)
 *   CUDA graphs         kernels launched from a graph (graphNodeId set)
 *   torch.compile       kernels of TorchInductor (or other Triton kernels)
 *   fused optimizers    ATen's multi_tensor_apply kernels (foreach) or fused Adam/AdamW/SGD kernels
 *
 * Read over the scope the rules judge (the steady state), one GROUP BY over the kernels, when the
 * first rule of a report is about to advise; the others read the copy in their rule_context.
 */
#ifndef GPT_RULES_PROGRAM_STATE_H
#define GPT_RULES_PROGRAM_STATE_H

#include "rules/rule.h"

#include <stddef.h>
#include <stdint.h>

struct program_state {
	int64_t kernel_ns, launches;
	int64_t conv_ns, conv_nhwc_ns;		/* cuDNN convolutions; of which on NHWC kernels */
	int64_t layout_ns, layout_launches;	/* cuDNN's NCHW <-> NHWC conversion kernels */
	int64_t nchw_ns;			/* kernels made for NCHW tensors (batch norm, pooling) */
	int64_t matrix_ns, matrix_typed_ns, matrix_half_ns;	/* GEMMs and convolutions; typed: the
								   name says its type; half: 16-bit */
	int64_t aten_ns, aten_half_ns;		/* ATen element-wise kernels; of which on 16-bit types */
	int64_t graph_launches;
	int64_t compiled_launches;		/* Inductor and Triton kernels */
	int64_t optimizer_launches;		/* multi_tensor_apply and fused optimizer kernels */
	int cached;				/* rule_context's cache: filled */
};

/* Read the state over the rules' scope, once per rules_run() (ctx->program caches it). Returns 0,
 * or a negative error with one line in err. */
int program_state_read(struct rule_context *ctx, struct program_state *out, char *err,
		       size_t errlen);

int program_channels_last(const struct program_state *p);
int program_mixed_precision(const struct program_state *p);
int program_graphs(const struct program_state *p);
int program_compiled(const struct program_state *p);
int program_fused_optimizer(const struct program_state *p);

/* Whether a kernel name is one of cuDNN's NCHW <-> NHWC conversions. */
int program_layout_kernel(const char *name);
/* Whether it is a kernel made for NCHW tensors (batch norm's 1C11, pooling's nchw), not a conversion. */
int program_nchw_kernel(const char *name);

/* The one evidence line: "signs read: channels_last (NHWC convolutions, no layout conversions),
 * bf16/fp16 on 88% of matrix time, no CUDA graphs, no torch.compile kernels, foreach optimizer". */
void program_state_evidence(struct finding *f, const struct program_state *p);

#endif
