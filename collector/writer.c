/*
 * The trace writer: prepared inserts of the activity rows, string interning, the streams seen, the
 * capture windows and --max-size, periodic commits (see writer.h). Runs on the collector's writer
 * thread only. The file itself (creation, schema, statements, metadata) is writer-file.c's; the
 * tables written at the end are writer-finish.c's.
 *
 * Size matters here: a launch-bound program records a kernel row and an API row per launch, and we
 * aim at about 100 bytes on disk for both (the API table's correlationId is its primary key, so the
 * kernel -> launch join needs no index). Timestamps are stored relative
 * to the trace origin (small varints), optional columns stay NULL (zero bytes), and names are
 * StringIds ids.
 */
#define _GNU_SOURCE
#include "collector/writer.h"
#include "collector/writer-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "collector/sample-rows.h"
#include "collector/hash.h"
#include "collector/names.h"
#include "collector/threads.h"
#include "collector/capture-windows.h"

struct writer *writer_new(const struct writer_options *options)
{
	struct writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->options = *options;
	w->pattern = strdup(options->path ? options->path : "");
	if (!w->pattern) {
		free(w);
		return NULL;
	}
	w->options.path = w->pattern;
	if (!w->options.time_origin_utc_ns) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		w->options.time_origin_utc_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	}
	w->global_pid = (int64_t)options->pid << 24;
	w->next_string_id = 1;
	threads_init(&w->threads, options->pid);
	return w;
}

static inline int writer_ready(struct writer *w)
{
	if (w->failed)
		return -1;
	if (!w->created)
		return writer_create(w);
	return 0;
}

static int writer_gated(struct writer *w, uint64_t start);

static int writer_step(struct writer *w, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return writer_sql_failed(w);
	return 0;
}

static int64_t rel(const struct writer *w, uint64_t ts)
{
	return (int64_t)(ts - w->options.time_origin);
}

static void bind_gpu_times(const struct writer *w, sqlite3_stmt *st, uint64_t start, uint64_t end)
{
	sqlite3_bind_int64(st, 1, rel(w, start));
	sqlite3_bind_int64(st, 2, rel(w, end));
}

/*
 * The seven columns every GPU-event table starts with (start, end, deviceId, contextId, streamId,
 * correlationId, globalPid), bound in that order; the caller binds from column 8 on.
 */
static void bind_gpu_event(const struct writer *w, sqlite3_stmt *st, uint64_t start, uint64_t end,
			   int64_t device_id, uint32_t context_id, uint32_t stream_id,
			   uint32_t correlation_id)
{
	sqlite3_bind_int64(st, 1, rel(w, start));
	sqlite3_bind_int64(st, 2, rel(w, end));
	sqlite3_bind_int64(st, 3, device_id);
	sqlite3_bind_int64(st, 4, context_id);
	sqlite3_bind_int64(st, 5, stream_id);
	sqlite3_bind_int64(st, 6, correlation_id);
	sqlite3_bind_int64(st, 7, w->global_pid);
}

static void bind_optional_id(sqlite3_stmt *st, int col, uint32_t id)
{
	if (id == ROW_NO_ID)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, id);
}

static void bind_nonzero(sqlite3_stmt *st, int col, uint64_t v)
{
	if (v == 0)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, (int64_t)v);
}

