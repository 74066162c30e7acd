/*
 * GPU metrics through CUPTI's PM sampler (see gpu-metrics.h): the session opened, ended and summed
 * up. Its parts (gpu-metrics-private.h): CUPTI's functions and problem lines (gpu-metrics-load.c),
 * the chip's host object and config image (gpu-metrics-chip.c), each device's sampler and the
 * decoding thread (gpu-metrics-sampler.c).
 *
 * Sequence, as in NVIDIA's pm_sampling sample: cuptiProfilerInitialize; per chip a host object of
 * type PM_SAMPLING built from the first device's counter availability image, and a config image of
 * the wanted metrics (gpu-metrics-chip.c); per device, in CUPTI's context-creation callback,
 * cuptiPmSamplingEnable, SetConfig (GPU time interval trigger), a counter data image sized by
 * GetCounterDataSize, Start. Our thread then, every GPU_METRICS_DECODE_MS (gpu-metrics-sampler.c),
 * decodes the hardware buffer into the counter data image, reads each completed sample's interval
 * (GetSampleInfo) and values (cuptiProfilerHostEvaluateToGpuValues), hands them to the collector,
 * and initializes the image again before it fills.
 *
 * What CUPTI 13.0 does not survive (H200, driver 580, 2026-11-27; tests/gpu/busy/stop-modes.sh,
 * skip-steps.sh and batch4.sh kept the runs): a host object deinitialized while the process
 * samples, a refused configuration, cuptiPmSamplingStop at exit and cuptiPmSamplingDisable. Each
 * corrupted the heap or crashed inside libnvperf_host in some runs, so none of them happens by
 * default: the host objects live until the process ends, and at exit each sampler is decoded a
 * last time and left running. With that, 38 of 38 traced runs (CUDA samples, PyTorch,
 * torch.compile) exited cleanly; before, every one aborted.
 */
#define _GNU_SOURCE
#include "inject/gpu-metrics-private.h"
#include "inject/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a destroyed context waits for the decoding thread before leaving its samples. */
#define GPU_METRICS_DESTROY_WAIT_MS 1000

int gpu_metrics_open(uint64_t interval_ns, struct collector *collector, void *cupti_lib,
		     gpu_metrics_report_fn report_fn, struct gpu_metrics **out, char *err,
		     size_t errlen)
{
	struct gpu_metrics *g;

	*out = NULL;
	if (gpu_metrics_load(cupti_lib, err, errlen) < 0)
		return -1;
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "no GPU metrics: %s", strerror(ENOMEM));
		return -1;
	}
	g->interval_ns = interval_ns;
	g->thread_cpu_ms = -1;
	g->debug = getenv("GPT_TRACE_GPU_METRICS_DEBUG") &&
		   !strcmp(getenv("GPT_TRACE_GPU_METRICS_DEBUG"), "1");
	g->stop_mode = STOP_DECODE_ONLY;
	if (getenv("GPT_TRACE_GPU_METRICS_STOP")) {
		const char *mode = getenv("GPT_TRACE_GPU_METRICS_STOP");

		g->stop_mode = !strcmp(mode, "early")	  ? STOP_EARLY_DISABLE
			       : !strcmp(mode, "nodecode")  ? STOP_NO_FINAL_DECODE
			       : !strcmp(mode, "stop")	  ? STOP_NO_DISABLE
			       : !strcmp(mode, "release")   ? STOP_FULL
							    : STOP_DECODE_ONLY;
	}
	gpu_metrics_chip_try(getenv("GPT_TRACE_GPU_METRICS_TRY"), getenv("GPT_TRACE_GPU_METRICS_SET"));
	g->collector = collector;
	g->report = report_fn;
	pthread_mutex_init(&g->lock, NULL);
	pthread_mutex_init(&g->done_lock, NULL);
	pthread_cond_init(&g->wake, NULL);
	pthread_cond_init(&g->done, NULL);
	*out = g;
	return 0;
}

int gpu_metrics_stop(struct gpu_metrics *g, unsigned timeout_ms)
{
	struct timespec until = gpt_clock_deadline(timeout_ms);
	unsigned decode_ms;
	bool started;
	int rc = 0;

	if (!g)
		return 0;
	/* The decoding stops short of the wait, so that its thread is out of CUPTI when the exit goes
	 * on (one that went on while it decoded crashed 1 launch loop in 6 on the H200, 2026-12-04). */
	decode_ms = timeout_ms > 2 * GPU_METRICS_LAST_DECODE_MARGIN_MS ? timeout_ms - GPU_METRICS_LAST_DECODE_MARGIN_MS
									: timeout_ms / 2;
	atomic_store(&g->decode_until_ns, (long long)(gpt_clock_read(CLOCK_REALTIME) + decode_ms * 1000000ull));
	if (pthread_mutex_timedlock(&g->lock, &until) != 0)
		return -1;
	g->stopping = true;
	started = g->thread_started;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	/* Not on the lock, which the thread holds while it decodes the last samples: a timed wait
	 * on it could not return before the decode did. */
	pthread_mutex_lock(&g->done_lock);
	while (started && !g->finished && rc == 0)
		rc = pthread_cond_timedwait(&g->done, &g->done_lock, &until);
	pthread_mutex_unlock(&g->done_lock);
	if (rc) {
		atomic_store(&g->abandoned, true);
		return -1;
	}
	if (g->thread_started)
		pthread_join(g->thread, NULL);
	g->thread_started = false;
	/* Under the lock: a context destroyed now (CUDA's teardown) stops its device too. */
	until = gpt_clock_deadline(timeout_ms);
	if (pthread_mutex_timedlock(&g->lock, &until) != 0)
		return -1;
	for (size_t i = 0; i < g->ndevices; i++)
		gpu_metrics_device_stop(g, &g->devices[i]);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

void gpu_metrics_release(struct gpu_metrics *g)
{
	if (!g || g->stop_mode == STOP_NO_DISABLE || g->stop_mode == STOP_DECODE_ONLY)
		return;
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->ndevices; i++)
		gpu_metrics_device_disable(&g->devices[i]);
	if (g->debug)
		gpu_metrics_report(g, "gpu metrics debug: samplers disabled");
	pthread_mutex_unlock(&g->lock);
}

