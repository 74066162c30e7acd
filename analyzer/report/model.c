/*
 * The report model (see report.h): the header read from the canonical views (what ran, where, for
 * how long; the devices as the phases' walk measured them), the rules run in table order and
 * ranked, the steady-state scope, and the sums every rendering shares. Knows no output format.
 */
#include "analyzer/report/report.h"
#include "analyzer/loader/events.h"
#include "analyzer/report/html/html.h"
#include "analyzer/analysis/memory-use.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the header ---- */

static void push(char ***list, size_t *n, char *s)
{
	*list = xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = s;
}

static int sql_failed(struct trace *trace, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot read %s: %s", what, sqlite3_errmsg(trace_db(trace)));
	return -EIO;
}

/* The loader's summaries: counted already by the phases' walk, or one count each. */
static int read_count(struct trace *trace, const char *view, int64_t *out, char *err, size_t errlen)
{
	*out = 0;
	for (size_t t = 0; t < trace_count(trace); t++) {
		struct event_summary m;
		int ret = event_summary_get(trace, view, t, &m, err, errlen);

		if (ret < 0)
			return ret;
		*out += m.rows;
	}
	return 0;
}

/*
 * One line per process: the command line our writer recorded (GPT_META "command_line"), else the
 * process name from PROCESSES, with the pid and, when recorded, the host.
 */
static int read_commands(struct trace *trace, struct report_header *hdr, char *err, size_t errlen)
{
	static const char sql[] =
		"SELECT p.traceId, p.pid, p.name, "
		"       (SELECT value FROM meta AS m WHERE m.traceId = p.traceId "
		"        AND m.name IN ('command', 'command_line', 'cmdline') LIMIT 1), "
		"       (SELECT value FROM meta AS m WHERE m.traceId = p.traceId AND m.name IN ('host', 'hostname') "
		"        LIMIT 1) "
		"FROM processes AS p ORDER BY p.traceId, p.pid";
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(trace_db(trace), sql, -1, &st, NULL) != SQLITE_OK)
		return sql_failed(trace, "processes", err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 2);
		const char *command = (const char *)sqlite3_column_text(st, 3);
		const char *host = (const char *)sqlite3_column_text(st, 4);

		push(&hdr->commands, &hdr->ncommands,
		     xasprintf("%s (pid %" PRId64 "%s%s)", command ? command : name ? name : "?",
				 (int64_t)sqlite3_column_int64(st, 1), host ? " on " : "", host ? host : ""));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_failed(trace, "processes", err, errlen);
}

