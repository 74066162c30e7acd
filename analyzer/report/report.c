/*
 * gpt-trace report (see report.h): the text, Markdown and JSON renderings of the report model
 * (model.c), and report_write(), which picks one or the HTML page (report/html/). The JSON
 * rendering is the stable one: its fields are documented in docs/report-json.md and any change to
 * them bumps REPORT_JSON_SCHEMA.
 */
#include "analyzer/report/report.h"
#include "analyzer/report/fix-order.h"
#include "analyzer/loader/events.h"
#include "analyzer/report/html/html.h"
#include "analyzer/report/memory.h"
#include "analyzer/analysis/owner.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * A finding's place, one end of its span: as units_duration(), but a span that units_duration()
 * would show as "+4.080 s to +4.080 s" (shorter than a thousandth of where it ends) is given in
 * milliseconds to the microsecond, as the evidence gives its gaps.
 */
static const char *where_at(int64_t at, int64_t span, char *buf, size_t len)
{
	int64_t a = at < 0 ? -at : at;

	if (a >= 1000000 && span >= 0 && span < a / 1000) {
		snprintf(buf, len, "%s%.3f ms", at < 0 ? "-" : "+", (double)a / 1e6);
		return buf;
	}
	return output_offset(at, buf, len);
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

/* The share of the span the GPUs were busy, averaged over the devices that ran work. */
static double busy_share(const struct report_header *hdr)
{
	int64_t span = hdr->end - hdr->start;

	if (span <= 0 || !hdr->ndevices)
		return 0.0;
	return (double)report_busy_total(hdr) / ((double)span * (double)hdr->ndevices);
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
		fprintf(out, "%s%s %s", i ? ", " : "",
			idle_cause_label(&ph->causes[i], label, sizeof(label)),
			units_duration(a, sizeof(a), ph->causes[i].ns, UNITS_FINE));
}

/*
 * The steady state split as Holistic Trace Analysis splits it (unions per category), where there is
 * communication to overlap: shares of the steady state's device time, and the comm/comp overlap.
 */
static void union_line(FILE *out, const struct time_split *s)
{
	struct union_shares u;

	if (!time_split_union(s, &u))
		return;
	fprintf(out, "             by union, as HTA splits it: compute %.1f%%, communication %.1f%%, memory %.1f%%, "
		"idle %.1f%%; %.1f%% of communication overlaps compute (above, overlapped time counts once, for what "
		"started first; HTA's own numbers differ by their window, the kernels launched before the last "
		"ProfilerStep, and their rounding to whole us)\n", u.compute, u.comm, u.memory, u.idle, u.overlap);
}

/* The time split of steady iterations, per iteration on average. */
static void split_line(FILE *out, const struct time_split *s, int64_t per)
{
	char a[32], b[32], c[32], d[32];

	if (per < 1)
		per = 1;
	fprintf(out, "compute %s, communication %s, copies/memsets %s, idle %s",
		units_duration(a, sizeof(a), s->compute_ns / per, UNITS_FINE),
		units_duration(b, sizeof(b), s->comm_ns / per, UNITS_FINE),
		units_duration(c, sizeof(c), s->copy_ns / per, UNITS_FINE),
		units_duration(d, sizeof(d), s->idle_ns / per, UNITS_FINE));
}

static const char *source_words(const struct trace_phases *tp, char *buf, size_t len)
{
	char gap[32];
	int n;

	switch (tp->source) {
	case ITERATIONS_STEP:
		snprintf(buf, len, "NVTX ranges matching --step '%s'", tp->source_name);
		break;
	case ITERATIONS_NVTX:
		snprintf(buf, len, "NVTX range '%s'", tp->source_name);
		break;
	case ITERATIONS_KERNELS:
		n = snprintf(buf, len, "kernel sequence, period %" PRId64 " kernel%s, ", tp->period_ops,
			     tp->period_ops == 1 ? "" : "s");
		if (n < 0 || (size_t)n >= len)
			break;
		if (tp->start_by == ITERATION_START_GAP && tp->period_multiple > 1)
			snprintf(buf + n, len - (size_t)n,
				 "%" PRId64 " repeats of a %" PRId64 "-kernel sequence (a "
				 "layer?) that the recurring %s idle gap groups, first kernel %s",
				 tp->period_multiple, tp->period_ops / tp->period_multiple,
				 units_duration(gap, sizeof(gap), tp->start_gap_ns, UNITS_FINE),
				 tp->source_name);
		else if (tp->start_by == ITERATION_START_GAP)
			snprintf(buf + n, len - (size_t)n,
				 "starting after the recurring %s idle gap, first kernel %s",
				 units_duration(gap, sizeof(gap), tp->start_gap_ns, UNITS_FINE),
				 tp->source_name);
		else if (tp->start_by == ITERATION_START_OPTIMIZER)
			snprintf(buf + n, len - (size_t)n, "starting at the optimizer's first kernel, %s (no recurring "
				 "idle gap)", tp->source_name);
		else if (tp->period_multiple > 1)
			snprintf(buf + n, len - (size_t)n, "%" PRId64 " repeats of a %" PRId64 "-kernel sequence (a "
				 "layer?) with the same copies in each, starting at its recurring kernel, %s",
				 tp->period_multiple, tp->period_ops / tp->period_multiple, tp->source_name);
		else if (tp->period_unmarked)
			snprintf(buf + n, len - (size_t)n, "starting at its recurring kernel, %s (no recurring idle gap, "
				 "copy or optimizer kernel: an iteration may be one layer of the step; --step names the "
				 "step's NVTX range)", tp->source_name);
		else
			snprintf(buf + n, len - (size_t)n, "starting at its recurring kernel, %s (no recurring idle gap, "
				 "no optimizer kernel)", tp->source_name);
		break;
	default:
		snprintf(buf, len, "none found (no repeating NVTX range, no repeating kernel sequence)");
	}
	return buf;
}

/* Whether some trace's iterations may be layers of its step (analyzer/analysis/phases.h:
 * period_unmarked). */
static int iterations_maybe_layers(const struct report_header *hdr)
{
	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];

		if (tp->source == ITERATIONS_KERNELS && tp->period_unmarked && tp->niterations > tp->first_steady)
			return 1;
	}
	return 0;
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
	fprintf(out, "%s +%s over the average", what[k],
		units_duration(a, sizeof(a), excess[k], UNITS_FINE));
	if (k == 3 && it->top_ns > 0) {
		struct idle_cause c = { .kind = it->top_kind, .detail = it->top_detail };

		fprintf(out, "; largest idle: %s %s", idle_cause_label(&c, label, sizeof(label)),
			units_duration(a, sizeof(a), it->top_ns, UNITS_FINE));
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

			output_offset(ph->start - hdr->origin, c, sizeof(c));
			fprintf(out, "  %-10s %-14s %-12s %s\n", phase_name((enum phase_id)i), c,
				units_duration(b, sizeof(b), phase_length(ph), UNITS_FINE),
				ph->reason ? ph->reason : "");
		}
		fprintf(out, "  iterations %s\n", source_words(tp, words, sizeof(words)));
		if (nsteady > 0) {
			fprintf(out, "             %" PRId64 " steady of %zu, median %s, p90 %s\n",
				nsteady, tp->niterations,
				units_duration(a, sizeof(a), tp->median_ns, UNITS_FINE),
				units_duration(b, sizeof(b), tp->p90_ns, UNITS_FINE));
			fprintf(out, "             per iteration: ");
			split_line(out, &steady->split, nsteady);
			fprintf(out, "\n");
			union_line(out, &steady->split);
			for (size_t i = 0; i < tp->nslowest && nsteady > 2; i++) {
				const struct iteration *it = &tp->iterations[tp->slowest[i]];

				fprintf(out, "             %s #%zu at %s: %s; ",
					i ? "      " : "slowest", tp->slowest[i] + 1,
					output_offset(it->start - hdr->origin, a, sizeof(a)),
					units_duration(b, sizeof(b), split_sum(&it->split),
						       UNITS_FINE));
				slow_why(out, tp, it);
				fprintf(out, "\n");
			}
		}
		if (steady->ncauses) {
			fprintf(out, "  steady idle %s: ",
				units_duration(a, sizeof(a), steady->split.idle_ns, UNITS_FINE));
			causes_line(out, steady, 4);
			fprintf(out, "\n");
		}
		fprintf(out, "  one-time  ");
		for (int i = 0, first = 1; i < PHASE_COUNT; i++) {
			const struct phase *ph = &tp->phase[i];

			if (i == PHASE_STEADY || phase_length(ph) <= 0)
				continue;
			fprintf(out, "%s%s %s", first ? " " : "; ", phase_name((enum phase_id)i),
				units_duration(a, sizeof(a), phase_length(ph), UNITS_FINE));
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
			hdr->devices[i].label,
			span > 0 ? 100.0 * (double)hdr->devices[i].busy_ns / (double)span : 0.0,
			units_duration(a, sizeof(a), hdr->devices[i].busy_ns, UNITS_FINE),
			hdr->devices[i].operations);
	if (!hdr->ndevices)
		fprintf(out, "  %-9s no GPU work in the trace\n", "on");
	fprintf(out, "  %-9s %s\n", "span", units_duration(a, sizeof(a), span, UNITS_FINE));
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
	report_memory_text(out, hdr);
	report_fix_order_text(out, hdr, findings, bold, reset);

	if (!findings->count) {
		fprintf(out, "No findings from %zu rules%s.\n", opt->nrules, hdr->steady_only ? " in the steady state" : "");
		return;
	}
	fprintf(out,
		"%s%zu finding%s%s from %zu rules%s, ranked by recoverable time (up to %s in all, "
		"%.1f%% of the "
		"%s)\n",
		bold, findings->count, findings->count == 1 ? "" : "s", reset, opt->nrules,
		hdr->steady_only ? " on the steady state" : "",
		units_duration(a, sizeof(a), report_recoverable_total(hdr, findings), UNITS_FINE),
		report_judged_span(hdr) > 0
		    ? 100.0 * (double)report_recoverable_total(hdr, findings) / (double)report_judged_span(hdr)
		    : 0.0,
		hdr->steady_only ? "steady state" : "span");
	if (hdr->nfix_order)
		fprintf(out, "(in all: the replayed fixes together, as above, and the other findings' estimates, at "
			     "most what is left)\n");
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "\n%2zu. %s%-8s%s %s%s%s  %s\n", i + 1, opt->color ? severity_color(f->severity) : "",
			severity_name(f->severity), reset, bold, f->rule_id, reset, f->message);
		if (f->recoverable_ns > 0 && hdr->steady_iterations > 0)
			fprintf(
			    out, "    recoverable: %s (%s per iteration%s)\n",
			    units_duration(a, sizeof(a), f->recoverable_ns, UNITS_FINE),
			    units_duration(b, sizeof(b), f->recoverable_ns / hdr->steady_iterations,
					   UNITS_FINE),
			    iterations_maybe_layers(hdr) ? ", which may be one layer of the step"
							 : "");
		else if (f->recoverable_ns > 0)
			fprintf(out, "    recoverable: %s\n",
				units_duration(a, sizeof(a), f->recoverable_ns, UNITS_FINE));
		else if (f->what_if && hdr->nfix_order)
			fprintf(out, "    recoverable: nothing: replayed, its fix alone does not shorten the step\n");
		else
			fprintf(out, "    recoverable: unknown\n");
		if (f->start || f->end)
			fprintf(out, "    %swhere: %s to %s from the first event%s\n", dim,
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

			fprintf(out, "| %s | %s | %s | ", phase_name((enum phase_id)i),
				output_offset(ph->start - hdr->origin, a, sizeof(a)),
				units_duration(b, sizeof(b), phase_length(ph), UNITS_FINE));
			output_md_cell(out, ph->reason);
			fprintf(out, " | ");
			for (size_t c = 0; c < ph->ncauses && c < 3; c++) {
				fprintf(out, "%s", c ? "; " : "");
				output_md_cell(out, idle_cause_label(&ph->causes[c], label, sizeof(label)));
				fprintf(out, " %s",
					units_duration(a, sizeof(a), ph->causes[c].ns, UNITS_FINE));
			}
			fprintf(out, " |\n");
		}
		fprintf(out, "\n**Iterations:** ");
		output_md_cell(out, source_words(tp, words, sizeof(words)));
		if (nsteady > 0) {
			fprintf(out,
				"; %" PRId64 " steady of %zu, median %s, p90 %s; per iteration: ",
				nsteady, tp->niterations,
				units_duration(a, sizeof(a), tp->median_ns, UNITS_FINE),
				units_duration(b, sizeof(b), tp->p90_ns, UNITS_FINE));
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
		output_md_cell(out, hdr->traces[i]);
		fprintf(out, " |\n");
	}
	for (size_t i = 0; i < hdr->ncommands; i++) {
		fprintf(out, "| %s | `", i ? "" : "**Ran**");
		output_md_cell(out, hdr->commands[i]);
		fprintf(out, "` |\n");
	}
	for (size_t i = 0; i < hdr->ndevices; i++) {
		fprintf(out, "| %s | ", i ? "" : "**On**");
		output_md_cell(out, hdr->devices[i].label);
		fprintf(out, ": busy %.1f%% (%s) |\n",
			span > 0 ? 100.0 * (double)hdr->devices[i].busy_ns / (double)span : 0.0,
			units_duration(a, sizeof(a), hdr->devices[i].busy_ns, UNITS_FINE));
	}
	fprintf(out, "| **Span** | %s |\n", units_duration(a, sizeof(a), span, UNITS_FINE));
	fprintf(out, "| **GPU busy** | %.1f%% |\n", 100.0 * busy_share(hdr));
	fprintf(out, "| **Events** | %" PRId64 " kernel%s, %" PRId64 " cop%s, %" PRId64 " API call%s |\n",
		hdr->kernels, hdr->kernels == 1 ? "" : "s", hdr->copies, hdr->copies == 1 ? "y" : "ies",
		hdr->api_calls, hdr->api_calls == 1 ? "" : "s");
	if (hdr->scope) {
		fprintf(out, "| **Scope** | ");
		output_md_cell(out, hdr->scope);
		fprintf(out, " |\n");
	}
	fprintf(out, "\n");
	for (size_t i = 0; i < hdr->nnotes; i++) {
		fprintf(out, "> **Note:** ");
		output_md_cell(out, hdr->notes[i]);
		fprintf(out, "\n\n");
	}
	write_phases_markdown(out, hdr);
	report_memory_markdown(out, hdr);
	report_fix_order_markdown(out, hdr, findings);
	if (!findings->count) {
		fprintf(out, "No findings from %zu rules.\n", opt->nrules);
		return;
	}
	fprintf(out,
		"### Findings\n\n%zu finding%s from %zu rules, ranked by recoverable time (up to "
		"%s in all).\n\n",
		findings->count, findings->count == 1 ? "" : "s", opt->nrules,
		units_duration(a, sizeof(a), report_recoverable_total(hdr, findings), UNITS_FINE));
	fprintf(out, "| # | Severity | Rule | Finding | Recoverable |\n| ---: | --- | --- | --- | ---: |\n");
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "| %zu | %s | `%s` | ", i + 1, severity_name(f->severity), f->rule_id);
		output_md_cell(out, f->message);
		fprintf(out, " | %s |\n",
			f->recoverable_ns > 0
			    ? units_duration(a, sizeof(a), f->recoverable_ns, UNITS_FINE)
			    : "?");
	}
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "\n#### %zu. `%s` (%s)\n\n", i + 1, f->rule_id, severity_name(f->severity));
		output_md_cell(out, f->message);
		fprintf(out, "\n\n");
		for (size_t j = 0; j < f->nevidence; j++) {
			fprintf(out, "- ");
			output_md_cell(out, f->evidence[j]);
			fprintf(out, "\n");
		}
		if (f->nevidence)
			fprintf(out, "\n");
		if (f->fix && f->fix[0]) {
			fprintf(out, "**Fix:** ");
			output_md_cell(out, f->fix);
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
		output_json_string(out, items[i]);
	}
	fputc(']', out);
}

