/*
 * cupti.c's parts, private to them: the CUPTI library found and loaded, its functions in one table
 * (cupti-load.c); the kernel launches the hardware-metrics session hooks, with the kernel records the
 * library makes itself and the record iterator that reads them (cupti-launch.c); the
 * synchronisations recorded from API callbacks (cupti-sync.c). cupti.c subscribes, enables and
 * dispatches the callbacks to them, handing each the collector it delivers to.
 */
#ifndef GPT_INJECT_CUPTI_PRIVATE_H
#define GPT_INJECT_CUPTI_PRIVATE_H

#include "inject/inject.h"
#include "inject/metrics.h"

#include <limits.h>
#include <stdatomic.h>

#include <cupti.h>

/* cupti-load.c */

/* CUPTI's functions, from the library cupti_load() opened; NULL where this CUPTI lacks one. */
#define CUPTI_FN(name) __typeof__(&cupti##name) name
struct cupti_fns {
	void *lib;
	char path[PATH_MAX];
	CUPTI_FN(GetVersion);
	CUPTI_FN(Subscribe);
	CUPTI_FN(Subscribe_v2);
	CUPTI_FN(Unsubscribe);
	CUPTI_FN(EnableCallback);
	CUPTI_FN(GetCallbackName);
	CUPTI_FN(GetResultString);
	CUPTI_FN(ActivityEnable);
	CUPTI_FN(ActivityDisable);
	CUPTI_FN(ActivityEnableRuntimeApi);
	CUPTI_FN(ActivityEnableDriverApi);
	CUPTI_FN(ActivityRegisterCallbacks);
	CUPTI_FN(ActivityFlushAll);
	CUPTI_FN(ActivityGetNumDroppedRecords);
	CUPTI_FN(ActivityGetNextRecord);
	CUPTI_FN(ActivitySetAttribute);
	CUPTI_FN(ActivityRegisterTimestampCallback);
	CUPTI_FN(SetThreadIdType);
	CUPTI_FN(GetTimestamp);
	CUPTI_FN(GetContextId);
	CUPTI_FN(GetDeviceId);
	CUPTI_FN(GetStreamIdEx);
};
#undef CUPTI_FN
extern struct cupti_fns cupti;

/* Find and open CUPTI (the program's own first, then the places of cupti-search.h) and fill the
 * table: 0, or -1 with err. */
int cupti_load(char *err, size_t errlen);
/* CUPTI's words for a result. */
const char *cupti_result(CUptiResult result);

/* cupti-launch.c */

/*
 * A kernel-launch API call, with hardware metrics (session): handed to the session; a replayed
 * launch's timing, and an instrumented launch's own kernel record, go to the collector in *sink
 * (NULL once stopped).
 */
void cupti_launch_callback(struct metrics_session *session, struct collector *_Atomic *sink,
			   CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *call);
/* Launch calls open on this thread (a synchronisation inside one is the metrics session's own). */
unsigned cupti_launch_depth(void);
/* The session's hooks around an instrumented launch (metrics_session_sass_hooks). */
void cupti_kernel_tracing_pause(CUcontext ctx);
void cupti_kernel_synced(CUcontext ctx);
void cupti_kernel_tracing_resume(CUcontext ctx);

/* cupti-sync.c */

struct sync_call;
/* The synchronizing call a callback is for, or NULL. */
const struct sync_call *cupti_sync_call_find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
/* Enter or exit of a synchronizing call: the outermost one's row goes to the collector in *sink. */
void cupti_sync_callback(const struct sync_call *call, const CUpti_CallbackData *data,
			 struct collector *_Atomic *sink);
/* Enable the callbacks of every synchronizing call. */
void cupti_sync_enable(CUpti_SubscriberHandle subscriber);

#endif
