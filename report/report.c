/*
 * gpt-trace report (see report.h): the header read from the canonical views, the rules run in table
 * order, and the text, Markdown and JSON renderings (the HTML page: report/html/). The JSON
 * rendering is the stable one: its fields are documented in docs/report-json.md and any change to
 * them bumps REPORT_JSON_SCHEMA.
 */
#include "report/report.h"
#include "loader/events.h"
#include "report/html/html.h"
#include "stats/stats.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- output helpers ---- */

int report_format_parse(const char *name, enum report_format *out)
{
	if (!strcmp(name, "text"))
		*out = REPORT_FORMAT_TEXT;
	else if (!strcmp(name, "markdown") || !strcmp(name, "md"))
		*out = REPORT_FORMAT_MARKDOWN;
	else if (!strcmp(name, "json"))
		*out = REPORT_FORMAT_JSON;
	else
		return -1;
	return 0;
}

void report_json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

void report_md_cell(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

const char *report_duration(int64_t ns, char *buf, size_t len)
{
	int64_t a = ns < 0 ? -ns : ns;

	if (a >= 1000000000)
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	else if (a >= 1000000)
		snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
	else if (a >= 1000)
		snprintf(buf, len, "%.3f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%" PRId64 " ns", ns);
	return buf;
}

/*
 * A finding's place, one end of its span: as report_duration(), but a span that report_duration()
 * would show as "+4.080 s to +4.080 s" (shorter than a thousandth of where it ends) is given in
 * milliseconds to the microsecond, as the evidence gives its gaps.
 */
static const char *where_at(int64_t at, int64_t span, char *buf, size_t len)
{
	int64_t a = at < 0 ? -at : at;

	if (a >= 1000000 && span >= 0 && span < a / 1000) {
		snprintf(buf, len, "%.3f ms", (double)at / 1e6);
		return buf;
	}
	return report_duration(at, buf, len);
}

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
				       "name IN ('trace_complete', 'cupti_dropped_records', 'replayed_kernel_rows_timed')",
				       -1, &st, NULL) != SQLITE_OK)
			return sql_failed(trace, "meta", err, errlen);
		sqlite3_bind_int64(st, 1, (int64_t)t);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 0);

			if (!strcmp(name, "trace_complete"))
				complete = sqlite3_column_int(st, 1) == 1;
			else if (!strcmp(name, "replayed_kernel_rows_timed"))
				replayed = sqlite3_column_int64(st, 1);
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
		/* Kernel replay (--metrics) holds each profiled launch call for all its passes. */
		hdr->replayed_launches += replayed;
		if (replayed > 0)
			push(&hdr->notes, &hdr->nnotes,
			     xasprintf("%s: %" PRId64 " launches were replayed for hardware metrics "
					 "(--metrics): launch calls and GPU idle time around them are stretched, "
					 "so timing findings are not judged (info, nothing recoverable); trace "
					 "without --metrics for timing", trace_path(trace, t), replayed));
		if (dropped > 0)
			push(&hdr->notes, &hdr->nnotes,
			     xasprintf("%s: CUPTI dropped %" PRId64 " records; totals are underestimated",
					 trace_path(trace, t), dropped));
	}
	return 0;
}

int report_header_read(struct trace *trace, const char *scope, struct report_header *hdr, char *err,
		       size_t errlen)
{
	struct stats *st = NULL;
	int ret;

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
	if (!ret && hdr->phases) {
		/* The phases' walk measured every device's busy time already: no second pass. */
		struct stats_device_busy *busy = xcalloc(hdr->phases->ndevices + 1, sizeof(*busy));

		for (size_t i = 0; i < hdr->phases->ndevices; i++) {
			const struct phase_device *d = &hdr->phases->devices[i];

			busy[i] = (struct stats_device_busy){ .trace_id = d->trace_id, .device = d->device,
							      .first = d->first, .last = d->last,
							      .busy_ns = d->busy_ns, .operations = d->operations };
		}
		ret = stats_compute_devices_from(trace, busy, hdr->phases->ndevices, &st, err, errlen);
		free(busy);
	} else if (!ret) {
		ret = stats_compute_devices(trace, &st, err, errlen);
	}
	if (ret < 0)
		return ret;
	hdr->start = st->start;
	hdr->end = st->end;
	hdr->ndevices = st->devices.count;
	hdr->devices = xcalloc(hdr->ndevices ? hdr->ndevices : 1, sizeof(*hdr->devices));
	for (size_t i = 0; i < st->devices.count; i++) {
		const struct stats_row *r = &st->devices.rows[i];

		hdr->devices[i] = (struct report_device){
			.trace_id = r->key[0], .device = r->key[1], .label = xstrdup(r->label),
			.busy_ns = r->busy_ns, .operations = r->sum.count,
		};
	}
	stats_free(st);
	return 0;
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
	memset(hdr, 0, sizeof(*hdr));
}

