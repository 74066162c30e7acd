/*
 * The PyTorch profiler's traces (Kineto's Chrome-trace JSON: torch.profiler's export_chrome_trace
 * and tensorboard_trace_handler, `*.pt.trace.json[.gz]`) converted into gpt-trace's schema, so that
 * every analyzer command reads them as it reads a recorded trace (docs/import.md):
 *
 *   kernel, gpu_memcpy, gpu_memset, cuda_sync   CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET,
 *   (legacy Kernel, Memcpy, Memset)             _SYNCHRONIZATION, linked to their launches by the
 *                                               CUPTI correlation id Kineto keeps in args
 *   cuda_runtime, cuda_driver (legacy Runtime)  CUPTI_ACTIVITY_KIND_RUNTIME (eventClass 0 / 1)
 *   cpu_op, user_annotation (legacy Operator)   NVTX_EVENTS push/pop ranges on their threads, so
 *                                               ProfilerStep#N become the report's iterations
 *   deviceProperties                            TARGET_INFO_GPU
 *   distributedInfo                             GPT_META rank, world_size (the cross-rank report)
 *   process_name, thread_name                   PROCESSES, ThreadNames
 *
 * and GPT_META rows saying where the trace came from (import_source, import_format...) and what it
 * lacks (import_note_01...), never a made-up value. Everything else (flows, python_function,
 * gpu_user_annotation, [memory] events) is counted by category in import_skipped.
 */
#ifndef GPT_IMPORT_KINETO_H
#define GPT_IMPORT_KINETO_H

#include <stddef.h>
#include <stdint.h>

/* What an import wrote, for the command's summary line. */
struct kineto_import_counts {
	int64_t events;		/* elements of traceEvents */
	int64_t kernels, copies, sets, syncs, api_calls, ranges, steps;
	int64_t skipped;	/* events of categories not imported */
	int64_t bytes;		/* JSON text read */
	int notes;		/* import_note_N rows */
};

/*
 * Convert the Kineto trace json_path into a new trace file out_path (replaced if it exists). The
 * file appears only when the import succeeds. Returns 0, or a negative error with one line in err:
 * unreadable, truncated or malformed JSON, a Chrome trace that is not Kineto's, no events.
 * counts may be NULL.
 */
int kineto_import(const char *json_path, const char *out_path, struct kineto_import_counts *counts, char *err,
		  size_t errlen);

/*
 * Whether path looks like a JSON trace (its first non-blank byte is '{' or '[') or a gzip file, so
 * that a reader of SQLite traces should import it first: 1, or 0 (not one, or unreadable).
 */
int kineto_sniff(const char *path);

/*
 * The trace file made from json_path: TRACE.json[.gz].sqlite beside it, made now unless one made
 * from the file as it is (size and modification time, GPT_META import_source_*) by this version is
 * there. When the folder cannot be written, the conversion goes to a private temporary folder, and
 * *tmp_dir names it (the caller removes the file and the folder); else *tmp_dir is NULL.
 * Returns 0 with the path in *sqlite_path (caller frees), or a negative error with one line in err.
 */
int kineto_cached(const char *json_path, char **sqlite_path, char **tmp_dir, char *err, size_t errlen);

#endif
