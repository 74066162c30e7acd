/*
 * steady_warmup: a program whose start is slow and whose steady state is clean, for the
 * steady-state report, which must count the start as a one-time cost and find nothing in the loop.
 * About two seconds of warm-up: an NVTX range "compile" around C ms of host work (standing for JIT
 * compilation), then an NVTX range "autotune" that launches 20 distinct candidate kernels (one
 * template instantiation per block size, 32 to 640 threads), each followed by cudaDeviceSynchronize
 * and timed on the host, and keeps the fastest; then the input upload and one cudaDeviceSynchronize.
 * Then S steps, each an NVTX push/pop range "step" of K launches of the chosen candidate, back to
 * back on the default stream, with one cudaDeviceSynchronize after the loop. There is no --fixed:
 * this steady state is already the good one.
 *
 * Known answer: 20 candidates autotune_fma<B> (B = 32, 64, ..., 640), one launch each over E floats
 * (grid ceil(E/B), block B) of scratch with work A, each followed by a context synchronize; then the
 * fastest one, autotune_fma<best>, launched S*K more times over x with work M (the result line names
 * it and its count). 22 context synchronizes in all: 20 in "autotune", one after the upload of x,
 * one after the loop. Sampled elements of scratch and x equal the same float steps done on the
 * host. One memset of scratch and one pinned HtoD copy of x before the loop, one DtoH copy of each
 * into pinned memory after.
 *
 * median_step_us is the median of the host time of each step (its launches only, until the launch
 * queue fills); mean_step_us is the whole loop, the synchronize after it included, over S;
 * warmup_ms is the time from the start of main to the first step, device creation included.
 */
#include <math.h>
#include <nvtx3/nvToolsExt.h>

#include "samples/sample.h"

const char *sample_name = "steady_warmup";

static const float fma_a = 0.9999f, fma_b = 0.0001f;

/* x[i] = fmaf(x[i], a, b), work times: fma_loop, compiled for one block size (a distinct kernel). */
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) autotune_fma(float *x, float a, float b, int work, size_t n)
{
	size_t i = (size_t)blockIdx.x * BLOCK + threadIdx.x;

	if (i >= n)
		return;
	float v = x[i];
	for (int k = 0; k < work; k++)
		v = fmaf(v, a, b);
	x[i] = v;
}

typedef void (*candidate_kernel)(float *, float, float, int, size_t);

static const struct candidate {
	unsigned int block;
	candidate_kernel kernel;
} candidates[] = {
#define CANDIDATE(b) { b, autotune_fma<b> }
	CANDIDATE(32), CANDIDATE(64), CANDIDATE(96), CANDIDATE(128), CANDIDATE(160),
	CANDIDATE(192), CANDIDATE(224), CANDIDATE(256), CANDIDATE(288), CANDIDATE(320),
	CANDIDATE(352), CANDIDATE(384), CANDIDATE(416), CANDIDATE(448), CANDIDATE(480),
	CANDIDATE(512), CANDIDATE(544), CANDIDATE(576), CANDIDATE(608), CANDIDATE(640),
#undef CANDIDATE
};

#define NCANDIDATES (sizeof(candidates) / sizeof(candidates[0]))

