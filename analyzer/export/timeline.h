/*
 * Private to the exporter: the timeline model that timeline.c produces from a trace and that
 * each format's writer (a struct timeline_sink) turns into bytes, written to an export_file (file.h).
 *
 * The walker guarantees what both formats need, so writers stay simple: every track is announced
 * (sink->track) before its first event; on one track, slices arrive in start order and nest
 * properly (a slice starts after its parent started and ends no later than its parent); a slice's
 * end is announced (slice_end) once no later event on that track can start before it, so per-track
 * output is in time order. Flow ids are unique per arrow: the API call lists one id per GPU item it
 * caused (flows_out) and each GPU item ends exactly one (flow_in).
 */
#ifndef GPT_EXPORT_TIMELINE_H
#define GPT_EXPORT_TIMELINE_H

#include "common/corr-map.h"
#include "analyzer/export/file.h"
#include "analyzer/loader/trace.h"
#include "analyzer/analysis/what-if.h"
#include "rules/rule.h"

#include <stddef.h>
#include <stdint.h>

/* UTF-8 (utf8.c): length of the valid sequence at s (1-4) or 0; whole-string check; a copy
 * with each invalid byte replaced by U+FFFD (NULL when out of memory). */
size_t export_utf8_len(const unsigned char *s);
int export_utf8_valid(const char *s);
char *export_utf8_sanitize(const char *s);

enum timeline_track_kind {
	TIMELINE_PROCESS = 1,	/* a host process or a pseudo-process (GPU, findings) */
	TIMELINE_THREAD,	/* a host thread or a GPU stream: slices and instants */
	TIMELINE_LANE,		/* an extra slice track inside a process (overlaps, NVTX start/end ranges) */
	TIMELINE_COUNTER,	/* a counter inside a process */
};

struct timeline_track {
	uint64_t uuid;		/* unique, > 0 */
	uint64_t parent_uuid;	/* the process track's uuid; 0 for processes */
	enum timeline_track_kind kind;
	int32_t pid, tid;	/* tid: threads and lanes (lanes get a synthetic one) */
	int32_t sort_index;	/* order among the parent's children (or among processes) */
	const char *name;
	const char *unit;	/* counters: "%" or "GB/s" */
};

enum timeline_arg_type {
	TIMELINE_ARG_INT,
	TIMELINE_ARG_DOUBLE,
	TIMELINE_ARG_STRING,
};

struct timeline_arg {
	const char *name;		/* a string constant: a writer may remember it by its address */
	enum timeline_arg_type type;
	int64_t i;
	double d;
	const char *s;
};

struct timeline_event {
	const struct timeline_track *track;
	int64_t start, end;		/* ns on the trace's clock; end == start for instants */
	const char *name;
	const char *category;		/* a string constant, as timeline_arg.name */
	const struct timeline_arg *args;
	size_t nargs;
	const uint64_t *flows_out;	/* flows that start at this slice */
	size_t nflows_out;
	uint64_t flow_in;		/* the flow that ends at this slice; 0: none */
};

struct timeline_sink;

struct timeline_sink_ops {
	/* origin: the earliest timestamp of the trace (Chrome JSON rebases to it). */
	int (*begin)(struct timeline_sink *sink, int64_t origin);
	int (*track)(struct timeline_sink *sink, const struct timeline_track *track);
	int (*slice_begin)(struct timeline_sink *sink, const struct timeline_event *ev);
	int (*slice_end)(struct timeline_sink *sink, const struct timeline_track *track, int64_t ts);
	int (*instant)(struct timeline_sink *sink, const struct timeline_event *ev);
	int (*counter)(struct timeline_sink *sink, const struct timeline_track *track, int64_t ts,
		       double value);
	int (*finish)(struct timeline_sink *sink);
	void (*free)(struct timeline_sink *sink);
};

struct timeline_sink {
	const struct timeline_sink_ops *ops;
};

/* Writers; they write to file but do not own it. Return NULL only when out of memory. */
struct timeline_sink *perfetto_sink_new(struct export_file *file);
struct timeline_sink *chrome_sink_new(struct export_file *file);

/* The exporter's word in the correlation map (common/corr-map.h) of each correlation id. */
#define CORR_TID_MASK 0xffffffffull		/* the owner API call's thread id */
#define CORR_NWORK_SHIFT 32			/* the GPU items with this id (30 bits, saturating) */
#define CORR_NWORK_MAX ((1ull << 30) - 1)
#define CORR_HAS_API (1ull << 62)		/* an API call has this id */
#define CORR_CLAIMED (1ull << 63)		/* the owner's flows are written */

/*
 * Walk the trace's canonical views and feed every track and event to sink, then the findings
 * (may be NULL) and the critical path (npath stretches, in time order). Returns 0, or a negative error with one line in err. Errors from the sink (a
 * failed write) are returned as they are, with err left empty, so the caller can name the file.
 */
int timeline_walk(struct trace *trace, const struct findings *findings, const struct what_if_segment *path,
		  size_t npath, struct timeline_sink *sink, char *err, size_t errlen);

#endif
