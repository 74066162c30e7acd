/*
 * Kineto's events into rows (see kineto-private.h): each event of an imported category becomes its
 * row as soon as the reader hands it over; the rest is counted by category. Times become ns from the
 * trace's origin; host threads and the process that owns the GPU work are learned on the way.
 */
#include "analyzer/import/kineto-private.h"

#include "common/kernel-name.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What an event becomes. */
enum kind {
	KIND_KERNEL,
	KIND_MEMCPY,
	KIND_MEMSET,
	KIND_SYNC,
	KIND_RUNTIME,
	KIND_DRIVER,
	KIND_RANGE,		/* cpu_op, user_annotation: an NVTX range on its thread */
	KIND_KINETO_OTHER,	/* a Kineto category that is not imported (counted) */
	KIND_FOREIGN,		/* no Kineto category */
};

static const struct {
	const char *cat;
	enum kind kind;
	int legacy;
} categories[] = {
	{ "kernel", KIND_KERNEL, 0 }, { "cuda_runtime", KIND_RUNTIME, 0 }, { "cpu_op", KIND_RANGE, 0 },
	{ "gpu_memcpy", KIND_MEMCPY, 0 }, { "gpu_memset", KIND_MEMSET, 0 }, { "cuda_driver", KIND_DRIVER, 0 },
	{ "user_annotation", KIND_RANGE, 0 }, { "cuda_sync", KIND_SYNC, 0 },
	{ "Kernel", KIND_KERNEL, 1 }, { "Runtime", KIND_RUNTIME, 1 }, { "Operator", KIND_RANGE, 1 },
	{ "Memcpy", KIND_MEMCPY, 1 }, { "Memset", KIND_MEMSET, 1 },
	{ "python_function", KIND_KINETO_OTHER, 0 }, { "gpu_user_annotation", KIND_KINETO_OTHER, 0 },
	{ "cpu_instant_event", KIND_KINETO_OTHER, 0 }, { "ac2g", KIND_KINETO_OTHER, 0 },
	{ "fwdbwd", KIND_KINETO_OTHER, 0 }, { "Trace", KIND_KINETO_OTHER, 0 },
	{ "async_gpu", KIND_KINETO_OTHER, 1 }, { "async_cpu_to_gpu", KIND_KINETO_OTHER, 1 },
	{ "cuda_profiler_range", KIND_KINETO_OTHER, 0 }, { "overhead", KIND_KINETO_OTHER, 0 },
	{ "cuda_event", KIND_KINETO_OTHER, 0 },
};

static enum kind classify(struct import *im, const char *cat)
{
	for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
		if (!strcmp(cat, categories[i].cat)) {
			im->kineto_events++;
			im->legacy_events += categories[i].legacy;
			return categories[i].kind;
		}
	return KIND_FOREIGN;
}

static void count_skipped(struct import *im, const char *what)
{
	int created;
	size_t i = strtab_get(&im->skipped, what, &created);

	if (created) {
		im->skipped_count = xrealloc(im->skipped_count, im->skipped.count * sizeof(*im->skipped_count));
		im->skipped_count[i] = 0;
	}
	im->skipped_count[i]++;
	if (im->counts)
		im->counts->skipped++;
}

/* ---- time, processes, threads ---- */

/* Trace time of a file time: time 0 is the first timed event's second, moved back at the end if an
 * earlier event comes later in the file. */
static int64_t rel(struct import *im, int64_t t)
{
	int64_t r;

	if (!im->have_origin) {
		im->origin = t - ((t % NS_PER_S) + NS_PER_S) % NS_PER_S;
		im->have_origin = 1;
		im->min_start = 0;
	}
	r = t - im->origin;
	if (r < im->min_start)
		im->min_start = r;
	return r;
}

