/*
 * Kernel rows of launches run under kernel replay (see replay.h).
 */
#include "collector/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct replay_launch {
	uint32_t correlation_id;
	int seen;			/* a kernel record arrived */
	int has_times;			/* replay_time() gave times */
	int pending;			/* row waits for its times (name owned) */
	uint64_t start, end;
	struct kernel_row row;
};

static struct replay_launch *replay_find(struct replay_set *set, uint32_t correlation_id)
{
	uint64_t *pos;

	if (!set->count)
		return NULL;
	pos = u64map_get(&set->index, correlation_id);
	return pos ? &set->launches[*pos - 1] : NULL;
}

void replay_note(struct replay_set *set, uint32_t correlation_id)
{
	struct replay_launch *launch;

	if (replay_find(set, correlation_id))
		return;
	if (set->count == set->capacity) {
		size_t capacity = set->capacity ? 2 * set->capacity : 64;
		struct replay_launch *launches = realloc(set->launches, capacity * sizeof(*launches));

		if (!launches)
			return;
		set->launches = launches;
		set->capacity = capacity;
	}
	if (u64map_put(&set->index, correlation_id, set->count + 1) < 0)
		return;
	launch = &set->launches[set->count++];
	memset(launch, 0, sizeof(*launch));
	launch->correlation_id = correlation_id;
}

/* Store a row kept for its times, now that they are known. */
static void replay_store(struct replay_set *set, struct writer *writer, struct replay_launch *launch,
			 const struct kernel_row *row)
{
	struct kernel_row timed = *row;

	timed.start = launch->start;
	timed.end = launch->end;
	writer_kernel(writer, &timed);
	set->timed++;
}

void replay_time(struct replay_set *set, struct writer *writer, uint32_t correlation_id,
		 uint64_t start, uint64_t end)
{
	struct replay_launch *launch = replay_find(set, correlation_id);

	if (!launch || (!start && !end))
		return;
	launch->has_times = 1;
	launch->start = start;
	launch->end = end;
	if (launch->pending) {
		replay_store(set, writer, launch, &launch->row);
		free((char *)launch->row.name);
		launch->pending = 0;
	}
}

int replay_kernel(struct replay_set *set, struct writer *writer, const struct kernel_row *row)
{
	struct replay_launch *launch = replay_find(set, row->correlation_id);

	if (!launch)
		return 0;
	if (launch->seen) {
		set->dropped++;
		return 1;
	}
	launch->seen = 1;
	if (row->start || row->end)
		return 0;
	if (launch->has_times) {
		replay_store(set, writer, launch, row);
		return 1;
	}
	/* The times come when the launch call returns: keep the row (its name outlives CUPTI's). */
	launch->row = *row;
	launch->row.name = row->name ? strdup(row->name) : NULL;
	if (row->name && !launch->row.name) {
		writer_count_untimed(writer);
		return 1;
	}
	launch->pending = 1;
	return 1;
}

void replay_finish(struct replay_set *set, struct writer *writer)
{
	char value[32];

	for (size_t i = 0; i < set->count; i++) {
		struct replay_launch *launch = &set->launches[i];

		if (!launch->pending)
			continue;
		writer_count_untimed(writer);
		free((char *)launch->row.name);
		launch->pending = 0;
	}
	if (!set->count)
		return;
	snprintf(value, sizeof(value), "%llu", (unsigned long long)set->timed);
	writer_meta(writer, "replayed_kernel_rows_timed", value);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)set->dropped);
	writer_meta(writer, "replayed_kernel_records_dropped", value);
}

void replay_release(struct replay_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		if (set->launches[i].pending)
			free((char *)set->launches[i].row.name);
	free(set->launches);
	u64map_release(&set->index);
	memset(set, 0, sizeof(*set));
}
