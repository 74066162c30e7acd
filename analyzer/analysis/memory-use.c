/*
 * GPU memory over time (see memory.h). One ordered read of the memory view per trace file and
 * device, a running sum, and a cursor over the trace's iterations; a few point queries afterwards
 * name what made the largest allocations and what ran at the peak. Memory grows with the devices,
 * the iterations and the points kept for the counter track (at most MEMORY_POINTS_MAX per device:
 * beyond, every other point is dropped, so the track keeps its shape while the peak, computed
 * from every record, stays exact).
 */
#include "analyzer/analysis/memory-use.h"

#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMORY_POINTS_MAX 65536

/* Device memory: ENUM_CUDA_MEM_KIND device (2), array (3), device static (5). Releases sort first
 * at equal times, so that a free and the allocation that reuses its bytes never count twice. */
static const char records_sql[] =
	"SELECT traceId, deviceId, start, op, bytes, correlationId, pid FROM memory "
	"WHERE memKind IN (2, 3, 5) AND op IN (0, 1) AND bytes >= 0 "
	"ORDER BY traceId, deviceId, start, op DESC";

struct walk_state {
	struct memory_device *d;
	const struct trace_phases *tp;		/* the device's trace's phases, NULL when none */
	int64_t *iteration_end_bytes;		/* in use at each iteration's end */
	size_t next_iteration;			/* the first iteration not yet ended */
	int64_t running;
	int64_t steady_start, steady_end;
	int64_t largest_corr[MEMORY_LARGEST], largest_pid[MEMORY_LARGEST];
};

static int query_prepare(struct trace *trace, const char *sql, sqlite3_stmt **st, char *err, size_t errlen)
{
	if (sqlite3_prepare_v2(trace_db(trace), sql, -1, st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "memory: cannot read the trace: %s", sqlite3_errmsg(trace_db(trace)));
		return -EIO;
	}
	return 0;
}

