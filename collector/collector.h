/*
 * The collector: turns completed CUPTI activity buffers and host-side events into rows of one
 * SQLite trace file (schema in schema/schema.sql, documented in docs/schema.md).
 *
 * Threading: collector_submit_buffer(), collector_submit_nvtx() and collector_buffer_get() are
 * called from the program's threads and from CUPTI's buffer callbacks; they only take or hand over
 * memory under one mutex and never touch SQLite. One writer thread, owned by the collector, decodes
 * buffers into rows, interns strings, inserts with prepared statements in large transactions and
 * commits at least every commit_interval_ms, so a killed program loses at most about that much
 * data. collector_stop() drains the queue, writes metadata (GPT_META, TARGET_INFO_GPU, PROCESSES,
 * ThreadNames, TARGET_INFO_CUDA_CONTEXT_INFO, TARGET_INFO_CUDA_STREAM,
 * TARGET_INFO_SESSION_START_TIME), closes the file and joins the thread.
 *
 * The trace file is created lazily, on the first event row (kernel, copy, set, sync, API call or
 * NVTX event), so that a process that initialises CUDA but never uses it leaves no file behind.
 * It never overwrites: an existing name gets ".1", ".2", ... before its extension (O_EXCL), unless
 * options.force. Errors (bad directory, disk full) are kept as one line, passed once to
 * options.report when they happen, returned by collector_stop(), and never stop the traced program.
 *
 * Timestamps: every timestamp handed to the collector (CUPTI records, NVTX events) is absolute, in
 * ns, on one clock (the library registers its own clock with CUPTI, see inject/clock.h). The
 * collector stores them relative to options.time_origin, which it records in GPT_META as
 * time_origin_ns.
 */
#ifndef GPT_COLLECTOR_COLLECTOR_H
#define GPT_COLLECTOR_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include <cupti_activity.h>

struct collector;

/* Default size of one CUPTI activity buffer: about 35,000 kernel records. */
#define COLLECTOR_BUFFER_SIZE (8u << 20)

struct collector_options {
	const char *path;		/* trace file to create (already expanded, see trace-path.h) */
	int force;			/* overwrite an existing file instead of adding .1, .2, ... */
	unsigned commit_interval_ms;	/* 0: 1000 */
	uint64_t time_origin;		/* absolute ns subtracted from every timestamp */
	uint64_t time_origin_utc_ns;	/* the origin as UTC epoch ns (0: now) */
	uint32_t pid;			/* the traced process, for globalPid/globalTid */
	size_t buffer_size;		/* 0: COLLECTOR_BUFFER_SIZE */
	int discard;			/* recycle buffers unread, write nothing (to measure CUPTI alone) */

	/* CUPTI's record iterator (cuptiActivityGetNextRecord); tests pass their own. */
	CUptiResult (*next_record)(uint8_t *buffer, size_t valid, CUpti_Activity **record);
	/* Name of an API call: event_class 0 runtime, 1 driver (cuptiGetCallbackName); may be NULL. */
	const char *(*api_name)(int event_class, uint32_t cbid);
	/* Called once, from the writer thread, with the first error line; may be NULL. */
	void (*report)(const char *line);
	/*
	 * Called once, from the writer thread, when the trace file has been created and its first
	 * transaction committed (path: the file's name); may be NULL. The library tells the launcher
	 * through it that a trace exists, so one the process never finished can be recovered.
	 */
	void (*created)(const char *path);
	/*
	 * SQLite journal mode: 0 the rollback journal (DELETE, the default), 1 WAL. WAL exists for
	 * the per-launch cost comparison (GPT_TRACE_JOURNAL=wal, tests/gpu/crash.sh); see writer-file.c.
	 */
	int wal;
	/*
	 * --max-size: at about this many bytes the trace stops recording (0: no limit) and full is
	 * called once from the writer thread (at: relative ns of the first row left out); may be NULL.
	 */
	uint64_t max_size;
	void (*full)(const char *path, uint64_t bytes, int64_t at);
};

/*
 * Start the writer thread. No file is created yet. Returns 0, or a negative errno with *out NULL.
 * The caller ends the collector with collector_stop() and frees it with collector_free().
 */
int collector_start(const struct collector_options *options, struct collector **out);

/*
 * An empty activity buffer for CUPTI's buffer-requested callback: options.buffer_size bytes,
 * zero-filled (the library tells CUPTI so with CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER),
 * 8-byte aligned, from a pool the writer refills. Any buffer may also be released with free().
 * Returns NULL when memory is exhausted (CUPTI then counts the records it drops).
 */
uint8_t *collector_buffer_get(struct collector *collector, size_t *size);

/*
 * Hand over a completed CUPTI activity buffer (valid bytes of it hold records). The collector owns
 * it from now on and recycles or frees it. After collector_stop() has begun, buffers are freed
 * unread.
 */
void collector_submit_buffer(struct collector *collector, uint8_t *buffer, size_t size, size_t valid);

/*
 * NVTX events as recorded by inject/nvtx.c. Strings live in the batch's text arena (text_offset,
 * text_len), so an event is fixed-size and the hot path is one append under a lock.
 */
