/*
 * The exporter's model: walks a trace's canonical views (loader/trace.h) through the loader's event
 * streams (loader/events.h) and hands tracks and events to a writer (perfetto.c,
 * chrome.c). Each table is read from SQLite once: the exporter names its columns before
 * anything reads the trace (export_keep), the first scan of a table keeps a compact copy of its rows,
 * and the passes below read that copy in time order. Nothing is sorted; memory holds the nesting
 * stack of each track, the rows that share one timestamp, and the tracks, not the events (the
 * correlation map below is given back page by page).
 *
 * Passes:
 *   1. the index (index_pass): the tracks that will exist (host processes and threads, GPU streams),
 *      the time range, and each file's range of correlation ids; then, in the correlation map, which
 *      API call owns an id (the first with it, so a runtime call and the driver call inside it do not
 *      both get arrows), how many GPU items carry it, and where each synchronization record goes;
 *   2. the host (walk_host): API calls, NVTX ranges and marks and synchronization records of each
 *      file merged in time order onto their threads (a synchronization record nests under the API
 *      call that waited), NVTX start/end ranges and the synchronizations no API call claims onto
 *      their process's own lanes;
 *   3. the GPU (walk_gpu): kernels, copies and sets of every file merged in time order onto their
 *      streams, with each device's busy and bandwidth counters;
 *   4. the findings.
 * Rows with the same timestamp are taken together and ordered as a track needs them: longest first
 * (a parent before the slices it holds), then by kind (an NVTX range before the call made inside
 * it). Per track, events arrive in time order; across tracks they interleave.
 *
 * Nesting is checked, not assumed: a slice that starts inside another on the same track but ends
 * after it goes to the track's next lane (an extra "(overlap N)" track), so a writer never sees a
 * partial overlap, which Perfetto would reject and Chrome JSON would draw wrong.
 *
 * Flows: an API call's correlation id is shared by the GPU work it caused. The owner starts one flow
 * per GPU item with its id and each item ends its own, numbered by its rank among the items of that
 * id. Ids outside 1..2^32-1 (CUPTI's are 32-bit) carry no flow.
 */
#define _GNU_SOURCE /* qsort_r */
#include "export/export.h"
#include "export/timeline.h"
#include "loader/events.h"
#include "common/key-index.h"
#include "common/progress.h"
#include "common/util.h"
#include "rules/rule-util.h"

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

/* Sort indices inside a process; lanes of a thread or stream follow it. */
#define SORT_THREAD_STEP 100
#define SORT_NVTX_LANES 1000000
#define SORT_SYNC_LANES 2000000
#define SORT_COUNTERS 3000000
/* Sort indices of processes: host processes count from 0. */
#define SORT_GPUS 1000000
#define SORT_FINDINGS 2000000

#define COUNTER_BUCKETS 1000
#define SYNC_INVALID 4294967295LL	/* CUPTI_SYNCHRONIZATION_INVALID_VALUE: no stream / no event */

/* The columns the exporter reads. The GPU views' first ten (and the API calls' first five, the NVTX
 * ranges' first three) are the rules' walk's (rules/gaps.c), so a report's copies serve it too. */
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
};

#define PROC_THREADS 1		/* has a thread */
#define PROC_RANGES 2		/* has NVTX start/end ranges */
#define PROC_SYNCS 4		/* has synchronization records no API call claims */

/* Enum labels as in collector/schema.sql (nsys's ENUM_* tables). */
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

static int sql_error(struct timeline *tl, const char *what)
{
	snprintf(tl->err, tl->errlen, "cannot export '%s': %s: %s", trace_path(tl->trace, 0), what,
		 sqlite3_errmsg(tl->db));
	return -EIO;
}

static int prepare(struct timeline *tl, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(tl->db, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return sql_error(tl, "query failed");
	}
	return 0;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static const char *column_text(sqlite3_stmt *st, int col)
{
	return (const char *)sqlite3_column_text(st, col);
}

/* ------------------------------------------------------------------------------------------------ */
/* Lanes: nesting stacks, one per track, and overflow tracks for what does not nest. */

static void lane_set_init(struct lane_set *set, enum lane_naming naming, const char *name, int32_t pid,
			  uint64_t parent_uuid, int32_t sort_base)
{
	memset(set, 0, sizeof(*set));
	set->naming = naming;
	set->name = name;
	set->pid = pid;
	set->parent_uuid = parent_uuid;
	set->sort_base = sort_base;
}

/* Lane 0 of a thread or stream is the thread's or stream's own track. */
static int lane_set_init_track(struct lane_set *set, const struct timeline_track *track)
{
	lane_set_init(set, LANE_OVERLAP, track->name, track->pid, track->parent_uuid, track->sort_index);
	set->lanes = calloc(1, sizeof(*set->lanes));
	if (!set->lanes)
		return -ENOMEM;
	set->lanes[0].track = *track;
	set->n = 1;
	return 0;
}

static void lane_set_release(struct lane_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->lanes[i].name);
		free(set->lanes[i].ends);
	}
	free(set->lanes);
	memset(set, 0, sizeof(*set));
}

static int lane_add(struct timeline *tl, struct lane_set *set)
{
	struct lane *lanes = realloc(set->lanes, (set->n + 1) * sizeof(*lanes));
	struct lane *lane;
	size_t k = set->n;

	if (!lanes)
		return -ENOMEM;
	set->lanes = lanes;
	lane = &lanes[k];
	memset(lane, 0, sizeof(*lane));
	if (set->naming == LANE_OVERLAP)
		lane->name = format("%s (overlap %zu)", set->name, k);
	else
		lane->name = k ? format("%s (%zu)", set->name, k + 1) : strdup(set->name);
	if (!lane->name)
		return -ENOMEM;
	set->n++;
	lane->track.uuid = tl->next_uuid++;
	lane->track.parent_uuid = set->parent_uuid;
	lane->track.kind = TIMELINE_LANE;
	lane->track.pid = set->pid;
	lane->track.tid = tl->next_tid++;
	lane->track.sort_index = set->sort_base + (int32_t)k;
	lane->track.name = lane->name;
	return tl->sink->ops->track(tl->sink, &lane->track);
}

