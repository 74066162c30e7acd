/*
 * What the analyses and the rules read and write with (analysis.h): SQL on the trace with error
 * lines that say who asked, the trace's clock, and evidence text.
 */
#include "analyzer/analysis/analysis.h"
#include "analyzer/loader/events.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *who(const struct analysis_context *a)
{
	return a->who ? a->who : "analysis";
}

int analysis_prepare(const struct analysis_context *a, const char *sql, sqlite3_stmt **stmt,
		     char *err, size_t errlen)
{
	sqlite3 *db = trace_db(a->trace);

	if (sqlite3_prepare_v2(db, sql, -1, stmt, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot query the trace: %s", who(a), sqlite3_errmsg(db));
		*stmt = NULL;
		return -EIO;
	}
	return 0;
}

int analysis_step_error(const struct analysis_context *a, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: cannot read the trace: %s", who(a),
		 sqlite3_errmsg(trace_db(a->trace)));
	return -EIO;
}

int analysis_query(const struct analysis_context *a, const char *sql, analysis_row_fn *row,
		   void *arg, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int ret = analysis_prepare(a, sql, &st, err, errlen);
	int rc;

	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		row(st, arg);
	if (rc != SQLITE_DONE)
		ret = analysis_step_error(a, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

const char *analysis_column_text(sqlite3_stmt *stmt, int col)
{
	const unsigned char *s = sqlite3_column_text(stmt, col);

	return s ? (const char *)s : "";
}

int span_clock_init(struct span_clock *clock, const struct analysis_context *a, char *err,
		    size_t errlen)
{
	int ret = 0;

	memset(clock, 0, sizeof(*clock));
	clock->ntraces = trace_count(a->trace);
	clock->span_start = xcalloc(clock->ntraces ? clock->ntraces : 1, sizeof(int64_t));
	clock->span_end = xcalloc(clock->ntraces ? clock->ntraces : 1, sizeof(int64_t));
	clock->origin = INT64_MAX;
	for (size_t id = 0; id < clock->ntraces; id++) {
		char why[256];

		/* The loader remembers spans per scope: the analyses of one report share one scan.
		 */
		ret = trace_span(a->trace, id, &clock->span_start[id], &clock->span_end[id], why,
				 sizeof(why));
		if (ret < 0) {
			snprintf(err, errlen, "%s: %s", who(a), why);
			break;
		}
		if (ret && clock->span_start[id] < clock->origin)
			clock->origin = clock->span_start[id];
		ret = 0;
	}
	if (clock->origin == INT64_MAX)
		clock->origin = 0;
	if (a->origin)
		clock->origin = a->origin;
	if (ret == 0)
		return 0;
	span_clock_release(clock);
	return ret;
}

int span_clock_once(struct span_clock *clock, const struct analysis_context *a, char *err,
		    size_t errlen)
{
	if (clock->span_start)
		return 0;
	return span_clock_init(clock, a, err, errlen);
}

void span_clock_release(struct span_clock *clock)
{
	free(clock->span_start);
	free(clock->span_end);
	memset(clock, 0, sizeof(*clock));
}

int64_t span_clock_span(const struct span_clock *clock, int64_t trace_id)
{
	if (trace_id < 0 || (size_t)trace_id >= clock->ntraces)
		return 0;
	return clock->span_end[trace_id] - clock->span_start[trace_id];
}

int64_t span_clock_total_span(const struct span_clock *clock)
{
	int64_t span = 0;

	for (size_t t = 0; t < clock->ntraces; t++)
		span += span_clock_span(clock, (int64_t)t);
	return span;
}

const char *fmt_at(struct fmt_text *t, const struct span_clock *clock, int64_t ns)
{
	/* An event before the origin (a Kineto trace's first CPU op) reads "-0.265 ms", not
	 * "+-0.265". */
	snprintf(t->s, sizeof(t->s), "%s%.3f ms", ns < clock->origin ? "-" : "+",
		 (double)(ns < clock->origin ? clock->origin - ns : ns - clock->origin) / 1e6);
	return t->s;
}

const char *fmt_name(struct fmt_text *t, const char *name)
{
	/* Templated kernels differ in the middle or at the end ("...(instance 12)]>(Range1d, T1)"),
	 * so a long name keeps its head and its tail. */
	size_t len = strlen(name), head = FMT_NAME_MAX * 2 / 3, tail = FMT_NAME_MAX - head - 3;

	if (len <= FMT_NAME_MAX)
		snprintf(t->s, sizeof(t->s), "%s", name);
	else
		snprintf(t->s, sizeof(t->s), "%.*s...%s", (int)head, name, name + len - tail);
	return t->s;
}

const char *fmt_percent(struct fmt_text *t, double fraction)
{
	snprintf(t->s, sizeof(t->s), "%.1f%%", 100.0 * fraction);
	return t->s;
}

const char *fmt_device(struct fmt_text *t, struct trace *trace, int64_t trace_id, int64_t device)
{
	if (trace_count(trace) > 1)
		snprintf(t->s, sizeof(t->s), "trace %" PRId64 " device %" PRId64, trace_id, device);
	else
		snprintf(t->s, sizeof(t->s), "device %" PRId64, device);
	return t->s;
}

const char *fmt_kernel_name(struct fmt_text *t, struct trace *trace, int64_t trace_id,
			    int64_t name_id)
{
	/* Rules and analyses carry nameIds through their passes and resolve only the few names they
	 * print; a kernel's nameId is the StringIds id of its name. */
	const char *name;
	char err[256];

	snprintf(t->s, sizeof(t->s), "?");
	if (trace_string(trace, trace_id, name_id, &name, err, sizeof(err)) == 0 && name)
		fmt_name(t, name);
	return t->s;
}

const char *copy_kind_name(int kind)
{
	static const char *const names[] = {
	    [1] = "HtoD",      [2] = "DtoH",	  [3] = "HtoA",	     [4] = "AtoH", [5] = "AtoA",
	    [6] = "AtoD",      [7] = "DtoA",	  [8] = "DtoD",	     [9] = "HtoH", [10] = "PtoP",
	    [11] = "UVM HtoD", [12] = "UVM DtoH", [13] = "UVM DtoD",
	};

	if (kind > 0 && (size_t)kind < sizeof(names) / sizeof(names[0]))
		return names[kind];
	return "copy";
}
