/*
 * The writer's insides, shared by its three files and nobody else: writer.c (the rows), writer-file.c
 * (the file: created, its schema, statements and metadata, a failure that closes it) and
 * writer-finish.c (the tables written at the end).
 */
#ifndef GPT_COLLECTOR_WRITER_PRIVATE_H
#define GPT_COLLECTOR_WRITER_PRIVATE_H

#include "collector/writer.h"
#include "collector/hash.h"
#include "collector/threads.h"
#include "collector/capture-windows.h"

#include <sqlite3.h>

enum stmt_id {
	ST_KERNEL,
	ST_MEMCPY,
	ST_MEMSET,
	ST_SYNC,
	ST_API,
	ST_NVTX,
	ST_STRING,
	ST_META,
	ST_GPU_METRIC,
	ST_GPU_METRIC_INFO,
	ST_GPT_GPU_METRICS,
	ST_MEMORY,
	ST_MEMPOOL,
	ST_COUNT,
};

enum row_counter {
	COUNT_KERNEL,
	COUNT_MEMCPY,
	COUNT_MEMSET,
	COUNT_SYNC,
	COUNT_API,
	COUNT_NVTX,
	COUNT_API_DUPLICATE,
	COUNT_MEMORY,
	COUNT_MEMPOOL,
	COUNT_MEMORY_DROPPED,
	COUNT_MAX,
};

struct kernel_names {
	int64_t demangled, short_name, mangled;
};

struct meta_fact {
	char *name, *value;
};

/* A stream a row ran on, or CUPTI described: one TARGET_INFO_CUDA_STREAM row. */
struct stream_info {
	uint32_t context_id, stream_id, device_id;
	uint32_t priority;
	int flag;			/* ENUM_CUPTI_STREAM_TYPE, when described */
	int described;			/* CUPTI sent a stream record for it */
};

struct writer {
	struct writer_options options;
	char *pattern;			/* options.path, copied */
	char path[4096];
	int created, failed;
	char error[1024];

	sqlite3 *db;
	sqlite3_stmt *stmt[ST_COUNT];
	int64_t global_pid;
	uint64_t last_commit_ns;

	int64_t next_string_id;
	struct strmap strings;
	struct strmap kernel_name_index;	/* mangled name -> index into kernel_names */
	struct kernel_names *kernel_names;
	size_t nkernel_names, kernel_names_capacity;
	int64_t *api_names[2];			/* [event_class][cbid] -> StringIds id + 1 */
	size_t api_names_len[2];

	struct device_row *devices;
	char **device_names;
	size_t ndevices;
	struct context_row *contexts;
	size_t ncontexts;
	struct u64map stream_index;		/* contextId << 32 | streamId -> 1 + index */
	struct stream_info *streams;
	size_t nstreams, streams_capacity;
	uint64_t last_stream;			/* key of the last row's stream ... */
	int has_last_stream;			/* ... once there was one */

	struct threads threads;
	uint64_t thread_names_fallback;		/* ThreadNames rows named by their tid */

	struct meta_fact *meta;
	size_t nmeta;

	uint64_t counts[COUNT_MAX];
	uint64_t untimed;

	/* Capture windows and --max-size (capture-windows.h; the block "Capture windows" below). */
	struct capture_windows windows;
	uint64_t rows_since_size_check;
	uint64_t page_size;
	/* GPU metrics: per device, the GPU_METRICS metrics described in TARGET_INFO_GPU_METRICS. */
	struct gpu_metrics_seen {
		uint32_t device_id;
		unsigned described;	/* bit per enum gpu_metric_row */
	} *gpu_metrics_seen;
	size_t ngpu_metrics_seen;
	uint64_t gpu_metric_samples;
	uint64_t gpu_metric_samples_idle;	/* not stored (gpu_metrics_idle) */
};

/* writer-file.c */

/* The writer fails for good: the message kept (writer_error) and reported once, the file closed
 * with what was committed. */
void writer_fail(struct writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* writer_fail() with SQLite's message (and the system's, which tells a full disk from a size
 * limit): -1. */
int writer_sql_failed(struct writer *w);
int writer_exec(struct writer *w, const char *sql);
/* Create the file, the schema and the statements; begin the first transaction. */
int writer_create(struct writer *w);
/* GPT_META: the schema version, the time origin and every fact writer_meta() was given. */
int writer_put_all_meta(struct writer *w);

/* writer.c */

/* GPT_CAPTURE_WINDOWS, rewritten whenever the windows changed (a handful of rows). */
int writer_put_windows(struct writer *w);

#endif
