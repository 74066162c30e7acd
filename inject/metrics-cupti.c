/*
 * The CUPTI side of inject/metrics: per context, CUPTI's Range Profiler in auto-range,
 * kernel-replay mode for the per-launch counters, and the SASS Metrics API, with lazy patching, for
 * the ideal sector counts per instruction and their source lines. Called only from metrics.c with
 * the session lock held, on the launching thread, with the launch's context current.
 *
 * Sequence for counters, as in NVIDIA's range_profiling sample: cuptiProfilerInitialize once; per
 * chip a host object (counter availability image of the first context, config image with the
 * metrics, number of passes); per context cuptiRangeProfilerEnable, a counter data image sized for
 * a few ranges, api.RangeProfilerSetConfig(auto range, kernel replay). Per profiled launch Start
 * before and Stop after the launch call; kernel replay has run every pass by the time the launch
 * returns, so Decode and Evaluate follow at once and the image is initialized again for the next.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include "inject/metrics-internal.h"

const char *const metrics_counter_names[NR_COUNTERS] = {
    [COUNTER_LD_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    [COUNTER_LD_REQUESTS] = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    [COUNTER_ST_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    [COUNTER_ST_REQUESTS] = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    [COUNTER_DURATION] = "gpu__time_duration.sum",
};

/*
 * What Nsight Compute's UncoalescedGlobalAccess rule compares: memory_l2_theoretical_sectors_global
 * and its _ideal twin, per instruction. GH100 has no load/store split of the sector metrics, so the
 * instruction counts say which instructions are loads and which are stores.
 */
const char *const metrics_sass_names[NR_SASS] = {
    [SASS_SECTORS] = "smsp__sass_sectors_mem_global",
    [SASS_SECTORS_IDEAL] = "smsp__sass_sectors_mem_global_ideal",
    [SASS_INST_LD] = "smsp__sass_inst_executed_op_global_ld",
    [SASS_INST_ST] = "smsp__sass_inst_executed_op_global_st",
};

/*
 * CUPTI through a table: libgpt_inject.so dlopens CUPTI when CUDA starts and links no libcupti, so
 * these are looked up in the library it loaded (metrics_session_attach()).
 */
#define METRICS_CUPTI_CALLS(X)                                                                     \
	X(GetResultString)                                                                         \
	X(GetDeviceId)                                                                             \
	X(GetContextId)                                                                            \
	X(GetCubinCrc)                                                                             \
	X(GetSassToSourceCorrelation)                                                              \
	X(DeviceGetChipName)                                                                       \
	X(ProfilerInitialize)                                                                      \
	X(ProfilerDeviceSupported)                                                                 \
	X(ProfilerGetCounterAvailability)                                                          \
	X(ProfilerHostInitialize)                                                                  \
	X(ProfilerHostDeinitialize)                                                                \
	X(ProfilerHostGetMetricProperties)                                                         \
	X(ProfilerHostConfigAddMetrics)                                                            \
	X(ProfilerHostGetConfigImageSize)                                                          \
	X(ProfilerHostGetConfigImage)                                                              \
	X(ProfilerHostGetNumOfPasses)                                                              \
	X(ProfilerHostEvaluateToGpuValues)                                                         \
	X(RangeProfilerEnable)                                                                     \
	X(RangeProfilerDisable)                                                                    \
	X(RangeProfilerStart)                                                                      \
	X(RangeProfilerStop)                                                                       \
	X(RangeProfilerSetConfig)                                                                  \
	X(RangeProfilerDecodeData)                                                                 \
	X(RangeProfilerGetCounterDataSize)                                                         \
	X(RangeProfilerCounterDataImageInitialize)                                                 \
	X(RangeProfilerGetCounterDataInfo)                                                         \
	X(SassMetricsGetProperties)                                                                \
	X(SassMetricsSetConfig)                                                                    \
	X(SassMetricsUnsetConfig)                                                                  \
	X(SassMetricsEnable)                                                                       \
	X(SassMetricsDisable)                                                                      \
	X(SassMetricsGetDataProperties)                                                            \
	X(SassMetricsFlushData)

#define METRICS_CUPTI_FIELD(name) __typeof__(&cupti##name) name;
static struct {
	bool loaded;
	METRICS_CUPTI_CALLS(METRICS_CUPTI_FIELD)
} api;
#undef METRICS_CUPTI_FIELD

