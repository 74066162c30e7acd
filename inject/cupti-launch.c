/*
 * The kernel launches of the hardware-metrics session (inject/metrics.h; see cupti-private.h).
 * Only with GPT_TRACE_METRICS are the kernel-launch API callbacks enabled, and cupti.c hands them
 * here: each is passed to the session, and each launch the session profiles with kernel replay is
 * noted with the collector, which keeps one kernel record per launch (collector.h). Around each
 * kernel's one SASS-instrumented launch, kernel activity tracing is paused (the two
 * instrumentations do not mix on the H200) and the library makes that launch's kernel record; the
 * record iterator (cupti_next_record) reads those and drops the session's own synchronisations.
 */
#define _GNU_SOURCE
#include "inject/cupti-private.h"
#include "inject/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The launch carrying a kernel's SASS instrumentation runs with kernel activity tracing paused
 * (metrics_session_sass_hooks: on the H200 the two instrumentations did not mix), so CUPTI makes no
 * kernel record for it. The library makes one instead, from what the launch calls say: name,
 * grid, block, dynamic shared memory, stream, correlation id of the outermost call; it spans from
 * the launch call's return (its exit callback) to the moment the module's synchronization
 * returned (cupti_kernel_synced): the kernel ran by then, mostly inside that span (an
 * approximation: it may have begun during the call). Registers, static shared and local memory are
 * unknown (0). Such a record travels in a buffer of our own,
 * marked by its first bytes, which cupti_next_record() reads itself.
 *
 * The module synchronizes the context twice inside such a launch call (before pausing tracing,
 * and before reading the counts): those cuCtxSynchronize calls are the library's, not the
 * program's, so cupti_sync_callback() ignores synchronizations inside a launch call and
 * cupti_next_record() drops their driver API records (known by the launch's correlation id).
 */
static pthread_mutex_t internal_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t internal_ids[1024];	/* correlation ids of the instrumented launches */
static size_t ninternal;

static void internal_sync_note(uint32_t correlation_id)
{
	pthread_mutex_lock(&internal_lock);
	if (ninternal < sizeof(internal_ids) / sizeof(internal_ids[0])) {
		internal_ids[ninternal] = correlation_id;
		__atomic_store_n(&ninternal, ninternal + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&internal_lock);
}

static int internal_sync_record(const CUpti_Activity *record)
{
	const CUpti_ActivityAPI *api = (const CUpti_ActivityAPI *)record;
	int found = 0;

	if (record->kind != CUPTI_ACTIVITY_KIND_DRIVER ||
	    api->cbid != CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize)
		return 0;
	pthread_mutex_lock(&internal_lock);
	for (size_t i = 0; i < ninternal && !found; i++)
		found = internal_ids[i] == api->correlationId;
	pthread_mutex_unlock(&internal_lock);
	return found;
}
static const char synth_magic[8] = "gptsynth";

struct synth_buffer {
	char magic[8];
	CUpti_ActivityKernel10 record;
	char name[];
};

static __thread struct {
	int on;
	int geometry;			/* grid and block known */
	unsigned depth;			/* launch calls open on this thread */
	CUcontext ctx;
	CUstream stream;
	uint8_t per_thread_stream;
	uint8_t cooperative;
	uint32_t correlation_id;
	uint32_t grid[3], block[3], shared;
	uint64_t start, end;
	char name[512];
} synth;

/* Grid, block, shared memory and stream from the launch call's parameters (runtime or driver). */
static void synth_geometry(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *params)
{
	if (!params || synth.geometry)
		return;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000 ||
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000)) {
		const cudaLaunchKernel_v7000_params *p = params;

		synth.grid[0] = p->gridDim.x, synth.grid[1] = p->gridDim.y, synth.grid[2] = p->gridDim.z;
		synth.block[0] = p->blockDim.x, synth.block[1] = p->blockDim.y;
		synth.block[2] = p->blockDim.z;
		synth.shared = (uint32_t)p->sharedMem;
		synth.stream = (CUstream)p->stream;
		synth.per_thread_stream = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
			cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000;
		synth.cooperative = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000 ||
			cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000;
		synth.geometry = 1;
	} else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
		   (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
		    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060)) {
		const cudaLaunchConfig_t *c = ((const cudaLaunchKernelExC_v11060_params *)params)->config;

		if (!c)
			return;
		synth.grid[0] = c->gridDim.x, synth.grid[1] = c->gridDim.y, synth.grid[2] = c->gridDim.z;
		synth.block[0] = c->blockDim.x, synth.block[1] = c->blockDim.y;
		synth.block[2] = c->blockDim.z;
		synth.shared = (uint32_t)c->dynamicSmemBytes;
		synth.stream = (CUstream)c->stream;
		synth.per_thread_stream = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060;
		synth.geometry = 1;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
		   (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz)) {
		/* cuLaunchCooperativeKernel's parameters begin as cuLaunchKernel's do. */
		const cuLaunchKernel_params *p = params;

		synth.grid[0] = p->gridDimX, synth.grid[1] = p->gridDimY, synth.grid[2] = p->gridDimZ;
		synth.block[0] = p->blockDimX, synth.block[1] = p->blockDimY;
		synth.block[2] = p->blockDimZ;
		synth.shared = p->sharedMemBytes;
		synth.stream = p->hStream;
		synth.per_thread_stream = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
			cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
		synth.cooperative = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
			cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
		synth.geometry = 1;
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
		   (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz)) {
		const CUlaunchConfig *c = ((const cuLaunchKernelEx_params *)params)->config;

		if (!c)
			return;
		synth.grid[0] = c->gridDimX, synth.grid[1] = c->gridDimY, synth.grid[2] = c->gridDimZ;
		synth.block[0] = c->blockDimX, synth.block[1] = c->blockDimY;
		synth.block[2] = c->blockDimZ;
		synth.shared = c->sharedMemBytes;
		synth.stream = c->hStream;
		synth.per_thread_stream = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
		synth.geometry = 1;
	}
}

