/*
 * The exporter's model: walks a trace's canonical views (analyzer/loader/trace.h) through the
 * loader's event streams (analyzer/loader/events.h) and hands tracks and events to a writer
 * (perfetto.c, chrome.c). Each table is read from SQLite once: the exporter names its columns
 * before anything reads the trace (export_keep), the first scan of a table keeps a compact copy of
 * its rows, and the passes below read that copy in time order. Nothing is sorted; memory holds the
 * nesting stack of each track, the rows that share one timestamp, and the tracks, not the events
 * (the correlation map below is given back page by page).
 *
 * Passes:
 *   1. the index (index_pass): the tracks that will exist (host processes and threads, GPU
 * streams), the time range, and each file's range of correlation ids; then, in the correlation map,
 * which API call owns an id (the first with it, so a runtime call and the driver call inside it do
 * not both get arrows), how many GPU items carry it, and where each synchronization record goes;
 *   2. the host (walk_host): API calls, NVTX ranges and marks and synchronization records of each
 *      file merged in time order onto their threads (a synchronization record nests under the API
 *      call that waited), NVTX start/end ranges and the synchronizations no API call claims onto
 *      their process's own lanes;
 *   3. the GPU (walk_gpu): kernels, copies and sets of every file merged in time order onto their
 *      streams, with each device's busy and bandwidth counters;
 *   4. the findings.
 * Rows with the same timestamp are taken together and ordered as a track needs them: longest first
 * (a parent before the slices it holds), then by kind (an NVTX range before the call made inside
 * it). Per track, events arrive in time order; across tracks they interleave.
 *
 * Nesting is checked, not assumed: a slice that starts inside another on the same track but ends
 * after it goes to the track's next lane (an extra "(overlap N)" track), so a writer never sees a
 * partial overlap, which Perfetto would reject and Chrome JSON would draw wrong.
 *
 * Flows: an API call's correlation id is shared by the GPU work it caused. The owner starts one
 * flow per GPU item with its id and each item ends its own, numbered by its rank among the items of
 * that id. Ids outside 1..2^32-1 (CUPTI's are 32-bit) carry no flow.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyzer/export/walk.h"
#include "analyzer/loader/gpu-samples.h"

/* Findings. */

static const char *severity_name(enum finding_severity severity)
{
	switch (severity) {
	case SEVERITY_INFO: return "info";
	case SEVERITY_WARNING: return "warning";
	case SEVERITY_CRITICAL: return "critical";
	}
	return "unknown";
}

static int walk_findings(struct timeline *tl, const struct findings *findings)
{
	const struct timeline_sink_ops *ops = tl->sink->ops;
	struct timeline_track process = {
		.uuid = tl->next_uuid++, .kind = TIMELINE_PROCESS, .pid = PSEUDO_PID_FINDINGS,
		.sort_index = SORT_FINDINGS, .name = "gpt-trace findings",
	};
	struct timeline_track thread = {
		.uuid = tl->next_uuid++, .parent_uuid = process.uuid, .kind = TIMELINE_THREAD,
		.pid = PSEUDO_PID_FINDINGS, .tid = tl->next_tid++, .name = "findings",
	};
	int ret;

	if (!findings || !findings->count)
		return 0;
	ret = ops->track(tl->sink, &process);
	if (!ret)
		ret = ops->track(tl->sink, &thread);
	for (size_t i = 0; !ret && i < findings->count; i++) {
		const struct finding *f = &findings->items[i];
		struct timeline_arg args[10];
		struct timeline_event ev = { .track = &thread, .category = "gpt-trace.finding", .args = args };
		char *evidence = NULL;
		size_t nargs = 0, len = 0;

		ev.start = f->start || f->end ? f->start : tl->origin;
		ev.end = ev.start;
		ev.name = f->message ? f->message : f->rule_id;
		walk_arg_string(args, &nargs, "rule", f->rule_id);
		walk_arg_string(args, &nargs, "severity", severity_name(f->severity));
		walk_arg_string(args, &nargs, "message", f->message);
		walk_arg_double(args, &nargs, "recoverable ms", (double)f->recoverable_ns / 1e6);
		if (f->fix)
			walk_arg_string(args, &nargs, "fix", f->fix);
		for (size_t k = 0; k < f->nevidence; k++)
			len += strlen(f->evidence[k]) + 1;
		if (len) {
			evidence = malloc(len);
			if (!evidence)
				return -ENOMEM;
			evidence[0] = '\0';
			for (size_t k = 0; k < f->nevidence; k++) {
				if (k)
					strcat(evidence, "\n");
				strcat(evidence, f->evidence[k]);
			}
			walk_arg_string(args, &nargs, "evidence", evidence);
		}
		if (f->start || f->end) {
			walk_arg_int(args, &nargs, "start", f->start);
			walk_arg_int(args, &nargs, "end", f->end);
		}
		if (f->device >= 0)
			walk_arg_int(args, &nargs, "device", f->device);
		if (f->stream >= 0)
			walk_arg_int(args, &nargs, "stream", f->stream);
		ev.nargs = nargs;
		ret = ops->instant(tl->sink, &ev);
		free(evidence);
	}
	return ret;
}

/* ------------------------------------------------------------------------------------------------ */