/* ---- rules ---- */

int report_run_rules(struct trace *trace, const struct rule_config *config, const char *const *ids, size_t nids,
		     int64_t origin, struct findings *out, FILE *timings, char *err, size_t errlen)
{
	struct rule_context ctx = { .trace = trace, .config = config, .out = out, .origin = origin };
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

void report_discount_replayed(const struct report_header *hdr, struct findings *findings)
{
	if (!hdr->replayed_launches)
		return;
	for (size_t i = 0; i < findings->count; i++) {
		struct finding *f = &findings->items[i];

		/* Hardware counters are what --metrics is for; everything else timed the replayed run. */
		if (!strcmp(f->rule_id, "uncoalesced-access"))
			continue;
		finding_evidence(f, "not judged: %" PRId64 " launches were replayed for hardware metrics, which "
				 "stretches launch calls and the idle time around them (the estimate was %.3f ms); "
				 "trace without --metrics to judge timing", hdr->replayed_launches,
				 (double)f->recoverable_ns / 1e6);
		f->severity = SEVERITY_INFO;
		f->recoverable_ns = 0;
	}
	findings_rank(findings);
}

/* ---- rendering ---- */

static const char *severity_name(enum finding_severity s)
{
	switch (s) {
	case SEVERITY_CRITICAL:
		return "critical";
	case SEVERITY_WARNING:
		return "warning";
	default:
		return "info";
	}
}

static const char *severity_color(enum finding_severity s)
{
	switch (s) {
	case SEVERITY_CRITICAL:
		return "\033[1;31m";
	case SEVERITY_WARNING:
		return "\033[1;33m";
	default:
		return "\033[1;36m";
	}
}

int64_t report_busy_total(const struct report_header *hdr)
{
	int64_t busy = 0;

	/* Saturating: a damaged trace can hold times near INT64_MAX. */
	for (size_t i = 0; i < hdr->ndevices; i++)
		busy = hdr->devices[i].busy_ns > INT64_MAX - busy ? INT64_MAX : busy + hdr->devices[i].busy_ns;
	return busy;
}

/* The share of the span the GPUs were busy, averaged over the devices that ran work. */
static double busy_share(const struct report_header *hdr)
{
	int64_t span = hdr->end - hdr->start;

	if (span <= 0 || !hdr->ndevices)
		return 0.0;
	return (double)report_busy_total(hdr) / ((double)span * (double)hdr->ndevices);
}

int64_t report_judged_span(const struct report_header *hdr)
{
	return hdr->steady_only ? hdr->steady_end - hdr->steady_start : hdr->end - hdr->start;
}

static int64_t recoverable_total(const struct findings *findings)
{
	int64_t total = 0;

	for (size_t i = 0; i < findings->count; i++)
		total += findings->items[i].recoverable_ns;
	return total;
}

/* ---- phases and iterations ---- */

static int64_t split_sum(const struct time_split *s)
{
	return s->compute_ns + s->comm_ns + s->copy_ns + s->idle_ns;
}

static int64_t phase_length(const struct phase *ph)
{
	return ph->end - ph->start;
}

/* "host code in NVTX range 'compile' 2.900 s, blocked in cudaDeviceSynchronize 1.2 ms" (n largest). */
static void causes_line(FILE *out, const struct phase *ph, size_t n)
{
	char label[256], a[32];

	for (size_t i = 0; i < ph->ncauses && i < n; i++)
		fprintf(out, "%s%s %s", i ? ", " : "", idle_cause_label(&ph->causes[i], label, sizeof(label)),
			report_duration(ph->causes[i].ns, a, sizeof(a)));
}

/* The time split of steady iterations, per iteration on average. */
static void split_line(FILE *out, const struct time_split *s, int64_t per)
{
	char a[32], b[32], c[32], d[32];

	if (per < 1)
		per = 1;
	fprintf(out, "compute %s, communication %s, copies/memsets %s, idle %s",
		report_duration(s->compute_ns / per, a, sizeof(a)), report_duration(s->comm_ns / per, b, sizeof(b)),
		report_duration(s->copy_ns / per, c, sizeof(c)), report_duration(s->idle_ns / per, d, sizeof(d)));
}

static const char *source_words(const struct trace_phases *tp, char *buf, size_t len)
{
	switch (tp->source) {
	case ITERATIONS_STEP:
		snprintf(buf, len, "NVTX ranges matching --step '%s'", tp->source_name);
		break;
	case ITERATIONS_NVTX:
		snprintf(buf, len, "NVTX range '%s'", tp->source_name);
		break;
	case ITERATIONS_KERNELS:
		snprintf(buf, len, "a repeating sequence of %" PRId64 " kernels beginning with %s", tp->period_ops,
			 tp->source_name);
		break;
	default:
		snprintf(buf, len, "none found (no repeating NVTX range, no repeating kernel sequence)");
	}
	return buf;
}

/* What made a slow iteration slow: the part of its split furthest above the steady median's. */
static void slow_why(FILE *out, const struct trace_phases *tp, const struct iteration *it)
{
	const struct time_split *s = &it->split;
	int64_t nsteady = (int64_t)(tp->niterations - tp->first_steady);
	const struct time_split *total = &tp->phase[PHASE_STEADY].split;
	int64_t excess[4] = {
		s->compute_ns - total->compute_ns / nsteady, s->comm_ns - total->comm_ns / nsteady,
		s->copy_ns - total->copy_ns / nsteady, s->idle_ns - total->idle_ns / nsteady,
	};
	static const char *const what[4] = { "compute", "communication", "copies/memsets", "idle" };
	char a[32], label[256];
	int k = 0;

	for (int i = 1; i < 4; i++)
		if (excess[i] > excess[k])
			k = i;
	if (excess[k] <= 0) {
		fprintf(out, "no part above the average");
		return;
	}
	fprintf(out, "%s +%s over the average", what[k], report_duration(excess[k], a, sizeof(a)));
	if (k == 3 && it->top_ns > 0) {
		struct idle_cause c = { .kind = it->top_kind, .detail = it->top_detail };

		fprintf(out, "; largest idle: %s %s", idle_cause_label(&c, label, sizeof(label)),
			report_duration(it->top_ns, a, sizeof(a)));
	}
}

static void write_phases_text(FILE *out, const struct report_header *hdr, const char *bold, const char *reset)
{
	char a[32], b[32], c[64], words[256];

	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];
		const struct phase *steady = &tp->phase[PHASE_STEADY];
		int64_t nsteady = (int64_t)(tp->niterations - tp->first_steady);

		fprintf(out, "%sphases%s", bold, reset);
		if (hdr->phases->ntraces > 1)
			fprintf(out, " of %s", hdr->traces[t]);
		if (!tp->gpu_work) {
			fprintf(out, "     none: nothing ran on a GPU\n\n");
			continue;
		}
		fprintf(out, "\n");
		for (int i = 0; i < PHASE_COUNT; i++) {
			const struct phase *ph = &tp->phase[i];

			snprintf(c, sizeof(c), "+%s", report_duration(ph->start - hdr->origin, a, sizeof(a)));
			fprintf(out, "  %-10s %-14s %-12s %s\n", phase_name((enum phase_id)i), c,
				report_duration(phase_length(ph), b, sizeof(b)), ph->reason ? ph->reason : "");
		}
		fprintf(out, "  iterations %s\n", source_words(tp, words, sizeof(words)));
		if (nsteady > 0) {
			fprintf(out, "             %" PRId64 " steady of %zu, median %s, p90 %s\n", nsteady, tp->niterations,
				report_duration(tp->median_ns, a, sizeof(a)), report_duration(tp->p90_ns, b, sizeof(b)));
			fprintf(out, "             per iteration: ");
			split_line(out, &steady->split, nsteady);
			fprintf(out, "\n");
			for (size_t i = 0; i < tp->nslowest && nsteady > 2; i++) {
				const struct iteration *it = &tp->iterations[tp->slowest[i]];

				fprintf(out, "             %s #%zu at +%s: %s; ", i ? "      " : "slowest", tp->slowest[i] + 1,
					report_duration(it->start - hdr->origin, a, sizeof(a)),
					report_duration(split_sum(&it->split), b, sizeof(b)));
				slow_why(out, tp, it);
				fprintf(out, "\n");
			}
		}
		if (steady->ncauses) {
			fprintf(out, "  steady idle %s: ", report_duration(steady->split.idle_ns, a, sizeof(a)));
			causes_line(out, steady, 4);
			fprintf(out, "\n");
		}
		fprintf(out, "  one-time  ");
		for (int i = 0, first = 1; i < PHASE_COUNT; i++) {
			const struct phase *ph = &tp->phase[i];

			if (i == PHASE_STEADY || phase_length(ph) <= 0)
				continue;
			fprintf(out, "%s%s %s", first ? " " : "; ", phase_name((enum phase_id)i),
				report_duration(phase_length(ph), a, sizeof(a)));
			if (ph->ncauses) {
				fprintf(out, ", of which ");
				causes_line(out, ph, 2);
			}
			first = 0;
		}
		fprintf(out, "\n\n");
	}
}