int metrics_cupti_load(void *lib, char *err, size_t errlen)
{
	if (api.loaded)
		return 0;
	if (!lib)
		lib = RTLD_DEFAULT;
#define METRICS_CUPTI_LOAD(name)                                                                   \
	*(void **)&api.name = dlsym(lib, "cupti" #name);                                           \
	if (!api.name) {                                                                           \
		snprintf(err, errlen,                                                              \
			 "no hardware metrics: this CUPTI lacks cupti" #name                       \
			 " (the Range Profiler and SASS Metrics APIs need CUDA 12.6 or later)");   \
		return -1;                                                                         \
	}
	METRICS_CUPTI_CALLS(METRICS_CUPTI_LOAD)
#undef METRICS_CUPTI_LOAD
	api.loaded = true;
	return 0;
}

/* Ranges the counter data image holds: one is expected per launch, the rest detect surprises. */
#define RANGES_PER_IMAGE 4

const char *metrics_cupti_reason(CUptiResult r)
{
	const char *name = NULL;

	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return "access to the GPU performance counters is restricted to administrators "
		       "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): run as root, or have an "
		       "administrator set 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
		       "in a file under /etc/modprobe.d/ and reload the nvidia module (or reboot)";
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
	case CUPTI_ERROR_HARDWARE_BUSY:
	case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
		return "another profiler (Nsight Compute, Nsight Systems, cuda-gdb or another "
		       "CUPTI tool) holds the GPU counters";
	case CUPTI_ERROR_NOT_SUPPORTED:
	case CUPTI_ERROR_INVALID_DEVICE:
	case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
		return "the device does not support CUPTI profiling in this configuration";
	default:
		if (!api.GetResultString || api.GetResultString(r, &name) != CUPTI_SUCCESS || !name)
			name = "unknown CUPTI error";
		return name;
	}
}

/* One line naming the device, the CUPTI call and the reason; the context goes on unprofiled. */
static void context_failed(struct metrics_session *s, struct metrics_context *c, const char *what,
			   const char *call, CUptiResult r)
{
	const char *name = NULL;

	if (!api.GetResultString || api.GetResultString(r, &name) != CUPTI_SUCCESS || !name)
		name = "?";
	metrics_report(s,
		       "no %s on device %u: %s failed: %s [%s]; the program continues without them",
		       what, c->device_id, call, metrics_cupti_reason(r), name);
}

struct metrics_context *metrics_context_get(struct metrics_session *s, CUcontext ctx)
{
	struct metrics_context *c;

	for (c = s->contexts; c; c = c->next)
		if (c->ctx == ctx)
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ctx = ctx;
	if (api.GetDeviceId(ctx, &c->device_id) != CUPTI_SUCCESS)
		c->device_id = 0;
	if (api.GetContextId(ctx, &c->context_id) != CUPTI_SUCCESS)
		c->context_id = 0;
	c->next = s->contexts;
	s->contexts = c;
	return c;
}