/* The text of the first row's first column of a one-row query, copied (NULL when none). */
static char *query_text(struct trace *trace, const char *sql, const int64_t *args, int nargs)
{
	sqlite3_stmt *st;
	char *text = NULL;

	if (sqlite3_prepare_v2(trace_db(trace), sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	for (int i = 0; i < nargs; i++)
		sqlite3_bind_int64(st, i + 1, args[i]);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		text = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return text;
}

static const struct trace_phases *phases_of(const struct phases *phases, int64_t trace_id)
{
	for (size_t i = 0; phases && i < phases->ntraces; i++)
		if (phases->traces[i].trace_id == trace_id && phases->traces[i].niterations)
			return &phases->traces[i];
	return NULL;
}

static int64_t iteration_begin(const struct iteration *it)
{
	return it->host_start ? it->host_start : it->start;
}

static int64_t iteration_finish(const struct iteration *it)
{
	return it->host_end ? it->host_end : it->end;
}

/* The 1-based iteration of tp holding time at, 0 when none. */
static int64_t iteration_at(const struct trace_phases *tp, int64_t at)
{
	for (size_t i = 0; tp && i < tp->niterations; i++)
		if (iteration_begin(&tp->iterations[i]) <= at && at < iteration_finish(&tp->iterations[i]))
			return (int64_t)i + 1;
	return 0;
}

static void add_point(struct memory_device *d, int64_t at, int64_t bytes)
{
	if (d->npoints && d->points[d->npoints - 1].at == at) {
		d->points[d->npoints - 1].bytes = bytes;
		return;
	}
	if (d->npoints == MEMORY_POINTS_MAX) {
		for (size_t i = 0; i < MEMORY_POINTS_MAX / 2; i++)
			d->points[i] = d->points[2 * i + 1];
		d->npoints = MEMORY_POINTS_MAX / 2;
	}
	if (!d->points)
		d->points = xcalloc(MEMORY_POINTS_MAX, sizeof(*d->points));
	d->points[d->npoints++] = (struct memory_point){ at, bytes };
}

static void keep_largest(struct walk_state *w, int64_t start, int64_t bytes, int64_t corr, int64_t pid)
{
	struct memory_device *d = w->d;
	size_t pos = d->nlargest;

	while (pos > 0 && d->largest[pos - 1].bytes < bytes)
		pos--;
	if (pos >= MEMORY_LARGEST)
		return;
	if (d->nlargest == MEMORY_LARGEST)
		d->nlargest--;
	memmove(&d->largest[pos + 1], &d->largest[pos], (d->nlargest - pos) * sizeof(d->largest[0]));
	memmove(&w->largest_corr[pos + 1], &w->largest_corr[pos], (d->nlargest - pos) * sizeof(int64_t));
	memmove(&w->largest_pid[pos + 1], &w->largest_pid[pos], (d->nlargest - pos) * sizeof(int64_t));
	d->largest[pos] = (struct memory_alloc){ .start = start, .bytes = bytes };
	w->largest_corr[pos] = corr;
	w->largest_pid[pos] = pid;
	d->nlargest++;
}

/* Close the iterations that ended before time at, with what was in use then. */
static void end_iterations(struct walk_state *w, int64_t at)
{
	while (w->tp && w->next_iteration < w->tp->niterations &&
	       iteration_finish(&w->tp->iterations[w->next_iteration]) <= at)
		w->iteration_end_bytes[w->next_iteration++] = w->running;
}

static void take_record(struct walk_state *w, int64_t start, int op, int64_t bytes, int64_t corr, int64_t pid)
{
	struct memory_device *d = w->d;

	end_iterations(w, start);
	if (op == 0) {
		w->running += bytes;
		d->allocs++;
		keep_largest(w, start, bytes, corr, pid);
	} else {
		w->running = w->running > bytes ? w->running - bytes : 0;
		d->releases++;
	}
	if (w->steady_end > w->steady_start && start >= w->steady_start && start < w->steady_end) {
		if (op == 0) {
			d->steady_allocs++;
			d->steady_alloc_bytes += bytes;
		} else {
			d->steady_releases++;
		}
	}
	if (w->running > d->peak_bytes) {
		d->peak_bytes = w->running;
		d->peak_at = start;
	}
	add_point(d, start, w->running);
}

/* The steady iterations' in-use at their ends: first, last, slope, and how often it rose. */
static void steady_growth(struct walk_state *w)
{
	struct memory_device *d = w->d;
	const struct trace_phases *tp = w->tp;
	double n, sx = 0, sy = 0, sxx = 0, sxy = 0;
	size_t first;

	if (!tp || tp->first_steady >= tp->niterations)
		return;
	end_iterations(w, INT64_MAX);
	first = tp->first_steady;
	d->steady_iterations = (int64_t)(tp->niterations - first);
	d->steady_first_bytes = w->iteration_end_bytes[first];
	d->steady_last_bytes = w->iteration_end_bytes[tp->niterations - 1];
	for (size_t i = first; i < tp->niterations; i++) {
		double x = (double)(i - first), y = (double)w->iteration_end_bytes[i];

		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		if (i > first && w->iteration_end_bytes[i] > w->iteration_end_bytes[i - 1])
			d->growing_iterations++;
	}
	n = (double)d->steady_iterations;
	if (n >= 2 && n * sxx - sx * sx > 0)
		d->growth_per_iteration = (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* Name the largest allocations' calls and ranges, and what ran at the peak. */
static void name_things(struct trace *trace, struct walk_state *w)
{
	static const char call_sql[] =
		"SELECT name FROM gpt_all_api_calls WHERE traceId = ? AND correlationId = ? LIMIT 1";
	static const char range_sql[] =
		"SELECT text FROM gpt_all_nvtx WHERE traceId = ? AND pid = ? AND eventType IN (59, 60) "
		"AND start <= ? AND \"end\" > ? ORDER BY start DESC LIMIT 1";
	static const char any_range_sql[] =
		"SELECT text FROM gpt_all_nvtx WHERE traceId = ? AND eventType IN (59, 60) "
		"AND start <= ? AND \"end\" > ? ORDER BY start DESC LIMIT 1";
	static const char kernel_sql[] =
		"SELECT name FROM gpt_all_kernels WHERE traceId = ? AND deviceId = ? AND start <= ? "
		"ORDER BY start DESC LIMIT 1";
	struct memory_device *d = w->d;

	for (size_t i = 0; i < d->nlargest; i++) {
		struct memory_alloc *a = &d->largest[i];
		int64_t call_args[] = { d->trace_id, w->largest_corr[i] };
		int64_t range_args[] = { d->trace_id, w->largest_pid[i], a->start, a->start };

		a->call = query_text(trace, call_sql, call_args, 2);
		a->range = query_text(trace, range_sql, range_args, 4);
		a->iteration = iteration_at(w->tp, a->start);
	}
	if (d->peak_bytes > 0) {
		int64_t range_args[] = { d->trace_id, d->peak_at, d->peak_at };
		int64_t kernel_args[] = { d->trace_id, d->device, d->peak_at };

		d->peak_range = query_text(trace, any_range_sql, range_args, 3);
		d->peak_kernel = query_text(trace, kernel_sql, kernel_args, 3);
		d->peak_iteration = iteration_at(w->tp, d->peak_at);
	}
}

static void read_capacities(struct trace *trace, struct memory_summary *m)
{
	static const char sql[] = "SELECT totalMemory FROM gpus WHERE traceId = ? AND id = ? AND totalMemory > 0";

	for (size_t i = 0; i < m->ndevices; i++) {
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(trace_db(trace), sql, -1, &st, NULL) != SQLITE_OK)
			return;
		sqlite3_bind_int64(st, 1, m->devices[i].trace_id);
		sqlite3_bind_int64(st, 2, m->devices[i].device);
		if (sqlite3_step(st) == SQLITE_ROW)
			m->devices[i].capacity = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
}

static void read_dropped(struct trace *trace, struct memory_summary *m)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(trace_db(trace), "SELECT sum(CAST(value AS INTEGER)) FROM meta WHERE name = "
				"'memory_records_dropped'", -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW)
		m->dropped = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
}

static void walk_begin(struct walk_state *w, struct memory_summary *m, const struct phases *phases,
		       int64_t trace_id, int64_t device)
{
	const struct trace_phases *tp = phases_of(phases, trace_id);

	free(w->iteration_end_bytes);
	memset(w, 0, sizeof(*w));
	m->devices = xrealloc(m->devices, (m->ndevices + 1) * sizeof(*m->devices));
	w->d = &m->devices[m->ndevices++];
	memset(w->d, 0, sizeof(*w->d));
	w->d->trace_id = trace_id;
	w->d->device = device;
	w->tp = tp;
	if (tp) {
		w->iteration_end_bytes = xcalloc(tp->niterations, sizeof(int64_t));
		if (tp->first_steady < tp->niterations) {
			w->steady_start = iteration_begin(&tp->iterations[tp->first_steady]);
			w->steady_end = iteration_finish(&tp->iterations[tp->niterations - 1]);
		}
	}
}

static void walk_end(struct trace *trace, struct walk_state *w)
{
	if (!w->d)
		return;
	w->d->end_bytes = w->running;
	steady_growth(w);
	name_things(trace, w);
}

int memory_summary_compute(struct trace *trace, const struct phases *phases, struct memory_summary **out,
			   char *err, size_t errlen)
{
	struct memory_summary *m = xcalloc(1, sizeof(*m));
	struct walk_state w = { 0 };
	sqlite3_stmt *st;
	int ret, rc;

	*out = NULL;
	ret = query_prepare(trace, records_sql, &st, err, errlen);
	if (ret < 0) {
		free(m);
		return ret;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t trace_id = sqlite3_column_int64(st, 0), device = sqlite3_column_int64(st, 1);

		if (!w.d || w.d->trace_id != trace_id || w.d->device != device) {
			walk_end(trace, &w);
			walk_begin(&w, m, phases, trace_id, device);
		}
		take_record(&w, sqlite3_column_int64(st, 2), sqlite3_column_int(st, 3), sqlite3_column_int64(st, 4),
			    sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "memory: cannot read the memory records: %s", sqlite3_errmsg(trace_db(trace)));
		free(w.iteration_end_bytes);
		memory_summary_free(m);
		return -EIO;
	}
	walk_end(trace, &w);
	free(w.iteration_end_bytes);
	read_capacities(trace, m);
	read_dropped(trace, m);
	*out = m;
	return 0;
}

void memory_summary_free(struct memory_summary *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->ndevices; i++) {
		struct memory_device *d = &m->devices[i];

		for (size_t j = 0; j < d->nlargest; j++) {
			free(d->largest[j].call);
			free(d->largest[j].range);
		}
		free(d->peak_range);
		free(d->peak_kernel);
		free(d->points);
	}
	free(m->devices);
	free(m);
}

int64_t memory_pool_reserved(const struct memory_device *d)
{
	static const char *const vmm[] = { "cuMemCreate", "cuMemMap", "cuMemSetAccess", "cuMemAddressReserve" };
	const struct memory_alloc *a = d->nlargest ? &d->largest[0] : NULL;
	int by_vmm = 0;

	if (!a || !a->call || a->iteration || d->capacity <= 0 || 2 * a->bytes < d->capacity ||
	    2 * a->bytes < d->peak_bytes)
		return 0;
	for (size_t i = 0; i < sizeof(vmm) / sizeof(vmm[0]); i++)
		by_vmm |= !strncmp(a->call, vmm[i], strlen(vmm[i]));
	return by_vmm ? a->bytes : 0;
}