/* The instrumented launch's kernel record, into the collector like a CUPTI buffer. */
static void synth_submit(struct collector *collector, uint64_t end)
{
	size_t len = strlen(synth.name) + 1;
	struct synth_buffer *b = calloc(1, sizeof(*b) + len);
	CUpti_ActivityKernel10 *k;
	uint32_t id = 0;

	if (!b)
		return;
	memcpy(b->magic, synth_magic, sizeof(b->magic));
	memcpy(b->name, synth.name, len);
	k = &b->record;
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = synth.start;
	k->end = end > synth.start ? end : synth.start + 1;
	if (cupti.GetDeviceId && cupti.GetDeviceId(synth.ctx, &id) == CUPTI_SUCCESS)
		k->deviceId = id;
	if (cupti.GetContextId && cupti.GetContextId(synth.ctx, &id) == CUPTI_SUCCESS)
		k->contextId = id;
	if (cupti.GetStreamIdEx &&
	    cupti.GetStreamIdEx(synth.ctx, synth.stream, synth.per_thread_stream, &id) == CUPTI_SUCCESS)
		k->streamId = id;
	k->correlationId = synth.correlation_id;
	k->name = b->name;
	k->launchType = synth.cooperative ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE
					  : CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	k->gridX = (int32_t)synth.grid[0], k->gridY = (int32_t)synth.grid[1];
	k->gridZ = (int32_t)synth.grid[2];
	k->blockX = (int32_t)synth.block[0], k->blockY = (int32_t)synth.block[1];
	k->blockZ = (int32_t)synth.block[2];
	k->dynamicSharedMemory = (int32_t)synth.shared;
	collector_submit_buffer(collector, (uint8_t *)b, sizeof(*b) + len, sizeof(*b) + len);
}

