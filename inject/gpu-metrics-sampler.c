/*
 * Each device's PM sampler and the decoding thread (gpu-metrics-private.h; the sequence is at the
 * top of gpu-metrics.c): a sampler is set up in CUPTI's context-creation callback, decoded every
 * GPU_METRICS_DECODE_MS by our thread, its samples evaluated with the chip's host object and handed
 * to the collector; at the end it is decoded a last time with its device's context current and, by
 * default, neither stopped nor disabled (what CUPTI 13.0 did not survive: gpu-metrics.c).
 *
 * Timestamps: CUPTI converts the sampler's timestamps with the clock the library registered
 * (measured on the H100: an FMA kernel's first partial sample read 69.8% SM-active where 69.6 us of
 * its 100 us overlapped the kernel record), so they need no conversion.
 */
#define _GNU_SOURCE
#include "inject/gpu-metrics-private.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/collector.h"
#include "inject/clock.h"
#include "inject/driver.h"

#define GPU_METRICS_DECODE_MS 50
#define GPU_METRICS_HW_BUFFER (256u << 20)	/* the hardware buffer: 100 ms of samples fit */
#define GPU_METRICS_LONG_SAMPLE 20		/* a sample this many intervals long is dropped */

static CUptiResult device_set_config(struct gpu_metrics *g, struct device *d,
				     const struct chip *c)
{
	CUpti_PmSampling_SetConfig_Params p = {.structSize =
						   CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};

	p.pPmSamplingObject = d->sampler;
	p.configSize = c->config_size;
	p.pConfig = c->config;
	p.hardwareBufferSize = GPU_METRICS_HW_BUFFER;
	p.samplingInterval = g->interval_ns;
	p.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
	p.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
	return gpu_metrics_cupti.PmSamplingSetConfig(&p);
}

/*
 * The counter data image: room for three decode periods of samples (at 10 kHz 1500 samples: the
 * H100's image took 15 KB a sample for 7 metrics). It is started again before it fills (see
 * device_decode).
 */
