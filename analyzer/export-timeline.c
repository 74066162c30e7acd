/*
 * The exporter's model: walks a trace's canonical views (loader/trace.h) in a few ordered SQL
 * passes and hands tracks and events to a writer (export-perfetto.c, export-chrome.c). Each pass is
 * one statement whose rows arrive sorted by time within each track, so the walk holds only the
 * current nesting stack of each track; SQLite's sorter spills to disk, and memory does not grow
 * with the trace (14 MiB peak at 250k and at 1M kernels, bench/export/RESULTS.md).
 *
 * Passes: host threads (API calls, NVTX push/pop ranges and marks, and the synchronization records
 * nested under the API call that waited), sorted by thread, which makes the thread and process
 * tracks in (trace, pid, tid) order; per process, NVTX start/end ranges and the synchronizations no
 * API call claims; the GPU work (kernels, copies, sets) sorted by device and time, which feeds
 * both the stream tracks and the busy and bandwidth counters; the findings. Every sort of the
 * trace costs seconds at a million kernels, so there are five in all (the two correlation tables
 * below, the stream list, the host pass, the GPU pass).
 *
 * Nesting is checked, not assumed: a slice that starts inside another on the same track but ends
 * after it goes to the track's next lane (an extra "(overlap N)" track), so a writer never sees a
 * partial overlap, which Perfetto would reject and Chrome JSON would draw wrong.
 *
 * Flows: an API call's correlation id is shared by the GPU work it caused. Two small TEMP tables,
 * keyed by (traceId, correlationId), say which API call owns an id (the earliest with it, so a
 * runtime call and the driver call inside it do not both get arrows) and how many GPU items carry
 * it; the owner then starts one flow per item and each item ends its own, numbered by its rank
 * among the items of that id.
 */
#include "analyzer/export.h"
#include "analyzer/export-timeline.h"
#include "loader/events.h"
#include "common/progress.h"

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

struct gpu {
	int64_t device;
	char *name;
	struct timeline_track track;
	int nprocesses;		/* host processes with work on it */
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

struct timeline {
	struct trace *trace;
	sqlite3 *db;
	struct timeline_sink *sink;
	char *err;
	size_t errlen;
	int64_t origin, end;
	uint64_t next_uuid;
	int32_t next_tid;

	/* Host processes and threads, made as the walk meets them (so in (trace, pid, tid) order). */
	struct host_process **procs;
	size_t nprocs, procs_cap;
	struct host_thread **threads;
	size_t nthreads, threads_cap;
	sqlite3_stmt *process_name;

	struct gpu *gpus;
	size_t ngpus;
	struct gpu_stream *streams;	/* sorted by (device, stream, trace, pid) */
	size_t nstreams;

