/*
 * GPU metrics through CUPTI's PM sampler (see gpu-metrics.h).
 *
 * Sequence, as in NVIDIA's pm_sampling sample: cuptiProfilerInitialize; per chip a host object of
 * type PM_SAMPLING built from the first device's counter availability image, and a config image of
 * the metrics below; per device, in CUPTI's context-creation callback, cuptiPmSamplingEnable,
 * SetConfig (GPU time interval trigger), a counter data image sized by GetCounterDataSize, Start.
 * Our thread then, every
 * GPU_METRICS_DECODE_MS, decodes the hardware buffer into the counter data image, reads each
 * completed sample's interval (GetSampleInfo) and values (cuptiProfilerHostEvaluateToGpuValues),
 * hands them to the collector, and initializes the image again before it fills. The counter
 * availability image lives as long as the chip: the host objects keep reading it.
 *
 * Which metrics: the sampler takes only sets that fit in one pass, and it refuses some that its
 * host API accepts (on the H100, 2026-11-27, cuptiProfilerHostConfigAddMetrics failed with
 * CUPTI_ERROR_UNKNOWN for a 34-metric set that the host API alone, without the device's
 * availability image, called one pass). A refused configuration is not harmless either: see
 * chip_build. So the set is the required metrics (SM cycles, DRAM bytes) with the tensor pipes,
 * seven on GH100, and the required ones alone where that is refused.
 *
 * What CUPTI 13.0 does not survive (H200, driver 580, 2026-11-27; tests/gpu/busy/stop-modes.sh,
 * skip-steps.sh and batch4.sh kept the runs): a host object deinitialized while the process
 * samples, a refused configuration, cuptiPmSamplingStop at exit and cuptiPmSamplingDisable. Each
 * corrupted the heap or crashed inside libnvperf_host in some runs, so none of them happens by
 * default: the host objects live until the process ends, and at exit each sampler is decoded a
 * last time and left running. With that, 38 of 38 traced runs (CUDA samples, PyTorch, torch.compile)
 * exited cleanly; before, every one aborted.
 *
 * Timestamps: CUPTI converts the sampler's timestamps with the clock the library registered
 * (measured on the H100: an FMA kernel's first partial sample read 69.8% SM-active where 69.6 us of
 * its 100 us overlapped the kernel record), so they need no conversion.
 */
#define _GNU_SOURCE
#include "inject/gpu-metrics.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include "collector/collector.h"
#include "collector/gpu_metrics.h"
#include "inject/metrics-host.h"

#define GPU_METRICS_DECODE_MS 50
#define GPU_METRICS_MAX_DEVICES 64
#define GPU_METRICS_HW_BUFFER (256u << 20)	/* the hardware buffer: 100 ms of samples fit easily */
#define GPU_METRICS_LONG_SAMPLE 20		/* a sample this many intervals long is dropped */
#define MAX_CANDIDATES 3

