/*
 * A stand-in for libcupti.so, loaded by libgpt_inject.so through GPT_TRACE_CUPTI_LIB, so that the
 * library's CUPTI wiring runs end to end on a machine without GPU: which callbacks it enables, what
 * its callback does with kernel launches (the hardware-metrics hooks), and what it writes at exit.
 * It keeps the one subscriber's callback and the enabled callback ids, delivers kernel activity
 * records on flush, and exports fake_cupti_launch() for the test program (fake_launch.c) to play a
 * launch: API enter, its kernel record, API exit. The profiling calls answer as a GPU whose counters
 * are restricted to administrators would (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), or, with
 * FAKE_CUPTI_COUNTERS=1, as the H200 did: the range profiler works (a strided gather: 32 load
 * sectors per request, 300 us) and the kernel record of a replayed launch has no timestamps.
 */
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inject/metrics-host.h"

#define MAX_PENDING 4096	/* records per delivered buffer (CUPTI: about 35,000 per 8 MiB) */

/* The library's flush thread flushes while the program launches: pending is shared. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

static CUpti_CallbackFunc subscriber_callback;
static void *subscriber_data;
static CUpti_BuffersCallbackRequestFunc buffer_requested;
static CUpti_BuffersCallbackCompleteFunc buffer_completed;
static unsigned api_callbacks_enabled;	/* runtime and driver API callbacks turned on */
static int module_callback_enabled;
static int profiler_callbacks_enabled;	/* cudaProfilerStart/Stop (--capture-range) */
static int context_callback_enabled;
static int context_announced;
static CUpti_ActivityKernel10 pending[MAX_PENDING];
static size_t npending;
static int range_started;	/* between cuptiRangeProfilerStart and Stop: launches are replayed */
static unsigned ranges;		/* launches inside the current range */

#define FAKE_DURATION_NS 300000.0

static int counters_work(void)
{
	const char *v = getenv("FAKE_CUPTI_COUNTERS");

	return v && !strcmp(v, "1");
}

static int pm_works(void);

CUptiResult cuptiGetVersion(uint32_t *version)
{
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			   void *userdata)
{
	if (subscriber_callback)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	subscriber_callback = callback;
	subscriber_data = userdata;
	*subscriber = (CUpti_SubscriberHandle)&subscriber_callback;
	return CUPTI_SUCCESS;
}

/*
 * No cuptiActivityDisable here: the library takes its absence as "no source-line metrics" (the
 * metrics tests rely on that). Unsubscribing stands for the library's stepping aside instead: the
 * kernel records stop, as its disabled activity kinds would.
 */
static int kernel_activity = 1;
/* CUPTI_ACTIVITY_KIND_MEMORY2 enabled and FAKE_CUPTI_MEMORY=1: each launch also allocates and frees
 * 1 MB of device memory (a CUpti_ActivityMemory4 pair in kernel-record-sized slots). */
static int memory_activity;
_Static_assert(sizeof(CUpti_ActivityMemory4) <= sizeof(CUpti_ActivityKernel10), "a memory record fits a slot");

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	(void)subscriber;
	subscriber_callback = NULL;
	subscriber_data = NULL;
	api_callbacks_enabled = 0;
	kernel_activity = 0;
	memory_activity = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
				CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	(void)subscriber;
	if (enable && (domain == CUPTI_CB_DOMAIN_RUNTIME_API ||
		       domain == CUPTI_CB_DOMAIN_DRIVER_API))
		api_callbacks_enabled++;
	if (enable && domain == CUPTI_CB_DOMAIN_RESOURCE &&
	    cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED)
		module_callback_enabled = 1;
	if (enable && domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ||
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000))
		profiler_callbacks_enabled = 1;
	if (enable && domain == CUPTI_CB_DOMAIN_RESOURCE &&
	    cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
		context_callback_enabled = 1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
	       : result == CUPTI_ERROR_NOT_SUPPORTED	      ? "CUPTI_ERROR_NOT_SUPPORTED"
							      : "CUPTI_ERROR_UNKNOWN";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		kernel_activity = 1;
	if (kind == CUPTI_ACTIVITY_KIND_MEMORY2) {
		const char *v = getenv("FAKE_CUPTI_MEMORY");

		memory_activity = v && !strcmp(v, "1");
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
					   CUpti_BuffersCallbackCompleteFunc completed)
{
	buffer_requested = requested;
	buffer_completed = completed;
	return CUPTI_SUCCESS;
}

static CUptiResult flush_locked(void)
{
	uint8_t *buffer = NULL;
	size_t size = 0, max_records = 0, need = npending * sizeof(pending[0]);

	if (!npending || !buffer_requested)
		return CUPTI_SUCCESS;
	buffer_requested(&buffer, &size, &max_records);
	if (!buffer || size < need)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	memcpy(buffer, pending, need);
	npending = 0;
	buffer_completed(NULL, 0, buffer, size, need);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	CUptiResult r;

	(void)flag;
	pthread_mutex_lock(&pending_lock);
	r = flush_locked();
	pthread_mutex_unlock(&pending_lock);
	return r;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
					      size_t *dropped)
{
	(void)context;
	(void)stream_id;
	*dropped = 0;
	return CUPTI_SUCCESS;
}

/* Records are whole CUpti_ActivityKernel10 structs, back to back (their size is 8-aligned). */
CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	uint8_t *next = *record ? (uint8_t *)*record + sizeof(CUpti_ActivityKernel10) : buffer;

	if (next + sizeof(CUpti_ActivityKernel10) > buffer + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)next;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *device_id)
{
	(void)context;
	*device_id = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetContextId(CUcontext context, uint32_t *context_id)
{
	(void)context;
	*context_id = 1;
	return CUPTI_SUCCESS;
}

/* The profiling entry points the metrics module looks up. */
CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *params)
{
	(void)params;
	return counters_work() || pm_works() ? CUPTI_SUCCESS : CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
}

