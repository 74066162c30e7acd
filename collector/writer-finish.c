/*
 * The tables a trace gets when its program ends (writer_finish): the GPUs, the processes and threads
 * the rows name, the CUDA contexts and streams, the session's start, and the last metadata (record
 * counts, the trace_complete mark); then the last commit. A killed program's trace has none of them
 * but everything committed before.
 */
#define _GNU_SOURCE
#include "collector/writer-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* GPT_META's names of the row counts, by enum row_counter. */
static const char *const count_meta_name[COUNT_MAX] = {
	"kernel_records", "memcpy_records", "memset_records",
	"sync_records",	  "api_records",    "nvtx_records",
	"api_records_duplicate",
	"memory_records", "mempool_records", "memory_records_dropped",
};

static void format_uuid(const uint8_t *u, char *out, size_t len)
{
	snprintf(out, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
}

static int writer_finish_devices(struct writer *w)
{
	static const char sql[] =
		"INSERT INTO TARGET_INFO_GPU (vmId, id, name, l2CacheSize, totalMemory, "
		"memoryBandwidth, clockRate, smCount, uuid, cuDevice, constantMemory, maxIPC, "
		"maxRegistersPerBlock, maxShmemPerBlock, maxShmemPerSm, maxRegistersPerSm, "
		"threadsPerWarp, maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock, maxBlockDimX, "
		"maxBlockDimY, maxBlockDimZ, maxGridDimX, maxGridDimY, maxGridDimZ, computeMajor, "
		"computeMinor, smMajor, smMinor) VALUES (0,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		"?,?,?,?,?,?,?,?)";
	char pid_sql[256];
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		return writer_sql_failed(w);
	for (size_t i = 0; i < w->ndevices; i++) {
		const struct device_row *d = &w->devices[i];
		char uuid[40];
		int col = 1;

		format_uuid(d->uuid, uuid, sizeof(uuid));
		sqlite3_bind_int64(st, col++, d->id);
		sqlite3_bind_text(st, col++, d->name ? d->name : "", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, col++, d->l2_cache_size);
		sqlite3_bind_int64(st, col++, (int64_t)d->total_memory);
		sqlite3_bind_int64(st, col++, (int64_t)d->memory_bandwidth);
		sqlite3_bind_int64(st, col++, (int64_t)d->clock_rate);
		sqlite3_bind_int64(st, col++, d->sm_count);
		sqlite3_bind_text(st, col++, uuid, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, col++, d->id);
		sqlite3_bind_int64(st, col++, d->constant_memory);
		sqlite3_bind_int64(st, col++, d->max_ipc);
		sqlite3_bind_int64(st, col++, d->max_registers_per_block);
		sqlite3_bind_int64(st, col++, d->max_shmem_per_block);
		sqlite3_bind_int64(st, col++, d->max_shmem_per_sm);
		sqlite3_bind_int64(st, col++, d->max_registers_per_sm);
		sqlite3_bind_int64(st, col++, d->threads_per_warp);
		sqlite3_bind_int64(st, col++, d->max_warps_per_sm);
		sqlite3_bind_int64(st, col++, d->max_blocks_per_sm);
		sqlite3_bind_int64(st, col++, d->max_threads_per_block);
		for (int k = 0; k < 3; k++)
			sqlite3_bind_int64(st, col++, d->max_block_dim[k]);
		for (int k = 0; k < 3; k++)
			sqlite3_bind_int64(st, col++, d->max_grid_dim[k]);
		sqlite3_bind_int64(st, col++, d->compute_major);
		sqlite3_bind_int64(st, col++, d->compute_minor);
		sqlite3_bind_int64(st, col++, d->compute_major);
		sqlite3_bind_int64(st, col++, d->compute_minor);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return writer_sql_failed(w);
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	/* TARGET_INFO_CUDA_DEVICE, as nsys's recipes join GPU_METRICS to it (gpu_metric_util_sum reads
	 * gpuId and pid): the same devices, CUDA's ordinals on both sides. */
	snprintf(pid_sql, sizeof(pid_sql), "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, "
		 "numMultiprocessors) SELECT id, id, %u, uuid, smCount FROM TARGET_INFO_GPU ORDER BY id",
		 (unsigned)w->options.pid);
	return writer_exec(w, pid_sql);
}

/* A process's name as nsys's PROCESSES has it: argv[0], else its comm, else "?". */
static void process_name(const struct writer *w, uint32_t pid, char *name, size_t len)
{
	char path[64];

	if (pid == w->options.pid)
		snprintf(path, sizeof(path), "/proc/self/cmdline");
	else
		snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	if (threads_read_proc(path, name, len) > 0)
		return;	/* argv[0]: the text up to the first NUL */
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (pid != w->options.pid && threads_read_proc(path, name, len) > 0) {
		name[strcspn(name, "\n")] = '\0';
		return;
	}
	snprintf(name, len, "?");
}

/* PROCESSES: the traced process, and any other process a row names (CUPTI's API records). */
static int writer_finish_processes(struct writer *w)
{
	uint32_t *pids = NULL;
	size_t npids = 0;
	char name[4096];
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	pids = malloc((w->threads.count + 1) * sizeof(*pids));
	if (!pids) {
		writer_fail(w, "cannot write trace '%s': out of memory", w->path);
		return -1;
	}
	pids[npids++] = w->options.pid;
	for (size_t i = 0; i < w->threads.count; i++) {
		size_t j = 0;

		while (j < npids && pids[j] != w->threads.items[i].pid)
			j++;
		if (j == npids)
			pids[npids++] = w->threads.items[i].pid;
	}
	if (sqlite3_prepare_v2(w->db, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK) {
		free(pids);
		return writer_sql_failed(w);
	}
	for (size_t i = 0; i < npids && rc == SQLITE_DONE; i++) {
		process_name(w, pids[i], name, sizeof(name));
		sqlite3_bind_int64(st, 1, (int64_t)pids[i] << 24);
		sqlite3_bind_int64(st, 2, pids[i]);
		sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	free(pids);
	return rc == SQLITE_DONE ? 0 : writer_sql_failed(w);
}

/*
 * ThreadNames: one row per thread any row names. The names of threads still alive are read again
 * here, so that a thread that renamed itself after its first recorded call has its final name;
 * threads gone keep the name read when they were first seen.
 */
static int writer_finish_threads(struct writer *w)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(w->db, "INSERT INTO ThreadNames (nameId, priority, globalTid) "
				      "VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return writer_sql_failed(w);
	for (size_t i = 0; i < w->threads.count; i++) {
		struct thread_info *thread = &w->threads.items[i];
		const char *name;
		char tid_text[16];
		int64_t name_id;
		int fallback;

		threads_read(&w->threads, thread);
		name = thread_name(thread, tid_text, sizeof(tid_text), &fallback);
		w->thread_names_fallback += fallback;
		if (writer_intern(w, name, strlen(name), &name_id) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
		sqlite3_bind_int64(st, 1, name_id);
		if (thread->has_priority)
			sqlite3_bind_int64(st, 2, thread->priority);
		else
			sqlite3_bind_null(st, 2);
		sqlite3_bind_int64(st, 3, thread_global_tid(thread->pid, thread->tid));
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return writer_sql_failed(w);
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
}

static const struct context_row *writer_context_row(const struct writer *w, uint32_t context_id)
{
	for (size_t i = 0; i < w->ncontexts; i++)
		if (w->contexts[i].context_id == context_id)
			return &w->contexts[i];
	return NULL;
}

/*
 * TARGET_INFO_CUDA_CONTEXT_INFO and TARGET_INFO_CUDA_STREAM, as nsys fills them from the same CUPTI
 * records (hwId and vmId 0: our globalPid carries no host bits either). A context or stream known
 * only from the rows that ran on it (CUPTI described none: created before tracing began, or the
 * stream activity kind unavailable) gets a row too: nullStreamId 0 for such a context; for such a
 * stream priority 0 and flag 3 (NULL stream) when it is its context's NULL stream, else 0 (unknown).
 */
static int writer_finish_cuda_targets(struct writer *w)
{
	sqlite3_stmt *ctx = NULL, *str = NULL;
	int rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(w->db, "INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId, hwId, "
				      "vmId, processId, deviceId, contextId, parentContextId, "
				      "isGreenContext) VALUES (?, 0, 0, ?, ?, ?, ?, ?)",
			       -1, &ctx, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, "
				      "processId, contextId, priority, flag) VALUES (?, 0, 0, ?, ?, ?, ?)",
			       -1, &str, NULL) != SQLITE_OK)
		goto out_failed;
	for (size_t i = 0; i < w->ncontexts && rc == SQLITE_DONE; i++) {
		const struct context_row *c = &w->contexts[i];

		sqlite3_bind_int64(ctx, 1, c->null_stream_id);
		sqlite3_bind_int64(ctx, 2, w->options.pid);
		sqlite3_bind_int64(ctx, 3, c->device_id);
		sqlite3_bind_int64(ctx, 4, c->context_id);
		sqlite3_bind_int64(ctx, 5, c->parent_context_id);
		sqlite3_bind_int(ctx, 6, c->is_green_context);
		rc = sqlite3_step(ctx);
		sqlite3_reset(ctx);
	}
	for (size_t i = 0; i < w->nstreams && rc == SQLITE_DONE; i++) {
		const struct stream_info *s = &w->streams[i];
		const struct context_row *c = writer_context_row(w, s->context_id);
		size_t first;
		int flag;

		/* A context only the rows name: one row, from the first of its streams. */
		for (first = 0; first < i && w->streams[first].context_id != s->context_id; first++)
			;
		if (!c && first == i) {
			sqlite3_bind_int64(ctx, 1, 0);
			sqlite3_bind_int64(ctx, 2, w->options.pid);
			sqlite3_bind_int64(ctx, 3, s->device_id == ROW_NO_ID ? 0 : s->device_id);
			sqlite3_bind_int64(ctx, 4, s->context_id);
			sqlite3_bind_int64(ctx, 5, 0);
			sqlite3_bind_int(ctx, 6, 0);
			rc = sqlite3_step(ctx);
			sqlite3_reset(ctx);
			if (rc != SQLITE_DONE)
				break;
		}
		sqlite3_bind_int64(str, 1, s->stream_id);
		sqlite3_bind_int64(str, 2, w->options.pid);
		sqlite3_bind_int64(str, 3, s->context_id);
		if (s->described)
			flag = s->flag;
		else
			flag = c && c->null_stream_id == s->stream_id ? CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL
								      : CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN;
		sqlite3_bind_int64(str, 4, s->described ? s->priority : 0);
		sqlite3_bind_int(str, 5, flag);
		rc = sqlite3_step(str);
		sqlite3_reset(str);
	}
	if (rc != SQLITE_DONE)
		goto out_failed;
	sqlite3_finalize(ctx);
	sqlite3_finalize(str);
	return 0;

out_failed:
	sqlite3_finalize(ctx);
	sqlite3_finalize(str);
	return writer_sql_failed(w);
}

static int writer_finish_session_start(struct writer *w)
{
	time_t secs = (time_t)(w->options.time_origin_utc_ns / 1000000000ull);
	char utc[40], local[40], sql[256];
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(utc, sizeof(utc), "%Y-%m-%dT%H:%M:%S", &tm);
	localtime_r(&secs, &tm);
	strftime(local, sizeof(local), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(sql, sizeof(sql), "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (%llu, '%s', '%s')",
		 (unsigned long long)w->options.time_origin_utc_ns, utc, local);
	return writer_exec(w, sql);
}

static int writer_finish_meta(struct writer *w, uint64_t dropped)
{
	char value[32];

	snprintf(value, sizeof(value), "%llu", (unsigned long long)dropped);
	writer_meta(w, "cupti_dropped_records", value);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)w->untimed);
	writer_meta(w, "untimed_records", value);
	for (int i = 0; i < COUNT_MAX; i++) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->counts[i]);
		writer_meta(w, count_meta_name[i], value);
	}
	if (w->thread_names_fallback) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->thread_names_fallback);
		writer_meta(w, "thread_names_fallback", value);
	}
	if (w->gpu_metric_samples || w->gpu_metric_samples_idle) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->gpu_metric_samples);
		writer_meta(w, "gpu_metric_samples", value);
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->gpu_metric_samples_idle);
		writer_meta(w, "gpu_metric_samples_idle", value);
	}
	writer_meta(w, "trace_complete", "1");
	if (writer_put_all_meta(w) < 0)
		return -1;
	/* nsys's record of the GPU metrics' rate, in Hz (SQL written for nsys reads
	 * GPU_METRICS_OPTIONS:SAMPLING_FREQUENCY to turn samples into time). */
	return writer_exec(w, "INSERT INTO META_DATA_CAPTURE (name, value) SELECT "
			      "'GPU_METRICS_OPTIONS:SAMPLING_FREQUENCY', 1000000000 / CAST(value AS INTEGER) "
			      "FROM GPT_META WHERE name = 'gpu_metrics_interval_ns' AND CAST(value AS INTEGER) > 0");
}

int writer_finish(struct writer *w, uint64_t dropped)
{
	if (w->failed)
		return -1;
	if (!w->created)
		return 0;
	if (writer_finish_devices(w) < 0 || writer_finish_processes(w) < 0 ||
	    writer_finish_threads(w) < 0 || writer_finish_cuda_targets(w) < 0 ||
	    writer_finish_session_start(w) < 0 || writer_put_windows(w) < 0 ||
	    writer_finish_meta(w, dropped) < 0)
		return -1;
	if (writer_exec(w, "COMMIT") < 0)
		return -1;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(w->stmt[i]);
	memset(w->stmt, 0, sizeof(w->stmt));
	if (sqlite3_close(w->db) != SQLITE_OK)
		return writer_sql_failed(w);
	w->db = NULL;
	return 1;
}