static int profiler_init(struct metrics_session *s, struct metrics_context *c, const char *what)
{
	CUpti_Profiler_Initialize_Params p = {.structSize =
						  CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	CUptiResult r;

	if (s->profiler_initialized)
		return 0;
	if (s->profiler_failed)
		return -1;
	r = api.ProfilerInitialize(&p);
	if (r != CUPTI_SUCCESS) {
		s->profiler_failed = true;
		context_failed(s, c, what, "cuptiProfilerInitialize", r);
		return -1;
	}
	s->profiler_initialized = true;
	return 0;
}

/* Says which of CUPTI's support flags is off, in one line. */
static int device_supported(struct metrics_session *s, struct metrics_context *c,
			    CUpti_Profiler_API which, const char *what)
{
	CUpti_Profiler_DeviceSupported_Params p = {
	    .structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
	const char *why = "unknown reason";
	CUptiResult r;

	p.cuDevice = (CUdevice)c->device_id;
	p.api = which;
	r = api.ProfilerDeviceSupported(&p);
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, what, "cuptiProfilerDeviceSupported", r);
		return -1;
	}
	if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return 0;
	if (p.architecture == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why =
		    "its architecture is not supported (compute capability 7.5 or later is needed)";
	else if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED)
		why = "profiling is disabled on this vGPU by the hypervisor";
	else if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "this vGPU does not support profiling";
	else if (p.confidentialCompute == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "confidential computing is on";
	else if (p.cmp == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "it is a crypto-mining processor (CMP)";
	else if (p.sli == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "SLI is on";
	else if (p.wsl == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "WSL is not supported";
	metrics_report(s,
		       "no %s on device %u: the device is not supported: %s; the program "
		       "continues without them",
		       what, c->device_id, why);
	return -1;
}

static const char *chip_name(struct metrics_session *s, struct metrics_context *c, const char *what)
{
	CUpti_Device_GetChipName_Params p = {.structSize =
						 CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	CUptiResult r;

	p.deviceIndex = c->device_id;
	r = api.DeviceGetChipName(&p);
	if (r != CUPTI_SUCCESS || !p.pChipName) {
		context_failed(s, c, what, "cuptiDeviceGetChipName", r);
		return NULL;
	}
	return p.pChipName;
}

static void chip_free(struct metrics_chip *chip)
{
	if (!chip)
		return;
	if (chip->host) {
		gpt_host_deinitialize_params p = {
		    .structSize = GPT_HOST_SIZE(gpt_host_deinitialize_params, pHostObject)};

		p.pHostObject = chip->host;
		api.ProfilerHostDeinitialize(&p);
	}
	free(chip->availability);
	free(chip->config);
	free(chip->name);
	free(chip);
}

void metrics_chips_free(struct metrics_session *s)
{
	while (s->chips) {
		struct metrics_chip *next = s->chips->next;

		chip_free(s->chips);
		s->chips = next;
	}
}

/*
 * Host object, config image and pass count for chip->name with the given metrics. Each metric is
 * looked up on its own first: cuptiProfilerHostConfigAddMetrics says only "invalid parameter" for
 * a metric the chip lacks, and the user should learn which one. Needs no GPU: the host API runs on
 * any machine (the CPU unit test calls it for GH100).
 */
static int chip_configure(struct metrics_session *s, struct metrics_chip *chip,
			  const char *const *names, size_t nr_names, uint32_t device_id)
{
	const char *what = "hardware counters", *call;
	gpt_host_initialize_params init = {
	    .structSize = GPT_HOST_SIZE(gpt_host_initialize_params, pHostObject)};
	gpt_host_config_add_metrics_params add = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_add_metrics_params, numMetrics)};
	gpt_host_config_image_size_params size = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_image_size_params, configImageSize)};
	gpt_host_config_image_params image = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_image_params, pConfigImage)};
	gpt_host_num_passes_params passes = {
	    .structSize = GPT_HOST_SIZE(gpt_host_num_passes_params, numOfPasses)};
	CUptiResult r;
	size_t i;

	init.profilerType = GPT_CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	init.pChipName = chip->name;
	init.pCounterAvailabilityImage = chip->availability;
	r = api.ProfilerHostInitialize(&init);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiProfilerHostInitialize";
		goto out_fail;
	}
	chip->host = init.pHostObject;

	for (i = 0; i < nr_names; i++) {
		gpt_host_metric_properties_params prop = {
		    .structSize = GPT_HOST_SIZE(gpt_host_metric_properties_params, metricType)};

		prop.pHostObject = chip->host;
		prop.pMetricName = names[i];
		r = api.ProfilerHostGetMetricProperties(&prop);
		if (r != CUPTI_SUCCESS) {
			metrics_report(s,
				       "no %s on device %u: metric '%s' is not available on chip "
				       "%s (%s); the program continues without them",
				       what, device_id, names[i], chip->name,
				       metrics_cupti_reason(r));
			return -1;
		}
	}

	add.pHostObject = chip->host;
	add.ppMetricNames = (const char **)names;
	add.numMetrics = nr_names;
	r = api.ProfilerHostConfigAddMetrics(&add);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiProfilerHostConfigAddMetrics";
		goto out_fail;
	}
	size.pHostObject = chip->host;
	r = api.ProfilerHostGetConfigImageSize(&size);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiProfilerHostGetConfigImageSize";
		goto out_fail;
	}
	chip->config_size = size.configImageSize;
	chip->config = calloc(1, chip->config_size);
	if (!chip->config) {
		metrics_report(s, "no %s on device %u: %s", what, device_id, strerror(ENOMEM));
		return -1;
	}
	image.pHostObject = chip->host;
	image.configImageSize = chip->config_size;
	image.pConfigImage = chip->config;
	r = api.ProfilerHostGetConfigImage(&image);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiProfilerHostGetConfigImage";
		goto out_fail;
	}
	passes.configImageSize = chip->config_size;
	passes.pConfigImage = chip->config;
	r = api.ProfilerHostGetNumOfPasses(&passes);
	chip->passes = r == CUPTI_SUCCESS ? passes.numOfPasses : 0;
	metrics_debug(s, "chip %s: config image %zu bytes, %zu passes", chip->name,
		      chip->config_size, chip->passes);
	return 0;

out_fail:
	metrics_report(s, "no %s on device %u: %s failed: %s; the program continues without them",
		       what, device_id, call, metrics_cupti_reason(r));
	return -1;
}

