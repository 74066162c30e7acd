/*
 * Synchronization records (see cupti-private.h) come from callbacks on the synchronizing calls,
 * not from CUPTI's SYNCHRONIZATION activity: on the H200, enabling that activity cost PyTorch about 2 us per
 * tiny op (bench/overhead/torch-probe-kinds-2026-11-21.log: +2.54 us per op against +0.45 us for
 * kernel records alone), because CUPTI then watches far more calls than the few that synchronize;
 * callbacks on these calls cost nothing elsewhere. A row spans the outermost synchronizing call
 * (the runtime call, not the driver call it makes) and carries its correlation id, as CUPTI's did.
 * Event ids are numbered per process in order of first use (CUPTI's own event ids are not exposed).
 */
#define _GNU_SOURCE
#include "inject/cupti-private.h"
#include "inject/clock.h"

#include <pthread.h>

struct sync_call {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	CUpti_ActivitySynchronizationType type;
	uint8_t per_thread_stream;	/* the _ptsz variant: NULL means the per-thread stream */
};

#define SYNC_CONTEXT CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
#define SYNC_STREAM CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE
#define SYNC_EVENT CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE
#define SYNC_WAIT CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT
#define RT(name) CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name
#define DRV(name) CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name
static const struct sync_call sync_calls[] = {
	{ RT(cudaDeviceSynchronize_v3020), SYNC_CONTEXT, 0 },
	{ RT(cudaThreadSynchronize_v3020), SYNC_CONTEXT, 0 },
	{ RT(cudaStreamSynchronize_v3020), SYNC_STREAM, 0 },
	{ RT(cudaStreamSynchronize_ptsz_v7000), SYNC_STREAM, 1 },
	{ RT(cudaEventSynchronize_v3020), SYNC_EVENT, 0 },
	{ RT(cudaStreamWaitEvent_v3020), SYNC_WAIT, 0 },
	{ RT(cudaStreamWaitEvent_ptsz_v7000), SYNC_WAIT, 1 },
	{ DRV(cuCtxSynchronize), SYNC_CONTEXT, 0 },
	{ DRV(cuCtxSynchronize_v2), SYNC_CONTEXT, 0 },
	{ DRV(cuStreamSynchronize), SYNC_STREAM, 0 },
	{ DRV(cuStreamSynchronize_ptsz), SYNC_STREAM, 1 },
	{ DRV(cuEventSynchronize), SYNC_EVENT, 0 },
	{ DRV(cuStreamWaitEvent), SYNC_WAIT, 0 },
	{ DRV(cuStreamWaitEvent_ptsz), SYNC_WAIT, 1 },
};
#undef RT
#undef DRV
#define SYNC_INVALID 0xFFFFFFFFu

const struct sync_call *cupti_sync_call_find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < sizeof(sync_calls) / sizeof(sync_calls[0]); i++)
		if (sync_calls[i].domain == domain && sync_calls[i].cbid == cbid)
			return &sync_calls[i];
	return NULL;
}

/* Events get small ids in order of first use; a full table gives SYNC_INVALID. */
static uint32_t event_number(const void *event)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const void *events[1024];
	static uint32_t nevents;
	uint32_t id = SYNC_INVALID;

	if (!event)
		return SYNC_INVALID;
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < nevents; i++)
		if (events[i] == event)
			id = i + 1;
	if (id == SYNC_INVALID && nevents < sizeof(events) / sizeof(events[0])) {
		events[nevents++] = event;
		id = nevents;
	}
	pthread_mutex_unlock(&lock);
	return id;
}

static uint32_t stream_number(CUcontext context, const void *stream, uint8_t per_thread)
{
	uint32_t id = SYNC_INVALID;

	if (!cupti.GetStreamIdEx ||
	    cupti.GetStreamIdEx(context, (CUstream)stream, per_thread, &id) != CUPTI_SUCCESS)
		return SYNC_INVALID;
	return id;
}

void cupti_sync_callback(const struct sync_call *call, const CUpti_CallbackData *data,
			 struct collector *_Atomic *sink)
{
	/* The outermost synchronizing call of this thread; nested (driver) calls only count depth. */
	static __thread struct collector_sync open;
	static __thread unsigned depth;
	const void *const *params = data->functionParams;
	struct collector *collector;

	/* Inside a launch call: the metrics module's own synchronization (cupti-launch.c). */
	if (cupti_launch_depth())
		return;
	if (data->callbackSite == CUPTI_API_ENTER) {
		if (depth++)
			return;
		/* Every call of the table takes the stream, or the event, as its first argument. */
		open = (struct collector_sync){
			.sync_type = call->type,
			.correlation_id = data->correlationId,
			.context_id = SYNC_INVALID,
			.stream_id = SYNC_INVALID,
			.event_id = SYNC_INVALID,
		};
		if (data->context && cupti.GetContextId)
			cupti.GetContextId(data->context, &open.context_id);
		if (call->type == SYNC_STREAM || call->type == SYNC_WAIT)
			open.stream_id = stream_number(data->context, params[0], call->per_thread_stream);
		if (call->type == SYNC_EVENT)
			open.event_id = event_number(params[0]);
		else if (call->type == SYNC_WAIT)
			open.event_id = event_number(params[1]);
		open.start = gpt_clock_now();
		return;
	}
	if (!depth || --depth)
		return;
	open.end = gpt_clock_now();
	if ((collector = atomic_load(sink)))
		collector_submit_sync(collector, &open);
}

void cupti_sync_enable(CUpti_SubscriberHandle subscriber)
{
	for (size_t i = 0; i < sizeof(sync_calls) / sizeof(sync_calls[0]); i++)
		cupti.EnableCallback(1, subscriber, sync_calls[i].domain, sync_calls[i].cbid);
}