static void write_text(FILE *out, const struct report_header *hdr, const struct findings *findings,
		       const struct report_options *opt)
{
	const char *bold = opt->color ? "\033[1m" : "", *dim = opt->color ? "\033[2m" : "";
	const char *reset = opt->color ? "\033[0m" : "";
	int64_t span = hdr->end - hdr->start;
	char a[32], b[32];

	fprintf(out, "%sgpt-trace report%s\n", bold, reset);
	for (size_t i = 0; i < hdr->ntraces; i++)
		fprintf(out, "  %-9s %s\n", i ? "" : "trace", hdr->traces[i]);
	for (size_t i = 0; i < hdr->ncommands; i++)
		fprintf(out, "  %-9s %s\n", i ? "" : "ran", hdr->commands[i]);
	for (size_t i = 0; i < hdr->ndevices; i++)
		fprintf(out, "  %-9s %s: busy %.1f%% (%s), %" PRId64 " operations\n", i ? "" : "on",
			hdr->devices[i].label, span > 0 ? 100.0 * (double)hdr->devices[i].busy_ns / (double)span : 0.0,
			report_duration(hdr->devices[i].busy_ns, a, sizeof(a)), hdr->devices[i].operations);
	if (!hdr->ndevices)
		fprintf(out, "  %-9s no GPU work in the trace\n", "on");
	fprintf(out, "  %-9s %s\n", "span", report_duration(span, a, sizeof(a)));
	fprintf(out, "  %-9s %.1f%%\n", "GPU busy", 100.0 * busy_share(hdr));
	fprintf(out, "  %-9s %" PRId64 " kernel%s, %" PRId64 " cop%s, %" PRId64 " API call%s\n", "events",
		hdr->kernels, hdr->kernels == 1 ? "" : "s", hdr->copies, hdr->copies == 1 ? "y" : "ies",
		hdr->api_calls, hdr->api_calls == 1 ? "" : "s");
	if (hdr->scope)
		fprintf(out, "  %-9s %s\n", "scope", hdr->scope);
	for (size_t i = 0; i < hdr->nnotes; i++)
		fprintf(out, "  %-9s %s\n", i ? "" : "note", hdr->notes[i]);
	fprintf(out, "\n");
	write_phases_text(out, hdr, bold, reset);

	if (!findings->count) {
		fprintf(out, "No findings from %zu rules%s.\n", opt->nrules, hdr->steady_only ? " in the steady state" : "");
		return;
	}
	fprintf(out, "%s%zu finding%s%s from %zu rules%s, ranked by recoverable time (up to %s in all, %.1f%% of the "
		"%s)\n", bold, findings->count, findings->count == 1 ? "" : "s", reset, opt->nrules,
		hdr->steady_only ? " on the steady state" : "", report_duration(recoverable_total(findings), a, sizeof(a)),
		report_judged_span(hdr) > 0 ? 100.0 * (double)recoverable_total(findings) / (double)report_judged_span(hdr) : 0.0,
		hdr->steady_only ? "steady state" : "span");
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "\n%2zu. %s%-8s%s %s%s%s  %s\n", i + 1, opt->color ? severity_color(f->severity) : "",
			severity_name(f->severity), reset, bold, f->rule_id, reset, f->message);
		if (f->recoverable_ns > 0 && hdr->steady_iterations > 0)
			fprintf(out, "    recoverable: %s (%s per iteration)\n", report_duration(f->recoverable_ns, a, sizeof(a)),
				report_duration(f->recoverable_ns / hdr->steady_iterations, b, sizeof(b)));
		else if (f->recoverable_ns > 0)
			fprintf(out, "    recoverable: %s\n", report_duration(f->recoverable_ns, a, sizeof(a)));
		else
			fprintf(out, "    recoverable: unknown\n");
		if (f->start || f->end)
			fprintf(out, "    %swhere: +%s to +%s from the first event%s\n", dim,
				where_at(f->start - hdr->origin, f->end - f->start, a, sizeof(a)),
				where_at(f->end - hdr->origin, f->end - f->start, b, sizeof(b)), reset);
		for (size_t j = 0; j < f->nevidence; j++)
			fprintf(out, "    - %s\n", f->evidence[j]);
		if (f->fix && f->fix[0])
			fprintf(out, "    %sfix:%s %s\n", bold, reset, f->fix);
	}
}

