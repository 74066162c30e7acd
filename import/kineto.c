/*
 * Kineto's events into gpt-trace's tables (see kineto.h): one pass over the JSON stream, each event
 * turned into its row as it arrives, so memory holds only the strings, threads and the few facts
 * the end of the import needs (the trace's processes and threads, the ProfilerSteps, what was
 * skipped). What the file does not say is left NULL where the schema allows it, and noted in
 * GPT_META where it does not (docs/import.md lists each case).
 */
#define _GNU_SOURCE /* vasprintf */
#include "import/kineto.h"

#include "common/kernel-name.h"
#include "common/key-index.h"
#include "common/strtab.h"
#include "common/util.h"
#include "import/kineto-json.h"
#include "import/trace-out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define NS_PER_S 1000000000LL
#define TID_BITS 24
#define TID_MASK ((1LL << TID_BITS) - 1)
#define MAX_NOTES 16

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
	{ "cuda_event", KIND_KINETO_OTHER, 0 }, { "python_function", KIND_KINETO_OTHER, 0 },
};

struct thread {
	int64_t pid, tid;
	int64_t name_id;	/* StringIds id of its thread_name, 0: none */
	int used;		/* an imported row is on it */
};

struct step {
	int64_t start, end;
};

struct import {
	const char *path;
	struct trace_out out;
	struct kineto_import_counts *counts;
	char error[512];
	int have_origin;
	int64_t origin;			/* file ns (ts units) of trace time 0 */
	int64_t min_start;		/* the earliest relative time written */
	int have_host_pid;
	int64_t host_pid;
	int64_t host_pids;		/* distinct pids of host events */
	struct key_index pids;
	int64_t unowned_gpu_rows;	/* GPU rows written before the host pid was known */
	struct key_index thread_index;	/* (pid, tid) */
	struct thread *threads;
	struct key_index short_index;	/* kernel name id -> index in short_ids */
	int64_t *short_ids;
	struct strtab process_names;	/* "pid\tname" of process_name events, first one per pid */
	int64_t next_fake_corr;		/* API rows without a correlation id get -1, -2... */
	int64_t kineto_events, legacy_events, foreign_events;
	struct strtab skipped;		/* category names not imported, counted in skipped_count */
	int64_t *skipped_count;
	int64_t untimed, kernels_without_dims;
	struct step *steps;
	size_t nsteps;
	int have_window;
	int64_t window_end;		/* file ns: "Record Window End", or the end of the "Trace" span */
	char *notes[MAX_NOTES];
	int nnotes;
};

static int import_fail(struct import *im, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int import_fail(struct import *im, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!im->error[0]) {
		va_start(ap, fmt);
		vsnprintf(im->error, sizeof(im->error), fmt, ap);
		va_end(ap);
	}
	return ret;
}

static void note(struct import *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct import *im, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (im->nnotes >= MAX_NOTES)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		im->notes[im->nnotes++] = s;
}

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
static int64_t global_tid(struct import *im, int64_t pid, int64_t tid)
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
	v[API_GLOBAL_TID] = global_tid(im, ev->pid, tid_of(ev));
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
	v[NVTX_GLOBAL_TID] = global_tid(im, ev->pid, tid_of(ev));
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

static int on_event(void *arg, const struct kineto_event *ev, const struct kineto_header *hdr)
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

/* ---- the end of the import ---- */

/* An event earlier than the first one's second came later in the file: move time 0 back to it. */
static int shift_times(struct import *im)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
		"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME",
		"NVTX_EVENTS" };
	int64_t d = ((-im->min_start + NS_PER_S - 1) / NS_PER_S) * NS_PER_S;
	char sql[160];

	if (im->min_start >= 0)
		return 0;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "UPDATE %s SET start = start + %" PRId64 ", end = end + %" PRId64,
			 tables[i], d, d);
		if (trace_out_exec(&im->out, sql) < 0)
			return -EIO;
	}
	for (size_t i = 0; i < im->nsteps; i++) {
		im->steps[i].start += d;
		im->steps[i].end += d;
	}
	im->origin -= d;
	return 0;
}

