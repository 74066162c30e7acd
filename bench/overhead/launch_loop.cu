// Launch-bound loop for overhead measurement: N back-to-back empty kernel launches, timed on the host
// from the first launch to the end of the final synchronize. Prints ns per launch, and the wall-clock
// time at which main returns so that the time to a finished trace after exit can be measured.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

static long long now_ns(clockid_t clock)
{
	timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	if (cudaFree(0) != cudaSuccess) {
		fprintf(stderr, "launch_loop: no CUDA device\n");
		return 1;
	}
	for (int i = 0; i < 1000; i++) // warm-up, not timed
		empty_kernel<<<1, 32>>>();
	cudaDeviceSynchronize();
	long long t0 = now_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		empty_kernel<<<1, 32>>>();
	cudaError_t err = cudaDeviceSynchronize();
	long long t1 = now_ns(CLOCK_MONOTONIC);
	if (err != cudaSuccess) {
		fprintf(stderr, "launch_loop: %s\n", cudaGetErrorString(err));
		return 1;
	}
	printf("launches=%ld ns_per_launch=%.1f exit_realtime_ns=%lld\n", n, (double)(t1 - t0) / n,
	       now_ns(CLOCK_REALTIME));
	return 0;
}