/* Close (announce the end of) every slice on lane that ended by ts. */
static int lane_settle(struct timeline *tl, struct lane *lane, int64_t ts)
{
	while (lane->depth && lane->ends[lane->depth - 1] <= ts) {
		int ret = tl->sink->ops->slice_end(tl->sink, &lane->track, lane->ends[--lane->depth]);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Find the first lane where [start, end] nests, open it there, and return that lane's track. */
static int lane_place(struct timeline *tl, struct lane_set *set, int64_t start, int64_t end,
		      const struct timeline_track **track)
{
	for (size_t k = 0;; k++) {
		struct lane *lane;
		int ret;

		if (k == set->n && (ret = lane_add(tl, set)) < 0)
			return ret;
		lane = &set->lanes[k];
		ret = lane_settle(tl, lane, start);
		if (ret < 0)
			return ret;
		if (lane->depth && lane->ends[lane->depth - 1] < end)
			continue;
		if (lane->depth == lane->cap) {
			size_t cap = lane->cap ? lane->cap * 2 : 16;
			int64_t *ends = realloc(lane->ends, cap * sizeof(*ends));

			if (!ends)
				return -ENOMEM;
			lane->ends = ends;
			lane->cap = cap;
		}
		lane->ends[lane->depth++] = end;
		*track = &lane->track;
		return 0;
	}
}

static int lane_set_flush(struct timeline *tl, struct lane_set *set)
{
	for (size_t k = 0; k < set->n; k++) {
		int ret = lane_settle(tl, &set->lanes[k], INT64_MAX);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Flow ids. */

/*
 * (trace, correlation id, rank of the GPU item) in 8 + 32 + 13 bits: below 2^53, so JSON readers
 * (doubles) keep them exact. A graph launch with more than 8191 nodes reuses ids within itself.
 */
static uint64_t flow_id(int64_t trace_id, int64_t correlation_id, int64_t rank)
{
	return ((uint64_t)trace_id & 0xff) << 45 | ((uint64_t)correlation_id & 0xffffffffu) << 13 |
	       ((uint64_t)rank & 0x1fff);
}
/* ------------------------------------------------------------------------------------------------ */
/* Strings and held rows. */

/* The string of the StringIds id in column col of r in *out (NULL when NULL or absent): 0 or a negative error. */
static int string_of(struct timeline *tl, const struct event_row *r, size_t col, const char **out)
{
	*out = NULL;
	return event_null(r, col) ? 0 : trace_string(tl->trace, r->trace_id, r->v[col], out, tl->err, tl->errlen);
}

/* A row's end as the timeline draws it: NULL or before the start is an instant. */
static int64_t row_end(const struct event_row *r)
{
	return event_null(r, 0) || r->v[0] < r->start ? r->start : r->v[0];
}

/* A copy of r (and its text, if its view has one) at the end of the held rows; NULL when out of memory. */
static struct held_row *hold(struct held_rows *h, const struct event_row *r, int kind, int has_text)
{
	struct held_row *e;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct held_row *items = realloc(h->items, cap * sizeof(*items));

		if (!items)
			return NULL;
		h->items = items;
		h->cap = cap;
	}
	e = &h->items[h->n];
	e->row = *r;
	e->end = row_end(r);
	e->kind = kind;
	e->tid = 0;
	e->row.text = NULL;
	if (has_text && r->text && !(e->row.text = strdup(r->text)))
		return NULL;
	h->n++;
	return e;
}

static void held_clear(struct held_rows *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->items[i].row.text);
	h->n = 0;
}

/* Rows of one timestamp in the order a track needs them: the longest first, then by kind. */
static int held_compare_host(const void *pa, const void *pb)
{
	const struct held_row *a = pa, *b = pb;
	int64_t ea = a->end, eb = b->end;

	if (ea != eb)
		return ea > eb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->row.seq < b->row.seq ? -1 : a->row.seq > b->row.seq;
}

/* The GPU's: by device, then as above, then by stream and file. */
static int held_compare_gpu(const void *pa, const void *pb)
{
	const struct held_row *a = pa, *b = pb;
	int64_t da = event_int(&a->row, G_DEVICE, 0), db = event_int(&b->row, G_DEVICE, 0);
	int64_t ea = a->end, eb = b->end;
	int64_t sa = event_int(&a->row, G_STREAM, 0), sb = event_int(&b->row, G_STREAM, 0);

	if (da != db)
		return da < db ? -1 : 1;
	if (ea != eb)
		return ea > eb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (a->row.trace_id != b->row.trace_id)
		return a->row.trace_id < b->row.trace_id ? -1 : 1;
	return a->row.seq < b->row.seq ? -1 : a->row.seq > b->row.seq;
}

/* The word of the row's correlation id in column col, or NULL: no id, or none CUPTI makes. */
static uint64_t *corr_word(struct timeline *tl, const struct event_row *r, size_t col)
{
	if (event_null(r, col) || r->v[col] <= 0 || r->v[col] > (int64_t)UINT32_MAX)
		return NULL;
	return corr_map_at(tl->corr, (size_t)r->trace_id, r->v[col]);
}
/* ------------------------------------------------------------------------------------------------ */
/* The index: tracks, time range and correlation ids, before anything is written. */

static int open_view(struct timeline *tl, int v, struct event_stream **s)
{
	const struct event_columns *c = &export_streams[v];

	return event_stream_open(tl->trace, c->view, c->cols, c->ncols, c->nkey, c->text_col, s, tl->err,
				 tl->errlen);
}

static void add_process(struct timeline *tl, int64_t trace_id, int32_t pid, int flag)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, pid, 0, 0 };
	int created;
	size_t i = key_index_get(&tl->proc_index, key, &created);

	if (created) {
		tl->proc_keys = xrealloc(tl->proc_keys, (i + 1) * sizeof(*tl->proc_keys));
		tl->proc_flags = xrealloc(tl->proc_flags, (i + 1) * sizeof(*tl->proc_flags));
		tl->proc_keys[i][0] = trace_id;
		tl->proc_keys[i][1] = pid;
		tl->proc_flags[i] = 0;
	}
	tl->proc_flags[i] |= flag;
}

static void add_thread(struct timeline *tl, int64_t trace_id, int32_t pid, int32_t tid)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, pid, tid, 0 };
	int created;
	size_t i = key_index_get(&tl->thread_index, key, &created);

	if (!created)
		return;
	tl->thread_keys = xrealloc(tl->thread_keys, (i + 1) * sizeof(*tl->thread_keys));
	tl->thread_keys[i][0] = trace_id;
	tl->thread_keys[i][1] = pid;
	tl->thread_keys[i][2] = tid;
	add_process(tl, trace_id, pid, PROC_THREADS);
}

static void add_stream(struct timeline *tl, const struct event_row *r)
{
	int64_t key[KEY_INDEX_WORDS] = {
		event_int(r, G_DEVICE, 0), event_int(r, G_STREAM, 0), r->trace_id, (int32_t)event_int(r, G_PID, 0),
	};
	int created;

	key_index_get(&tl->stream_index, key, &created);
	if (!created)
		return;
	if (tl->nstreams == tl->streams_cap) {
		tl->streams_cap = tl->streams_cap ? tl->streams_cap * 2 : 16;
		tl->streams = xrealloc(tl->streams, tl->streams_cap * sizeof(*tl->streams));
	}
	memset(&tl->streams[tl->nstreams], 0, sizeof(*tl->streams));
	tl->streams[tl->nstreams].device = key[0];
	tl->streams[tl->nstreams].stream = key[1];
	tl->streams[tl->nstreams].trace_id = key[2];
	tl->streams[tl->nstreams].pid = (int32_t)key[3];
	tl->nstreams++;
}

static int is_gpu_view(int v)
{
	return v == V_KERNELS || v == V_COPIES || v == V_SETS;
}

/* The correlation id column of a view, or -1. */
static int corr_col(int v)
{
	return is_gpu_view(v) ? G_CORR : v == V_API ? A_CORR : v == V_SYNCS ? Y_CORR : -1;
}