/* The entry of (context, stream), added if new; NULL when out of memory. */
static struct stream_info *writer_stream_info(struct writer *w, uint32_t context_id,
					      uint32_t stream_id)
{
	uint64_t key = (uint64_t)context_id << 32 | stream_id;
	uint64_t *found = u64map_get(&w->stream_index, key);
	struct stream_info *stream;

	if (found)
		return &w->streams[*found - 1];
	if (w->nstreams == w->streams_capacity) {
		size_t cap = w->streams_capacity ? w->streams_capacity * 2 : 16;
		struct stream_info *grown = realloc(w->streams, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		w->streams = grown;
		w->streams_capacity = cap;
	}
	if (u64map_put(&w->stream_index, key, w->nstreams + 1) < 0)
		return NULL;
	stream = &w->streams[w->nstreams++];
	memset(stream, 0, sizeof(*stream));
	stream->context_id = context_id;
	stream->stream_id = stream_id;
	stream->device_id = ROW_NO_ID;
	return stream;
}

/* A GPU row ran on (context, stream): TARGET_INFO_CUDA_STREAM gets a row for every such stream. */
static void writer_see_stream(struct writer *w, uint32_t device_id, uint32_t context_id,
			      uint32_t stream_id)
{
	uint64_t key = (uint64_t)context_id << 32 | stream_id;
	struct stream_info *stream;

	/* Most rows run on the stream of the row before: one comparison. */
	if (w->has_last_stream && key == w->last_stream)
		return;
	stream = writer_stream_info(w, context_id, stream_id);
	if (!stream)
		return;	/* out of memory only costs the stream's row */
	if (stream->device_id == ROW_NO_ID)
		stream->device_id = device_id;
	w->last_stream = key;
	w->has_last_stream = 1;
}

int writer_intern(struct writer *w, const char *s, size_t len, int64_t *id)
{
	sqlite3_stmt *st;
	int64_t found;

	if (writer_ready(w) < 0)
		return -1;
	found = strmap_get(&w->strings, s, len);
	if (found >= 0) {
		*id = found;
		return 0;
	}
	st = w->stmt[ST_STRING];
	sqlite3_bind_int64(st, 1, w->next_string_id);
	sqlite3_bind_text(st, 2, s, (int)len, SQLITE_STATIC);
	if (writer_step(w, st) < 0)
		return -1;
	if (strmap_put(&w->strings, s, len, w->next_string_id) < 0) {
		writer_fail(w, "cannot write trace '%s': out of memory", w->path);
		return -1;
	}
	*id = w->next_string_id++;
	return 0;
}

static int writer_intern_str(struct writer *w, const char *s, int64_t *id)
{
	return writer_intern(w, s, strlen(s), id);
}

/* The three name ids of a kernel; demangling happens once per distinct name. */
static int writer_kernel_names(struct writer *w, const char *mangled, struct kernel_names **out)
{
	size_t len = strlen(mangled);
	int64_t index = strmap_get(&w->kernel_name_index, mangled, len);
	struct kernel_names names;
	char *demangled;
	const char *short_name;
	size_t short_len;
	int rc;

	if (index >= 0) {
		*out = &w->kernel_names[index];
		return 0;
	}
	demangled = name_demangle(mangled);
	short_name = name_short(demangled ? demangled : mangled, &short_len);
	rc = writer_intern(w, mangled, len, &names.mangled);
	if (rc == 0)
		rc = demangled ? writer_intern_str(w, demangled, &names.demangled)
			       : (names.demangled = names.mangled, 0);
	if (rc == 0)
		rc = writer_intern(w, short_name, short_len, &names.short_name);
	free(demangled);
	if (rc < 0)
		return -1;
	if (w->nkernel_names == w->kernel_names_capacity) {
		size_t cap = w->kernel_names_capacity ? w->kernel_names_capacity * 2 : 64;
		struct kernel_names *grown = realloc(w->kernel_names, cap * sizeof(*grown));

		if (!grown)
			goto out_of_memory;
		w->kernel_names = grown;
		w->kernel_names_capacity = cap;
	}
	if (strmap_put(&w->kernel_name_index, mangled, len, (int64_t)w->nkernel_names) < 0)
		goto out_of_memory;
	w->kernel_names[w->nkernel_names] = names;
	*out = &w->kernel_names[w->nkernel_names++];
	return 0;

out_of_memory:
	writer_fail(w, "cannot write trace '%s': out of memory", w->path);
	return -1;
}

int writer_kernel(struct writer *w, const struct kernel_row *r)
{
	sqlite3_stmt *st;
	struct kernel_names *names;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0 ||
	    writer_kernel_names(w, r->name ? r->name : "<unknown>", &names) < 0)
		return -1;
	st = w->stmt[ST_KERNEL];
	bind_gpu_event(w, st, r->start, r->end, r->device_id, r->context_id, r->stream_id,
		       r->correlation_id);
	sqlite3_bind_int64(st, 8, names->demangled);
	sqlite3_bind_int64(st, 9, names->short_name);
	sqlite3_bind_int64(st, 10, names->mangled);
	sqlite3_bind_int(st, 11, r->launch_type);
	sqlite3_bind_int(st, 12, r->cache_config);
	sqlite3_bind_int64(st, 13, r->registers_per_thread);
	sqlite3_bind_int(st, 14, r->grid_x);
	sqlite3_bind_int(st, 15, r->grid_y);
	sqlite3_bind_int(st, 16, r->grid_z);
	sqlite3_bind_int(st, 17, r->block_x);
	sqlite3_bind_int(st, 18, r->block_y);
	sqlite3_bind_int(st, 19, r->block_z);
	sqlite3_bind_int(st, 20, r->static_shared);
	sqlite3_bind_int(st, 21, r->dynamic_shared);
	sqlite3_bind_int64(st, 22, r->local_per_thread);
	sqlite3_bind_int64(st, 23, (int64_t)r->local_total);
	sqlite3_bind_int64(st, 24, r->grid_id);
	sqlite3_bind_int64(st, 25, r->shared_executed);
	bind_nonzero(st, 26, r->graph_node_id);
	sqlite3_bind_int(st, 27, r->shared_mem_limit_config);
	bind_nonzero(st, 28, r->graph_id);
	if (writer_step(w, st) < 0)
		return -1;
	writer_see_stream(w, r->device_id, r->context_id, r->stream_id);
	w->counts[COUNT_KERNEL]++;
	return 0;
}

