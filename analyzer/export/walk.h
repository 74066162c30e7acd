/*
 * Private to the timeline walk (timeline.c and walk-*.c): the walk's state (struct timeline), the
 * columns it reads, and the steps its passes share. timeline.c runs the passes: the index and the
 * tracks (walk-index.c), the host (walk-host.c), the GPU (walk-gpu.c), then the findings; all of
 * them stand on walk-base.c.
 */
#ifndef GPT_EXPORT_WALK_H
#define GPT_EXPORT_WALK_H

#include "analyzer/export/export.h"
#include "analyzer/export/timeline.h"
#include "analyzer/loader/events.h"
#include "common/key-index.h"
#include "common/progress.h"
#include "common/util.h"
#include "analyzer/analysis/memory-use.h"
#include "analyzer/analysis/analysis.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/*
 * Pseudo pids and tids, above Linux's largest pid (2^22) so they never meet a real one, and
 * ascending in track order (host processes, GPUs, findings) for readers that sort by pid.
 */
#define PSEUDO_TID_BASE 0x7d000000		/* lanes, streams and the findings thread */
#define PSEUDO_PID_GPU 0x7e000000		/* + device id */
#define PSEUDO_PID_FINDINGS 0x7f000000
#define PSEUDO_PID_CRITICAL 0x7f000001	/* the what-if replay's critical path */

/* Sort indices inside a process; lanes of a thread or stream follow it. */
#define SORT_THREAD_STEP 100
#define SORT_NVTX_LANES 1000000
#define SORT_SYNC_LANES 2000000
#define SORT_COUNTERS 3000000
/* Sort indices of processes: host processes count from 0. */
#define SORT_GPUS 1000000
#define SORT_FINDINGS 2000000
#define SORT_CRITICAL 2000001

#define COUNTER_BUCKETS 1000
#define SYNC_INVALID 4294967295LL	/* CUPTI_SYNCHRONIZATION_INVALID_VALUE: no stream / no event */

/* The columns the exporter reads. The GPU views' first ten (and the API calls' first five, the NVTX
 * ranges' first three) are the rules' walk's (analyzer/analysis/gaps.c), so a report's copies serve
 * it too. */
enum { G_END, G_DEVICE, G_STREAM, G_GRAPH_NODE, G_CORR, G_PID };
enum { K_NAME = 6, K_GRIDX, K_GRIDY, K_GRIDZ, K_SHORT_NAME, K_MANGLED_NAME, K_CONTEXT, K_BLOCKX, K_BLOCKY,
       K_BLOCKZ, K_REGISTERS, K_STATIC_SMEM, K_DYNAMIC_SMEM, K_LOCAL_MEM, K_GRAPH, K_NCOLS };
enum { C_BYTES = 6, C_KIND, C_SRC, C_DST, C_CONTEXT, C_NCOLS };
enum { S_BYTES = 6, S_MEM_KIND, S_CONTEXT, S_VALUE, S_NCOLS };
enum { A_END, A_GTID, A_PID, A_CORR, A_NAME, A_TID, A_CLASS, A_RETURN, A_NCOLS };
enum { N_END, N_GTID, N_TEXT, N_PID, N_TID, N_TYPE, N_DOMAIN, N_CATEGORY, N_COLOR, N_NCOLS };
enum { Y_END, Y_PID, Y_CORR, Y_TYPE, Y_EVENT, Y_STREAM, Y_DEVICE, Y_NCOLS };

static const char *const kernel_cols[K_NCOLS] = {
	"end", "deviceId", "streamId", "graphNodeId", "correlationId", "pid", "nameId", "gridX", "gridY",
	"gridZ", "shortNameId", "mangledNameId", "contextId", "blockX", "blockY", "blockZ",
	"registersPerThread", "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread", "graphId",
};
static const char *const copy_cols[C_NCOLS] = {
	"end", "deviceId", "streamId", "graphNodeId", "correlationId", "pid", "bytes", "copyKind", "srcKind",
	"dstKind", "contextId",
};
static const char *const set_cols[S_NCOLS] = {
	"end", "deviceId", "streamId", "graphNodeId", "correlationId", "pid", "bytes", "memKind", "contextId",
	"value",
};
static const char *const api_cols[A_NCOLS] = {
	"end", "globalTid", "pid", "correlationId", "nameId", "tid", "eventClass", "returnValue",
};
static const char *const nvtx_cols[N_NCOLS] = {
	"end", "globalTid", "text", "pid", "tid", "eventType", "domainId", "category", "color",
};
static const char *const sync_cols[Y_NCOLS] = {
	"end", "pid", "correlationId", "syncType", "eventId", "streamId", "deviceId",
};

