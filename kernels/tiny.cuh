/*
 * Tiny kernels for the samples where the point is the launch, not the work: the launch-bound loop,
 * the idle gaps, the syncs, streams, threads, forks and NVTX ranges. Each takes a few microseconds at
 * most, so the trace shows launch cost and host behaviour rather than kernel time.
 */
#ifndef GPT_KERNELS_TINY_CUH
#define GPT_KERNELS_TINY_CUH

#include <stddef.h>

/* Does nothing: the cheapest launch there is. */
__global__ void empty_kernel(void);

/* x[i] += 1 for i < n; after k launches every element equals its start value + k (the known answer). */
__global__ void add_one(float *x, size_t n);

#endif
