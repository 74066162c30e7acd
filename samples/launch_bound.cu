/*
 * launch_bound: N back-to-back launches of an empty kernel and one synchronize at the end. The GPU
 * finishes each kernel long before the host can issue the next, so the run measures launch cost
 * alone: what the small-kernels rule must flag, the 200,000-launch zero-drop test of the collector,
 * and the per-launch overhead of tracing (bare against traced).
 *
 * Known answer: exactly N kernels named empty_kernel, grid 1x1x1, block 1x1x1, on the default
 * stream; N cudaLaunchKernel calls; one context synchronize.
 */
#include "kernels/tiny.cuh"
#include "samples/sample.h"

const char *sample_name = "launch_bound";

int main(int argc, char **argv)
{
	long launches = 200000;
	const struct sample_option opts[] = {
		{ "launches", OPT_LONG, &launches, "number of empty kernel launches" },
	};
	long long t0, t1;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Launch an empty kernel N times back to back, then synchronize once.");
	sample_init_device();

	t0 = sample_now_ns();
	for (long i = 0; i < launches; i++)
		empty_kernel<<<1, 1>>>();
	CHECK_LAUNCHES();
	CHECK(cudaDeviceSynchronize());
	t1 = sample_now_ns();

	sample_result_begin();
	sample_result_kernel("empty_kernel", launches, dim3(1), dim3(1));
	printf(" device_syncs=1 elapsed_ms=%.3f us_per_launch=%.3f", (t1 - t0) / 1e6,
	       launches ? (t1 - t0) / 1e3 / launches : 0.0);
	sample_result_end();
	return 0;
}