static void timeline_release(struct timeline *tl)
{
	memory_summary_free(tl->memory);
	for (size_t i = 0; i < tl->nprocs; i++) {
		free(tl->procs[i]->name);
		lane_set_release(&tl->procs[i]->nvtx_ranges);
		lane_set_release(&tl->procs[i]->syncs);
		free(tl->procs[i]);
	}
	free(tl->procs);
	for (size_t i = 0; i < tl->nthreads; i++) {
		free(tl->threads[i]->name);
		lane_set_release(&tl->threads[i]->lanes);
		free(tl->threads[i]);
	}
	free(tl->threads);
	for (size_t i = 0; i < tl->ngpus; i++) {
		free(tl->gpus[i].name);
		free(tl->gpus[i].b.busy);
		for (int d = 0; d < NDIRS; d++)
			free(tl->gpus[i].b.bytes[d]);
	}
	free(tl->gpus);
	gpu_samples_free(tl->samples, tl->nsample_devices > 0 ? (size_t)tl->nsample_devices : 0);
	for (size_t i = 0; i < tl->nstreams; i++) {
		free(tl->streams[i].name);
		lane_set_release(&tl->streams[i].lanes);
	}
	free(tl->streams);
	key_index_release(&tl->thread_index);
	key_index_release(&tl->proc_index);
	key_index_release(&tl->stream_index);
	free(tl->thread_keys);
	free(tl->proc_keys);
	free(tl->proc_flags);
	free(tl->thread_of);
	free(tl->proc_of);
	corr_map_free(tl->corr);
	held_clear(&tl->held);
	free(tl->held.items);
	free(tl->flows);
	free(tl->ranks);
	sqlite3_finalize(tl->process_name);
}

void export_keep(struct trace *trace)
{
	event_streams_keep(trace, export_streams, NVIEWS);
}

/* The rows the passes read, for the progress line: the index reads the NVTX events once and the
 * others twice, the walks each once. */
static int export_rows(struct timeline *tl, int64_t *rows)
{
	*rows = 0;
	for (int v = 0; v < NVIEWS; v++) {
		struct event_stream *s;
		int ret = walk_open_view(tl, v, &s);

		if (ret < 0)
			return ret;
		*rows += event_stream_total(s) * (v == V_NVTX ? 2 : 3);
		event_stream_close(s);
	}
	return 0;
}

/* The critical path's stretches as slices of one track, each named by its part. */
static int walk_critical_path(struct timeline *tl, const struct what_if_segment *path, size_t n)
{
	const struct timeline_sink_ops *ops = tl->sink->ops;
	struct timeline_track process = {
		.uuid = tl->next_uuid++, .kind = TIMELINE_PROCESS, .pid = PSEUDO_PID_CRITICAL,
		.sort_index = SORT_CRITICAL, .name = "gpt-trace critical path",
	};
	struct timeline_track thread = {
		.uuid = tl->next_uuid++, .parent_uuid = process.uuid, .kind = TIMELINE_THREAD,
		.pid = PSEUDO_PID_CRITICAL, .tid = tl->next_tid++, .name = "steady state, what bounds it",
	};
	int ret;

	if (!n)
		return 0;
	ret = ops->track(tl->sink, &process);
	if (!ret)
		ret = ops->track(tl->sink, &thread);
	for (size_t i = 0; !ret && i < n; i++) {
		const struct what_if_segment *g = &path[i];
		struct timeline_arg args[2];
		struct timeline_event ev = { .track = &thread, .category = "gpt-trace.critical-path", .args = args,
					     .start = g->start, .end = g->end, .name = what_if_part_name(g->part) };
		size_t nargs = 0;

		if (g->end <= g->start)
			continue;
		walk_arg_string(args, &nargs, "part", what_if_part_id(g->part));
		if (g->stream >= 0)
			walk_arg_int(args, &nargs, "stream", g->stream);
		ev.nargs = nargs;
		ret = ops->slice_begin(tl->sink, &ev);
		if (!ret)
			ret = ops->slice_end(tl->sink, &thread, g->end);
	}
	return ret;
}

int timeline_walk(struct trace *trace, const struct findings *findings, const struct what_if_segment *path,
		  size_t npath, struct timeline_sink *sink, char *err, size_t errlen)
{
	struct timeline tl = {
		.trace = trace, .db = trace_db(trace), .sink = sink, .err = err, .errlen = errlen,
		.next_uuid = 1, .next_tid = PSEUDO_TID_BASE, .nsample_devices = -1,
	};
	int64_t rows = 0;
	int ret;

	err[0] = '\0';
	ret = walk_prepare(&tl, "SELECT name FROM processes WHERE traceId = ?1 AND pid = ?2 LIMIT 1", &tl.process_name);
	if (!ret)
		ret = export_rows(&tl, &rows);
	if (ret < 0)
		goto out;
	progress_begin(&tl.progress, "export", "events", rows);
	if ((ret = index_pass(&tl)) < 0 || (ret = load_gpus(&tl)) < 0 ||
	    (ret = memory_summary_compute(trace, NULL, &tl.memory, err, errlen)) < 0)
		goto out;
	/* Tracks in the order a reader shows them by default: host processes, GPUs, findings. */
	if ((ret = sink->ops->begin(sink, tl.origin)) < 0 || (ret = declare_host_tracks(&tl)) < 0 ||
	    (ret = walk_host(&tl)) < 0 || (ret = declare_gpu_tracks(&tl)) < 0 || (ret = walk_gpu(&tl)) < 0 ||
	    (ret = walk_findings(&tl, findings)) < 0 || (ret = walk_critical_path(&tl, path, npath)) < 0)
		goto out;
	ret = sink->ops->finish(sink);
out:
	progress_end(&tl.progress);
	timeline_release(&tl);
	if (ret == -ENOMEM && !err[0])
		snprintf(err, errlen, "cannot export '%s': out of memory", trace_path(trace, 0));
	return ret;
}