enum collector_nvtx_kind {
	NVTX_EV_MARK = 1,
	NVTX_EV_PUSH,
	NVTX_EV_POP,
	NVTX_EV_START,		/* range_id: the id nvtxRangeStart returned */
	NVTX_EV_END,
	NVTX_EV_DOMAIN,		/* domain: new domain id, text: its name */
	NVTX_EV_REGISTER,	/* range_id: registered string id, text: the string */
	NVTX_EV_CATEGORY,	/* category: id, text: its name */
	NVTX_EV_THREAD_NAME,	/* category: the OS thread id named, text: the name */
	/*
	 * The recording thread's own comm, sent with its first event (prctl PR_GET_NAME), in case it
	 * is gone before the writer reads /proc; payload: its priority as /proc/TID/stat gives it,
	 * when payload_type is not 0.
	 */
	NVTX_EV_OS_THREAD_NAME,
};

#define NVTX_NO_TEXT UINT32_MAX

struct collector_nvtx_event {
	uint64_t timestamp;	/* absolute ns */
	uint64_t range_id;	/* START/END: range id; REGISTER: string id */
	uint64_t payload;	/* raw bits of the payload union */
	uint32_t tid;
	uint32_t domain;	/* 0: the default domain */
	uint32_t category;	/* 0: none */
	uint32_t color;		/* ARGB, when has_color */
	uint32_t text_offset;	/* into the batch's text, NVTX_NO_TEXT when none */
	uint32_t text_len;
	uint32_t registered;	/* text is registered string id `registered` (0: inline text) */
	uint8_t kind;		/* enum collector_nvtx_kind */
	uint8_t payload_type;	/* nvtxPayloadType_t, 0: none */
	uint8_t has_color;
};

struct collector_nvtx_batch {
	struct collector_nvtx_event *events;
	size_t count, capacity;
	char *text;
	size_t text_len, text_capacity;
	uint64_t dropped;	/* events that could not be stored (out of memory, pre-CUDA cap) */
};

/* Hand over a batch (allocated with malloc, like its arrays); the collector frees it. */
void collector_submit_nvtx(struct collector *collector, struct collector_nvtx_batch *batch);

/*
 * A kernel launch run under kernel replay (hardware metrics, docs/metrics.md), noted before it is
 * submitted (from the launch's API-enter callback) so that the note is queued ahead of its kernel
 * record; then, once the launch call has returned, its times (absolute ns on the records' clock;
 * 0, 0 when there are none). CUPTI delivers such a launch's kernel record without timestamps: the
 * trace gets one kernel row per launch with these times (collector/replay.h; GPT_META
 * replayed_kernel_rows_timed, replayed_kernel_records_dropped).
 */
void collector_note_replayed_launch(struct collector *collector, uint32_t correlation_id);
void collector_time_replayed_launch(struct collector *collector, uint32_t correlation_id,
				    uint64_t start, uint64_t end);

/*
 * A synchronization the library saw from API callbacks (inject/cupti-sync.c says why it does not use
 * CUPTI's SYNCHRONIZATION records): start and end in absolute ns on the records' clock, sync_type
 * as ENUM_CUPTI_SYNC_TYPE, 0xFFFFFFFF for a stream or event id that does not apply.
 */
struct collector_sync {
	uint64_t start, end;
	uint32_t context_id, stream_id, correlation_id, event_id;
	int sync_type;
};
void collector_submit_sync(struct collector *collector, const struct collector_sync *sync);

/*
 * Capture windows (collector/capture-windows.h, GPT_CAPTURE_WINDOWS): after collector_capture_gate(), only
 * rows that start inside a window are recorded. A window opens and closes at absolute ns `at` (which
 * may lie ahead: --delay, --duration) for the reason why ("delay", "cudaProfilerStop", ...);
 * collector_window_end() is the end of the trace (windows not begun by then are dropped). Queued
 * like buffers, so a window is known before any later record it gates.
 */
void collector_capture_gate(struct collector *collector);
void collector_window_open(struct collector *collector, uint64_t at, const char *why);
void collector_window_close(struct collector *collector, uint64_t at, const char *why);
void collector_window_end(struct collector *collector, uint64_t at, const char *why);

/*
 * GPU metrics samples of one device (collector/sample-rows.h), from the library's sampling thread:
 * the collector owns batch (one malloc'd block) from now on.
 */
struct gpu_metrics_batch;
void collector_submit_gpu_metrics(struct collector *collector, struct gpu_metrics_batch *batch);

/* Facts written to GPT_META (name/value strings, copied). Later values replace earlier ones. */
void collector_set_meta(struct collector *collector, const char *name, const char *value);

/*
 * Drain, finalize and close. dropped is CUPTI's dropped-record count (GPT_META
 * cupti_dropped_records). Returns 1 when a trace file was written, 0 when there was nothing to
 * record (no file), or a negative error with one line in err. Call once; then collector_free().
 */
int collector_stop(struct collector *collector, uint64_t dropped, char *err, size_t errlen);

/* The path of the trace file once created (NULL before), owned by the collector. */
const char *collector_path(const struct collector *collector);

void collector_free(struct collector *collector);

#endif
