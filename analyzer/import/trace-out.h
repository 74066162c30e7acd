/*
 * Writing a trace file in gpt-trace's schema (schema/schema.sql, docs/schema.md) from rows that
 * an importer has already converted: created under a temporary name beside the target, filled in
 * one transaction, and renamed into place only by trace_out_commit(), so that a failed import
 * leaves no file behind, and a reader never sees a half-made one. Strings are interned into
 * StringIds.
 *
 * Times are ns relative to the trace's origin (GPT_META time_origin_ns), as in the collector's
 * files. A NULL column is passed as TRACE_OUT_NULL.
 */
#ifndef GPT_IMPORT_TRACE_OUT_H
#define GPT_IMPORT_TRACE_OUT_H

#include "common/strtab.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_OUT_NULL INT64_MIN

enum trace_out_table {
	OUT_KERNEL,
	OUT_MEMCPY,
	OUT_MEMSET,
	OUT_SYNC,
	OUT_API,
	OUT_NVTX,
	OUT_GPU,
	OUT_THREAD,
	OUT_PROCESS,
	OUT_TABLES,
};

/* The columns of each table's insert, in order (see trace-out.c for the SQL). */
enum { KERNEL_START, KERNEL_END, KERNEL_DEVICE, KERNEL_CONTEXT, KERNEL_STREAM, KERNEL_CORRELATION,
       KERNEL_GLOBAL_PID, KERNEL_DEMANGLED, KERNEL_SHORT, KERNEL_REGISTERS, KERNEL_GRID_X, KERNEL_GRID_Y,
       KERNEL_GRID_Z, KERNEL_BLOCK_X, KERNEL_BLOCK_Y, KERNEL_BLOCK_Z, KERNEL_STATIC_SMEM,
       KERNEL_DYNAMIC_SMEM, KERNEL_LOCAL_PER_THREAD, KERNEL_LOCAL_TOTAL, KERNEL_GRID_ID, KERNEL_COLS };
enum { MEMCPY_START, MEMCPY_END, MEMCPY_DEVICE, MEMCPY_CONTEXT, MEMCPY_STREAM, MEMCPY_CORRELATION,
       MEMCPY_GLOBAL_PID, MEMCPY_BYTES, MEMCPY_KIND, MEMCPY_SRC_KIND, MEMCPY_DST_KIND, MEMCPY_SRC_DEVICE,
       MEMCPY_SRC_CONTEXT, MEMCPY_DST_DEVICE, MEMCPY_DST_CONTEXT, MEMCPY_COLS };
enum { MEMSET_START, MEMSET_END, MEMSET_DEVICE, MEMSET_CONTEXT, MEMSET_STREAM, MEMSET_CORRELATION,
       MEMSET_GLOBAL_PID, MEMSET_VALUE, MEMSET_BYTES, MEMSET_MEM_KIND, MEMSET_COLS };
enum { SYNC_START, SYNC_END, SYNC_DEVICE, SYNC_CONTEXT, SYNC_STREAM, SYNC_CORRELATION, SYNC_GLOBAL_PID,
       SYNC_TYPE, SYNC_EVENT, SYNC_COLS };
enum { API_START, API_END, API_CLASS, API_GLOBAL_TID, API_CORRELATION, API_NAME, API_RETURN, API_COLS };
enum { NVTX_START, NVTX_END, NVTX_TYPE, NVTX_GLOBAL_TID, NVTX_TEXT_ID, NVTX_DOMAIN, NVTX_COLS };
enum { GPU_ID, GPU_TOTAL_MEM, GPU_SMS, GPU_MAJOR, GPU_MINOR, GPU_THREADS_PER_BLOCK,
       GPU_REGS_PER_BLOCK, GPU_REGS_PER_SM, GPU_WARP_SIZE, GPU_SHMEM_PER_BLOCK, GPU_SHMEM_OPTIN,
       GPU_SHMEM_PER_SM, GPU_WARPS_PER_SM, GPU_COLS };
enum { THREAD_NAME, THREAD_GLOBAL_TID, THREAD_COLS };
enum { PROCESS_GLOBAL_PID, PROCESS_PID, PROCESS_COLS };

struct trace_out {
	sqlite3 *db;
	char *path, *tmp_path;
	sqlite3_stmt *insert[OUT_TABLES];
	sqlite3_stmt *string, *meta;
	struct strtab strings;		/* StringIds id = index + 1 */
	int64_t rows[OUT_TABLES];
	int64_t changes_ignored;	/* OUT_API rows not stored: their correlationId was there already */
	char error[512];
};

/* Create the file's temporary twin with the schema. Returns 0, or a negative error with one line in
   out->error (and nothing left on disk). */
int trace_out_create(struct trace_out *out, const char *path);

/* One row of `table`; v holds its columns in the order of the table's enum above. */
int trace_out_row(struct trace_out *out, enum trace_out_table table, const int64_t *v);
/* A GPU row also carries its name (TEXT), outside v. */
int trace_out_gpu(struct trace_out *out, const int64_t *v, const char *name);
/* A process row's name. */
int trace_out_process(struct trace_out *out, const int64_t *v, const char *name);

/* The StringIds id of s, adding it when new: > 0, or a negative error. */
int64_t trace_out_string(struct trace_out *out, const char *s);

/* A GPT_META fact (replacing an earlier one of the same name). */
int trace_out_meta(struct trace_out *out, const char *name, const char *value);
int trace_out_meta_int(struct trace_out *out, const char *name, int64_t value);

/* Run SQL in the open transaction (fix-ups at the end of an import). */
int trace_out_exec(struct trace_out *out, const char *sql);

/* Commit, close and rename into place. Returns 0, or a negative error (the temporary file removed). */
int trace_out_commit(struct trace_out *out);
/* Give up: close and remove the temporary file. Safe after commit and on a zeroed struct. */
void trace_out_abort(struct trace_out *out);

#endif
