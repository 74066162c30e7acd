/*
 * Capture windows of the traces (the windows view, trace.h): the spans a trace recorded when
 * `gpt-trace run` was given --delay, --duration, --capture-range or --max-size. Time outside them
 * was not recorded, so consumers must not read it as idle time, nor the first window's start as
 * the program's start-up. A trace without windows was recorded whole.
 */
#ifndef GPT_LOADER_WINDOWS_H
#define GPT_LOADER_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/loader/trace.h"

struct trace_window {
	int64_t trace_id, start, end;	/* end TRACE_TIME_MAX for a window left open */
};

struct trace_windows {
	struct trace_window *list;	/* by traceId, then start */
	size_t count;
};

/* Read every trace's windows: 0, or a negative error with one line in err. */
int trace_windows_load(struct trace *trace, struct trace_windows *out, char *err, size_t errlen);
/* Whether trace_id was recorded in windows. */
int trace_windows_has(const struct trace_windows *windows, int64_t trace_id);
/* The window of trace_id that holds time t (start <= t < end), NULL when none does. */
const struct trace_window *trace_windows_at(const struct trace_windows *windows, int64_t trace_id,
					    int64_t t);
void trace_windows_release(struct trace_windows *windows);

#endif
