/*
 * Everything that talks to CUPTI (see inject.h): the subscription, the activity kinds and API
 * records enabled, the buffers, the callbacks dispatched, stepping aside for the program's own
 * profiler. Its parts (cupti-private.h): CUPTI found, loaded and its function table (cupti-load.c),
 * the hardware-metrics launches and the record iterator (cupti-launch.c), the synchronisations
 * (cupti-sync.c).
 *
 * Activity records: kernels (concurrent), copies (plain and peer), sets, synchronisations, devices,
 * contexts and streams; host API spans only for the calls that launch, copy, set, synchronise,
 * record or wait on events, create streams and launch graphs (cuptiActivityEnableRuntimeApi/
 * DriverApi per callback id, chosen by name so that new versions of a call are covered), because
 * recording every runtime call is what makes CUPTI expensive for PyTorch (DESIGN.md).
 *
 * Hardware metrics (GPT_TRACE_METRICS, inject/metrics.h): only then are the kernel-launch API
 * callbacks and the module-loaded callback enabled, and our callback hands them to the metrics
 * session (cupti-launch.c); without metrics the subscriber sees the same few resource callbacks as
 * before, so the default path costs nothing more.
 */
#define _GNU_SOURCE
#include "inject/inject.h"
#include "inject/cupti-private.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "inject/clock.h"
#include "inject/gpu-metrics.h"
#include "inject/metrics.h"

static CUpti_SubscriberHandle subscriber;
static struct collector *_Atomic sink;	/* NULL once stopped */
static atomic_ullong dropped_records;
static unsigned api_calls_enabled;
static int api_selection_off;	/* the default selection turned off by a pause (on demand) */
static char kinds_failed[256];
static struct metrics_session *metrics;	/* NULL: no hardware metrics */
static struct gpu_metrics *_Atomic gpu_metrics;	/* NULL: no GPU metrics sampling */
static CUpti_ActivityKind kinds_enabled[16];
static size_t nkinds_enabled;
static atomic_int yielded;		/* the program's own profiler has CUPTI now */
static pthread_mutex_t yield_lock = PTHREAD_MUTEX_INITIALIZER;

/* The kernel-launch entry points the metrics session hooks, both sites (docs/metrics.md). */
static const CUpti_CallbackId metrics_runtime_launches[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};