static int write_owners(struct import *im)
{
	char sql[160];

	if (!im->unowned_gpu_rows || !im->have_host_pid)
		return 0;
	for (int t = 0; t < 4; t++) {
		static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
						      "CUPTI_ACTIVITY_KIND_MEMSET",
						      "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" };

		snprintf(sql, sizeof(sql), "UPDATE %s SET globalPid = %" PRId64 " WHERE globalPid IS NULL", tables[t],
			 im->host_pid << TID_BITS);
		if (trace_out_exec(&im->out, sql) < 0)
			return -EIO;
	}
	return 0;
}

static int write_threads(struct import *im)
{
	for (size_t i = 0; i < im->thread_index.count; i++) {
		struct thread *t = &im->threads[i];
		int64_t v[THREAD_COLS];

		if (!t->used)
			continue;
		v[THREAD_GLOBAL_TID] = global_tid(im, t->pid, t->tid);
		v[THREAD_NAME] = t->name_id;
		if (!t->name_id) {
			char name[48];

			snprintf(name, sizeof(name), "thread %" PRId64, t->tid);
			v[THREAD_NAME] = trace_out_string(&im->out, name);
			if (v[THREAD_NAME] < 0)
				return -EIO;
		}
		if (trace_out_row(&im->out, OUT_THREAD, v) < 0)
			return -EIO;
	}
	return 0;
}

static int write_processes(struct import *im)
{
	int64_t v[PROCESS_COLS] = { im->host_pid << TID_BITS, im->host_pid };
	const char *name = NULL;

	if (!im->have_host_pid)
		return 0;
	for (size_t i = 0; i < im->process_names.count && !name; i++) {
		const char *entry = strtab_at(&im->process_names, i), *tab = strchr(entry, '\t');

		if (tab && strtoll(entry, NULL, 10) == im->host_pid)
			name = tab + 1;
	}
	return trace_out_process(&im->out, v, name);
}

static int write_devices(struct import *im, const struct kineto_header *hdr)
{
	static const int cols[GPU_COLS] = {
		[GPU_ID] = KD_ID, [GPU_TOTAL_MEM] = KD_TOTAL_MEM, [GPU_SMS] = KD_NUM_SMS, [GPU_MAJOR] = KD_MAJOR,
		[GPU_MINOR] = KD_MINOR, [GPU_THREADS_PER_BLOCK] = KD_THREADS_PER_BLOCK,
		[GPU_REGS_PER_BLOCK] = KD_REGS_PER_BLOCK, [GPU_REGS_PER_SM] = KD_REGS_PER_SM,
		[GPU_WARP_SIZE] = KD_WARP_SIZE, [GPU_SHMEM_PER_BLOCK] = KD_SHMEM_PER_BLOCK,
		[GPU_SHMEM_OPTIN] = KD_SHMEM_OPTIN, [GPU_SHMEM_PER_SM] = KD_SHMEM_PER_SM, [GPU_WARPS_PER_SM] = -1,
	};

	for (size_t i = 0; i < hdr->ndevices; i++) {
		const struct kineto_device *d = &hdr->devices[i];
		int64_t v[GPU_COLS];

		for (int c = 0; c < GPU_COLS; c++)
			v[c] = cols[c] >= 0 && d->have & (1u << cols[c]) ? d->v[cols[c]] : TRACE_OUT_NULL;
		if (!(d->have & (1u << KD_ID)))
			v[GPU_ID] = (int64_t)i;
		/* warps per SM: the threads an SM holds, in warps */
		if (d->have & (1u << KD_THREADS_PER_SM) && d->have & (1u << KD_WARP_SIZE) && d->v[KD_WARP_SIZE] > 0)
			v[GPU_WARPS_PER_SM] = d->v[KD_THREADS_PER_SM] / d->v[KD_WARP_SIZE];
		if (trace_out_gpu(&im->out, v, d->name) < 0)
			return -EIO;
	}
	return 0;
}