/* What we ask the sampler for, in order: required first, then by use to the analyzer. */
static const struct wanted_metric {
	enum gpu_metric_raw raw;
	bool required;
	const char *names[MAX_CANDIDATES];	/* CUPTI metric names, tried in turn */
} wanted[] = {
	{ GPM_SM_CYCLES_ELAPSED, true, { "sm__cycles_elapsed.sum" } },
	{ GPM_SM_CYCLES_ACTIVE, true,
	  { "TPC.TriageCompute.sm__cycles_active.sum", "sm__cycles_active.sum" } },
	{ GPM_DRAM_READ_BYTES, true, { "dram__bytes_read.sum" } },
	{ GPM_DRAM_WRITE_BYTES, true, { "dram__bytes_write.sum" } },
	{ GPM_TENSOR_CYCLES, false,
	  { "TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.sum",
	    "sm__pipe_tensor_cycles_active_realtime.sum" } },
	{ GPM_TENSOR_PCT, false,
	  { "TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_HMMA_PCT, false,
	  { "TPC.TriageCompute.sm__pipe_tensor_op_hmma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_IMMA_PCT, false,
	  { "TPC.TriageCompute.sm__pipe_tensor_op_imma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_DMMA_PCT, false,
	  { "SM_C.TriageCompute.smsp__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_GPC_CYCLES_AVG, false, { "sm__cycles_elapsed.avg" } },
	{ GPM_PCIE_READ_BYTES, false, { "PCI.TriageCompute.pcie__read_bytes.sum", "pcie__read_bytes.sum" } },
	{ GPM_PCIE_WRITE_BYTES, false,
	  { "PCI.TriageCompute.pcie__write_bytes.sum", "pcie__write_bytes.sum" } },
	{ GPM_DRAM_READ_PCT, false,
	  { "dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
	    "FBSP.TriageCompute.dramc__read_throughput.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_DRAM_WRITE_PCT, false,
	  { "dram__write_throughput.avg.pct_of_peak_sustained_elapsed",
	    "FBSP.TriageCompute.dramc__write_throughput.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_PCIE_READ_PCT, false,
	  { "PCI.TriageCompute.pcie__read_bytes.avg.pct_of_peak_sustained_elapsed",
	    "pcie__read_bytes.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_PCIE_WRITE_PCT, false,
	  { "PCI.TriageCompute.pcie__write_bytes.avg.pct_of_peak_sustained_elapsed",
	    "pcie__write_bytes.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_NVLINK_RX_BYTES, false, { "nvlrx__bytes.sum" } },
	{ GPM_NVLINK_TX_BYTES, false, { "nvltx__bytes.sum" } },
	{ GPM_GR_ACTIVE_PCT, false,
	  { "FE_B.TriageCompute.gr__cycles_active.sum.pct_of_peak_sustained_elapsed",
	    "gr__cycles_active.sum.pct_of_peak_sustained_elapsed" } },
	{ GPM_WARPS_PCT, false,
	  { "TPC.TriageCompute.tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
};
#define NR_WANTED (sizeof(wanted) / sizeof(wanted[0]))

#define GPU_METRICS_CUPTI_CALLS(X)                                                                 \
	X(GetResultString)                                                                         \
	X(DeviceGetChipName)                                                                       \
	X(ProfilerInitialize)                                                                      \
	X(ProfilerHostInitialize)                                                                  \
	X(ProfilerHostDeinitialize)                                                                \
	X(ProfilerHostGetMetricProperties)                                                         \
	X(ProfilerHostConfigAddMetrics)                                                            \
	X(ProfilerHostGetConfigImageSize)                                                          \
	X(ProfilerHostGetConfigImage)                                                              \
	X(ProfilerHostGetNumOfPasses)                                                              \
	X(ProfilerHostEvaluateToGpuValues)                                                         \
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

#define GPU_METRICS_FIELD(name) __typeof__(&cupti##name) name;
static struct {
	GPU_METRICS_CUPTI_CALLS(GPU_METRICS_FIELD)
} api;
#undef GPU_METRICS_FIELD

/*
 * GPT_TRACE_GPU_METRICS_TRY, for re-checking a later CUPTI with tests/gpu/busy/stop-modes.sh:
 * "all" tries the whole metric list first, "deinit" deinitializes host objects (see chip_free).
 */
static struct {
	bool deinit, all;
} try_opts;

/* One chip's host object and config image, with the metrics the config holds. */
struct chip {
	char name[64];
	uint8_t *availability;	/* the counter availability image: the host objects keep using it */
	CUpti_Profiler_Host_Object *host;
	uint8_t *config;
	size_t config_size;
	const char *names[NR_WANTED];		/* CUPTI names, in config order */
	enum gpu_metric_raw raws[NR_WANTED];
	size_t count;
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
};

/*
 * How the samplers end (GPT_TRACE_GPU_METRICS_STOP, for re-checking a later CUPTI). The default,
 * "decode": decoded a last time with the device's context current, neither stopped nor disabled
 * (see the top of the file). "stop": also stopped and decoded again; "release": that, and disabled
 * at gpu_metrics_release(), after CUPTI's last activity flush (XLA's PM sampler,
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
	bool required_only;	/* GPT_TRACE_GPU_METRICS_SET=required: the required metrics alone */
	struct collector *collector;
	gpu_metrics_report_fn report;
	bool profiler_initialized, profiler_failed;

	pthread_mutex_t lock;	/* devices[] and the flags below; decoding holds it */
	pthread_cond_t wake, done;
	pthread_t thread;
	bool thread_started, stopping, finished;
	struct chip *chip;	/* the first device's chip; other chips are configured alike */
	struct device devices[GPU_METRICS_MAX_DEVICES];
	size_t ndevices;
	bool seen[GPU_METRICS_MAX_DEVICES];
	double setup_ms;
};

static void report(struct gpu_metrics *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(struct gpu_metrics *g, const char *fmt, ...)
{
	char line[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (g->report)
		g->report(line);
	else
		fprintf(stderr, "gpt-trace: %s\n", line);
}

static const char *reason(CUptiResult r)
{
	const char *name = NULL;

	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return "access to the GPU performance counters is restricted to administrators: run "
		       "as root, or set 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
		       "(docs/gpu-metrics.md)";
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
	case CUPTI_ERROR_HARDWARE_BUSY:
	case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
	case CUPTI_ERROR_INVALID_OPERATION:
		return "another profiler (Nsight Systems or Compute, DCGM, another CUPTI tool) holds "
		       "the GPU counters";
	case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
		return "the device is a MIG instance, where PM sampling is not supported";
	case CUPTI_ERROR_NOT_SUPPORTED:
	case CUPTI_ERROR_INVALID_DEVICE:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
		return "the device does not support PM sampling in this configuration (Turing or "
		       "later, no vGPU without profiling)";
	default:
		if (!api.GetResultString || api.GetResultString(r, &name) != CUPTI_SUCCESS || !name)
			name = "unknown CUPTI error";
		return name;
	}
}

static void device_failed(struct gpu_metrics *g, uint32_t device, const char *call, CUptiResult r)
{
	const char *code = NULL;

	if (!api.GetResultString || api.GetResultString(r, &code) != CUPTI_SUCCESS || !code)
		code = "?";
	report(g, "no GPU metrics on device %u: %s failed: %s [%s]; tracing goes on without them",
	       device, call, reason(r), code);
}

int gpu_metrics_open(uint64_t interval_ns, struct collector *collector, void *cupti_lib,
		     gpu_metrics_report_fn report_fn, struct gpu_metrics **out, char *err,
		     size_t errlen)
{
	struct gpu_metrics *g;
	void *lib = cupti_lib ? cupti_lib : RTLD_DEFAULT;

	*out = NULL;
#define GPU_METRICS_LOAD(name)                                                                     \
	*(void **)&api.name = dlsym(lib, "cupti" #name);                                           \
	if (!api.name) {                                                                           \
		snprintf(err, errlen, "no GPU metrics: this CUPTI lacks cupti" #name " (PM "       \
			 "sampling needs CUDA 12.6 or later); tracing goes on without them");      \
		return -1;                                                                         \
	}
	GPU_METRICS_CUPTI_CALLS(GPU_METRICS_LOAD)
#undef GPU_METRICS_LOAD
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "no GPU metrics: %s", strerror(ENOMEM));
		return -1;
	}
	g->interval_ns = interval_ns;
	g->debug = getenv("GPT_TRACE_GPU_METRICS_DEBUG") && !strcmp(getenv("GPT_TRACE_GPU_METRICS_DEBUG"), "1");
	g->stop_mode = STOP_DECODE_ONLY;
	if (getenv("GPT_TRACE_GPU_METRICS_STOP")) {
		const char *mode = getenv("GPT_TRACE_GPU_METRICS_STOP");

		g->stop_mode = !strcmp(mode, "early")	  ? STOP_EARLY_DISABLE
			       : !strcmp(mode, "nodecode")  ? STOP_NO_FINAL_DECODE
			       : !strcmp(mode, "stop")	  ? STOP_NO_DISABLE
			       : !strcmp(mode, "release")   ? STOP_FULL
							    : STOP_DECODE_ONLY;
	}
	g->required_only = getenv("GPT_TRACE_GPU_METRICS_SET") &&
			   !strcmp(getenv("GPT_TRACE_GPU_METRICS_SET"), "required");
	if (getenv("GPT_TRACE_GPU_METRICS_TRY")) {
		const char *t = getenv("GPT_TRACE_GPU_METRICS_TRY");

		try_opts.deinit = strstr(t, "deinit") != NULL;
		try_opts.all = strstr(t, "all") != NULL;
	}
	g->collector = collector;
	g->report = report_fn;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->wake, NULL);
	pthread_cond_init(&g->done, NULL);
	*out = g;
	return 0;
}

static void host_free(CUpti_Profiler_Host_Object *host)
{
	gpt_host_deinitialize_params p = {
	    .structSize = GPT_HOST_SIZE(gpt_host_deinitialize_params, pHostObject)};

	if (!host || !try_opts.deinit)
		return;
	p.pHostObject = host;
	api.ProfilerHostDeinitialize(&p);
}

/*
 * A host object for chip configured with names; *passes its pass count. Returns CUPTI's result;
 * on success *host and the config image are the caller's.
 */
static CUptiResult host_configure(const char *chip, const uint8_t *availability,
				  const char *const *names, size_t count,
				  CUpti_Profiler_Host_Object **host, uint8_t **config,
				  size_t *config_size, size_t *passes)
{
	gpt_host_initialize_params init = {
	    .structSize = GPT_HOST_SIZE(gpt_host_initialize_params, pHostObject)};
	gpt_host_config_add_metrics_params add = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_add_metrics_params, numMetrics)};
	gpt_host_config_image_size_params size = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_image_size_params, configImageSize)};
	gpt_host_config_image_params image = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_image_params, pConfigImage)};
	gpt_host_num_passes_params np = {
	    .structSize = GPT_HOST_SIZE(gpt_host_num_passes_params, numOfPasses)};
	CUptiResult r;

	*host = NULL;
	*config = NULL;
	init.profilerType = GPT_CUPTI_PROFILER_TYPE_PM_SAMPLING;
	init.pChipName = chip;
	init.pCounterAvailabilityImage = availability;
	r = api.ProfilerHostInitialize(&init);
	if (r != CUPTI_SUCCESS)
		return r;
	add.pHostObject = init.pHostObject;
	add.ppMetricNames = (const char **)names;
	add.numMetrics = count;
	r = api.ProfilerHostConfigAddMetrics(&add);
	if (r == CUPTI_SUCCESS) {
		size.pHostObject = init.pHostObject;
		r = api.ProfilerHostGetConfigImageSize(&size);
	}
	if (r == CUPTI_SUCCESS) {
		image.pHostObject = init.pHostObject;
		image.configImageSize = size.configImageSize;
		image.pConfigImage = calloc(1, size.configImageSize);
		r = image.pConfigImage ? api.ProfilerHostGetConfigImage(&image)
				       : CUPTI_ERROR_OUT_OF_MEMORY;
	}
	if (r == CUPTI_SUCCESS) {
		np.configImageSize = size.configImageSize;
		np.pConfigImage = image.pConfigImage;
		r = api.ProfilerHostGetNumOfPasses(&np);
	}
	if (r != CUPTI_SUCCESS) {
		/* Not deinitialized: what CUPTI left of a refused configuration is not ours to trust. */
		free(image.pConfigImage);
		return r;
	}
	*host = init.pHostObject;
	*config = image.pConfigImage;
	*config_size = size.configImageSize;
	*passes = np.numOfPasses;
	return CUPTI_SUCCESS;
}

/* Is raw in tier: 0 the required metrics, 1 with the tensor pipes, 2 all. */
static bool in_tier(const struct wanted_metric *w, int tier)
{
	if (tier >= 2 || w->required)
		return true;
	return tier == 1 && (w->raw == GPM_TENSOR_CYCLES || w->raw == GPM_TENSOR_PCT ||
			     w->raw == GPM_HMMA_PCT);
}

/*
 * The set in at most two configurations, each with every metric's first name: the required ones
 * with the tensor pipes, else the required ones alone. One host object per try, never
 * deinitialized (see chip_free). Growing the set a metric at a time (the first version) made some
 * twenty host objects and refused configurations, and on the H200 every traced program then
 * crashed inside libnvperf_host sooner or later; with the whole list tried first (try_opts.all:
 * GH100 refuses it), one short run in four still crashed at the sampler's stop.
 */
static int chip_build(struct gpu_metrics *g, struct chip *c, const uint8_t *availability,
		      bool required_only, uint32_t device)
{
	for (int tier = required_only ? 0 : try_opts.all ? 2 : 1; tier >= 0; tier--) {
		CUpti_Profiler_Host_Object *host;
		uint8_t *config;
		size_t size, passes, n = 0;
		CUptiResult r;

		for (size_t i = 0; i < NR_WANTED; i++) {
			if (!in_tier(&wanted[i], tier))
				continue;
			c->names[n] = wanted[i].names[0];
			c->raws[n++] = wanted[i].raw;
		}
		r = host_configure(c->name, availability, c->names, n, &host, &config, &size,
				   &passes);
		if (g->debug)
			report(g, "gpu metrics debug: tier %d, %zu metrics: %s, %zu passes", tier, n,
			       r == CUPTI_SUCCESS ? "configured" : "refused", r == CUPTI_SUCCESS ? passes : 0);
		if (r != CUPTI_SUCCESS)
			continue;
		if (passes != 1) {
			free(config);
			continue;
		}
		c->host = host;
		c->config = config;
		c->config_size = size;
		c->count = n;
		return 0;
	}
	report(g, "no GPU metrics on device %u: chip %s cannot sample %s and the other required "
	       "metrics in one pass; tracing goes on without them", device, c->name, wanted[0].names[0]);
	return -1;
}

/* The host object, and the availability image it reads, stay unless try_opts.deinit. */
static void chip_free(struct chip *c)
{
	if (!c)
		return;
	host_free(c->host);
	free(c->config);
	if (try_opts.deinit)
		free(c->availability);
	free(c);
}

static struct chip *chip_setup(struct gpu_metrics *g, uint32_t device, bool required_only)
{
	CUpti_Device_GetChipName_Params name = {.structSize =
						    CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	CUpti_PmSampling_GetCounterAvailability_Params avail = {
	    .structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
	uint8_t *image = NULL;
	struct chip *c = NULL;
	CUptiResult r;

	name.deviceIndex = device;
	r = api.DeviceGetChipName(&name);
	if (r != CUPTI_SUCCESS || !name.pChipName) {
		device_failed(g, device, "cuptiDeviceGetChipName", r);
		return NULL;
	}
	/* Where profiling is restricted to administrators, this is the call that says so. */
	avail.deviceIndex = device;
	r = api.PmSamplingGetCounterAvailability(&avail);
	if (r == CUPTI_SUCCESS) {
		image = calloc(1, avail.counterAvailabilityImageSize);
		avail.pCounterAvailabilityImage = image;
		r = image ? api.PmSamplingGetCounterAvailability(&avail) : CUPTI_ERROR_OUT_OF_MEMORY;
	}
	if (r != CUPTI_SUCCESS) {
		device_failed(g, device, "cuptiPmSamplingGetCounterAvailability", r);
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out;
	snprintf(c->name, sizeof(c->name), "%s", name.pChipName);
	/*
	 * The host objects read the availability image after cuptiProfilerHostInitialize (the range
	 * profiler's chip keeps it too, metrics-cupti.c): it lives as long as the chip.
	 */
	c->availability = image;
	image = NULL;
	if (chip_build(g, c, c->availability, required_only, device) < 0) {
		chip_free(c);
		c = NULL;
	}
out:
	free(image);
	return c;
}

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
	return api.PmSamplingSetConfig(&p);
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
	r = api.PmSamplingGetCounterDataSize(&size);
	if (r != CUPTI_SUCCESS)
		return r;
	d->image = calloc(1, size.counterDataSize);
	if (!d->image)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	d->image_size = size.counterDataSize;
	init.pPmSamplingObject = d->sampler;
	init.counterDataSize = d->image_size;
	init.pCounterData = d->image;
	return api.PmSamplingCounterDataImageInitialize(&init);
}

static void device_disable(struct device *d)
{
	CUpti_PmSampling_Disable_Params p = {.structSize =
						 CUpti_PmSampling_Disable_Params_STRUCT_SIZE};

	if (!d->sampler)
		return;
	p.pPmSamplingObject = d->sampler;
	api.PmSamplingDisable(&p);
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
	r = api.PmSamplingEnable(&enable);
	if (r != CUPTI_SUCCESS)
		goto out_fail;
	d->sampler = enable.pPmSamplingObject;
	call = "cuptiPmSamplingSetConfig";
	r = device_set_config(g, d, g->chip);
	/* Only before any device samples with the chip's set: their samples need its host object. */
	if (r == CUPTI_ERROR_NOT_SUPPORTED && !g->ndevices) {
		struct chip *fallback = chip_setup(g, d->id, true);

		if (!fallback)
			goto out_disable;
		chip_free(g->chip);
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
	r = api.PmSamplingStart(&start);
	if (r != CUPTI_SUCCESS)
		goto out_fail;
	d->running = true;
	return 0;

out_fail:
	device_failed(g, d->id, call, r);
out_disable:
	device_disable(d);
	return -1;
}

static bool profiler_init(struct gpu_metrics *g, uint32_t device)
{
	CUpti_Profiler_Initialize_Params p = {.structSize =
						  CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	CUptiResult r;

	if (g->profiler_initialized || g->profiler_failed)
		return g->profiler_initialized;
	r = api.ProfilerInitialize(&p);
	if (r != CUPTI_SUCCESS) {
		g->profiler_failed = true;
		device_failed(g, device, "cuptiProfilerInitialize", r);
		return false;
	}
	g->profiler_initialized = true;
	return true;
}

static void *decode_main(void *arg);

/* Configure and start device_id's sampler (under the lock, ctx current). */
static void device_setup(struct gpu_metrics *g, uint32_t device_id, CUcontext ctx)
{
	struct timespec t0, t1;
	struct device *d;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!profiler_init(g, device_id))
		return;
	if (!g->chip && !(g->chip = chip_setup(g, device_id, g->required_only)))
		return;
	d = &g->devices[g->ndevices];
	memset(d, 0, sizeof(*d));
	d->id = device_id;
	d->ctx = ctx;
	if (device_start(g, d) < 0)
		return;
	g->ndevices++;
	if (g->debug)
		report(g, "gpu metrics debug: device %u sampling, %zu metrics, image %zu bytes",
		       device_id, g->chip->count, d->image_size);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	g->setup_ms += (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
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

/* Sample i of d's image into s; false when CUPTI gave none, or it is one to drop. */
static bool sample_read(struct gpu_metrics *g, struct device *d, size_t i,
			struct gpu_metrics_sample *s)
{
	CUpti_PmSampling_CounterData_GetSampleInfo_Params info = {
	    .structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
	gpt_host_evaluate_params eval = {
	    .structSize = GPT_HOST_SIZE(gpt_host_evaluate_params, pMetricValues)};
	const struct chip *c = g->chip;
	double values[NR_WANTED];

	info.pPmSamplingObject = d->sampler;
	info.pCounterDataImage = d->image;
	info.counterDataImageSize = d->image_size;
	info.sampleIndex = i;
	if (api.PmSamplingCounterDataGetSampleInfo(&info) != CUPTI_SUCCESS ||
	    info.endTimestamp <= info.startTimestamp)
		return false;
	/* The first sample spans from SetConfig to Start: no interval of the program's. */
	if (info.endTimestamp - info.startTimestamp > GPU_METRICS_LONG_SAMPLE * g->interval_ns) {
		d->dropped_long++;
		return false;
	}
	eval.pHostObject = c->host;
	eval.pCounterDataImage = d->image;
	eval.counterDataImageSize = d->image_size;
	eval.rangeIndex = i;
	eval.ppMetricNames = (const char **)c->names;
	eval.numMetrics = c->count;
	eval.pMetricValues = values;
	if (api.ProfilerHostEvaluateToGpuValues(&eval) != CUPTI_SUCCESS) {
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

/* Completed samples from processed on, as one batch for the collector. */
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
	batch->count = 0;
	for (; d->processed < completed; d->processed++)
		if (sample_read(g, d, d->processed, &batch->samples[batch->count]))
			batch->count++;
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

	for (int rounds = 0; rounds < 64 && d->sampler; rounds++) {
		CUpti_PmSampling_DecodeData_Params decode = {
		    .structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
		CUpti_PmSampling_GetCounterDataInfo_Params info = {
		    .structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
		size_t room;
		bool full;
		CUptiResult r;

		decode.pPmSamplingObject = d->sampler;
		decode.pCounterDataImage = d->image;
		decode.counterDataImageSize = d->image_size;
		r = api.PmSamplingDecodeData(&decode);
		if (decode.overflow || r == CUPTI_ERROR_OUT_OF_MEMORY) {
			if (!d->overflows++)
				report(g, "GPU metrics on device %u: the hardware buffer overflowed; "
				       "samples are missing (use a longer interval)", d->id);
		}
		info.pCounterDataImage = d->image;
		info.counterDataImageSize = d->image_size;
		if (api.PmSamplingGetCounterDataInfo(&info) != CUPTI_SUCCESS)
			return;
		device_hand_over(g, d, info.numCompletedSamples);
		full = decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL ||
		       info.numCompletedSamples >= info.numTotalSamples;
		room = info.numTotalSamples - info.numCompletedSamples;
		if (!full && (room * 2 >= per_period * 3 ||
			      (info.numPopulatedSamples > info.numCompletedSamples && room * 2 >= per_period)))
			return;
		if (full)
			d->image_full++;
		init.pPmSamplingObject = d->sampler;
		init.counterDataSize = d->image_size;
		init.pCounterData = d->image;
		if (api.PmSamplingCounterDataImageInitialize(&init) != CUPTI_SUCCESS)
			return;
		d->processed = 0;
		if (!full)
			return;
	}
}

/* The driver's context stack, looked up in the driver the program loaded (never linked). */
static CUresult context_push(CUcontext ctx)
{
	static CUresult (*push)(CUcontext);

	if (!push)
		*(void **)&push = dlsym(RTLD_DEFAULT, "cuCtxPushCurrent_v2");
	if (!push) {
		void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

		if (driver)
			*(void **)&push = dlsym(driver, "cuCtxPushCurrent_v2");
	}
	return push ? push(ctx) : CUDA_ERROR_NOT_INITIALIZED;
}

static void context_pop(void)
{
	static CUresult (*pop)(CUcontext *);
	CUcontext ctx;

	if (!pop)
		*(void **)&pop = dlsym(RTLD_DEFAULT, "cuCtxPopCurrent_v2");
	if (!pop) {
		void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

		if (driver)
			*(void **)&pop = dlsym(driver, "cuCtxPopCurrent_v2");
	}
	if (pop)
		pop(&ctx);
}

/* Last decode, stop, the samples written meanwhile: with d's context current. */
static void device_stop(struct gpu_metrics *g, struct device *d)
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
		report(g, "gpu metrics debug: device %u decoded, %llu samples, context %s", d->id,
		       (unsigned long long)d->samples, pushed ? "pushed" : "not current");
	if (g->stop_mode != STOP_DECODE_ONLY) {
		stop.pPmSamplingObject = d->sampler;
		api.PmSamplingStop(&stop);
		if (g->debug)
			report(g, "gpu metrics debug: device %u stopped", d->id);
		/* What the hardware wrote between the last decode and the stop. */
		if (g->stop_mode != STOP_NO_FINAL_DECODE)
			device_decode(g, d);
		if (g->stop_mode == STOP_EARLY_DISABLE)
			device_disable(d);
	}
	if (pushed)
		context_pop();
}

static void *decode_main(void *arg)
{
	struct gpu_metrics *g = arg;
	struct timespec until;
	sigset_t faults;

	/* Faults here kill the process anyway: let the crash handler save the trace first. */
	sigemptyset(&faults);
	sigaddset(&faults, SIGSEGV);
	sigaddset(&faults, SIGBUS);
	sigaddset(&faults, SIGILL);
	sigaddset(&faults, SIGFPE);
	sigaddset(&faults, SIGABRT);
	pthread_sigmask(SIG_UNBLOCK, &faults, NULL);

	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		for (size_t i = 0; i < g->ndevices; i++)
			if (g->devices[i].running)
				device_decode(g, &g->devices[i]);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += GPU_METRICS_DECODE_MS * 1000000l;
		until.tv_sec += until.tv_nsec / 1000000000l;
		until.tv_nsec %= 1000000000l;
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	g->finished = true;
	pthread_cond_broadcast(&g->done);
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int gpu_metrics_stop(struct gpu_metrics *g, unsigned timeout_ms)
{
	struct timespec until;
	int rc = 0;

	if (!g)
		return 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000l;
	until.tv_sec += until.tv_nsec / 1000000000l;
	until.tv_nsec %= 1000000000l;
	if (pthread_mutex_timedlock(&g->lock, &until) != 0)
		return -1;
	g->stopping = true;
	pthread_cond_signal(&g->wake);
	while (g->thread_started && !g->finished && rc == 0)
		rc = pthread_cond_timedwait(&g->done, &g->lock, &until);
	pthread_mutex_unlock(&g->lock);
	if (rc)
		return -1;
	if (g->thread_started)
		pthread_join(g->thread, NULL);
	g->thread_started = false;
	/* Under the lock: a context destroyed now (CUDA's teardown) stops its device too. */
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->ndevices; i++)
		device_stop(g, &g->devices[i]);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

void gpu_metrics_release(struct gpu_metrics *g)
{
	if (!g || g->stop_mode == STOP_NO_DISABLE || g->stop_mode == STOP_DECODE_ONLY)
		return;
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->ndevices; i++)
		device_disable(&g->devices[i]);
	if (g->debug)
		report(g, "gpu metrics debug: samplers disabled");
	pthread_mutex_unlock(&g->lock);
}

void gpu_metrics_context_destroy(struct gpu_metrics *g, CUcontext ctx)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->ndevices; i++)
		if (g->devices[i].ctx == ctx)
			device_stop(g, &g->devices[i]);
	pthread_mutex_unlock(&g->lock);
}

static void totals(const struct gpu_metrics *g, uint64_t *samples, uint64_t *overflows,
		   uint64_t *dropped)
{
	*samples = *overflows = *dropped = 0;
	for (size_t i = 0; i < g->ndevices; i++) {
		*samples += g->devices[i].samples;
		*overflows += g->devices[i].overflows;
		*dropped += g->devices[i].dropped_long + g->devices[i].failed_evals;
	}
}

void gpu_metrics_summary(const struct gpu_metrics *g, char *buf, size_t size)
{
	uint64_t samples, overflows, dropped;

	totals(g, &samples, &overflows, &dropped);
	buf[0] = '\0';
	if (!g->ndevices)
		return;
	snprintf(buf, size, "gpu metrics: %llu samples of %zu device%s every %.0f us, %zu metrics "
		 "(%s)%s", (unsigned long long)samples, g->ndevices, g->ndevices == 1 ? "" : "s",
		 (double)g->interval_ns / 1e3, g->chip ? g->chip->count : 0,
		 g->chip ? g->chip->name : "no chip", overflows ? ", hardware buffer overflowed" : "");
}

void gpu_metrics_describe(const struct gpu_metrics *g,
			  void (*set)(void *arg, const char *name, const char *value), void *arg)
{
	uint64_t samples, overflows, dropped, full = 0;
	char value[4096];
	size_t len = 0;

	totals(g, &samples, &overflows, &dropped);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)g->interval_ns);
	set(arg, "gpu_metrics_interval_ns", value);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)dropped);
	set(arg, "gpu_metric_samples_dropped", value);
	snprintf(value, sizeof(value), "%.1f", g->setup_ms);
	set(arg, "gpu_metrics_setup_ms", value);
	for (size_t i = 0; i < g->ndevices; i++)
		full += g->devices[i].image_full;
	snprintf(value, sizeof(value), "%llu", (unsigned long long)full);
	set(arg, "gpu_metrics_image_full", value);
	value[0] = '\0';
	for (size_t i = 0; g->chip && i < g->chip->count && len < sizeof(value); i++)
		len += (size_t)snprintf(value + len, sizeof(value) - len, "%s%s", i ? "," : "",
					g->chip->names[i]);
	set(arg, "gpu_metrics_collected", value);
}
