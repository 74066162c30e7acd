/*
 * GPU idle gaps and their causes, in one streaming pass over a trace (private to rules/; used by
 * idle-gaps, excessive-sync, sync-memcpy, small-kernels and pageable-memcpy).
 *
 * A device is idle from the moment all work started on it so far has ended (kernels, copies and
 * memsets of every stream) until the next operation starts. Each gap is blamed, in the manner of
 * Holistic Trace Analysis, by looking at the host thread that issued the operation ending it:
 *
 *   sync-wait  that thread was blocked in a synchronizing call (cudaDeviceSynchronize and friends,
 *              or a copy without "Async") when the device ran out of work, and only then issued
 *              the next operation: the host could not queue work ahead because it was waiting (a
 *              "drain"; what the host did after the call returned is in the gap's parts below);
 *   host-wait  the thread was still issuing the operation, or issued it only after the device had
 *              gone idle, and was not blocked in such a call: the host was late;
 *   other      the operation had been issued completely before the device went idle and still
 *              started late (launch latency, a dependency on another stream or event), or the
 *              trace has no API record of who issued it.
 *
 * Memory grows with the number of devices, host threads, launches in flight and the host activity
 * inside the current gaps, not with the number of events: the loader's event streams give the
 * operations, the API calls and the NVTX ranges in time order (analyzer/loader/events.h), and this
 * code merges them.
 */
#ifndef GPT_ANALYSIS_GAPS_H
#define GPT_ANALYSIS_GAPS_H

#include "analyzer/analysis/analysis.h"
#include "common/key-index.h"

/* What an API call is, from its name (cudaLaunchKernel_v7000, cuMemcpyHtoDAsync_v2...). */
enum api_class {
	API_LAUNCH = 1 << 0,		/* issues kernels */
	API_GRAPH = 1 << 1,		/* issues a whole graph's work under one correlation id */
	API_COPY = 1 << 2,
	API_SET = 1 << 3,
	API_SYNC = 1 << 4,		/* device, stream, event or context synchronize */
	API_BLOCKING_COPY = 1 << 5,	/* a copy call without "Async" */
	API_ALLOC = 1 << 6,		/* allocates, frees, maps or pins memory (api_family: allocation) */
	/* Not a name's class but one call's: a launch that `gpt-trace run --metrics` replayed for
	 * hardware counters or patched for SASS metrics (its correlation id is in kernel metrics), so
	 * that the call's time is the profiler's, not the program's launch cost; also the profiler's
	 * own intervals (PROFILER_OVERHEAD), which the walk keeps among the thread's calls. */
	API_REPLAYED = 1 << 7,
};
#define API_ISSUES (API_LAUNCH | API_GRAPH | API_COPY | API_SET)
#define API_BLOCKS (API_SYNC | API_BLOCKING_COPY)

unsigned api_class_of(const char *name);

/* The classified API names of every trace (from the strings view). */
struct api_names {
	struct key_index index;	/* (traceId, nameId) -> entry */
	int64_t (*keys)[2];		/* traceId, nameId */
	unsigned *classes;
	char **names;
	size_t n;
};
int api_names_load(const struct analysis_context *ctx, struct api_names *names, char *err,
		   size_t errlen);
unsigned api_names_class(const struct api_names *names, int64_t trace_id, int64_t name_id);
const char *api_names_name(const struct api_names *names, int64_t trace_id, int64_t name_id);
/* An SQL condition on api_calls' traceId and nameId: calls whose class meets mask ("0" if none).
 * Free with sqlite3_free(). */
char *api_names_sql(const struct api_names *names, unsigned mask);
void api_names_release(struct api_names *names);

enum gap_cause {
	GAP_HOST_WAIT = 0,
	GAP_SYNC_WAIT = 1,
	GAP_OTHER = 2,
};
#define GAP_NCAUSES 3

enum gpu_op {
	GPU_OP_KERNEL = 0,
	GPU_OP_COPY = 1,
	GPU_OP_SET = 2,
};