static void launch(const struct candidate *c, float *x, int work, size_t n)
{
	c->kernel<<<sample_blocks(n, c->block), c->block>>>(x, fma_a, fma_b, work, n);
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

/* Fail unless sampled elements of host are their start value (0, or init(i) as in x) after chain fmas. */
static void check(const char *what, const float *host, size_t n, int from_zero, long long chain)
{
	for (size_t i = 0; i < n; i += n / 8 + 1) {
		float v = from_zero ? 0.0f : (float)(i % 1000) / 1000.0f;

		for (long long k = 0; k < chain; k++)
			v = fmaf(v, fma_a, fma_b);
		if (host[i] != v)
			sample_fail("%s element %zu is %.9g, expected %.9g", what, i, host[i], v);
	}
}

int main(int argc, char **argv)
{
	long steps = 200, kernels = 6, work = 700, compile_ms = 1500, autotune_work = 30000;
	long elements = 1 << 22;
	const struct sample_option opts[] = {
		{ "steps", OPT_LONG, &steps, "steps, each an NVTX range 'step'" },
		{ "kernels", OPT_LONG, &kernels, "launches per step" },
		{ "work", OPT_LONG, &work, "multiply-adds per element and launch in the steps" },
		{ "compile-ms", OPT_LONG, &compile_ms, "host work in the 'compile' range, in milliseconds" },
		{ "autotune-work", OPT_LONG, &autotune_work, "multiply-adds per element of each candidate" },
		{ "elements", OPT_LONG, &elements, "floats, one thread each" },
	};
	long long start = sample_now_ns(), tune_ns[NCANDIDATES], *durations, t0, t1, s0;
	const struct candidate *best = &candidates[0];
	float *x, *scratch, *host;
	size_t n, bytes;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Two seconds of compile and autotune, then a clean step loop.");
	if (elements == 0)
		elements = 1;
	n = (size_t)elements;
	bytes = n * sizeof(float);
	durations = (long long *)calloc((size_t)steps + 1, sizeof(*durations));
	if (!durations)
		sample_fail("out of host memory");
	sample_init_device();

	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMalloc(&scratch, bytes));
	CHECK(cudaMallocHost(&host, bytes));

	nvtxRangePushA("compile");
	sample_spin_us(compile_ms * 1000);
	nvtxRangePop();

	/* The candidates work on scratch (all zeros at first), the steps on x. */
	CHECK(cudaMemset(scratch, 0, bytes));
	nvtxRangePushA("autotune");
	for (size_t c = 0; c < NCANDIDATES; c++) {
		long long c0 = sample_now_ns();

		launch(&candidates[c], scratch, (int)autotune_work, n);
		CHECK_LAUNCHES();
		CHECK(cudaDeviceSynchronize());
		tune_ns[c] = sample_now_ns() - c0;
		if (tune_ns[c] < tune_ns[best - candidates])
			best = &candidates[c];
	}
	nvtxRangePop();

	for (size_t i = 0; i < n; i++)
		host[i] = (float)(i % 1000) / 1000.0f;
	CHECK(cudaMemcpyAsync(x, host, bytes, cudaMemcpyHostToDevice, 0));
	CHECK(cudaDeviceSynchronize());

	t0 = sample_now_ns();
	for (long s = 0; s < steps; s++) {
		s0 = sample_now_ns();
		nvtxRangePushA("step");
		for (long k = 0; k < kernels; k++)
			launch(best, x, (int)work, n);
		nvtxRangePop();
		durations[s] = sample_now_ns() - s0;
	}
	CHECK_LAUNCHES();
	CHECK(cudaDeviceSynchronize());
	t1 = sample_now_ns();

	CHECK(cudaMemcpy(host, x, bytes, cudaMemcpyDeviceToHost));
	check("x", host, n, 0, (long long)steps * kernels * work);
	CHECK(cudaMemcpy(host, scratch, bytes, cudaMemcpyDeviceToHost));
	check("scratch", host, n, 1, (long long)NCANDIDATES * autotune_work);

	sample_result_begin();
	for (size_t c = 0; c < NCANDIDATES; c++) {
		const struct candidate *k = &candidates[c];
		char name[32];

		snprintf(name, sizeof(name), "autotune_fma<%u>", k->block);
		sample_result_kernel(name, 1 + (k == best ? steps * kernels : 0),
				     dim3(sample_blocks(n, k->block)), dim3(k->block));
	}
	printf(" variant=clean steps=%ld work=%ld compile_ms=%ld autotune_launches=%zu"
	       " autotune_work=%ld best_block=%u best_tune_us=%.1f device_syncs=%zu memsets=1"
	       " pinned_htod=1 pinned_dtoh=2 bytes=%zu warmup_ms=%.1f median_step_us=%.1f"
	       " mean_step_us=%.1f",
	       steps, work, compile_ms, NCANDIDATES, autotune_work, best->block,
	       tune_ns[best - candidates] / 1e3, NCANDIDATES + 2, bytes, (t0 - start) / 1e6,
	       median_us(durations, steps), steps ? (t1 - t0) / 1e3 / steps : 0.0);
	sample_result_end();

	free(durations);
	CHECK(cudaFree(x));
	CHECK(cudaFree(scratch));
	CHECK(cudaFreeHost(host));
	return 0;
}
