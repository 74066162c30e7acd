/*
 * threads: kernels launched from T host threads at once, each on a stream of its own, as a data
 * loader or a multi-model server does. The API records must carry each launching thread's id and
 * the kernels each thread's stream.
 *
 * Known answer: T threads (their Linux thread ids are printed as tids=), each creating one
 * non-blocking stream and launching exactly K kernels add_one over E floats (grid ceil(E/256), block
 * 256) on it after one cudaMemsetAsync, then reading its buffer back with one cudaMemcpyAsync DtoH
 * into pinned memory and one stream synchronize; every element ends at K. The main thread launches
 * nothing.
 */
#include <sys/syscall.h>
#include <thread>
#include <vector>

#include "kernels/tiny.cuh"
#include "samples/sample.h"

const char *sample_name = "threads";

struct worker {
	long launches;
	size_t n;
	long tid;	/* Linux thread id, filled in by the thread */
};

static void run_worker(struct worker *w)
{
	const unsigned int threads = 256;
	unsigned int blocks = sample_blocks(w->n, threads);
	size_t bytes = w->n * sizeof(float);
	cudaStream_t stream;
	float *dev, *host;

	w->tid = (long)syscall(SYS_gettid);
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMallocHost(&host, bytes));
	CHECK(cudaMemsetAsync(dev, 0, bytes, stream));
	for (long i = 0; i < w->launches; i++)
		add_one<<<blocks, threads, 0, stream>>>(dev, w->n);
	CHECK_LAUNCHES();
	CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream));
	CHECK(cudaStreamSynchronize(stream));
	for (size_t i = 0; i < w->n; i++) {
		if (host[i] != (float)w->launches)
			sample_fail("thread %ld element %zu is %g, expected %ld", w->tid, i, host[i],
				    w->launches);
	}
	CHECK(cudaStreamDestroy(stream));
	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
}

int main(int argc, char **argv)
{
	long nthreads = 4, launches = 100, elements = 1 << 16;
	const struct sample_option opts[] = {
		{ "threads", OPT_LONG, &nthreads, "host threads, each with its own stream" },
		{ "launches", OPT_LONG, &launches, "kernel launches per thread" },
		{ "elements", OPT_LONG, &elements, "floats per thread" },
	};
	const unsigned int threads = 256;
	std::vector<struct worker> workers;
	std::vector<std::thread> pool;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Launch K kernels from each of T host threads, each on its own stream.");
	if (nthreads == 0 || elements == 0) {
		fprintf(stderr, "%s: --threads and --elements must be positive\n", sample_name);
		return 2;
	}
	sample_init_device();

	workers.resize(nthreads, worker{ launches, (size_t)elements, 0 });
	for (long t = 0; t < nthreads; t++)
		pool.emplace_back(run_worker, &workers[t]);
	for (auto &th : pool)
		th.join();

	sample_result_begin();
	sample_result_kernel("add_one", nthreads * launches, dim3(sample_blocks(elements, threads)),
			     dim3(threads));
	printf(" threads=%ld per_thread_kernels=%ld tids=", nthreads, launches);
	for (long t = 0; t < nthreads; t++)
		printf("%s%ld", t ? "," : "", workers[t].tid);
	printf(" memsets=%ld pinned_dtoh=%ld bytes=%zu stream_syncs=%ld", nthreads, nthreads,
	       (size_t)elements * sizeof(float), nthreads);
	sample_result_end();
	return 0;
}