enum { V_KERNELS, V_COPIES, V_SETS, V_API, V_NVTX, V_SYNCS, NVIEWS };

static const struct event_columns export_streams[NVIEWS] = {
	[V_KERNELS] = { "kernels", kernel_cols, K_NCOLS, 3, -1 },
	[V_COPIES] = { "copies", copy_cols, C_NCOLS, 3, -1 },
	[V_SETS] = { "sets", set_cols, S_NCOLS, 3, -1 },
	[V_API] = { "api_calls", api_cols, A_NCOLS, 0, -1 },
	[V_NVTX] = { "nvtx", nvtx_cols, N_NCOLS, 0, N_TEXT },
	[V_SYNCS] = { "syncs", sync_cols, Y_NCOLS, 0, -1 },
};

/* NVTX event types (nsys's ENUM_NSYS_EVENT_TYPE) the timeline shows. */
#define NVTX_MARK 34
#define NVTX_PUSH_POP 59
#define NVTX_START_END 60

enum lane_naming {
	LANE_OVERLAP,	/* lane 0 is a thread or stream; lane k is "<name> (overlap k)" */
	LANE_NUMBERED,	/* lanes made on demand: "<name>", "<name> (2)", ... */
};

struct lane {
	struct timeline_track track;
	char *name;		/* owned, for lanes made here */
	int64_t *ends;		/* open slices' end times, innermost last */
	size_t depth, cap;
};

struct lane_set {
	struct lane *lanes;
	size_t n;
	enum lane_naming naming;
	const char *name;
	int32_t pid;
	uint64_t parent_uuid;
	int32_t sort_base;
};

struct host_process {
	int64_t trace_id;
	int32_t pid;
	int32_t nthreads;	/* threads other than the main one, for their order */
	char *name;
	struct timeline_track track;
	struct lane_set nvtx_ranges, syncs;
};

struct host_thread {
	int64_t trace_id;
	int32_t pid, tid;
	char *name;
	struct timeline_track track;
	struct lane_set lanes;
};

enum copy_direction { DIR_HTOD, DIR_DTOH, DIR_DTOD, DIR_PTOP, DIR_OTHER, NDIRS };

struct counter_buckets {
	int64_t origin, end, width;
	size_t n;
	double *busy;			/* ns busy per bucket */
	double *bytes[NDIRS];		/* bytes copied per bucket */
	int used[NDIRS];
};

struct gpu {
	int64_t device;
	char *name;
	struct timeline_track track;
	int nprocesses;		/* host processes with work on it */
	struct counter_buckets b;
	int64_t busy_start, busy_end;	/* the busy interval being merged */
	int busy_open;
};

struct gpu_stream {
	int64_t device, stream, trace_id;
	int32_t pid;
	char *name;
	struct timeline_track track;
	struct lane_set lanes;
};

/* A correlation id whose GPU items are still being numbered (graph launches: several items). */
struct flow_rank {
	int64_t trace_id, correlation_id;
	int64_t seen;
};

/* A row taken out of its stream, to be ordered among the rows with the same timestamp. */
struct held_row {
	struct event_row row;		/* row.text: owned */
	int64_t end;			/* as drawn: not before the start */
	int kind;			/* enum host_kind or enum gpu_kind */
	int32_t tid;			/* host rows: the thread (a synchronization: its owner's) */
};

struct held_rows {
	struct held_row *items;
	size_t n, cap;
};

/* "(x, y, z)" of a kernel's grid or block, formatted once per shape (a trace launches a few shapes
 * millions of times), by a hash of the shape; one table for grids, one for blocks, so that a kernel's
 * two texts never share an entry. */
#define DIMS_MEMO 64
struct dims_memo {
	int64_t d[3];
	int used;
	char text[72];
};

struct timeline {
	struct dims_memo dims[2][DIMS_MEMO];
	struct trace *trace;
	sqlite3 *db;
	struct timeline_sink *sink;
	char *err;
	size_t errlen;
	int64_t origin, end;
	uint64_t next_uuid;
	int32_t next_tid;