	uint64_t *flows;	/* flow ids of the API call being written */
	size_t flows_cap;
	struct flow_rank *ranks;
	size_t nranks, ranks_cap;
	struct progress progress;	/* over every event the passes read */
};

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

static const char *const setup_sql =
	"DROP TABLE IF EXISTS temp.gpt_export_api;"
	"DROP TABLE IF EXISTS temp.gpt_export_work;"
	"CREATE TEMP TABLE gpt_export_api(traceId INTEGER, correlationId INTEGER, start INTEGER,"
	"  tid INTEGER, eventClass INTEGER, PRIMARY KEY (traceId, correlationId)) WITHOUT ROWID;"
	/* min() makes SQLite take the other bare columns from the earliest row. */
	"INSERT INTO temp.gpt_export_api SELECT traceId, correlationId, min(start), tid, eventClass"
	"  FROM api_calls WHERE correlationId IS NOT NULL AND correlationId != 0"
	"  GROUP BY traceId, correlationId;"
	"CREATE TEMP TABLE gpt_export_work(traceId INTEGER, correlationId INTEGER, nwork INTEGER,"
	"  PRIMARY KEY (traceId, correlationId)) WITHOUT ROWID;"
	"INSERT INTO temp.gpt_export_work SELECT traceId, correlationId, count(*) FROM ("
	"  SELECT traceId, correlationId FROM kernels UNION ALL"
	"  SELECT traceId, correlationId FROM copies UNION ALL"
	"  SELECT traceId, correlationId FROM sets)"
	"  WHERE correlationId IS NOT NULL AND correlationId != 0 GROUP BY traceId, correlationId;";

static const char *const cleanup_sql =
	"DROP TABLE IF EXISTS temp.gpt_export_api;"
	"DROP TABLE IF EXISTS temp.gpt_export_work;";

static int exec(struct timeline *tl, const char *sql, const char *what)
{
	if (sqlite3_exec(tl->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sql_error(tl, what);
	return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Tracks. */

/*
 * The time range of every event: the loader's summaries for the GPU and API views (counted by the
 * scans that find their storage order, no pass of their own), one aggregate for NVTX marks and ranges.
 */
static int load_extent(struct timeline *tl)
{
	static const char *const views[] = { "kernels", "copies", "sets", "syncs", "api_calls" };
	static const char nvtx_sql[] =
		"SELECT min(start), max(coalesce(end, start)) FROM nvtx WHERE eventType IN (34, 59, 60)";
	int64_t first = 0, last = 0;
	int has_first = 0, has_last = 0;
	sqlite3_stmt *st;
	int ret;

	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++)
		for (size_t t = 0; t < trace_count(tl->trace); t++) {
			struct event_summary m;

			ret = event_summary_get(tl->trace, views[v], t, &m, tl->err, tl->errlen);
			if (ret < 0)
				return ret;
			if (m.has_first && (!has_first || m.first < first)) {
				first = m.first;
				has_first = 1;
			}
			if (m.has_last && (!has_last || m.last > last)) {
				last = m.last;
				has_last = 1;
			}
		}
	ret = prepare(tl, nvtx_sql, &st);
	if (ret < 0)
		return ret;
	if (sqlite3_step(st) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_NULL &&
		    (!has_first || sqlite3_column_int64(st, 0) < first)) {
			first = sqlite3_column_int64(st, 0);
			has_first = 1;
		}
		if (sqlite3_column_type(st, 1) != SQLITE_NULL && (!has_last || sqlite3_column_int64(st, 1) > last)) {
			last = sqlite3_column_int64(st, 1);
			has_last = 1;
		}
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		return sql_error(tl, "reading the time range failed");
	if (has_first) {
		tl->origin = first;
		tl->end = has_last ? last : 0;
		if (tl->end < tl->origin)
			tl->end = tl->origin;
	}
	return 0;
}

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

static const char gpu_work_sql[] =
	"SELECT traceId, deviceId, streamId, pid, correlationId, start, end FROM kernels UNION ALL"
	" SELECT traceId, deviceId, streamId, pid, correlationId, start, end FROM copies UNION ALL"
	" SELECT traceId, deviceId, streamId, pid, correlationId, start, end FROM sets";

static int load_streams(struct timeline *tl)
{
	char *sql = format("SELECT deviceId, streamId, traceId, pid,"
			   " (SELECT g.name FROM gpus g WHERE g.id = w.deviceId ORDER BY g.traceId LIMIT 1)"
			   " FROM (%s) w GROUP BY deviceId, streamId, traceId, pid"
			   " ORDER BY deviceId, streamId, traceId, pid", gpu_work_sql);
	sqlite3_stmt *st;
	size_t cap = 0, gcap = 0;
	int ret;

	if (!sql)
		return -ENOMEM;
	ret = prepare(tl, sql, &st);
	free(sql);
	if (ret < 0)
		return ret;
	while ((ret = sqlite3_step(st)) == SQLITE_ROW) {
		struct gpu_stream *s;
		int64_t device = sqlite3_column_int64(st, 0);

		if (!tl->ngpus || tl->gpus[tl->ngpus - 1].device != device) {
			const char *name = column_text(st, 4);
			struct gpu *g;

			if (tl->ngpus == gcap) {
				gcap = gcap ? gcap * 2 : 4;
				g = realloc(tl->gpus, gcap * sizeof(*g));
				if (!g)
					goto out_nomem;
				tl->gpus = g;
			}
			g = &tl->gpus[tl->ngpus];
			memset(g, 0, sizeof(*g));
			g->device = device;
			g->name = name && *name ? format("GPU %" PRId64 ": %s", device, name)
						: format("GPU %" PRId64, device);
			if (!g->name)
				goto out_nomem;
			tl->ngpus++;
		}
		if (tl->nstreams == cap) {
			cap = cap ? cap * 2 : 16;
			s = realloc(tl->streams, cap * sizeof(*s));
			if (!s)
				goto out_nomem;
			tl->streams = s;
		}
		s = &tl->streams[tl->nstreams++];
		memset(s, 0, sizeof(*s));
		s->device = device;
		s->stream = sqlite3_column_int64(st, 1);
		s->trace_id = sqlite3_column_int64(st, 2);
		s->pid = sqlite3_column_int(st, 3);
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		return sql_error(tl, "listing streams failed");

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

out_nomem:
	sqlite3_finalize(st);
	return -ENOMEM;
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

enum host_kind {
	HOST_NVTX_RANGE = 0,	/* ordered first: a range encloses the calls made inside it */
	HOST_API = 1,
	HOST_SYNC = 2,
	HOST_NVTX_MARK = 3,
};

static const char host_sql[] =
	"SELECT traceId, pid, tid, start, end, kind, name, corr, a1, a2, a3, a4, nflows FROM ("
	" SELECT traceId, pid, tid, start, coalesce(end, start) AS end, 0 AS kind, text AS name,"
	"   NULL AS corr, domainId AS a1, category AS a2, color AS a3, NULL AS a4, 0 AS nflows"
	"   FROM nvtx WHERE eventType = 59"
	" UNION ALL"
	" SELECT a.traceId, a.pid, a.tid, a.start, a.end, 1, a.name, a.correlationId, a.eventClass,"
	"   a.returnValue, NULL, NULL,"
	"   CASE WHEN o.start = a.start AND o.tid = a.tid AND o.eventClass IS a.eventClass"
	"     THEN coalesce(w.nwork, 0) ELSE 0 END"
	"   FROM api_calls a"
	"   LEFT JOIN temp.gpt_export_api o ON o.traceId = a.traceId AND o.correlationId = a.correlationId"
	"   LEFT JOIN temp.gpt_export_work w ON w.traceId = a.traceId AND w.correlationId = a.correlationId"
	" UNION ALL"
	" SELECT s.traceId, s.pid, o.tid, s.start, s.end, 2, NULL, s.correlationId, s.syncType, s.eventId,"
	"   s.streamId, s.deviceId, 0"
	"   FROM syncs s JOIN temp.gpt_export_api o"
	"     ON o.traceId = s.traceId AND o.correlationId = s.correlationId"
	" UNION ALL"
	" SELECT traceId, pid, tid, start, start, 3, text, NULL, domainId, category, color, NULL, 0"
	"   FROM nvtx WHERE eventType = 34)"
	" ORDER BY traceId, pid, tid, start, end DESC, kind";

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
static void nvtx_args(sqlite3_stmt *st, struct timeline_arg *args, size_t *n, char *color, size_t size)
{
	arg_string(args, n, "source", "NVTX");
	if (sqlite3_column_type(st, 8) != SQLITE_NULL)
		arg_int(args, n, "domain", sqlite3_column_int64(st, 8));
	if (sqlite3_column_type(st, 9) != SQLITE_NULL)
		arg_int(args, n, "category", sqlite3_column_int64(st, 9));
	if (sqlite3_column_type(st, 10) != SQLITE_NULL) {
		snprintf(color, size, "#%06" PRIx64, (uint64_t)sqlite3_column_int64(st, 10) & 0xffffff);
		arg_string(args, n, "color", color);
	}
}

/*
 * Slice name and arguments of a synchronization record (columns a1..a4 of host_sql): what the host
 * waited for. CUPTI's syncType says it, but nsys exports store other numbers than their own
 * ENUM_CUPTI_SYNC_TYPE table claims (cudaDeviceSynchronize rows carry 1, "event sync";
 * cudaStreamSynchronize rows 2, "stream wait event"), always with eventId and, for device syncs,
 * streamId set to CUPTI's invalid value. So the type is believed only when the ids agree with it,
 * and otherwise read from the ids.
 */
static const char *sync_describe(sqlite3_stmt *st, int first, struct timeline_arg *args, size_t *n,
				 char *name, size_t size)
{
	int64_t type = sqlite3_column_int64(st, first);
	int64_t event = sqlite3_column_int64(st, first + 1);
	int64_t stream = sqlite3_column_int64(st, first + 2);
	int64_t device = sqlite3_column_int64(st, first + 3);
	int has_event = sqlite3_column_type(st, first + 1) != SQLITE_NULL && event != SYNC_INVALID;
	int has_stream = sqlite3_column_type(st, first + 2) != SQLITE_NULL && stream != SYNC_INVALID;

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

static int walk_host(struct timeline *tl)
{
	const struct timeline_sink_ops *ops = tl->sink->ops;
	struct host_thread *thread = NULL;
	int64_t last_owner_trace = -1, last_owner_corr = -1;
	sqlite3_stmt *st;
	int ret = prepare(tl, host_sql, &st);

	if (ret < 0)
		return ret;
	while ((ret = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t trace_id = sqlite3_column_int64(st, 0);
		int32_t pid = sqlite3_column_int(st, 1);
		int32_t tid = sqlite3_column_int(st, 2);
		progress_tick(&tl->progress);
		int64_t start = sqlite3_column_int64(st, 3);
		int64_t end = sqlite3_column_int64(st, 4);
		enum host_kind kind = (enum host_kind)sqlite3_column_int(st, 5);
		struct timeline_arg args[8];
		struct timeline_event ev = { .start = start, .end = end < start ? start : end, .args = args };
		char name[512], color[16];
		size_t nargs = 0;

		/* Rows come thread by thread, so a thread's track is made when its first row arrives. */
		if (!thread || thread->trace_id != trace_id || thread->pid != pid || thread->tid != tid) {
			if (thread && (ret = lane_set_flush(tl, &thread->lanes)) < 0)
				goto out;
			thread = new_thread(tl, trace_id, pid, tid, &ret);
			if (!thread)
				goto out;
		}

		switch (kind) {
		case HOST_NVTX_RANGE:
		case HOST_NVTX_MARK:
			ev.name = column_text(st, 6);
			if (!ev.name)
				ev.name = kind == HOST_NVTX_MARK ? "(unnamed mark)" : "(unnamed range)";
			ev.category = "nvtx";
			nvtx_args(st, args, &nargs, color, sizeof(color));
			break;
		case HOST_API: {
			int64_t corr = sqlite3_column_int64(st, 7);
			int64_t nflows = sqlite3_column_int64(st, 12);

			ev.name = api_display_name(column_text(st, 6), name, sizeof(name));
			ev.category = "cuda.api";
			arg_string(args, &nargs, "function", column_text(st, 6));
			arg_int(args, &nargs, "correlation id", corr);
			arg_string(args, &nargs, "api", sqlite3_column_int(st, 8) == 1 ? "driver" : "runtime");
			arg_int(args, &nargs, "return value", sqlite3_column_int64(st, 9));
			/* Two owner rows for one id only if they tie exactly; they sort next to each other. */
			if (nflows > 0 && !(trace_id == last_owner_trace && corr == last_owner_corr)) {
				if ((ret = reserve_flows(tl, (size_t)nflows)) < 0)
					goto out;
				for (int64_t k = 0; k < nflows; k++)
					tl->flows[k] = flow_id(trace_id, corr, k + 1);
				ev.flows_out = tl->flows;
				ev.nflows_out = (size_t)nflows;
				arg_int(args, &nargs, "gpu work", nflows);
				last_owner_trace = trace_id;
				last_owner_corr = corr;
			}
			break;
		}
		case HOST_SYNC:
			ev.name = sync_describe(st, 8, args, &nargs, name, sizeof(name));
			ev.category = "cuda.sync";
			arg_int(args, &nargs, "correlation id", sqlite3_column_int64(st, 7));
			break;
		}
		ev.nargs = nargs;

		if (kind == HOST_NVTX_MARK) {
			ev.track = &thread->lanes.lanes[0].track;
			ev.end = ev.start;
			ret = lane_settle(tl, &thread->lanes.lanes[0], start);
			if (!ret)
				ret = ops->instant(tl->sink, &ev);
		} else {
			ret = lane_place(tl, &thread->lanes, ev.start, ev.end, &ev.track);
			if (!ret)
				ret = ops->slice_begin(tl->sink, &ev);
		}
		if (ret < 0)
			goto out;
	}
	if (ret != SQLITE_DONE) {
		ret = sql_error(tl, "reading API calls and NVTX ranges failed");
		goto out;
	}
	ret = thread ? lane_set_flush(tl, &thread->lanes) : 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * NVTX start/end ranges (which may overlap, and may end on another thread) and synchronization
 * records no API call claims: per process, on lanes of their own.
 */
static int walk_process_lanes(struct timeline *tl, int syncs)
{
	static const char nvtx_sql[] =
		"SELECT traceId, pid, start, coalesce(end, start), text, NULL, NULL, NULL,"
		" domainId, category, color FROM nvtx WHERE eventType = 60"
		" ORDER BY traceId, pid, start, end DESC";
	static const char sync_sql[] =
		"SELECT s.traceId, s.pid, s.start, s.end, NULL, s.correlationId, NULL, NULL,"
		" s.syncType, s.eventId, s.streamId, s.deviceId FROM syncs s"
		" LEFT JOIN temp.gpt_export_api o ON o.traceId = s.traceId AND o.correlationId = s.correlationId"
		" WHERE o.traceId IS NULL ORDER BY s.traceId, s.pid, s.start, s.end DESC";
	const struct timeline_sink_ops *ops = tl->sink->ops;
	struct host_process *proc = NULL;
	sqlite3_stmt *st;
	int ret = prepare(tl, syncs ? sync_sql : nvtx_sql, &st);

	if (ret < 0)
		return ret;
	while ((ret = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t trace_id = sqlite3_column_int64(st, 0);
		int32_t pid = sqlite3_column_int(st, 1);
		struct timeline_arg args[8];
		struct timeline_event ev = { .args = args };
		char name[256], color[16];
		size_t nargs = 0;
		struct lane_set *set;

		if (!proc || proc->trace_id != trace_id || proc->pid != pid) {
			if (proc && (ret = lane_set_flush(tl, syncs ? &proc->syncs : &proc->nvtx_ranges)) < 0)
				goto out;
			proc = get_process(tl, trace_id, pid, &ret);
			if (!proc)
				goto out;
		}
		set = syncs ? &proc->syncs : &proc->nvtx_ranges;
		ev.start = sqlite3_column_int64(st, 2);
		ev.end = sqlite3_column_int64(st, 3);
		if (ev.end < ev.start)
			ev.end = ev.start;
		if (syncs) {
			ev.name = sync_describe(st, 8, args, &nargs, name, sizeof(name));
			ev.category = "cuda.sync";
			arg_int(args, &nargs, "correlation id", sqlite3_column_int64(st, 5));
		} else {
			ev.name = column_text(st, 4) ? column_text(st, 4) : "(unnamed range)";
			ev.category = "nvtx";
			/* nvtx_args() reads columns 8..10, which this query lines up. */
			nvtx_args(st, args, &nargs, color, sizeof(color));
		}
		ev.nargs = nargs;
		ret = lane_place(tl, set, ev.start, ev.end, &ev.track);
		if (!ret)
			ret = ops->slice_begin(tl->sink, &ev);
		if (ret < 0)
			goto out;
	}
	if (ret != SQLITE_DONE) {
		ret = sql_error(tl, syncs ? "reading synchronizations failed" : "reading NVTX ranges failed");
		goto out;
	}
	ret = proc ? lane_set_flush(tl, syncs ? &proc->syncs : &proc->nvtx_ranges) : 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* ------------------------------------------------------------------------------------------------ */
/* GPU streams and counters, in one pass over the GPU work sorted by (device, start). */

enum gpu_kind {
	GPU_KERNEL = 0,
	GPU_COPY = 1,
	GPU_SET = 2,
};

enum copy_direction { DIR_HTOD, DIR_DTOH, DIR_DTOD, DIR_PTOP, DIR_OTHER, NDIRS };

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

struct counter_buckets {
	int64_t origin, end, width;
	size_t n;
	double *busy;			/* ns busy per bucket */
	double *bytes[NDIRS];		/* bytes copied per bucket */
	int used[NDIRS];
};

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

/*
 * Sorted by device and time, not by stream: each stream's slices still arrive in start order (and
 * parents before children), which is all its lanes need, and the busy and bandwidth counters of a
 * device need exactly this order. One sort of the GPU work instead of two.
 */
static const char gpu_sql[] =
	"SELECT g.deviceId, g.streamId, g.traceId, g.pid, g.start, g.end, g.kind, g.name, g.shortName,"
	" g.correlationId, g.contextId, g.gridX, g.gridY, g.gridZ, g.blockX, g.blockY, g.blockZ,"
	" g.registersPerThread, g.staticSharedMemory, g.dynamicSharedMemory, g.localMemoryPerThread,"
	" g.bytes, g.copyKind, g.srcKind, g.dstKind, g.value, g.graphId, g.graphNodeId,"
	" o.traceId IS NOT NULL AS hasFlow, w.nwork"
	" FROM ("
	"  SELECT traceId, deviceId, streamId, pid, start, end, 0 AS kind, name, shortName, correlationId,"
	"   contextId, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, staticSharedMemory,"
	"   dynamicSharedMemory, localMemoryPerThread, NULL AS bytes, NULL AS copyKind, NULL AS srcKind,"
	"   NULL AS dstKind, NULL AS value, graphId, graphNodeId FROM kernels"
	"  UNION ALL"
	"  SELECT traceId, deviceId, streamId, pid, start, end, 1, NULL, NULL, correlationId, contextId,"
	"   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, bytes, copyKind, srcKind, dstKind,"
	"   NULL, NULL, graphNodeId FROM copies"
	"  UNION ALL"
	"  SELECT traceId, deviceId, streamId, pid, start, end, 2, NULL, NULL, correlationId, contextId,"
	"   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, bytes, NULL, memKind, NULL,"
	"   value, NULL, graphNodeId FROM sets) g"
	" LEFT JOIN temp.gpt_export_api o ON o.traceId = g.traceId AND o.correlationId = g.correlationId"
	" LEFT JOIN temp.gpt_export_work w ON w.traceId = g.traceId AND w.correlationId = g.correlationId"
	" ORDER BY g.deviceId, g.start, g.end DESC, g.kind, g.streamId";

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
static int finish_device(struct timeline *tl, struct gpu *gpu, struct counter_buckets *b, int64_t busy_start,
			 int64_t busy_end, int busy_open)
{
	int ret;

	for (size_t i = 0; i < tl->nstreams; i++) {
		if (tl->streams[i].device == gpu->device && (ret = lane_set_flush(tl, &tl->streams[i].lanes)) < 0)
			return ret;
	}
	if (busy_open)
		spread(b, b->busy, busy_start, busy_end, (double)(busy_end - busy_start));
	ret = emit_device_counters(tl, gpu, b);
	memset(b->busy, 0, b->n * sizeof(double));
	for (int d = 0; d < NDIRS; d++) {
		memset(b->bytes[d], 0, b->n * sizeof(double));
		b->used[d] = 0;
	}
	return ret;
}

static void describe_gpu_item(sqlite3_stmt *st, enum gpu_kind kind, struct timeline_event *ev,
			      struct timeline_arg *args, size_t *nargs, char *grid, char *block, char *label,
			      size_t size)
{
	switch (kind) {
	case GPU_KERNEL: {
		const char *full = column_text(st, 7);
		const char *shortname = column_text(st, 8);

		ev->category = "cuda.kernel";
		ev->name = full ? full : "(unnamed kernel)";
		if (full && strlen(full) > EXPORT_KERNEL_NAME_MAX && shortname && *shortname)
			ev->name = shortname;
		arg_string(args, nargs, "kernel", full ? full : ev->name);
		snprintf(grid, size, "(%lld, %lld, %lld)", (long long)sqlite3_column_int64(st, 11),
			 (long long)sqlite3_column_int64(st, 12), (long long)sqlite3_column_int64(st, 13));
		snprintf(block, size, "(%lld, %lld, %lld)", (long long)sqlite3_column_int64(st, 14),
			 (long long)sqlite3_column_int64(st, 15), (long long)sqlite3_column_int64(st, 16));
		arg_string(args, nargs, "grid", grid);
		arg_string(args, nargs, "block", block);
		arg_int(args, nargs, "registers per thread", sqlite3_column_int64(st, 17));
		arg_int(args, nargs, "static shared memory", sqlite3_column_int64(st, 18));
		arg_int(args, nargs, "dynamic shared memory", sqlite3_column_int64(st, 19));
		arg_int(args, nargs, "local memory per thread", sqlite3_column_int64(st, 20));
		if (sqlite3_column_type(st, 26) != SQLITE_NULL)
			arg_int(args, nargs, "graph id", sqlite3_column_int64(st, 26));
		break;
	}
	case GPU_COPY: {
		int64_t bytes = sqlite3_column_int64(st, 21);
		int64_t copy_kind = sqlite3_column_int64(st, 22);

		ev->category = "cuda.memcpy";
		snprintf(label, size, "[CUDA memcpy %s]", LABEL(copy_kind_labels, copy_kind));
		ev->name = label;
		arg_int(args, nargs, "bytes", bytes);
		arg_string(args, nargs, "copy kind", LABEL(copy_kind_labels, copy_kind));
		if (sqlite3_column_type(st, 23) != SQLITE_NULL)
			arg_string(args, nargs, "source memory", LABEL(mem_kind_labels, sqlite3_column_int64(st, 23)));
		if (sqlite3_column_type(st, 24) != SQLITE_NULL)
			arg_string(args, nargs, "destination memory",
				   LABEL(mem_kind_labels, sqlite3_column_int64(st, 24)));
		if (ev->end > ev->start)
			arg_double(args, nargs, "bandwidth GB/s", (double)bytes / (double)(ev->end - ev->start));
		break;
	}
	case GPU_SET:
		ev->category = "cuda.memset";
		ev->name = "[CUDA memset]";
		arg_int(args, nargs, "bytes", sqlite3_column_int64(st, 21));
		arg_int(args, nargs, "value", sqlite3_column_int64(st, 25));
		if (sqlite3_column_type(st, 23) != SQLITE_NULL)
			arg_string(args, nargs, "memory kind", LABEL(mem_kind_labels, sqlite3_column_int64(st, 23)));
		break;
	}
	if (sqlite3_column_type(st, 9) != SQLITE_NULL)
		arg_int(args, nargs, "correlation id", sqlite3_column_int64(st, 9));
	arg_int(args, nargs, "device", sqlite3_column_int64(st, 0));
	arg_int(args, nargs, "stream", sqlite3_column_int64(st, 1));
	arg_int(args, nargs, "context", sqlite3_column_int64(st, 10));
	if (sqlite3_column_type(st, 27) != SQLITE_NULL)
		arg_int(args, nargs, "graph node id", sqlite3_column_int64(st, 27));
}

static int walk_gpu(struct timeline *tl)
{
	const struct timeline_sink_ops *ops = tl->sink->ops;
	struct counter_buckets b = { .origin = tl->origin, .end = tl->end };
	struct gpu *gpu = NULL;
	int64_t busy_start = 0, busy_end = 0;
	int busy_open = 0;
	sqlite3_stmt *st = NULL;
	int ret = -ENOMEM;

	if (!tl->ngpus)
		return 0;
	if (b.end <= b.origin)
		b.end = b.origin + 1;
	b.width = bucket_width(b.end - b.origin);
	b.n = (size_t)((b.end - b.origin + b.width - 1) / b.width);
	b.busy = calloc(b.n, sizeof(double));
	for (int d = 0; d < NDIRS; d++)
		b.bytes[d] = calloc(b.n, sizeof(double));
	if (!b.busy)
		goto out;
	for (int d = 0; d < NDIRS; d++)
		if (!b.bytes[d])
			goto out;
	ret = prepare(tl, gpu_sql, &st);
	if (ret < 0)
		goto out;
	while ((ret = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t device = sqlite3_column_int64(st, 0);
		int64_t start = sqlite3_column_int64(st, 4);

		progress_tick(&tl->progress);
		int64_t end = sqlite3_column_int64(st, 5);
		enum gpu_kind kind = (enum gpu_kind)sqlite3_column_int(st, 6);
		int64_t trace_id = sqlite3_column_int64(st, 2);
		int64_t corr = sqlite3_column_int64(st, 9);
		struct gpu_stream *stream;
		struct timeline_arg args[20];
		struct timeline_event ev = { .start = start, .end = end < start ? start : end, .args = args };
		char grid[80], block[80], label[80];
		size_t nargs = 0;

		if (!gpu || gpu->device != device) {
			if (gpu && (ret = finish_device(tl, gpu, &b, busy_start, busy_end, busy_open)) < 0)
				goto out;
			gpu = NULL;
			for (size_t i = 0; i < tl->ngpus && !gpu; i++)
				if (tl->gpus[i].device == device)
					gpu = &tl->gpus[i];
			busy_open = 0;
		}
		stream = find_stream(tl, device, sqlite3_column_int64(st, 1), trace_id, sqlite3_column_int(st, 3));
		if (!gpu || !stream) {
			/* Impossible unless the views changed under us: the lists came from them. */
			snprintf(tl->err, tl->errlen, "cannot export '%s': device %" PRId64 " stream %" PRId64
				 " is missing from the stream list", trace_path(tl->trace, 0), device,
				 (int64_t)sqlite3_column_int64(st, 1));
			ret = -EIO;
			goto out;
		}

		describe_gpu_item(st, kind, &ev, args, &nargs, grid, block, label, sizeof(grid));
		ev.nargs = nargs;
		if (sqlite3_column_int(st, 28) && corr) {
			int64_t rank;

			if ((ret = flow_rank(tl, trace_id, corr, sqlite3_column_int64(st, 29), &rank)) < 0)
				goto out;
			ev.flow_in = flow_id(trace_id, corr, rank);
		}
		ret = lane_place(tl, &stream->lanes, ev.start, ev.end, &ev.track);
		if (!ret)
			ret = ops->slice_begin(tl->sink, &ev);
		if (ret < 0)
			goto out;

		/* Busy is the union over streams: merge overlapping work before counting it. */
		if (busy_open && ev.start <= busy_end) {
			if (ev.end > busy_end)
				busy_end = ev.end;
		} else {
			if (busy_open)
				spread(&b, b.busy, busy_start, busy_end, (double)(busy_end - busy_start));
			busy_start = ev.start;
			busy_end = ev.end;
			busy_open = 1;
		}
		if (kind == GPU_COPY) {
			enum copy_direction d = copy_direction(sqlite3_column_int64(st, 22));

			spread(&b, b.bytes[d], ev.start, ev.end, (double)sqlite3_column_int64(st, 21));
			b.used[d] = 1;
		}
	}
	if (ret != SQLITE_DONE) {
		ret = sql_error(tl, "reading kernels, copies and sets failed");
		goto out;
	}
	ret = gpu ? finish_device(tl, gpu, &b, busy_start, busy_end, busy_open) : 0;
out:
	sqlite3_finalize(st);
	free(b.busy);
	for (int d = 0; d < NDIRS; d++)
		free(b.bytes[d]);
	return ret;
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
	for (size_t i = 0; i < tl->ngpus; i++)
		free(tl->gpus[i].name);
	free(tl->gpus);
	for (size_t i = 0; i < tl->nstreams; i++) {
		free(tl->streams[i].name);
		lane_set_release(&tl->streams[i].lanes);
	}
	free(tl->streams);
	free(tl->flows);
	free(tl->ranks);
	sqlite3_finalize(tl->process_name);
}

/* The host and GPU events the passes read, for the progress line (0 when it cannot tell). */
static int64_t count_events(struct timeline *tl)
{
	sqlite3_stmt *st;
	int64_t n = 0;

	if (!progress_visible())	/* a pass over every view, for a line nobody sees */
		return 0;
	if (sqlite3_prepare_v2(tl->db, "SELECT (SELECT count(*) FROM api_calls) + (SELECT count(*) FROM nvtx) + "
			       "(SELECT count(*) FROM kernels) + (SELECT count(*) FROM copies) + "
			       "(SELECT count(*) FROM sets)", -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int timeline_walk(struct trace *trace, const struct findings *findings, struct timeline_sink *sink,
		  char *err, size_t errlen)
{
	struct timeline tl = {
		.trace = trace, .db = trace_db(trace), .sink = sink, .err = err, .errlen = errlen,
		.next_uuid = 1, .next_tid = PSEUDO_TID_BASE,
	};
	int ret;

	err[0] = '\0';
	ret = exec(&tl, setup_sql, "indexing correlation ids failed");
	if (ret < 0)
		goto out;
	ret = prepare(&tl, "SELECT name FROM processes WHERE traceId = ?1 AND pid = ?2 LIMIT 1", &tl.process_name);
	if (ret < 0)
		goto out;
	progress_begin(&tl.progress, "export", "events", count_events(&tl));
	if ((ret = load_extent(&tl)) < 0 || (ret = load_streams(&tl)) < 0)
		goto out;
	/* Tracks are declared as the passes go, so in the order a reader shows them by default. */
	if ((ret = sink->ops->begin(sink, tl.origin)) < 0 || (ret = walk_host(&tl)) < 0 ||
	    (ret = walk_process_lanes(&tl, 0)) < 0 || (ret = walk_process_lanes(&tl, 1)) < 0 ||
	    (ret = declare_gpu_tracks(&tl)) < 0 || (ret = walk_gpu(&tl)) < 0 ||
	    (ret = walk_findings(&tl, findings)) < 0)
		goto out;
	ret = sink->ops->finish(sink);
out:
	progress_end(&tl.progress);
	/* Drop the helper tables even after a failure; the trace stays usable for the caller. */
	sqlite3_exec(tl.db, cleanup_sql, NULL, NULL, NULL);
	timeline_release(&tl);
	if (ret == -ENOMEM && !err[0])
		snprintf(err, errlen, "cannot export '%s': out of memory", trace_path(trace, 0));
	return ret;
}