CUptiResult cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params *params)
{
	params->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *params)
{
	params->pChipName = "GH100";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *params)
{
	if (params->pCounterAvailabilityImage)
		memset(params->pCounterAvailabilityImage, 0, params->counterAvailabilityImageSize);
	params->counterAvailabilityImageSize = 16;
	return CUPTI_SUCCESS;
}

/* The host object keeps the availability image and reads it later, as CUPTI's does. */
static const volatile uint8_t *host_availability;

CUptiResult cuptiProfilerHostInitialize(gpt_host_initialize_params *params)
{
	host_availability = params->pCounterAvailabilityImage;
	params->pHostObject = (CUpti_Profiler_Host_Object *)&subscriber_data;
	return CUPTI_SUCCESS;
}

/* Said on stderr: calls CUPTI 13.0 did not survive on the H200 (inject/gpu-metrics.c). */
static void said(const char *call)
{
	fprintf(stderr, "fake-cupti: %s\n", call);
}

CUptiResult cuptiProfilerHostDeinitialize(gpt_host_deinitialize_params *params)
{
	(void)params;
	said(__func__);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetMetricProperties(gpt_host_metric_properties_params *params)
{
	(void)params;
	return CUPTI_SUCCESS;
}

/* FAKE_CUPTI_REFUSE=S: a set with a metric named with S is refused, as GH100 refuses NVLink bytes. */
CUptiResult cuptiProfilerHostConfigAddMetrics(gpt_host_config_add_metrics_params *params)
{
	const char *refuse = getenv("FAKE_CUPTI_REFUSE");

	for (size_t i = 0; refuse && *refuse && i < params->numMetrics; i++)
		if (strstr(params->ppMetricNames[i], refuse))
			return CUPTI_ERROR_UNKNOWN;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImageSize(gpt_host_config_image_size_params *params)
{
	params->configImageSize = 32;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImage(gpt_host_config_image_params *params)
{
	memset(params->pConfigImage, 0, params->configImageSize);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetNumOfPasses(gpt_host_num_passes_params *params)
{
	/* The range profiler's set took 3 passes on the H200; the PM sampler's must take one. */
	params->numOfPasses = pm_works() ? 1 : 3;
	return CUPTI_SUCCESS;
}

static atomic_int pm_exiting;

/* A strided gather of 2^24 floats, as the H200 measured it. FAKE_CUPTI_PM=slow: 200 ms a sample
 * once the program exits: a last decode (25 samples a round) takes 5 s, longer than the exit waits. */
CUptiResult cuptiProfilerHostEvaluateToGpuValues(gpt_host_evaluate_params *params)
{
	const char *pm = getenv("FAKE_CUPTI_PM");

	if (host_availability && host_availability[0] == 0xA5)
		return CUPTI_ERROR_UNKNOWN;
	if (pm && !strcmp(pm, "slow") && atomic_load(&pm_exiting))
		nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL);
	for (size_t i = 0; i < params->numMetrics; i++) {
		const char *name = params->ppMetricNames[i];

		params->pMetricValues[i] =
			strstr(name, "gpu__time_duration")	? FAKE_DURATION_NS
			: strstr(name, "sectors_pipe_lsu_mem_global_op_ld") ? 16777216.0
			: strstr(name, "sectors")		? 2097152.0
								: 524288.0;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *params)
{
	params->pRangeProfilerObject = (CUpti_RangeProfiler_Object *)&subscriber_data;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *params)
{
	(void)params;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *params)
{
	params->counterDataSize = 64;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerCounterDataImageInitialize(
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params *params)
{
	(void)params;
	ranges = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *params)
{
	(void)params;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *params)
{
	(void)params;
	range_started = 1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *params)
{
	params->isAllPassSubmitted = 1;
	range_started = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *params)
{
	params->numOfRangeDropped = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *params)
{
	params->numTotalRanges = ranges;
	return CUPTI_SUCCESS;
}

#define NOT_SUPPORTED(name)                                                                        \
	CUptiResult name(void *params);                                                            \
	CUptiResult name(void *params)                                                             \
	{                                                                                          \
		(void)params;                                                                      \
		return CUPTI_ERROR_NOT_SUPPORTED;                                                  \
	}
NOT_SUPPORTED(cuptiGetCubinCrc)
NOT_SUPPORTED(cuptiGetSassToSourceCorrelation)
NOT_SUPPORTED(cuptiSassMetricsGetProperties)
NOT_SUPPORTED(cuptiSassMetricsSetConfig)
NOT_SUPPORTED(cuptiSassMetricsUnsetConfig)
NOT_SUPPORTED(cuptiSassMetricsEnable)
NOT_SUPPORTED(cuptiSassMetricsDisable)
NOT_SUPPORTED(cuptiSassMetricsGetDataProperties)
NOT_SUPPORTED(cuptiSassMetricsFlushData)

/* The library's clock (CLOCK_MONOTONIC): this CUPTI registers no clock of its own. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* For the test program. */
/*
 * PM sampling (inject/gpu-metrics.c): refused as on a GPU whose counters need root, or with
 * FAKE_CUPTI_PM=1 a sampler that completes 25 samples of 100 us per decode; each image holds
 * maxSamples of them, so a long run refills it. The image's first bytes are checked on every call,
 * and its last byte is written, so that a wrong size shows under valgrind or ASan. FAKE_CUPTI_PM=hang
 * is the same sampler whose decode never returns once the program's main has ended (fake_launch
 * calls fake_cupti_exiting()), as NVPW's AcknowledgeRecordBuffer spun at exit on the H200.
 */
struct fake_image {
	uint32_t magic, capacity, completed;
};
#define FAKE_IMAGE_MAGIC 0x504d5331u
#define FAKE_SAMPLE_NS 100000ull
static uint64_t pm_next_start = 1000000000ull;
static int pm_running;

static int pm_works(void)
{
	const char *v = getenv("FAKE_CUPTI_PM");

	return v && (!strcmp(v, "1") || !strcmp(v, "hang") || !strcmp(v, "slow"));
}

void fake_cupti_exiting(void);
void fake_cupti_exiting(void)
{
	atomic_store(&pm_exiting, 1);
}

CUptiResult cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
	if (!pm_works())
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	if (p->pCounterAvailabilityImage)
		memset(p->pCounterAvailabilityImage, 0, p->counterAvailabilityImageSize);
	p->counterAvailabilityImageSize = 64;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{
	p->pPmSamplingObject = (CUpti_PmSampling_Object *)&pm_running;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
	(void)p;
	said(__func__);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
	return p->configSize && p->pConfig && p->samplingInterval ? CUPTI_SUCCESS
								  : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
	(void)p;
	pm_running = 1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
	(void)p;
	said(__func__);
	pm_running = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
	p->counterDataSize = sizeof(struct fake_image) + 64 * (size_t)p->maxSamples;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingCounterDataImageInitialize(
    CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
	struct fake_image *image = (struct fake_image *)p->pCounterData;

	image->magic = FAKE_IMAGE_MAGIC;
	image->capacity = (uint32_t)((p->counterDataSize - sizeof(*image)) / 64);
	image->completed = 0;
	p->pCounterData[p->counterDataSize - 1] = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
	struct fake_image *image = (struct fake_image *)p->pCounterDataImage;

	if (image->magic != FAKE_IMAGE_MAGIC)
		return CUPTI_ERROR_INVALID_PARAMETER;
	while (atomic_load(&pm_exiting) && !strcmp(getenv("FAKE_CUPTI_PM"), "hang"))
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	image->completed += 25;
	p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
	if (image->completed >= image->capacity) {
		image->completed = image->capacity;
		p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
	}
	p->overflow = 0;
	p->pCounterDataImage[p->counterDataImageSize - 1] = 1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
	const struct fake_image *image = (const struct fake_image *)p->pCounterDataImage;

	if (image->magic != FAKE_IMAGE_MAGIC)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->numTotalSamples = image->capacity;
	p->numPopulatedSamples = image->completed;
	p->numCompletedSamples = image->completed;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingCounterDataGetSampleInfo(
    CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
	const struct fake_image *image = (const struct fake_image *)p->pCounterDataImage;

	if (image->magic != FAKE_IMAGE_MAGIC || p->sampleIndex >= image->completed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	/* Samples are read once each, in order: one clock for all of them. */
	p->startTimestamp = pm_next_start;
	p->endTimestamp = pm_next_start + FAKE_SAMPLE_NS;
	pm_next_start += FAKE_SAMPLE_NS;
	return CUPTI_SUCCESS;
}

unsigned fake_cupti_api_callbacks(void);
int fake_cupti_module_callback(void);
void fake_cupti_launch(uint32_t correlation_id, const char *kernel, int records);
void fake_cupti_profiler(int start);

/* The program's cudaProfilerStart (start 1) or cudaProfilerStop: enter and exit callbacks. */
void fake_cupti_profiler(int start)
{
	CUpti_CallbackId cbid = start ? CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
				      : CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000;
	CUpti_CallbackData call = {
		.callbackSite = CUPTI_API_ENTER,
		.functionName = start ? "cudaProfilerStart" : "cudaProfilerStop",
		.context = (CUcontext)&subscriber_data,
	};

	if (!profiler_callbacks_enabled)
		return;
	subscriber_callback(subscriber_data, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &call);
	call.callbackSite = CUPTI_API_EXIT;
	subscriber_callback(subscriber_data, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &call);
}

unsigned fake_cupti_api_callbacks(void)
{
	return api_callbacks_enabled;
}

int fake_cupti_module_callback(void)
{
	return module_callback_enabled;
}

/*
 * A runtime cudaLaunchKernel of kernel with correlation_id: the API enter callback (when enabled),
 * records kernel records with that id (as kernel replay might, one per pass), the exit callback.
 */
void fake_cupti_launch(uint32_t correlation_id, const char *kernel, int records)
{
	CUpti_CallbackData call = {
		.callbackSite = CUPTI_API_ENTER,
		.functionName = "cudaLaunchKernel",
		.context = (CUcontext)&subscriber_data,
		.correlationId = correlation_id,
		.symbolName = kernel,
	};

	/* The first launch creates the context, as the runtime's lazy initialisation does. */
	if (context_callback_enabled && !context_announced++) {
		CUpti_ResourceData created = { .context = (CUcontext)&subscriber_data };

		subscriber_callback(subscriber_data, CUPTI_CB_DOMAIN_RESOURCE,
				    CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &created);
	}
	if (api_callbacks_enabled)
		subscriber_callback(subscriber_data, CUPTI_CB_DOMAIN_RUNTIME_API,
				    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &call);
	if (range_started) {
		/* Kernel replay runs the kernel once per pass inside the launch call. */
		struct timespec replay = { 0, 3 * (long)FAKE_DURATION_NS };

		nanosleep(&replay, NULL);
		ranges++;
	}
	pthread_mutex_lock(&pending_lock);
	for (int i = 0; i < records && kernel_activity; i++) {
		CUpti_ActivityKernel10 *k;

		/* A full buffer is delivered, as CUPTI does. */
		if (npending == MAX_PENDING)
			flush_locked();
		if (npending == MAX_PENDING)
			break;
		k = &pending[npending++];

		memset(k, 0, sizeof(*k));
		k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		/* Replayed: one record, no timestamps (as on the H200). */
		k->start = range_started ? 0 : now_ns() + 1000 * (uint64_t)i;
		k->end = range_started ? 0 : k->start + 5000;
		k->correlationId = correlation_id;
		k->contextId = 1;
		k->streamId = 7;
		k->name = kernel;
		k->gridX = k->gridY = k->gridZ = 1;
		k->blockX = k->blockY = k->blockZ = 32;
	}
	for (int op = 0; op < 2 && memory_activity && !range_started; op++) {
		CUpti_ActivityMemory4 *m;

		if (npending == MAX_PENDING)
			flush_locked();
		if (npending == MAX_PENDING)
			break;
		m = (CUpti_ActivityMemory4 *)&pending[npending];
		memset(&pending[npending++], 0, sizeof(pending[0]));
		m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
		m->memoryOperationType = op ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
					    : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
		m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m->correlationId = correlation_id;
		m->address = 0x7f0000000000ull + ((uint64_t)correlation_id << 20);
		m->bytes = 1 << 20;
		m->timestamp = now_ns() + (uint64_t)op * 10000;
		m->deviceId = 0;
		m->contextId = 1;
		m->streamId = CUPTI_INVALID_STREAM_ID;
	}
	pthread_mutex_unlock(&pending_lock);
	call.callbackSite = CUPTI_API_EXIT;
	/* The first launch creates the context, as the runtime's lazy initialisation does. */
	if (context_callback_enabled && !context_announced++) {
		CUpti_ResourceData created = { .context = (CUcontext)&subscriber_data };

		subscriber_callback(subscriber_data, CUPTI_CB_DOMAIN_RESOURCE,
				    CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &created);
	}
	if (api_callbacks_enabled)
		subscriber_callback(subscriber_data, CUPTI_CB_DOMAIN_RUNTIME_API,
				    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &call);
}