static int64_t median_step(const struct import *im, size_t n)
{
	int64_t *d = xmalloc((n ? n : 1) * sizeof(*d)), m;

	for (size_t i = 0; i < n; i++)
		d[i] = im->steps[i].end - im->steps[i].start;
	for (size_t i = 1; i < n; i++)	/* few steps: insertion sort */
		for (size_t j = i; j > 0 && d[j - 1] > d[j]; j--) {
			int64_t t = d[j];

			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	m = n ? d[n / 2] : 0;
	free(d);
	return m;
}

/* The notes on what the file lacks, each said once. */
static int count_query(struct import *im, const char *sql, int64_t *n)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(im->out.db, sql, -1, &st, NULL);

	*n = 0;
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : -EIO;
}

static void write_notes_of_data(struct import *im, const struct kineto_header *hdr)
{
	int64_t unlaunched = 0, kernels = im->out.rows[OUT_KERNEL];

	note(im, "only the profiler's recording window is in the trace (torch.profiler records the active steps "
	     "of its schedule): start-up and warm-up before it are not");
	if (!hdr->has_distributed)
		note(im, "no distributedInfo: torch.distributed was not initialised when the profiler ran, so the "
		     "trace has no rank identity");
	if (!kernels && !im->out.rows[OUT_MEMCPY] && !im->out.rows[OUT_MEMSET])
		note(im, "no CUDA GPU activity in the trace (no kernel, gpu_memcpy or gpu_memset events: a CPU-only "
		     "profile, or another device's, whose categories are in import_skipped)");
	if (kernels && !im->out.rows[OUT_API])
		note(im, "no cuda_runtime events: kernels have no launch calls, so idle time cannot be attributed "
		     "to what the host did");
	else if (kernels && count_query(im, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS "
				       "(SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = "
				       "k.correlationId)", &unlaunched) == 0 && unlaunched)
		note(im, "%" PRId64 " of %" PRId64 " kernels have no launch call in the trace (launched before the "
		     "window, or from a thread the profiler did not record)", unlaunched, kernels);
	if (im->kernels_without_dims)
		note(im, "%" PRId64 " kernels have no grid or block in their args: stored as 0", im->kernels_without_dims);
	if (im->out.changes_ignored)
		note(im, "%" PRId64 " runtime calls repeat an earlier call's correlation id: the first is kept",
		     im->out.changes_ignored);
	if (im->untimed)
		note(im, "%" PRId64 " events have no timestamp (or no pid) and were not imported", im->untimed);
	if (im->host_pids > 1)
		note(im, "host events of %" PRId64 " processes: GPU work is attributed to pid %" PRId64
		     " (the first)", im->host_pids, im->host_pid);
}

/* The last ProfilerStep when the recording stopped inside it: shorter than the others, not a slow or
 * fast step of the program. */
static void write_note_of_last_step(struct import *im)
{
	const struct step *last;
	int64_t median;

	if (im->nsteps < 2 || !im->have_window)
		return;
	last = &im->steps[im->nsteps - 1];
	for (size_t i = 0; i + 1 < im->nsteps; i++)
		if (im->steps[i].start > last->start)
			last = &im->steps[i];
	median = median_step(im, im->nsteps);
	if (last->end >= im->window_end - im->origin - 1000 && last->end - last->start < median / 2)
		note(im, "the last ProfilerStep (%.3f ms, median %.3f ms) ends with the recording window: it was cut "
		     "short", (double)(last->end - last->start) / 1e6, (double)median / 1e6);
}

static int write_skipped(struct import *im)
{
	size_t len = 0;
	char *s = NULL;
	int ret;

	for (size_t i = 0; i < im->skipped.count; i++) {
		char *item = xasprintf("%s%s %" PRId64, len ? ", " : "", strtab_at(&im->skipped, i),
				       im->skipped_count[i]);
		size_t n = strlen(item);

		s = xrealloc(s, len + n + 1);
		memcpy(s + len, item, n + 1);
		len += n;
		free(item);
	}
	ret = trace_out_meta(&im->out, "import_skipped", s ? s : "none");
	free(s);
	return ret;
}