/* The chip of c, set up on its first context: counter availability, then the host side. */
static struct metrics_chip *chip_get(struct metrics_session *s, struct metrics_context *c)
{
	const char *what = "hardware counters";
	CUpti_Profiler_GetCounterAvailability_Params avail = {
	    .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
	struct metrics_chip *chip;
	const char *name;
	CUptiResult r;

	name = chip_name(s, c, what);
	if (!name)
		return NULL;
	for (chip = s->chips; chip; chip = chip->next)
		if (!strcmp(chip->name, name))
			return chip;

	chip = calloc(1, sizeof(*chip));
	if (!chip || !(chip->name = strdup(name)))
		goto out_nomem;

	/* Where profiling is restricted to administrators, this is the call that says so. */
	avail.ctx = c->ctx;
	r = api.ProfilerGetCounterAvailability(&avail);
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, what, "cuptiProfilerGetCounterAvailability", r);
		goto out_free;
	}
	chip->availability = calloc(1, avail.counterAvailabilityImageSize);
	if (!chip->availability)
		goto out_nomem;
	avail.pCounterAvailabilityImage = chip->availability;
	r = api.ProfilerGetCounterAvailability(&avail);
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, what, "cuptiProfilerGetCounterAvailability", r);
		goto out_free;
	}
	if (chip_configure(s, chip, metrics_counter_names, NR_COUNTERS, c->device_id) < 0)
		goto out_free;
	chip->next = s->chips;
	s->chips = chip;
	return chip;

out_nomem:
	metrics_report(s, "no %s on device %u: %s", what, c->device_id, strerror(ENOMEM));
out_free:
	chip_free(chip);
	return NULL;
}

static CUptiResult counter_data_reset(struct metrics_context *c)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params p = {
	    .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};

	p.pRangeProfilerObject = c->range;
	p.counterDataSize = c->counter_data_size;
	p.pCounterData = c->counter_data;
	return api.RangeProfilerCounterDataImageInitialize(&p);
}

static CUptiResult range_set_config(struct metrics_context *c)
{
	CUpti_RangeProfiler_SetConfig_Params p = {
	    .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};

	p.pRangeProfilerObject = c->range;
	p.configSize = c->chip->config_size;
	p.pConfig = c->chip->config;
	p.counterDataImageSize = c->counter_data_size;
	p.pCounterDataImage = c->counter_data;
	p.range = CUPTI_AutoRange;
	p.replayMode = CUPTI_KernelReplay;
	p.maxRangesPerPass = RANGES_PER_IMAGE;
	p.numNestingLevels = 1;
	p.minNestingLevel = 1;
	p.passIndex = 0;
	p.targetNestingLevel = 1;
	return api.RangeProfilerSetConfig(&p);
}

static void range_disable(struct metrics_context *c)
{
	CUpti_RangeProfiler_Disable_Params p = {.structSize =
						    CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};

	if (!c->range)
		return;
	p.pRangeProfilerObject = c->range;
	api.RangeProfilerDisable(&p);
	c->range = NULL;
	c->configured = false;
}

/* Range profiler on for c: enable, counter data image, config. */
static int range_enable(struct metrics_session *s, struct metrics_context *c)
{
	const char *what = "hardware counters";
	CUpti_RangeProfiler_Enable_Params enable = {
	    .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	CUpti_RangeProfiler_GetCounterDataSize_Params size = {
	    .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
	CUptiResult r;

	enable.ctx = c->ctx;
	r = api.RangeProfilerEnable(&enable);
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, what, "cuptiRangeProfilerEnable", r);
		return -1;
	}
	c->range = enable.pRangeProfilerObject;

	if (!c->counter_data) {
		size.pRangeProfilerObject = c->range;
		size.pMetricNames = (const char **)metrics_counter_names;
		size.numMetrics = NR_COUNTERS;
		size.maxNumOfRanges = RANGES_PER_IMAGE;
		size.maxNumRangeTreeNodes = RANGES_PER_IMAGE;
		r = api.RangeProfilerGetCounterDataSize(&size);
		if (r != CUPTI_SUCCESS) {
			context_failed(s, c, what, "cuptiRangeProfilerGetCounterDataSize", r);
			goto out_disable;
		}
		c->counter_data = calloc(1, size.counterDataSize);
		if (!c->counter_data) {
			metrics_report(s, "no hardware counters on device %u: %s", c->device_id,
				       strerror(ENOMEM));
			goto out_disable;
		}
		c->counter_data_size = size.counterDataSize;
	}
	r = counter_data_reset(c);
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, what, "cuptiRangeProfilerCounterDataImageInitialize", r);
		goto out_disable;
	}
	r = range_set_config(c);
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, what, "cuptiRangeProfilerSetConfig", r);
		goto out_disable;
	}
	c->configured = true;
	return 0;

