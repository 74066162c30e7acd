/*
 * steady_malloc: a step loop that allocates and frees its scratch buffer inside every step, and its
 * fix, for the steady-state report. Each step (an NVTX push/pop range "step") queues K compute-bound
 * kernels on x, copies x into a scratch buffer the size of x (64 MiB by default) and adds the scratch
 * into y. The bad variant calls cudaMalloc for the scratch at the start of the step and cudaFree at
 * its end; cudaFree waits for the GPU to finish, so every step the host waits for the GPU and then
 * the GPU waits through the free, the next malloc and the next launch: a step takes about the GPU
 * time plus a free, a malloc and a launch. With --fixed the scratch is allocated once before the
 * loop and freed after it, nothing in the loop waits, and a step takes about the GPU time: the saving
 * is the cost of the free and the malloc and the launch latency (roughly 100-300 us per step).
 *
 * Known answer: W warm-up steps (outside any "step" range, inside one "warmup" range), then S steps
 * in "step" ranges; per step K launches of fma_loop over E floats (grid ceil(E/256), block 256), one
 * DtoD copy of E*4 bytes and one saxpy(1, scratch, y) (same grid); bad: one cudaMalloc and one
 * cudaFree of E*4 bytes per step, fixed: one of each in all. One cudaDeviceSynchronize after the
 * warm-up and one after the loop. y then holds the sum of x after every step, x and y equal the same
 * float steps done on the host. One HtoD copy from pinned memory and one memset before, two DtoH
 * copies into it after.
 *
 * median_step_us is the median of the host time of each step (with --fixed only its launches, until
 * the launch queue fills); mean_step_us is the whole loop, from before the first step to the end of
 * the synchronize after the last, over S: the honest one.
 */
#include <math.h>
#include <nvtx3/nvToolsExt.h>

#include "kernels/vector.cuh"
#include "samples/sample.h"

const char *sample_name = "steady_malloc";

static const unsigned int threads = 256;
static const float fma_a = 0.9999f, fma_b = 0.0001f;

struct loop {
	float *x, *y, *scratch;
	size_t n, bytes;
	long kernels, work, fixed;
	long mallocs, frees;
};

/* One step: (bad: malloc the scratch) the kernels, scratch = x, y += scratch, (bad: free it). */
static void step(struct loop *l)
{
	unsigned int blocks = sample_blocks(l->n, threads);

	if (!l->fixed) {
		CHECK(cudaMalloc(&l->scratch, l->bytes));
		l->mallocs++;
	}
	for (long k = 0; k < l->kernels; k++)
		fma_loop<<<blocks, threads>>>(l->x, fma_a, fma_b, (int)l->work, l->n);
	CHECK_LAUNCHES();
	CHECK(cudaMemcpyAsync(l->scratch, l->x, l->bytes, cudaMemcpyDeviceToDevice, 0));
	saxpy<<<blocks, threads>>>(1.0f, l->scratch, l->y, l->n);
	CHECK_LAUNCHES();
	if (!l->fixed) {
		CHECK(cudaFree(l->scratch));
		l->scratch = NULL;
		l->frees++;
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
	long steps = 200, warmup = 5, kernels = 6, work = 175, elements = 1 << 24, fixed = 0;
	const struct sample_option opts[] = {
		{ "steps", OPT_LONG, &steps, "timed steps, each an NVTX range 'step'" },
		{ "warmup", OPT_LONG, &warmup, "untimed steps before them" },
		{ "kernels", OPT_LONG, &kernels, "fma_loop launches per step" },
		{ "work", OPT_LONG, &work, "multiply-adds per element and launch" },
		{ "elements", OPT_LONG, &elements, "floats in x, y and the scratch, one thread each" },
		{ "fixed", OPT_FLAG, &fixed, "allocate the scratch once, before the loop" },
	};
	struct loop l;
	long long *durations, t0, t1, s0;
	float *host_x, *host_y;
	unsigned int blocks;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "A step loop that mallocs and frees its scratch every step; --fixed allocates it once.");
	if (elements == 0)
		elements = 1;
	memset(&l, 0, sizeof(l));
	l.n = (size_t)elements;
	l.bytes = l.n * sizeof(float);
	l.kernels = kernels;
	l.work = work;
	l.fixed = fixed;
	blocks = sample_blocks(l.n, threads);
	durations = (long long *)calloc((size_t)steps + 1, sizeof(*durations));
	if (!durations)
		sample_fail("out of host memory");
	sample_init_device();

	CHECK(cudaMalloc(&l.x, l.bytes));
	CHECK(cudaMalloc(&l.y, l.bytes));
	CHECK(cudaMallocHost(&host_x, l.bytes));
	CHECK(cudaMallocHost(&host_y, l.bytes));
	for (size_t i = 0; i < l.n; i++)
		host_x[i] = (float)(i % 1000) / 1000.0f;
	CHECK(cudaMemcpy(l.x, host_x, l.bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(l.y, 0, l.bytes));
	if (fixed) {
		CHECK(cudaMalloc(&l.scratch, l.bytes));
		l.mallocs++;
	}

	nvtxRangePushA("warmup");
	for (long s = 0; s < warmup; s++)
		step(&l);
	CHECK(cudaDeviceSynchronize());
	nvtxRangePop();

	t0 = sample_now_ns();
	for (long s = 0; s < steps; s++) {
		s0 = sample_now_ns();
		nvtxRangePushA("step");
		step(&l);
		nvtxRangePop();
		durations[s] = sample_now_ns() - s0;
	}
	CHECK(cudaDeviceSynchronize());
	t1 = sample_now_ns();
	if (fixed) {
		CHECK(cudaFree(l.scratch));
		l.frees++;
	}
	CHECK(cudaMemcpy(host_x, l.x, l.bytes, cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(host_y, l.y, l.bytes, cudaMemcpyDeviceToHost));

	/* fma_loop uses fmaf as well, and saxpy with a = 1 adds exactly, so host and device agree. */
	for (size_t i = 0; i < l.n; i += l.n / 8 + 1) {
		float v = (float)(i % 1000) / 1000.0f, sum = 0.0f;

		for (long s = 0; s < warmup + steps; s++) {
			for (long k = 0; k < kernels * work; k++)
				v = fmaf(v, fma_a, fma_b);
			sum += v;
		}
		if (host_x[i] != v)
			sample_fail("x element %zu is %.9g, expected %.9g", i, host_x[i], v);
		if (host_y[i] != sum)
			sample_fail("y element %zu is %.9g, expected %.9g", i, host_y[i], sum);
	}

	sample_result_begin();
	sample_result_kernel("fma_loop", (warmup + steps) * kernels, dim3(blocks), dim3(threads));
	sample_result_kernel("saxpy", warmup + steps, dim3(blocks), dim3(threads));
	printf(" variant=%s steps=%ld warmup=%ld work=%ld mallocs=%ld frees=%ld scratch_bytes=%zu"
	       " dtod=%ld device_syncs=2 pinned_htod=1 pinned_dtoh=2 memsets=1 bytes=%zu"
	       " median_step_us=%.1f mean_step_us=%.1f",
	       fixed ? "fixed" : "bad", steps, warmup, work, l.mallocs, l.frees, l.bytes, warmup + steps,
	       l.bytes, median_us(durations, steps), steps ? (t1 - t0) / 1e3 / steps : 0.0);
	sample_result_end();

	free(durations);
	CHECK(cudaFree(l.x));
	CHECK(cudaFree(l.y));
	CHECK(cudaFreeHost(host_x));
	CHECK(cudaFreeHost(host_y));
	return 0;
}
