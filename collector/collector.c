/*
 * The collector's queue and writer thread (see collector.h).
 *
 * Producers (CUPTI's buffer callbacks, the NVTX handlers, the library's control code) append items
 * to one list under a mutex; items are rare (one per 8 MiB buffer, one per few thousand NVTX events),
 * so the mutex is not contended. The writer thread takes the whole list at once, decodes it outside
 * the lock, and commits on a timer. Emptied CUPTI buffers are zeroed by the writer and kept in a
 * small pool, so that the program's threads neither zero nor page-fault fresh buffers.
 *
 * Replayed launches (hardware metrics, replay.h): the library queues the correlation id of each
 * launch it profiles with kernel replay before the launch reaches the GPU, so the note is always
 * ahead of the buffer holding the launch's kernel record, and queues its times when the launch call
 * returns; the writer makes one timed kernel row per such launch.
 */
#define _GNU_SOURCE
#include "collector/collector.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/decode.h"
#include "collector/nvtx-rows.h"
#include "collector/replay.h"
#include "collector/writer.h"

#define BUFFER_POOL_MAX 4
#define BUFFER_POOL_PREFILL 2

enum item_kind {
	ITEM_BUFFER,
	ITEM_NVTX,
	ITEM_META,
	ITEM_REPLAYED,
	ITEM_REPLAY_TIME,
	ITEM_SYNC,
	ITEM_WINDOW,
	ITEM_GPU_METRICS,
};

struct item {
	struct item *next;
	enum item_kind kind;
	union {
		struct {
			uint8_t *data;
			size_t size, valid;
		} buffer;
		struct collector_nvtx_batch *nvtx;
		struct {
			char *name, *value;
		} meta;
		struct {
			uint32_t correlation_id;
			uint64_t start, end;	/* ITEM_REPLAY_TIME */
		} replay;
		struct sync_row sync;
		struct {
			enum writer_window_event event;
			uint64_t at;
			char why[32];
		} window;
		struct gpu_metrics_batch *gpu_metrics;
	};
};

struct collector {
	struct collector_options options;
	char *path;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct item *head, *tail;
	int stopping;
	pthread_t thread;

	uint8_t *pool[BUFFER_POOL_MAX];
	size_t npool;