static const CUpti_CallbackId metrics_driver_launches[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

/* Contexts alive, for per-context dropped counts. */
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext contexts[64];
static size_t ncontexts;

/*
 * Prefixes of the API calls recorded by default (GPT_TRACE_API=default): what issues and waits for
 * GPU work, and what the report blames GPU idle time on when the host sits in it (allocation and
 * freeing, which synchronizes; module loading and JIT linking). The last two groups are rare in a
 * steady loop, so they cost nothing there.
 */
static const char *const default_runtime_calls[] = {
	"cudaLaunch",	       "cudaMemcpy",	       "cudaMemset",	    "cudaDeviceSynchronize",
	"cudaThreadSynchronize", "cudaStreamSynchronize", "cudaStreamWaitEvent", "cudaStreamCreate",
	"cudaStreamDestroy",   "cudaEventRecord",      "cudaEventSynchronize", "cudaEventCreate",
	"cudaEventDestroy",    "cudaGraphLaunch",      "cudaMalloc",	    "cudaFree",
	"cudaHostAlloc",       "cudaHostRegister",     "cudaHostUnregister", "cudaMemPool",
	NULL,
};

static const char *const default_driver_calls[] = {
	"cuLaunch",	     "cuMemcpy",	     "cuMemsetD",	   "cuCtxSynchronize",
	"cuStreamSynchronize", "cuStreamWaitEvent",   "cuStreamCreate",	   "cuStreamDestroy",
	"cuEventRecord",     "cuEventSynchronize", "cuEventCreate",	   "cuEventDestroy",
	"cuGraphLaunch",     "cuMemAlloc",	     "cuMemFree",	   "cuMemHostAlloc",
	"cuMemHostRegister", "cuMemCreate",	     "cuMemMap",	   "cuMemRelease",
	"cuModuleLoad",	     "cuLibraryLoad",	     "cuLinkComplete",	   "cuMemUnmap",
	"cuMemAddressReserve", "cuMemAddressFree",   "cuMemSetAccess",	   "cuMemHostUnregister",
	"cuMemPool",	     NULL,
};

static uint64_t CUPTIAPI cupti_clock(void)
{
	return gpt_clock_now();
}

static uint64_t cupti_timestamp(void)
{
	uint64_t t = 0;

	cupti.GetTimestamp(&t);
	return t;
}

/* Returns how far timestamps taken before (the origin, early NVTX events) must move. */
static int64_t clock_settle(const struct inject_config *config)
{
	uint64_t theirs = 0;
	int64_t delta;

	if (config->monotonic_clock && cupti.ActivityRegisterTimestampCallback &&
	    cupti.ActivityRegisterTimestampCallback(cupti_clock) == CUPTI_SUCCESS)
		return 0;
	if (!cupti.GetTimestamp || cupti.GetTimestamp(&theirs) != CUPTI_SUCCESS)
		return 0;
	delta = (int64_t)(theirs - gpt_clock_now());
	if (config->monotonic_clock) {
		/* A CUPTI that refuses our clock: keep ours, shifted onto CUPTI's. */
		gpt_clock_offset += delta;
		return delta;
	}
	gpt_clock_source = cupti_timestamp;
	gpt_clock_offset = 0;
	/* CUPTI's clock is CLOCK_REALTIME on Linux: no shift, unless that ever changes. */
	return delta > 1000000 || delta < -1000000 ? delta : 0;
}

static void context_add(CUcontext ctx)
{
	pthread_mutex_lock(&contexts_lock);
	if (ncontexts < sizeof(contexts) / sizeof(contexts[0]))
		contexts[ncontexts++] = ctx;
	pthread_mutex_unlock(&contexts_lock);
}

static void context_remove(CUcontext ctx)
{
	size_t dropped = 0;

	if (cupti.ActivityGetNumDroppedRecords(ctx, 0, &dropped) == CUPTI_SUCCESS)
		atomic_fetch_add(&dropped_records, dropped);
	pthread_mutex_lock(&contexts_lock);
	for (size_t i = 0; i < ncontexts; i++)
		if (contexts[i] == ctx) {
			contexts[i] = contexts[--ncontexts];
			break;
		}
	pthread_mutex_unlock(&contexts_lock);
}

/*
 * --capture-range=cudaProfilerApi (capture.c): the program's cudaProfilerStart/Stop and the driver's
 * cuProfilerStart/Stop (torch.cuda.profiler.start()/stop() call the runtime's). Both sites open: a
 * cudaProfilerStart that initialises CUDA may reach us only at its exit.
 */
static const struct {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	int start;
	const char *name;
} capture_calls[] = {
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 1,
	  "cudaProfilerStart" },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 0,
	  "cudaProfilerStop" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, 1, "cuProfilerStart" },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, 0, "cuProfilerStop" },
};

/* capture.c's handler of those calls (a callback: capture.c calls into this file, not back). */
static _Atomic(cupti_profiler_fn) profiler_hook;

void cupti_trace_on_profiler_calls(cupti_profiler_fn hook)
{
	atomic_store(&profiler_hook, hook);
}

static void capture_enable(void)
{
	if (!atomic_load(&profiler_hook))
		return;
	for (size_t i = 0; i < sizeof(capture_calls) / sizeof(capture_calls[0]); i++)
		cupti.EnableCallback(1, subscriber, capture_calls[i].domain, capture_calls[i].cbid);
}

static int capture_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *call = data;

	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return 0;
	for (size_t i = 0; i < sizeof(capture_calls) / sizeof(capture_calls[0]); i++)
		if (capture_calls[i].domain == domain && capture_calls[i].cbid == cbid) {
			cupti_profiler_fn hook = atomic_load(&profiler_hook);

			if (hook && (capture_calls[i].start || call->callbackSite == CUPTI_API_ENTER))
				hook(capture_calls[i].start, capture_calls[i].name);
			return 1;
		}
	return 0;
}

