/*
 * Drives libgpt_inject.so over the stand-in CUPTI (fake_cupti.c, named by GPT_TRACE_CUPTI_LIB) as a
 * CUDA program would: the driver's InitializeInjection, then kernel launches played through the
 * stand-in, then exit, where the library writes the trace. Prints how many API callbacks the
 * library enabled and whether it asked for module loads, so the test sees that metrics cost no
 * callback when they are off.
 *
 * With a MODE, it launches N kernels (default 20), prints "launched N" and then dies or exits the
 * way MODE says (the deaths of tests/inject/cpu-tests.sh and tests/cli/run.sh):
 *   exit, segv, abort, fpe, _exit, quick_exit, kill (SIGKILL once the file FAKE_KILL_AFTER names
 *   exists, at most 60 s: the test creates it when the trace shows the state it kills in), stack (a stack overflow), handler (installs a SIGSEGV handler
 *   after CUDA started that prints "handler ran", restores the previous action and re-raises, as
 *   Python's faulthandler does), handler_exit (a SIGSEGV handler that calls _exit(7)), subscribe
 *   (calls cuptiSubscribe as the program's own profiler would, then launches N more: those must
 *   not reach the trace), sleep (sleeps until killed). FAKE_BATCH_MS=T pauses T ms after every
 *   1000 launches (so that the library commits between them). FAKE_PROFILER=A-B[,C-D...] calls
 *   cudaProfilerStart before launch A (counted from 1) and cudaProfilerStop after launch B.
 *   FAKE_INIT_AFTER=PATH holds CUDA's start (InitializeInjection) until PATH exists.
 *   FAKE_NVTX=A-B[,...] pushes the NVTX range "capture" before launch A and pops it after launch
 *   B, and every launch is inside a range "iter" of its own (nested, so that the pop that ends
 *   "capture" is told from the pops of "iter"). FAKE_STEPS=K puts each K launches in an NVTX
 *   range "ProfilerStep#n" (n from 0), as PyTorch's profiler names its steps.
 *
 * It also exports the two driver calls the library asks whether a GPU has NVLink with
 * (inject/gpu-metrics-chip.c): with FAKE_NVLINK=1 there are two devices with native atomics
 * between them; without, no device.
 *
 * Usage: fake_launch LIBRARY FAKE_CUPTI [MODE [N]]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

typedef int (*subscribe_fn)(void **, void *, void *);

static struct sigaction previous;

int cuDeviceGetCount(int *count);
int cuDeviceGetP2PAttribute(int *value, int attribute, int device, int peer);

int cuDeviceGetCount(int *count)
{
	*count = getenv("FAKE_NVLINK") ? 2 : 0;
	return *count ? 0 : 100;	/* CUDA_ERROR_NO_DEVICE */
}

int cuDeviceGetP2PAttribute(int *value, int attribute, int device, int peer)
{
	(void)attribute;
	*value = getenv("FAKE_NVLINK") && device != peer;
	return 0;
}

static void handler_reraise(int sig)
{
	static const char msg[] = "handler ran\n";

	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(99);
	sigaction(sig, &previous, NULL);
	raise(sig);
}

static void handler_exit(int sig)
{
	(void)sig;
	_exit(7);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0)
		;
}

/* FAKE_PROFILER (or FAKE_NVTX): 1 start before launch i, 2 stop after it, 3 both, 0 neither. */
static int profiler_at(const char *var, int i)
{
	const char *p = getenv(var);
	int what = 0;

	while (p && *p) {
		char *end;
		long a = strtol(p, &end, 10), b = *end == '-' ? strtol(end + 1, &end, 10) : a;

		what |= (a == i ? 1 : 0) | (b == i ? 2 : 0);
		p = *end == ',' ? end + 1 : NULL;
	}
	return what;
}

static volatile int depth_sink;
static int (*volatile recurse_next)(int);

/* Through a volatile pointer: the compiler can neither see nor remove the recursion. */
static int recurse(int depth)
{
	volatile char pad[4096];

	pad[0] = (char)depth;
	depth_sink = pad[0];
	return recurse_next(depth + 1) + pad[0];
}

static int fault(void)
{
	volatile int *volatile bad = NULL;

	return *bad;
}

/* Returns once PATH exists (at most 60 s): FAKE_INIT_AFTER holds CUDA's start until then, as a
 * Python program's imports do; FAKE_KILL_AFTER holds the kill. */
static void wait_for_file(const char *path)
{
	for (int i = 0; path && i < 6000 && access(path, F_OK) < 0; i++)
		sleep_ms(10);
}