static void write_phases_markdown(FILE *out, const struct report_header *hdr)
{
	char a[32], b[32], words[256], label[256];

	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];
		const struct phase *steady = &tp->phase[PHASE_STEADY];
		int64_t nsteady = (int64_t)(tp->niterations - tp->first_steady);

		fprintf(out, "### Phases%s%s\n\n| Phase | Starts | Duration | Why | Largest idle causes |\n"
			"| --- | ---: | ---: | --- | --- |\n", hdr->phases->ntraces > 1 ? " of " : "",
			hdr->phases->ntraces > 1 ? hdr->traces[t] : "");
		for (int i = 0; i < PHASE_COUNT; i++) {
			const struct phase *ph = &tp->phase[i];

			fprintf(out, "| %s | +%s | %s | ", phase_name((enum phase_id)i),
				report_duration(ph->start - hdr->origin, a, sizeof(a)),
				report_duration(phase_length(ph), b, sizeof(b)));
			report_md_cell(out, ph->reason);
			fprintf(out, " | ");
			for (size_t c = 0; c < ph->ncauses && c < 3; c++) {
				fprintf(out, "%s", c ? "; " : "");
				report_md_cell(out, idle_cause_label(&ph->causes[c], label, sizeof(label)));
				fprintf(out, " %s", report_duration(ph->causes[c].ns, a, sizeof(a)));
			}
			fprintf(out, " |\n");
		}
		fprintf(out, "\n**Iterations:** ");
		report_md_cell(out, source_words(tp, words, sizeof(words)));
		if (nsteady > 0) {
			fprintf(out, "; %" PRId64 " steady of %zu, median %s, p90 %s; per iteration: ", nsteady, tp->niterations,
				report_duration(tp->median_ns, a, sizeof(a)), report_duration(tp->p90_ns, b, sizeof(b)));
			split_line(out, &steady->split, nsteady);
		}
		fprintf(out, ".\n\n");
	}
}

