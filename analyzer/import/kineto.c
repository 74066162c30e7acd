/*
 * The PyTorch profiler's trace imported (see kineto.h): the JSON read as a stream (kineto-json.c),
 * each event made a row on the way (kineto-events.c), and here what only the end knows: the check
 * that the file was Kineto's, time 0 moved back if needed, threads, processes, devices, the notes on
 * what the file lacks, GPT_META, and the commit that renames the file into place.
 */
#define _GNU_SOURCE /* vasprintf */
#include "analyzer/import/kineto-private.h"

#include "common/util.h"
#include "schema/schema-version.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static int import_fail(struct import *im, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int import_fail(struct import *im, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!im->error[0]) {
		va_start(ap, fmt);
		vsnprintf(im->error, sizeof(im->error), fmt, ap);
		va_end(ap);
	}
	return ret;
}

static void note(struct import *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct import *im, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (im->nnotes >= MAX_NOTES)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		im->notes[im->nnotes++] = s;
}

/* ---- the end of the import ---- */

/* An event earlier than the first one's second came later in the file: move time 0 back to it. */
static int shift_times(struct import *im)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
		"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME",
		"NVTX_EVENTS" };
	int64_t d = ((-im->min_start + NS_PER_S - 1) / NS_PER_S) * NS_PER_S;
	char sql[160];

	if (im->min_start >= 0)
		return 0;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "UPDATE %s SET start = start + %" PRId64 ", end = end + %" PRId64,
			 tables[i], d, d);
		if (trace_out_exec(&im->out, sql) < 0)
			return -EIO;
	}
	for (size_t i = 0; i < im->nsteps; i++) {
		im->steps[i].start += d;
		im->steps[i].end += d;
	}
	im->origin -= d;
	return 0;
}

static int write_owners(struct import *im)
{
	char sql[160];

	if (!im->unowned_gpu_rows || !im->have_host_pid)
		return 0;
	for (int t = 0; t < 4; t++) {
		static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
						      "CUPTI_ACTIVITY_KIND_MEMSET",
						      "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" };

		snprintf(sql, sizeof(sql), "UPDATE %s SET globalPid = %" PRId64 " WHERE globalPid IS NULL", tables[t],
			 im->host_pid << TID_BITS);
		if (trace_out_exec(&im->out, sql) < 0)
			return -EIO;
	}
	return 0;
}

static int write_threads(struct import *im)
{
	for (size_t i = 0; i < im->thread_index.count; i++) {
		struct thread *t = &im->threads[i];
		int64_t v[THREAD_COLS];

		if (!t->used)
			continue;
		v[THREAD_GLOBAL_TID] = kineto_global_tid(im, t->pid, t->tid);
		v[THREAD_NAME] = t->name_id;
		if (!t->name_id) {
			char name[48];

			snprintf(name, sizeof(name), "thread %" PRId64, t->tid);
			v[THREAD_NAME] = trace_out_string(&im->out, name);
			if (v[THREAD_NAME] < 0)
				return -EIO;
		}
		if (trace_out_row(&im->out, OUT_THREAD, v) < 0)
			return -EIO;
	}
	return 0;
}

static int write_processes(struct import *im)
{
	int64_t v[PROCESS_COLS] = { im->host_pid << TID_BITS, im->host_pid };
	const char *name = NULL;

	if (!im->have_host_pid)
		return 0;
	for (size_t i = 0; i < im->process_names.count && !name; i++) {
		const char *entry = strtab_at(&im->process_names, i), *tab = strchr(entry, '\t');

		if (tab && strtoll(entry, NULL, 10) == im->host_pid)
			name = tab + 1;
	}
	return trace_out_process(&im->out, v, name);
}