	/* Writer thread only (and collector_stop() after the join). */
	struct writer *writer;
	struct nvtx_rows nvtx;
	uint64_t nvtx_dropped;
	struct replay_set replayed;
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void collector_push(struct collector *c, struct item *item)
{
	item->next = NULL;
	pthread_mutex_lock(&c->lock);
	if (c->tail)
		c->tail->next = item;
	else
		c->head = item;
	c->tail = item;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
}

static void nvtx_batch_free(struct collector_nvtx_batch *batch)
{
	if (!batch)
		return;
	free(batch->events);
	free(batch->text);
	free(batch);
}

static void item_free(struct item *item)
{
	switch (item->kind) {
	case ITEM_BUFFER:
		free(item->buffer.data);
		break;
	case ITEM_NVTX:
		nvtx_batch_free(item->nvtx);
		break;
	case ITEM_META:
		free(item->meta.name);
		free(item->meta.value);
		break;
	case ITEM_GPU_METRICS:
		free(item->gpu_metrics);
		break;
	case ITEM_REPLAYED:
	case ITEM_REPLAY_TIME:
	case ITEM_SYNC:
	case ITEM_WINDOW:
		break;
	}
	free(item);
}

static void collector_decode_buffer(struct collector *c, uint8_t *data, size_t valid)
{
	CUpti_Activity *record = NULL;
	struct trace_row row;

	if (!c->options.next_record)
		return;
	while (c->options.next_record(data, valid, &record) == CUPTI_SUCCESS) {
		switch (decode_record(record, &row)) {
		case ROW_KERNEL:
			if (c->replayed.count && replay_kernel(&c->replayed, c->writer, &row.kernel))
				break;
			if (!row.kernel.start && !row.kernel.end)
				writer_count_untimed(c->writer);
			else
				writer_kernel(c->writer, &row.kernel);
			break;
		case ROW_MEMCPY:
			if (!row.memcpy.start && !row.memcpy.end)
				writer_count_untimed(c->writer);
			else
				writer_memcpy(c->writer, &row.memcpy);
			break;
		case ROW_MEMSET:
			if (!row.memset.start && !row.memset.end)
				writer_count_untimed(c->writer);
			else
				writer_memset(c->writer, &row.memset);
			break;
		case ROW_SYNC:
			writer_sync(c->writer, &row.sync);
			break;
		case ROW_MEMORY:
			writer_memory(c->writer, &row.memory);
			break;
		case ROW_MEMPOOL:
			writer_mempool(c->writer, &row.mempool);
			break;
		case ROW_API:
			writer_api(c->writer, &row.api);
			break;
		case ROW_DEVICE:
			writer_device(c->writer, &row.device);
			break;
		case ROW_CONTEXT:
			writer_context(c->writer, &row.context);
			break;
		case ROW_STREAM:
			writer_stream(c->writer, &row.stream);
			break;
		case ROW_NONE:
			break;
		}
	}
}

/*
 * Zero an emptied buffer and keep it for the next request. All of it, not only the valid part:
 * CUPTI was told that our buffers come zeroed and may have left bytes past the last record.
 */
static void collector_recycle(struct collector *c, uint8_t *data, size_t size)
{
	if (size != c->options.buffer_size) {
		free(data);
		return;
	}
	memset(data, 0, size);
	pthread_mutex_lock(&c->lock);
	if (c->npool < BUFFER_POOL_MAX) {
		c->pool[c->npool++] = data;
		data = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	free(data);
}

static void collector_process(struct collector *c, struct item *item)
{
	switch (item->kind) {
	case ITEM_BUFFER:
		if (!c->options.discard)
			collector_decode_buffer(c, item->buffer.data, item->buffer.valid);
		collector_recycle(c, item->buffer.data, item->buffer.size);
		item->buffer.data = NULL;
		break;
	case ITEM_NVTX:
		c->nvtx_dropped += item->nvtx->dropped;
		if (!c->options.discard)
			nvtx_rows_add(&c->nvtx, c->writer, item->nvtx);
		break;
	case ITEM_META:
		writer_meta(c->writer, item->meta.name, item->meta.value);
		break;
	case ITEM_REPLAYED:
		replay_note(&c->replayed, item->replay.correlation_id);
		break;
	case ITEM_REPLAY_TIME:
		replay_time(&c->replayed, c->writer, item->replay.correlation_id, item->replay.start,
			    item->replay.end);
		break;
	case ITEM_SYNC:
		if (!c->options.discard)
			writer_sync(c->writer, &item->sync);
		break;
	case ITEM_WINDOW:
		writer_window(c->writer, item->window.event, item->window.at, item->window.why);
		break;
	case ITEM_GPU_METRICS:
		if (!c->options.discard)
			writer_gpu_metrics(c->writer, item->gpu_metrics);
		break;
	}
	item_free(item);
}

static uint8_t *buffer_alloc(size_t size)
{
	/* Fresh anonymous memory is zero already; calloc skips the memset for it. */
	return calloc(1, size);
}

/* Fault in a few buffers here, so that the first CUPTI requests do not pay for it. */
static void collector_prefill(struct collector *c)
{
	for (int i = 0; i < BUFFER_POOL_PREFILL; i++) {
		volatile uint8_t *data = buffer_alloc(c->options.buffer_size);

		if (!data)
			return;
		for (size_t off = 0; off < c->options.buffer_size; off += 4096)
			data[off] = 0;
		pthread_mutex_lock(&c->lock);
		if (c->npool < BUFFER_POOL_MAX)
			c->pool[c->npool++] = (uint8_t *)data;
		else
			free((void *)data);
		pthread_mutex_unlock(&c->lock);
	}
}

static void *collector_main(void *arg)
{
	struct collector *c = arg;
	uint64_t interval = (uint64_t)c->options.commit_interval_ms * 1000000ull;
	sigset_t all;

	/* Signals belong to the program's threads (and our SIGINT/SIGTERM handler must not run here). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	collector_prefill(c);

	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct item *list;
		int stop;

		if (!c->head && !c->stopping) {
			struct timespec deadline;
			uint64_t when = monotonic_ns() + interval;

			deadline.tv_sec = (time_t)(when / 1000000000ull);
			deadline.tv_nsec = (long)(when % 1000000000ull);
			pthread_cond_timedwait(&c->wake, &c->lock, &deadline);
		}
		list = c->head;
		c->head = c->tail = NULL;
		stop = c->stopping;
		pthread_mutex_unlock(&c->lock);

		while (list) {
			struct item *next = list->next;

			collector_process(c, list);
			list = next;
		}
		writer_tick(c->writer, monotonic_ns(), interval);

		pthread_mutex_lock(&c->lock);
		if (stop && !c->head)
			break;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int collector_start(const struct collector_options *options, struct collector **out)
{
	struct writer_options wopt = { 0 };
	pthread_condattr_t cattr;
	struct collector *c;
	int rc;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->options = *options;
	if (!c->options.commit_interval_ms)
		c->options.commit_interval_ms = 1000;
	if (!c->options.buffer_size)
		c->options.buffer_size = COLLECTOR_BUFFER_SIZE;
	c->path = strdup(options->path ? options->path : "");
	if (!c->path) {
		rc = -ENOMEM;
		goto out_free;
	}
	c->options.path = c->path;

	wopt.path = c->path;
	wopt.force = options->force;
	wopt.time_origin = options->time_origin;
	wopt.time_origin_utc_ns = options->time_origin_utc_ns;
	wopt.pid = options->pid;
	wopt.api_name = options->api_name;
	wopt.report = options->report;
	wopt.created = options->created;
	wopt.wal = options->wal;
	wopt.max_size = options->max_size;
	wopt.full = options->full;
	c->writer = writer_new(&wopt);
	if (!c->writer) {
		rc = -ENOMEM;
		goto out_free;
	}

	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wake, &cattr);
	pthread_condattr_destroy(&cattr);
	rc = -pthread_create(&c->thread, NULL, collector_main, c);
	if (rc < 0)
		goto out_destroy;
	*out = c;
	return 0;

out_destroy:
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	writer_free(c->writer);
out_free:
	free(c->path);
	free(c);
	return rc;
}

uint8_t *collector_buffer_get(struct collector *c, size_t *size)
{
	uint8_t *data = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->npool)
		data = c->pool[--c->npool];
	pthread_mutex_unlock(&c->lock);
	if (!data)
		data = buffer_alloc(c->options.buffer_size);
	*size = data ? c->options.buffer_size : 0;
	return data;
}

void collector_submit_buffer(struct collector *c, uint8_t *buffer, size_t size, size_t valid)
{
	struct item *item;
	int stopping;

	pthread_mutex_lock(&c->lock);
	stopping = c->stopping;
	pthread_mutex_unlock(&c->lock);
	item = stopping ? NULL : malloc(sizeof(*item));
	if (!item) {
		free(buffer);
		return;
	}
	item->kind = ITEM_BUFFER;
	item->buffer.data = buffer;
	item->buffer.size = size;
	item->buffer.valid = valid;
	collector_push(c, item);
}

void collector_submit_nvtx(struct collector *c, struct collector_nvtx_batch *batch)
{
	struct item *item = malloc(sizeof(*item));

	if (!item) {
		nvtx_batch_free(batch);
		return;
	}
	item->kind = ITEM_NVTX;
	item->nvtx = batch;
	collector_push(c, item);
}

static void collector_push_replay(struct collector *c, enum item_kind kind, uint32_t correlation_id,
				  uint64_t start, uint64_t end)
{
	struct item *item = malloc(sizeof(*item));

	if (!item)
		return;
	item->kind = kind;
	item->replay.correlation_id = correlation_id;
	item->replay.start = start;
	item->replay.end = end;
	collector_push(c, item);
}

void collector_note_replayed_launch(struct collector *c, uint32_t correlation_id)
{
	collector_push_replay(c, ITEM_REPLAYED, correlation_id, 0, 0);
}

void collector_time_replayed_launch(struct collector *c, uint32_t correlation_id, uint64_t start,
				    uint64_t end)
{
	collector_push_replay(c, ITEM_REPLAY_TIME, correlation_id, start, end);
}

void collector_submit_sync(struct collector *c, const struct collector_sync *sync)
{
	struct item *item = malloc(sizeof(*item));

	if (!item)
		return;
	item->kind = ITEM_SYNC;
	item->sync = (struct sync_row){
		.start = sync->start,
		.end = sync->end,
		.context_id = sync->context_id,
		.stream_id = sync->stream_id,
		.correlation_id = sync->correlation_id,
		.sync_type = sync->sync_type,
		.event_id = sync->event_id,
	};
	collector_push(c, item);
}

/* Capture windows: queued, so ahead of every buffer holding a later record (capture-windows.h). */
static void collector_push_window(struct collector *c, enum writer_window_event event, uint64_t at,
				  const char *why)
{
	struct item *item = malloc(sizeof(*item));

	if (!item)
		return;
	item->kind = ITEM_WINDOW;
	item->window.event = event;
	item->window.at = at;
	snprintf(item->window.why, sizeof(item->window.why), "%s", why ? why : "");
	collector_push(c, item);
}

void collector_capture_gate(struct collector *c)
{
	collector_push_window(c, WRITER_WINDOW_GATE, 0, NULL);
}

void collector_window_open(struct collector *c, uint64_t at, const char *why)
{
	collector_push_window(c, WRITER_WINDOW_OPEN, at, why);
}

void collector_window_close(struct collector *c, uint64_t at, const char *why)
{
	collector_push_window(c, WRITER_WINDOW_CLOSE, at, why);
}

void collector_window_end(struct collector *c, uint64_t at, const char *why)
{
	collector_push_window(c, WRITER_WINDOW_END, at, why);
}

void collector_submit_gpu_metrics(struct collector *c, struct gpu_metrics_batch *batch)
{
	struct item *item = malloc(sizeof(*item));

	if (!item) {
		free(batch);
		return;
	}
	item->kind = ITEM_GPU_METRICS;
	item->gpu_metrics = batch;
	collector_push(c, item);
}

void collector_set_meta(struct collector *c, const char *name, const char *value)
{
	struct item *item = malloc(sizeof(*item));

	if (!item)
		return;
	item->kind = ITEM_META;
	item->meta.name = strdup(name);
	item->meta.value = strdup(value);
	if (!item->meta.name || !item->meta.value) {
		item_free(item);
		return;
	}
	collector_push(c, item);
}

int collector_stop(struct collector *c, uint64_t dropped, char *err, size_t errlen)
{
	char value[32];
	int rc;

	pthread_mutex_lock(&c->lock);
	c->stopping = 1;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);

	if (c->nvtx_dropped) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)c->nvtx_dropped);
		writer_meta(c->writer, "nvtx_dropped_events", value);
	}
	replay_finish(&c->replayed, c->writer);
	if (c->nvtx.unmatched) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)c->nvtx.unmatched);
		writer_meta(c->writer, "nvtx_unmatched_ends", value);
	}
	nvtx_rows_finish(&c->nvtx, c->writer);
	rc = writer_finish(c->writer, dropped);
	if (rc < 0) {
		snprintf(err, errlen, "%s", writer_error(c->writer));
		return -EIO;
	}
	return rc;
}

const char *collector_path(const struct collector *c)
{
	return writer_path(c->writer);
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	while (c->head) {
		struct item *next = c->head->next;

		item_free(c->head);
		c->head = next;
	}
	for (size_t i = 0; i < c->npool; i++)
		free(c->pool[i]);
	nvtx_rows_release(&c->nvtx);
	replay_release(&c->replayed);
	writer_free(c->writer);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c->path);
	free(c);
}