int writer_memcpy(struct writer *w, const struct memcpy_row *r)
{
	sqlite3_stmt *st;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0)
		return -1;
	st = w->stmt[ST_MEMCPY];
	bind_gpu_event(w, st, r->start, r->end, r->device_id, r->context_id, r->stream_id,
		       r->correlation_id);
	sqlite3_bind_int64(st, 8, (int64_t)r->bytes);
	sqlite3_bind_int(st, 9, r->copy_kind);
	sqlite3_bind_int(st, 10, r->src_kind);
	sqlite3_bind_int(st, 11, r->dst_kind);
	bind_optional_id(st, 12, r->src_device);
	bind_optional_id(st, 13, r->src_context);
	bind_optional_id(st, 14, r->dst_device);
	bind_optional_id(st, 15, r->dst_context);
	bind_nonzero(st, 16, r->graph_node_id);
	if (writer_step(w, st) < 0)
		return -1;
	writer_see_stream(w, r->device_id, r->context_id, r->stream_id);
	w->counts[COUNT_MEMCPY]++;
	return 0;
}

int writer_memset(struct writer *w, const struct memset_row *r)
{
	sqlite3_stmt *st;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0)
		return -1;
	st = w->stmt[ST_MEMSET];
	bind_gpu_event(w, st, r->start, r->end, r->device_id, r->context_id, r->stream_id,
		       r->correlation_id);
	sqlite3_bind_int64(st, 8, r->value);
	sqlite3_bind_int64(st, 9, (int64_t)r->bytes);
	bind_nonzero(st, 10, r->graph_node_id);
	sqlite3_bind_int(st, 11, r->mem_kind);
	if (writer_step(w, st) < 0)
		return -1;
	writer_see_stream(w, r->device_id, r->context_id, r->stream_id);
	w->counts[COUNT_MEMSET]++;
	return 0;
}

/* ---- GPU memory ---- */

static void bind_pool(sqlite3_stmt *st, int col, uint64_t v)
{
	if (v == ROW_NO_POOL)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, (int64_t)v);
}

/* Whether one more memory row fits under the bound; counts the ones that do not. */
static int memory_room(struct writer *w)
{
	uint64_t max = w->options.memory_max ? w->options.memory_max : WRITER_MEMORY_MAX;

	if (w->counts[COUNT_MEMORY] + w->counts[COUNT_MEMPOOL] < max)
		return 1;
	w->counts[COUNT_MEMORY_DROPPED]++;
	return 0;
}

