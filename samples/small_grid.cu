/*
 * small_grid: a grid-stride saxpy launched with a handful of blocks, far fewer than the GPU has SMs
 * (132 on an H200), so most of the GPU idles during each kernel: what the small-grid rule must flag.
 * Everything else is done the recommended way (pinned asynchronous copies, one synchronize), so
 * small-grid is the one problem here.
 *
 * Known answer, on one non-blocking stream: one HtoD copy each of x and y (pinned, E*4 bytes), R
 * launches of saxpy_grid_stride(2, x, y) with grid B, block 256, one DtoH copy of y (pinned), one
 * stream synchronize; y ends at 2R.
 */
#include "kernels/vector.cuh"
#include "samples/sample.h"

const char *sample_name = "small_grid";

int main(int argc, char **argv)
{
	long launches = 20, blocks = 8, elements = 1 << 22;
	const struct sample_option opts[] = {
		{ "launches", OPT_LONG, &launches, "kernel launches" },
		{ "blocks", OPT_LONG, &blocks, "grid size in blocks of 256 threads" },
		{ "elements", OPT_LONG, &elements, "floats per buffer" },
	};
	const unsigned int threads = 256;
	float *x, *y, *host_x, *host_y;
	cudaStream_t stream;
	size_t n, bytes;
	long long t0, t1;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Launch a grid-stride saxpy R times on a grid of only B blocks.");
	if (elements == 0 || blocks == 0) {
		fprintf(stderr, "%s: --elements and --blocks must be positive\n", sample_name);
		return 2;
	}
	n = (size_t)elements;
	bytes = n * sizeof(float);
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
	for (long i = 0; i < launches; i++)
		saxpy_grid_stride<<<(unsigned int)blocks, threads, 0, stream>>>(2.0f, x, y, n);
	CHECK_LAUNCHES();
	CHECK(cudaMemcpyAsync(host_y, y, bytes, cudaMemcpyDeviceToHost, stream));
	CHECK(cudaStreamSynchronize(stream));
	t1 = sample_now_ns();

	for (size_t i = 0; i < n; i++) {
		if (host_y[i] != 2.0f * launches)
			sample_fail("element %zu is %g, expected %ld", i, host_y[i], 2 * launches);
	}

	sample_result_begin();
	sample_result_kernel("saxpy_grid_stride", launches, dim3((unsigned int)blocks), dim3(threads));
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
