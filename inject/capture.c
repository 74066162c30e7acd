/*
 * Capture windows inside the traced process: what `gpt-trace run --delay, --duration,
 * --capture-range, --capture-range-end and --max-size` ask for (docs/run.md), turned into window
 * opens and closes queued to the collector, whose writer keeps only the rows that start inside a
 * window (collector/windows.h says why the gate is there and not on CUPTI's activity kinds).
 *
 * The options keep Nsight Systems' meanings, with one difference: nsys ends the program when a
 * --duration or a stop-shutdown range ends; we never end the program, its run is left as it is.
 *   --delay D       nothing is recorded before D seconds after the launch (gpt-trace run's start,
 *                   GPT_TRACE_LAUNCH_NS, so all processes of a job share the reference);
 *   --duration T    a window lasts at most T seconds (from the delay, or from each range start);
 *   cudaProfilerApi windows open at cudaProfilerStart (cuProfilerStart) and close at
 *                   cudaProfilerStop, which PyTorch's torch.cuda.profiler.start()/stop() call;
 *   range end       stop: only the first range; repeat[:N]: every range (the first N); none: the
 *                   first start opens a window that only the end of the run closes.
 * A range start before the delay has passed is ignored.
 */
#define _GNU_SOURCE
#include "inject/inject.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inject/clock.h"

enum capture_range {
	RANGE_NONE,
	RANGE_CUDA_PROFILER_API,
};

enum range_end {
	END_STOP,
	END_REPEAT,
	END_NONE,
};

static struct {
	int on;				/* any capture option given */
	enum capture_range range;
	enum range_end end;
	unsigned repeat_max;		/* END_REPEAT: 0 unlimited */
	uint64_t delay, duration;	/* ns; duration 0: no limit */
	uint64_t max_size;		/* bytes, 0: none */
	uint64_t age;			/* ns from the launch to this process's configuration */
	int quiet;
} config;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct collector *sink;
static uint64_t not_before;		/* absolute: launch + delay */
static int window_open;			/* a range window, until its stop or deadline */
static uint64_t deadline;		/* its --duration end, 0: none */
static unsigned windows_opened;
static int finished;			/* no more windows: stop mode done, repeat:N done, max-size */

static uint64_t env_u64(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 10) : 0;
}

static uint64_t monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void capture_read_config(int quiet)
{
	const char *range = getenv("GPT_TRACE_CAPTURE_RANGE");
	const char *end = getenv("GPT_TRACE_CAPTURE_RANGE_END");
	uint64_t launch = env_u64("GPT_TRACE_LAUNCH_NS"), now = monotonic_now();

	config.quiet = quiet;
	config.delay = env_u64("GPT_TRACE_DELAY_NS");
	config.duration = env_u64("GPT_TRACE_DURATION_NS");
	config.max_size = env_u64("GPT_TRACE_MAX_SIZE");
	config.age = launch && launch <= now ? now - launch : 0;
	config.range = range && !strcmp(range, "cudaProfilerApi") ? RANGE_CUDA_PROFILER_API
								  : RANGE_NONE;
	config.end = END_STOP;
	if (end && !strncmp(end, "repeat", 6)) {
		config.end = END_REPEAT;
		if (end[6] == ':')
			config.repeat_max = (unsigned)strtoul(end + 7, NULL, 10);
	} else if (end && !strcmp(end, "none")) {
		config.end = END_NONE;
	}
	config.on = config.delay || config.duration || config.max_size ||
		    config.range != RANGE_NONE;
}

uint64_t capture_max_size(void)
{
	return config.max_size;
}

int capture_profiler_api(void)
{
	return config.range == RANGE_CUDA_PROFILER_API;
}

static void describe(struct collector *collector)
{
	char value[64];

	collector_set_meta(collector, "capture_range",
			   config.range == RANGE_CUDA_PROFILER_API ? "cudaProfilerApi" : "none");
	if (config.range != RANGE_NONE) {
		if (config.end == END_REPEAT && config.repeat_max)
			snprintf(value, sizeof(value), "repeat:%u", config.repeat_max);
		else
			snprintf(value, sizeof(value), "%s", config.end == END_REPEAT ? "repeat"
							     : config.end == END_NONE ? "none" : "stop");
		collector_set_meta(collector, "capture_range_end", value);
	}
	snprintf(value, sizeof(value), "%llu", (unsigned long long)config.delay);
	collector_set_meta(collector, "capture_delay_ns", value);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)config.duration);
	collector_set_meta(collector, "capture_duration_ns", value);
	if (config.max_size) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)config.max_size);
		collector_set_meta(collector, "max_size_bytes", value);
	}
}

void capture_start(struct collector *collector, uint64_t origin)
{
	/* The launch on the trace's clock: this process was configured config.age after it. */
	uint64_t launch = origin > config.age ? origin - config.age : 0;

	if (!config.on)
		return;
	pthread_mutex_lock(&lock);
	sink = collector;
	/* A window opened before this process began starts with its trace (no negative times). */
	not_before = launch + config.delay > origin ? launch + config.delay : origin;
	describe(collector);
	collector_capture_gate(collector);
	if (config.range == RANGE_NONE) {
		collector_window_open(collector, not_before, config.delay ? "delay" : "start");
		if (config.duration)
			collector_window_close(collector, not_before + config.duration, "duration");
		windows_opened = 1;
	}
	pthread_mutex_unlock(&lock);
}

/* Whether the range window is still open at now (its --duration may have ended it). */
static int range_open(uint64_t now)
{
	if (window_open && deadline && now >= deadline) {
		window_open = 0;
		if (config.end == END_STOP)
			finished = 1;
	}
	return window_open;
}

static int may_open(void)
{
	if (finished)
		return 0;
	if (config.end == END_REPEAT && config.repeat_max && windows_opened >= config.repeat_max)
		return 0;
	return !(config.end != END_REPEAT && windows_opened);
}

void capture_range_call(int start, const char *name)
{
	uint64_t now = gpt_clock_now();

	pthread_mutex_lock(&lock);
	if (!sink || config.range != RANGE_CUDA_PROFILER_API)
		goto out;
	if (range_open(now)) {
		if (!start && config.end != END_NONE) {
			collector_window_close(sink, now, name);
			window_open = 0;
			if (config.end == END_STOP)
				finished = 1;
		}
		goto out;
	}
	if (!start || now < not_before || !may_open())
		goto out;
	collector_window_open(sink, now, name);
	window_open = 1;
	windows_opened++;
	deadline = config.duration ? now + config.duration : 0;
	if (deadline)
		collector_window_close(sink, deadline, "duration");
out:
	pthread_mutex_unlock(&lock);
}

void capture_finish(uint64_t now)
{
	pthread_mutex_lock(&lock);
	if (sink)
		collector_window_end(sink, now, "exit");
	finished = 1;
	pthread_mutex_unlock(&lock);
}

/* The writer's --max-size callback (writer thread): one line, whatever -q says. */
void capture_full(const char *path, uint64_t bytes, int64_t at)
{
	pthread_mutex_lock(&lock);
	finished = 1;
	pthread_mutex_unlock(&lock);
	inject_say("trace '%s' reached --max-size %.1f MiB (%llu bytes) at %.3f s: recording "
		   "stopped, the trace is kept up to there, the program goes on", path,
		   (double)config.max_size / (1 << 20), (unsigned long long)bytes, (double)at / 1e9);
}
