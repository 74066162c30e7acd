/*
 * Timelines: write a trace (ours or an nsys export, one or more files opened together) as a file
 * that ui.perfetto.dev and chrome://tracing open.
 *
 * Two formats, one model (analyzer/export/timeline.c walks the canonical views once and feeds a
 * writer): native Perfetto protobuf (perfetto.c; interned names, written packet by packet so
 * memory does not grow with the trace) and Chrome Trace Event JSON (chrome.c; optionally
 * gzipped). What the timeline holds, in this track order:
 *
 *   - one process per traced host process, with a track per host thread holding its CUDA API calls,
 *     NVTX push/pop ranges and NVTX marks, nested; a synchronization record (the time the host
 *     blocked, on which stream, event or device) nests under the API call that waited; NVTX
 *     start/end ranges, which may overlap, on the process's own "NVTX ranges" tracks;
 *   - one pseudo-process per GPU ("GPU 0: NVIDIA H200", in device order), with a track per stream
 *     (in stream id order) holding kernels, copies and sets, and counters: the share of time the
 *     GPU ran anything (busy, %) and copy bandwidth per direction (GB/s), in fixed time buckets;
 *   - a "gpt-trace findings" pseudo-process whose instant events are the rules' findings;
 *   - a "gpt-trace critical path" pseudo-process: the steady state's critical path as the what-if
 *     replay finds it, one slice per stretch (host, compute, communication, copies, launch and queue).
 *
 * Flows (arrows) go from each launch, copy or set API call to every piece of GPU work with its
 * correlation id. Kernel slices are named by their demangled name when it is at most
 * EXPORT_KERNEL_NAME_MAX characters, otherwise by the short name; the full demangled name is always
 * the "kernel" argument. Where events on one thread or stream overlap without nesting (which a
 * well-formed trace does not do), the later one goes to an extra "(overlap N)" track next to it
 * rather than being dropped.
 */
#ifndef GPT_EXPORT_EXPORT_H
#define GPT_EXPORT_EXPORT_H

#include "analyzer/loader/trace.h"
#include "analyzer/analysis/what-if.h"
#include "rules/rule.h"

#include <stddef.h>

#define EXPORT_KERNEL_NAME_MAX 96

enum export_format {
	EXPORT_PERFETTO = 1,	/* Perfetto TracePacket protobuf stream */
	EXPORT_CHROME = 2,	/* Chrome Trace Event JSON */
};

struct export_options {
	enum export_format format;
	int gzip;				/* compress the output with zlib's gzip format */
	const struct findings *findings;	/* shown on the findings track; NULL or empty: none */
	/* The steady state's critical path (analyzer/analysis/what-if.h), its own track; none: n 0. */
	const struct what_if_segment *path;
	size_t npath;
};

/*
 * Name the columns the exporter reads, so that each table is read from SQLite once (see
 * event_streams_keep): call right after trace_open, before the rules run for the findings.
 */
void export_keep(struct trace *trace);

/*
 * Write the timeline of trace to path. The file appears complete or not at all: it is written to
 * "<path>.tmp.XXXXXX" in the same directory, synced and renamed over path; on any error the
 * temporary file is removed. Returns 0, or a negative errno-style code with one line in err
 * (naming the file and the reason).
 */
int export_write(struct trace *trace, const struct export_options *opts, const char *path, char *err,
		 size_t errlen);

/*
 * The output name used when the user gives none: the trace path without its .sqlite (or .db)
 * extension, plus ".perfetto-trace" or ".json", plus ".gz" when gzipped. The caller frees it.
 */
char *export_default_path(const char *trace_path, const struct export_options *opts);

/* "perfetto" / "chrome" to a format; returns 0 if the name is neither. */
enum export_format export_format_parse(const char *name);

#endif
