/*
 * Pairing NVTX events into NVTX_EVENTS rows (see nvtx_rows.h).
 */
#include "collector/nvtx-rows.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct nvtx_open_range {
	uint64_t start;
	uint64_t range_id;
	uint64_t payload;
	int64_t text_id;
	char *text;		/* copy of the inline message, or NULL */
	size_t text_len;
	uint32_t tid, domain, category, color;
	uint32_t outer;		/* push/pop: the enclosing open push; free: 1 + next free */
	uint8_t has_color, payload_type;
};

static uint32_t range_alloc(struct nvtx_rows *rows)
{
	uint32_t index;

	if (rows->free_range) {
		index = rows->free_range - 1;
		rows->free_range = rows->ranges[index].outer;
		return index;
	}
	if (rows->nranges == rows->ranges_capacity) {
		size_t cap = rows->ranges_capacity ? rows->ranges_capacity * 2 : 64;
		struct nvtx_open_range *grown = realloc(rows->ranges, cap * sizeof(*grown));

		if (!grown)
			return NONE;
		rows->ranges = grown;
		rows->ranges_capacity = cap;
	}
	return (uint32_t)rows->nranges++;
}

static void range_free(struct nvtx_rows *rows, uint32_t index)
{
	free(rows->ranges[index].text);
	rows->ranges[index].text = NULL;
	rows->ranges[index].outer = rows->free_range;
	rows->free_range = index + 1;
}

/* Text id of a registered string, -1 when unknown or not registered. */
static int64_t registered_text(const struct nvtx_rows *rows, const struct collector_nvtx_event *ev)
{
	uint64_t *id;

	if (!ev->registered)
		return -1;
	id = u64map_get(&rows->registered, ev->registered);
	return id ? (int64_t)*id : -1;
}

static int range_open(struct nvtx_rows *rows, const struct collector_nvtx_event *ev,
		      const char *text, uint32_t *out)
{
	uint32_t index = range_alloc(rows);
	struct nvtx_open_range *r;

	if (index == NONE)
		return -1;
	r = &rows->ranges[index];
	memset(r, 0, sizeof(*r));
	r->start = ev->timestamp;
	r->range_id = ev->range_id;
	r->payload = ev->payload;
	r->payload_type = ev->payload_type;
	r->text_id = registered_text(rows, ev);
	if (text) {
		r->text = malloc(ev->text_len ? ev->text_len : 1);
		if (!r->text) {
			range_free(rows, index);
			return -1;
		}
		memcpy(r->text, text, ev->text_len);
		r->text_len = ev->text_len;
	}
	r->tid = ev->tid;
	r->domain = ev->domain;
	r->category = ev->category;
	r->color = ev->color;
	r->has_color = ev->has_color;
	*out = index;
	return 0;
}

static int range_write(struct writer *writer, const struct nvtx_open_range *r, int event_type,
		       const struct collector_nvtx_event *end)
{
	struct nvtx_row row = {
		.start = r->start,
		.end = end ? end->timestamp : 0,
		.has_end = end != NULL,
		.event_type = event_type,
		.range_id = event_type == NVTX_TYPE_STARTEND ? r->range_id : 0,
		.category = r->category,
		.has_color = r->has_color,
		.color = r->color,
		.text = r->text,
		.text_len = r->text_len,
		.text_id = r->text_id,
		.tid = r->tid,
		.end_tid = (event_type == NVTX_TYPE_STARTEND && end) ? end->tid : 0,
		.domain = r->domain,
		.payload_type = r->payload_type,
		.payload = r->payload,
	};

	return writer_nvtx(writer, &row);
}

static uint32_t *stack_head(struct nvtx_rows *rows, uint32_t tid, uint32_t domain, int create)
{
	uint64_t key = (uint64_t)tid << 32 | domain;
	uint64_t *slot = u64map_get(&rows->stacks, key);
	uint32_t *heads;

	if (slot)
		return &rows->stack_heads[*slot - 1];
	if (!create)
		return NULL;
	heads = realloc(rows->stack_heads, (rows->nstacks + 1) * sizeof(*heads));
	if (!heads)
		return NULL;
	rows->stack_heads = heads;
	if (u64map_put(&rows->stacks, key, rows->nstacks + 1) < 0)
		return NULL;
	heads[rows->nstacks] = NONE;
	return &heads[rows->nstacks++];
}

