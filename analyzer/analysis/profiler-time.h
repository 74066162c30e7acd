/*
 * The profiler's own time in a trace, which the walk (gaps.h: IDLE_PROFILER) gives no cause: the
 * launches `gpt-trace run --metrics` replayed for counters or patched for SASS metrics (their
 * correlation ids in kernel metrics: the call lasts the replay), and the intervals of
 * PROFILER_OVERHEAD (ours around each launch measured, nsys's initialisation and flushes;
 * docs/schema.md). Both are few: read whole, once per walk. Private to rules/.
 */
#ifndef GPT_ANALYSIS_PROFILER_TIME_H
#define GPT_ANALYSIS_PROFILER_TIME_H

#include "analyzer/loader/trace.h"
#include "common/key-index.h"

#include <stddef.h>
#include <stdint.h>

struct profiler_interval {
	int64_t trace_id, start, end, tid;	/* tid: the globalTid of the thread it ran on */
	char *name;
};

struct profiler_time {
	struct key_index replayed;		/* (traceId, correlationId) of the measured launches */
	struct profiler_interval *intervals;	/* in (traceId, start) order */
	size_t n;
};

/* Read both (the intervals only when with_intervals): 0, or -EIO with one line in why. */
int profiler_time_load(struct trace *trace, int with_intervals, struct profiler_time *pt, char *why, size_t len);
/* Whether the launch with this correlation id was measured by --metrics. */
int profiler_time_replayed(const struct profiler_time *pt, int64_t trace_id, int64_t correlation);
void profiler_time_release(struct profiler_time *pt);

#endif
