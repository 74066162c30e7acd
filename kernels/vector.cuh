/*
 * Element-wise kernels with real work, for the samples that need the GPU busy: the well-written
 * program, the small-grid one, the CUDA graph, and the timed kernel that the CI diff compares.
 */
#ifndef GPT_KERNELS_VECTOR_CUH
#define GPT_KERNELS_VECTOR_CUH

#include <stddef.h>

/* x[i] *= a, one element per thread (launch with at least n threads). */
__global__ void scale(float *x, float a, size_t n);

/* y[i] = a * x[i] + y[i], one element per thread (launch with at least n threads). */
__global__ void saxpy(float a, const float *x, float *y, size_t n);

/*
 * The same saxpy over any grid: each thread strides by the whole grid. Correct with a grid of a few
 * blocks, which is the point of the small-grid sample: most SMs then sit idle.
 */
__global__ void saxpy_grid_stride(float a, const float *x, float *y, size_t n);

/*
 * x[i] = fmaf(x[i], a, b), repeated work times, one element per thread. Compute-bound with a dependent
 * chain per element, so its duration grows in proportion to work at a fixed launch configuration:
 * the slow_kernel sample makes a kernel 20% slower without changing its name or grid.
 */
__global__ void fma_loop(float *x, float a, float b, int work, size_t n);

#endif
