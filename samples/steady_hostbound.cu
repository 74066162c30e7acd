/*
 * steady_hostbound: a step loop fed by a CPU-bound input pipeline, and its fix, for the steady-state
 * report. Each step (an NVTX push/pop range "step") needs a batch that the host prepares with H us of
 * CPU work (standing for decoding and augmenting input), runs K compute-bound kernels on it on a
 * stream of its own and ends with cudaStreamSynchronize on that stream. The bad variant prepares the
 * step's batch at the start of the step, so the GPU waits through the host work and the host through
 * the kernels: a step takes about H plus the GPU time. With --fixed the batch of step i+1 is prepared
 * while the GPU runs step i (launch first, then prepare the next batch, then synchronize), so a step
 * takes about the larger of the two, the GPU time: the saving is about H (400 us by default) per step.
 *
 * Known answer: W warm-up steps (outside any "step" range, inside one "warmup" range), then S steps
 * in "step" ranges; per step K launches of fma_loop over E floats (grid ceil(E/256), block 256) on
 * one non-blocking stream, with the step's batch as fma_loop's addend b, and one stream synchronize.
 * Sampled elements equal the same float steps done on the host. One HtoD copy from pinned memory
 * before and one DtoH copy into it after, on the stream, each followed by a stream synchronize too.
 *
 * median_step_us is the median of the host time of each step, synchronize included;
 * mean_step_us is the whole loop, the first batch's preparation included, over S.
 */
#include <math.h>
#include <nvtx3/nvToolsExt.h>

#include "kernels/vector.cuh"
#include "samples/sample.h"

const char *sample_name = "steady_hostbound";

static const unsigned int threads = 256;
static const float fma_a = 0.999f;

/* The batch of step s: fma_loop's addend, so the steps' batches show in the answer. */
static float batch_value(long s)
{
	return 0.0001f * (float)(1 + s % 4);
}

/* The CPU-bound input pipeline: host_us of host work that yields the batch of step s. */
static float prepare_batch(long s, long host_us)
{
	sample_spin_us(host_us);
	return batch_value(s);
}

struct loop {
	cudaStream_t stream;
	float *x;
	size_t n;
	long kernels, work, host_us, fixed;
	long syncs;
};

static void launch_step(struct loop *l, float b)
{
	for (long k = 0; k < l->kernels; k++)
		fma_loop<<<sample_blocks(l->n, threads), threads, 0, l->stream>>>(l->x, fma_a, b,
									       (int)l->work, l->n);
	CHECK_LAUNCHES();
}

/*
 * Steps first .. first+count-1; in "step" ranges when named, with each one's host time in
 * durations when given. Bad: prepare, launch, synchronize. Fixed: the first batch before the loop,
 * then launch, prepare the next batch, synchronize.
 */
static void run_steps(struct loop *l, long first, long count, const char *range, long long *durations)
{
	float next = 0.0f;

	if (l->fixed && count > 0)
		next = prepare_batch(first, l->host_us);
	for (long s = first; s < first + count; s++) {
		long long s0 = sample_now_ns();
		float b;

		if (range)
			nvtxRangePushA(range);
		if (l->fixed) {
			b = next;
			launch_step(l, b);
			if (s + 1 < first + count)
				next = prepare_batch(s + 1, l->host_us);
		} else {
			b = prepare_batch(s, l->host_us);
			launch_step(l, b);
		}
		CHECK(cudaStreamSynchronize(l->stream));
		l->syncs++;
		if (range)
			nvtxRangePop();
		if (durations)
			durations[s - first] = sample_now_ns() - s0;
	}
}

