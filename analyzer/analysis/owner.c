/*
 * The kernel-owner classifier (owner.h). A kernel's name is all a trace says about whose code it
 * is: CUPTI's kernel records carry no library, and the module-load calls the trace keeps do not name
 * the file they load. Names are reliable enough: every vendor library and code generator marks its
 * kernels (a namespace, a prefix, a suffix such as cuDNN's "__5x_cudnn"). The tests in order, first
 * match wins; the order matters where a name carries two marks (ATen's
 * at::cuda::philox::unpack_cudnn is PyTorch's, not cuDNN's).
 */
#include "analyzer/analysis/owner.h"
#include "analyzer/loader/trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static const struct {
	const char *name, *id;
	enum owner_kind kind;
} owners[NR_KERNEL_OWNERS] = {
	[OWNER_PROGRAM] = { "own code", "program", OWNER_KIND_PROGRAM },
	[OWNER_CUBLAS] = { "cuBLAS", "cublas", OWNER_KIND_LIBRARY },
	[OWNER_CUDNN] = { "cuDNN", "cudnn", OWNER_KIND_LIBRARY },
	[OWNER_CUTLASS] = { "CUTLASS", "cutlass", OWNER_KIND_LIBRARY },
	[OWNER_CUFFT] = { "cuFFT", "cufft", OWNER_KIND_LIBRARY },
	[OWNER_CUSPARSE] = { "cuSPARSE", "cusparse", OWNER_KIND_LIBRARY },
	[OWNER_NCCL] = { "NCCL", "nccl", OWNER_KIND_LIBRARY },
	[OWNER_CCCL] = { "Thrust/CUB", "cccl", OWNER_KIND_LIBRARY },
	[OWNER_ATEN] = { "PyTorch ATen", "aten", OWNER_KIND_FRAMEWORK },
	[OWNER_INDUCTOR] = { "TorchInductor (Triton)", "inductor", OWNER_KIND_GENERATED },
	[OWNER_TRITON] = { "Triton", "triton", OWNER_KIND_GENERATED },
	[OWNER_XLA] = { "XLA", "xla", OWNER_KIND_GENERATED },
	[OWNER_NVFUSER] = { "nvFuser", "nvfuser", OWNER_KIND_GENERATED },
	[OWNER_CUPY] = { "CuPy", "cupy", OWNER_KIND_GENERATED },
};

static bool has(const char *name, const char *part)
{
	return strstr(name, part) != NULL;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/*
 * The kernel's own name inside a demangled signature: "vectorized_elementwise_kernel" out of
 * "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)". Sets *len; the name is not
 * terminated there.
 */
static const char *base_name(const char *name, size_t *len)
{
	const char *p = name, *start;

	if (!strncmp(p, "void ", 5))
		p += 5;
	start = p;
	while (*p) {
		if (!strncmp(p, "<unnamed>", 9)) {
			p += 9;
		} else if (!strncmp(p, "(anonymous namespace)", 21)) {
			p += 21;
		} else if (*p == '<' || *p == '(' || *p == ' ') {
			break;
		} else if (p[0] == ':' && p[1] == ':') {
			p += 2;
			start = p;
		} else {
			p++;
		}
	}
	*len = (size_t)(p - start);
	return start;
}

/* Whether part names a namespace of the kernel (between the return type and its own name). */
static bool namespace_has(const char *name, const char *base, const char *part)
{
	const char *p = strstr(name, part);

	return p && p < base;
}

/* XLA's fusion names: loop_add_fusion, input_reduce_fusion_3, gemm_fusion_dot_4, wrapped_subtract. */
static bool xla_fusion(const char *base, size_t len)
{
	const char *f;

	if (starts(base, len, "wrapped_") || starts(base, len, "gemm_fusion") || starts(base, len, "fusion"))
		return true;
	for (f = base; (f = strstr(f, "_fusion")) && f < base + len; f += 7) {
		const char *q = f + 7;

		while (q < base + len && *q >= '0' && *q <= '9')
			q++;
		if (q == base + len || (*q == '_' && q + 1 < base + len && q[1] >= '0' && q[1] <= '9'))
			return true;
	}
	return false;
}

static bool inductor(const char *base, size_t len)
{
	static const char *const kinds[] = { "triton_poi_", "triton_per_", "triton_red_", "triton_tem_",
					     "triton_for_", "triton_spl_", "triton_mm", "triton_bmm" };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (starts(base, len, kinds[i]))
			return true;
	return false;
}

static bool aten(const char *name, const char *base, size_t len)
{
	return has(name, "at::native::") || has(name, "at::cuda::") || has(name, "at_cuda_detail") ||
	       has(name, "c10::") || has(name, "pytorch_flash::") || has(name, "PyTorchMemEffAttention") ||
	       has(name, "fmha_cutlass") || starts(base, len, "cunn_") || starts(base, len, "softmax_warp_");
}

static bool cublas(const char *name, const char *base, size_t len)
{
	static const char *const prefixes[] = { "nvjet_", "gemv", "gemmSN_", "gemmk1_", "splitKreduce_kernel",
						"ampere_sgemm", "ampere_h", "ampere_s", "volta_", "turing_",
						"maxwell_", "sm50_xgemm", "sm35_xgemm", "sgemm_", "dgemm_",
						"hgemm", "cgemm_", "zgemm_" };

	if (has(name, "cublas") || has(name, "_xmma_gemm") || has(name, "cutlass::Kernel2<cutlass_"))
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts(base, len, prefixes[i]))
			return true;
	return false;
}

