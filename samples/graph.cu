/*
 * graph: a CUDA graph captured from a stream (a memset and three kernels) and launched R times, after
 * one ordinary launch of the first kernel. Kernels from a graph launch must carry its graph id; the
 * ordinary one must not.
 *
 * Known answer, all on one non-blocking stream: one eager add_one(x) (no graph id); then R launches
 * of a graph holding, in order, cudaMemsetAsync(y, 0, E*4 bytes), add_one(x), scale(x, 1.5),
 * saxpy(1, x, y) (grid ceil(E/256), block 256): R memsets, R+1 add_one, R scale and R saxpy
 * kernels, the 3R graph kernels sharing one graph id and three graph node ids; plus one eager memset
 * of x before it all (R+1 memsets of E*4 bytes). Two DtoH copies into pinned memory and one stream
 * synchronize; x and y then equal what the same float steps give on the host.
 */
#include "kernels/tiny.cuh"
#include "kernels/vector.cuh"
#include "samples/sample.h"

const char *sample_name = "graph";

int main(int argc, char **argv)
{
	long replays = 20, elements = 1 << 20;
	const struct sample_option opts[] = {
		{ "replays", OPT_LONG, &replays, "graph launches" },
		{ "elements", OPT_LONG, &elements, "floats per buffer" },
	};
	const unsigned int threads = 256;
	const float factor = 1.5f;
	cudaGraphExec_t exec;
	cudaStream_t stream;
	cudaGraph_t graph;
	unsigned int blocks;
	float *x, *y, *host;
	float want_x = 0.0f, want_y = 0.0f;
	size_t n, bytes;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Capture a memset and three kernels into a CUDA graph and launch it R times.");
	if (elements == 0)
		elements = 1;
	n = (size_t)elements;
	bytes = n * sizeof(float);
	blocks = sample_blocks(n, threads);
	sample_init_device();

	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMalloc(&y, bytes));
	CHECK(cudaMallocHost(&host, 2 * bytes));
	CHECK(cudaMemsetAsync(x, 0, bytes, stream));
	add_one<<<blocks, threads, 0, stream>>>(x, n);
	CHECK_LAUNCHES();

	CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
	CHECK(cudaMemsetAsync(y, 0, bytes, stream));
	add_one<<<blocks, threads, 0, stream>>>(x, n);
	scale<<<blocks, threads, 0, stream>>>(x, factor, n);
	saxpy<<<blocks, threads, 0, stream>>>(1.0f, x, y, n);
	CHECK_LAUNCHES();
	CHECK(cudaStreamEndCapture(stream, &graph));
	CHECK(cudaGraphInstantiate(&exec, graph, 0));

	for (long r = 0; r < replays; r++)
		CHECK(cudaGraphLaunch(exec, stream));
	CHECK(cudaMemcpyAsync(host, x, bytes, cudaMemcpyDeviceToHost, stream));
	CHECK(cudaMemcpyAsync(host + n, y, bytes, cudaMemcpyDeviceToHost, stream));
	CHECK(cudaStreamSynchronize(stream));

	want_x = 1.0f;
	for (long r = 0; r < replays; r++) {
		want_x = (want_x + 1.0f) * factor;
		want_y = want_x;
	}
	for (size_t i = 0; i < n; i++) {
		if (host[i] != want_x || (replays > 0 && host[n + i] != want_y))
			sample_fail("element %zu is x=%g y=%g, expected x=%g y=%g", i, host[i], host[n + i],
				    want_x, want_y);
	}

	sample_result_begin();
	sample_result_kernel("add_one", replays + 1, dim3(blocks), dim3(threads));
	sample_result_kernel("scale", replays, dim3(blocks), dim3(threads));
	sample_result_kernel("saxpy", replays, dim3(blocks), dim3(threads));
	printf(" replays=%ld eager_kernels=1 graph_memsets=%ld memsets=%ld bytes=%zu pinned_dtoh=2 stream_syncs=1",
	       replays, replays, replays + 1, bytes);
	sample_result_end();

	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(graph));
	CHECK(cudaStreamDestroy(stream));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaFreeHost(host));
	return 0;
}