	/* Host processes and threads, declared before the walk in (trace, pid, tid) order. */
	struct host_process **procs;
	size_t nprocs, procs_cap;
	struct host_thread **threads;
	size_t nthreads, threads_cap;
	sqlite3_stmt *process_name;
	/* What the index found: keys (trace, pid, tid) and (trace, pid) to dense indexes, and the
	 * processes' flags (PROC_*); after the declaration, the track of each index. */
	struct key_index thread_index, proc_index;
	int64_t (*thread_keys)[3];
	int *proc_flags;
	int64_t (*proc_keys)[2];
	struct host_thread **thread_of;
	struct host_process **proc_of;

	struct gpu *gpus;
	size_t ngpus;
	struct memory_summary *memory;	/* GPU memory in use, for its counter tracks; NULL: none */
	struct gpu_stream *streams;	/* sorted by (device, stream, trace, pid) */
	size_t nstreams, streams_cap;
	struct key_index stream_index;	/* the index's set of streams */

	struct corr_map *corr;
	struct held_rows held;
	uint64_t *flows;	/* flow ids of the API call being written */
	size_t flows_cap;
	struct flow_rank *ranks;
	size_t nranks, ranks_cap;
	struct progress progress;	/* over every row the passes read */
	/* sampled GPU metrics (analyzer/loader/gpu-samples.h), loaded with the first device's
	 * counters */
	struct gpu_samples *samples;
	int nsample_devices;		/* -1: not loaded yet */
};

#define PROC_THREADS 1		/* has a thread */
#define PROC_RANGES 2		/* has NVTX start/end ranges */
#define PROC_SYNCS 4		/* has synchronization records no API call claims */

/* Enum labels as in schema/schema.sql (nsys's ENUM_* tables). */
static const char *const copy_kind_labels[] = {
	"Unknown", "Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host", "Array-to-Array",
	"Array-to-Device", "Device-to-Array", "Device-to-Device", "Host-to-Host", "Peer-to-Peer",
	"Unified Host-to-Device", "Unified Device-to-Host", "Unified Device-to-Device",
};
static const char *const mem_kind_labels[] = {
	"Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown",
};
static const char *const sync_type_labels[] = {
	"Unknown", "Event sync", "Stream wait sync", "Stream sync", "Context sync",
};

#define LABEL(table, v) \
	((v) >= 0 && (size_t)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : "Unknown")

int walk_sql_error(struct timeline *tl, const char *what);
int walk_prepare(struct timeline *tl, const char *sql, sqlite3_stmt **st);
char *walk_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *walk_column_text(sqlite3_stmt *st, int col);
void lane_set_init(struct lane_set *set, enum lane_naming naming, const char *name, int32_t pid,
		   uint64_t parent_uuid, int32_t sort_base);
int lane_set_init_track(struct lane_set *set, const struct timeline_track *track);
void lane_set_release(struct lane_set *set);
int lane_settle(struct timeline *tl, struct lane *lane, int64_t ts);
int lane_place(struct timeline *tl, struct lane_set *set, int64_t start, int64_t end,
	       const struct timeline_track **track);
int lane_set_flush(struct timeline *tl, struct lane_set *set);
uint64_t flow_id(int64_t trace_id, int64_t correlation_id, int64_t rank);
int walk_string_of(struct timeline *tl, const struct event_row *r, size_t col, const char **out);
struct held_row *walk_hold(struct held_rows *h, const struct event_row *r, int kind, int has_text);
void held_clear(struct held_rows *h);
int held_compare_host(const void *pa, const void *pb);
int held_compare_gpu(const void *pa, const void *pb);
uint64_t *corr_word(struct timeline *tl, const struct event_row *r, size_t col);
int walk_open_view(struct timeline *tl, int v, struct event_stream **s);
int index_pass(struct timeline *tl);
int declare_host_tracks(struct timeline *tl);
int load_gpus(struct timeline *tl);
int declare_gpu_tracks(struct timeline *tl);
void walk_arg_int(struct timeline_arg *args, size_t *n, const char *name, int64_t v);
void walk_arg_double(struct timeline_arg *args, size_t *n, const char *name, double v);
void walk_arg_string(struct timeline_arg *args, size_t *n, const char *name, const char *v);
int walk_missing(struct timeline *tl, const char *what);
int walk_first_row(const struct event_row *const *cur, size_t n, int by_trace);
int walk_host(struct timeline *tl);
int walk_gpu(struct timeline *tl);

#endif
