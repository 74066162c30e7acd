/*
 * sync_every_launch: a synchronize after every kernel launch, so the host waits for each kernel and
 * the GPU idles while the host issues the next: what the excessive-sync rule must flag. By default it
 * calls cudaDeviceSynchronize on the default stream; --stream launches on a stream of its own and
 * calls cudaStreamSynchronize on it instead.
 *
 * Known answer: N kernels add_one over E floats (grid ceil(E/256), block 256); N synchronization
 * records, context synchronize (syncType 4) by default or stream synchronize (syncType 3) on the
 * kernels' stream with --stream; every element ends at N. One memset before, one synchronous
 * readback into pinned memory after.
 */
#include "kernels/tiny.cuh"
#include "samples/sample.h"

const char *sample_name = "sync_every_launch";

int main(int argc, char **argv)
{
	long launches = 1000, elements = 1 << 16, use_stream = 0;
	const struct sample_option opts[] = {
		{ "launches", OPT_LONG, &launches, "number of kernel launches, each followed by a sync" },
		{ "elements", OPT_LONG, &elements, "floats the kernel touches" },
		{ "stream", OPT_FLAG, &use_stream,
		  "launch on a created stream and cudaStreamSynchronize it (default: cudaDeviceSynchronize)" },
	};
	const unsigned int threads = 256;
	cudaStream_t stream = 0;
	unsigned int blocks;
	float *dev, *host;
	size_t n, bytes;
	long long t0, t1;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Launch N kernels with a synchronize after each one.");
	if (elements == 0)
		elements = 1;
	n = (size_t)elements;
	bytes = n * sizeof(float);
	blocks = sample_blocks(n, threads);
	sample_init_device();

	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMallocHost(&host, bytes));
	CHECK(cudaMemset(dev, 0, bytes));
	if (use_stream)
		CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

	t0 = sample_now_ns();
	for (long i = 0; i < launches; i++) {
		add_one<<<blocks, threads, 0, stream>>>(dev, n);
		CHECK_LAUNCHES();
		if (use_stream)
			CHECK(cudaStreamSynchronize(stream));
		else
			CHECK(cudaDeviceSynchronize());
	}
	t1 = sample_now_ns();
	CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));

	for (size_t i = 0; i < n; i++) {
		if (host[i] != (float)launches)
			sample_fail("element %zu is %g, expected %ld", i, host[i], launches);
	}

	sample_result_begin();
	sample_result_kernel("add_one", launches, dim3(blocks), dim3(threads));
	printf(" mode=%s %s=%ld memsets=1 pinned_dtoh=1 bytes=%zu elapsed_ms=%.3f us_per_iteration=%.3f",
	       use_stream ? "stream" : "device", use_stream ? "stream_syncs" : "device_syncs", launches,
	       bytes, (t1 - t0) / 1e6, launches ? (t1 - t0) / 1e3 / launches : 0.0);
	sample_result_end();

	if (use_stream)
		CHECK(cudaStreamDestroy(stream));
	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
	return 0;
}