enum kernel_owner kernel_owner(const char *name)
{
	const char *base;
	size_t len;

	if (!name || !*name)
		return OWNER_PROGRAM;
	base = base_name(name, &len);
	if (starts(base, len, "nccl") || has(name, "ncclDevKernel") || has(name, "ncclKernel"))
		return OWNER_NCCL;
	if (inductor(base, len))
		return OWNER_INDUCTOR;
	if (starts(base, len, "triton_"))
		return OWNER_TRITON;
	/* CUB and Thrust kernels that PyTorch vendors in its own namespace (at_cuda_detail::cub::...)
	 * are CUB's: its namespace, not a template argument, says so. */
	if (namespace_has(name, base, "cub::") || namespace_has(name, base, "thrust::"))
		return OWNER_CCCL;
	if (aten(name, base, len))
		return OWNER_ATEN;
	if (has(name, "cudnn") || starts(base, len, "wgrad_alg") || starts(base, len, "implicit_convolve") ||
	    starts(base, len, "explicit_convolve") || starts(base, len, "precomputed_convolve"))
		return OWNER_CUDNN;
	if (cublas(name, base, len))
		return OWNER_CUBLAS;
	if (has(name, "cutlass"))
		return OWNER_CUTLASS;
	if (has(name, "cufft") || starts(base, len, "regular_fft") || starts(base, len, "vector_fft"))
		return OWNER_CUFFT;
	if (has(name, "cusparse"))
		return OWNER_CUSPARSE;
	if (has(name, "cub::") || has(name, "thrust::") || has(name, "CUB_"))
		return OWNER_CCCL;
	if (has(name, "stream_executor::") || has(name, "xla::") || starts(base, len, "xla_") ||
	    xla_fusion(base, len))
		return OWNER_XLA;
	if (has(name, "nvfuser_") || has(name, "CudaCodeGen::"))
		return OWNER_NVFUSER;
	if (starts(base, len, "cupy_"))
		return OWNER_CUPY;
	return OWNER_PROGRAM;
}

const char *kernel_owner_name(enum kernel_owner owner)
{
	return (unsigned)owner < NR_KERNEL_OWNERS ? owners[owner].name : "program";
}

const char *kernel_owner_id(enum kernel_owner owner)
{
	return (unsigned)owner < NR_KERNEL_OWNERS ? owners[owner].id : "program";
}

enum owner_kind kernel_owner_kind(enum kernel_owner owner)
{
	return (unsigned)owner < NR_KERNEL_OWNERS ? owners[owner].kind : OWNER_KIND_PROGRAM;
}