static void CUPTIAPI cupti_callback(void *userdata, CUpti_CallbackDomain domain,
				    CUpti_CallbackId cbid, const void *data)
{
	const CUpti_ResourceData *resource = data;

	(void)userdata;
	if (capture_callback(domain, cbid, data))
		return;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		const struct sync_call *sync = cupti_sync_call_find(domain, cbid);

		if (sync)
			cupti_sync_callback(sync, data, &sink);
		else if (metrics)
			cupti_launch_callback(metrics, &sink, domain, cbid, data);
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_RESOURCE)
		return;
	if (metrics && cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
		const CUpti_ModuleResourceData *module = resource->resourceDescriptor;

		metrics_module_loaded(metrics, module->pCubin, module->cubinSize);
		return;
	}
	if (metrics && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
		metrics_context_destroy(metrics, resource->context);
	if (!atomic_load(&sink))
		return;
	if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
		struct gpu_metrics *sampling = atomic_load(&gpu_metrics);
		uint32_t device;

		context_add(resource->context);
		if (sampling && cupti.GetDeviceId &&
		    cupti.GetDeviceId(resource->context, &device) == CUPTI_SUCCESS)
			gpu_metrics_device(sampling, device, resource->context);
	} else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		gpu_metrics_context_destroy(atomic_load(&gpu_metrics), resource->context);
		/*
		 * Deliver what the context has completed while it still exists: a program that
		 * resets its device before exiting would otherwise lose records at our atexit.
		 */
		cupti.ActivityFlushAll(0);
		context_remove(resource->context);
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	struct collector *collector = atomic_load(&sink);

	*max_records = 0;
	*buffer = collector ? collector_buffer_get(collector, size) : NULL;
	if (!*buffer)
		*size = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	struct collector *collector = atomic_load(&sink);
	size_t dropped = 0;

	if (cupti.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		atomic_fetch_add(&dropped_records, dropped);
	if (collector)
		collector_submit_buffer(collector, buffer, size, valid);
	else
		free(buffer);
}

int cupti_trace_subscribe(const struct inject_config *config, int64_t *shift, char *err,
			  size_t errlen)
{
	CUptiResult result;

	if (cupti_load(err, errlen) < 0)
		return -1;
	if (cupti.Subscribe_v2) {
		char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = "";
		CUpti_SubscriberParams params = {
			.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
			.subscriberName = "gpt-trace",
			.oldSubscriberName = holder,
			.oldSubscriberSize = sizeof(holder),
		};

		result = cupti.Subscribe_v2(&subscriber, cupti_callback, NULL, &params);
		if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
			snprintf(err, errlen, "another profiler holds CUPTI (%s): running untraced",
				 holder[0] ? holder : "name not given");
			return -1;
		}
	} else {
		result = cupti.Subscribe(&subscriber, cupti_callback, NULL);
		if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
			snprintf(err, errlen, "another profiler holds CUPTI (nsys, ncu, "
				 "compute-sanitizer or a framework's profiler): running untraced");
			return -1;
		}
	}
	if (result != CUPTI_SUCCESS) {
		snprintf(err, errlen, "cannot subscribe to CUPTI: %s: running untraced",
			 cupti_result(result));
		return -1;
	}
	/* Before any kind is enabled: a registered clock must be in place for every record. */
	*shift = clock_settle(config);
	return 0;
}

/*
 * GPT_TRACE_KINDS (a measurement knob, not a user option): a comma-separated subset of the names
 * passed to enable_kind() below; unset enables them all. bench/overhead/torch-probe.sh uses it to
 * find out which activity kind costs what on PyTorch's many runtime calls.
 */
static int kind_wanted(const char *name)
{
	const char *list = getenv("GPT_TRACE_KINDS");
	size_t n = strlen(name);

	if (!list)
		return 1;
	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

static void enable_kind(CUpti_ActivityKind kind, const char *name)
{
	if (!kind_wanted(name))
		return;
	if (cupti.ActivityEnable(kind) != CUPTI_SUCCESS) {
		size_t n = strlen(kinds_failed);

		snprintf(kinds_failed + n, sizeof(kinds_failed) - n, "%s%s", n ? "," : "", name);
	} else if (nkinds_enabled < sizeof(kinds_enabled) / sizeof(kinds_enabled[0])) {
		kinds_enabled[nkinds_enabled++] = kind;
	}
}

static int has_prefix(const char *name, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (strncmp(name, *prefixes, strlen(*prefixes)) == 0)
			return 1;
	return 0;
}

/* Enable API records for the calls whose names start with one of prefixes. */
static void enable_api_calls(CUpti_CallbackDomain domain, uint32_t ncbids,
			     CUptiResult (*enable)(CUpti_CallbackId, uint8_t),
			     const char *const *prefixes, uint8_t on)
{
	/* A newer CUPTI may know more calls than our headers: look a little further. */
	for (uint32_t cbid = 1; cbid < ncbids + 256; cbid++) {
		const char *name = NULL;

		if (cupti.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		if (has_prefix(name, prefixes) && enable(cbid, on) == CUPTI_SUCCESS && on)
			api_calls_enabled++;
	}
}

/* Bind the metrics session to our CUPTI and enable the callbacks it needs. */
static void metrics_enable(struct metrics_session *session)
{
	char err[256];
	size_t i;

	if (metrics_session_attach(session, cupti.lib, err, sizeof(err)) < 0) {
		inject_say("%s", err);
		return;
	}
	metrics = session;
	/* Source lines by default, now that kernel tracing can step aside for the SASS launch. */
	if (cupti.ActivityDisable) {
		metrics_session_sass_hooks(session, cupti_kernel_tracing_pause, cupti_kernel_synced,
					   cupti_kernel_tracing_resume);
		metrics_session_default_source(session, true);
	}
	for (i = 0; i < sizeof(metrics_runtime_launches) / sizeof(metrics_runtime_launches[0]); i++)
		cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
				     metrics_runtime_launches[i]);
	for (i = 0; i < sizeof(metrics_driver_launches) / sizeof(metrics_driver_launches[0]); i++)
		cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
				     metrics_driver_launches[i]);
	cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
			     CUPTI_CBID_RESOURCE_MODULE_LOADED);
}

