/*
 * Kernel rows of launches run under kernel replay (hardware metrics, docs/metrics.md), for the
 * writer thread: one row per launch, with times.
 *
 * Measured on the H200 (CUDA 13.0, CUPTI 130001): for a launch profiled with the range profiler in
 * kernel replay, CUPTI delivers one kernel record, without timestamps (start = end = 0). The
 * library notes each such launch before it reaches the GPU (replay_note), and once the launch call
 * returns gives its times (replay_time): the end of the call and the kernel's duration measured by
 * the range profiler. A record that arrives untimed is stored with those times, whichever of the
 * record and the times comes first; a record CUPTI did time is stored as it is; any further record
 * with the same correlation id (should CUPTI ever report one per pass) is dropped and counted.
 * Launches that were not noted are never looked up.
 */
#ifndef GPT_COLLECTOR_REPLAY_H
#define GPT_COLLECTOR_REPLAY_H

#include <stdint.h>

#include "collector/decode.h"
#include "collector/hash.h"
#include "collector/writer.h"

struct replay_launch;

struct replay_set {
	struct u64map index;		/* correlation id -> position in launches + 1 */
	struct replay_launch *launches;
	size_t count, capacity;
	uint64_t dropped;		/* records beyond the first of a launch */
	uint64_t timed;			/* untimed records stored with the library's times */
};

/* A launch run under kernel replay, noted before its records can arrive. */
void replay_note(struct replay_set *set, uint32_t correlation_id);

/* Its times (absolute ns, the records' clock), once the launch call returned; 0, 0: none. */
void replay_time(struct replay_set *set, struct writer *writer, uint32_t correlation_id,
		 uint64_t start, uint64_t end);

/* A kernel record: 1 when handled here (stored, kept for its times, or dropped), 0 otherwise. */
int replay_kernel(struct replay_set *set, struct writer *writer, const struct kernel_row *row);

/* At the end: records still without times are counted untimed; facts for GPT_META. */
void replay_finish(struct replay_set *set, struct writer *writer);

void replay_release(struct replay_set *set);

#endif
