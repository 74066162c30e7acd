/*
 * steady_sync: a training-style loop that reads its loss back every step, the .item() bottleneck,
 * and its fix, for the steady-state report. Each step (an NVTX push/pop range "step") queues K
 * compute-bound kernels and a one-thread kernel that takes the step's "loss", then does H us of host
 * work (logging, bookkeeping). The bad variant copies the 4-byte loss to the host after the kernels
 * (a blocking cudaMemcpy into pageable memory) and only then does its host work with it, so every
 * step the GPU waits for the host work and the host waits for the GPU: a step takes about the GPU
 * time plus H plus a launch and a copy. With --fixed the loss is summed on the GPU and read back once
 * after the loop; the host work still happens each step, while the GPU runs, so a step takes about
 * the GPU time: the saving is about H (300 us by default) per step.
 *
 * Known answer: W warm-up steps (outside any "step" range, inside one "warmup" range), then S steps
 * in "step" ranges; per step K launches of fma_loop over E floats (grid ceil(E/256), block 256) and
 * one record_loss (grid 1, block 1), which sets loss = x[0] and adds x[0] to a device total. Bad: one
 * pageable DtoH copy of 4 bytes per step; both: one pageable DtoH copy of the total after the loop.
 * The total, the host's sum of the losses (bad) and sampled elements equal the same float steps done
 * on the host. One HtoD copy from pinned memory before, one DtoH copy into it after.
 *
 * median_step_us is the median of the host time of each step (what the step itself waits for: with
 * --fixed only its launches and host work, until the launch queue fills); mean_step_us is the whole
 * loop, from before the first step to the total's readback after the last, over S: the honest one.
 */
#include <math.h>
#include <nvtx3/nvToolsExt.h>

#include "kernels/vector.cuh"
#include "samples/sample.h"

const char *sample_name = "steady_sync";

static const unsigned int threads = 256;
static const float fma_a = 0.9999f, fma_b = 0.0001f;

/* The step's loss: *loss = x[0], and *total += x[0]. One thread: the shape of a reduction's tail. */
__global__ void record_loss(const float *x, float *loss, float *total)
{
	float v = x[0];

	*loss = v;
	*total += v;
}

struct loop {
	float *x, *loss, *total;
	size_t n;
	long kernels, work, host_us, fixed;
	float host_sum;		/* bad: the losses read back, summed on the host */
	long readbacks;		/* bad: per-step loss copies */
};

/* One step: the kernels, the loss, then the host work (after waiting for the loss when bad). */
static void step(struct loop *l)
{
	for (long k = 0; k < l->kernels; k++)
		fma_loop<<<sample_blocks(l->n, threads), threads>>>(l->x, fma_a, fma_b, (int)l->work, l->n);
	record_loss<<<1, 1>>>(l->x, l->loss, l->total);
	CHECK_LAUNCHES();
	if (!l->fixed) {
		float loss;

		CHECK(cudaMemcpy(&loss, l->loss, sizeof(loss), cudaMemcpyDeviceToHost));
		l->host_sum += loss;
		l->readbacks++;
	}
	sample_spin_us(l->host_us);
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
	long steps = 200, warmup = 5, kernels = 6, work = 700, host_us = 300, elements = 1 << 22;
	long fixed = 0;
	const struct sample_option opts[] = {
		{ "steps", OPT_LONG, &steps, "timed steps, each an NVTX range 'step'" },
		{ "warmup", OPT_LONG, &warmup, "untimed steps before them" },
		{ "kernels", OPT_LONG, &kernels, "fma_loop launches per step" },
		{ "work", OPT_LONG, &work, "multiply-adds per element and launch" },
		{ "host-us", OPT_LONG, &host_us, "host work per step, in microseconds" },
		{ "elements", OPT_LONG, &elements, "floats, one thread each" },
		{ "fixed", OPT_FLAG, &fixed, "sum the loss on the GPU and read it back once" },
	};
	struct loop l;
	long long *durations, t0, t1, s0;
	float *host, total, want_total = 0.0f;
	unsigned int blocks;
	size_t bytes;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "A step loop that reads its loss back every step; --fixed sums it on the GPU.");
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

	CHECK(cudaMalloc(&l.x, bytes));
	CHECK(cudaMalloc(&l.loss, sizeof(float)));
	CHECK(cudaMalloc(&l.total, sizeof(float)));
	CHECK(cudaMallocHost(&host, bytes));
	for (size_t i = 0; i < l.n; i++)
		host[i] = (float)(i % 1000) / 1000.0f;
	CHECK(cudaMemcpy(l.x, host, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(l.total, 0, sizeof(float)));

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
	CHECK(cudaMemcpy(&total, l.total, sizeof(total), cudaMemcpyDeviceToHost));
	t1 = sample_now_ns();
	CHECK(cudaMemcpy(host, l.x, bytes, cudaMemcpyDeviceToHost));

	/* fma_loop uses fmaf as well (one rounding per step), so host and device agree bit for bit. */
	for (size_t i = 0; i < l.n; i += l.n / 8 + 1) {
		float v = (float)(i % 1000) / 1000.0f;

		for (long s = 0; s < warmup + steps; s++) {
			for (long k = 0; k < kernels * work; k++)
				v = fmaf(v, fma_a, fma_b);
			if (i == 0)
				want_total += v;
		}
		if (host[i] != v)
			sample_fail("element %zu is %.9g, expected %.9g", i, host[i], v);
	}
	if (total != want_total)
		sample_fail("the loss total is %.9g, expected %.9g", total, want_total);
	if (!fixed && l.host_sum != want_total)
		sample_fail("the host's sum of the losses is %.9g, expected %.9g", l.host_sum, want_total);

	sample_result_begin();
	sample_result_kernel("fma_loop", (warmup + steps) * kernels, dim3(blocks), dim3(threads));
	sample_result_kernel("record_loss", warmup + steps, dim3(1), dim3(1));
	printf(" variant=%s steps=%ld warmup=%ld work=%ld host_us=%ld loss_readbacks=%ld"
	       " pageable_dtoh=%ld pinned_htod=1 pinned_dtoh=1 memsets=1 bytes=%zu total=%.6f"
	       " median_step_us=%.1f mean_step_us=%.1f",
	       fixed ? "fixed" : "bad", steps, warmup, work, host_us, l.readbacks, l.readbacks + 1,
	       bytes, total, median_us(durations, steps), steps ? (t1 - t0) / 1e3 / steps : 0.0);
	sample_result_end();

	free(durations);
	CHECK(cudaFree(l.x));
	CHECK(cudaFree(l.loss));
	CHECK(cudaFree(l.total));
	CHECK(cudaFreeHost(host));
	return 0;
}