int writer_memory(struct writer *w, const struct memory_row *r)
{
	sqlite3_stmt *st;

	if (writer_ready(w) < 0)
		return -1;
	if (!memory_room(w))
		return 0;
	st = w->stmt[ST_MEMORY];
	sqlite3_bind_int64(st, 1, rel(w, r->start));
	sqlite3_bind_int64(st, 2, w->global_pid);
	sqlite3_bind_int64(st, 3, r->device_id);
	sqlite3_bind_int64(st, 4, r->context_id);
	sqlite3_bind_int64(st, 5, (int64_t)r->address);
	sqlite3_bind_int64(st, 6, (int64_t)r->pc);
	sqlite3_bind_int64(st, 7, (int64_t)r->bytes);
	sqlite3_bind_int(st, 8, r->mem_kind);
	sqlite3_bind_int(st, 9, r->operation);
	if (r->name && r->name[0])
		sqlite3_bind_text(st, 10, r->name, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 10);
	sqlite3_bind_int64(st, 11, r->correlation_id);
	bind_optional_id(st, 12, r->stream_id);
	bind_pool(st, 13, r->pool_address);
	bind_pool(st, 14, r->pool_release_threshold);
	bind_pool(st, 15, r->pool_size);
	bind_pool(st, 16, r->pool_utilized);
	bind_pool(st, 17, r->imported_pool_address);
	bind_pool(st, 18, r->imported_pool_pid);
	if (writer_step(w, st) < 0)
		return -1;
	w->counts[COUNT_MEMORY]++;
	return 0;
}

int writer_mempool(struct writer *w, const struct mempool_row *r)
{
	sqlite3_stmt *st;

	if (writer_ready(w) < 0)
		return -1;
	if (!memory_room(w))
		return 0;
	st = w->stmt[ST_MEMPOOL];
	sqlite3_bind_int64(st, 1, rel(w, r->start));
	sqlite3_bind_int64(st, 2, w->global_pid);
	sqlite3_bind_int64(st, 3, r->device_id);
	sqlite3_bind_int64(st, 4, (int64_t)r->address);
	sqlite3_bind_int(st, 5, r->operation);
	sqlite3_bind_int(st, 6, r->pool_type);
	sqlite3_bind_int64(st, 7, r->correlation_id);
	bind_pool(st, 8, r->min_bytes_to_keep);
	bind_pool(st, 9, r->release_threshold);
	bind_pool(st, 10, r->size);
	bind_pool(st, 11, r->utilized);
	if (writer_step(w, st) < 0)
		return -1;
	w->counts[COUNT_MEMPOOL]++;
	return 0;
}

static uint32_t writer_context_device(const struct writer *w, uint32_t context_id)
{
	for (size_t i = 0; i < w->ncontexts; i++)
		if (w->contexts[i].context_id == context_id)
			return w->contexts[i].device_id;
	/* A context created before tracing began: nearly always device 0 in practice. */
	return 0;
}

int writer_sync(struct writer *w, const struct sync_row *r)
{
	uint32_t device_id = writer_context_device(w, r->context_id);
	sqlite3_stmt *st;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0)
		return -1;
	st = w->stmt[ST_SYNC];
	bind_gpu_event(w, st, r->start, r->end, device_id, r->context_id, r->stream_id,
		       r->correlation_id);
	sqlite3_bind_int(st, 8, r->sync_type);
	sqlite3_bind_int64(st, 9, r->event_id);
	if (writer_step(w, st) < 0)
		return -1;
	/* 4294967295: no stream applies (a context or event synchronization). */
	if (r->stream_id != UINT32_MAX && r->context_id != UINT32_MAX)
		writer_see_stream(w, device_id, r->context_id, r->stream_id);
	w->counts[COUNT_SYNC]++;
	return 0;
}

static int64_t global_tid(uint32_t pid, uint32_t tid)
{
	return thread_global_tid(pid, tid);
}