static int write_devices(struct import *im, const struct kineto_header *hdr)
{
	static const int cols[GPU_COLS] = {
		[GPU_ID] = KD_ID, [GPU_TOTAL_MEM] = KD_TOTAL_MEM, [GPU_SMS] = KD_NUM_SMS, [GPU_MAJOR] = KD_MAJOR,
		[GPU_MINOR] = KD_MINOR, [GPU_THREADS_PER_BLOCK] = KD_THREADS_PER_BLOCK,
		[GPU_REGS_PER_BLOCK] = KD_REGS_PER_BLOCK, [GPU_REGS_PER_SM] = KD_REGS_PER_SM,
		[GPU_WARP_SIZE] = KD_WARP_SIZE, [GPU_SHMEM_PER_BLOCK] = KD_SHMEM_PER_BLOCK,
		[GPU_SHMEM_OPTIN] = KD_SHMEM_OPTIN, [GPU_SHMEM_PER_SM] = KD_SHMEM_PER_SM, [GPU_WARPS_PER_SM] = -1,
	};

	for (size_t i = 0; i < hdr->ndevices; i++) {
		const struct kineto_device *d = &hdr->devices[i];
		int64_t v[GPU_COLS];

		for (int c = 0; c < GPU_COLS; c++)
			v[c] = cols[c] >= 0 && d->have & (1u << cols[c]) ? d->v[cols[c]] : TRACE_OUT_NULL;
		if (!(d->have & (1u << KD_ID)))
			v[GPU_ID] = (int64_t)i;
		/* warps per SM: the threads an SM holds, in warps */
		if (d->have & (1u << KD_THREADS_PER_SM) && d->have & (1u << KD_WARP_SIZE) && d->v[KD_WARP_SIZE] > 0)
			v[GPU_WARPS_PER_SM] = d->v[KD_THREADS_PER_SM] / d->v[KD_WARP_SIZE];
		if (trace_out_gpu(&im->out, v, d->name) < 0)
			return -EIO;
	}
	return 0;
}

static int64_t median_step(const struct import *im, size_t n)
{
	int64_t *d = xmalloc((n ? n : 1) * sizeof(*d)), m;

	for (size_t i = 0; i < n; i++)
		d[i] = im->steps[i].end - im->steps[i].start;
	for (size_t i = 1; i < n; i++)	/* few steps: insertion sort */
		for (size_t j = i; j > 0 && d[j - 1] > d[j]; j--) {
			int64_t t = d[j];

			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	m = n ? d[n / 2] : 0;
	free(d);
	return m;
}

/* The notes on what the file lacks, each said once. */
static int count_query(struct import *im, const char *sql, int64_t *n)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(im->out.db, sql, -1, &st, NULL);

	*n = 0;
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : -EIO;
}

static void write_notes_of_data(struct import *im, const struct kineto_header *hdr)
{
	int64_t unlaunched = 0, kernels = im->out.rows[OUT_KERNEL];

	note(im, "only the profiler's recording window is in the trace (torch.profiler records the active steps "
	     "of its schedule): start-up and warm-up before it are not");
	if (hdr->bad_base)
		note(im, "baseTimeNanoseconds is out of range (not a count of ns since the epoch): ignored, so the "
		     "trace's times are read as they stand and its date (start_time_utc) is not the recording's");
	if (!hdr->has_distributed)
		note(im, "no distributedInfo: torch.distributed was not initialised when the profiler ran, so the "
		     "trace has no rank identity");
	if (!kernels && !im->out.rows[OUT_MEMCPY] && !im->out.rows[OUT_MEMSET])
		note(im, "no CUDA GPU activity in the trace (no kernel, gpu_memcpy or gpu_memset events: a CPU-only "
		     "profile, or another device's, whose categories are in import_skipped)");
	if (kernels && !im->out.rows[OUT_API])
		note(im, "no cuda_runtime events: kernels have no launch calls, so idle time cannot be attributed "
		     "to what the host did");
	else if (kernels && count_query(im, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS "
				       "(SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = "
				       "k.correlationId)", &unlaunched) == 0 && unlaunched)
		note(im, "%" PRId64 " of %" PRId64 " kernels have no launch call in the trace (launched before the "
		     "window, or from a thread the profiler did not record)", unlaunched, kernels);
	if (im->kernels_without_dims)
		note(im, "%" PRId64 " kernels have no grid or block in their args: stored as 0", im->kernels_without_dims);
	if (im->out.changes_ignored)
		note(im, "%" PRId64 " runtime calls repeat an earlier call's correlation id: the first is kept",
		     im->out.changes_ignored);
	if (im->untimed)
		note(im, "%" PRId64 " events have no timestamp (or no pid) and were not imported", im->untimed);
	if (im->out_of_range)
		note(im, "%" PRId64 " events have a ts or dur out of range (not a number of ns, a negative ts or dur, "
		     "or a dur over a day) and were not imported", im->out_of_range);
	if (im->host_pids > 1)
		note(im, "host events of %" PRId64 " processes: GPU work is attributed to pid %" PRId64
		     " (the first)", im->host_pids, im->host_pid);
}

/* The last ProfilerStep when the recording stopped inside it: shorter than the others, not a slow or
 * fast step of the program. */
static void write_note_of_last_step(struct import *im)
{
	const struct step *last;
	int64_t median;

	if (im->nsteps < 2 || !im->have_window)
		return;
	last = &im->steps[im->nsteps - 1];
	for (size_t i = 0; i + 1 < im->nsteps; i++)
		if (im->steps[i].start > last->start)
			last = &im->steps[i];
	median = median_step(im, im->nsteps);
	if (last->end >= im->window_end - im->origin - 1000 && last->end - last->start < median / 2)
		note(im, "the last ProfilerStep (%.3f ms, median %.3f ms) ends with the recording window: it was cut "
		     "short", (double)(last->end - last->start) / 1e6, (double)median / 1e6);
}

