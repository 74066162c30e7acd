/*
 * well_written: the same kind of work as the other samples, done the recommended way, so that the
 * analyzer must find nothing to report: pinned memory and asynchronous copies, kernels that each
 * cover the whole array with one thread per element (a grid of many times the SM count) and run far
 * longer than their launch cost, coalesced access, all work queued on one stream without a
 * synchronize until the very end, and no host work between launches.
 *
 * Known answer, on one non-blocking stream: one HtoD copy each of x and y (pinned, E*4 bytes), then
 * R iterations of scale(y, 0.5) and saxpy(1, x, y) (grid ceil(E/256), block 256), one DtoH copy of
 * y (pinned), one stream synchronize; y then equals what the same float steps give on the host.
 */
#include "kernels/vector.cuh"
#include "samples/sample.h"

const char *sample_name = "well_written";

int main(int argc, char **argv)
{
	long iters = 20, elements = 1 << 24;
	const struct sample_option opts[] = {
		{ "iters", OPT_LONG, &iters, "iterations of scale + saxpy" },
		{ "elements", OPT_LONG, &elements, "floats per buffer" },
	};
	const unsigned int threads = 256;
	float *x, *y, *host_x, *host_y;
	float want = 0.0f;
	cudaStream_t stream;
	unsigned int blocks;
	size_t n, bytes;
	long long t0, t1;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Well-written GPU work: large grids, pinned async copies, one sync at the end.");
	if (elements == 0)
		elements = 1;
	n = (size_t)elements;
	bytes = n * sizeof(float);
	blocks = sample_blocks(n, threads);
	sample_init_device();

	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMalloc(&y, bytes));
	CHECK(cudaMallocHost(&host_x, bytes));
	CHECK(cudaMallocHost(&host_y, bytes));
	for (size_t i = 0; i < n; i++) {
		host_x[i] = 1.0f;
		host_y[i] = 0.0f;
	}

	t0 = sample_now_ns();
	CHECK(cudaMemcpyAsync(x, host_x, bytes, cudaMemcpyHostToDevice, stream));
	CHECK(cudaMemcpyAsync(y, host_y, bytes, cudaMemcpyHostToDevice, stream));
	for (long i = 0; i < iters; i++) {
		scale<<<blocks, threads, 0, stream>>>(y, 0.5f, n);
		saxpy<<<blocks, threads, 0, stream>>>(1.0f, x, y, n);
	}
	CHECK_LAUNCHES();
	CHECK(cudaMemcpyAsync(host_y, y, bytes, cudaMemcpyDeviceToHost, stream));
	CHECK(cudaStreamSynchronize(stream));
	t1 = sample_now_ns();

	for (long i = 0; i < iters; i++)
		want = want * 0.5f + 1.0f;
	for (size_t i = 0; i < n; i++) {
		if (host_y[i] != want)
			sample_fail("element %zu is %g, expected %g", i, host_y[i], want);
	}

	sample_result_begin();
	sample_result_kernel("scale", iters, dim3(blocks), dim3(threads));
	sample_result_kernel("saxpy", iters, dim3(blocks), dim3(threads));
	printf(" pinned_htod=2 pinned_dtoh=1 bytes=%zu stream_syncs=1 elapsed_ms=%.3f", bytes,
	       (t1 - t0) / 1e6);
	sample_result_end();

	CHECK(cudaStreamDestroy(stream));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaFreeHost(host_x));
	CHECK(cudaFreeHost(host_y));
	return 0;
}