/* The launches of trace t that --metrics measured (gpt_all_kernel_metrics: none without the view). */
static int count_measured(struct trace *trace, size_t t, int64_t *n, char *err, size_t errlen)
{
	sqlite3_stmt *st;

	*n = 0;
	if (!trace_view_exists(trace, "gpt_all_kernel_metrics"))
		return 0;
	if (sqlite3_prepare_v2(trace_db(trace), "SELECT count(DISTINCT correlationId) FROM gpt_all_kernel_metrics "
			       "WHERE traceId = ?1", -1, &st, NULL) != SQLITE_OK)
		return sql_failed(trace, "kernel metrics", err, errlen);
	sqlite3_bind_int64(st, 1, (int64_t)t);
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* What our writer says about the trace's own health: finished cleanly, records dropped. */
static int read_notes(struct trace *trace, struct report_header *hdr, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	for (size_t t = 0; t < trace_count(trace); t++) {
		int complete = 0;
		int64_t dropped = 0, replayed = 0;

		if (trace_format(trace, t) != TRACE_FORMAT_GPT)
			continue;
		if (sqlite3_prepare_v2(trace_db(trace), "SELECT name, value FROM meta WHERE traceId = ?1 AND "
				       "(name IN ('trace_complete', 'cupti_dropped_records') OR "
				       "name LIKE 'import\\_note\\_%' ESCAPE '\\') ORDER BY name",
				       -1, &st, NULL) != SQLITE_OK)
			return sql_failed(trace, "meta", err, errlen);
		sqlite3_bind_int64(st, 1, (int64_t)t);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 0);

			if (!strcmp(name, "trace_complete"))
				complete = sqlite3_column_int(st, 1) == 1;
			else if (!strncmp(name, "import_note_", 12))	/* what an imported trace lacks */
				push(&hdr->notes, &hdr->nnotes, xasprintf("%s: %s", trace_path(trace, t),
									    (const char *)sqlite3_column_text(st, 1)));
			else
				dropped = sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return sql_failed(trace, "meta", err, errlen);
		if (!complete)
			push(&hdr->notes, &hdr->nnotes,
			     xasprintf("%s was not finalized (the program crashed or was killed?): the last "
					 "events may be missing", trace_path(trace, t)));
		/* Kernel replay and SASS patching (--metrics) hold each measured launch call; the
		 * walk (analyzer/analysis/gaps.h: IDLE_PROFILER) counts that time as the
		 * profiler's. */
		if (count_measured(trace, t, &replayed, err, errlen) < 0)
			return -1;
		if (replayed > 0)
			push(&hdr->notes, &hdr->nnotes,
			     xasprintf("%s: %" PRId64 " launches were measured for hardware metrics "
					 "(--metrics): their kernel replay or SASS patching is the profiler's own "
					 "work, counted apart from launch cost and the causes of idle time",
					 trace_path(trace, t), replayed));
		if (dropped > 0)
			push(&hdr->notes, &hdr->nnotes,
			     xasprintf("%s: CUPTI dropped %" PRId64 " records; totals are underestimated",
					 trace_path(trace, t), dropped));
	}
	return 0;
}

static int compare_devices(const void *pa, const void *pb)
{
	const struct report_device *a = pa, *b = pb;

	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return 0;
}

/*
 * The devices as the phases' walk measured them (busy time and operations: no second pass), in
 * (trace, device) order, and the span: their work widened by API calls and syncs; 0, 0 when empty.
 */
static int read_devices(struct trace *trace, struct report_header *hdr, char *err, size_t errlen)
{
	const struct phases *ph = hdr->phases;
	int ret;

	hdr->start = INT64_MAX;
	hdr->end = INT64_MIN;
	hdr->ndevices = ph->ndevices;
	hdr->devices = xcalloc(hdr->ndevices ? hdr->ndevices : 1, sizeof(*hdr->devices));
	for (size_t i = 0; i < ph->ndevices; i++) {
		const struct phase_device *d = &ph->devices[i];

		hdr->devices[i] = (struct report_device){
			.trace_id = d->trace_id, .device = d->device,
			.label = trace_device_label(trace, d->trace_id, d->device),
			.busy_ns = d->busy_ns, .operations = d->operations,
		};
		if (d->first < hdr->start)
			hdr->start = d->first;
		if (d->last > hdr->end)
			hdr->end = d->last;
	}
	ret = event_span_widen(trace, "api_calls", &hdr->start, &hdr->end, err, errlen);
	if (!ret)
		ret = event_span_widen(trace, "syncs", &hdr->start, &hdr->end, err, errlen);
	if (ret < 0)
		return ret;
	if (hdr->ndevices > 1)
		qsort(hdr->devices, hdr->ndevices, sizeof(*hdr->devices), compare_devices);
	if (hdr->start > hdr->end)
		hdr->start = hdr->end = 0;
	return 0;
}

