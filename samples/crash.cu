/*
 * crash: launches empty kernels in batches of 1000 (a stream synchronize after each, so that what
 * was launched has run) and dies the way --mode says, for tests/gpu/crash.sh. After every batch it
 * prints `launched N t_ms=T` (flushed), so that whoever kills it knows how many kernels ran by when.
 *
 * Modes: run (--seconds of batches, then exit 0), segv-early (a segmentation fault 0.5 s after the
 * first kernel), segv-late (after --seconds), abort, _exit (_exit(3)), exception (an uncaught C++
 * exception: std::terminate, SIGABRT), sigkill (runs until killed from outside; --seconds is then
 * the longest it runs).
 *
 * Known answer: exactly N kernels named empty_kernel, N from the last `launched` line, for every
 * mode but sigkill (where at most a commit interval of them may be lost).
 */
#include <signal.h>
#include <stdexcept>

#include "kernels/tiny.cuh"
#include "samples/sample.h"

const char *sample_name = "crash";

static volatile int *volatile null_pointer;

int main(int argc, char **argv)
{
	const char *mode = "run";
	long seconds = 3, batch = 1000, pause_ms = 0;
	const struct sample_option opts[] = {
		{ "mode", OPT_STRING, &mode,
		  "run, segv-early, segv-late, abort, _exit, exception or sigkill" },
		{ "seconds", OPT_LONG, &seconds, "how long to launch before dying" },
		{ "batch", OPT_LONG, &batch, "kernels per batch" },
		{ "pause-ms", OPT_LONG, &pause_ms, "host sleep after each batch, in milliseconds (small traces)" },
	};
	long long t0, until;
	long launched = 0;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Launch empty kernels in batches, print the count after each, then die as told.");
	sample_init_device();
	if (strcmp(mode, "run") && strcmp(mode, "segv-early") && strcmp(mode, "segv-late") &&
	    strcmp(mode, "abort") && strcmp(mode, "_exit") && strcmp(mode, "exception") &&
	    strcmp(mode, "sigkill")) {
		fprintf(stderr, "crash: unknown mode '%s'\n", mode);
		return 2;
	}
	t0 = sample_now_ns();
	until = t0 + (strcmp(mode, "segv-early") ? seconds * 1000000000LL : 500000000LL);
	while (sample_now_ns() < until) {
		for (long i = 0; i < batch; i++)
			empty_kernel<<<1, 1>>>();
		CHECK_LAUNCHES();
		CHECK(cudaStreamSynchronize(0));
		launched += batch;
		if (pause_ms > 0)
			usleep((useconds_t)(pause_ms * 1000));
		printf("launched %ld t_ms=%.1f\n", launched, (sample_now_ns() - t0) / 1e6);
		fflush(stdout);
	}
	if (!strcmp(mode, "segv-early") || !strcmp(mode, "segv-late"))
		return *null_pointer;
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "_exit"))
		_exit(3);
	if (!strcmp(mode, "exception"))
		throw std::runtime_error("crash: uncaught exception");
	if (!strcmp(mode, "sigkill")) {
		fprintf(stderr, "crash: --seconds passed and nobody killed me\n");
		return 1;
	}
	return 0;
}
