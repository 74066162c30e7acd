/*
 * profiler_range: a loop that brackets some of its iterations with cudaProfilerStart and
 * cudaProfilerStop, as a program does to tell a profiler what to record (Nsight Systems
 * --capture-range=cudaProfilerApi, gpt-trace run -c cudaProfilerApi; PyTorch's
 * torch.cuda.profiler.start()/stop() make the same calls).
 *
 * Known answer: iterations 1..N; iteration i launches add_one P times with grid i (block 256, over
 * i * 256 floats), synchronizes the device, then spins S us on the host. cudaProfilerStart is called
 * before the first iteration of each range A-B, cudaProfilerStop after its last one (after the
 * synchronization: every kernel of the range has started, and ended, before the stop). So a trace
 * recorded between the calls holds exactly the kernels whose grid is in a range, P of each. With
 * --times FILE, each iteration's start on CLOCK_MONOTONIC (ns) goes to FILE, one "i ns" line each,
 * for tests that check a time window (tests/gpu/capture.sh). Every element ends at the number of
 * iterations that touched it.
 */
#include "kernels/tiny.cuh"
#include "samples/sample.h"

#include <cuda_profiler_api.h>

const char *sample_name = "profiler_range";

#define MAX_RANGES 16

struct range {
	long first, last;
};

/* "10-20,30-35" into ranges; "none": no range. Returns the count, or -1 when malformed. */
static int parse_ranges(const char *text, struct range *r)
{
	int n = 0;

	if (!strcmp(text, "none"))
		return 0;
	while (*text && n < MAX_RANGES) {
		char *end;

		r[n].first = strtol(text, &end, 10);
		if (*end != '-')
			return -1;
		r[n].last = strtol(end + 1, &end, 10);
		if (r[n].first < 1 || r[n].last < r[n].first || (*end && *end != ','))
			return -1;
		n++;
		text = *end ? end + 1 : end;
	}
	return *text ? -1 : n;
}

int main(int argc, char **argv)
{
	long iterations = 50, per_iteration = 3, spin_us = 1000;
	const char *ranges_text = "10-20", *times_path = "";
	const struct sample_option opts[] = {
		{ "iterations", OPT_LONG, &iterations, "loop iterations" },
		{ "per-iteration", OPT_LONG, &per_iteration, "kernel launches per iteration" },
		{ "spin-us", OPT_LONG, &spin_us, "host work after each iteration, in microseconds" },
		{ "ranges", OPT_STRING, &ranges_text, "profiler ranges A-B[,C-D...] of iterations, or none" },
		{ "times", OPT_STRING, &times_path, "write each iteration's CLOCK_MONOTONIC start here" },
	};
	const unsigned int threads = 256;
	struct range ranges[MAX_RANGES];
	long starts = 0, stops = 0, launches = 0;
	size_t n, bytes;
	float *dev, *host;
	FILE *times = NULL;
	long long t0, t1;
	int nranges;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "A loop of N iterations; cudaProfilerStart/Stop around the iterations of each range.");
	nranges = parse_ranges(ranges_text, ranges);
	if (nranges < 0 || iterations < 1) {
		fprintf(stderr, "%s: bad --ranges '%s' or --iterations\n", sample_name, ranges_text);
		return 2;
	}
	if (*times_path && !(times = fopen(times_path, "w"))) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", sample_name, times_path, strerror(errno));
		return 1;
	}
	n = (size_t)iterations * threads;
	bytes = n * sizeof(float);
	sample_init_device();
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMallocHost(&host, bytes));
	CHECK(cudaMemset(dev, 0, bytes));

	t0 = sample_now_ns();
	for (long i = 1; i <= iterations; i++) {
		for (int r = 0; r < nranges; r++)
			if (ranges[r].first == i) {
				CHECK(cudaProfilerStart());
				starts++;
			}
		if (times)
			fprintf(times, "%ld %lld\n", i, sample_now_ns());
		for (long k = 0; k < per_iteration; k++)
			add_one<<<(unsigned int)i, threads>>>(dev, (size_t)i * threads);
		launches += per_iteration;
		CHECK_LAUNCHES();
		CHECK(cudaDeviceSynchronize());
		for (int r = 0; r < nranges; r++)
			if (ranges[r].last == i) {
				CHECK(cudaProfilerStop());
				stops++;
			}
		sample_spin_us(spin_us);
	}
	CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
	t1 = sample_now_ns();
	if (times)
		fclose(times);

	/* Element e is touched by every iteration i with i * 256 > e: iterations - e / 256 of them. */
	for (size_t e = 0; e < n; e++) {
		float want = (float)((iterations - (long)(e / threads)) * per_iteration);

		if (host[e] != want)
			sample_fail("element %zu is %g, expected %g", e, host[e], want);
	}

	sample_result_begin();
	printf(" kernel=add_one:%ld:1..%ldx1x1:%ux1x1", launches, iterations, threads);
	printf(" iterations=%ld per_iteration=%ld ranges=%s profiler_starts=%ld profiler_stops=%ld"
	       " elapsed_ms=%.3f", iterations, per_iteration, ranges_text, starts, stops,
	       (t1 - t0) / 1e6);
	sample_result_end();

	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
	return 0;
}