static CUptiResult device_image(struct gpu_metrics *g, struct device *d, const struct chip *c)
{
	CUpti_PmSampling_GetCounterDataSize_Params size = {
	    .structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
	CUpti_PmSampling_CounterDataImage_Initialize_Params init = {
	    .structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	uint64_t per_period = GPU_METRICS_DECODE_MS * 1000000ull / g->interval_ns;
	CUptiResult r;

	size.pPmSamplingObject = d->sampler;
	size.pMetricNames = (const char **)c->names;
	size.numMetrics = c->count;
	size.maxSamples = (uint32_t)(per_period * 3 < 64 ? 64 : per_period * 3 > 20000 ? 20000
								   : per_period * 3);
	r = gpu_metrics_cupti.PmSamplingGetCounterDataSize(&size);
	if (r != CUPTI_SUCCESS)
		return r;
	d->image = calloc(1, size.counterDataSize);
	if (!d->image)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	d->image_size = size.counterDataSize;
	init.pPmSamplingObject = d->sampler;
	init.counterDataSize = d->image_size;
	init.pCounterData = d->image;
	return gpu_metrics_cupti.PmSamplingCounterDataImageInitialize(&init);
}

void gpu_metrics_device_disable(struct device *d)
{
	CUpti_PmSampling_Disable_Params p = {.structSize =
						 CUpti_PmSampling_Disable_Params_STRUCT_SIZE};

	if (!d->sampler)
		return;
	p.pPmSamplingObject = d->sampler;
	gpu_metrics_cupti.PmSamplingDisable(&p);
	d->sampler = NULL;
	free(d->image);
	d->image = NULL;
}

/* Enable, configure (falling back to the required metrics), image, start. */
static int device_start(struct gpu_metrics *g, struct device *d)
{
	CUpti_PmSampling_Enable_Params enable = {.structSize =
						     CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
	CUpti_PmSampling_Start_Params start = {.structSize =
						   CUpti_PmSampling_Start_Params_STRUCT_SIZE};
	const char *call = "cuptiPmSamplingEnable";
	CUptiResult r;

	enable.deviceIndex = d->id;
	r = gpu_metrics_cupti.PmSamplingEnable(&enable);
	if (r != CUPTI_SUCCESS)
		goto out_fail;
	d->sampler = enable.pPmSamplingObject;
	call = "cuptiPmSamplingSetConfig";
	r = device_set_config(g, d, g->chip);
	/*
	 * Only before any device samples with the chip's set: their samples need its host object.
	 */
	if (r == CUPTI_ERROR_NOT_SUPPORTED && !g->ndevices) {
		struct chip *fallback = gpu_metrics_chip_setup(g, d->id, true);

		if (!fallback)
			goto out_disable;
		gpu_metrics_chip_free(g->chip);
		g->chip = fallback;
		r = device_set_config(g, d, g->chip);
	}
	if (r != CUPTI_SUCCESS)
		goto out_fail;
	call = "cuptiPmSamplingGetCounterDataSize";
	r = device_image(g, d, g->chip);
	if (r != CUPTI_SUCCESS)
		goto out_fail;
	call = "cuptiPmSamplingStart";
	start.pPmSamplingObject = d->sampler;
	r = gpu_metrics_cupti.PmSamplingStart(&start);
	if (r != CUPTI_SUCCESS)
		goto out_fail;
	d->running = true;
	return 0;

out_fail:
	gpu_metrics_failed(g, d->id, call, r);
out_disable:
	gpu_metrics_device_disable(d);
	return -1;
}

static bool profiler_init(struct gpu_metrics *g, uint32_t device)
{
	CUpti_Profiler_Initialize_Params p = {.structSize =
						  CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	CUptiResult r;

	if (g->profiler_initialized || g->profiler_failed)
		return g->profiler_initialized;
	r = gpu_metrics_cupti.ProfilerInitialize(&p);
	if (r != CUPTI_SUCCESS) {
		g->profiler_failed = true;
		gpu_metrics_failed(g, device, "cuptiProfilerInitialize", r);
		return false;
	}
	g->profiler_initialized = true;
	return true;
}

/* Configure and start device_id's sampler (under the lock, ctx current). */
static void device_setup(struct gpu_metrics *g, uint32_t device_id, CUcontext ctx)
{
	struct timespec t0, t1;
	struct device *d;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!profiler_init(g, device_id))
		return;
	if (!g->chip && !(g->chip = gpu_metrics_chip_setup(g, device_id, false)))
		return;
	d = &g->devices[g->ndevices];
	memset(d, 0, sizeof(*d));
	d->id = device_id;
	d->ctx = ctx;
	if (device_start(g, d) < 0)
		return;
	g->ndevices++;
	if (g->debug)
		gpu_metrics_report(g, "gpu metrics debug: device %u sampling, %zu metrics, image "
				   "%zu bytes", device_id, g->chip->count, d->image_size);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	g->setup_ms += (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
}

/* Sample i of d's image into s; false when CUPTI gave none, or it is one to drop. */
static bool sample_read(struct gpu_metrics *g, struct device *d, size_t i,
			struct gpu_metrics_sample *s)
{
	CUpti_PmSampling_CounterData_GetSampleInfo_Params info = {
	    .structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
	const struct chip *c = g->chip;
	double values[GPM_NR];

	info.pPmSamplingObject = d->sampler;
	info.pCounterDataImage = d->image;
	info.counterDataImageSize = d->image_size;
	info.sampleIndex = i;
	if (gpu_metrics_cupti.PmSamplingCounterDataGetSampleInfo(&info) != CUPTI_SUCCESS ||
	    info.endTimestamp <= info.startTimestamp)
		return false;
	/* The first sample spans from SetConfig to Start: no interval of the program's. */
	if (info.endTimestamp - info.startTimestamp > GPU_METRICS_LONG_SAMPLE * g->interval_ns) {
		d->dropped_long++;
		return false;
	}
	if (metrics_host_evaluate(c->host, d->image, d->image_size, i, c->names, c->count,
				  values) != CUPTI_SUCCESS) {
		d->failed_evals++;
		return false;
	}
	s->start = info.startTimestamp;
	s->end = info.endTimestamp;
	for (int m = 0; m < GPM_NR; m++)
		s->value[m] = NAN;
	for (size_t m = 0; m < c->count; m++)
		s->value[c->raws[m]] = values[m];
	return true;
}

/* Past the deadline gpu_metrics_stop set: decode no more (the exit is about to go on). */
static bool time_up(struct gpu_metrics *g)
{
	long long until = atomic_load(&g->decode_until_ns);

	return until && (long long)gpt_clock_read(CLOCK_REALTIME) >= until;
}

/* Completed samples from processed on, as one batch for the collector; those left when time is up
 * are counted as undecoded. */
static void device_hand_over(struct gpu_metrics *g, struct device *d, size_t completed)
{
	struct gpu_metrics_batch *batch;
	size_t n = completed > d->processed ? completed - d->processed : 0;

	if (!n)
		return;
	batch = malloc(sizeof(*batch) + n * sizeof(batch->samples[0]));
	if (!batch)
		return;
	batch->device_id = d->id;
	batch->sampled = g->chip->sampled;
	batch->count = 0;
	for (; d->processed < completed; d->processed++) {
		if (time_up(g)) {
			d->undecoded += completed - d->processed;
			d->processed = completed;
			break;
		}
		if (sample_read(g, d, d->processed, &batch->samples[batch->count]))
			batch->count++;
	}
	d->samples += batch->count;
	if (batch->count)
		collector_submit_gpu_metrics(g->collector, batch);
	else
		free(batch);
}

/*
 * Decode what the hardware buffer holds and hand it over; start the image again while it still has
 * room. A decode that fills the image loses the records it decoded past the end (device run 2 on
 * the H100: gaps of 60 to 210 ms every 200 ms with a two-period image started again only when
 * full), so the image is started again once less than 1.5 periods of room are left, when no sample
 * is half written (populated but not completed), or in any case below half a period.
 */
static void device_decode(struct gpu_metrics *g, struct device *d)
{
	CUpti_PmSampling_CounterDataImage_Initialize_Params init = {
	    .structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	uint64_t per_period = GPU_METRICS_DECODE_MS * 1000000ull / g->interval_ns + 1;

	for (int rounds = 0; rounds < 64 && d->sampler && !time_up(g); rounds++) {
		CUpti_PmSampling_DecodeData_Params decode = {
		    .structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
		CUpti_PmSampling_GetCounterDataInfo_Params info = {
		    .structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
		size_t room;
		bool full, half_written;
		CUptiResult r;

		decode.pPmSamplingObject = d->sampler;
		decode.pCounterDataImage = d->image;
		decode.counterDataImageSize = d->image_size;
		r = gpu_metrics_cupti.PmSamplingDecodeData(&decode);
		if (decode.overflow || r == CUPTI_ERROR_OUT_OF_MEMORY) {
			if (!d->overflows++)
				gpu_metrics_report(g, "GPU metrics on device %u: the hardware "
						   "buffer overflowed; samples are missing (use a "
						   "longer interval)", d->id);
		}
		info.pCounterDataImage = d->image;
		info.counterDataImageSize = d->image_size;
		if (gpu_metrics_cupti.PmSamplingGetCounterDataInfo(&info) != CUPTI_SUCCESS)
			return;
		device_hand_over(g, d, info.numCompletedSamples);
		full = decode.decodeStopReason ==
			       CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL ||
		       info.numCompletedSamples >= info.numTotalSamples;
		room = info.numTotalSamples - info.numCompletedSamples;
		half_written = info.numPopulatedSamples > info.numCompletedSamples;
		if (!full &&
		    (room * 2 >= per_period * 3 || (half_written && room * 2 >= per_period)))
			return;
		if (full)
			d->image_full++;
		init.pPmSamplingObject = d->sampler;
		init.counterDataSize = d->image_size;
		init.pCounterData = d->image;
		if (gpu_metrics_cupti.PmSamplingCounterDataImageInitialize(&init) != CUPTI_SUCCESS)
			return;
		d->processed = 0;
		if (!full)
			return;
	}
}

/* The driver's context stack (driver.h). */
static CUresult context_push(CUcontext ctx)
{
	static CUresult (*push)(CUcontext);

	if (!push)
		*(void **)&push = driver_function("cuCtxPushCurrent_v2");
	return push ? push(ctx) : CUDA_ERROR_NOT_INITIALIZED;
}

static void context_pop(void)
{
	static CUresult (*pop)(CUcontext *);
	CUcontext ctx;

	if (!pop)
		*(void **)&pop = driver_function("cuCtxPopCurrent_v2");
	if (pop)
		pop(&ctx);
}

/* Last decode, stop, the samples written meanwhile: with d's context current. */
void gpu_metrics_device_stop(struct gpu_metrics *g, struct device *d)
{
	CUpti_PmSampling_Stop_Params stop = {.structSize =
						 CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
	bool pushed;

	if (!d->running)
		return;
	d->running = false;
	pushed = d->ctx && context_push(d->ctx) == CUDA_SUCCESS;
	device_decode(g, d);
	if (g->debug)
		gpu_metrics_report(g, "gpu metrics debug: device %u decoded, %llu samples, "
				   "context %s", d->id, (unsigned long long)d->samples,
				   pushed ? "pushed" : "not current");
	if (g->stop_mode != STOP_DECODE_ONLY) {
		stop.pPmSamplingObject = d->sampler;
		gpu_metrics_cupti.PmSamplingStop(&stop);
		if (g->debug)
			gpu_metrics_report(g, "gpu metrics debug: device %u stopped", d->id);
		/* What the hardware wrote between the last decode and the stop. */
		if (g->stop_mode != STOP_NO_FINAL_DECODE)
			device_decode(g, d);
		if (g->stop_mode == STOP_EARLY_DISABLE)
			gpu_metrics_device_disable(d);
	}
	if (pushed)
		context_pop();
}

static void *decode_main(void *arg)
{
	struct gpu_metrics *g = arg;
	struct timespec until, soon;
	sigset_t faults;

	/* Faults here kill the process anyway: let the crash handler save the trace first. */
	sigemptyset(&faults);
	sigaddset(&faults, SIGSEGV);
	sigaddset(&faults, SIGBUS);
	sigaddset(&faults, SIGILL);
	sigaddset(&faults, SIGFPE);
	sigaddset(&faults, SIGABRT);
	pthread_sigmask(SIG_UNBLOCK, &faults, NULL);

	/*
	 * A round every GPU_METRICS_DECODE_MS from the start of the last one, not that long after its
	 * end. It does not make one thread fast enough for two GPUs at 10 kHz: a JAX process on 2
	 * H200s filled the image 51 times and decoded 83.5% of its samples waiting after each round,
	 * 29-35 times and 79-83% this way (2026-11-27, tests/gpu/busy/logs/h200x2-jax-loss-*), with
	 * about 65 us of CPU a sample; one GPU: 99-100%. The end line says so (gpu_metrics_summary).
	 */
	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		until = gpt_clock_deadline(GPU_METRICS_DECODE_MS);
		for (size_t i = 0; i < g->ndevices; i++)
			if (g->devices[i].running)
				device_decode(g, &g->devices[i]);
		/* a round past its period still leaves the lock free a moment (a context being
		   created waits on it) */
		soon = gpt_clock_deadline(1);
		if (soon.tv_sec > until.tv_sec ||
		    (soon.tv_sec == until.tv_sec && soon.tv_nsec > until.tv_nsec))
			until = soon;
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	/*
	 * The last samples are decoded here, not in the exiting thread, so that the exit waits for
	 * them a bounded time: run by the exiting thread with the context pushed, the last decode
	 * spun for good in NVPW's AcknowledgeRecordBuffer in 10 of 26 launch loops on the H200
	 * (2026-11-27, tests/gpu/busy/hang-hunt.sh). The periodic decodes, here, never did.
	 */
	if (g->stop_mode == STOP_DECODE_ONLY)
		for (size_t i = 0; i < g->ndevices; i++)
			if (g->devices[i].running) {
				device_decode(g, &g->devices[i]);
				g->devices[i].running = false;
			}
	pthread_mutex_unlock(&g->lock);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &until);
	pthread_mutex_lock(&g->done_lock);
	g->thread_cpu_ms = (double)until.tv_sec * 1e3 + (double)until.tv_nsec / 1e6;
	g->finished = true;
	pthread_cond_broadcast(&g->done);
	pthread_mutex_unlock(&g->done_lock);
	return NULL;
}

/*
 * Set up here, in CUPTI's context-creation callback, before the context runs anything. Handed to
 * the decoding thread instead (tried on the H200, 2026-11-27), the setup raced a short program's
 * exit: the driver tore down while the thread was still configuring, and libnvperf_host crashed.
 */
void gpu_metrics_device(struct gpu_metrics *g, uint32_t device_id, CUcontext ctx)
{
	if (!g || device_id >= GPU_METRICS_MAX_DEVICES)
		return;
	pthread_mutex_lock(&g->lock);
	if (g->seen[device_id] || g->stopping)
		goto out;
	g->seen[device_id] = true;
	device_setup(g, device_id, ctx);
	if (!g->thread_started) {
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		g->thread_started = pthread_create(&g->thread, NULL, decode_main, g) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
out:
	pthread_mutex_unlock(&g->lock);
}
