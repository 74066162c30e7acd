/*
 * The timeline walk's first pass (walk.h): the index of tracks (host processes and threads, GPU
 * streams), time range and correlation ids, before anything is written; then the tracks declared to
 * the writer, host and GPU.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyzer/export/walk.h"

/* The index: tracks, time range and correlation ids, before anything is written. */

int walk_open_view(struct timeline *tl, int v, struct event_stream **s)
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
		int cc = corr_col(v), ret = walk_open_view(tl, v, &s);

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
		int ret = walk_open_view(tl, v, &s);

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

int index_pass(struct timeline *tl)
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
	name = sqlite3_step(tl->process_name) == SQLITE_ROW ? walk_column_text(tl->process_name, 0) : NULL;
	p->name = name && *name ? strdup(name) : walk_format("process %" PRId32, pid);
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
	t->name = tid == pid ? strdup("main thread") : walk_format("thread %" PRId32, tid);
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
int declare_host_tracks(struct timeline *tl)
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
int load_gpus(struct timeline *tl)
{
	sqlite3_stmt *st;
	int ret;

	if (tl->nstreams)
		qsort(tl->streams, tl->nstreams, sizeof(*tl->streams), compare_streams);
	ret = walk_prepare(tl, "SELECT name FROM gpus WHERE id = ?1 ORDER BY traceId LIMIT 1", &st);
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
		name = sqlite3_step(st) == SQLITE_ROW ? walk_column_text(st, 0) : NULL;
		g->name = name && *name ? walk_format("GPU %" PRId64 ": %s", device, name) : walk_format("GPU %" PRId64, device);
		if (!g->name) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		return walk_sql_error(tl, "reading the GPUs failed");

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
				  ? walk_format("stream %" PRId64 " (pid %" PRId32 ")", s->stream, s->pid)
				  : walk_format("stream %" PRId64, s->stream);
		if (!s->name)
			return -ENOMEM;
	}
	return 0;
}

/* GPUs in device order after the host processes, streams in id order, findings last. */
int declare_gpu_tracks(struct timeline *tl)
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
