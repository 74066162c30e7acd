/*
 * The API calls that issued work whose operation has not come up yet (see pending-calls.h): open
 * addressing keyed by (traceId, pid, correlation id), with deletion by backward shift, and a ring of
 * the keys in arrival order so that the oldest unmatched call goes once PENDING_CALLS_MAX are kept.
 */
#include "analyzer/analysis/pending-calls.h"

#include "common/util.h"

#include <stdlib.h>
#include <string.h>

#define PENDING_CALLS_MAX (1u << 18)

static size_t pending_hash(int64_t trace_id, int64_t pid, int64_t correlation, size_t cap)
{
	uint64_t h = (uint64_t)correlation * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)pid * 0xc2b2ae3d27d4eb4full + (uint64_t)trace_id;
	return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static struct pending_call *pending_slot(struct pending_calls *pc, int64_t trace_id, int64_t pid,
					 int64_t correlation)
{
	size_t i = pending_hash(trace_id, pid, correlation, pc->cap);

	while (pc->slots[i].used && (pc->slots[i].correlation != correlation ||
				     pc->slots[i].pid != pid || pc->slots[i].trace_id != trace_id))
		i = (i + 1) & (pc->cap - 1);
	return &pc->slots[i];
}

/* Linear-probing deletion by shifting later members of the cluster back. */
void pending_calls_remove(struct pending_calls *pc, struct pending_call *slot)
{
	size_t i = (size_t)(slot - pc->slots), j = i;

	pc->slots[i].used = 0;
	pc->n--;
	for (;;) {
		size_t home;

		j = (j + 1) & (pc->cap - 1);
		if (!pc->slots[j].used)
			return;
		home = pending_hash(pc->slots[j].trace_id, pc->slots[j].pid, pc->slots[j].correlation,
				    pc->cap);
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			pc->slots[i] = pc->slots[j];
			pc->slots[j].used = 0;
			i = j;
		}
	}
}

void pending_calls_add(struct pending_calls *pc, const struct pending_call *call)
{
	struct pending_call *slot;

	if ((pc->n + 1) * 2 > pc->cap) {
		struct pending_call *old = pc->slots;
		size_t oldcap = pc->cap;

		pc->cap = pc->cap ? 2 * pc->cap : 1024;
		pc->slots = xcalloc(pc->cap, sizeof(*pc->slots));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].used)
				*pending_slot(pc, old[i].trace_id, old[i].pid, old[i].correlation) = old[i];
		free(old);
	}
	slot = pending_slot(pc, call->trace_id, call->pid, call->correlation);
	/* A runtime call and the driver call inside it share a correlation id: keep the outer one. */
	if (slot->used)
		return;
	*slot = *call;
	slot->used = 1;
	pc->n++;

	/* Remember the arrival order; beyond PENDING_CALLS_MAX calls, the oldest is dropped if unmatched. */
	if (pc->order_len == PENDING_CALLS_MAX) {
		int64_t *old = pc->order[pc->order_head];
		struct pending_call *victim = pending_slot(pc, old[0], old[1], old[2]);

		if (victim->used)
			pending_calls_remove(pc, victim);
		pc->order_head = (pc->order_head + 1) % pc->order_cap;
		pc->order_len--;
	}
	if (pc->order_len == pc->order_cap) {
		size_t cap = pc->order_cap ? 2 * pc->order_cap : 1024;
		int64_t (*order)[3] = xmalloc(cap * sizeof(*order));

		for (size_t i = 0; i < pc->order_len; i++)
			memcpy(order[i], pc->order[(pc->order_head + i) % pc->order_cap], sizeof(order[i]));
		free(pc->order);
		pc->order = order;
		pc->order_cap = cap;
		pc->order_head = 0;
	}
	{
		int64_t *o = pc->order[(pc->order_head + pc->order_len) % pc->order_cap];

		o[0] = call->trace_id;
		o[1] = call->pid;
		o[2] = call->correlation;
		pc->order_len++;
	}
}

struct pending_call *pending_calls_find(struct pending_calls *pc, int64_t trace_id, int64_t pid, int64_t correlation)
{
	struct pending_call *call;

	if (!pc->cap)
		return NULL;
	call = pending_slot(pc, trace_id, pid, correlation);
	return call->used ? call : NULL;
}

void pending_calls_release(struct pending_calls *pc)
{
	free(pc->slots);
	free(pc->order);
	memset(pc, 0, sizeof(*pc));
}
