/*
 * NVTX events -> NVTX_EVENTS rows, on the writer thread.
 *
 * The injected NVTX handlers only append events (push, pop, start, end, mark...) to a batch; this
 * module pairs them the way nsys stores them: one row per push/pop range (eventType 59, on the
 * pushing thread's stack for its domain), one per start/end range (60, matched by range id across
 * threads, endGlobalTid the ending thread), one per mark (34, end NULL), per domain creation (75)
 * and per category name (33). Registered strings become StringIds ids (textId); plain messages stay
 * inline (text), as in nsys. Ranges still open at the end are written with end NULL.
 */
#ifndef GPT_COLLECTOR_NVTX_ROWS_H
#define GPT_COLLECTOR_NVTX_ROWS_H

#include <stdint.h>

#include "collector/collector.h"
#include "collector/hash.h"
#include "collector/writer.h"

struct nvtx_open_range;

struct nvtx_rows {
	struct u64map stacks;		/* (tid << 32 | domain) -> 1 + index into stack_heads */
	uint32_t *stack_heads;		/* index into ranges of the innermost open push, or NONE */
	size_t nstacks;
	struct u64map started;		/* range id -> index into ranges */
	struct nvtx_open_range *ranges;	/* pool of open ranges, with a free list */
	size_t nranges, ranges_capacity;
	uint32_t free_range;		/* 1 + first free range, 0: none */
	struct u64map registered;	/* registered string id -> StringIds id */
	uint64_t unmatched;		/* pops and ends without a push or start */
};

/* Turn a batch's events into rows. Returns 0, or -1 when the writer failed. */
int nvtx_rows_add(struct nvtx_rows *rows, struct writer *writer,
		  const struct collector_nvtx_batch *batch);

/* Write ranges still open (end NULL). */
int nvtx_rows_finish(struct nvtx_rows *rows, struct writer *writer);

void nvtx_rows_release(struct nvtx_rows *rows);

#endif
