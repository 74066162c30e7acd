/*
 * streams: work spread over S streams. Each stream owns a slice of pinned host memory and of device
 * memory and runs K rounds of: copy the slice host->device, add one to it, copy it back. The rounds
 * are issued round-robin over the streams, so copies on one stream overlap kernels on another.
 *
 * Known answer: S non-blocking streams, each with exactly K kernels add_one over E floats (grid
 * ceil(E/256), block 256), K HtoD and K DtoH cudaMemcpyAsync of E*4 bytes from and to pinned memory
 * (srcKind resp. dstKind 1); S stream synchronizes, one per stream; every element ends at K.
 */
#include "kernels/tiny.cuh"
#include "samples/sample.h"

const char *sample_name = "streams";

int main(int argc, char **argv)
{
	long nstreams = 4, rounds = 8, elements = 1 << 20;
	const struct sample_option opts[] = {
		{ "streams", OPT_LONG, &nstreams, "number of streams" },
		{ "rounds", OPT_LONG, &rounds, "copy-kernel-copy rounds per stream" },
		{ "elements", OPT_LONG, &elements, "floats per stream" },
	};
	const unsigned int threads = 256;
	cudaStream_t *streams;
	float **host, **dev;
	unsigned int blocks;
	size_t n, bytes;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Spread copy-kernel-copy rounds over S streams.");
	if (nstreams == 0 || elements == 0) {
		fprintf(stderr, "%s: --streams and --elements must be positive\n", sample_name);
		return 2;
	}
	n = (size_t)elements;
	bytes = n * sizeof(float);
	blocks = sample_blocks(n, threads);
	streams = (cudaStream_t *)calloc(nstreams, sizeof(*streams));
	host = (float **)calloc(nstreams, sizeof(*host));
	dev = (float **)calloc(nstreams, sizeof(*dev));
	if (!streams || !host || !dev) {
		fprintf(stderr, "%s: out of memory\n", sample_name);
		return 1;
	}
	sample_init_device();

	for (long s = 0; s < nstreams; s++) {
		CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
		CHECK(cudaMallocHost(&host[s], bytes));
		CHECK(cudaMalloc(&dev[s], bytes));
		memset(host[s], 0, bytes);
	}
	for (long r = 0; r < rounds; r++) {
		for (long s = 0; s < nstreams; s++) {
			CHECK(cudaMemcpyAsync(dev[s], host[s], bytes, cudaMemcpyHostToDevice, streams[s]));
			add_one<<<blocks, threads, 0, streams[s]>>>(dev[s], n);
			CHECK_LAUNCHES();
			CHECK(cudaMemcpyAsync(host[s], dev[s], bytes, cudaMemcpyDeviceToHost, streams[s]));
		}
	}
	for (long s = 0; s < nstreams; s++)
		CHECK(cudaStreamSynchronize(streams[s]));

	for (long s = 0; s < nstreams; s++) {
		for (size_t i = 0; i < n; i++) {
			if (host[s][i] != (float)rounds)
				sample_fail("stream %ld element %zu is %g, expected %ld", s, i, host[s][i], rounds);
		}
	}

	sample_result_begin();
	sample_result_kernel("add_one", nstreams * rounds, dim3(blocks), dim3(threads));
	printf(" streams=%ld per_stream_kernels=%ld per_stream_htod=%ld per_stream_dtoh=%ld"
	       " pinned_htod=%ld pinned_dtoh=%ld bytes=%zu stream_syncs=%ld",
	       nstreams, rounds, rounds, rounds, nstreams * rounds, nstreams * rounds, bytes, nstreams);
	sample_result_end();

	for (long s = 0; s < nstreams; s++) {
		CHECK(cudaStreamDestroy(streams[s]));
		CHECK(cudaFreeHost(host[s]));
		CHECK(cudaFree(dev[s]));
	}
	free(streams);
	free(host);
	free(dev);
	return 0;
}