/*
 * What the host thread that issued the operation ending a gap was doing, ns by ns (with
 * gap_walk.attribute set). Every idle ns of a gap falls in exactly one part:
 *
 *   IDLE_SYNC     blocked in a synchronizing call or a blocking copy (detail: the call)
 *   IDLE_CUDA     in another CUDA call (detail: the call; api_category() says what kind)
 *   IDLE_RANGE    in host code inside an NVTX range (detail: the innermost range's text)
 *   IDLE_HOST     in host code outside any NVTX range: the launch path, Python, data loading
 *   IDLE_LAUNCH   in the call that issued the operation, or waiting for it to start after that
 *                 call returned (launch latency)
 *   IDLE_QUEUED   the operation was issued completely before the device went idle and still started
 *                 late: a dependency on another stream or event, or launch latency
 *   IDLE_UNKNOWN  the trace has no API record of who issued the operation
 *   IDLE_PROFILER the profiler's own work on the thread (PROFILER_OVERHEAD: nsys's, and ours around
 *                 each launch --metrics measures; detail: its name) or a launch call that --metrics
 *                 replayed (API_REPLAYED, detail NULL) and the wait for its kernel after it: time
 *                 that no fix to the program recovers
 *
 * range: the innermost NVTX range around a SYNC or CUDA call (NULL when none). Call names belong to
 * the api_names; range texts to the walk, until gap_walk_release().
 */
enum idle_kind {
	IDLE_SYNC = 0,
	IDLE_CUDA,
	IDLE_RANGE,
	IDLE_HOST,
	IDLE_LAUNCH,
	IDLE_QUEUED,
	IDLE_UNKNOWN,
	IDLE_PROFILER,
};
#define IDLE_NKINDS 8

struct idle_part {
	enum idle_kind kind;
	const char *detail;
	const char *range;
	int64_t ns;
};

const char *idle_kind_name(enum idle_kind kind);	/* "sync", "cuda-call", "nvtx-range", ... */
/* What kind of CUDA call a name is, in words: "allocation", "module load", "copy", ...; NULL if none. */
const char *api_category(const char *name);

/*
 * The families idle time is grouped in before anything ranks it: a finding's headline ("mostly
 * allocation") and its fix follow the family that holds the most time, so that many calls of one
 * kind (cudaFree and cudaMalloc) are not outranked by one undivided "host code"; the single causes
 * stay as evidence.
 *
 *   allocation   cudaMalloc*, cudaFree*, cuMemAlloc*, cuMemFree*, cuMemCreate/Map/Unmap/Release,
 *                cuMemAddress*, memory pools, cudaMallocHost/cudaHostAlloc/cudaHostRegister and
 *                their frees
 *   module       module and library loading, linking, JIT
 *   copy         copy and memset calls (not blocked: a blocking copy's wait is synchronization)
 *   sync         blocked in a synchronizing call or a blocking copy
 *   launch       the launch calls, launch latency, work issued early that started late
 *   host         host code, inside NVTX ranges or not
 *   other        other CUDA calls (events, streams, contexts) and time with no API record
 *   profiler     the profiler's own time (IDLE_PROFILER): reported apart, never recoverable
 */
enum idle_family {
	FAMILY_ALLOCATION = 0,
	FAMILY_MODULE,
	FAMILY_COPY,
	FAMILY_SYNC,
	FAMILY_LAUNCH,
	FAMILY_HOST,
	FAMILY_OTHER,
	FAMILY_PROFILER,
};
#define IDLE_NFAMILIES 8

enum idle_family api_family(const char *name);		/* of a CUDA call's name */
enum idle_family idle_family_of(enum idle_kind kind, const char *detail);
const char *idle_family_name(enum idle_family family);	/* "allocation", "module load and JIT", ... */

