/*
 * The walk's launches in flight (gaps.c): an API call that issues work waits here, keyed by its
 * correlation id, until its operation comes up. CUDA's launch queues are bounded, so a few thousand
 * are in flight at most; beyond PENDING_CALLS_MAX (pending-calls.c) the oldest unmatched call is
 * dropped, so that a trace whose operations were lost cannot grow the table without end.
 */
#ifndef GPT_ANALYSIS_PENDING_CALLS_H
#define GPT_ANALYSIS_PENDING_CALLS_H

#include <stddef.h>
#include <stdint.h>

/* An API call that issued work whose operation has not come up yet. */
struct pending_call {
	int64_t trace_id, pid, correlation;
	int64_t start, end, tid, name_id;
	unsigned cls;
	int used;
};

struct pending_calls {
	struct pending_call *slots;		/* open addressing, cap a power of two */
	size_t n, cap;
	int64_t (*order)[3];			/* keys in arrival order, a ring of PENDING_CALLS_MAX */
	size_t order_head, order_len, order_cap;
};

/* Keep call until its operation comes up; a call whose key is kept already is not (a runtime call and
 * the driver call inside it share a correlation id: the outer one stays). */
void pending_calls_add(struct pending_calls *pc, const struct pending_call *call);
/* The call kept under this key, or NULL. */
struct pending_call *pending_calls_find(struct pending_calls *pc, int64_t trace_id, int64_t pid, int64_t correlation);
/* Forget a call pending_calls_find() returned. */
void pending_calls_remove(struct pending_calls *pc, struct pending_call *call);
void pending_calls_release(struct pending_calls *pc);

#endif