static void write_markdown(FILE *out, const struct report_header *hdr, const struct findings *findings,
			   const struct report_options *opt)
{
	int64_t span = hdr->end - hdr->start;
	char a[32];

	fprintf(out, "## gpt-trace report\n\n| | |\n| --- | --- |\n");
	for (size_t i = 0; i < hdr->ntraces; i++) {
		fprintf(out, "| %s | ", i ? "" : "**Trace**");
		report_md_cell(out, hdr->traces[i]);
		fprintf(out, " |\n");
	}
	for (size_t i = 0; i < hdr->ncommands; i++) {
		fprintf(out, "| %s | `", i ? "" : "**Ran**");
		report_md_cell(out, hdr->commands[i]);
		fprintf(out, "` |\n");
	}
	for (size_t i = 0; i < hdr->ndevices; i++) {
		fprintf(out, "| %s | ", i ? "" : "**On**");
		report_md_cell(out, hdr->devices[i].label);
		fprintf(out, ": busy %.1f%% (%s) |\n",
			span > 0 ? 100.0 * (double)hdr->devices[i].busy_ns / (double)span : 0.0,
			report_duration(hdr->devices[i].busy_ns, a, sizeof(a)));
	}
	fprintf(out, "| **Span** | %s |\n", report_duration(span, a, sizeof(a)));
	fprintf(out, "| **GPU busy** | %.1f%% |\n", 100.0 * busy_share(hdr));
	fprintf(out, "| **Events** | %" PRId64 " kernel%s, %" PRId64 " cop%s, %" PRId64 " API call%s |\n",
		hdr->kernels, hdr->kernels == 1 ? "" : "s", hdr->copies, hdr->copies == 1 ? "y" : "ies",
		hdr->api_calls, hdr->api_calls == 1 ? "" : "s");
	if (hdr->scope) {
		fprintf(out, "| **Scope** | ");
		report_md_cell(out, hdr->scope);
		fprintf(out, " |\n");
	}
	fprintf(out, "\n");
	for (size_t i = 0; i < hdr->nnotes; i++) {
		fprintf(out, "> **Note:** ");
		report_md_cell(out, hdr->notes[i]);
		fprintf(out, "\n\n");
	}
	write_phases_markdown(out, hdr);
	if (!findings->count) {
		fprintf(out, "No findings from %zu rules.\n", opt->nrules);
		return;
	}
	fprintf(out, "### Findings\n\n%zu finding%s from %zu rules, ranked by recoverable time (up to %s in all).\n\n",
		findings->count, findings->count == 1 ? "" : "s", opt->nrules,
		report_duration(recoverable_total(findings), a, sizeof(a)));
	fprintf(out, "| # | Severity | Rule | Finding | Recoverable |\n| ---: | --- | --- | --- | ---: |\n");
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "| %zu | %s | `%s` | ", i + 1, severity_name(f->severity), f->rule_id);
		report_md_cell(out, f->message);
		fprintf(out, " | %s |\n", f->recoverable_ns > 0 ? report_duration(f->recoverable_ns, a, sizeof(a)) : "?");
	}
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "\n#### %zu. `%s` (%s)\n\n", i + 1, f->rule_id, severity_name(f->severity));
		report_md_cell(out, f->message);
		fprintf(out, "\n\n");
		for (size_t j = 0; j < f->nevidence; j++) {
			fprintf(out, "- ");
			report_md_cell(out, f->evidence[j]);
			fprintf(out, "\n");
		}
		if (f->nevidence)
			fprintf(out, "\n");
		if (f->fix && f->fix[0]) {
			fprintf(out, "**Fix:** ");
			report_md_cell(out, f->fix);
			fprintf(out, "\n");
		}
	}
}

