/*
 * idle_gaps: short kernels separated by host work. Between two launches the CPU spins for X
 * microseconds (standing in for data loading or Python overhead), while the GPU, done with its
 * few-microsecond kernel, waits: what the idle-gaps rule must flag as host-wait time.
 *
 * Known answer: N kernels add_one over E floats (grid ceil(E/256), block 256) on the default
 * stream; consecutive kernels start at least X us apart, since each launch is issued X us after the
 * previous one returned; every element ends at N. One memset before, one synchronous readback into
 * pinned memory after.
 */
#include "kernels/tiny.cuh"
#include "samples/sample.h"

const char *sample_name = "idle_gaps";

int main(int argc, char **argv)
{
	long kernels = 50, gap_us = 200, elements = 1 << 16;
	const struct sample_option opts[] = {
		{ "kernels", OPT_LONG, &kernels, "number of kernel launches" },
		{ "gap-us", OPT_LONG, &gap_us, "host busy time between launches, in microseconds" },
		{ "elements", OPT_LONG, &elements, "floats the kernel touches" },
	};
	const unsigned int threads = 256;
	unsigned int blocks;
	float *dev, *host;
	size_t n, bytes;
	long long t0, t1;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Launch N short kernels with X microseconds of host work between them.");
	if (elements == 0)
		elements = 1;
	n = (size_t)elements;
	bytes = n * sizeof(float);
	blocks = sample_blocks(n, threads);
	sample_init_device();

	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMallocHost(&host, bytes));
	CHECK(cudaMemset(dev, 0, bytes));

	t0 = sample_now_ns();
	for (long i = 0; i < kernels; i++) {
		if (i > 0)
			sample_spin_us(gap_us);
		add_one<<<blocks, threads>>>(dev, n);
	}
	CHECK_LAUNCHES();
	CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
	t1 = sample_now_ns();

	for (size_t i = 0; i < n; i++) {
		if (host[i] != (float)kernels)
			sample_fail("element %zu is %g, expected %ld", i, host[i], kernels);
	}

	sample_result_begin();
	sample_result_kernel("add_one", kernels, dim3(blocks), dim3(threads));
	printf(" gap_us=%ld memsets=1 pinned_dtoh=1 bytes=%zu elapsed_ms=%.3f", gap_us, bytes,
	       (t1 - t0) / 1e6);
	sample_result_end();

	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
	return 0;
}