out_disable:
	range_disable(c);
	return -1;
}

int metrics_counters_setup(struct metrics_session *s, struct metrics_context *c)
{
	const char *what = "hardware counters";

	if (c->counters_state == CTX_READY)
		return 0;
	if (c->counters_state == CTX_FAILED)
		return -1;
	c->counters_state = CTX_FAILED;
	if (profiler_init(s, c, what) < 0)
		return -1;
	if (device_supported(s, c, CUPTI_PROFILER_RANGE_PROFILING, what) < 0)
		return -1;
	c->chip = chip_get(s, c);
	if (!c->chip)
		return -1;
	if (range_enable(s, c) < 0)
		return -1;
	c->counters_state = CTX_READY;
	return 0;
}

int metrics_counters_start(struct metrics_session *s, struct metrics_context *c)
{
	CUpti_RangeProfiler_Start_Params p = {.structSize =
						  CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	CUptiResult r;

	if (!c->range && range_enable(s, c) < 0)
		goto out_fail;
	p.pRangeProfilerObject = c->range;
	r = api.RangeProfilerStart(&p);
	if (r != CUPTI_SUCCESS && !c->configured) {
		/* The image was initialized again after the last decode: configure it anew. */
		metrics_debug(s, "start without SetConfig failed (%d), configuring again", r);
		r = range_set_config(c);
		if (r == CUPTI_SUCCESS) {
			c->configured = true;
			r = api.RangeProfilerStart(&p);
		}
	}
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, "hardware counters", "cuptiRangeProfilerStart", r);
		goto out_fail;
	}
	return 0;

out_fail:
	range_disable(c);
	c->counters_state = CTX_FAILED;
	return -1;
}

/*
 * Stop, decode and evaluate the launch's range into row. Returns 0 with row->has_counters set, 1
 * when the launch left no range (it failed to launch), or a negative error.
 */
int metrics_counters_stop(struct metrics_session *s, struct metrics_context *c,
			  struct metrics_row *row)
{
	const char *what = "hardware counters";
	CUpti_RangeProfiler_Stop_Params stop = {.structSize =
						    CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	CUpti_RangeProfiler_DecodeData_Params decode = {
	    .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
	    .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
	gpt_host_evaluate_params eval = {
	    .structSize = GPT_HOST_SIZE(gpt_host_evaluate_params, pMetricValues)};
	const char *call;
	CUptiResult r;
	int ret = 1;

	stop.pRangeProfilerObject = c->range;
	r = api.RangeProfilerStop(&stop);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiRangeProfilerStop";
		goto out_fail;
	}
	if (!stop.isAllPassSubmitted)
		metrics_debug(s, "stop: not all passes submitted (pass %zu)", stop.passIndex);
	decode.pRangeProfilerObject = c->range;
	r = api.RangeProfilerDecodeData(&decode);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiRangeProfilerDecodeData";
		goto out_fail;
	}
	info.pCounterDataImage = c->counter_data;
	info.counterDataImageSize = c->counter_data_size;
	r = api.RangeProfilerGetCounterDataInfo(&info);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiRangeProfilerGetCounterDataInfo";
		goto out_fail;
	}
	metrics_debug(s, "correlation %u: %zu range(s), %zu dropped", row->correlation_id,
		      info.numTotalRanges, decode.numOfRangeDropped);
	if (info.numTotalRanges == 0) {
		s->ranges_missing++;
	} else {
		/* The session lock keeps other launches out, so range 0 is this launch. */
		s->ranges_extra += info.numTotalRanges - 1;
		eval.pHostObject = c->chip->host;
		eval.pCounterDataImage = c->counter_data;
		eval.counterDataImageSize = c->counter_data_size;
		eval.rangeIndex = 0;
		eval.ppMetricNames = (const char **)metrics_counter_names;
		eval.numMetrics = NR_COUNTERS;
		eval.pMetricValues = row->counters;
		r = api.ProfilerHostEvaluateToGpuValues(&eval);
		if (r != CUPTI_SUCCESS) {
			call = "cuptiProfilerHostEvaluateToGpuValues";
			goto out_fail;
		}
		row->has_counters = true;
		row->passes = (uint32_t)c->chip->passes;
		ret = 0;
	}
	r = counter_data_reset(c);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiRangeProfilerCounterDataImageInitialize";
		goto out_fail;
	}
	c->configured = false;
	return ret;