/*
 * Called by CUPTI from the thread destroying ctx, inside the driver. The decoding thread may hold the
 * lock while it waits in CUPTI for that same driver: wait a bounded time, then leave the samples.
 */
void gpu_metrics_context_destroy(struct gpu_metrics *g, CUcontext ctx)
{
	struct timespec until = gpt_clock_deadline(GPU_METRICS_DESTROY_WAIT_MS);

	if (!g || atomic_load(&g->abandoned))	/* the exit already said its samples are lost */
		return;
	if (g->debug)
		gpu_metrics_report(g, "gpu metrics debug: a context is being destroyed");
	if (pthread_mutex_timedlock(&g->lock, &until) != 0) {
		gpu_metrics_report(g, "gpu metrics: a context was destroyed while its sampler was being "
				   "decoded; its last samples are not written");
		return;
	}
	for (size_t i = 0; i < g->ndevices; i++)
		if (g->devices[i].ctx == ctx)
			gpu_metrics_device_stop(g, &g->devices[i]);
	pthread_mutex_unlock(&g->lock);
}

struct totals {
	uint64_t samples, overflows, dropped, image_full, undecoded;
};

static struct totals totals(const struct gpu_metrics *g)
{
	struct totals t = { 0 };

	for (size_t i = 0; i < g->ndevices; i++) {
		t.samples += g->devices[i].samples;
		t.overflows += g->devices[i].overflows;
		t.dropped += g->devices[i].dropped_long + g->devices[i].failed_evals;
		t.image_full += g->devices[i].image_full;
		t.undecoded += g->devices[i].undecoded;
	}
	return t;
}

/*
 * One line at the end. A decode that fills the counter data image means our thread fell behind,
 * and samples around it are lost (device_decode): a JAX process sampling 2 H200s at 10 kHz filled
 * it 29-51 times and decoded 79-84% of its samples; at 1 kHz, all of them (2026-11-27,
 * docs/gpu-metrics.md). So the line says so and what helps.
 */
void gpu_metrics_summary(const struct gpu_metrics *g, char *buf, size_t size)
{
	struct totals t = totals(g);
	char behind[256] = "", late[160] = "";

	buf[0] = '\0';
	if (!g->ndevices)
		return;
	if (t.image_full)
		snprintf(behind, sizeof(behind), "; the decoding fell behind %llu time%s (the counter "
			 "data image filled): samples are missing there; a longer interval "
			 "(--gpu-metrics=1khz) avoids it",
			 (unsigned long long)t.image_full, t.image_full == 1 ? "" : "s");
	if (t.undecoded)
		snprintf(late, sizeof(late), "; the last %llu were not decoded before the exit's deadline "
			 "and are not written", (unsigned long long)t.undecoded);
	snprintf(buf, size, "gpu metrics: %llu samples of %zu device%s every %.0f us, %zu metrics "
		 "(%s)%s%s%s", (unsigned long long)t.samples, g->ndevices, g->ndevices == 1 ? "" : "s",
		 (double)g->interval_ns / 1e3, g->chip ? g->chip->count : 0,
		 g->chip ? g->chip->name : "no chip",
		 t.overflows ? ", hardware buffer overflowed" : "", behind, late);
}

void gpu_metrics_describe(const struct gpu_metrics *g,
			  void (*set)(void *arg, const char *name, const char *value), void *arg)
{
	struct totals t = totals(g);
	char value[4096];
	size_t len = 0;

	snprintf(value, sizeof(value), "%llu", (unsigned long long)g->interval_ns);
	set(arg, "gpu_metrics_interval_ns", value);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)t.dropped);
	set(arg, "gpu_metric_samples_dropped", value);
	snprintf(value, sizeof(value), "%.1f", g->setup_ms);
	set(arg, "gpu_metrics_setup_ms", value);
	/* only once the thread is joined: one the exit gave up on may still be writing it */
	if (!g->thread_started && g->thread_cpu_ms >= 0) {
		snprintf(value, sizeof(value), "%.1f", g->thread_cpu_ms);
		set(arg, "gpu_metrics_decode_cpu_ms", value);
	}
	snprintf(value, sizeof(value), "%llu", (unsigned long long)t.image_full);
	set(arg, "gpu_metrics_image_full", value);
	value[0] = '\0';
	for (size_t i = 0; g->chip && i < g->chip->count && len < sizeof(value); i++)
		len += (size_t)snprintf(value + len, sizeof(value) - len, "%s%s", i ? "," : "",
					g->chip->names[i]);
	set(arg, "gpu_metrics_collected", value);
}