static void json_list(FILE *out, char *const *items, size_t n)
{
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		report_json_string(out, items[i]);
	}
	fputc(']', out);
}

static void json_split(FILE *out, const struct time_split *s)
{
	fprintf(out, "{\"compute_ns\": %" PRId64 ", \"communication_ns\": %" PRId64 ", \"copies_ns\": %" PRId64
		", \"idle_ns\": %" PRId64 ", \"idle_by_kind_ns\": {", s->compute_ns, s->comm_ns, s->copy_ns, s->idle_ns);
	for (int k = 0; k < PHASE_IDLE_KINDS; k++)
		fprintf(out, "%s\"%s\": %" PRId64, k ? ", " : "", phase_idle_kind_name(k), s->idle_kind_ns[k]);
	fprintf(out, "}}");
}

static const char *source_id(enum iteration_source source)
{
	switch (source) {
	case ITERATIONS_STEP:
		return "step";
	case ITERATIONS_NVTX:
		return "nvtx";
	case ITERATIONS_KERNELS:
		return "kernel-sequence";
	default:
		return "none";
	}
}

/* Per-iteration rows beyond this many are left out of the JSON (the statistics cover them all). */
#define JSON_ITERATIONS_MAX 10000

static void write_phases_json(FILE *out, const struct report_header *hdr)
{
	char label[256];

	fprintf(out, "  \"steady_only\": %s,\n  \"steady_window\": ", hdr->steady_only ? "true" : "false");
	if (hdr->steady_end > hdr->steady_start)
		fprintf(out, "{\"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64 "},\n", hdr->steady_start, hdr->steady_end);
	else
		fprintf(out, "null,\n");
	fprintf(out, "  \"phases\": [");
	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];

		fprintf(out, "%s\n    {\"trace\": %zu, \"phases\": [", t ? "," : "", t);
		for (int i = 0; i < PHASE_COUNT; i++) {
			const struct phase *ph = &tp->phase[i];

			fprintf(out, "%s\n      {\"name\": \"%s\", \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64
				", \"duration_ns\": %" PRId64 ", \"reason\": ", i ? "," : "", phase_name((enum phase_id)i),
				ph->start, ph->end, ph->end - ph->start);
			report_json_string(out, ph->reason);
			fprintf(out, ",\n       \"split\": ");
			json_split(out, &ph->split);
			fprintf(out, ",\n       \"idle_causes\": [");
			for (size_t c = 0; c < ph->ncauses; c++) {
				const struct idle_cause *ic = &ph->causes[c];

				fprintf(out, "%s{\"kind\": \"%s\", \"detail\": ", c ? ", " : "", phase_idle_kind_name(ic->kind));
				report_json_string(out, ic->detail);
				fprintf(out, ", \"range\": ");
				report_json_string(out, ic->range);
				fprintf(out, ", \"label\": ");
				report_json_string(out, idle_cause_label(ic, label, sizeof(label)));
				fprintf(out, ", \"ns\": %" PRId64 ", \"gaps\": %" PRId64 "}", ic->ns, ic->count);
			}
			fprintf(out, "]}");
		}
		fprintf(out, "],\n     \"iterations\": {\"source\": \"%s\", \"name\": ", source_id(tp->source));
		report_json_string(out, tp->source_name);
		fprintf(out, ", \"count\": %zu, \"first_steady\": %zu, \"steady_count\": %zu, \"median_ns\": %" PRId64
			", \"p90_ns\": %" PRId64 ", \"slowest\": [", tp->niterations, tp->first_steady,
			tp->niterations - tp->first_steady, tp->median_ns, tp->p90_ns);
		for (size_t i = 0; i < tp->nslowest; i++)
			fprintf(out, "%s%zu", i ? ", " : "", tp->slowest[i]);
		fprintf(out, "],\n      \"items\": [");
		for (size_t i = 0; i < tp->niterations && i < JSON_ITERATIONS_MAX; i++) {
			const struct iteration *it = &tp->iterations[i];

			fprintf(out, "%s\n        {\"index\": %zu, \"warmup\": %s, \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64
				", \"duration_ns\": %" PRId64 ", \"operations\": %" PRId64 ", \"new_kernels\": %" PRId64
				", \"split\": ", i ? "," : "", i, it->warmup ? "true" : "false", it->start, it->end,
				split_sum(&it->split), it->operations, it->new_kernels);
			json_split(out, &it->split);
			fprintf(out, "}");
		}
		fprintf(out, "%s], \"items_truncated\": %s}}", tp->niterations ? "\n      " : "",
			tp->niterations > JSON_ITERATIONS_MAX ? "true" : "false");
	}
	fprintf(out, "%s],\n", hdr->phases && hdr->phases->ntraces ? "\n  " : "");
}

