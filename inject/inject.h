/*
 * Internals shared by the modules of libgpt_inject.so: the configuration read from the environment
 * (docs/launcher-env.md) and the interfaces of the CUPTI and NVTX modules. inject.c owns the process
 * lifecycle (entry points, exit, signals, fork) and calls down into the others, handing them what
 * they must call back (cupti_trace_on_wanted, exits_set_finishers); cupti.c owns everything that
 * talks to CUPTI; nvtx.c implements the NVTX injection interface; say.c and clock.c are below all.
 */
#ifndef GPT_INJECT_INJECT_H
#define GPT_INJECT_INJECT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/collector.h"

struct metrics_session;
struct gpu_metrics;

enum inject_api_mode {
	INJECT_API_DEFAULT,	/* launch/copy/set/sync/event/stream/graph-launch calls only */
	INJECT_API_ALL,
	INJECT_API_NONE,
};

struct inject_config {
	char output[PATH_MAX];		/* GPT_TRACE_OUTPUT, absolute, before %p/%h expansion */
	char session[PATH_MAX];		/* GPT_TRACE_SESSION, "" when unset */
	int force, quiet;
	unsigned commit_ms;
	enum inject_api_mode api;
	int monotonic_clock;		/* GPT_TRACE_CLOCK: 1 monotonic (default), 0 cupti (clock.h) */
	int discard;			/* GPT_TRACE_DISCARD=1: decode nothing, write nothing */
	char *metrics;			/* GPT_TRACE_METRICS (copied), NULL when unset */
	uint64_t gpu_metrics_ns;	/* GPT_TRACE_GPU_METRICS: sampling interval, 0 off */
};

/* Print one line "gpt-trace: ..." on stderr with a single write(2). */
void inject_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* cupti.c: loading CUPTI, subscribing, enabling activities, buffers and flushes. */

/*
 * Load CUPTI and take the subscriber slot, then settle the clock (clock.h): register ours with
 * CUPTI (monotonic) or switch to CUPTI's; *shift is how far timestamps taken so far must move to
 * be on the new clock. Returns 0 or -1 with err.
 */
int cupti_trace_subscribe(const struct inject_config *config, int64_t *shift, char *err,
			  size_t errlen);
/*
 * Enable activity kinds and API records, delivering buffers to collector, and, when metrics is
 * not NULL, bind that session to CUPTI and enable the launch and module callbacks it needs (a
 * CUPTI without the profiling APIs: one line, tracing goes on). Returns 0 or -1.
 */
int cupti_trace_enable(const struct inject_config *config, struct collector *collector,
		       struct metrics_session *metrics, char *err, size_t errlen);
/* cuptiActivityFlushAll; forced also returns buffers with incomplete records (at the end). */
void cupti_trace_flush(int forced);
/* Stop handing buffers to the collector; returns CUPTI's dropped-record count over the run. */
uint64_t cupti_trace_stop(void);
/*
 * Hand CUPTI over to the program's own profiler (see cupti.c): flush what CUPTI holds for us,
 * disable our activities, unsubscribe. Returns 1 if it did so now, 0 if there was nothing to give
 * up (not tracing, or already done). cupti_trace_yielded(): it has happened.
 */
int cupti_trace_yield(void);
int cupti_trace_yielded(void);
/* Turn the event-recording activity kinds off (pause 1) or back on, for capture windows. */
void cupti_trace_pause(int pause);
/* The CUPTI library handle (dlopen), NULL before cupti_trace_subscribe(). */
void *cupti_trace_library(void);
/* Start GPU metrics sampling on each device as its first context is created (NULL: stop). */
void cupti_trace_gpu_metrics(struct gpu_metrics *sampling);
/*
 * What to do when the program calls a CUPTI function (name) that needs the subscriber slot or the
 * activity buffers, from code at caller (inject.c's: step aside, say so once, note it in the
 * trace); handed in from above before tracing starts. NULL: nothing.
 */
typedef void (*cupti_wanted_fn)(const char *name, const void *caller);
void cupti_trace_on_wanted(cupti_wanted_fn hook);
/*
 * --capture-range=cudaProfilerApi (capture.c): with a hook set before cupti_trace_enable(), the
 * program's cudaProfilerStart (start 1) and cudaProfilerStop (0), and the driver's cuProfiler*, are
 * handed to it (name: the call).
 */