out_fail:
	context_failed(s, c, what, call, r);
	range_disable(c);
	c->counters_state = CTX_FAILED;
	return -1;
}

int metrics_sass_setup(struct metrics_session *s, struct metrics_context *c)
{
	const char *what = "source-line metrics";
	CUpti_SassMetrics_Config config[NR_SASS];
	CUpti_SassMetricsSetConfig_Params set = {.structSize =
						     CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
	const char *chip;
	CUptiResult r;
	int i;

	if (c->sass_state == CTX_READY)
		return 0;
	if (c->sass_state == CTX_FAILED)
		return -1;
	c->sass_state = CTX_FAILED;
	if (c->device_id >= METRICS_MAX_DEVICES || s->sass_device[c->device_id] < 0)
		return -1;
	if (s->sass_device[c->device_id] > 0)
		goto out_ready;
	s->sass_device[c->device_id] = -1;
	if (profiler_init(s, c, what) < 0)
		return -1;
	if (device_supported(s, c, CUPTI_PROFILER_SASS_METRICS, what) < 0)
		return -1;
	chip = chip_name(s, c, what);
	if (!chip)
		return -1;
	for (i = 0; i < NR_SASS; i++) {
		CUpti_SassMetrics_GetProperties_Params prop = {
		    .structSize = CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};

		prop.pChipName = chip;
		prop.pMetricName = metrics_sass_names[i];
		r = api.SassMetricsGetProperties(&prop);
		if (r != CUPTI_SUCCESS) {
			metrics_report(s,
				       "no %s on device %u: SASS metric '%s' is not available on "
				       "chip %s (%s)",
				       what, c->device_id, metrics_sass_names[i], chip,
				       metrics_cupti_reason(r));
			return -1;
		}
		s->sass_ids[i] = prop.metric.metricId;
		config[i].metricId = prop.metric.metricId;
		config[i].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
	}
	s->sass_ids_known = true;
	set.numOfMetricConfig = NR_SASS;
	set.pConfigs = config;
	set.deviceIndex = c->device_id;
	r = api.SassMetricsSetConfig(&set);
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, what, "cuptiSassMetricsSetConfig", r);
		return -1;
	}
	s->sass_device[c->device_id] = 1;
out_ready:
	c->sass_state = CTX_READY;
	return 0;
}

