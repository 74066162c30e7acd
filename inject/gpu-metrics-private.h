/*
 * gpu-metrics.c's parts, private to them: CUPTI's PM-sampling functions in one table and problems
 * said in one line (gpu-metrics-load.c); the chip's host object and config image of the wanted
 * metrics (gpu-metrics-chip.c); each device's sampler and the decoding thread
 * (gpu-metrics-sampler.c). gpu-metrics.c opens the session and ends it, and sums it up.
 */
#ifndef GPT_INJECT_GPU_METRICS_PRIVATE_H
#define GPT_INJECT_GPU_METRICS_PRIVATE_H

#include "inject/gpu-metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include "collector/sample-rows.h"
#include "inject/metrics-host.h"

#define GPU_METRICS_MAX_DEVICES 64
/* nsys's whole set from this interval up: below it one thread cannot evaluate every sample. */
#define GPU_METRICS_NSYS_SET_MIN_INTERVAL_NS 200000ull
/* The last decode stops this long before the exit stops waiting for it (gpu_metrics_stop): its
 * thread is then out of CUPTI when the process goes on to exit. */
#define GPU_METRICS_LAST_DECODE_MARGIN_MS 300

/* One chip's host object and config image, with the metrics the config holds. */
struct chip {
	char name[64];
	uint8_t *availability;	/* the counter availability image: the host objects keep using it */
	CUpti_Profiler_Host_Object *host;
	uint8_t *config;
	size_t config_size;
	const char *names[GPM_NR];	/* CUPTI names, in config order: one per sample value */
	enum gpu_metric_raw raws[GPM_NR];
	size_t count;
	uint32_t sampled;	/* bit raws[i] for each i: what a batch says it holds */
};

struct device {
	uint32_t id;
	CUcontext ctx;		/* the context whose creation started it: current while stopping */
	CUpti_PmSampling_Object *sampler;
	uint8_t *image;
	size_t image_size;
	size_t processed;	/* samples of the image already handed over */
	bool running;
	uint64_t samples, dropped_long, overflows, failed_evals;
	uint64_t image_full;	/* decodes that filled the image (records past its end are lost) */
	uint64_t undecoded;	/* samples the last decode left, its time up */
};

/*
 * How the samplers end (GPT_TRACE_GPU_METRICS_STOP, for re-checking a later CUPTI). The default,
 * "decode": decoded a last time with the device's context current, neither stopped nor disabled
 * (see the top of gpu-metrics.c). "stop": also stopped and decoded again; "release": that, and
 * disabled at gpu_metrics_release(), after CUPTI's last activity flush (XLA's PM sampler,
 * cupti_pm_sampler_impl.cc, notes that disabling a sampler finalizes all of CUPTI); "early":
 * disabled right after the stop, as the first version did; "nodecode": stopped, not decoded after.
 */
enum stop_mode {
	STOP_FULL,
	STOP_EARLY_DISABLE,
	STOP_NO_FINAL_DECODE,
	STOP_DECODE_ONLY,
	STOP_NO_DISABLE,
};

struct gpu_metrics {
	uint64_t interval_ns;
	enum stop_mode stop_mode;
	bool debug;
	struct collector *collector;
	gpu_metrics_report_fn report;
	bool profiler_initialized, profiler_failed;

	pthread_mutex_t lock;	/* devices[] and the flags below; decoding holds it */
	pthread_cond_t wake;
	pthread_t thread;
	bool thread_started, stopping;
	/* CLOCK_REALTIME ns at which decoding gives up, set by gpu_metrics_stop before it waits for the
	 * lock (0: none): the thread checks it between samples, lock or not. */
	atomic_llong decode_until_ns;
	pthread_mutex_t done_lock;	/* finished, which the thread sets once the last decode is done */
	pthread_cond_t done;
	bool finished;
	atomic_bool abandoned;	/* the exit gave up waiting for the last decode */
	struct chip *chip;	/* the first device's chip; other chips are configured alike */
	struct device devices[GPU_METRICS_MAX_DEVICES];
	size_t ndevices;
	bool seen[GPU_METRICS_MAX_DEVICES];
	double setup_ms;
	double thread_cpu_ms;	/* the decoding thread's CPU time, set with finished (done_lock); < 0 before */
};

/* gpu-metrics-load.c */

/*
 * CUPTI's functions besides the host API's (metrics-host.c), from the library CUPTI was loaded
 * from; looked up in this order, the host API's between the two lists (the first one missing is
 * named).
 */
#define GPU_METRICS_CUPTI_CALLS(X)                                                                 \
	X(GetResultString)                                                                         \
	X(DeviceGetChipName)                                                                       \
	X(ProfilerInitialize)
#define GPU_METRICS_PM_CALLS(X)                                                                    \
	X(PmSamplingGetCounterAvailability)                                                        \
	X(PmSamplingEnable)                                                                        \
	X(PmSamplingDisable)                                                                       \
	X(PmSamplingSetConfig)                                                                     \
	X(PmSamplingStart)                                                                         \
	X(PmSamplingStop)                                                                          \
	X(PmSamplingDecodeData)                                                                    \
	X(PmSamplingGetCounterDataSize)                                                            \
	X(PmSamplingCounterDataImageInitialize)                                                    \
	X(PmSamplingGetCounterDataInfo)                                                            \
	X(PmSamplingCounterDataGetSampleInfo)
#define GPU_METRICS_CUPTI_FN(name) __typeof__(&cupti##name) name;
struct gpu_metrics_cupti {
	GPU_METRICS_CUPTI_CALLS(GPU_METRICS_CUPTI_FN)
	GPU_METRICS_PM_CALLS(GPU_METRICS_CUPTI_FN)
};
#undef GPU_METRICS_CUPTI_FN
extern struct gpu_metrics_cupti gpu_metrics_cupti;

/* Look CUPTI's functions up in lib (NULL: the process's symbols): 0, or -1 with one line in err. */
int gpu_metrics_load(void *lib, char *err, size_t errlen);
/* One problem line, through g's report function (else on stderr). */
void gpu_metrics_report(struct gpu_metrics *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "no GPU metrics on device N: CALL failed: REASON [CODE]; tracing goes on without them" */
void gpu_metrics_failed(struct gpu_metrics *g, uint32_t device, const char *call, CUptiResult r);

/* gpu-metrics-chip.c */

/* GPT_TRACE_GPU_METRICS_TRY's value, for re-checking a later CUPTI, and GPT_TRACE_GPU_METRICS_SET's:
 * the configuration to try first (all, nsys, issue, nvlink, pcie, tensor, required); NULL: none. */
void gpu_metrics_chip_try(const char *spec, const char *set);
/* device's chip configured with the wanted metrics (the required ones alone if required_only), or
 * NULL when it cannot be (one line said why). */
struct chip *gpu_metrics_chip_setup(struct gpu_metrics *g, uint32_t device, bool required_only);
/* NULL does nothing; what CUPTI keeps reading stays (see gpu-metrics-chip.c). */
void gpu_metrics_chip_free(struct chip *c);

/* gpu-metrics-sampler.c */

/* Last decode, and the stop that stop_mode asks for, with d's context current (under the lock). */
void gpu_metrics_device_stop(struct gpu_metrics *g, struct device *d);
/* Disable d's sampler (which finalizes CUPTI) and free its image. */
void gpu_metrics_device_disable(struct device *d);

#endif