static void json_split(FILE *out, const struct time_split *s)
{
	struct union_shares u;

	time_split_union(s, &u);
	fprintf(out, "{\"compute_ns\": %" PRId64 ", \"communication_ns\": %" PRId64 ", \"copies_ns\": %" PRId64
		", \"idle_ns\": %" PRId64 ", \"idle_by_kind_ns\": {", s->compute_ns, s->comm_ns, s->copy_ns, s->idle_ns);
	for (int k = 0; k < PHASE_IDLE_KINDS; k++)
		fprintf(out, "%s\"%s\": %" PRId64, k ? ", " : "", phase_idle_kind_name(k), s->idle_kind_ns[k]);
	fprintf(out, "}, \"by_union\": {\"compute_ns\": %" PRId64 ", \"communication_ns\": %" PRId64
		", \"memory_ns\": %" PRId64 ", \"idle_ns\": %" PRId64 ", \"overlap_ns\": %" PRId64 "}}", s->union_compute_ns,
		s->union_comm_ns, s->union_memory_ns, s->idle_ns, u.overlap_ns);
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

/* Kernel-sequence iterations: how their start was chosen; null for the others. */
static void json_iteration_start(FILE *out, const struct trace_phases *tp)
{
	static const char *const by[] = { [ITERATION_START_KERNEL] = "recurring-kernel",
					  [ITERATION_START_GAP] = "recurring-gap",
					  [ITERATION_START_OPTIMIZER] = "optimizer" };

	if (tp->source != ITERATIONS_KERNELS) {
		fprintf(out, "null");
		return;
	}
	fprintf(out, "{\"by\": \"%s\", \"gap_ns\": ", by[tp->start_by]);
	if (tp->start_by == ITERATION_START_GAP)
		fprintf(out, "%" PRId64, tp->start_gap_ns);
	else
		fprintf(out, "null");
	fprintf(out, ", \"repeats\": %" PRId64 ", \"may_be_layer\": %s}", tp->period_multiple > 1 ? tp->period_multiple : 1,
		tp->period_unmarked ? "true" : "false");
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
			output_json_string(out, ph->reason);
			fprintf(out, ",\n       \"split\": ");
			json_split(out, &ph->split);
			fprintf(out, ",\n       \"idle_causes\": [");
			for (size_t c = 0; c < ph->ncauses; c++) {
				const struct idle_cause *ic = &ph->causes[c];

				fprintf(out, "%s{\"kind\": \"%s\", \"detail\": ", c ? ", " : "", phase_idle_kind_name(ic->kind));
				output_json_string(out, ic->detail);
				fprintf(out, ", \"range\": ");
				output_json_string(out, ic->range);
				fprintf(out, ", \"label\": ");
				output_json_string(out, idle_cause_label(ic, label, sizeof(label)));
				fprintf(out, ", \"ns\": %" PRId64 ", \"gaps\": %" PRId64 "}", ic->ns, ic->count);
			}
			fprintf(out, "]}");
		}
		fprintf(out, "],\n     \"iterations\": {\"source\": \"%s\", \"name\": ", source_id(tp->source));
		output_json_string(out, tp->source_name);
		fprintf(out, ", \"start\": ");
		json_iteration_start(out, tp);
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
	output_json_string(out, hdr->scope);
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
		output_json_string(out, d->label);
		fprintf(out, ", \"busy_ns\": %" PRId64 ", \"busy_share\": %.6f, \"operations\": %" PRId64 "}", d->busy_ns,
			span > 0 ? (double)d->busy_ns / (double)span : 0.0, d->operations);
	}
	fprintf(out, "%s]},\n", hdr->ndevices ? "\n  " : "");
	fprintf(out, "  \"events\": {\"kernels\": %" PRId64 ", \"copies\": %" PRId64 ", \"api_calls\": %" PRId64 "},\n",
		hdr->kernels, hdr->copies, hdr->api_calls);
	write_phases_json(out, hdr);
	report_memory_json(out, hdr);
	report_fix_order_json(out, hdr, findings);
	fprintf(out, "  \"rules_run\": %zu,\n  \"recoverable_ns\": %" PRId64 ",\n  \"recoverable_meaning\": ", opt->nrules,
		report_recoverable_total(hdr, findings));
	output_json_string(out, "what the findings recover together: the what-if replay of all the fixes it models "
				"(what_if: each trace's all against recorded), plus the other findings' own estimates; "
				"a replayed finding's recoverable_ns is its fix's replayed saving alone, the others' their "
				"rule's estimate, in device time: no idle ns is claimed by "
				"two findings (drains belong to excessive-sync and sync-memcpy, other host-wait gaps to "
				"idle-gaps, short gaps before small kernels to small-kernels), and busy-time savings "
				"(pageable-memcpy, small-grid, uncoalesced-access) are GPU time of the operations named; "
				"with steady_only, only the steady state was judged");
	fprintf(out, ",\n  \"steady_iterations\": %" PRId64 ",\n  \"findings\": [", hdr->steady_iterations);
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "%s\n    {\"rank\": %zu, \"rule\": ", i ? "," : "", i + 1);
		output_json_string(out, f->rule_id);
		fprintf(out, ", \"severity\": \"%s\", \"message\": ", severity_name(f->severity));
		output_json_string(out, f->message);
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
		if (f->owner >= 0)
			fprintf(out, ", \"owner\": \"%s\"", kernel_owner_id((enum kernel_owner)f->owner));
		else
			fprintf(out, ", \"owner\": null");
		fprintf(out, ",\n     \"evidence\": ");
		json_list(out, f->evidence, f->nevidence);
		fprintf(out, ",\n     \"fix\": ");
		output_json_string(out, f->fix);
		fprintf(out, "}");
	}
	fprintf(out, "%s]\n}\n", findings->count ? "\n  " : "");
}

void report_write(FILE *out, const struct report_header *hdr, const struct findings *findings,
		  const struct report_options *options)
{
	switch (options->format) {
	case OUTPUT_FORMAT_MARKDOWN:
		write_markdown(out, hdr, findings, options);
		break;
	case OUTPUT_FORMAT_JSON:
		write_json(out, hdr, findings, options);
		break;
	case OUTPUT_FORMAT_HTML:
		report_write_html(out, hdr, findings, options);
		break;
	default:
		write_text(out, hdr, findings, options);
	}
}