typedef void (*cupti_profiler_fn)(int start, const char *name);
void cupti_trace_on_profiler_calls(cupti_profiler_fn hook);
/* The collector's record iterator: cuptiActivityGetNextRecord through our table. */
CUptiResult cupti_next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record);
/* Name of a runtime (event_class 0) or driver (1) API call, from CUPTI. */
const char *cupti_api_name(int event_class, uint32_t cbid);
/* Facts about CUPTI for GPT_META (version, library path, enabled API calls). */
void cupti_trace_describe(struct collector *collector);

/* nvtx.c: the NVTX injection (InitializeInjectionNvtx2 is exported from there). */

/* Start delivering NVTX events (those recorded before CUDA started, then all) to collector. */
void nvtx_attach(struct collector *collector);
/* Hand the events recorded so far to the collector (called periodically). */
void nvtx_flush(void);
/* Final flush; later events are not recorded. */
void nvtx_detach(void);
/* Fork handlers: keep the batch lock consistent; in the child, forget the parent's events and,
 * when inert, record nothing at all. */
void nvtx_fork_prepare(void);
void nvtx_fork_parent(void);
void nvtx_fork_child(int inert);
/* Add delta ns to the timestamps of events recorded so far (clock fallback, see clock.h). */
void nvtx_shift_pending(int64_t delta);

/*
 * The NVTX injection's work for InitializeInjectionNvtx2 (exported by inject.c, which runs its early
 * initialisation first): fill this NVTX instance's callback tables from get (NVTX's
 * NvtxGetExportTableFunc_t). Returns 1 when installed, 0 when NVTX is to make every call a no-op.
 */
int nvtx_install(const void *(*get)(uint32_t table_id));

/* The entry points the CUDA driver (from cuInit) and NVTX call (exported; see inject.c). */
__attribute__((visibility("default"))) int InitializeInjection(void);
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *(*get)(uint32_t table_id));

/*
 * capture.c: capture windows (--delay, --duration, --capture-range, --max-size; docs/run.md).
 * capture_read_config() reads GPT_TRACE_DELAY_NS, GPT_TRACE_DURATION_NS, GPT_TRACE_CAPTURE_RANGE,
 * GPT_TRACE_CAPTURE_RANGE_END, GPT_TRACE_MAX_SIZE and GPT_TRACE_LAUNCH_NS (early, with the rest of
 * the configuration); capture_start() gates the collector and queues the first windows (origin:
 * the trace's time origin, on the records' clock); capture_range_call(), which capture_start()
 * hands to cupti.c as its profiler hook, is a cudaProfilerStart (start 1) or Stop (0), name the
 * call; capture_finish() ends the windows when the trace ends; capture_full() is the collector's
 * --max-size callback.
 */
void capture_read_config(int quiet);
uint64_t capture_max_size(void);
void capture_start(struct collector *collector, uint64_t origin);
void capture_range_call(int start, const char *name);
void capture_finish(uint64_t now);
void capture_full(const char *path, uint64_t bytes, int64_t at);
/*
 * --capture-range=nvtx with --nvtx-capture RANGE[@DOMAIN] (GPT_TRACE_NVTX_CAPTURE): capture_nvtx_on
 * is set when it was asked for; nvtx.c then shows capture_nvtx_event() every event it records
 * (domain creations and registered strings included, to learn their names), text its message.
 */
extern int capture_nvtx_on;
/*
 * --start-later (on demand, `gpt-trace start/stop`): capture_announce() (early init, before CUDA)
 * writes the process's .armed file as still starting, and capture_unannounce() (exit, _exit)
 * removes it when the process never started CUDA;
 * capture_armed() after CUPTI is enabled turns its event kinds off until a start command, and does
 * one that came while the process was starting; capture_poll() (the flush thread, every tick)
 * reads the process's control file. capture_finish() removes the control files.
 */
void capture_announce(void);
void capture_unannounce(void);
void capture_armed(void);
void capture_poll(void);
void capture_nvtx_event(const struct collector_nvtx_event *ev, const char *text, size_t len);

/*
 * exits.c: fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) and exits that skip atexit.
 * The finishers come from above (inject.c), set at its early initialisation, before any trace:
 * now(why) finishes the trace from any thread and any context (a signal handler included), why a
 * signal number (exit_reason "signal N"); exit_now(status) the same for _exit()/_Exit()
 * (exit_reason "_exit(STATUS)"). Both are no-ops in a process with no trace being written.
 */
void exits_set_finishers(void (*now)(int why), void (*exit_now)(int status));
/* Install our handlers, chaining to the program's (called once tracing is active). */
void exits_install_fatal(void);

#endif