static int compare_ns(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* The median of count durations in ns, in us; sorts them. */
static double median_us(long long *ns, long count)
{
	if (count == 0)
		return 0.0;
	qsort(ns, (size_t)count, sizeof(*ns), compare_ns);
	if (count % 2)
		return ns[count / 2] / 1e3;
	return (ns[count / 2 - 1] + ns[count / 2]) / 2e3;
}

int main(int argc, char **argv)
{
	long steps = 200, warmup = 5, kernels = 6, work = 700, host_us = 400, elements = 1 << 22;
	long fixed = 0;
	const struct sample_option opts[] = {
		{ "steps", OPT_LONG, &steps, "timed steps, each an NVTX range 'step'" },
		{ "warmup", OPT_LONG, &warmup, "untimed steps before them" },
		{ "kernels", OPT_LONG, &kernels, "fma_loop launches per step" },
		{ "work", OPT_LONG, &work, "multiply-adds per element and launch" },
		{ "host-us", OPT_LONG, &host_us, "host work to prepare each step's batch, in microseconds" },
		{ "elements", OPT_LONG, &elements, "floats, one thread each" },
		{ "fixed", OPT_FLAG, &fixed, "prepare the next batch while the GPU runs this step" },
	};
	struct loop l;
	long long *durations, t0, t1;
	unsigned int blocks;
	float *host;
	size_t bytes;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "A step loop whose host input pipeline stalls the GPU; --fixed prefetches the next batch.");
	if (elements == 0)
		elements = 1;
	memset(&l, 0, sizeof(l));
	l.n = (size_t)elements;
	l.kernels = kernels;
	l.work = work;
	l.host_us = host_us;
	l.fixed = fixed;
	bytes = l.n * sizeof(float);
	blocks = sample_blocks(l.n, threads);
	durations = (long long *)calloc((size_t)steps + 1, sizeof(*durations));
	if (!durations)
		sample_fail("out of host memory");
	sample_init_device();

	CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&l.x, bytes));
	CHECK(cudaMallocHost(&host, bytes));
	for (size_t i = 0; i < l.n; i++)
		host[i] = (float)(i % 1000) / 1000.0f;
	CHECK(cudaMemcpyAsync(l.x, host, bytes, cudaMemcpyHostToDevice, l.stream));
	CHECK(cudaStreamSynchronize(l.stream));

	nvtxRangePushA("warmup");
	run_steps(&l, 0, warmup, NULL, NULL);
	nvtxRangePop();

	t0 = sample_now_ns();
	run_steps(&l, warmup, steps, "step", durations);
	t1 = sample_now_ns();
	CHECK(cudaMemcpyAsync(host, l.x, bytes, cudaMemcpyDeviceToHost, l.stream));
	CHECK(cudaStreamSynchronize(l.stream));

	/* fma_loop uses fmaf as well (one rounding per step), so host and device agree bit for bit. */
	for (size_t i = 0; i < l.n; i += l.n / 8 + 1) {
		float v = (float)(i % 1000) / 1000.0f;

		for (long s = 0; s < warmup + steps; s++) {
			float b = batch_value(s);

			for (long k = 0; k < kernels * work; k++)
				v = fmaf(v, fma_a, b);
		}
		if (host[i] != v)
			sample_fail("element %zu is %.9g, expected %.9g", i, host[i], v);
	}

	sample_result_begin();
	sample_result_kernel("fma_loop", (warmup + steps) * kernels, dim3(blocks), dim3(threads));
	printf(" variant=%s steps=%ld warmup=%ld work=%ld host_us=%ld streams=1 stream_syncs=%ld"
	       " pinned_htod=1 pinned_dtoh=1 bytes=%zu median_step_us=%.1f mean_step_us=%.1f",
	       fixed ? "fixed" : "bad", steps, warmup, work, host_us, l.syncs + 2, bytes,
	       median_us(durations, steps), steps ? (t1 - t0) / 1e3 / steps : 0.0);
	sample_result_end();

	free(durations);
	CHECK(cudaStreamDestroy(l.stream));
	CHECK(cudaFree(l.x));
	CHECK(cudaFreeHost(host));
	return 0;
}