static void host_pid_seen(struct import *im, int64_t pid)
{
	int64_t key[KEY_INDEX_WORDS] = { pid };
	int created;

	key_index_get(&im->pids, key, &created);
	if (created)
		im->host_pids++;
	if (!im->have_host_pid) {
		im->host_pid = pid;
		im->have_host_pid = 1;
	}
}

static int64_t global_pid(struct import *im)
{
	if (!im->have_host_pid) {
		im->unowned_gpu_rows++;
		return TRACE_OUT_NULL;
	}
	return im->host_pid << TID_BITS;
}

static struct thread *thread_get(struct import *im, int64_t pid, int64_t tid)
{
	int64_t key[KEY_INDEX_WORDS] = { pid, tid };
	int created;
	size_t i = key_index_get(&im->thread_index, key, &created);

	if (created) {
		im->threads = xrealloc(im->threads, (i + 1) * sizeof(*im->threads));
		im->threads[i] = (struct thread){ .pid = pid, .tid = tid };
	}
	return &im->threads[i];
}

/* nsys packs pid << 24 | tid; a tid that does not fit (Kineto's are the kernel's, which can pass
 * 2^24 when pid_max is raised) gets a number counted down from 2^24 - 1 instead. */
int64_t kineto_global_tid(struct import *im, int64_t pid, int64_t tid)
{
	struct thread *t = thread_get(im, pid, tid);
	int64_t local = tid;

	t->used = 1;
	if (tid < 0 || tid > TID_MASK)
		local = TID_MASK - (int64_t)(t - im->threads);
	return pid << TID_BITS | (local & TID_MASK);
}

/* ---- GPU activity ---- */

static int64_t arg_or(const struct kineto_event *ev, enum kineto_arg a, int64_t def)
{
	return ev->args & (1u << a) ? ev->arg[a] : def;
}

/* A number written as text: legacy traces give tids as "25738" (host) and "stream 7" (GPU). */
static int text_number(const char *text, const char *prefix, int64_t *out)
{
	size_t n = strlen(prefix);
	char *end;

	if (!text || strncmp(text, prefix, n) || !text[n])
		return 0;
	*out = strtoll(text + n, &end, 10);
	return !*end;
}

static int64_t tid_of(const struct kineto_event *ev)
{
	int64_t tid;

	if (ev->has_tid)
		return ev->tid;
	return text_number(ev->tid_text, "", &tid) ? tid : 0;
}

/* The stream of a GPU event: args "stream", else the tid. */
static int64_t stream_of(const struct kineto_event *ev)
{
	int64_t stream;

	if (ev->args & (1u << KA_STREAM))
		return ev->arg[KA_STREAM];
	if (ev->has_tid)
		return ev->tid;
	return text_number(ev->tid_text, "stream ", &stream) ? stream : 0;
}

static int64_t device_of(const struct kineto_event *ev)
{
	return arg_or(ev, KA_DEVICE, ev->has_pid ? ev->pid : 0);
}

/* start, end, deviceId, contextId, streamId, correlationId, globalPid: the first columns of every
 * GPU table. */
static void gpu_columns(struct import *im, const struct kineto_event *ev, int64_t *v)
{
	v[0] = rel(im, ev->ts);
	v[1] = v[0] + (ev->has_dur && ev->dur > 0 ? ev->dur : 0);
	v[2] = device_of(ev);
	v[3] = arg_or(ev, KA_CONTEXT, 0);
	v[4] = stream_of(ev);
	v[5] = arg_or(ev, KA_CORRELATION, TRACE_OUT_NULL);
	v[6] = global_pid(im);
}

/* The StringIds id of a kernel's short name, worked out once per name. */
static int64_t short_name_id(struct import *im, int64_t name_id, const char *name)
{
	int64_t key[KEY_INDEX_WORDS] = { name_id };
	int created;
	size_t i = key_index_get(&im->short_index, key, &created);

	if (created) {
		size_t len;
		const char *s = name_short(name, &len);
		char *copy = strndup(s, len);

		im->short_ids = xrealloc(im->short_ids, (i + 1) * sizeof(*im->short_ids));
		im->short_ids[i] = trace_out_string(&im->out, copy && *copy ? copy : name);
		free(copy);
	}
	return im->short_ids[i];
}