/* StringIds id of an API function name, cached per (class, cbid). */
static int writer_api_name(struct writer *w, int event_class, uint32_t cbid, int64_t *id)
{
	int64_t **names = &w->api_names[event_class & 1];
	size_t *len = &w->api_names_len[event_class & 1];
	const char *name = NULL;
	char fallback[48];

	if (cbid < *len && (*names)[cbid]) {
		*id = (*names)[cbid] - 1;
		return 0;
	}
	if (cbid >= *len) {
		size_t n = cbid + 64;
		int64_t *grown = realloc(*names, n * sizeof(*grown));

		if (!grown) {
			writer_fail(w, "cannot write trace '%s': out of memory", w->path);
			return -1;
		}
		memset(grown + *len, 0, (n - *len) * sizeof(*grown));
		*names = grown;
		*len = n;
	}
	if (w->options.api_name)
		name = w->options.api_name(event_class, cbid);
	if (!name) {
		snprintf(fallback, sizeof(fallback), "%s_cbid_%u", event_class ? "cu" : "cuda", cbid);
		name = fallback;
	}
	if (writer_intern_str(w, name, id) < 0)
		return -1;
	(*names)[cbid] = *id + 1;
	return 0;
}

int writer_api(struct writer *w, const struct api_row *r)
{
	sqlite3_stmt *st;
	int64_t name_id;
	uint32_t pid;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0 || writer_api_name(w, r->event_class, r->cbid, &name_id) < 0)
		return -1;
	pid = r->pid ? r->pid : w->options.pid;
	st = w->stmt[ST_API];
	sqlite3_bind_int64(st, 1, rel(w, r->start));
	sqlite3_bind_int64(st, 2, rel(w, r->end));
	sqlite3_bind_int(st, 3, r->event_class);
	sqlite3_bind_int64(st, 4, global_tid(pid, r->tid));
	sqlite3_bind_int64(st, 5, r->correlation_id);
	sqlite3_bind_int64(st, 6, name_id);
	sqlite3_bind_int64(st, 7, r->return_value);
	if (writer_step(w, st) < 0)
		return -1;
	if (!sqlite3_changes(w->db)) {
		w->counts[COUNT_API_DUPLICATE]++;
		return 0;
	}
	threads_see(&w->threads, pid, r->tid);
	w->counts[COUNT_API]++;
	return 0;
}

int writer_nvtx(struct writer *w, const struct nvtx_row *r)
{
	sqlite3_stmt *st;
	union {
		uint64_t u64;
		int64_t i64;
		double f64;
		uint32_t u32;
		int32_t i32;
		float f32;
	} payload;

	/* Events, not definitions: a domain's name must stay known. */
	if ((r->event_type == NVTX_TYPE_MARK || r->event_type == NVTX_TYPE_PUSHPOP ||
	     r->event_type == NVTX_TYPE_STARTEND) && writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0)
		return -1;
	st = w->stmt[ST_NVTX];
	sqlite3_bind_int64(st, 1, rel(w, r->start));
	if (r->has_end)
		sqlite3_bind_int64(st, 2, rel(w, r->end));
	else
		sqlite3_bind_null(st, 2);
	sqlite3_bind_int(st, 3, r->event_type);
	bind_nonzero(st, 4, r->range_id);
	bind_nonzero(st, 5, r->category);
	if (r->has_color)
		sqlite3_bind_int64(st, 6, r->color);
	else
		sqlite3_bind_null(st, 6);
	if (r->text)
		sqlite3_bind_text(st, 7, r->text, (int)r->text_len, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 7);
	sqlite3_bind_int64(st, 8, global_tid(w->options.pid, r->tid));
	if (r->end_tid)
		sqlite3_bind_int64(st, 9, global_tid(w->options.pid, r->end_tid));
	else
		sqlite3_bind_null(st, 9);
	if (r->text_id >= 0)
		sqlite3_bind_int64(st, 10, r->text_id);
	else
		sqlite3_bind_null(st, 10);
	sqlite3_bind_int64(st, 11, r->domain);
	for (int col = 12; col <= 17; col++)
		sqlite3_bind_null(st, col);
	payload.u64 = r->payload;
	switch (r->payload_type) {
	case 1:
		sqlite3_bind_int64(st, 12, (int64_t)payload.u64);
		break;
	case 2:
		sqlite3_bind_int64(st, 13, payload.i64);
		break;
	case 3:
		sqlite3_bind_double(st, 14, payload.f64);
		break;
	case 4:
		sqlite3_bind_int64(st, 15, payload.u32);
		break;
	case 5:
		sqlite3_bind_int64(st, 16, payload.i32);
		break;
	case 6:
		sqlite3_bind_double(st, 17, payload.f32);
		break;
	}
	if (writer_step(w, st) < 0)
		return -1;
	threads_see(&w->threads, w->options.pid, r->tid);
	if (r->end_tid)
		threads_see(&w->threads, w->options.pid, r->end_tid);
	w->counts[COUNT_NVTX]++;
	return 0;
}