int metrics_sass_start(struct metrics_session *s, struct metrics_context *c)
{
	CUpti_SassMetricsEnable_Params p = {.structSize =
						CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
	CUptiResult r;

	p.ctx = c->ctx;
	/* Lazy: only the function launched inside the enable/disable pair is patched. */
	p.enableLazyPatching = 1;
	r = api.SassMetricsEnable(&p);
	if (r != CUPTI_SUCCESS) {
		context_failed(s, c, "source-line metrics", "cuptiSassMetricsEnable", r);
		c->sass_state = CTX_FAILED;
		return -1;
	}
	return 0;
}

/* file:line of one SASS offset; *file is malloc'd (NULL when unknown). */
static void sass_source(struct metrics_session *s, const CUpti_SassMetrics_Data *d, char **file,
			uint32_t *line)
{
	CUpti_GetSassToSourceCorrelationParams p = {.size =
							CUpti_GetSassToSourceCorrelationParamsSize};
	struct metrics_cubin *cubin;
	CUptiResult r;

	*file = NULL;
	*line = 0;
	cubin = metrics_cubin_find(s, d->cubinCrc);
	if (!cubin)
		return;
	p.cubin = cubin->data;
	p.cubinSize = cubin->size;
	p.functionName = d->functionName;
	p.pcOffset = d->pcOffset;
	r = api.GetSassToSourceCorrelation(&p);
	if (r != CUPTI_SUCCESS || !p.fileName) {
		free(p.fileName);
		free(p.dirName);
		return;
	}
	*line = p.lineNumber;
	if (p.fileName[0] != '/' && p.dirName && p.dirName[0]) {
		size_t len = strlen(p.dirName) + strlen(p.fileName) + 2;

		*file = malloc(len);
		if (*file)
			snprintf(*file, len, "%s/%s", p.dirName, p.fileName);
		free(p.fileName);
	} else {
		*file = p.fileName;
	}
	free(p.dirName);
}

static void sass_add(struct metrics_access *a, const uint64_t v[NR_SASS])
{
	if (v[SASS_INST_LD]) {
		a->ld_sectors += v[SASS_SECTORS];
		a->ld_ideal += v[SASS_SECTORS_IDEAL];
		a->ld_inst += v[SASS_INST_LD];
	} else if (v[SASS_INST_ST]) {
		a->st_sectors += v[SASS_SECTORS];
		a->st_ideal += v[SASS_SECTORS_IDEAL];
		a->st_inst += v[SASS_INST_ST];
	}
}

/* Record order for grouping: one instruction is one (cubin, function, offset). */
static int record_cmp(const void *a, const void *b)
{
	const CUpti_SassMetrics_Data *x = *(const CUpti_SassMetrics_Data *const *)a;
	const CUpti_SassMetrics_Data *y = *(const CUpti_SassMetrics_Data *const *)b;

	if (x->cubinCrc != y->cubinCrc)
		return x->cubinCrc < y->cubinCrc ? -1 : 1;
	if (x->functionIndex != y->functionIndex)
		return x->functionIndex < y->functionIndex ? -1 : 1;
	if (x->pcOffset != y->pcOffset)
		return x->pcOffset < y->pcOffset ? -1 : 1;
	return 0;
}

/* One instruction's metrics, summed into the launch's row and the kernel's source line. */
static void sass_instruction(struct metrics_session *s, struct metrics_kernel *k,
			     struct metrics_row *row, const CUpti_SassMetrics_Data *d,
			     const uint64_t v[NR_SASS], bool *resolved)
{
	struct metrics_line *line;
	uint32_t lineno;
	char *file;

	if (!v[SASS_INST_LD] && !v[SASS_INST_ST])
		return;
	if (d->functionName && strcmp(d->functionName, k->name))
		metrics_debug(s, "SASS record of %s while %s ran", d->functionName, k->name);
	sass_add(&row->sass, v);
	sass_source(s, d, &file, &lineno);
	if (file)
		*resolved = true;
	else
		s->sass_unresolved++;
	line = metrics_kernel_line(k, file, lineno);
	free(file);
	if (line)
		sass_add(&line->access, v);
}

/*
 * Sum the flushed records into the kernel, its lines and the launch's row. CUPTI gives one record
 * per instruction and metric (coalesced_copy: 6 records = 2 sector metrics x 2 instructions + one
 * load and one store count), so the records are grouped by instruction first.
 */
static void sass_collect(struct metrics_session *s, struct metrics_kernel *k,
			 struct metrics_row *row, const CUpti_SassMetrics_Data *data,
			 size_t nr_records, size_t nr_instances)
{
	const CUpti_SassMetrics_Data **order;
	bool resolved = false;
	uint64_t v[NR_SASS];
	size_t i, j;
	int m;

	order = malloc(nr_records * sizeof(*order));
	if (!order)
		return;
	for (i = 0; i < nr_records; i++)
		order[i] = &data[i];
	qsort(order, nr_records, sizeof(*order), record_cmp);
	for (i = 0; i < nr_records; i++) {
		const CUpti_SassMetrics_Data *d = order[i];

		if (i == 0 || record_cmp(&order[i - 1], &order[i]))
			memset(v, 0, sizeof(v));
		for (j = 0; j < nr_instances; j++)
			for (m = 0; m < NR_SASS; m++)
				if (d->pInstanceValues[j].metricId == s->sass_ids[m])
					v[m] += d->pInstanceValues[j].value;
		if (i + 1 == nr_records || record_cmp(&order[i], &order[i + 1]))
			sass_instruction(s, k, row, d, v, &resolved);
	}
	free(order);
	if (resolved)
		s->source_kernels++;
}

/*
 * cuCtxSynchronize from the driver the program has loaded: looked up rather than linked so that
 * libgpt_inject.so needs no libcuda at link time (it is only ever loaded into CUDA programs).
 */
CUresult metrics_context_synchronize(void)
{
	static CUresult (*sync)(void);
	void *driver;

	if (!sync)
		*(void **)&sync = dlsym(RTLD_DEFAULT, "cuCtxSynchronize");
	if (!sync) {
		/* The runtime loads libcuda with RTLD_LOCAL: ask for that copy by name. */
		driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (driver)
			*(void **)&sync = dlsym(driver, "cuCtxSynchronize");
	}
	return sync ? sync() : CUDA_ERROR_NOT_INITIALIZED;
}

int metrics_sass_stop(struct metrics_session *s, struct metrics_context *c,
		      struct metrics_kernel *k, struct metrics_row *row)
{
	CUpti_SassMetricsGetDataProperties_Params props = {
	    .structSize = CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
	CUpti_SassMetricsFlushData_Params flush = {
	    .structSize = CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
	CUpti_SassMetricsDisable_Params disable = {.structSize =
						       CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
	CUpti_SassMetrics_InstanceValue *values = NULL;
	CUpti_SassMetrics_Data *data = NULL;
	const char *call = NULL;
	CUptiResult r, failed = CUPTI_SUCCESS;
	size_t n = 0, i;
	CUresult cr;
	int ret = -1;

	/* The patched kernel must have finished before its counts can be read. */
	cr = metrics_context_synchronize();
	if (cr != CUDA_SUCCESS)
		metrics_debug(s, "cuCtxSynchronize: %d", cr);
	if (s->sass_synced)
		s->sass_synced(c->ctx);
	props.ctx = c->ctx;
	r = api.SassMetricsGetDataProperties(&props);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiSassMetricsGetDataProperties";
		failed = r;
		goto out_disable;
	}
	n = props.numOfPatchedInstructionRecords;
	metrics_debug(s, "%s: %zu SASS records, %zu instances", k->name, n, props.numOfInstances);
	if (n && props.numOfInstances) {
		data = calloc(n, sizeof(*data));
		values = calloc(n * props.numOfInstances, sizeof(*values));
		if (!data || !values) {
			metrics_report(s, "no source-line metrics: %s", strerror(ENOMEM));
			goto out_disable;
		}
		for (i = 0; i < n; i++) {
			data[i].structSize = sizeof(data[i]);
			data[i].pInstanceValues = &values[i * props.numOfInstances];
		}
		flush.ctx = c->ctx;
		flush.numOfPatchedInstructionRecords = n;
		flush.numOfInstances = props.numOfInstances;
		flush.pMetricsData = data;
		r = api.SassMetricsFlushData(&flush);
		if (r != CUPTI_SUCCESS) {
			call = "cuptiSassMetricsFlushData";
			failed = r;
			goto out_disable;
		}
		sass_collect(s, k, row, data, n, props.numOfInstances);
		/*
		 * Patched global memory instructions that all counted zero: measured on the H200
		 * with CUPTI's kernel activity tracing on, where the same launch's kernel record
		 * also came back with corrupt timestamps. Better no source lines than wrong ones.
		 */
		if (!row->sass.ld_inst && !row->sass.st_inst) {
			metrics_report(s,
				       "no source-line metrics on device %u: the SASS instrumentation "
				       "of %s counted nothing (seen beside kernel activity tracing); "
				       "source lines are off for this context",
				       c->device_id, k->short_name);
			c->sass_state = CTX_FAILED;
			goto out_disable;
		}
	}
	row->has_sass = true;
	k->sass = row->sass;
	k->sass_done = true;
	s->sass_kernels++;
	ret = 0;

out_disable:
	disable.ctx = c->ctx;
	r = api.SassMetricsDisable(&disable);
	if (r != CUPTI_SUCCESS && !call) {
		call = "cuptiSassMetricsDisable";
		failed = r;
	}
	if (disable.numOfDroppedRecords)
		metrics_debug(s, "%zu SASS records dropped", disable.numOfDroppedRecords);
	if (call) {
		context_failed(s, c, "source-line metrics", call, failed);
		c->sass_state = CTX_FAILED;
		ret = -1;
	}
	if (data)
		for (i = 0; i < n; i++)
			free((void *)data[i].functionName);
	free(data);
	free(values);
	return ret;
}

/* Undo cuptiSassMetricsSetConfig on every device it was done for. */
void metrics_sass_unset(struct metrics_session *s)
{
	uint32_t dev;

	for (dev = 0; dev < METRICS_MAX_DEVICES; dev++) {
		CUpti_SassMetricsUnsetConfig_Params p = {
		    .structSize = CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};

		if (s->sass_device[dev] <= 0)
			continue;
		p.deviceIndex = dev;
		api.SassMetricsUnsetConfig(&p);
		s->sass_device[dev] = 0;
	}
}

void metrics_context_release(struct metrics_session *s, struct metrics_context *c)
{
	(void)s;
	range_disable(c);
	free(c->counter_data);
	c->counter_data = NULL;
	c->counter_data_size = 0;
	c->counters_state = CTX_FAILED;
	c->sass_state = CTX_FAILED;
}

uint64_t metrics_cubin_crc(const void *cubin, size_t size)
{
	CUpti_GetCubinCrcParams p = {.size = CUpti_GetCubinCrcParamsSize};

	p.cubin = cubin;
	p.cubinSize = size;
	if (api.GetCubinCrc(&p) != CUPTI_SUCCESS)
		return 0;
	return p.cubinCrc;
}
