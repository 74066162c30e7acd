/*
 * Hardware metrics per kernel launch (issue 5): global load/store sectors and requests and the
 * kernel's duration from CUPTI's Range Profiler (auto range, kernel replay), and, once per distinct
 * kernel, on a launch of its own (its first selected one), the ideal sector counts and their
 * source lines from CUPTI's SASS Metrics API.
 *
 * The module never subscribes to CUPTI itself (one subscriber per process before CUDA 13.3): the
 * library's own CUPTI callback calls the hooks below. Everything is driven from the launching
 * thread: metrics_launch_enter() starts the range profiler around a launch that passes the filter,
 * metrics_launch_exit() stops it, decodes the one range and keeps the values in memory; nothing is
 * pending between launches, so no flush is needed at exit. Profiled launches are serialized (kernel
 * replay serializes them anyway) and every launch takes one mutex while a session is open, so that
 * no other thread's kernel slips into a profiled range.
 *
 * Failures (no permission for the counters, an unsupported device, another profiler holding the
 * counters, a metric the chip lacks) are reported once, as one line, through the report function;
 * the program keeps running and the affected context goes on unprofiled. docs/metrics.md has the
 * spec syntax, the tables written and the exact places the library calls each hook.
 */
#ifndef GPT_INJECT_METRICS_H
#define GPT_INJECT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda.h>
#include <sqlite3.h>

struct metrics_session;

/* Receives one problem line, without the "gpt-trace: " prefix and without a newline. */
typedef void (*metrics_report_fn)(const char *line);

/*
 * Parse spec (the value of GPT_TRACE_METRICS) and make a session. A spec that turns metrics off
 * ("", "0", "off", "no") gives 0 and *out = NULL. A malformed spec gives a negative error and one
 * line in err. report may be NULL: lines then go to stderr prefixed "gpt-trace: ". No CUPTI call is
 * made here (see metrics_session_attach); the profilers are set up per context at its first
 * selected launch.
 */
int metrics_session_open(const char *spec, metrics_report_fn report, struct metrics_session **out,
			 char *err, size_t errlen);

/*
 * Source lines (SASS instrumentation) on or off when the spec did not say source=0|1. On by
 * default. Beside CUPTI's kernel activity tracing they work only with the hooks below installed
 * (H200, docs/metrics.md): libgpt_inject.so turns them off until its CUPTI layer installs them.
 */
void metrics_session_default_source(struct metrics_session *s, bool on);

/*
 * Called on the launching thread, session lock held, with the launch's context current: pause
 * just before the SASS instrumentation of a launch is enabled (it must leave the context idle:
 * metrics_context_synchronize()), synced as soon as the patched kernel has finished (before
 * its counts are read: the library ends its kernel row there), resume once they have been read. The library stops and restarts CUPTI's kernel activity tracing there: on the H200
 * the two instrumentations did not mix (every SASS count zero, a corrupt kernel record). Set
 * before the first launch callback.
 */
typedef void (*metrics_sass_hook_fn)(CUcontext ctx);
void metrics_session_sass_hooks(struct metrics_session *s, metrics_sass_hook_fn pause,
				metrics_sass_hook_fn synced, metrics_sass_hook_fn resume);

/* cuCtxSynchronize of the driver the program loaded (looked up, not linked). */
CUresult metrics_context_synchronize(void);

/*
 * Bind the session to the CUPTI the library loaded: cupti_lib is the handle dlopen() returned
 * (NULL: look in the process's global symbols, for programs linked with libcupti). Call it once
 * CUPTI is loaded, before the first launch callback; until then every hook does nothing. A CUPTI
 * without the Range Profiler or SASS Metrics API (before CUDA 12.6) gives -1 with one line in err,
 * and the session stays inert.
 */
int metrics_session_attach(struct metrics_session *s, void *cupti_lib, char *err, size_t errlen);

/*
 * CUPTI_CBID_RESOURCE_MODULE_LOADED: the module's cubin, copied (only when source lines are wanted)
 * so that SASS offsets can later be mapped to file:line. Takes its own lock: safe to call while the
 * same thread is inside a profiled launch (lazy loading loads modules during the launch).
 */
void metrics_module_loaded(struct metrics_session *s, const void *cubin, size_t size);

/*
 * Kernel-launch API callbacks, CUPTI_API_ENTER and CUPTI_API_EXIT, of the runtime and the driver
 * launch functions (list in docs/metrics.md). kernel is cbdata->symbolName (the mangled name),
 * correlation_id cbdata->correlationId, ctx cbdata->context. Calls nest: only the outermost
 * enter/exit pair of a thread counts, so the runtime call's correlation id, the one the kernel
 * activity record carries, is the one kept. Every enter must be followed by its exit.
 */
void metrics_launch_enter(struct metrics_session *s, CUcontext ctx, const char *kernel,
			  uint32_t correlation_id);
/*
 * Returns the kernel's duration (gpu__time_duration.sum of one replay pass, ns) when this exit ends
 * a launch profiled with counters, else 0: the library times the launch's kernel row with it, since
 * CUPTI delivers the kernel record of a replayed launch without timestamps (docs/metrics.md).
 */
uint64_t metrics_launch_exit(struct metrics_session *s);

/*
 * Between metrics_launch_enter() and metrics_launch_exit() on the same thread: is this launch
 * being profiled with the range profiler, so that kernel replay runs it once per pass? The library
 * tells its collector so (CUPTI may report one kernel record per pass, see docs/metrics.md).
 */
bool metrics_launch_replayed(const struct metrics_session *s);

/*
 * The same, for the launch carrying the SASS instrumentation (its kernel's first selected launch):
 * kernel activity tracing was paused around it, so CUPTI gives it no kernel record.
 */
bool metrics_launch_instrumented(const struct metrics_session *s);

/* CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: release the profilers of that context. */
void metrics_context_destroy(struct metrics_session *s, CUcontext ctx);

/*
 * Release the profilers of every live context; no launch is profiled afterwards. Call it while CUDA
 * is still usable (the library's exit path, before cuptiFinalize), before metrics_session_write.
 */
void metrics_session_stop(struct metrics_session *s);
/*
 * The same, waiting at most timeout_ms for a launch being profiled on another thread (or on this
 * one, interrupted by a signal) to finish. Returns 0, or -ETIMEDOUT: the session is then left as it
 * is, and metrics_session_write() refuses to write (it would wait for the same launch).
 */
int metrics_session_stop_within(struct metrics_session *s, unsigned timeout_ms);

/*
 * Create GPT_KERNEL_METRICS and GPT_SOURCE_METRICS (if absent) in db and insert what was collected,
 * inside one transaction unless db is already in one. Returns the number of kernel rows written, or
 * a negative error with one line in err. metrics_session_write_file() opens path, writes, closes.
 */
int metrics_session_write(struct metrics_session *s, sqlite3 *db, char *err, size_t errlen);
int metrics_session_write_file(struct metrics_session *s, const char *path, char *err,
			       size_t errlen);

/*
 * One line for the user saying how much replay happened, e.g.
 * "metrics: 12 launches of 4 kernels profiled, 3 passes each, 0.41 s in replay; source lines for 4
 * kernels". No prefix, no newline.
 */
void metrics_session_summary(struct metrics_session *s, char *buf, size_t size);

/* Free everything; needs no live CUDA context (see metrics_session_stop). Accepts NULL. */
void metrics_session_free(struct metrics_session *s);

#endif
