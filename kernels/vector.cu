/* Element-wise kernels: see vector.cuh. */
#include "kernels/vector.cuh"

__global__ void scale(float *x, float a, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= a;
}

__global__ void saxpy(float a, const float *x, float *y, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void saxpy_grid_stride(float a, const float *x, float *y, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		y[i] = a * x[i] + y[i];
}

__global__ void fma_loop(float *x, float a, float b, int work, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	float v = x[i];
	for (int k = 0; k < work; k++)
		v = fmaf(v, a, b);
	x[i] = v;
}