/* The fixes, by owner and topic; a NULL entry falls back to the kind's row below. */
static const char *const owner_fixes[NR_KERNEL_OWNERS][3] = {
	[OWNER_CUDNN] = {
		[FIX_GRID] = "These are cuDNN's kernels, picked for the shapes they are given: give each call "
			     "more work (a larger batch), let cuDNN pick the fastest algorithm for the shapes "
			     "(torch.backends.cudnn.benchmark = True), or let torch.compile or a CUDA graph "
			     "cut the per-call overhead.",
		[FIX_LAUNCHES] = "These are cuDNN's kernels: batch the calls (a larger batch), enable "
				 "torch.backends.cudnn.benchmark = True, or capture the step in a CUDA graph "
				 "(torch.compile(mode=\"reduce-overhead\")) so the launches cost nothing per step.",
		[FIX_ACCESS] = "This is cuDNN's kernel: its accesses follow the tensor layout it is given: "
			       "use the layout it prefers (channels_last for convolutions, NHWC), make inputs "
			       "contiguous, or let it pick another algorithm (torch.backends.cudnn.benchmark).",
	},
	[OWNER_NCCL] = {
		[FIX_GRID] = "These are NCCL's kernels, which size their own grids: send fewer, larger "
			     "messages (DDP's bucket_cap_mb, gradient bucketing) or overlap them with compute.",
		[FIX_LAUNCHES] = "These are NCCL's kernels: send fewer, larger messages (bucket gradients, "
				 "DDP's bucket_cap_mb) or coalesce collectives.",
		[FIX_ACCESS] = "This is NCCL's kernel; its access pattern is not yours to change: send larger, "
			       "contiguous buffers.",
	},
	[OWNER_ATEN] = {
		[FIX_GRID] = "These are PyTorch's own kernels, which size their grid from the tensor: give each "
			     "op more data (a larger batch; torch._foreach_* or fused=True optimizers instead of "
			     "one small op per parameter), or let torch.compile fuse the small ops.",
		[FIX_LAUNCHES] = "These are PyTorch's own kernels: let torch.compile fuse them "
				 "(mode=\"reduce-overhead\" also adds CUDA graphs), use fused or foreach "
				 "optimizers (fused=True), or capture the step in a CUDA graph (torch.cuda.graph).",
		[FIX_ACCESS] = "This is a PyTorch kernel reading a non-contiguous or permuted view: make the "
			       "tensor contiguous once before the hot loop (.contiguous()), keep tensors in the "
			       "layout the ops expect (channels_last for conv nets), or let torch.compile "
			       "generate a kernel for the layout.",
	},
	[OWNER_INDUCTOR] = {
		[FIX_GRID] = "These kernels were generated by TorchInductor: let it autotune block sizes "
			     "(torch.compile(mode=\"max-autotune\")), or give each step more work (a larger batch).",
		[FIX_LAUNCHES] = "These kernels were generated by TorchInductor: torch.compile(mode="
				 "\"reduce-overhead\") captures them in a CUDA graph; compile a larger region "
				 "(fewer graph breaks: torch._dynamo.explain) so more of them fuse.",
		[FIX_ACCESS] = "This kernel was generated by TorchInductor from the layouts of its inputs: make "
			       "them contiguous before the compiled region, or try mode=\"max-autotune\".",
	},
	[OWNER_TRITON] = {
		[FIX_GRID] = "These are Triton kernels: launch more programs (smaller BLOCK_SIZE, split-K for "
			     "reductions) or add such configs to @triton.autotune.",
		[FIX_LAUNCHES] = "These are Triton kernels: fuse neighbouring ones into one @triton.jit "
				 "kernel, or capture the sequence in a CUDA graph.",
		[FIX_ACCESS] = "This is a Triton kernel: let the fastest-moving block axis (tl.arange on the "
			       "last dimension) follow the contiguous axis of each pointer, or load transposed "
			       "tiles through tl.trans.",
	},
	[OWNER_XLA] = {
		[FIX_GRID] = "These kernels were generated by XLA: give each step more work (a larger batch "
			     "or jax.vmap over several inputs); XLA chooses the grid from the shapes.",
		[FIX_LAUNCHES] = "These kernels were generated by XLA: jit a larger region (the whole step, "
				 "lax.scan over micro-steps) so more of them fuse, or use a larger batch.",
		[FIX_ACCESS] = "This kernel was generated by XLA from the layouts of its operands: a "
			       "transpose in the jitted function is the usual cause; keep arrays in the layout "
			       "the consumers read.",
	},
};

static const char *const kind_fixes[][3] = {
	[OWNER_KIND_LIBRARY] = {
		[FIX_GRID] = "These are a vendor library's kernels, picked for the shapes they are given: give "
			     "each call more work (a larger batch, batched calls), try other shapes "
			     "(multiples of 8 or 16) or another algorithm, or run independent calls "
			     "concurrently on separate streams or in one CUDA graph.",
		[FIX_LAUNCHES] = "These are a vendor library's kernels: batch the calls (batched GEMM or FFT, a "
				 "larger batch) or capture the sequence in a CUDA graph.",
		[FIX_ACCESS] = "This is a vendor library's kernel: its accesses follow the layout it is given: "
			       "pass contiguous data in the layout it expects (leading dimensions, transposes).",
	},
	[OWNER_KIND_GENERATED] = {
		[FIX_GRID] = "These kernels were generated by a compiler that sized the grid from the shapes: "
			     "give each step more work (a larger batch), or use the compiler's tuning options.",
		[FIX_LAUNCHES] = "These kernels were generated by a compiler: compile a larger region so more "
				 "of them fuse, or capture the sequence in a CUDA graph.",
		[FIX_ACCESS] = "This kernel was generated by a compiler from the layouts of its inputs: make "
			       "them contiguous in the layout it reads.",
	},
};

const char *kernel_owner_fix(enum kernel_owner owner, enum fix_topic topic)
{
	enum owner_kind kind = kernel_owner_kind(owner);

	if (kind == OWNER_KIND_PROGRAM || (unsigned)topic > FIX_ACCESS)
		return NULL;
	if (owner_fixes[owner][topic])
		return owner_fixes[owner][topic];
	return kind == OWNER_KIND_FRAMEWORK ? owner_fixes[OWNER_ATEN][topic] : kind_fixes[kind][topic];
}

enum kernel_owner kernel_owner_of(struct trace *trace, int64_t trace_id, int64_t name_id)
{
	const char *name = NULL;
	char err[256];

	if (trace_string(trace, trace_id, name_id, &name, err, sizeof(err)) < 0)
		name = NULL;
	return kernel_owner(name);
}
