/*
 * slow_kernel: one compute-bound kernel run N times, for the CI timing diff. --slow makes the kernel
 * do 20% more work per element (a larger loop count passed as an argument), so its name, grid and
 * block stay the same and only its duration changes: a base run and a --slow run must diff as
 * "slower" for fma_loop, two base runs as "same".
 *
 * Known answer: N launches of fma_loop over E floats (grid ceil(E/256), block 256) on the default
 * stream with work W (default 250) or 6W/5 with --slow, between one synchronous HtoD copy from and
 * one readback into pinned memory, with one context synchronize after the launches; sampled
 * elements equal the same fused multiply-adds done on the host.
 */
#include <math.h>

#include "kernels/vector.cuh"
#include "samples/sample.h"

const char *sample_name = "slow_kernel";

int main(int argc, char **argv)
{
	long launches = 200, elements = 1 << 22, work = 250, slow = 0;
	const struct sample_option opts[] = {
		{ "launches", OPT_LONG, &launches, "kernel launches" },
		{ "elements", OPT_LONG, &elements, "floats, one thread each" },
		{ "work", OPT_LONG, &work, "multiply-adds per element and launch" },
		{ "slow", OPT_FLAG, &slow, "do 20% more work per element (same kernel, same grid)" },
	};
	const unsigned int threads = 256;
	const float a = 0.999f, b = 0.001f;
	unsigned int blocks;
	float *dev, *host;
	size_t n, bytes;
	long long t0, t1;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Run a compute-bound kernel N times; --slow makes it 20% slower.");
	if (elements == 0)
		elements = 1;
	if (slow)
		work = work * 6 / 5;
	n = (size_t)elements;
	bytes = n * sizeof(float);
	blocks = sample_blocks(n, threads);
	sample_init_device();

	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMallocHost(&host, bytes));
	for (size_t i = 0; i < n; i++)
		host[i] = (float)(i % 1000) / 1000.0f;
	CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));

	t0 = sample_now_ns();
	for (long i = 0; i < launches; i++)
		fma_loop<<<blocks, threads>>>(dev, a, b, (int)work, n);
	CHECK_LAUNCHES();
	CHECK(cudaDeviceSynchronize());
	t1 = sample_now_ns();
	CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));

	/* fma_loop uses fmaf as well (one rounding per step), so host and device agree bit for bit. */
	for (size_t i = 0; i < n; i += n / 16 + 1) {
		float v = (float)(i % 1000) / 1000.0f;

		for (long k = 0; k < launches * work; k++)
			v = fmaf(v, a, b);
		if (host[i] != v)
			sample_fail("element %zu is %.9g, expected %.9g", i, host[i], v);
	}

	sample_result_begin();
	sample_result_kernel("fma_loop", launches, dim3(blocks), dim3(threads));
	printf(" work=%ld slow=%ld device_syncs=1 pinned_htod=1 pinned_dtoh=1 bytes=%zu elapsed_ms=%.3f",
	       work, slow, bytes, (t1 - t0) / 1e6);
	sample_result_end();

	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
	return 0;
}
