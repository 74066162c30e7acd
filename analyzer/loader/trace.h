/*
 * Opening traces for analysis: ours (written by gpt-trace run or gpt-trace import) and Nsight
 * Systems SQLite exports, through one loader. A PyTorch profiler (Kineto) JSON trace, plain or
 * gzipped, is accepted too: it is imported into a trace file cached beside it
 * (analyzer/import/kineto.h), which is read.
 *
 * trace_open() opens one or more trace files (several per-process traces of one job may be given
 * together; the extra ones are ATTACHed) and creates, in the connection's TEMP schema, one
 * canonical view per kind of event. The views hide every difference between nsys versions and our
 * writer: a table that does not exist in a file (nsys creates tables lazily) contributes no rows, a
 * column that does not exist reads as NULL, NVTX text is taken inline or from StringIds, names are
 * resolved to text. Every consumer (stats, rules, export, diff) queries only these views, with
 * plain SQL through trace_db(), or reads them in time order through the loader's event streams
 * (analyzer/loader/events.h, which read the raw tables with the views' own column expressions and
 * filters, at scan speed); none of them looks at the raw tables.
 *
 * Canonical views (all times in ns; dur = end - start; traceId = index of the file in the list
 * given to trace_open, 0 for the first; nameId is the file-local StringIds id and is unique only
 * together with traceId):
 *
 *   kernels(traceId, start, end, dur, deviceId, contextId, streamId, correlationId, globalPid, pid,
 *           nameId, name, shortName, shortNameId, mangledName, mangledNameId, gridX, gridY, gridZ,
 *           blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory,
 *           localMemoryPerThread, graphNodeId, graphId)
 *       name is the demangled name (falls back to shortName, then mangledName); nameId is the first
 *       of the three StringIds ids that is not NULL, shortNameId and mangledNameId the other two
 *       (so name is the first of their strings that exists).
 *   copies(traceId, start, end, dur, deviceId, contextId, streamId, correlationId, globalPid, pid,
 *          bytes, copyKind, srcKind, dstKind, graphNodeId)
 *       copyKind as ENUM_CUDA_MEMCPY_OPER (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP...), srcKind/dstKind as
 *       ENUM_CUDA_MEM_KIND (0 pageable, 1 pinned, 2 device, 4 managed...).
 *   sets(traceId, start, end, dur, deviceId, contextId, streamId, correlationId, globalPid, pid,
 *        bytes, value, memKind, graphNodeId)
 *   syncs(traceId, start, end, dur, deviceId, contextId, streamId, correlationId, globalPid, pid,
 *         syncType, eventId)
 *       syncType as ENUM_CUPTI_SYNC_TYPE (1 event sync, 2 stream wait event, 3 stream sync,
 *       4 context sync).
 *   api_calls(traceId, start, end, dur, globalTid, pid, tid, correlationId, nameId, name,
 * eventClass, returnValue) host-side CUDA runtime (eventClass 0) and driver (eventClass 1) calls;
 * name as recorded, e.g. "cudaLaunchKernel_v7000" or "cudaLaunchKernel" (compare with LIKE
 * 'cudaLaunchKernel%'). nvtx(traceId, start, end, dur, globalTid, pid, tid, eventType, rangeId,
 * text, domainId, category, color) eventType as ENUM_NSYS_EVENT_TYPE: 34 mark (end NULL), 59
 * push/pop range, 60 start/end range, 75 domain create. gpus(traceId, id, name, smCount,
 * totalMemory, memoryBandwidth, clockRate, l2CacheSize, computeMajor, computeMinor, busLocation,
 * uuid) memoryBandwidth in bytes per second, clockRate in Hz (as nsys). memory(traceId, start,
 * deviceId, contextId, address, bytes, memKind, op, correlationId, streamId, globalPid, pid) GPU
 * memory allocations (op 0) and releases (op 1) from CUDA_GPU_MEMORY_USAGE_EVENTS, memKind as
 * ENUM_CUDA_MEM_KIND; never scoped (memory in use depends on every earlier allocation); empty for
 * traces recorded without memory records. processes(traceId, globalPid, pid, name) only processes
 * that own at least one GPU event or API call. meta(traceId, name, value) GPT_META rows of our
 * traces; for nsys files, META_DATA_EXPORT (or the older EXPORT_META_DATA) rows. trace_format()
 * tells which kind a file is. windows(traceId, id, start, end, openedBy, closedBy) capture windows
 * of traces recorded with --delay, --duration, --capture-range or --max-size (GPT_CAPTURE_WINDOWS,
 * docs/schema.md): only events starting inside a window were recorded; end NULL for a window the
 * program's death left open. No rows: the whole run was recorded (and for nsys exports).
 * analyzer/loader/windows.h reads them for the consumers. strings(traceId, id, value) StringIds of
 * every file: resolves a nameId to text without reading names row by row (a name lookup per row
 * costs ~0.3 s per million rows; group by nameId, then look up).
 *
 *   profiler_overhead(traceId, start, end, globalTid, tid, name)
 *       the profiler's own time on the program's threads (PROFILER_OVERHEAD: nsys's initialisation
 * and flushes, ours around each launch `--metrics` measured); never scoped, read whole by the walk.
 *
 *   kernel_metrics(traceId, correlationId, globalPid, deviceId, kernelName, shortName, gldSectors,
 *                  gldRequests, gstSectors, gstRequests, gldSectorsIdeal, gstSectorsIdeal,
 * durationNs, source) source_metrics(traceId, kernelName, shortName, file, line, gldSectors,
 * gldSectorsIdeal, gldRequests, gstSectors, gstSectorsIdeal, gstRequests, launches) hardware
 * counters of launches recorded with `gpt-trace run --metrics` (docs/metrics.md), joined to kernels
 * on (traceId, correlationId, globalPid). These two views exist only when at least one file holds
 * GPT_KERNEL_METRICS, so a consumer can tell "not measured" from "no rows".
 *
 *   gpu_metrics(traceId, deviceId, timestamp, metricName, value)
 *       sampled GPU metrics (`gpt-trace run --gpu-metrics`, nsys --gpu-metrics-devices): one row
 * per sample and metric, metricName as nsys names it ("SMs Active [Throughput %]"), deviceId the
 *       GPU (typeId & 0xFF). Exists only when some file has GPU_METRICS;
 * analyzer/loader/gpu-samples.h reads it as samples with their intervals.
 */