static uint64_t writer_dram_peak(const struct writer *w, uint32_t device_id)
{
	for (size_t i = 0; i < w->ndevices; i++)
		if (w->devices[i].id == device_id)
			return w->devices[i].memory_bandwidth;
	return 0;
}

/* The device's entry in gpu_metrics_seen, added when new (NULL: out of memory). */
static struct gpu_metrics_seen *writer_gpu_metrics_seen(struct writer *w, uint32_t device_id)
{
	struct gpu_metrics_seen *seen;

	for (size_t i = 0; i < w->ngpu_metrics_seen; i++)
		if (w->gpu_metrics_seen[i].device_id == device_id)
			return &w->gpu_metrics_seen[i];
	seen = realloc(w->gpu_metrics_seen, (w->ngpu_metrics_seen + 1) * sizeof(*seen));
	if (!seen)
		return NULL;
	w->gpu_metrics_seen = seen;
	seen += w->ngpu_metrics_seen++;
	seen->device_id = device_id;
	seen->described = 0;
	return seen;
}

/* TARGET_INFO_GPU_METRICS rows for the metrics in mask not described yet for this device. */
static int writer_gpu_metrics_describe(struct writer *w, struct gpu_metrics_seen *seen,
				       unsigned mask)
{
	sqlite3_stmt *st = w->stmt[ST_GPU_METRIC_INFO];
	char type_name[96];

	snprintf(type_name, sizeof(type_name), "GPU %u PM sampling (gpt-trace)", seen->device_id);
	for (int m = 0; m < GPR_NR; m++) {
		if (!(mask & ~seen->described & (1u << m)))
			continue;
		sqlite3_bind_int64(st, 1, GPU_METRICS_TYPE_ID(seen->device_id));
		sqlite3_bind_int64(st, 2, seen->device_id);
		sqlite3_bind_text(st, 3, type_name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, m);
		sqlite3_bind_text(st, 5, gpu_metric_row_names[m], -1, SQLITE_STATIC);
		if (writer_step(w, st) < 0)
			return -1;
		seen->described |= 1u << m;
	}
	return 0;
}

static int writer_gpu_sample(struct writer *w, struct gpu_metrics_seen *seen, uint32_t sampled,
			     uint64_t dram_peak, const struct gpu_metrics_sample *s)
{
	sqlite3_stmt *st = w->stmt[ST_GPT_GPU_METRICS];
	int64_t values[GPR_NR];
	unsigned mask;

	/* Idle samples too, as nsys writes them: SQL that averages rows over a window then averages
	 * time (tests/collector/gpu-metrics-sql.sh). They are counted apart. */
	if (gpu_metrics_idle(s))
		w->gpu_metric_samples_idle++;
	bind_gpu_times(w, st, s->start, s->end);
	sqlite3_bind_int64(st, 3, seen->device_id);
	for (int i = 0; i < GPU_METRICS_GPT_COLUMNS; i++) {
		double v = s->value[gpu_metrics_gpt_columns[i]];

		if (isnan(v) || isinf(v))
			sqlite3_bind_null(st, 4 + i);
		else
			sqlite3_bind_double(st, 4 + i, v);
	}
	if (writer_step(w, st) < 0)
		return -1;
	mask = gpu_metrics_derive(s, sampled, dram_peak, values);
	if ((mask & ~seen->described) && writer_gpu_metrics_describe(w, seen, mask) < 0)
		return -1;
	st = w->stmt[ST_GPU_METRIC];
	for (int m = 0; m < GPR_NR; m++) {
		if (!(mask & (1u << m)))
			continue;
		sqlite3_bind_int64(st, 1, (int64_t)s->start);
		sqlite3_bind_int64(st, 2, rel(w, s->start));
		sqlite3_bind_int64(st, 3, GPU_METRICS_TYPE_ID(seen->device_id));
		sqlite3_bind_int64(st, 4, m);
		sqlite3_bind_int64(st, 5, values[m]);
		if (writer_step(w, st) < 0)
			return -1;
	}
	if (!gpu_metrics_idle(s))
		w->gpu_metric_samples++;
	return 0;
}

