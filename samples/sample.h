/*
 * What every sample shares: checking each CUDA call, a small option parser, the clock, and the one
 * result line.
 *
 * A sample does one thing with a known answer. On success it prints exactly one line to stdout,
 *   <sample>: ok pid=<pid> kernel=<name>:<launches>:<gx>x<gy>x<gz>:<bx>x<by>x<bz> ... key=value ...
 * naming every kernel it launched (count and launch configuration) and the other facts it knows
 * (copies, syncs, streams...), so that tests/gpu/check_traces.py can hold the trace against what the
 * program says it did. It exits 0. A failed CUDA call prints one line to stderr naming the call, the
 * source line and CUDA's reason, and exits 1; a wrong answer says what was wrong and exits 1; a bad
 * option prints the usage and exits 2.
 */
#ifndef GPT_SAMPLES_SAMPLE_H
#define GPT_SAMPLES_SAMPLE_H

#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Each sample defines this once: its name, the prefix of everything it prints. */
extern const char *sample_name;

static inline void sample_check(cudaError_t err, const char *call, const char *file, int line)
{
	const char *base = strrchr(file, '/');

	if (err == cudaSuccess)
		return;
	fprintf(stderr, "%s: %s failed at %s:%d: %s (%s)\n", sample_name, call, base ? base + 1 : file,
		line, cudaGetErrorString(err), cudaGetErrorName(err));
	exit(1);
}

/* CHECK(cudaMalloc(&p, n)) exits with a clear message when the call fails. */
#define CHECK(call) sample_check((call), #call, __FILE__, __LINE__)

/*
 * Launches report their configuration errors to the next cudaGetLastError(), and an error stays
 * there until read, so one check after a loop of launches catches a failure in any of them without
 * adding a runtime call per launch.
 */
#define CHECK_LAUNCHES() sample_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

/* A wrong answer: say what was wrong and exit 1. */
#define sample_fail(...)                                           \
	do {                                                       \
		fprintf(stderr, "%s: wrong result: ", sample_name); \
		fprintf(stderr, __VA_ARGS__);                      \
		fputc('\n', stderr);                               \
		exit(1);                                           \
	} while (0)

enum sample_option_type {
	OPT_LONG,	/* --name N: a non-negative integer */
	OPT_FLAG,	/* --name: sets the value to 1 */
	OPT_STRING,	/* --name TEXT */
};

struct sample_option {
	const char *name;	/* without the leading "--" */
	enum sample_option_type type;
	void *value;		/* long * for OPT_LONG and OPT_FLAG, const char ** for OPT_STRING */
	const char *help;
};

static inline void sample_usage(FILE *out, const struct sample_option *opts, size_t nopts,
				const char *what)
{
	fprintf(out, "usage: %s [options]\n%s\n\noptions:\n", sample_name, what);
	for (size_t i = 0; i < nopts; i++) {
		const struct sample_option *o = &opts[i];

		if (o->type == OPT_LONG)
			fprintf(out, "  --%-16s %s (default %ld)\n", o->name, o->help, *(long *)o->value);
		else if (o->type == OPT_STRING)
			fprintf(out, "  --%-16s %s (default %s)\n", o->name, o->help,
				*(const char **)o->value);
		else
			fprintf(out, "  --%-16s %s\n", o->name, o->help);
	}
}

/* Parse --name VALUE / --name=VALUE / --flag; --help prints the usage and exits 0, a bad option exits 2. */
static inline void sample_parse(int argc, char **argv, const struct sample_option *opts, size_t nopts,
				const char *what)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const struct sample_option *o = NULL;
		const char *val = NULL;
		size_t len;

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			sample_usage(stdout, opts, nopts, what);
			exit(0);
		}
		if (strncmp(arg, "--", 2) != 0)
			goto bad;
		arg += 2;
		len = strcspn(arg, "=");
		for (size_t k = 0; k < nopts; k++) {
			if (strlen(opts[k].name) == len && !strncmp(opts[k].name, arg, len))
				o = &opts[k];
		}
		if (!o)
			goto bad;
		if (o->type == OPT_FLAG) {
			if (arg[len] == '=')
				goto bad;
			*(long *)o->value = 1;
			continue;
		}
		if (arg[len] == '=')
			val = arg + len + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			goto bad;
		if (o->type == OPT_STRING) {
			*(const char **)o->value = val;
		} else {
			char *end;
			long n;

			errno = 0;
			n = strtol(val, &end, 0);
			if (errno || end == val || *end || n < 0)
				goto bad;
			*(long *)o->value = n;
		}
		continue;
bad:
		fprintf(stderr, "%s: bad option '%s'\n", sample_name, argv[i]);
		sample_usage(stderr, opts, nopts, what);
		exit(2);
	}
}

static inline long long sample_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Keep the CPU busy (not asleep) for us microseconds: host work the GPU has to wait for. */
static inline void sample_spin_us(long us)
{
	long long until = sample_now_ns() + us * 1000LL;

	while (sample_now_ns() < until)
		;
}

/*
 * Create the CUDA context up front, so that a machine without a GPU or driver fails here with
 * CUDA's own reason rather than at the first kernel.
 */
static inline void sample_init_device(void)
{
	int count = 0;
	cudaError_t err = cudaGetDeviceCount(&count);

	if (err != cudaSuccess || count == 0) {
		fprintf(stderr, "%s: no usable CUDA device: %s (%s)\n", sample_name,
			err != cudaSuccess ? cudaGetErrorString(err) : "no device found",
			cudaGetErrorName(err != cudaSuccess ? err : cudaErrorNoDevice));
		exit(1);
	}
	CHECK(cudaSetDevice(0));
	CHECK(cudaFree(0));
}

/* Blocks needed to give each of n elements its own thread. */
static inline unsigned int sample_blocks(size_t n, unsigned int threads)
{
	return (unsigned int)((n + threads - 1) / threads);
}

/* The result line: sample_result_begin(), then kernel and key=value fields, then sample_result_end(). */
static inline void sample_result_begin(void)
{
	printf("%s: ok pid=%d", sample_name, (int)getpid());
}

static inline void sample_result_kernel(const char *name, long launches, dim3 grid, dim3 block)
{
	printf(" kernel=%s:%ld:%ux%ux%u:%ux%ux%u", name, launches, grid.x, grid.y, grid.z, block.x,
	       block.y, block.z);
}

static inline void sample_result_end(void)
{
	putchar('\n');
	fflush(stdout);
}

#endif