int cupti_trace_enable(const struct inject_config *config, struct collector *collector,
		       struct metrics_session *session, char *err, size_t errlen)
{
	CUpti_ActivityKind kernel = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	CUptiResult result;
	uint8_t zeroed = 1;
	size_t zeroed_size = sizeof(zeroed);

	atomic_store(&sink, collector);
	/* Thread ids as the kernel knows them (gettid), to match NVTX and ThreadNames. */
	if (cupti.SetThreadIdType)
		cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	/* Our buffers come zeroed from the writer's pool: spare CUPTI the memset on the app thread. */
	if (cupti.ActivitySetAttribute)
		cupti.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size,
					   &zeroed);
	result = cupti.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (result == CUPTI_SUCCESS)
		result = cupti.ActivityEnable(kernel);
	if (result == CUPTI_SUCCESS)
		kinds_enabled[nkinds_enabled++] = kernel;
	if (result != CUPTI_SUCCESS) {
		atomic_store(&sink, NULL);
		snprintf(err, errlen, "cannot enable CUPTI kernel records: %s: running untraced",
			 cupti_result(result));
		return -1;
	}
	cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
			     CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
			     CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (session)
		metrics_enable(session);
	capture_enable();
	enable_kind(CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy");
	enable_kind(CUPTI_ACTIVITY_KIND_MEMCPY2, "memcpy2");
	enable_kind(CUPTI_ACTIVITY_KIND_MEMSET, "memset");
	if (kind_wanted("synchronization"))
		cupti_sync_enable(subscriber);
	enable_kind(CUPTI_ACTIVITY_KIND_DEVICE, "device");
	enable_kind(CUPTI_ACTIVITY_KIND_CONTEXT, "context");
	/* One record per stream created (priority, flags): TARGET_INFO_CUDA_STREAM. */
	enable_kind(CUPTI_ACTIVITY_KIND_STREAM, "stream");
	/* GPU memory: one record per allocation and per release (CUDA_GPU_MEMORY_USAGE_EVENTS), and
	 * the stream-ordered pools' events; the writer bounds their rows (WRITER_MEMORY_MAX). */
	enable_kind(CUPTI_ACTIVITY_KIND_MEMORY2, "memory");
	enable_kind(CUPTI_ACTIVITY_KIND_MEMORY_POOL, "memory");
	switch (config->api) {
	case INJECT_API_ALL:
		enable_kind(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime");
		enable_kind(CUPTI_ACTIVITY_KIND_DRIVER, "driver");
		break;
	case INJECT_API_DEFAULT:
		if (cupti.GetCallbackName && cupti.ActivityEnableRuntimeApi &&
		    cupti.ActivityEnableDriverApi) {
			enable_api_calls(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
					 cupti.ActivityEnableRuntimeApi, default_runtime_calls, 1);
			enable_api_calls(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
					 cupti.ActivityEnableDriverApi, default_driver_calls, 1);
		} else {
			/* A CUPTI without per-call selection: all runtime calls, as nsys does. */
			enable_kind(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime");
		}
		break;
	case INJECT_API_NONE:
		break;
	}
	return 0;
}

void cupti_trace_flush(int forced)
{
	/* Once yielded, the buffers CUPTI holds are the program's profiler's: not ours to flush. */
	if (cupti.ActivityFlushAll && !atomic_load(&yielded))
		cupti.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

uint64_t cupti_trace_stop(void)
{
	size_t dropped = 0;

	pthread_mutex_lock(&contexts_lock);
	for (size_t i = 0; i < ncontexts; i++)
		if (cupti.ActivityGetNumDroppedRecords(contexts[i], 0, &dropped) == CUPTI_SUCCESS)
			atomic_fetch_add(&dropped_records, dropped);
	pthread_mutex_unlock(&contexts_lock);
	if (cupti.ActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS)
		atomic_fetch_add(&dropped_records, dropped);
	/* Records completed from now on are freed unread; CUPTI gets no more buffers. */
	atomic_store(&sink, NULL);
	return atomic_load(&dropped_records);
}

const char *cupti_api_name(int event_class, uint32_t cbid)
{
	const char *name = NULL;

	if (!cupti.GetCallbackName ||
	    cupti.GetCallbackName(event_class ? CUPTI_CB_DOMAIN_DRIVER_API
					      : CUPTI_CB_DOMAIN_RUNTIME_API,
				  cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

void cupti_trace_describe(struct collector *collector)
{
	char value[64];
	uint32_t version = 0;

	if (cupti.GetVersion && cupti.GetVersion(&version) == CUPTI_SUCCESS) {
		snprintf(value, sizeof(value), "%u", version);
		collector_set_meta(collector, "cupti_version", value);
	}
	collector_set_meta(collector, "cupti_library", cupti.path);
	snprintf(value, sizeof(value), "%u", api_calls_enabled);
	collector_set_meta(collector, "api_calls_selected", value);
	collector_set_meta(collector, "time_clock",
			   gpt_clock_source == cupti_timestamp ? "CUPTI (cuptiGetTimestamp)"
			   : gpt_clock_offset		       ? "CLOCK_MONOTONIC shifted onto CUPTI's"
							       : "CLOCK_MONOTONIC (registered with CUPTI)");
	if (kinds_failed[0])
		collector_set_meta(collector, "cupti_kinds_unavailable", kinds_failed);
}

/*
 * Stepping aside for the program's own profiler (torch.profiler's Kineto, a CUPTI tool of its own):
 * CUPTI has one subscriber and one set of activity buffer callbacks per process before CUDA 13.3,
 * and we took them first. When the program asks for either (the interposed cuptiSubscribe,
 * cuptiSubscribe_v2 and cuptiActivityRegisterCallbacks below), we hand over everything CUPTI holds
 * for us (a forced flush), disable the activity kinds and API records we enabled, unsubscribe, and
 * let the program's call through: it then gets exactly what it would have untraced. Our trace ends
 * its CUPTI collection there (GPT_META cupti_yielded_at_ns, docs/schema.md); NVTX events and the
 * rest of the trace go on to the end. We do not take CUPTI back when the program lets go: Kineto
 * keeps its subscription for the life of the process.
 *
 * Our timestamp callback stays registered (CUPTI has no documented way to remove it), so the
 * program's records are on CLOCK_MONOTONIC instead of CUPTI's default clock; their count and
 * durations are the same.
 */
int cupti_trace_yield(void)
{
	int done = 0;

	pthread_mutex_lock(&yield_lock);
	if (atomic_load(&yielded) || !cupti.lib || !subscriber || !atomic_load(&sink))
		goto out;
	cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	atomic_store(&yielded, 1);
	if (cupti.ActivityDisable) {
		for (size_t i = 0; i < nkinds_enabled; i++)
			cupti.ActivityDisable(kinds_enabled[i]);
		cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
		cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
	}
	if (cupti.GetCallbackName && cupti.ActivityEnableRuntimeApi && cupti.ActivityEnableDriverApi &&
	    api_calls_enabled) {
		enable_api_calls(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
				 cupti.ActivityEnableRuntimeApi, default_runtime_calls, 0);
		enable_api_calls(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
				 cupti.ActivityEnableDriverApi, default_driver_calls, 0);
	}
	if (cupti.Unsubscribe)
		cupti.Unsubscribe(subscriber);
	subscriber = NULL;
	done = 1;
out:
	pthread_mutex_unlock(&yield_lock);
	return done;
}

void *cupti_trace_library(void)
{
	return cupti.lib;
}

void cupti_trace_gpu_metrics(struct gpu_metrics *sampling)
{
	atomic_store(&gpu_metrics, sampling);
}

int cupti_trace_yielded(void)
{
	return atomic_load(&yielded);
}

/* What the program's taking CUPTI does (inject.c hands it in: step aside, say so, note it). */
static _Atomic(cupti_wanted_fn) wanted_hook;

void cupti_trace_on_wanted(cupti_wanted_fn hook)
{
	atomic_store(&wanted_hook, hook);
}

/*
 * Capture windows (capture.c, --start-later): between windows the kinds that record events
 * (kernels, copies, sets, API calls) are off, so an armed process pays almost nothing; device,
 * context and stream records stay on (rare, and needed whenever a window opens). The writer's gate
 * still makes the edges exact (collector/capture-windows.h).
 */
void cupti_trace_pause(int pause)
{
	pthread_mutex_lock(&yield_lock);
	if (atomic_load(&yielded) || !subscriber || !cupti.ActivityDisable)
		goto out;
	for (size_t i = 0; i < nkinds_enabled; i++) {
		CUpti_ActivityKind kind = kinds_enabled[i];

		if (kind == CUPTI_ACTIVITY_KIND_DEVICE || kind == CUPTI_ACTIVITY_KIND_CONTEXT ||
		    kind == CUPTI_ACTIVITY_KIND_STREAM)
			continue;
		if (pause)
			cupti.ActivityDisable(kind);
		else
			cupti.ActivityEnable(kind);
	}
	/*
	 * The default selection of API calls, once turned off call by call, did not come back when
	 * turned on again the same way: an on-demand window of a PyTorch loop had its kernels and no
	 * API record (CUPTI 13.0, H200, 2026-11-27), while --api all's kinds came back (30,874 API
	 * records in 0.5 s). So the first pause turns the selection off for good, and windows record
	 * every runtime and driver call through the kinds, as --api all does (docs/run.md).
	 */
	if (cupti.GetCallbackName && cupti.ActivityEnableRuntimeApi && cupti.ActivityEnableDriverApi &&
	    api_calls_enabled) {
		unsigned enabled = api_calls_enabled;

		if (pause && !api_selection_off) {
			enable_api_calls(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
					 cupti.ActivityEnableRuntimeApi, default_runtime_calls, 0);
			enable_api_calls(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
					 cupti.ActivityEnableDriverApi, default_driver_calls, 0);
			api_selection_off = 1;
		}
		if (pause) {
			cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
			cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
		} else {
			cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
			cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
		}
		api_calls_enabled = enabled;	/* a count of the calls selected, not of toggles */
	}
out:
	pthread_mutex_unlock(&yield_lock);
}

#ifndef GPT_INJECT_NO_INTERPOSE
/* The program's CUPTI function: ours when loaded, else the next definition after us. */
static void cupti_wanted(const char *name, const void *caller)
{
	cupti_wanted_fn hook = atomic_load(&wanted_hook);

	if (hook)
		hook(name, caller);
}

static void *cupti_real(void *loaded, const char *name)
{
	return loaded ? loaded : dlsym(RTLD_NEXT, name);
}

__attribute__((visibility("default"))) CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *handle,
								  CUpti_CallbackFunc callback,
								  void *userdata)
{
	__typeof__(&cuptiSubscribe) real = cupti_real((void *)cupti.Subscribe, "cuptiSubscribe");

	cupti_wanted("cuptiSubscribe", __builtin_return_address(0));
	return real ? real(handle, callback, userdata) : CUPTI_ERROR_NOT_INITIALIZED;
}

__attribute__((visibility("default"))) CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *handle,
								     CUpti_CallbackFunc callback,
								     void *userdata,
								     CUpti_SubscriberParams *params)
{
	__typeof__(&cuptiSubscribe_v2) real =
		cupti_real((void *)cupti.Subscribe_v2, "cuptiSubscribe_v2");

	cupti_wanted("cuptiSubscribe_v2", __builtin_return_address(0));
	return real ? real(handle, callback, userdata, params) : CUPTI_ERROR_NOT_INITIALIZED;
}

__attribute__((visibility("default"))) CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
			       CUpti_BuffersCallbackCompleteFunc completed)
{
	__typeof__(&cuptiActivityRegisterCallbacks) real = cupti_real(
		(void *)cupti.ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");

	cupti_wanted("cuptiActivityRegisterCallbacks", __builtin_return_address(0));
	return real ? real(requested, completed) : CUPTI_ERROR_NOT_INITIALIZED;
}
#endif