int writer_gpu_metrics(struct writer *w, const struct gpu_metrics_batch *batch)
{
	struct gpu_metrics_seen *seen;
	uint64_t dram_peak;

	if (!batch->count || writer_ready(w) < 0)
		return w->failed ? -1 : 0;
	seen = writer_gpu_metrics_seen(w, batch->device_id);
	if (!seen)
		return 0;
	dram_peak = writer_dram_peak(w, batch->device_id);
	for (size_t i = 0; i < batch->count; i++)
		if (writer_gpu_sample(w, seen, batch->sampled, dram_peak, &batch->samples[i]) < 0)
			return -1;
	return 0;
}

void writer_device(struct writer *w, const struct device_row *r)
{
	struct device_row *devices;
	char **names;
	size_t i;

	for (i = 0; i < w->ndevices; i++)
		if (w->devices[i].id == r->id)
			break;
	if (i == w->ndevices) {
		devices = realloc(w->devices, (w->ndevices + 1) * sizeof(*devices));
		if (!devices)
			return;
		w->devices = devices;
		names = realloc(w->device_names, (w->ndevices + 1) * sizeof(*names));
		if (!names)
			return;
		w->device_names = names;
		w->device_names[i] = NULL;
		w->ndevices++;
	}
	w->devices[i] = *r;
	/* CUPTI owns the name only while the record lives. */
	free(w->device_names[i]);
	w->device_names[i] = r->name ? strdup(r->name) : NULL;
	w->devices[i].name = w->device_names[i];
}

void writer_context(struct writer *w, const struct context_row *r)
{
	struct context_row *contexts;

	for (size_t i = 0; i < w->ncontexts; i++)
		if (w->contexts[i].context_id == r->context_id) {
			w->contexts[i] = *r;
			return;
		}
	contexts = realloc(w->contexts, (w->ncontexts + 1) * sizeof(*contexts));
	if (!contexts)
		return;
	w->contexts = contexts;
	w->contexts[w->ncontexts++] = *r;
}

void writer_stream(struct writer *w, const struct stream_row *r)
{
	struct stream_info *stream = writer_stream_info(w, r->context_id, r->stream_id);

	if (!stream)
		return;
	stream->priority = r->priority;
	stream->flag = r->flag;
	stream->described = 1;
}

void writer_thread_name(struct writer *w, uint32_t tid, const char *name, size_t len)
{
	threads_set_nvtx_name(&w->threads, w->options.pid, tid, name, len);
}

void writer_thread_reported_name(struct writer *w, uint32_t tid, const char *name, size_t len,
				 int has_priority, int priority)
{
	threads_set_reported_name(&w->threads, w->options.pid, tid, name, len, has_priority,
				  priority);
}

/*
 * Capture windows (capture-windows.h) and --max-size. The size is the main file's, read from SQLite's own
 * page count (uncommitted pages included) every WRITER_SIZE_CHECK_ROWS kept rows: about 100 KB of
 * rows, the most a trace can pass its limit by, besides the tables written at the end.
 */
#define WRITER_SIZE_CHECK_ROWS 1024

