/* Global-memory access patterns: see access.cuh. */
#include "kernels/access.cuh"

__global__ void coalesced_copy(const float *in, float *out, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = in[i];
}

__global__ void strided_gather(const float *in, float *out, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = in[(i * GATHER_STRIDE) % n];
}

__global__ void transpose_naive(const float *in, float *out, int rows, int cols)
{
	int col = blockIdx.x * TILE_DIM + threadIdx.x;
	int row = blockIdx.y * TILE_DIM + threadIdx.y;

	for (int j = 0; j < TILE_DIM; j += TILE_ROWS)
		out[(size_t)col * rows + row + j] = in[(size_t)(row + j) * cols + col];
}

__global__ void transpose_tiled(const float *in, float *out, int rows, int cols)
{
	/* One column of padding puts a tile column in 32 different banks. */
	__shared__ float tile[TILE_DIM][TILE_DIM + 1];
	int col = blockIdx.x * TILE_DIM + threadIdx.x;
	int row = blockIdx.y * TILE_DIM + threadIdx.y;

	for (int j = 0; j < TILE_DIM; j += TILE_ROWS)
		tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(row + j) * cols + col];
	__syncthreads();

	/* Swap the block's coordinates so that consecutive threads write consecutive addresses. */
	col = blockIdx.y * TILE_DIM + threadIdx.x;
	row = blockIdx.x * TILE_DIM + threadIdx.y;
	for (int j = 0; j < TILE_DIM; j += TILE_ROWS)
		out[(size_t)(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
}
