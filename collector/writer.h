/*
 * The SQLite side of the collector: one trace file, written by one thread.
 *
 * The file is created on the first event row (writer_kernel() ... writer_nvtx()); facts that are not
 * events (devices, contexts, streams, thread names, metadata) are kept in memory until then, so that a
 * process with nothing to record leaves no file. Rows are inserted with prepared statements inside
 * one open transaction that writer_tick() commits when the interval is due. Strings are interned
 * into StringIds. writer_finish() writes the tables known only at the end.
 *
 * Errors: the first failure (cannot create, disk full) is kept as one line (writer_error()); from
 * then on every call is a cheap no-op returning -1, so the caller just keeps draining.
 */
#ifndef GPT_COLLECTOR_WRITER_H
#define GPT_COLLECTOR_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "collector/decode.h"
#include "collector/sample-rows.h"

struct writer;

struct writer_options {
	const char *path;
	int force;
	uint64_t time_origin;		/* absolute ns subtracted from every timestamp */
	uint64_t time_origin_utc_ns;	/* the origin as UTC epoch ns (0: taken at writer_new) */
	uint32_t pid;
	const char *(*api_name)(int event_class, uint32_t cbid);
	void (*report)(const char *line);	/* the first error line, once */
	void (*created)(const char *path);	/* the file exists, first commit done; may be NULL */
	int wal;				/* journal_mode=WAL instead of the rollback journal */
	/* --max-size: stop keeping rows once the file reaches this many bytes (0: no limit) ... */
	uint64_t max_size;
	/* ... and say so, once, from the writer thread (at: the trace's relative ns); may be NULL. */
	void (*full)(const char *path, uint64_t bytes, int64_t at);
	/* GPU memory rows kept at most (CUDA_GPU_MEMORY_USAGE_EVENTS and _POOL_EVENTS together; 0:
	 * WRITER_MEMORY_MAX): beyond it rows are counted in GPT_META memory_records_dropped. */
	uint64_t memory_max;
};
#define WRITER_MEMORY_MAX 1000000	/* about 100 MB of rows: 5,000 allocations a step for 200 steps */

/* NVTX_EVENTS eventType values (nsys ENUM_NSYS_EVENT_TYPE). */
enum nvtx_event_type {
	NVTX_TYPE_CATEGORY = 33,
	NVTX_TYPE_MARK = 34,
	NVTX_TYPE_PUSHPOP = 59,
	NVTX_TYPE_STARTEND = 60,
	NVTX_TYPE_DOMAIN_CREATE = 75,
};

struct nvtx_row {
	uint64_t start, end;	/* absolute ns; end is NULL when !has_end */
	int has_end;
	int event_type;		/* enum nvtx_event_type */
	uint64_t range_id;	/* 0: NULL */
	uint32_t category;	/* 0: NULL */
	int has_color;
	uint32_t color;
	const char *text;	/* inline text (len text_len), or NULL */
	size_t text_len;
	int64_t text_id;	/* StringIds id of a registered string, or -1 */
	uint32_t tid, end_tid;	/* end_tid 0: NULL */
	uint32_t domain;
	int payload_type;	/* nvtxPayloadType_t, 0: none */
	uint64_t payload;
};

struct writer *writer_new(const struct writer_options *options);
void writer_free(struct writer *writer);

int writer_kernel(struct writer *writer, const struct kernel_row *row);
int writer_memcpy(struct writer *writer, const struct memcpy_row *row);
int writer_memset(struct writer *writer, const struct memset_row *row);
int writer_memory(struct writer *writer, const struct memory_row *row);
int writer_mempool(struct writer *writer, const struct mempool_row *row);
int writer_sync(struct writer *writer, const struct sync_row *row);
int writer_api(struct writer *writer, const struct api_row *row);
int writer_nvtx(struct writer *writer, const struct nvtx_row *row);
/*
 * GPU metrics samples of one device: a GPT_GPU_METRICS row and its GPU_METRICS rows per sample,
 * TARGET_INFO_GPU_METRICS rows for metrics new to the device (sample-rows.h). Returns 0 or -1.
 */
int writer_gpu_metrics(struct writer *writer, const struct gpu_metrics_batch *batch);
void writer_device(struct writer *writer, const struct device_row *row);
void writer_context(struct writer *writer, const struct context_row *row);
void writer_stream(struct writer *writer, const struct stream_row *row);

/* The StringIds id of s (len bytes), adding it if new; creates the file. Returns 0 or -1. */
int writer_intern(struct writer *writer, const char *s, size_t len, int64_t *id);
/* A name for thread tid (from nvtxNameOsThread), preferred over the kernel's comm. */
void writer_thread_name(struct writer *writer, uint32_t tid, const char *name, size_t len);
/*
 * Thread tid's comm as the thread reported it (with its priority when has_priority), standing in
 * for /proc when the thread is gone before the writer reads its name (collector/threads.h).
 */
void writer_thread_reported_name(struct writer *writer, uint32_t tid, const char *name, size_t len,
				 int has_priority, int priority);
/* A GPT_META fact (copied); written when the file is created and again at the end. */
void writer_meta(struct writer *writer, const char *name, const char *value);

/*
 * Capture windows (capture-windows.h): GATE keeps from now on only rows that start inside a window; OPEN
 * and CLOSE a window at `at` (absolute ns, may lie ahead) for the reason why; END the trace at
 * `at`. Written to GPT_CAPTURE_WINDOWS at each commit and at the end.
 */
enum writer_window_event {
	WRITER_WINDOW_GATE,
	WRITER_WINDOW_OPEN,
	WRITER_WINDOW_CLOSE,
	WRITER_WINDOW_END,
};
void writer_window(struct writer *writer, enum writer_window_event event, uint64_t at,
		   const char *why);

/* Count a record that carried no timestamps (CUPTI could not collect them); not stored. */
void writer_count_untimed(struct writer *writer);

/* Commit when interval_ns has passed since the last commit (now_ns: CLOCK_MONOTONIC). */
int writer_tick(struct writer *writer, uint64_t now_ns, uint64_t interval_ns);

/*
 * Write devices, processes, thread names, CUDA contexts and streams, session start time, GPT_META
 * (with dropped, the CUPTI dropped-record count, and trace_complete=1); commit and close. Returns 1 when a file
 * was written, 0 when none was created, -1 on error (writer_error()).
 */
int writer_finish(struct writer *writer, uint64_t dropped);

const char *writer_error(const struct writer *writer);
const char *writer_path(const struct writer *writer);	/* NULL until created */

#endif