static uint64_t writer_file_bytes(struct writer *w)
{
	sqlite3_stmt *st;
	uint64_t pages = 0;

	if (!w->page_size && sqlite3_prepare_v2(w->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			w->page_size = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (sqlite3_prepare_v2(w->db, "PRAGMA page_count", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			pages = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return pages * (w->page_size ? w->page_size : 4096);
}

/* Whether a row starting at `start` stays out of the trace. */
static int writer_gated(struct writer *w, uint64_t start)
{
	uint64_t bytes;

	if (!w->windows.gated)
		return 0;
	if (!windows_keep(&w->windows, start))
		return 1;
	if (!w->options.max_size || !w->created || w->failed ||
	    ++w->rows_since_size_check < WRITER_SIZE_CHECK_ROWS)
		return 0;
	w->rows_since_size_check = 0;
	bytes = writer_file_bytes(w);
	if (bytes < w->options.max_size)
		return 0;
	windows_fill(&w->windows, start);
	if (w->options.full)
		w->options.full(w->path, bytes, rel(w, start));
	return 1;
}

/* GPT_CAPTURE_WINDOWS, rewritten whenever the windows changed (a handful of rows). */
int writer_put_windows(struct writer *w)
{
	static const char sql[] = "INSERT INTO GPT_CAPTURE_WINDOWS (id, start, end, openedBy, "
				  "closedBy) VALUES (?, ?, ?, ?, ?)";
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	if (!w->windows.changed || !w->created || w->failed)
		return 0;
	if (writer_exec(w, "DELETE FROM GPT_CAPTURE_WINDOWS") < 0)
		return -1;
	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		return writer_sql_failed(w);
	for (size_t i = 0; i < w->windows.count && rc == SQLITE_DONE; i++) {
		const struct capture_window *win = &w->windows.list[i];

		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_int64(st, 2, rel(w, win->start));
		if (win->end == WINDOW_OPEN_END)
			sqlite3_bind_null(st, 3);
		else
			sqlite3_bind_int64(st, 3, rel(w, win->end));
		sqlite3_bind_text(st, 4, win->opened, -1, SQLITE_STATIC);
		if (win->closed[0])
			sqlite3_bind_text(st, 5, win->closed, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 5);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return writer_sql_failed(w);
	w->windows.changed = 0;
	return 0;
}

void writer_window(struct writer *w, enum writer_window_event event, uint64_t at, const char *why)
{
	char value[32];

	switch (event) {
	case WRITER_WINDOW_GATE:
		windows_gate(&w->windows);
		break;
	case WRITER_WINDOW_OPEN:
		if (windows_open(&w->windows, at, why) < 0)
			writer_meta(w, "capture_windows_lost", "1");
		break;
	case WRITER_WINDOW_CLOSE:
		windows_close(&w->windows, at, why);
		break;
	case WRITER_WINDOW_END:
		windows_end(&w->windows, at, why);
		if (!w->windows.gated)
			break;
		/*
		 * A process whose activity all fell outside the windows still leaves a trace saying so
		 * (GPT_META, the windows); one that recorded nothing at all leaves none, as before.
		 */
		if (w->windows.dropped && writer_ready(w) < 0)
			break;
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->windows.dropped);
		writer_meta(w, "capture_records_outside", value);
		break;
	}
}

void writer_count_untimed(struct writer *w)
{
	w->untimed++;
}

int writer_tick(struct writer *w, uint64_t now_ns, uint64_t interval_ns)
{
	if (w->failed || !w->created || now_ns - w->last_commit_ns < interval_ns)
		return 0;
	if (writer_put_windows(w) < 0 || writer_exec(w, "COMMIT; BEGIN") < 0)
		return -1;
	w->last_commit_ns = now_ns;
	return 0;
}

const char *writer_error(const struct writer *w)
{
	return w->failed ? w->error : NULL;
}

const char *writer_path(const struct writer *w)
{
	return w->created ? w->path : NULL;
}

void writer_free(struct writer *w)
{
	if (!w)
		return;
	if (w->db) {
		for (int i = 0; i < ST_COUNT; i++)
			sqlite3_finalize(w->stmt[i]);
		sqlite3_close(w->db);
	}
	strmap_release(&w->strings);
	strmap_release(&w->kernel_name_index);
	free(w->kernel_names);
	free(w->api_names[0]);
	free(w->api_names[1]);
	for (size_t i = 0; i < w->ndevices; i++)
		free(w->device_names[i]);
	free(w->device_names);
	free(w->devices);
	free(w->contexts);
	free(w->gpu_metrics_seen);
	u64map_release(&w->stream_index);
	free(w->streams);
	threads_release(&w->threads);
	windows_release(&w->windows);
	for (size_t i = 0; i < w->nmeta; i++) {
		free(w->meta[i].name);
		free(w->meta[i].value);
	}
	free(w->meta);
	free(w->pattern);
	free(w);
}