static int put_kernel(struct import *im, const struct kineto_event *ev)
{
	int64_t v[KERNEL_COLS];

	gpu_columns(im, ev, v);
	v[KERNEL_DEMANGLED] = trace_out_string(&im->out, ev->name);
	if (v[KERNEL_DEMANGLED] < 0)
		return -EIO;
	v[KERNEL_SHORT] = short_name_id(im, v[KERNEL_DEMANGLED], ev->name);
	if (v[KERNEL_SHORT] < 0)
		return -EIO;
	v[KERNEL_REGISTERS] = arg_or(ev, KA_REGISTERS, 0);
	for (int i = 0; i < 3; i++) {
		v[KERNEL_GRID_X + i] = i < ev->ngrid ? ev->grid[i] : 0;
		v[KERNEL_BLOCK_X + i] = i < ev->nblock ? ev->block[i] : 0;
	}
	if (ev->ngrid < 3 || ev->nblock < 3)
		im->kernels_without_dims++;
	v[KERNEL_STATIC_SMEM] = arg_or(ev, KA_SHARED_MEMORY, 0);	/* Kineto gives static + dynamic */
	v[KERNEL_DYNAMIC_SMEM] = 0;
	v[KERNEL_LOCAL_PER_THREAD] = v[KERNEL_LOCAL_TOTAL] = v[KERNEL_GRID_ID] = 0;
	return trace_out_row(&im->out, OUT_KERNEL, v);
}

/* CUPTI's memory kind names as Kineto prints them, in ENUM_CUDA_MEM_KIND order. */
static int64_t mem_kind(const char *s, size_t len)
{
	static const char *const names[] = { "Pageable", "Pinned", "Device", "Array", "Managed",
					     "Device Static", "Managed Static" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !memcmp(names[i], s, len))
			return (int64_t)i;
	return 7;	/* CUDA_MEMOPR_MEMORY_KIND_UNKNOWN */
}

/* "Memcpy HtoD (Pageable -> Device)": the copy kind as ENUM_CUDA_MEMCPY_OPER, and both memory kinds. */
static void parse_memcpy_name(const char *name, int64_t *kind, int64_t *src, int64_t *dst)
{
	static const char *const kinds[] = { "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD",
					     "HtoH", "PtoP" };
	const char *p = strncmp(name, "Memcpy ", 7) ? NULL : name + 7, *open, *arrow, *close;

	*kind = 0;
	*src = *dst = TRACE_OUT_NULL;
	if (!p)
		return;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(p, kinds[i], 4) && (p[4] == ' ' || !p[4]))
			*kind = (int64_t)i + 1;
	open = strchr(p, '(');
	arrow = open ? strstr(open, " -> ") : NULL;
	close = arrow ? strchr(arrow, ')') : NULL;
	if (!close)
		return;
	*src = mem_kind(open + 1, (size_t)(arrow - open - 1));
	*dst = mem_kind(arrow + 4, (size_t)(close - arrow - 4));
}

static int put_memcpy(struct import *im, const struct kineto_event *ev)
{
	int64_t v[MEMCPY_COLS];

	gpu_columns(im, ev, v);
	v[MEMCPY_BYTES] = arg_or(ev, KA_BYTES, 0);
	parse_memcpy_name(ev->name, &v[MEMCPY_KIND], &v[MEMCPY_SRC_KIND], &v[MEMCPY_DST_KIND]);
	v[MEMCPY_SRC_DEVICE] = arg_or(ev, KA_FROM_DEVICE, TRACE_OUT_NULL);
	v[MEMCPY_SRC_CONTEXT] = arg_or(ev, KA_FROM_CONTEXT, TRACE_OUT_NULL);
	v[MEMCPY_DST_DEVICE] = arg_or(ev, KA_TO_DEVICE, TRACE_OUT_NULL);
	v[MEMCPY_DST_CONTEXT] = arg_or(ev, KA_TO_CONTEXT, TRACE_OUT_NULL);
	return trace_out_row(&im->out, OUT_MEMCPY, v);
}