/* The first read: which tracks there are, the NVTX events' time range, each file's id range. */
static int index_tracks(struct timeline *tl, int64_t *lo, int64_t *hi, uint64_t *ids, struct event_summary *nvtx)
{
	for (int v = 0; v < NVIEWS; v++) {
		struct event_stream *s;
		const struct event_row *r;
		int cc = corr_col(v), ret = open_view(tl, v, &s);

		if (ret < 0)
			return ret;
		while ((ret = event_stream_next(s, &r, tl->err, tl->errlen)) > 0) {
			size_t t = (size_t)r->trace_id;

			progress_tick(&tl->progress);
			if (cc >= 0 && !event_null(r, (size_t)cc) && r->v[cc] > 0 && r->v[cc] <= (int64_t)UINT32_MAX) {
				if (r->v[cc] < lo[t])
					lo[t] = r->v[cc];
				if (r->v[cc] > hi[t])
					hi[t] = r->v[cc];
				ids[t]++;
			}
			if (is_gpu_view(v)) {
				add_stream(tl, r);
			} else if (v == V_API) {
				add_thread(tl, r->trace_id, (int32_t)event_int(r, A_PID, 0), (int32_t)event_int(r, A_TID, 0));
			} else if (v == V_NVTX) {
				int64_t type = event_int(r, N_TYPE, -1);
				int32_t pid = (int32_t)event_int(r, N_PID, 0);

				if (type == NVTX_PUSH_POP || type == NVTX_MARK)
					add_thread(tl, r->trace_id, pid, (int32_t)event_int(r, N_TID, 0));
				else if (type == NVTX_START_END)
					add_process(tl, r->trace_id, pid, PROC_RANGES);
				if (type == NVTX_PUSH_POP || type == NVTX_MARK || type == NVTX_START_END) {
					int start_null = (r->null & EVENT_START_NULL) != 0;
					struct event_summary m = {
						.first = r->start,
						.has_first = !start_null,
						.last = event_null(r, N_END) ? r->start : r->v[N_END],
						.has_last = !start_null || !event_null(r, N_END),
					};

					event_summary_merge(nvtx, &m);
				}
			}
		}
		event_stream_close(s);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The second read: each id's owner (the first API call with it), its GPU items, and where each
 * synchronization record goes (its owner's thread, or its process's lanes). */
static int index_flows(struct timeline *tl)
{
	static const int views[] = { V_API, V_KERNELS, V_COPIES, V_SETS, V_SYNCS };

	for (size_t k = 0; k < sizeof(views) / sizeof(views[0]); k++) {
		int v = views[k], cc = corr_col(v);
		struct event_stream *s;
		const struct event_row *r;
		int ret = open_view(tl, v, &s);

		if (ret < 0)
			return ret;
		while ((ret = event_stream_next(s, &r, tl->err, tl->errlen)) > 0) {
			uint64_t *w = corr_word(tl, r, (size_t)cc);

			progress_tick(&tl->progress);
			if (v == V_API) {
				if (w && !(*w & CORR_HAS_API))
					*w = CORR_HAS_API | ((uint64_t)(uint32_t)event_int(r, A_TID, 0));
			} else if (v == V_SYNCS) {
				int32_t pid = (int32_t)event_int(r, Y_PID, 0);

				if (w && (*w & CORR_HAS_API))
					add_thread(tl, r->trace_id, pid, (int32_t)(uint32_t)(*w & CORR_TID_MASK));
				else
					add_process(tl, r->trace_id, pid, PROC_SYNCS);
			} else if (w && ((*w >> CORR_NWORK_SHIFT) & CORR_NWORK_MAX) < CORR_NWORK_MAX) {
				*w += 1ull << CORR_NWORK_SHIFT;
			}
		}
		event_stream_close(s);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * The time range of every event: the loader's summaries for the GPU and API views (counted by the
 * scans that find their storage order, no pass of their own), and the index's for NVTX.
 */
static int load_extent(struct timeline *tl, const struct event_summary *nvtx)
{
	static const char *const views[] = { "kernels", "copies", "sets", "syncs", "api_calls" };
	struct event_summary e = { 0 };

	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++)
		for (size_t t = 0; t < trace_count(tl->trace); t++) {
			struct event_summary m;
			int ret = event_summary_get(tl->trace, views[v], t, &m, tl->err, tl->errlen);

			if (ret < 0)
				return ret;
			event_summary_merge(&e, &m);
		}
	event_summary_merge(&e, nvtx);
	if (e.has_first) {
		tl->origin = e.first;
		tl->end = e.has_last ? e.last : 0;
		if (tl->end < tl->origin)
			tl->end = tl->origin;
	}
	return 0;
}

static int index_pass(struct timeline *tl)
{
	size_t n = trace_count(tl->trace);
	int64_t *lo = xcalloc(n ? n : 1, sizeof(*lo)), *hi = xcalloc(n ? n : 1, sizeof(*hi));
	uint64_t *ids = xcalloc(n ? n : 1, sizeof(*ids));
	struct event_summary nvtx = { 0 };
	int ret;

	for (size_t t = 0; t < n; t++) {
		lo[t] = INT64_MAX;
		hi[t] = INT64_MIN;
	}
	ret = index_tracks(tl, lo, hi, ids, &nvtx);
	if (!ret)
		ret = corr_map_new(&tl->corr, lo, hi, ids, n);
	if (!ret)
		ret = index_flows(tl);
	if (!ret)
		ret = load_extent(tl, &nvtx);
	free(lo);
	free(hi);
	free(ids);
	return ret;
}

/* ------------------------------------------------------------------------------------------------ */
/* Tracks. */

/* The process (trace_id, pid), declared on first use; NULL only when out of memory (ret set). */
static struct host_process *get_process(struct timeline *tl, int64_t trace_id, int32_t pid, int *ret)
{
	struct host_process *p;
	const char *name;

	for (size_t i = tl->nprocs; i-- > 0;) {
		if (tl->procs[i]->trace_id == trace_id && tl->procs[i]->pid == pid)
			return tl->procs[i];
	}
	if (tl->nprocs == tl->procs_cap) {
		size_t cap = tl->procs_cap ? tl->procs_cap * 2 : 8;
		struct host_process **procs = realloc(tl->procs, cap * sizeof(*procs));

		if (!procs)
			goto out_nomem;
		tl->procs = procs;
		tl->procs_cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto out_nomem;
	tl->procs[tl->nprocs++] = p;
	p->trace_id = trace_id;
	p->pid = pid;
	sqlite3_reset(tl->process_name);
	sqlite3_bind_int64(tl->process_name, 1, trace_id);
	sqlite3_bind_int(tl->process_name, 2, pid);
	name = sqlite3_step(tl->process_name) == SQLITE_ROW ? column_text(tl->process_name, 0) : NULL;
	p->name = name && *name ? strdup(name) : format("process %" PRId32, pid);
	if (!p->name)
		goto out_nomem;
	p->track = (struct timeline_track){
		.uuid = tl->next_uuid++, .kind = TIMELINE_PROCESS, .pid = pid,
		.sort_index = (int32_t)tl->nprocs - 1, .name = p->name,
	};
	lane_set_init(&p->nvtx_ranges, LANE_NUMBERED, "NVTX ranges", pid, p->track.uuid, SORT_NVTX_LANES);
	lane_set_init(&p->syncs, LANE_NUMBERED, "CUDA synchronization", pid, p->track.uuid, SORT_SYNC_LANES);
	*ret = tl->sink->ops->track(tl->sink, &p->track);
	return *ret < 0 ? NULL : p;

out_nomem:
	*ret = -ENOMEM;
	return NULL;
}

/* A new host thread track in its process: the main thread first, then the others by tid. */
static struct host_thread *new_thread(struct timeline *tl, int64_t trace_id, int32_t pid, int32_t tid, int *ret)
{
	struct host_process *p = get_process(tl, trace_id, pid, ret);
	struct host_thread *t;

	if (!p)
		return NULL;
	if (tl->nthreads == tl->threads_cap) {
		size_t cap = tl->threads_cap ? tl->threads_cap * 2 : 16;
		struct host_thread **threads = realloc(tl->threads, cap * sizeof(*threads));

		if (!threads)
			goto out_nomem;
		tl->threads = threads;
		tl->threads_cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out_nomem;
	tl->threads[tl->nthreads++] = t;
	t->trace_id = trace_id;
	t->pid = pid;
	t->tid = tid;
	t->name = tid == pid ? strdup("main thread") : format("thread %" PRId32, tid);
	if (!t->name)
		goto out_nomem;
	t->track = (struct timeline_track){
		.uuid = tl->next_uuid++, .parent_uuid = p->track.uuid, .kind = TIMELINE_THREAD,
		.pid = pid, .tid = tid, .name = t->name,
		.sort_index = tid == pid ? 0 : (int32_t)++p->nthreads * SORT_THREAD_STEP,
	};
	*ret = tl->sink->ops->track(tl->sink, &t->track);
	if (*ret < 0)
		return NULL;
	*ret = lane_set_init_track(&t->lanes, &t->track);
	return *ret < 0 ? NULL : t;

out_nomem:
	*ret = -ENOMEM;
	return NULL;
}


static int compare_keys2(const void *pa, const void *pb)
{
	const int64_t *a = pa, *b = pb;

	for (int i = 0; i < 2; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* Dense indexes sorted by their keys (pairs or triples of int64). */
struct key_order {
	const int64_t *keys;
	size_t width;
};

static int compare_by_key(const void *pa, const void *pb, void *arg)
{
	const struct key_order *o = arg;
	const int64_t *a = o->keys + *(const size_t *)pa * o->width;
	const int64_t *b = o->keys + *(const size_t *)pb * o->width;

	for (size_t i = 0; i < o->width; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static size_t *sorted_indexes(const int64_t *keys, size_t width, size_t n)
{
	size_t *order = xcalloc(n ? n : 1, sizeof(*order));
	struct key_order o = { keys, width };

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	if (n)
		qsort_r(order, n, sizeof(*order), compare_by_key, &o);
	return order;
}

/*
 * Every host process and thread, in the order a reader shows them by default: the processes with
 * threads in (trace, pid) order, each followed by its threads (the main one first, then by tid);
 * then the processes with only NVTX start/end ranges; then those with only synchronizations no API
 * call claims.
 */
static int declare_host_tracks(struct timeline *tl)
{
	size_t nprocs = tl->proc_index.count, nthreads = tl->thread_index.count;
	size_t *porder = sorted_indexes((const int64_t *)tl->proc_keys, 2, nprocs);
	size_t *torder = sorted_indexes((const int64_t *)tl->thread_keys, 3, nthreads);
	int ret = 0;

	tl->proc_of = xcalloc(nprocs ? nprocs : 1, sizeof(*tl->proc_of));
	tl->thread_of = xcalloc(nthreads ? nthreads : 1, sizeof(*tl->thread_of));
	for (int group = 0; group < 3 && !ret; group++) {
		size_t t = 0;

		for (size_t k = 0; k < nprocs && !ret; k++) {
			size_t p = porder[k];
			int flags = tl->proc_flags[p];
			int in = group == 0 ? (flags & PROC_THREADS) != 0
				 : group == 1 ? !(flags & PROC_THREADS) && (flags & PROC_RANGES)
					      : !(flags & (PROC_THREADS | PROC_RANGES));

			if (!in)
				continue;
			tl->proc_of[p] = get_process(tl, tl->proc_keys[p][0], (int32_t)tl->proc_keys[p][1], &ret);
			if (!tl->proc_of[p])
				break;
			/* its threads: the next ones in (trace, pid, tid) order */
			while (group == 0 && !ret && t < nthreads &&
			       compare_keys2(tl->thread_keys[torder[t]], tl->proc_keys[p]) <= 0) {
				size_t i = torder[t++];

				if (compare_keys2(tl->thread_keys[i], tl->proc_keys[p]))
					continue;
				tl->thread_of[i] = new_thread(tl, tl->thread_keys[i][0], (int32_t)tl->thread_keys[i][1],
							      (int32_t)tl->thread_keys[i][2], &ret);
			}
		}
	}
	free(porder);
	free(torder);
	return ret;
}

static int compare_streams(const void *pa, const void *pb)
{
	const struct gpu_stream *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* The GPUs of the index's streams, named from the first file that describes them. */
static int load_gpus(struct timeline *tl)
{
	sqlite3_stmt *st;
	int ret;

	if (tl->nstreams)
		qsort(tl->streams, tl->nstreams, sizeof(*tl->streams), compare_streams);
	ret = prepare(tl, "SELECT name FROM gpus WHERE id = ?1 ORDER BY traceId LIMIT 1", &st);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < tl->nstreams; i++) {
		int64_t device = tl->streams[i].device;
		const char *name;
		struct gpu *g;

		if (tl->ngpus && tl->gpus[tl->ngpus - 1].device == device)
			continue;
		tl->gpus = xrealloc(tl->gpus, (tl->ngpus + 1) * sizeof(*tl->gpus));
		g = &tl->gpus[tl->ngpus++];
		memset(g, 0, sizeof(*g));
		g->device = device;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, device);
		name = sqlite3_step(st) == SQLITE_ROW ? column_text(st, 0) : NULL;
		g->name = name && *name ? format("GPU %" PRId64 ": %s", device, name) : format("GPU %" PRId64, device);
		if (!g->name) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		return sql_error(tl, "reading the GPUs failed");

	/* A stream is named by its id, and by its process when several share the GPU. */
	for (size_t i = 0, g = 0; i < tl->nstreams; i++) {
		struct gpu_stream *s = &tl->streams[i];
		int seen = 0;

		while (tl->gpus[g].device != s->device)
			g++;
		for (size_t j = 0; j < i && !seen; j++)
			seen = tl->streams[j].device == s->device && tl->streams[j].trace_id == s->trace_id &&
			       tl->streams[j].pid == s->pid;
		if (!seen)
			tl->gpus[g].nprocesses++;
	}
	for (size_t i = 0, g = 0; i < tl->nstreams; i++) {
		struct gpu_stream *s = &tl->streams[i];

		while (tl->gpus[g].device != s->device)
			g++;
		s->name = tl->gpus[g].nprocesses > 1
				  ? format("stream %" PRId64 " (pid %" PRId32 ")", s->stream, s->pid)
				  : format("stream %" PRId64, s->stream);
		if (!s->name)
			return -ENOMEM;
	}
	return 0;
}

/* GPUs in device order after the host processes, streams in id order, findings last. */
static int declare_gpu_tracks(struct timeline *tl)
{
	const struct timeline_sink_ops *ops = tl->sink->ops;
	int ret;

	for (size_t i = 0; i < tl->ngpus; i++) {
		struct gpu *g = &tl->gpus[i];

		g->track = (struct timeline_track){
			.uuid = tl->next_uuid++, .kind = TIMELINE_PROCESS,
			/* masked: a corrupt device id must not overflow into the findings' pid */
			.pid = PSEUDO_PID_GPU + (int32_t)(g->device & 0xffffff),
			.sort_index = SORT_GPUS + (int32_t)i,
			.name = g->name,
		};
		ret = ops->track(tl->sink, &g->track);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0, g = 0, rank = 0; i < tl->nstreams; i++) {
		struct gpu_stream *s = &tl->streams[i];

		if (tl->gpus[g].device != s->device) {
			g++;
			rank = 0;
		}
		s->track = (struct timeline_track){
			.uuid = tl->next_uuid++, .parent_uuid = tl->gpus[g].track.uuid,
			.kind = TIMELINE_LANE, .pid = tl->gpus[g].track.pid, .tid = tl->next_tid++,
			.sort_index = (int32_t)(rank++) * SORT_THREAD_STEP, .name = s->name,
		};
		ret = ops->track(tl->sink, &s->track);
		if (ret < 0)
			return ret;
		ret = lane_set_init_track(&s->lanes, &s->track);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Host threads. */

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys records the versioned entry point. */
static const char *api_display_name(const char *name, char *buf, size_t size)
{
	const char *v = name ? strrchr(name, '_') : NULL;
	size_t n;

	if (!name)
		return "(unknown API call)";
	if (!v || v[1] != 'v' || !v[2] || strspn(v + 2, "0123456789") != strlen(v + 2))
		return name;
	n = (size_t)(v - name);
	if (n >= size)
		return name;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

static int reserve_flows(struct timeline *tl, size_t n)
{
	if (n > tl->flows_cap) {
		uint64_t *flows = realloc(tl->flows, n * sizeof(*flows));

		if (!flows)
			return -ENOMEM;
		tl->flows = flows;
		tl->flows_cap = n;
	}
	return 0;
}

static void arg_int(struct timeline_arg *args, size_t *n, const char *name, int64_t v)
{
	args[(*n)++] = (struct timeline_arg){ .name = name, .type = TIMELINE_ARG_INT, .i = v };
}

static void arg_double(struct timeline_arg *args, size_t *n, const char *name, double v)
{
	args[(*n)++] = (struct timeline_arg){ .name = name, .type = TIMELINE_ARG_DOUBLE, .d = v };
}

static void arg_string(struct timeline_arg *args, size_t *n, const char *name, const char *v)
{
	args[(*n)++] = (struct timeline_arg){ .name = name, .type = TIMELINE_ARG_STRING, .s = v };
}

/* The NVTX columns a1..a3 (domain, category, color) as arguments, where set. */
enum host_kind {
	HOST_NVTX_RANGE = 0,	/* ordered first: a range encloses the calls made inside it */
	HOST_API = 1,
	HOST_SYNC = 2,
	HOST_NVTX_MARK = 3,
	HOST_PROCESS_RANGE = 4,	/* an NVTX start/end range: its process's lanes */
	HOST_PROCESS_SYNC = 5,	/* a synchronization no API call claims: its process's lanes */
};

/* The NVTX columns (domain, category, color) as arguments, where set. */
static void nvtx_args(const struct event_row *r, struct timeline_arg *args, size_t *n, char *color, size_t size)
{
	arg_string(args, n, "source", "NVTX");
	if (!event_null(r, N_DOMAIN))
		arg_int(args, n, "domain", r->v[N_DOMAIN]);
	if (!event_null(r, N_CATEGORY))
		arg_int(args, n, "category", r->v[N_CATEGORY]);
	if (!event_null(r, N_COLOR)) {
		snprintf(color, size, "#%06" PRIx64, (uint64_t)r->v[N_COLOR] & 0xffffff);
		arg_string(args, n, "color", color);
	}
}

/*
 * Slice name and arguments of a synchronization record: what the host waited for. CUPTI's syncType
 * says it, but nsys exports store other numbers than their own ENUM_CUPTI_SYNC_TYPE table claims
 * (cudaDeviceSynchronize rows carry 1, "event sync"; cudaStreamSynchronize rows 2, "stream wait
 * event"), always with eventId and, for device syncs, streamId set to CUPTI's invalid value. So the
 * type is believed only when the ids agree with it, and otherwise read from the ids.
 */
static const char *sync_describe(const struct event_row *r, struct timeline_arg *args, size_t *n, char *name,
				 size_t size)
{
	int64_t type = event_int(r, Y_TYPE, 0);
	int64_t event = event_int(r, Y_EVENT, 0);
	int64_t stream = event_int(r, Y_STREAM, 0);
	int64_t device = event_int(r, Y_DEVICE, 0);
	int has_event = !event_null(r, Y_EVENT) && event != SYNC_INVALID;
	int has_stream = !event_null(r, Y_STREAM) && stream != SYNC_INVALID;

	if (type == 4 || (type != 3 && !has_event && !has_stream))
		type = 4;
	else if (type == 3 || !has_event)
		type = 3;
	else if (type != 2)
		type = 1;
	if (type == 2 && has_stream)
		snprintf(name, size, "stream %" PRId64 " waits for event %" PRId64, stream, event);
	else if (type == 1 || type == 2)
		snprintf(name, size, "wait for event %" PRId64, event);
	else if (type == 3)
		snprintf(name, size, "wait for stream %" PRId64, stream);
	else
		snprintf(name, size, "wait for device %" PRId64, device);
	arg_string(args, n, "sync type", LABEL(sync_type_labels, type));
	if (has_stream)
		arg_int(args, n, "stream", stream);
	if (has_event)
		arg_int(args, n, "event", event);
	arg_int(args, n, "device", device);
	return name;
}

/* Take row r of view v (one of the host's) among the rows of its timestamp; 0 or -ENOMEM. */
static int hold_host(struct timeline *tl, int v, const struct event_row *r)
{
	struct held_row *h;
	int kind;
	int32_t tid = 0;

	if (v == V_API) {
		kind = HOST_API;
		tid = (int32_t)event_int(r, A_TID, 0);
	} else if (v == V_NVTX) {
		int64_t type = event_int(r, N_TYPE, -1);

		if (type == NVTX_PUSH_POP)
			kind = HOST_NVTX_RANGE;
		else if (type == NVTX_MARK)
			kind = HOST_NVTX_MARK;
		else if (type == NVTX_START_END)
			kind = HOST_PROCESS_RANGE;
		else
			return 0;
		tid = (int32_t)event_int(r, N_TID, 0);
	} else {
		uint64_t *w = corr_word(tl, r, Y_CORR);

		kind = w && (*w & CORR_HAS_API) ? HOST_SYNC : HOST_PROCESS_SYNC;
		if (kind == HOST_SYNC)
			tid = (int32_t)(uint32_t)(*w & CORR_TID_MASK);
	}
	h = hold(&tl->held, r, kind, v == V_NVTX);
	if (!h)
		return -ENOMEM;
	h->tid = tid;
	if (kind == HOST_NVTX_MARK)
		h->end = r->start;
	return 0;
}

static int missing(struct timeline *tl, const char *what)
{
	/* Impossible unless the views changed under us: the index came from them. */
	snprintf(tl->err, tl->errlen, "cannot export '%s': a %s is missing from the index", trace_path(tl->trace, 0),
		 what);
	return -EIO;
}

/* The flows an API call starts: one per GPU item of its id, if it is the id's first call. */
static int api_flows(struct timeline *tl, const struct event_row *r, struct timeline_event *ev,
		     struct timeline_arg *args, size_t *nargs)
{
	uint64_t *w = corr_word(tl, r, A_CORR);
	uint64_t nflows;
	int ret;

	if (!w || !(*w & CORR_HAS_API) || (*w & CORR_CLAIMED))
		return 0;
	*w |= CORR_CLAIMED;
	nflows = (*w >> CORR_NWORK_SHIFT) & CORR_NWORK_MAX;
	if (!nflows)
		return 0;
	if ((ret = reserve_flows(tl, (size_t)nflows)) < 0)
		return ret;
	for (uint64_t k = 0; k < nflows; k++)
		tl->flows[k] = flow_id(r->trace_id, r->v[A_CORR], (int64_t)k + 1);
	ev->flows_out = tl->flows;
	ev->nflows_out = (size_t)nflows;
	arg_int(args, nargs, "gpu work", (int64_t)nflows);
	return 0;
}

static int emit_host(struct timeline *tl, const struct held_row *h)
{
	const struct event_row *r = &h->row;
	struct timeline_arg args[8];
	struct timeline_event ev = { .start = r->start, .end = h->end, .args = args };
	char name[512], color[16];
	size_t nargs = 0;
	struct lane_set *set;
	struct host_thread *thread = NULL;
	int process = h->kind == HOST_PROCESS_RANGE || h->kind == HOST_PROCESS_SYNC;
	int32_t pid = (int32_t)event_int(r, h->kind == HOST_API ? A_PID : h->kind == HOST_SYNC ||
					       h->kind == HOST_PROCESS_SYNC ? Y_PID : N_PID, 0);
	int64_t key[KEY_INDEX_WORDS] = { r->trace_id, pid, process ? 0 : h->tid, 0 };
	size_t i = key_index_find(process ? &tl->proc_index : &tl->thread_index, key);
	int ret = 0;

	if (process) {
		struct host_process *p = i == SIZE_MAX ? NULL : tl->proc_of[i];

		if (!p)
			return missing(tl, "process");
		set = h->kind == HOST_PROCESS_RANGE ? &p->nvtx_ranges : &p->syncs;
	} else {
		thread = i == SIZE_MAX ? NULL : tl->thread_of[i];
		if (!thread)
			return missing(tl, "thread");
		set = &thread->lanes;
	}

	switch ((enum host_kind)h->kind) {
	case HOST_NVTX_RANGE:
	case HOST_NVTX_MARK:
	case HOST_PROCESS_RANGE:
		ev.name = r->text;
		if (!ev.name)
			ev.name = h->kind == HOST_NVTX_MARK ? "(unnamed mark)" : "(unnamed range)";
		ev.category = "nvtx";
		nvtx_args(r, args, &nargs, color, sizeof(color));
		break;
	case HOST_API: {
		const char *function;

		ret = string_of(tl, r, A_NAME, &function);
		if (ret < 0)
			return ret;
		ev.name = api_display_name(function, name, sizeof(name));
		ev.category = "cuda.api";
		arg_string(args, &nargs, "function", function);
		arg_int(args, &nargs, "correlation id", event_int(r, A_CORR, 0));
		arg_string(args, &nargs, "api", event_int(r, A_CLASS, 0) == 1 ? "driver" : "runtime");
		arg_int(args, &nargs, "return value", event_int(r, A_RETURN, 0));
		if ((ret = api_flows(tl, r, &ev, args, &nargs)) < 0)
			return ret;
		break;
	}
	case HOST_SYNC:
	case HOST_PROCESS_SYNC:
		ev.name = sync_describe(r, args, &nargs, name, sizeof(name));
		ev.category = "cuda.sync";
		arg_int(args, &nargs, "correlation id", event_int(r, Y_CORR, 0));
		break;
	}
	ev.nargs = nargs;

	if (h->kind == HOST_NVTX_MARK) {
		ev.track = &thread->lanes.lanes[0].track;
		ret = lane_settle(tl, &thread->lanes.lanes[0], ev.start);
		if (!ret)
			ret = tl->sink->ops->instant(tl->sink, &ev);
		return ret;
	}
	ret = lane_place(tl, set, ev.start, ev.end, &ev.track);
	if (!ret)
		ret = tl->sink->ops->slice_begin(tl->sink, &ev);
	return ret;
}

/* The lowest (trace, start) among the streams' current rows, or -1 when all are done. */
static int first_row(const struct event_row *const *cur, size_t n, int by_trace)
{
	int best = -1;

	for (size_t k = 0; k < n; k++) {
		if (!cur[k])
			continue;
		if (best < 0 || (by_trace && cur[k]->trace_id != cur[best]->trace_id
					 ? cur[k]->trace_id < cur[best]->trace_id
					 : cur[k]->start < cur[best]->start))
			best = (int)k;
	}
	return best;
}

/*
 * API calls, NVTX events and synchronization records, file by file in time order onto their
 * threads and processes (the streams give each file's rows in turn).
 */
static int walk_host(struct timeline *tl)
{
	static const int views[] = { V_API, V_NVTX, V_SYNCS };
	struct event_stream *s[3] = { NULL, NULL, NULL };
	const struct event_row *cur[3] = { NULL, NULL, NULL };
	int ret = 0;

	for (size_t k = 0; k < 3 && ret >= 0; k++) {
		ret = open_view(tl, views[k], &s[k]);
		if (ret >= 0)
			ret = event_stream_next(s[k], &cur[k], tl->err, tl->errlen);
	}
	while (ret >= 0) {
		int b = first_row(cur, 3, 1);
		int64_t trace_id, start;

		if (b < 0)
			break;
		trace_id = cur[b]->trace_id;
		start = cur[b]->start;
		held_clear(&tl->held);
		for (size_t k = 0; k < 3 && ret >= 0; k++) {
			while (ret >= 0 && cur[k] && cur[k]->trace_id == trace_id && cur[k]->start == start) {
				progress_tick(&tl->progress);
				ret = hold_host(tl, views[k], cur[k]);
				if (ret >= 0)
					ret = event_stream_next(s[k], &cur[k], tl->err, tl->errlen);
			}
		}
		if (tl->held.n > 1)
			qsort(tl->held.items, tl->held.n, sizeof(*tl->held.items), held_compare_host);
		for (size_t i = 0; i < tl->held.n && ret >= 0; i++)
			ret = emit_host(tl, &tl->held.items[i]);
	}
	for (size_t k = 0; k < 3; k++)
		event_stream_close(s[k]);
	for (size_t i = 0; i < tl->nthreads && ret >= 0; i++)
		ret = lane_set_flush(tl, &tl->threads[i]->lanes);
	for (size_t i = 0; i < tl->nprocs && ret >= 0; i++) {
		ret = lane_set_flush(tl, &tl->procs[i]->nvtx_ranges);
		if (ret >= 0)
			ret = lane_set_flush(tl, &tl->procs[i]->syncs);
	}
	return ret < 0 ? ret : 0;
}
/* ------------------------------------------------------------------------------------------------ */
/* GPU streams and counters. */

enum gpu_kind {
	GPU_KERNEL = 0,
	GPU_COPY = 1,
	GPU_SET = 2,
};

static const char *const direction_names[NDIRS] = { "HtoD", "DtoH", "DtoD", "PtoP", "other" };

static enum copy_direction copy_direction(int64_t copy_kind)
{
	switch (copy_kind) {
	case 1: case 11: return DIR_HTOD;
	case 2: case 12: return DIR_DTOH;
	case 8: case 13: return DIR_DTOD;
	case 10: return DIR_PTOP;
	default: return DIR_OTHER;
	}
}

/* 1, 2 or 5 times a power of ten, at least 1 us, so buckets read well on the time axis. */
static int64_t bucket_width(int64_t span)
{
	int64_t want = span / COUNTER_BUCKETS + 1;

	for (int64_t p = 1000;; p *= 10) {
		if (want <= p)
			return p;
		if (want <= 2 * p)
			return 2 * p;
		if (want <= 5 * p)
			return 5 * p;
	}
}

static int64_t bucket_length(const struct counter_buckets *b, size_t i)
{
	int64_t s = b->origin + (int64_t)i * b->width;
	int64_t e = s + b->width < b->end ? s + b->width : b->end;

	return e > s ? e - s : b->width;
}

/* Spread amount over the buckets [start, end) covers, in proportion to the time in each. */
static void spread(const struct counter_buckets *b, double *series, int64_t start, int64_t end, double amount)
{
	size_t first, last;

	if (start < b->origin)
		start = b->origin;
	if (end > b->end)
		end = b->end;
	first = (size_t)((start - b->origin) / b->width);
	if (first >= b->n)
		first = b->n - 1;
	if (end <= start) {
		series[first] += amount;
		return;
	}
	last = (size_t)((end - 1 - b->origin) / b->width);
	if (last >= b->n)
		last = b->n - 1;
	for (size_t i = first; i <= last; i++) {
		int64_t bs = b->origin + (int64_t)i * b->width;
		int64_t s = start > bs ? start : bs;
		int64_t e = end < bs + b->width ? end : bs + b->width;

		if (e > s)
			series[i] += amount * (double)(e - s) / (double)(end - start);
	}
}

static int emit_series(struct timeline *tl, const struct timeline_track *track, const struct counter_buckets *b,
		       const double *series, double scale)
{
	double last = -1;

	for (size_t i = 0; i < b->n; i++) {
		double v = series[i] / (double)bucket_length(b, i) * scale;
		int ret;

		if (v == last)
			continue;
		ret = tl->sink->ops->counter(tl->sink, track, b->origin + (int64_t)i * b->width, v);
		if (ret < 0)
			return ret;
		last = v;
	}
	if (last != 0)
		return tl->sink->ops->counter(tl->sink, track, b->end, 0);
	return 0;
}

static int emit_device_counters(struct timeline *tl, struct gpu *g, struct counter_buckets *b)
{
	char name[96];
	int ret;
	struct timeline_track track = {
		.parent_uuid = g->track.uuid, .kind = TIMELINE_COUNTER, .pid = g->track.pid, .name = name,
	};

	snprintf(name, sizeof(name), "GPU %" PRId64 " busy", g->device);
	track.uuid = tl->next_uuid++;
	track.unit = "%";
	track.sort_index = SORT_COUNTERS;
	ret = tl->sink->ops->track(tl->sink, &track);
	if (!ret)
		ret = emit_series(tl, &track, b, b->busy, 100.0);
	for (int d = 0; !ret && d < NDIRS; d++) {
		if (!b->used[d])
			continue;
		snprintf(name, sizeof(name), "GPU %" PRId64 " copy %s", g->device, direction_names[d]);
		track.uuid = tl->next_uuid++;
		track.unit = "GB/s";
		track.sort_index = SORT_COUNTERS + 1 + d;
		ret = tl->sink->ops->track(tl->sink, &track);
		if (!ret)
			ret = emit_series(tl, &track, b, b->bytes[d], 1.0);	/* bytes/ns = GB/s */
	}
	return ret;
}
static struct gpu_stream *find_stream(struct timeline *tl, int64_t device, int64_t stream, int64_t trace_id,
				      int32_t pid)
{
	size_t lo = 0, hi = tl->nstreams;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gpu_stream *s = &tl->streams[mid];
		int cmp = s->device != device ? (s->device < device ? -1 : 1)
			  : s->stream != stream ? (s->stream < stream ? -1 : 1)
			  : s->trace_id != trace_id ? (s->trace_id < trace_id ? -1 : 1)
			  : s->pid != pid ? (s->pid < pid ? -1 : 1) : 0;

		if (!cmp)
			return &tl->streams[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The rank of this GPU item among those of its correlation id, 1..nwork. Almost every id has one
 * item; a graph launch has several, counted here until the last one is seen, so the table holds
 * only the launches whose items are still arriving.
 */
static int flow_rank(struct timeline *tl, int64_t trace_id, int64_t corr, int64_t nwork, int64_t *rank)
{
	size_t i;

	*rank = 1;
	if (nwork <= 1)
		return 0;
	for (i = 0; i < tl->nranks; i++) {
		if (tl->ranks[i].trace_id == trace_id && tl->ranks[i].correlation_id == corr)
			break;
	}
	if (i == tl->nranks) {
		if (tl->nranks == tl->ranks_cap) {
			size_t cap = tl->ranks_cap ? tl->ranks_cap * 2 : 16;
			struct flow_rank *ranks = realloc(tl->ranks, cap * sizeof(*ranks));

			if (!ranks)
				return -ENOMEM;
			tl->ranks = ranks;
			tl->ranks_cap = cap;
		}
		tl->ranks[tl->nranks++] = (struct flow_rank){ trace_id, corr, 0 };
	}
	*rank = ++tl->ranks[i].seen;
	if (*rank >= nwork)
		tl->ranks[i] = tl->ranks[--tl->nranks];
	return 0;
}

/* A device's work is all seen: close its streams' slices and write its counters. */

/* A device's work is all seen: close its streams' slices and write its counters. */
static int finish_device(struct timeline *tl, struct gpu *gpu)
{
	struct counter_buckets *b = &gpu->b;
	int ret;

	for (size_t i = 0; i < tl->nstreams; i++) {
		if (tl->streams[i].device == gpu->device && (ret = lane_set_flush(tl, &tl->streams[i].lanes)) < 0)
			return ret;
	}
	if (gpu->busy_open)
		spread(b, b->busy, gpu->busy_start, gpu->busy_end, (double)(gpu->busy_end - gpu->busy_start));
	return emit_device_counters(tl, gpu, b);
}

/* The text of a grid (which 0) or block (1) of columns x, y, z of r (NULL reads 0), valid until the
 * next call for the same which. */
static const char *dims_text(struct timeline *tl, int which, const struct event_row *r, size_t x, size_t y,
			     size_t z)
{
	int64_t d[3] = { event_int(r, x, 0), event_int(r, y, 0), event_int(r, z, 0) };
	uint64_t h = ((uint64_t)d[0] * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)d[1] * 0xff51afd7ed558ccdull) ^
		     ((uint64_t)d[2] * 0xc4ceb9fe1a85ec53ull);
	struct dims_memo *m = &tl->dims[which][(h ^ (h >> 32)) % DIMS_MEMO];

	if (!m->used || memcmp(m->d, d, sizeof(d))) {
		memcpy(m->d, d, sizeof(d));
		m->used = 1;
		snprintf(m->text, sizeof(m->text), "(%lld, %lld, %lld)", (long long)d[0], (long long)d[1],
			 (long long)d[2]);
	}
	return m->text;
}

/* Name and arguments of a kernel, copy or set. *ret: 0 or a negative error. */
static void describe_gpu_item(struct timeline *tl, const struct held_row *h, struct timeline_event *ev,
			      struct timeline_arg *args, size_t *nargs, char *label, size_t size, int *ret)
{
	const struct event_row *r = &h->row;
	int64_t context = 0;

	*ret = 0;
	switch ((enum gpu_kind)h->kind) {
	case GPU_KERNEL: {
		/* name: the first of the demangled, short and mangled names that exists (as the view) */
		const char *full, *shortname = NULL;

		*ret = string_of(tl, r, K_NAME, &full);
		if (*ret >= 0)
			*ret = string_of(tl, r, K_SHORT_NAME, &shortname);
		if (!full)
			full = shortname;
		if (!full && *ret >= 0)
			*ret = string_of(tl, r, K_MANGLED_NAME, &full);
		if (*ret < 0)
			return;
		ev->category = "cuda.kernel";
		ev->name = full ? full : "(unnamed kernel)";
		if (full && strlen(full) > EXPORT_KERNEL_NAME_MAX && shortname && *shortname)
			ev->name = shortname;
		arg_string(args, nargs, "kernel", full ? full : ev->name);
		arg_string(args, nargs, "grid", dims_text(tl, 0, r, K_GRIDX, K_GRIDY, K_GRIDZ));
		arg_string(args, nargs, "block", dims_text(tl, 1, r, K_BLOCKX, K_BLOCKY, K_BLOCKZ));
		arg_int(args, nargs, "registers per thread", event_int(r, K_REGISTERS, 0));
		arg_int(args, nargs, "static shared memory", event_int(r, K_STATIC_SMEM, 0));
		arg_int(args, nargs, "dynamic shared memory", event_int(r, K_DYNAMIC_SMEM, 0));
		arg_int(args, nargs, "local memory per thread", event_int(r, K_LOCAL_MEM, 0));
		if (!event_null(r, K_GRAPH))
			arg_int(args, nargs, "graph id", r->v[K_GRAPH]);
		context = event_int(r, K_CONTEXT, 0);
		break;
	}
	case GPU_COPY: {
		int64_t bytes = event_int(r, C_BYTES, 0);
		int64_t copy_kind = event_int(r, C_KIND, 0);

		ev->category = "cuda.memcpy";
		snprintf(label, size, "[CUDA memcpy %s]", LABEL(copy_kind_labels, copy_kind));
		ev->name = label;
		arg_int(args, nargs, "bytes", bytes);
		arg_string(args, nargs, "copy kind", LABEL(copy_kind_labels, copy_kind));
		if (!event_null(r, C_SRC))
			arg_string(args, nargs, "source memory", LABEL(mem_kind_labels, r->v[C_SRC]));
		if (!event_null(r, C_DST))
			arg_string(args, nargs, "destination memory", LABEL(mem_kind_labels, r->v[C_DST]));
		if (ev->end > ev->start)
			arg_double(args, nargs, "bandwidth GB/s", (double)bytes / (double)(ev->end - ev->start));
		context = event_int(r, C_CONTEXT, 0);
		break;
	}
	case GPU_SET:
		ev->category = "cuda.memset";
		ev->name = "[CUDA memset]";
		arg_int(args, nargs, "bytes", event_int(r, S_BYTES, 0));
		arg_int(args, nargs, "value", event_int(r, S_VALUE, 0));
		if (!event_null(r, S_MEM_KIND))
			arg_string(args, nargs, "memory kind", LABEL(mem_kind_labels, r->v[S_MEM_KIND]));
		context = event_int(r, S_CONTEXT, 0);
		break;
	}
	if (!event_null(r, G_CORR))
		arg_int(args, nargs, "correlation id", r->v[G_CORR]);
	arg_int(args, nargs, "device", event_int(r, G_DEVICE, 0));
	arg_int(args, nargs, "stream", event_int(r, G_STREAM, 0));
	arg_int(args, nargs, "context", context);
	if (!event_null(r, G_GRAPH_NODE))
		arg_int(args, nargs, "graph node id", r->v[G_GRAPH_NODE]);
}

static struct gpu *find_gpu(struct timeline *tl, int64_t device)
{
	for (size_t i = 0; i < tl->ngpus; i++)
		if (tl->gpus[i].device == device)
			return &tl->gpus[i];
	return NULL;
}

static int emit_gpu(struct timeline *tl, const struct held_row *h)
{
	const struct event_row *r = &h->row;
	int64_t device = event_int(r, G_DEVICE, 0);
	struct gpu *gpu = find_gpu(tl, device);
	struct gpu_stream *stream = find_stream(tl, device, event_int(r, G_STREAM, 0), r->trace_id,
						(int32_t)event_int(r, G_PID, 0));
	struct timeline_arg args[20];
	struct timeline_event ev = { .start = r->start, .end = h->end, .args = args };
	char label[80];
	size_t nargs = 0;
	uint64_t *w;
	int ret;

	if (!gpu || !stream)
		return missing(tl, "GPU stream");
	describe_gpu_item(tl, h, &ev, args, &nargs, label, sizeof(label), &ret);
	if (ret < 0)
		return ret;
	ev.nargs = nargs;
	w = corr_word(tl, r, G_CORR);
	if (w && (*w & CORR_HAS_API)) {
		int64_t rank;

		ret = flow_rank(tl, r->trace_id, r->v[G_CORR], (int64_t)((*w >> CORR_NWORK_SHIFT) & CORR_NWORK_MAX),
				&rank);
		if (ret < 0)
			return ret;
		ev.flow_in = flow_id(r->trace_id, r->v[G_CORR], rank);
	}
	ret = lane_place(tl, &stream->lanes, ev.start, ev.end, &ev.track);
	if (!ret)
		ret = tl->sink->ops->slice_begin(tl->sink, &ev);
	if (ret < 0)
		return ret;

	/* Busy is the union over streams: merge overlapping work before counting it. */
	if (gpu->busy_open && ev.start <= gpu->busy_end) {
		if (ev.end > gpu->busy_end)
			gpu->busy_end = ev.end;
	} else {
		if (gpu->busy_open)
			spread(&gpu->b, gpu->b.busy, gpu->busy_start, gpu->busy_end,
			       (double)(gpu->busy_end - gpu->busy_start));
		gpu->busy_start = ev.start;
		gpu->busy_end = ev.end;
		gpu->busy_open = 1;
	}
	if (h->kind == GPU_COPY) {
		enum copy_direction d = copy_direction(event_int(r, C_KIND, 0));

		spread(&gpu->b, gpu->b.bytes[d], ev.start, ev.end, (double)event_int(r, C_BYTES, 0));
		gpu->b.used[d] = 1;
	}
	return 0;
}

/* Every GPU's counter buckets over the trace's time range. */
static int gpu_buckets(struct timeline *tl)
{
	int64_t end = tl->end > tl->origin ? tl->end : tl->origin + 1;
	int64_t width = bucket_width(end - tl->origin);

	for (size_t i = 0; i < tl->ngpus; i++) {
		struct counter_buckets *b = &tl->gpus[i].b;

		*b = (struct counter_buckets){ .origin = tl->origin, .end = end, .width = width };
		b->n = (size_t)((end - tl->origin + width - 1) / width);
		b->busy = calloc(b->n, sizeof(double));
		if (!b->busy)
			return -ENOMEM;
		for (int d = 0; d < NDIRS; d++)
			if (!(b->bytes[d] = calloc(b->n, sizeof(double))))
				return -ENOMEM;
	}
	return 0;
}

/*
 * Kernels, copies and sets of every file, merged in time order (a GPU's streams may come from
 * several processes), onto their streams; then each device's counters, in device order.
 */
static int walk_gpu(struct timeline *tl)
{
	static const int views[] = { V_KERNELS, V_COPIES, V_SETS };
	size_t n = 3 * trace_count(tl->trace);
	struct event_stream **s = xcalloc(n ? n : 1, sizeof(*s));
	const struct event_row **cur = xcalloc(n ? n : 1, sizeof(*cur));
	int ret = gpu_buckets(tl);

	for (size_t k = 0; k < n && ret >= 0; k++) {
		const struct event_columns *c = &export_streams[views[k % 3]];

		ret = event_stream_open_file(tl->trace, k / 3, c->view, c->cols, c->ncols, c->nkey, c->text_col,
					     &s[k], tl->err, tl->errlen);
		if (ret >= 0)
			ret = event_stream_next(s[k], &cur[k], tl->err, tl->errlen);
	}
	while (ret >= 0) {
		int b = first_row(cur, n, 0);
		int64_t start;

		if (b < 0)
			break;
		start = cur[b]->start;
		held_clear(&tl->held);
		for (size_t k = 0; k < n && ret >= 0; k++) {
			while (ret >= 0 && cur[k] && cur[k]->start == start) {
				progress_tick(&tl->progress);
				ret = hold(&tl->held, cur[k], (int)(k % 3), 0) ? 0 : -ENOMEM;
				if (ret >= 0)
					ret = event_stream_next(s[k], &cur[k], tl->err, tl->errlen);
			}
		}
		if (tl->held.n > 1)
			qsort(tl->held.items, tl->held.n, sizeof(*tl->held.items), held_compare_gpu);
		for (size_t i = 0; i < tl->held.n && ret >= 0; i++)
			ret = emit_gpu(tl, &tl->held.items[i]);
	}
	for (size_t k = 0; k < n; k++)
		event_stream_close(s[k]);
	free(s);
	free(cur);
	for (size_t i = 0; i < tl->ngpus && ret >= 0; i++)
		ret = finish_device(tl, &tl->gpus[i]);
	return ret < 0 ? ret : 0;
}
/* ------------------------------------------------------------------------------------------------ */
/* Findings. */

static const char *severity_name(enum finding_severity severity)
{
	switch (severity) {
	case SEVERITY_INFO: return "info";
	case SEVERITY_WARNING: return "warning";
	case SEVERITY_CRITICAL: return "critical";
	}
	return "unknown";
}

static int walk_findings(struct timeline *tl, const struct findings *findings)
{
	const struct timeline_sink_ops *ops = tl->sink->ops;
	struct timeline_track process = {
		.uuid = tl->next_uuid++, .kind = TIMELINE_PROCESS, .pid = PSEUDO_PID_FINDINGS,
		.sort_index = SORT_FINDINGS, .name = "gpt-trace findings",
	};
	struct timeline_track thread = {
		.uuid = tl->next_uuid++, .parent_uuid = process.uuid, .kind = TIMELINE_THREAD,
		.pid = PSEUDO_PID_FINDINGS, .tid = tl->next_tid++, .name = "findings",
	};
	int ret;

	if (!findings || !findings->count)
		return 0;
	ret = ops->track(tl->sink, &process);
	if (!ret)
		ret = ops->track(tl->sink, &thread);
	for (size_t i = 0; !ret && i < findings->count; i++) {
		const struct finding *f = &findings->items[i];
		struct timeline_arg args[10];
		struct timeline_event ev = { .track = &thread, .category = "gpt-trace.finding", .args = args };
		char *evidence = NULL;
		size_t nargs = 0, len = 0;

		ev.start = f->start || f->end ? f->start : tl->origin;
		ev.end = ev.start;
		ev.name = f->message ? f->message : f->rule_id;
		arg_string(args, &nargs, "rule", f->rule_id);
		arg_string(args, &nargs, "severity", severity_name(f->severity));
		arg_string(args, &nargs, "message", f->message);
		arg_double(args, &nargs, "recoverable ms", (double)f->recoverable_ns / 1e6);
		if (f->fix)
			arg_string(args, &nargs, "fix", f->fix);
		for (size_t k = 0; k < f->nevidence; k++)
			len += strlen(f->evidence[k]) + 1;
		if (len) {
			evidence = malloc(len);
			if (!evidence)
				return -ENOMEM;
			evidence[0] = '\0';
			for (size_t k = 0; k < f->nevidence; k++) {
				if (k)
					strcat(evidence, "\n");
				strcat(evidence, f->evidence[k]);
			}
			arg_string(args, &nargs, "evidence", evidence);
		}
		if (f->start || f->end) {
			arg_int(args, &nargs, "start", f->start);
			arg_int(args, &nargs, "end", f->end);
		}
		if (f->device >= 0)
			arg_int(args, &nargs, "device", f->device);
		if (f->stream >= 0)
			arg_int(args, &nargs, "stream", f->stream);
		ev.nargs = nargs;
		ret = ops->instant(tl->sink, &ev);
		free(evidence);
	}
	return ret;
}

/* ------------------------------------------------------------------------------------------------ */

static void timeline_release(struct timeline *tl)
{
	for (size_t i = 0; i < tl->nprocs; i++) {
		free(tl->procs[i]->name);
		lane_set_release(&tl->procs[i]->nvtx_ranges);
		lane_set_release(&tl->procs[i]->syncs);
		free(tl->procs[i]);
	}
	free(tl->procs);
	for (size_t i = 0; i < tl->nthreads; i++) {
		free(tl->threads[i]->name);
		lane_set_release(&tl->threads[i]->lanes);
		free(tl->threads[i]);
	}
	free(tl->threads);
	for (size_t i = 0; i < tl->ngpus; i++) {
		free(tl->gpus[i].name);
		free(tl->gpus[i].b.busy);
		for (int d = 0; d < NDIRS; d++)
			free(tl->gpus[i].b.bytes[d]);
	}
	free(tl->gpus);
	for (size_t i = 0; i < tl->nstreams; i++) {
		free(tl->streams[i].name);
		lane_set_release(&tl->streams[i].lanes);
	}
	free(tl->streams);
	key_index_release(&tl->thread_index);
	key_index_release(&tl->proc_index);
	key_index_release(&tl->stream_index);
	free(tl->thread_keys);
	free(tl->proc_keys);
	free(tl->proc_flags);
	free(tl->thread_of);
	free(tl->proc_of);
	corr_map_free(tl->corr);
	held_clear(&tl->held);
	free(tl->held.items);
	free(tl->flows);
	free(tl->ranks);
	sqlite3_finalize(tl->process_name);
}

void export_keep(struct trace *trace)
{
	event_streams_keep(trace, export_streams, NVIEWS);
}

/* The rows the passes read, for the progress line: the index reads the NVTX events once and the
 * others twice, the walks each once. */
static int export_rows(struct timeline *tl, int64_t *rows)
{
	*rows = 0;
	for (int v = 0; v < NVIEWS; v++) {
		struct event_stream *s;
		int ret = open_view(tl, v, &s);

		if (ret < 0)
			return ret;
		*rows += event_stream_total(s) * (v == V_NVTX ? 2 : 3);
		event_stream_close(s);
	}
	return 0;
}

int timeline_walk(struct trace *trace, const struct findings *findings, struct timeline_sink *sink,
		  char *err, size_t errlen)
{
	struct timeline tl = {
		.trace = trace, .db = trace_db(trace), .sink = sink, .err = err, .errlen = errlen,
		.next_uuid = 1, .next_tid = PSEUDO_TID_BASE,
	};
	int64_t rows;
	int ret;

	err[0] = '\0';
	ret = prepare(&tl, "SELECT name FROM processes WHERE traceId = ?1 AND pid = ?2 LIMIT 1", &tl.process_name);
	if (!ret)
		ret = export_rows(&tl, &rows);
	if (ret < 0)
		goto out;
	progress_begin(&tl.progress, "export", "events", rows);
	if ((ret = index_pass(&tl)) < 0 || (ret = load_gpus(&tl)) < 0)
		goto out;
	/* Tracks in the order a reader shows them by default: host processes, GPUs, findings. */
	if ((ret = sink->ops->begin(sink, tl.origin)) < 0 || (ret = declare_host_tracks(&tl)) < 0 ||
	    (ret = walk_host(&tl)) < 0 || (ret = declare_gpu_tracks(&tl)) < 0 || (ret = walk_gpu(&tl)) < 0 ||
	    (ret = walk_findings(&tl, findings)) < 0)
		goto out;
	ret = sink->ops->finish(sink);
out:
	progress_end(&tl.progress);
	timeline_release(&tl);
	if (ret == -ENOMEM && !err[0])
		snprintf(err, errlen, "cannot export '%s': out of memory", trace_path(trace, 0));
	return ret;
}