static int die(const char *mode)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (!strcmp(mode, "exit"))
		return 0;
	if (!strcmp(mode, "segv"))
		return fault();
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "fpe"))
		raise(SIGFPE);
	if (!strcmp(mode, "_exit"))
		_exit(3);
	if (!strcmp(mode, "quick_exit"))
		quick_exit(4);
	if (!strcmp(mode, "stack")) {
		recurse_next = recurse;
		return recurse(0);
	}
	if (!strcmp(mode, "kill")) {
		wait_for_file(getenv("FAKE_KILL_AFTER"));
		raise(SIGKILL);
	}
	if (!strcmp(mode, "sleep"))
		for (;;)
			sleep_ms(1000);
	if (!strcmp(mode, "handler") || !strcmp(mode, "handler_exit")) {
		sa.sa_handler = !strcmp(mode, "handler") ? handler_reraise : handler_exit;
		sa.sa_flags = SA_NODEFER;
		sigaction(SIGSEGV, &sa, &previous);
		/* What the program set is what it reads back, not the library's handler. */
		if (sigaction(SIGSEGV, NULL, &sa) < 0 || sa.sa_handler != (!strcmp(mode, "handler")
							       ? handler_reraise : handler_exit))
			return 98;
		return fault();
	}
	fprintf(stderr, "fake_launch: unknown mode '%s'\n", mode);
	return 2;
}

int main(int argc, char **argv)
{
	void (*launch)(uint32_t, const char *, int);
	void (*profiler)(int);
	unsigned (*api_callbacks)(void);
	void (*exiting)(void);
	int (*module_callback)(void);
	int (*init)(void);
	void *lib, *cupti;
	int n = argc > 4 ? atoi(argv[4]) : 20;

	if (argc < 3)
		return 2;
	wait_for_file(getenv("FAKE_INIT_AFTER"));
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	init = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
	if (!init) {
		fprintf(stderr, "fake_launch: cannot load '%s'\n", argv[1]);
		return 2;
	}
	init();
	cupti = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	if (!cupti) {
		fprintf(stderr, "fake_launch: the library did not load '%s'\n", argv[2]);
		return 3;
	}
	*(void **)&launch = dlsym(cupti, "fake_cupti_launch");
	*(void **)&api_callbacks = dlsym(cupti, "fake_cupti_api_callbacks");
	*(void **)&module_callback = dlsym(cupti, "fake_cupti_module_callback");
	*(void **)&profiler = dlsym(cupti, "fake_cupti_profiler");
	if (!launch || !api_callbacks || !module_callback)
		return 4;
	if (argc < 4) {
		launch(11, "_Z14strided_gatherPKfPfm", 1);
		launch(12, "_Z14strided_gatherPKfPfm", 1);
		printf("api callbacks %u\nmodule callback %d\n", api_callbacks(), module_callback());
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int at = profiler ? profiler_at("FAKE_PROFILER", i + 1) : 0;
		int nvtx = getenv("FAKE_NVTX") ? profiler_at("FAKE_NVTX", i + 1) | 4 : 0;

		long steps = getenv("FAKE_STEPS") ? atol(getenv("FAKE_STEPS")) : 0;
		char step[32];

		if (steps > 0 && i % steps == 0) {
			snprintf(step, sizeof(step), "ProfilerStep#%ld", i / steps);
			nvtxRangePushA(step);
		}
		if (at & 1)
			profiler(1);
		if (nvtx & 1)
			nvtxRangePushA("capture");
		if (nvtx)
			nvtxRangePushA("iter");
		launch((uint32_t)i + 1, "_Z6kernelv", 1);
		if (nvtx)
			nvtxRangePop();
		if (nvtx & 2)
			nvtxRangePop();
		if (at & 2)
			profiler(0);
		if (steps > 0 && (i % steps == steps - 1 || i == n - 1))
			nvtxRangePop();
		/* FAKE_BATCH_MS: a pause after every 1000 launches, so that commits come between. */
		if (getenv("FAKE_BATCH_MS") && i % 1000 == 999)
			sleep_ms(atol(getenv("FAKE_BATCH_MS")));
	}
	printf("launched %d\n", n);
	if (!strcmp(argv[3], "subscribe")) {
		/* As Kineto does: through the process's symbol table, where a preloaded tool comes first. */
		subscribe_fn subscribe = (subscribe_fn)dlsym(RTLD_DEFAULT, "cuptiSubscribe");
		void *handle = NULL;
		int rc = subscribe ? subscribe(&handle, NULL, NULL) : -1;

		printf("program subscribe %d\n", rc);
		for (int i = 0; i < n; i++)
			launch((uint32_t)(n + i + 1), "_Z6kernelv", 1);
		fflush(stdout);
		return rc;
	}
	fflush(stdout);
	if ((exiting = (void (*)(void))dlsym(cupti, "fake_cupti_exiting")))
		exiting();
	return die(argv[3]);
}
