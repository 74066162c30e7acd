/*
 * chase: one block of one warp following a random cycle of pointers, each load waiting for the
 * last, the latency-bound half of the busy-time sample pair (issue 23). Under
 * `gpt-trace run --gpu-metrics` its kernel keeps one SM of many busy, with DRAM and the tensor
 * pipes nearly idle: classified latency/occupancy-bound.
 *
 * Known answer: N launches of pointer_chase (grid 1, block 32) of S steps over a single cycle of
 * E nodes (Sattolo's shuffle), which from node i ends S steps along the cycle, as the host computes.
 */
#include "samples/sample.h"

const char *sample_name = "chase";

__global__ void pointer_chase(const unsigned *__restrict__ next, unsigned *out, long steps)
{
	unsigned p = threadIdx.x;

	for (long i = 0; i < steps; i++)
		p = next[p];
	out[threadIdx.x] = p;
}

int main(int argc, char **argv)
{
	long launches = 20, steps = 100000, elements = 1 << 24;
	const struct sample_option opts[] = {
		{ "launches", OPT_LONG, &launches, "kernel launches" },
		{ "steps", OPT_LONG, &steps, "dependent loads per thread and launch" },
		{ "elements", OPT_LONG, &elements, "nodes of the cycle (64 MiB by default: past L2)" },
	};
	unsigned *host, *next, *out, result;
	long long t0, t1;
	size_t n;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Follow a random pointer cycle with one warp, N times.");
	n = (size_t)(elements < 64 ? 64 : elements);
	host = (unsigned *)malloc(n * sizeof(*host));
	if (!host)
		sample_fail("out of host memory");
	for (size_t i = 0; i < n; i++)
		host[i] = (unsigned)i;
	srand(1);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rand() % i;
		unsigned t = host[i];

		host[i] = host[j];
		host[j] = t;
	}
	sample_init_device();
	CHECK(cudaMalloc(&next, n * sizeof(*next)));
	CHECK(cudaMalloc(&out, 32 * sizeof(*out)));
	CHECK(cudaMemcpy(next, host, n * sizeof(*next), cudaMemcpyHostToDevice));

	t0 = sample_now_ns();
	for (long i = 0; i < launches; i++)
		pointer_chase<<<1, 32>>>(next, out, steps);
	CHECK_LAUNCHES();
	CHECK(cudaDeviceSynchronize());
	t1 = sample_now_ns();
	CHECK(cudaMemcpy(&result, out, sizeof(result), cudaMemcpyDeviceToHost));
	{
		unsigned p = 0;

		for (long i = 0; i < steps; i++)
			p = host[p];
		if (p != result)
			sample_fail("thread 0 ended at node %u, expected %u", result, p);
	}

	sample_result_begin();
	sample_result_kernel("pointer_chase", launches, dim3(1), dim3(32));
	printf(" steps=%ld elements=%zu elapsed_ms=%.3f ns_per_load=%.1f", steps, n, (t1 - t0) / 1e6,
	       (double)(t1 - t0) / (double)(steps * launches));
	sample_result_end();
	free(host);
	CHECK(cudaFree(next));
	CHECK(cudaFree(out));
	return 0;
}