int report_header_read(struct trace *trace, const char *scope, struct report_header *hdr, char *err,
		       size_t errlen)
{
	int ret;

	if (!hdr->phases) {
		snprintf(err, errlen, "report header: the phases are not computed");
		return -EINVAL;
	}
	for (size_t t = 0; t < trace_count(trace); t++)
		push(&hdr->traces, &hdr->ntraces,
		     xasprintf("%s (%s)", trace_path(trace, t),
				 trace_format(trace, t) == TRACE_FORMAT_GPT ? "gpt-trace" : "nsys"));
	hdr->scope = scope ? xstrdup(scope) : NULL;
	ret = read_commands(trace, hdr, err, errlen);
	if (!ret)
		ret = read_notes(trace, hdr, err, errlen);
	if (!ret)
		ret = read_count(trace, "kernels", &hdr->kernels, err, errlen);
	if (!ret)
		ret = read_count(trace, "copies", &hdr->copies, err, errlen);
	if (!ret)
		ret = read_count(trace, "api_calls", &hdr->api_calls, err, errlen);
	if (!ret)
		ret = read_devices(trace, hdr, err, errlen);
	return ret < 0 ? ret : 0;
}

void report_header_release(struct report_header *hdr)
{
	if (!hdr)
		return;
	for (size_t i = 0; i < hdr->ntraces; i++)
		free(hdr->traces[i]);
	for (size_t i = 0; i < hdr->ncommands; i++)
		free(hdr->commands[i]);
	for (size_t i = 0; i < hdr->nnotes; i++)
		free(hdr->notes[i]);
	for (size_t i = 0; i < hdr->ndevices; i++)
		free(hdr->devices[i].label);
	report_charts_free(hdr->charts);
	free(hdr->traces);
	free(hdr->commands);
	free(hdr->notes);
	free(hdr->devices);
	free(hdr->scope);
	phases_free(hdr->phases);
	memory_summary_free(hdr->memory);
	memset(hdr, 0, sizeof(*hdr));
}

/* ---- rules ---- */

int report_run_rules(struct trace *trace, const struct rule_config *config, const char *const *ids, size_t nids,
		     int64_t origin, const struct phases *steady, struct findings *out, FILE *timings, char *err,
		     size_t errlen)
{
	struct rule_context ctx = {.an = {.trace = trace, .origin = origin},
				   .config = config,
				   .out = out,
				   .steady = steady};
	const struct rule **rules = NULL;
	size_t n = 0;
	int ret;

	for (size_t i = 0; ids ? i < nids : rule_table[i] != NULL; i++) {
		const struct rule *rule = ids ? rule_find(ids[i]) : rule_table[i];

		if (!rule) {
			snprintf(err, errlen, "unknown rule '%s'; 'gpt-trace rules' lists them", ids[i]);
			free(rules);
			return -EINVAL;
		}
		rules = xrealloc(rules, (n + 1) * sizeof(*rules));
		rules[n++] = rule;
	}
	/* The rules that read the time-ordered walk share one. */
	ret = rules_run(rules, n, &ctx, timings, err, errlen);
	free(rules);
	if (ret < 0)
		return ret;
	findings_rank(out);
	return (int)n;
}

int report_scope_steady(struct trace *trace, const struct phases *phases, int64_t *start, int64_t *end, char *err,
			size_t errlen)
{
	struct trace_scope scope = { 0 };

	phases_steady_window(phases, start, end);
	if (*end <= *start)
		*start = *end = INT64_MAX - 1;
	scope.start = *start;
	scope.end = *end + 1;
	return trace_set_scope(trace, &scope, err, errlen);
}

/* ---- sums the renderings share ---- */

int64_t report_busy_total(const struct report_header *hdr)
{
	int64_t busy = 0;

	/* Saturating: a damaged trace can hold times near INT64_MAX. */
	for (size_t i = 0; i < hdr->ndevices; i++)
		busy = hdr->devices[i].busy_ns > INT64_MAX - busy ? INT64_MAX : busy + hdr->devices[i].busy_ns;
	return busy;
}

int64_t report_judged_span(const struct report_header *hdr)
{
	return hdr->steady_only ? hdr->steady_end - hdr->steady_start : hdr->end - hdr->start;
}