#ifndef GPT_LOADER_TRACE_H
#define GPT_LOADER_TRACE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct trace;

/*
 * Every time in the canonical views lies in [0, TRACE_TIME_MAX] (2^60 ns, 36 years), and every end
 * is at or after its start: rows whose times no clock can produce (a negative start, an end before
 * the start, times near INT64_MAX) are not in the views. So the sum or difference of any two times
 * fits in an int64_t; sums over many events still need saturating arithmetic (sat_add64).
 */
#define TRACE_TIME_MAX ((int64_t)1 << 60)

enum trace_format {
	TRACE_FORMAT_GPT = 1,	/* written by gpt-trace run (has GPT_META) */
	TRACE_FORMAT_NSYS = 2,	/* nsys export --type sqlite */
};

/*
 * Open npaths trace files read-only and create the canonical views. On failure returns a negative
 * errno-style code, stores NULL in *out and writes one line to err (lowercase, no trailing period,
 * naming the file and the reason, e.g. "cannot open 'x.sqlite': not a gpt-trace or nsys trace (no
 * CUPTI_ACTIVITY_KIND_KERNEL table)"). A missing file, a non-SQLite file, a truncated or corrupted
 * file, and a SQLite file that holds no trace tables are all errors; an empty trace is not.
 * The caller frees the result with trace_close().
 */
int trace_open(const char *const *paths, size_t npaths, struct trace **out, char *err, size_t errlen);
void trace_close(struct trace *trace);

/* The connection holding the canonical views; owned by the trace. */
sqlite3 *trace_db(struct trace *trace);
/* Whether the view exists: the ones made only when some file has their table (gpu_metrics,
 * kernel_metrics and their gpt_all_ sources, above). */
int trace_view_exists(struct trace *trace, const char *view);

/*
 * Restrict every canonical view to a scope: a time window [start, end) (both 0: no window; start 0:
 * no lower bound, end 0: no upper bound), the time spans of NVTX ranges whose text equals nvtx_range
 * (NULL: none), and kernels whose name matches the glob kernel_glob (NULL: all). Events are kept when
 * they start inside the window, and inside one of the ranges of their own process (pid). The glob
 * restricts the kernels view only; gpus, processes, meta and strings are never scoped. Setting a
 * new scope replaces the old one; a scope of all zeros/NULLs restores the whole trace. An NVTX name
 * that matches no range is an error (-ENOENT), so that a typo does not give an empty report.
 */
struct trace_scope {
	int64_t start, end;
	const char *nvtx_range;
	const char *kernel_glob;
};
int trace_set_scope(struct trace *trace, const struct trace_scope *scope, char *err, size_t errlen);


/*
 * The text of StringIds id `id` of file trace_id (the strings view's value; NULL when there is
 * none) in *out, valid until trace_close(): each (file, id) is read once (strings.c). Returns 0, or
 * a negative error (-ENOMEM, or -EIO with one line in err).
 */
int trace_string(struct trace *trace, int64_t trace_id, int64_t id, const char **out, char *err, size_t errlen);

/* A device in words: "GPU 0 (NVIDIA H200)" (its name from the gpus view, when there is one), with
 * "trace 1 " first when several files are open; device INT64_MIN (NULL) is "GPU ?". The caller
 * frees it. */
char *trace_device_label(struct trace *trace, int64_t trace_id, int64_t device);

size_t trace_count(const struct trace *trace);
const char *trace_path(const struct trace *trace, size_t traceId);
enum trace_format trace_format(const struct trace *trace, size_t traceId);

#endif