static int put_memset(struct import *im, const struct kineto_event *ev)
{
	int64_t v[MEMSET_COLS];
	const char *open = strchr(ev->name, '('), *close = open ? strchr(open, ')') : NULL;

	gpu_columns(im, ev, v);
	v[MEMSET_VALUE] = 0;	/* not recorded by Kineto; the column is NOT NULL (docs/import.md) */
	v[MEMSET_BYTES] = arg_or(ev, KA_BYTES, 0);
	v[MEMSET_MEM_KIND] = close ? mem_kind(open + 1, (size_t)(close - open - 1)) : TRACE_OUT_NULL;
	return trace_out_row(&im->out, OUT_MEMSET, v);
}

/* Kineto's cuda_sync kinds (syncTypeString) as ENUM_CUPTI_SYNC_TYPE. */
static int64_t sync_type(const char *kind)
{
	static const char *const names[] = { "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(kind, names[i]))
			return (int64_t)i + 1;
	return 0;
}

static int put_sync(struct import *im, const struct kineto_event *ev)
{
	int64_t v[SYNC_COLS];

	gpu_columns(im, ev, v);
	if (!(ev->args & (1u << KA_STREAM)))
		v[SYNC_STREAM] = -1;	/* Kineto puts Stream Sync rows on a made-up tid: not the stream */
	v[SYNC_TYPE] = sync_type(ev->sync_kind ? ev->sync_kind : ev->name);
	v[SYNC_EVENT] = arg_or(ev, KA_WAIT_EVENT, 0);
	return trace_out_row(&im->out, OUT_SYNC, v);
}

/* ---- host activity ---- */

static int put_api(struct import *im, const struct kineto_event *ev, int driver)
{
	int64_t v[API_COLS];

	host_pid_seen(im, ev->pid);
	v[API_START] = rel(im, ev->ts);
	v[API_END] = v[API_START] + (ev->has_dur && ev->dur > 0 ? ev->dur : 0);
	v[API_CLASS] = driver;
	v[API_GLOBAL_TID] = kineto_global_tid(im, ev->pid, tid_of(ev));
	v[API_CORRELATION] = arg_or(ev, KA_CORRELATION, --im->next_fake_corr);
	v[API_NAME] = trace_out_string(&im->out, ev->name);
	v[API_RETURN] = 0;	/* not recorded by Kineto; NOT NULL (docs/import.md) */
	if (v[API_NAME] < 0)
		return -EIO;
	return trace_out_row(&im->out, OUT_API, v);
}

static void step_seen(struct import *im, int64_t start, int64_t end)
{
	if (!(im->nsteps & (im->nsteps - 1)) || !im->nsteps)
		im->steps = xrealloc(im->steps, (im->nsteps ? 2 * im->nsteps : 16) * sizeof(*im->steps));
	im->steps[im->nsteps++] = (struct step){ start, end };
}

static int put_range(struct import *im, const struct kineto_event *ev)
{
	int64_t v[NVTX_COLS];

	host_pid_seen(im, ev->pid);
	v[NVTX_START] = rel(im, ev->ts);
	v[NVTX_END] = v[NVTX_START] + (ev->has_dur && ev->dur > 0 ? ev->dur : 0);
	v[NVTX_TYPE] = 59;	/* NvtxPushPopRange */
	v[NVTX_GLOBAL_TID] = kineto_global_tid(im, ev->pid, tid_of(ev));
	v[NVTX_TEXT_ID] = trace_out_string(&im->out, ev->name);
	v[NVTX_DOMAIN] = 0;
	if (v[NVTX_TEXT_ID] < 0)
		return -EIO;
	if (!strncmp(ev->name, "ProfilerStep#", 13))
		step_seen(im, v[NVTX_START], v[NVTX_END]);
	return trace_out_row(&im->out, OUT_NVTX, v);
}

/* process_name and thread_name: kept for PROCESSES and ThreadNames, written at the end. */
static int put_metadata(struct import *im, const struct kineto_event *ev)
{
	if (!ev->arg_name || !ev->has_pid)
		return 0;
	if (!strcmp(ev->name, "process_name")) {
		char *key = xasprintf("%" PRId64 "\t%s", ev->pid, ev->arg_name);

		strtab_get(&im->process_names, key, NULL);
		free(key);
	} else if (!strcmp(ev->name, "thread_name") && ev->has_tid) {
		struct thread *t = thread_get(im, ev->pid, ev->tid);
		int64_t id = trace_out_string(&im->out, ev->arg_name);

		if (id < 0)
			return -EIO;
		t->name_id = id;
	}
	return 0;
}

/* The recording window's end: Kineto's "Record Window End" instant, or its "Trace" span. */
static void window_seen(struct import *im, const struct kineto_event *ev)
{
	int64_t end = ev->ts + (ev->has_dur ? ev->dur : 0);

	if (ev->ph == 'i' && !strcmp(ev->name, "Record Window End")) {
		im->window_end = end;
		im->have_window = 1;
	} else if (ev->ph == 'X' && !strcmp(ev->cat, "Trace") && !im->have_window) {
		im->window_end = end;
		im->have_window = 1;
	}
}

int kineto_on_event(void *arg, const struct kineto_event *ev, const struct kineto_header *hdr)
{
	struct import *im = arg;
	enum kind kind;
	int ret = 0;

	(void)hdr;
	if (ev->ph == 'M') {
		im->kineto_events++;
		return put_metadata(im, ev);
	}
	if (ev->has_ts && (ev->ph == 'i' || !strcmp(ev->cat, "Trace")))
		window_seen(im, ev);
	kind = classify(im, ev->cat);
	if (kind == KIND_FOREIGN) {
		im->foreign_events++;
		count_skipped(im, ev->cat[0] ? ev->cat : ev->ph == 'i' ? "instant events" : "(no category)");
		return 0;
	}
	if (kind == KIND_KINETO_OTHER || ev->ph != 'X') {
		count_skipped(im, ev->cat);
		return 0;
	}
	/* A time that is not one: unparseable or beyond int64 ns, a negative ts (Kineto's count from
	 * baseTimeNanoseconds or the epoch), a negative dur or one over a day. Stored, it would read as a
	 * real event (a 2.8 million s span, a 1e30 us kernel as 0 ns). */
	if (ev->bad_time || (ev->has_ts && ev->ts < 0) ||
	    (ev->has_dur && (ev->dur < 0 || ev->dur > KINETO_DUR_MAX_NS))) {
		im->out_of_range++;
		return 0;
	}
	if (!ev->has_ts) {
		im->untimed++;
		return 0;
	}
	if (kind == KIND_RUNTIME || kind == KIND_DRIVER || kind == KIND_RANGE) {
		if (!ev->has_pid) {
			im->untimed++;
			return 0;
		}
	}
	switch (kind) {
	case KIND_KERNEL:
		ret = put_kernel(im, ev);
		break;
	case KIND_MEMCPY:
		ret = put_memcpy(im, ev);
		break;
	case KIND_MEMSET:
		ret = put_memset(im, ev);
		break;
	case KIND_SYNC:
		ret = put_sync(im, ev);
		break;
	case KIND_RUNTIME:
	case KIND_DRIVER:
		ret = put_api(im, ev, kind == KIND_DRIVER);
		break;
	case KIND_RANGE:
		ret = put_range(im, ev);
		break;
	default:
		break;
	}
	return ret;
}