static void write_json(FILE *out, const struct report_header *hdr, const struct findings *findings,
		       const struct report_options *opt)
{
	int64_t span = hdr->end - hdr->start;

	fprintf(out, "{\n  \"schema\": \"%s\",\n  \"generator\": \"gpt-trace %s\",\n  \"traces\": ", REPORT_JSON_SCHEMA,
		GPT_TRACE_VERSION);
	json_list(out, hdr->traces, hdr->ntraces);
	fprintf(out, ",\n  \"scope\": ");
	report_json_string(out, hdr->scope);
	fprintf(out, ",\n  \"processes\": ");
	json_list(out, hdr->commands, hdr->ncommands);
	fprintf(out, ",\n  \"notes\": ");
	json_list(out, hdr->notes, hdr->nnotes);
	fprintf(out, ",\n  \"origin_ns\": %" PRId64 ",\n  \"span\": {\"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64
		", \"duration_ns\": %" PRId64 "},\n", hdr->origin, hdr->start, hdr->end, span);
	fprintf(out, "  \"gpu\": {\"busy_share\": %.6f, \"devices\": [", busy_share(hdr));
	for (size_t i = 0; i < hdr->ndevices; i++) {
		const struct report_device *d = &hdr->devices[i];

		fprintf(out, "%s\n    {\"trace\": %" PRId64 ", \"device\": %" PRId64 ", \"label\": ", i ? "," : "",
			d->trace_id, d->device);
		report_json_string(out, d->label);
		fprintf(out, ", \"busy_ns\": %" PRId64 ", \"busy_share\": %.6f, \"operations\": %" PRId64 "}", d->busy_ns,
			span > 0 ? (double)d->busy_ns / (double)span : 0.0, d->operations);
	}
	fprintf(out, "%s]},\n", hdr->ndevices ? "\n  " : "");
	fprintf(out, "  \"events\": {\"kernels\": %" PRId64 ", \"copies\": %" PRId64 ", \"api_calls\": %" PRId64 "},\n",
		hdr->kernels, hdr->copies, hdr->api_calls);
	write_phases_json(out, hdr);
	fprintf(out, "  \"rules_run\": %zu,\n  \"recoverable_ns\": %" PRId64 ",\n  \"recoverable_meaning\": ", opt->nrules,
		recoverable_total(findings));
	report_json_string(out, "the sum of the findings' recoverable times, in device time: no idle ns is claimed by "
				"two findings (drains belong to excessive-sync and sync-memcpy, other host-wait gaps to "
				"idle-gaps, short gaps before small kernels to small-kernels), and busy-time savings "
				"(pageable-memcpy, small-grid, uncoalesced-access) are GPU time of the operations named; "
				"with steady_only, only the steady state was judged");
	fprintf(out, ",\n  \"steady_iterations\": %" PRId64 ",\n  \"findings\": [", hdr->steady_iterations);
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "%s\n    {\"rank\": %zu, \"rule\": ", i ? "," : "", i + 1);
		report_json_string(out, f->rule_id);
		fprintf(out, ", \"severity\": \"%s\", \"message\": ", severity_name(f->severity));
		report_json_string(out, f->message);
		fprintf(out, ",\n     \"recoverable_ns\": %" PRId64 ", \"recoverable_share\": %.6f", f->recoverable_ns,
			report_judged_span(hdr) > 0 ? (double)f->recoverable_ns / (double)report_judged_span(hdr) : 0.0);
		if (hdr->steady_iterations > 0)
			fprintf(out, ", \"recoverable_per_iteration_ns\": %" PRId64, f->recoverable_ns / hdr->steady_iterations);
		else
			fprintf(out, ", \"recoverable_per_iteration_ns\": null");
		if (f->start || f->end)
			fprintf(out, ", \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64, f->start, f->end);
		else
			fprintf(out, ", \"start_ns\": null, \"end_ns\": null");
		if (f->device >= 0)
			fprintf(out, ", \"device\": %d", (int)f->device);
		else
			fprintf(out, ", \"device\": null");
		if (f->stream >= 0)
			fprintf(out, ", \"stream\": %" PRId64, f->stream);
		else
			fprintf(out, ", \"stream\": null");
		fprintf(out, ",\n     \"evidence\": ");
		json_list(out, f->evidence, f->nevidence);
		fprintf(out, ",\n     \"fix\": ");
		report_json_string(out, f->fix);
		fprintf(out, "}");
	}
	fprintf(out, "%s]\n}\n", findings->count ? "\n  " : "");
}

void report_write(FILE *out, const struct report_header *hdr, const struct findings *findings,
		  const struct report_options *options)
{
	switch (options->format) {
	case REPORT_FORMAT_MARKDOWN:
		write_markdown(out, hdr, findings, options);
		break;
	case REPORT_FORMAT_JSON:
		write_json(out, hdr, findings, options);
		break;
	case REPORT_FORMAT_HTML:
		report_write_html(out, hdr, findings, options);
		break;
	default:
		write_text(out, hdr, findings, options);
	}
}
