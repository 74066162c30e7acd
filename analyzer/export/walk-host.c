/*
 * The timeline walk's host pass (walk.h): API calls, NVTX ranges and marks and synchronization
 * records of each file merged in time order onto their threads, and onto their process's lanes.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyzer/export/walk.h"

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
	walk_arg_string(args, n, "source", "NVTX");
	if (!event_null(r, N_DOMAIN))
		walk_arg_int(args, n, "domain", r->v[N_DOMAIN]);
	if (!event_null(r, N_CATEGORY))
		walk_arg_int(args, n, "category", r->v[N_CATEGORY]);
	if (!event_null(r, N_COLOR)) {
		snprintf(color, size, "#%06" PRIx64, (uint64_t)r->v[N_COLOR] & 0xffffff);
		walk_arg_string(args, n, "color", color);
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
	walk_arg_string(args, n, "sync type", LABEL(sync_type_labels, type));
	if (has_stream)
		walk_arg_int(args, n, "stream", stream);
	if (has_event)
		walk_arg_int(args, n, "event", event);
	walk_arg_int(args, n, "device", device);
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
	h = walk_hold(&tl->held, r, kind, v == V_NVTX);
	if (!h)
		return -ENOMEM;
	h->tid = tid;
	if (kind == HOST_NVTX_MARK)
		h->end = r->start;
	return 0;
}

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
	walk_arg_int(args, nargs, "gpu work", (int64_t)nflows);
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
			return walk_missing(tl, "process");
		set = h->kind == HOST_PROCESS_RANGE ? &p->nvtx_ranges : &p->syncs;
	} else {
		thread = i == SIZE_MAX ? NULL : tl->thread_of[i];
		if (!thread)
			return walk_missing(tl, "thread");
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

		ret = walk_string_of(tl, r, A_NAME, &function);
		if (ret < 0)
			return ret;
		ev.name = api_display_name(function, name, sizeof(name));
		ev.category = "cuda.api";
		walk_arg_string(args, &nargs, "function", function);
		walk_arg_int(args, &nargs, "correlation id", event_int(r, A_CORR, 0));
		walk_arg_string(args, &nargs, "api", event_int(r, A_CLASS, 0) == 1 ? "driver" : "runtime");
		walk_arg_int(args, &nargs, "return value", event_int(r, A_RETURN, 0));
		if ((ret = api_flows(tl, r, &ev, args, &nargs)) < 0)
			return ret;
		break;
	}
	case HOST_SYNC:
	case HOST_PROCESS_SYNC:
		ev.name = sync_describe(r, args, &nargs, name, sizeof(name));
		ev.category = "cuda.sync";
		walk_arg_int(args, &nargs, "correlation id", event_int(r, Y_CORR, 0));
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

/*
 * API calls, NVTX events and synchronization records, file by file in time order onto their
 * threads and processes (the streams give each file's rows in turn).
 */
int walk_host(struct timeline *tl)
{
	static const int views[] = { V_API, V_NVTX, V_SYNCS };
	struct event_stream *s[3] = { NULL, NULL, NULL };
	const struct event_row *cur[3] = { NULL, NULL, NULL };
	int ret = 0;

	for (size_t k = 0; k < 3 && ret >= 0; k++) {
		ret = walk_open_view(tl, views[k], &s[k]);
		if (ret >= 0)
			ret = event_stream_next(s[k], &cur[k], tl->err, tl->errlen);
	}
	while (ret >= 0) {
		int b = walk_first_row(cur, 3, 1);
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