static int write_skipped(struct import *im)
{
	size_t len = 0;
	char *s = NULL;
	int ret;

	for (size_t i = 0; i < im->skipped.count; i++) {
		char *item = xasprintf("%s%s %" PRId64, len ? ", " : "", strtab_at(&im->skipped, i),
				       im->skipped_count[i]);
		size_t n = strlen(item);

		s = xrealloc(s, len + n + 1);
		memcpy(s + len, item, n + 1);
		len += n;
		free(item);
	}
	ret = trace_out_meta(&im->out, "import_skipped", s ? s : "none");
	free(s);
	return ret;
}

static void utc_text(int64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / NS_PER_S);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Where the trace came from and what it is, as GPT_META facts (docs/schema.md, docs/import.md). */
static int write_meta(struct import *im, const struct kineto_header *hdr)
{
	struct trace_out *o = &im->out;
	int64_t origin = (hdr->has_base ? hdr->base_ns : 0) + im->origin;
	char format[96], when[40];
	struct stat st;
	int ret = 0;

	snprintf(format, sizeof(format), "kineto%s schemaVersion %s", im->legacy_events ? " (legacy categories)" : "",
		 hdr->has_schema_version ? "" : "absent");
	if (hdr->has_schema_version)
		snprintf(format, sizeof(format), "kineto%s schemaVersion %" PRId64,
			 im->legacy_events ? " (legacy categories)" : "", hdr->schema_version);
	utc_text(origin, when, sizeof(when));
	ret |= trace_out_meta(o, "gpt_schema_version", GPT_SCHEMA_VERSION);
	ret |= trace_out_meta(o, "tool_version", GPT_TRACE_VERSION);
	ret |= trace_out_meta(o, "import_source", im->path);
	ret |= trace_out_meta(o, "import_format", format);
	if (stat(im->path, &st) == 0) {
		ret |= trace_out_meta_int(o, "import_source_size", (int64_t)st.st_size);
		ret |= trace_out_meta_int(o, "import_source_mtime_ns",
					  (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec);
	}
	ret |= trace_out_meta(o, "time_clock", hdr->has_base ? "CLOCK_REALTIME (Kineto: baseTimeNanoseconds + ts)" :
				  "CLOCK_REALTIME (Kineto: ts in epoch microseconds)");
	ret |= trace_out_meta_int(o, "time_origin_ns", origin);
	ret |= trace_out_meta_int(o, "time_origin_utc_ns", origin);
	ret |= trace_out_meta(o, "start_time_utc", when);
	if (im->have_host_pid)
		ret |= trace_out_meta_int(o, "pid", im->host_pid);
	if (hdr->host && *hdr->host)
		ret |= trace_out_meta(o, "host", hdr->host);
	if (hdr->has_rank) {
		ret |= trace_out_meta_int(o, "rank", hdr->rank);
		ret |= trace_out_meta(o, "rank_launcher", "torch.distributed (Kineto distributedInfo)");
	}
	if (hdr->has_world_size)
		ret |= trace_out_meta_int(o, "world_size", hdr->world_size);
	if (hdr->backend)
		ret |= trace_out_meta(o, "distributed_backend", hdr->backend);
	if (hdr->nccl_version)
		ret |= trace_out_meta(o, "nccl_version", hdr->nccl_version);
	ret |= trace_out_meta_int(o, "kernel_records", o->rows[OUT_KERNEL]);
	ret |= trace_out_meta_int(o, "memcpy_records", o->rows[OUT_MEMCPY]);
	ret |= trace_out_meta_int(o, "memset_records", o->rows[OUT_MEMSET]);
	ret |= trace_out_meta_int(o, "sync_records", o->rows[OUT_SYNC]);
	ret |= trace_out_meta_int(o, "api_records", o->rows[OUT_API]);
	ret |= trace_out_meta_int(o, "nvtx_records", o->rows[OUT_NVTX]);
	ret |= write_skipped(im);
	for (int i = 0; i < im->nnotes; i++) {
		char name[32];

		snprintf(name, sizeof(name), "import_note_%02d", i + 1);
		ret |= trace_out_meta(o, name, im->notes[i]);
	}
	ret |= trace_out_meta(o, "trace_complete", "1");
	return ret ? -EIO : 0;
}

static int session_start(struct import *im, const struct kineto_header *hdr)
{
	int64_t origin = (hdr->has_base ? hdr->base_ns : 0) + im->origin;
	char sql[200], when[40];

	utc_text(origin, when, sizeof(when));
	when[strlen(when) - 1] = '\0';
	snprintf(sql, sizeof(sql), "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (%" PRId64 ", '%s', NULL)",
		 origin, when);
	return trace_out_exec(&im->out, sql);
}

/* What makes a file not a Kineto trace, found only once it has been read. */
static int check_kineto(struct import *im, const struct kineto_header *hdr)
{
	if (!hdr->has_trace_events)
		return import_fail(im, -EINVAL, "cannot import '%s': not a PyTorch profiler (Kineto) trace: no "
				   "traceEvents", im->path);
	if (!hdr->events)
		return import_fail(im, -EINVAL, "cannot import '%s': traceEvents is empty (the profiler recorded "
				   "nothing)", im->path);
	if (!im->kineto_events || (!hdr->has_schema_version && !im->legacy_events &&
				   im->foreign_events > im->kineto_events))
		return import_fail(im, -EINVAL, "cannot import '%s': a Chrome trace, but not the PyTorch profiler's "
				   "(Kineto): none of its %" PRId64 " events has a Kineto category (kernel, "
				   "cuda_runtime, cpu_op...)", im->path, hdr->events);
	return 0;
}

static int finish(struct import *im, const struct kineto_header *hdr)
{
	int ret = check_kineto(im, hdr);

	if (!ret && !im->have_origin)
		return import_fail(im, -EINVAL, "cannot import '%s': no event has a timestamp", im->path);
	if (!ret)
		ret = shift_times(im);
	if (!ret)
		ret = write_owners(im);
	if (!ret)
		ret = write_threads(im);
	if (!ret)
		ret = write_processes(im);
	if (!ret)
		ret = write_devices(im, hdr);
	if (!ret)
		ret = session_start(im, hdr);
	if (!ret) {
		write_notes_of_data(im, hdr);
		write_note_of_last_step(im);
		ret = write_meta(im, hdr);
	}
	return ret;
}

static void import_release(struct import *im)
{
	key_index_release(&im->pids);
	key_index_release(&im->thread_index);
	key_index_release(&im->short_index);
	free(im->short_ids);
	free(im->threads);
	strtab_release(&im->process_names);
	strtab_release(&im->skipped);
	free(im->skipped_count);
	free(im->steps);
	for (int i = 0; i < im->nnotes; i++)
		free(im->notes[i]);
}

static void fill_counts(const struct import *im, const struct kineto_header *hdr, struct kineto_import_counts *c)
{
	c->events = hdr->events;
	c->bytes = hdr->bytes;
	c->kernels = im->out.rows[OUT_KERNEL];
	c->copies = im->out.rows[OUT_MEMCPY];
	c->sets = im->out.rows[OUT_MEMSET];
	c->syncs = im->out.rows[OUT_SYNC];
	c->api_calls = im->out.rows[OUT_API];
	c->ranges = im->out.rows[OUT_NVTX];
	c->steps = (int64_t)im->nsteps;
	c->notes = im->nnotes;
}

static int is_sqlite(const char *path)
{
	char head[16] = "";
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	if (fread(head, 1, sizeof(head), f) != sizeof(head))
		head[0] = '\0';
	fclose(f);
	return !memcmp(head, "SQLite format 3", 16);
}

int kineto_import(const char *json_path, const char *out_path, struct kineto_import_counts *counts, char *err,
		  size_t errlen)
{
	struct import im = { .path = json_path, .counts = counts };
	struct kineto_header hdr;
	int ret;

	if (counts)
		memset(counts, 0, sizeof(*counts));
	if (is_sqlite(json_path)) {
		snprintf(err, errlen, "cannot import '%s': it is a SQLite file already (a trace every command reads "
			 "as it is)", json_path);
		return -EINVAL;
	}
	ret = trace_out_create(&im.out, out_path);
	if (ret < 0) {
		snprintf(err, errlen, "%s", im.out.error);
		import_release(&im);
		return ret;
	}
	ret = kineto_read(json_path, kineto_on_event, &im, &hdr, err, errlen);
	if (ret < 0 && (im.error[0] || im.out.error[0]))
		snprintf(err, errlen, "%s", im.error[0] ? im.error : im.out.error);
	if (!ret)
		ret = finish(&im, &hdr);
	if (!ret)
		ret = trace_out_commit(&im.out);
	if (ret < 0 && (im.error[0] || im.out.error[0]))
		snprintf(err, errlen, "%s", im.error[0] ? im.error : im.out.error);
	if (!ret && counts)
		fill_counts(&im, &hdr, counts);
	trace_out_abort(&im.out);
	kineto_header_release(&hdr);
	import_release(&im);
	return ret;
}
