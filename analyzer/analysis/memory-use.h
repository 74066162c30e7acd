/*
 * GPU memory over time, per device, from the allocation and release records of the memory view
 * (analyzer/loader/trace.h; CUDA_GPU_MEMORY_USAGE_EVENTS): memory in use as a step function, its
 * peak (when, against the device's capacity from TARGET_INFO_GPU, in which iteration, NVTX range
 * and kernel), the steady state's allocations and bytes per iteration, the largest allocations with
 * the call and NVTX range that made them, and how memory in use moves from iteration to iteration.
 * Read by the report (a memory section in every format), the timeline export (a counter track) and
 * the rules memory-growth and near-oom.
 *
 * Device memory only: memory kinds device, array and device static (ENUM_CUDA_MEM_KIND 2, 3, 5);
 * pinned and pageable host memory and managed memory are left out. What CUDA reserves for itself
 * (the context, a few hundred MB) never appears in these records, so "in use" is what the program
 * and its libraries allocated: for PyTorch, the caching allocator's reserved segments.
 */
#ifndef GPT_ANALYSIS_MEMORY_USE_H
#define GPT_ANALYSIS_MEMORY_USE_H

#include "analyzer/analysis/phases.h"
#include "analyzer/loader/trace.h"

#include <stddef.h>
#include <stdint.h>

/* One allocation worth naming: the largest ones of a device. */
struct memory_alloc {
	int64_t start, bytes;
	char *call;			/* the API call that made it (NULL: unknown) */
	char *range;			/* the innermost NVTX range of its process at that time (NULL: none) */
	int64_t iteration;		/* its iteration (1-based), 0 when outside every iteration */
};

/* A point of the memory-in-use step function. */
struct memory_point {
	int64_t at, bytes;
};

#define MEMORY_LARGEST 5

struct memory_device {
	int64_t trace_id, device;
	int64_t capacity;		/* TARGET_INFO_GPU.totalMemory, 0 when unknown */
	int64_t allocs, releases;	/* over the whole trace */
	int64_t peak_bytes, peak_at;	/* the highest memory in use, and when first reached */
	int64_t peak_iteration;		/* 1-based, 0: outside every iteration */
	char *peak_range;		/* innermost NVTX range of the process at the peak (NULL: none) */
	char *peak_kernel;		/* the kernel that last started on the device by then (NULL: none) */
	int64_t end_bytes;		/* in use at the trace's last record */
	/* The steady state (when the phases found steady iterations): */
	int64_t steady_iterations;
	int64_t steady_allocs, steady_alloc_bytes, steady_releases;
	int64_t steady_first_bytes, steady_last_bytes;	/* in use at the end of the first and last steady
							   iteration */
	double growth_per_iteration;	/* least-squares slope of in use at the iterations' ends, B */
	int64_t growing_iterations;	/* steady iterations that ended with more in use than the one before */
	struct memory_alloc largest[MEMORY_LARGEST];	/* largest allocations, largest first */
	size_t nlargest;
	struct memory_point *points;	/* the step function, time-ordered (bounded: see memory.c) */
	size_t npoints;
};

struct memory_summary {
	struct memory_device *devices;	/* devices with memory records, in (trace, device) order */
	size_t ndevices;
	int64_t dropped;		/* memory records the collector dropped (GPT_META), summed */
};

/*
 * Compute the summary of every trace (phases: their iterations, may be NULL). Returns 0 with an empty
 * summary for traces without memory records, or a negative error with one line in err. Reads the
 * unscoped views, so it may run under any scope. Free with memory_summary_free().
 */
/*
 * The bytes of an up-front pool reservation on d, or 0: its largest allocation, when it is at least
 * half the device's capacity and half its peak, made outside every iteration by CUDA's virtual
 * memory calls (cuMemCreate, cuMemMap, cuMemSetAccess). JAX/XLA reserves its pool so (75% of the
 * GPU by default; H200 2026-11-27: one 112.58 GB allocation by cuMemSetAccess); the records then
 * show the pool, not what the program keeps in it. A tensor that big made by cudaMalloc (the
 * near_oom pair's ballast) is the program's own and is not taken for a pool.
 */
int64_t memory_pool_reserved(const struct memory_device *d);

int memory_summary_compute(struct trace *trace, const struct phases *phases, struct memory_summary **out,
			   char *err, size_t errlen);
void memory_summary_free(struct memory_summary *summary);

#endif