/* Around the SASS launch (metrics_session_sass_hooks): the context is idle. */
void cupti_kernel_tracing_pause(CUcontext ctx)
{
	(void)ctx;
	/* Known as the library's before its first synchronization's record can be read. */
	internal_sync_note(synth.correlation_id);
	/* No traced kernel may still be running when the kind goes off. */
	metrics_context_synchronize();
	/* Hand over what tracing has completed before the kind goes off. */
	cupti.ActivityFlushAll(0);
	cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

void cupti_kernel_synced(CUcontext ctx)
{
	(void)ctx;
	synth.end = gpt_clock_now();
}

void cupti_kernel_tracing_resume(CUcontext ctx)
{
	(void)ctx;
	cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

/*
 * A launch API call (only those of the lists above are enabled, and only with metrics). Enter and
 * exit are passed on even once the trace has stopped: the session holds a lock from a launch's
 * enter to its exit. A replayed launch's kernel record comes without timestamps (measured on the
 * H200): its row is placed to end where the launch call returned, the last replay pass having run
 * by then, and lasts the duration the range profiler measured. An instrumented launch gets a
 * record of ours (above).
 */
void cupti_launch_callback(struct metrics_session *metrics, struct collector *_Atomic *sink,
			   CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *call)
{
	static __thread uint64_t entered;	/* when the outermost launch call began */
	struct collector *collector;
	int outer;

	if (call->callbackSite != CUPTI_API_ENTER) {
		uint64_t returned = gpt_clock_now();
		uint64_t duration = metrics_launch_exit(metrics);
		uint64_t start = duration < returned - entered ? returned - duration : entered;

		if (duration && returned > entered && (collector = atomic_load(sink)))
			collector_time_replayed_launch(collector, call->correlationId, start,
						       returned);
		if (synth.depth && --synth.depth == 0 && synth.on) {
			synth.on = 0;
			synth.start = returned;
			if ((collector = atomic_load(sink)))
				synth_submit(collector, synth.end > returned ? synth.end
									 : gpt_clock_now());
		}
		return;
	}
	outer = synth.depth++ == 0;
	if (outer)
		synth.correlation_id = call->correlationId;	/* for cupti_kernel_tracing_pause() */
	if (!metrics_launch_replayed(metrics))
		entered = gpt_clock_now();
	metrics_launch_enter(metrics, call->context, call->symbolName, call->correlationId);
	if (outer && metrics_launch_instrumented(metrics)) {
		synth.on = 1;
		synth.geometry = 0;
		synth.end = 0;
		synth.ctx = call->context;
		synth.stream = NULL;
		synth.per_thread_stream = synth.cooperative = 0;
		synth.correlation_id = call->correlationId;
		snprintf(synth.name, sizeof(synth.name), "%s",
			 call->symbolName ? call->symbolName : "");
	}
	if (synth.on)
		synth_geometry(domain, cbid, call->functionParams);
	/*
	 * Noted before the kernel is submitted, so ahead of its records. The nested driver call is
	 * noted too: harmless, and right whichever id the kernel record carries.
	 */
	if (metrics_launch_replayed(metrics) && (collector = atomic_load(sink)))
		collector_note_replayed_launch(collector, call->correlationId);
}

unsigned cupti_launch_depth(void)
{
	return synth.depth;
}

CUptiResult cupti_next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	/* One of ours (synth_submit): a single kernel record. */
	if (valid >= sizeof(struct synth_buffer) && !memcmp(buffer, synth_magic, sizeof(synth_magic))) {
		if (*record)
			return CUPTI_ERROR_MAX_LIMIT_REACHED;
		*record = (CUpti_Activity *)&((struct synth_buffer *)buffer)->record;
		return CUPTI_SUCCESS;
	}
	for (;;) {
		CUptiResult r = cupti.ActivityGetNextRecord(buffer, valid, record);

		if (r != CUPTI_SUCCESS || !__atomic_load_n(&ninternal, __ATOMIC_RELAXED) ||
		    !internal_sync_record(*record))
			return r;
	}
}