static void utc_text(int64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / NS_PER_S);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Where the trace came from and what it is, as GPT_META facts (docs/schema.md, docs/import.md). */
static int write_meta(struct import *im, const struct kineto_header *hdr)
{
	struct trace_out *o = &im->out;
	int64_t origin = (hdr->has_base ? hdr->base_ns : 0) + im->origin;
	char format[96], when[40];
	struct stat st;
	int ret = 0;

	snprintf(format, sizeof(format), "kineto%s schemaVersion %s", im->legacy_events ? " (legacy categories)" : "",
		 hdr->has_schema_version ? "" : "absent");
	if (hdr->has_schema_version)
		snprintf(format, sizeof(format), "kineto%s schemaVersion %" PRId64,
			 im->legacy_events ? " (legacy categories)" : "", hdr->schema_version);
	utc_text(origin, when, sizeof(when));
	ret |= trace_out_meta(o, "gpt_schema_version", "2");
	ret |= trace_out_meta(o, "tool_version", GPT_TRACE_VERSION);
	ret |= trace_out_meta(o, "import_source", im->path);
	ret |= trace_out_meta(o, "import_format", format);
	if (stat(im->path, &st) == 0) {
		ret |= trace_out_meta_int(o, "import_source_size", (int64_t)st.st_size);
		ret |= trace_out_meta_int(o, "import_source_mtime_ns",
					  (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec);
	}
	ret |= trace_out_meta(o, "time_clock", hdr->has_base ? "CLOCK_REALTIME (Kineto: baseTimeNanoseconds + ts)" :
				  "CLOCK_REALTIME (Kineto: ts in epoch microseconds)");
	ret |= trace_out_meta_int(o, "time_origin_ns", origin);
	ret |= trace_out_meta_int(o, "time_origin_utc_ns", origin);
	ret |= trace_out_meta(o, "start_time_utc", when);
	if (im->have_host_pid)
		ret |= trace_out_meta_int(o, "pid", im->host_pid);
	if (hdr->has_rank) {
		ret |= trace_out_meta_int(o, "rank", hdr->rank);
		ret |= trace_out_meta(o, "rank_launcher", "torch.distributed (Kineto distributedInfo)");
	}
	if (hdr->has_world_size)
		ret |= trace_out_meta_int(o, "world_size", hdr->world_size);
	if (hdr->backend)
		ret |= trace_out_meta(o, "distributed_backend", hdr->backend);
	if (hdr->nccl_version)
		ret |= trace_out_meta(o, "nccl_version", hdr->nccl_version);
	ret |= trace_out_meta_int(o, "kernel_records", o->rows[OUT_KERNEL]);
	ret |= trace_out_meta_int(o, "memcpy_records", o->rows[OUT_MEMCPY]);
	ret |= trace_out_meta_int(o, "memset_records", o->rows[OUT_MEMSET]);
	ret |= trace_out_meta_int(o, "sync_records", o->rows[OUT_SYNC]);
	ret |= trace_out_meta_int(o, "api_records", o->rows[OUT_API]);
	ret |= trace_out_meta_int(o, "nvtx_records", o->rows[OUT_NVTX]);
	ret |= write_skipped(im);
	for (int i = 0; i < im->nnotes; i++) {
		char name[32];

		snprintf(name, sizeof(name), "import_note_%02d", i + 1);
		ret |= trace_out_meta(o, name, im->notes[i]);
	}
	ret |= trace_out_meta(o, "trace_complete", "1");
	return ret ? -EIO : 0;
}

static int session_start(struct import *im, const struct kineto_header *hdr)
{
	int64_t origin = (hdr->has_base ? hdr->base_ns : 0) + im->origin;
	char sql[200], when[40];

	utc_text(origin, when, sizeof(when));
	when[strlen(when) - 1] = '\0';
	snprintf(sql, sizeof(sql), "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (%" PRId64 ", '%s', NULL)",
		 origin, when);
	return trace_out_exec(&im->out, sql);
}

/* What makes a file not a Kineto trace, found only once it has been read. */
static int check_kineto(struct import *im, const struct kineto_header *hdr)
{
	if (!hdr->has_trace_events)
		return import_fail(im, -EINVAL, "cannot import '%s': not a PyTorch profiler (Kineto) trace: no "
				   "traceEvents", im->path);
	if (!hdr->events)
		return import_fail(im, -EINVAL, "cannot import '%s': traceEvents is empty (the profiler recorded "
				   "nothing)", im->path);
	if (!im->kineto_events || (!hdr->has_schema_version && !im->legacy_events &&
				   im->foreign_events > im->kineto_events))
		return import_fail(im, -EINVAL, "cannot import '%s': a Chrome trace, but not the PyTorch profiler's "
				   "(Kineto): none of its %" PRId64 " events has a Kineto category (kernel, "
				   "cuda_runtime, cpu_op...)", im->path, hdr->events);
	return 0;
}

static int finish(struct import *im, const struct kineto_header *hdr)
{
	int ret = check_kineto(im, hdr);

	if (!ret && !im->have_origin)
		return import_fail(im, -EINVAL, "cannot import '%s': no event has a timestamp", im->path);
	if (!ret)
		ret = shift_times(im);
	if (!ret)
		ret = write_owners(im);
	if (!ret)
		ret = write_threads(im);
	if (!ret)
		ret = write_processes(im);
	if (!ret)
		ret = write_devices(im, hdr);
	if (!ret)
		ret = session_start(im, hdr);
	if (!ret) {
		write_notes_of_data(im, hdr);
		write_note_of_last_step(im);
		ret = write_meta(im, hdr);
	}
	return ret;
}

static void import_release(struct import *im)
{
	key_index_release(&im->pids);
	key_index_release(&im->thread_index);
	key_index_release(&im->short_index);
	free(im->short_ids);
	free(im->threads);
	strtab_release(&im->process_names);
	strtab_release(&im->skipped);
	free(im->skipped_count);
	free(im->steps);
	for (int i = 0; i < im->nnotes; i++)
		free(im->notes[i]);
}

static void fill_counts(const struct import *im, const struct kineto_header *hdr, struct kineto_import_counts *c)
{
	c->events = hdr->events;
	c->bytes = hdr->bytes;
	c->kernels = im->out.rows[OUT_KERNEL];
	c->copies = im->out.rows[OUT_MEMCPY];
	c->sets = im->out.rows[OUT_MEMSET];
	c->syncs = im->out.rows[OUT_SYNC];
	c->api_calls = im->out.rows[OUT_API];
	c->ranges = im->out.rows[OUT_NVTX];
	c->steps = (int64_t)im->nsteps;
	c->notes = im->nnotes;
}

static int is_sqlite(const char *path)
{
	char head[16] = "";
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	if (fread(head, 1, sizeof(head), f) != sizeof(head))
		head[0] = '\0';
	fclose(f);
	return !memcmp(head, "SQLite format 3", 16);
}

int kineto_import(const char *json_path, const char *out_path, struct kineto_import_counts *counts, char *err,
		  size_t errlen)
{
	struct import im = { .path = json_path, .counts = counts };
	struct kineto_header hdr;
	int ret;

	if (counts)
		memset(counts, 0, sizeof(*counts));
	if (is_sqlite(json_path)) {
		snprintf(err, errlen, "cannot import '%s': it is a SQLite file already (a trace every command reads "
			 "as it is)", json_path);
		return -EINVAL;
	}
	ret = trace_out_create(&im.out, out_path);
	if (ret < 0) {
		snprintf(err, errlen, "%s", im.out.error);
		import_release(&im);
		return ret;
	}
	ret = kineto_read(json_path, on_event, &im, &hdr, err, errlen);
	if (ret < 0 && (im.error[0] || im.out.error[0]))
		snprintf(err, errlen, "%s", im.error[0] ? im.error : im.out.error);
	if (!ret)
		ret = finish(&im, &hdr);
	if (!ret)
		ret = trace_out_commit(&im.out);
	if (ret < 0 && (im.error[0] || im.out.error[0]))
		snprintf(err, errlen, "%s", im.error[0] ? im.error : im.out.error);
	if (!ret && counts)
		fill_counts(&im, &hdr, counts);
	trace_out_abort(&im.out);
	kineto_header_release(&hdr);
	import_release(&im);
	return ret;
}