static int nvtx_rows_event(struct nvtx_rows *rows, struct writer *writer,
			   const struct collector_nvtx_event *ev, const char *text)
{
	struct nvtx_row row;
	uint32_t index, *head;
	uint64_t *started;
	int64_t id;
	int rc;

	switch (ev->kind) {
	case NVTX_EV_PUSH:
		head = stack_head(rows, ev->tid, ev->domain, 1);
		if (!head || range_open(rows, ev, text, &index) < 0)
			return 0;	/* out of memory: lose this range, not the trace */
		rows->ranges[index].outer = *head;
		*head = index;
		return 0;
	case NVTX_EV_POP:
		head = stack_head(rows, ev->tid, ev->domain, 0);
		if (!head || *head == NONE) {
			rows->unmatched++;
			return 0;
		}
		index = *head;
		*head = rows->ranges[index].outer;
		rc = range_write(writer, &rows->ranges[index], NVTX_TYPE_PUSHPOP, ev);
		range_free(rows, index);
		return rc;
	case NVTX_EV_START:
		if (range_open(rows, ev, text, &index) < 0)
			return 0;
		if (u64map_put(&rows->started, ev->range_id, index) < 0)
			range_free(rows, index);
		return 0;
	case NVTX_EV_END:
		started = u64map_get(&rows->started, ev->range_id);
		if (!started) {
			rows->unmatched++;
			return 0;
		}
		index = (uint32_t)*started;
		u64map_remove(&rows->started, ev->range_id);
		rc = range_write(writer, &rows->ranges[index], NVTX_TYPE_STARTEND, ev);
		range_free(rows, index);
		return rc;
	case NVTX_EV_REGISTER:
		if (!text || writer_intern(writer, text, ev->text_len, &id) < 0)
			return text ? -1 : 0;
		u64map_put(&rows->registered, ev->range_id, (uint64_t)id);
		return 0;
	case NVTX_EV_THREAD_NAME:
		if (text)
			writer_thread_name(writer, ev->category, text, ev->text_len);
		return 0;
	case NVTX_EV_OS_THREAD_NAME:
		if (text)
			writer_thread_reported_name(writer, ev->tid, text, ev->text_len,
						    ev->payload_type != 0, (int)(int64_t)ev->payload);
		return 0;
	case NVTX_EV_MARK:
	case NVTX_EV_DOMAIN:
	case NVTX_EV_CATEGORY:
		memset(&row, 0, sizeof(row));
		row.start = ev->timestamp;
		row.event_type = ev->kind == NVTX_EV_MARK	  ? NVTX_TYPE_MARK
				 : ev->kind == NVTX_EV_DOMAIN ? NVTX_TYPE_DOMAIN_CREATE
							      : NVTX_TYPE_CATEGORY;
		row.category = ev->category;
		row.has_color = ev->has_color;
		row.color = ev->color;
		row.text = text;
		row.text_len = ev->text_len;
		row.text_id = registered_text(rows, ev);
		row.tid = ev->tid;
		row.domain = ev->domain;
		row.payload_type = ev->payload_type;
		row.payload = ev->payload;
		return writer_nvtx(writer, &row);
	default:
		return 0;
	}
}

int nvtx_rows_add(struct nvtx_rows *rows, struct writer *writer,
		  const struct collector_nvtx_batch *batch)
{
	for (size_t i = 0; i < batch->count; i++) {
		const struct collector_nvtx_event *ev = &batch->events[i];
		const char *text = NULL;

		if (ev->text_offset != NVTX_NO_TEXT &&
		    (size_t)ev->text_offset + ev->text_len <= batch->text_len)
			text = batch->text + ev->text_offset;
		if (nvtx_rows_event(rows, writer, ev, text) < 0)
			return -1;
	}
	return 0;
}

int nvtx_rows_finish(struct nvtx_rows *rows, struct writer *writer)
{
	for (size_t s = 0; s < rows->nstacks; s++) {
		for (uint32_t i = rows->stack_heads[s]; i != NONE;) {
			uint32_t outer = rows->ranges[i].outer;

			if (range_write(writer, &rows->ranges[i], NVTX_TYPE_PUSHPOP, NULL) < 0)
				return -1;
			range_free(rows, i);
			i = outer;
		}
		rows->stack_heads[s] = NONE;
	}
	for (size_t i = 0; i < u64map_capacity(&rows->started); i++) {
		uint64_t id, index;

		if (!u64map_at(&rows->started, i, &id, &index))
			continue;
		if (range_write(writer, &rows->ranges[index], NVTX_TYPE_STARTEND, NULL) < 0)
			return -1;
	}
	return 0;
}

void nvtx_rows_release(struct nvtx_rows *rows)
{
	for (size_t i = 0; i < rows->nranges; i++)
		free(rows->ranges[i].text);
	free(rows->ranges);
	free(rows->stack_heads);
	u64map_release(&rows->stacks);
	u64map_release(&rows->started);
	u64map_release(&rows->registered);
	memset(rows, 0, sizeof(*rows));
}