/* The idle interval before one GPU operation, and that operation. */
struct gap {
	int64_t trace_id, device, stream;	/* of the operation that ends the gap */
	int64_t start, end;			/* idle from start to end; end - start may be 0 */
	enum gap_cause cause;
	enum gpu_op next_op;
	int64_t next_name_id;			/* kernels: nameId; -1 otherwise */
	int64_t next_start, next_end;		/* when that operation ran (start may precede end of
						   the gap's start when operations overlap) */
	int64_t next_graph_node;		/* its graphNodeId, 0 when not launched from a graph */
	int64_t next_blocks;			/* kernels: gridX * gridY * gridZ; -1 otherwise */
	int64_t next_busy;			/* how much that operation added to the device's busy
						   time (its part not overlapping earlier work) */
	int64_t bytes;				/* copies: bytes, copyKind, srcKind, dstKind (-1: NULL) */
	int copy_kind, src_kind, dst_kind;
	int64_t api_start, api_end;		/* its API call; -1 when unknown */
	int64_t api_name_id;			/* that call's nameId, -1 when unknown */
	unsigned api_class;
	const char *blocker;			/* sync-wait: the call the host was blocked in;
						   valid only during the callback */
	int64_t blocker_start, blocker_end;
	/* startup: this is the trace's first operation and the "gap" is the time from the trace's first
	 * event to it (only with gap_walk.startup; never counted as device idle time). */
	int startup;
	/* With gap_walk.attribute: the gap split by what the issuing thread did (sums to end - start). */
	struct idle_part *parts;
	size_t nparts;
};

/* What a device did over the whole walk. */
struct gap_device {
	int64_t trace_id, device;
	int64_t first, last;			/* first operation's start, last one's end */
	int64_t busy;				/* time with at least one operation running */
	int64_t ops;
	int64_t outside; /* between capture windows: not recorded (analyzer/loader/windows.h) */
};

/* A device's active time: from its first operation to its last, less the time between windows. */
int64_t gap_device_active(const struct gap_device *device);

/* An API call, as the walk reads it (for gap_visitor.on_call). */
struct gap_call {
	int64_t trace_id, name_id;
	int64_t start, end;
	int has_end;				/* 0: the trace has no end for it */
	unsigned cls;				/* enum api_class */
};

/*
 * One consumer of the walk. Several visitors share one walk (a report's rules and its phases read
 * the trace once): each gets every operation whose gap is at least its min_gap, in time order, and
 * with on_call every API call of the classes in `calls` in the walk's scope (also those after the
 * last operation), in time order, so that no rule reads the API calls again.
 */
struct gap_visitor {
	int64_t min_gap;	/* gaps shorter than this are not passed; 0 passes every operation */
	unsigned api;		/* API classes it needs read (enum api_class); 0: issuing and blocking */
	int attribute;		/* it reads gap->parts (the walk then reads every API call and range) */
	int startup;		/* it wants the trace's first operation with its start-up interval */
	int (*fn)(const struct gap *gap, void *arg);	/* NULL: skip; a negative return stops the walk */
	void *arg;
	unsigned calls;		/* API classes whose calls go to on_call */
	void (*on_call)(const struct gap_call *call, void *arg);
};

struct gap_walk {
	/* In: the consumers, called in this order for each operation. */
	struct gap_visitor *visitors;
	size_t nvisitors;
	const struct api_names *names;	/* NULL: the walk loads its own */
	const char *progress;		/* the progress line's label ("phases"); NULL: none */
	/* Out: one entry per device that ran anything, in order of first appearance. */
	struct gap_device *devices;
	size_t ndevices;
	/* Out: the NVTX texts that parts point to (interned); freed by gap_walk_release(). */
	char **texts;
	size_t ntexts, texts_cap;
};

int gap_walk(const struct analysis_context *ctx, struct gap_walk *walk, char *err, size_t errlen);
/* For a command that walks a trace more than once: call before anything reads the trace, and each
 * table the walk reads is read from the trace once (event_streams_keep in
 * analyzer/loader/events.h). */
void gap_walk_keep(struct trace *trace);
void gap_walk_release(struct gap_walk *walk);

const char *gap_cause_name(enum gap_cause cause);	/* "host-wait", "sync-wait", "other" */
/* The gap's idle time in the profiler's own work (IDLE_PROFILER parts; 0 when not attributed):
 * idle time, but no cause's, and never recoverable. */
int64_t gap_profiler_ns(const struct gap *g);

#endif
