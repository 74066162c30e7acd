/*
 * membw: a bandwidth-bound float4 copy near DRAM peak, the memory-bound half of the busy-time
 * sample pair (issue 23). Under `gpt-trace run --gpu-metrics` its kernel must read DRAM read+write
 * bandwidth near the device's peak and be classified memory-bound, with no finding to make.
 *
 * Known answer: N launches of copy4 over B MiB (grid 4 blocks per SM, 512 threads, grid-stride),
 * each moving 2*B MiB through DRAM; the last copy's sampled elements equal the source.
 */
#include "samples/sample.h"

const char *sample_name = "membw";

__global__ void copy4(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i];
}

int main(int argc, char **argv)
{
	long launches = 100, mib = 1024;
	const struct sample_option opts[] = {
		{ "launches", OPT_LONG, &launches, "copies" },
		{ "mib", OPT_LONG, &mib, "MiB copied per launch (far above L2)" },
	};
	const unsigned int threads = 512;
	float4 *in, *out, probe[2];
	cudaDeviceProp prop;
	unsigned int blocks;
	long long t0, t1;
	size_t n;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Copy a large buffer with float4 loads and stores, N times.");
	sample_init_device();
	CHECK(cudaGetDeviceProperties(&prop, 0));
	n = (size_t)mib * (1u << 20) / sizeof(float4);
	blocks = (unsigned int)prop.multiProcessorCount * 4;
	CHECK(cudaMalloc(&in, n * sizeof(float4)));
	CHECK(cudaMalloc(&out, n * sizeof(float4)));
	CHECK(cudaMemset(in, 0x3f, n * sizeof(float4)));
	CHECK(cudaDeviceSynchronize());

	t0 = sample_now_ns();
	for (long i = 0; i < launches; i++)
		copy4<<<blocks, threads>>>(in, out, n);
	CHECK_LAUNCHES();
	CHECK(cudaDeviceSynchronize());
	t1 = sample_now_ns();
	CHECK(cudaMemcpy(probe, out + n / 2, 2 * sizeof(float4), cudaMemcpyDeviceToHost));
	if (probe[1].w != probe[0].x || probe[0].x == 0)
		sample_fail("copied element is %g, expected the memset pattern", probe[0].x);

	sample_result_begin();
	sample_result_kernel("copy4", launches, dim3(blocks), dim3(threads));
	printf(" mib=%ld elapsed_ms=%.3f gbps=%.1f", mib, (t1 - t0) / 1e6,
	       2.0 * (double)n * sizeof(float4) * launches / ((t1 - t0) / 1e9) / 1e9);
	sample_result_end();
	CHECK(cudaFree(in));
	CHECK(cudaFree(out));
	return 0;
}
