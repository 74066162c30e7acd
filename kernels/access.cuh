/*
 * Global-memory access patterns, good and bad, for the uncoalesced-access rule (issue 5) and its
 * comparison with Nsight Compute. For 4-byte elements a warp that reads 32 consecutive floats needs 4
 * sectors of 32 bytes per request (the ideal); a warp whose threads are 33 floats apart touches a new
 * sector per thread, 32 per request, and uses 4 of every 32 bytes it moves (12.5%): the figures ncu
 * reports on the H200 for coalesced_copy and strided_gather.
 */
#ifndef GPT_KERNELS_ACCESS_CUH
#define GPT_KERNELS_ACCESS_CUH

#include <stddef.h>

/* The stride, in elements, of strided_gather: odd, so the gather visits every element once. */
#define GATHER_STRIDE 33

/* Tile edge and rows per block of the transposes: blocks of TILE_DIM x TILE_ROWS threads. */
#define TILE_DIM 32
#define TILE_ROWS 8

/* Good: out[i] = in[i]; one element per thread, consecutive threads on consecutive addresses. */
__global__ void coalesced_copy(const float *in, float *out, size_t n);

/*
 * Bad: out[i] = in[(i * GATHER_STRIDE) % n]; the stores are coalesced, the loads 32 sectors per
 * request. With n coprime to GATHER_STRIDE every element is read exactly once.
 */
__global__ void strided_gather(const float *in, float *out, size_t n);

/*
 * Bad on stores only: out = transpose(in) for a rows x cols matrix, reading rows (coalesced) and
 * writing columns (consecutive threads rows apart). Grid (cols/TILE_DIM, rows/TILE_DIM), block
 * (TILE_DIM, TILE_ROWS); rows and cols multiples of TILE_DIM.
 */
__global__ void transpose_naive(const float *in, float *out, int rows, int cols);

/* Good: the same transpose through a shared-memory tile, so both loads and stores are coalesced. */
__global__ void transpose_tiled(const float *in, float *out, int rows, int cols);

#endif
