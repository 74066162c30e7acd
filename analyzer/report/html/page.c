/*
 * The report as one self-contained HTML page (gpt-trace report --format html): the same header,
 * phases, iterations and ranked findings as the text and JSON reports, drawn as inline SVG and HTML
 * with inline CSS. No script, no external resource (a Content-Security-Policy forbids any), dark text
 * on white, Okabe-Ito colours (readable with colour-blindness), laid out to print.
 *
 * Every number shown also sits in a data-* attribute in ns, so a test can hold the page to the JSON
 * report; the overview timeline is overview.c, the charts' data data.c.
 */
#include "analyzer/report/html/html.h"
#include "analyzer/report/fix-order.h"
#include "analyzer/report/memory.h"
#include "common/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Steady iterations drawn one bar each up to this many; beyond, consecutive ones are averaged. */
#define ITERATION_BARS_MAX 300
#define HIST_BINS_MAX 30

static const char *const work_names[CHART_WORKS] = { "compute", "communication (NCCL)", "copies and memsets" };

static int64_t split_total(const struct time_split *s)
{
	return s->compute_ns + s->comm_ns + s->copy_ns + s->idle_ns;
}

/* ---- the page's frame ---- */

static void write_head(FILE *out, const struct report_header *hdr)
{
	char *title;

	if (!hdr->ntraces)
		title = xstrdup("gpt-trace report");
	else if (hdr->ntraces == 1)
		title = xasprintf("gpt-trace report: %s", hdr->traces[0]);
	else
		title = xasprintf("gpt-trace report: %s and %zu more", hdr->traces[0], hdr->ntraces - 1);
	html_write_head(out, title, NULL);
	free(title);
}

/* The legend of work kinds and idle kinds, as drawn in the timeline and the iteration bars; the
 * profiler's own work only where the report has some. */
static int has_profiler_idle(const struct report_header *hdr)
{
	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++)
		for (int i = 0; i < PHASE_COUNT; i++)
			if (hdr->phases->traces[t].phase[i].split.idle_kind_ns[PHASE_IDLE_PROFILER] > 0)
				return 1;
	return 0;
}

static void write_legend(FILE *out, const struct report_header *hdr, int with_work)
{
	fputs("<div class=\"legend\">", out);
	for (int w = 0; with_work && w < CHART_WORKS; w++)
		html_swatch(out, html_work_color(w), work_names[w]);
	for (int k = 0; k < PHASE_IDLE_KINDS; k++) {
		char label[64];

		if (k == PHASE_IDLE_PROFILER && !has_profiler_idle(hdr))
			continue;
		snprintf(label, sizeof(label), "idle: %s", html_idle_words(k));
		html_swatch(out, html_idle_color(k), label);
	}
	fputs("</div>\n", out);
}

/* ---- 1. header ---- */

static void write_summary(FILE *out, const struct report_header *hdr, const struct findings *findings)
{
	int64_t span = hdr->end - hdr->start, busy = report_busy_total(hdr);
	char a[32], b[32];

	fprintf(out, "<header>\n<h1>gpt-trace report</h1>\n");
	fprintf(out, "<nav class=\"small\">%s<a href=\"#phases\">Phases</a><a href=\"#timeline\">Timeline</a>"
		     "<a href=\"#iterations\">Iterations</a><a href=\"#kernels\">Kernels</a><a href=\"#copies\">Copies</a>"
		     "<a href=\"#idle\">Idle time</a><a href=\"#findings\">Findings (%zu)</a></nav>\n",
		hdr->nfix_order ? "<a href=\"#what-if\">What to shorten first</a>" : "", findings->count);
	fprintf(out, "<dl class=\"summary\" id=\"summary\" data-start-ns=\"%" PRId64 "\" data-end-ns=\"%" PRId64
		"\" data-span-ns=\"%" PRId64 "\" data-origin-ns=\"%" PRId64 "\" data-kernels=\"%" PRId64
		"\" data-copies=\"%" PRId64 "\" data-api-calls=\"%" PRId64 "\">\n", hdr->start, hdr->end, span,
		hdr->origin, hdr->kernels, hdr->copies, hdr->api_calls);
	for (size_t i = 0; i < hdr->ntraces; i++) {
		fprintf(out, "<dt>%s</dt><dd class=\"trace\"><code>", i ? "" : hdr->ntraces > 1 ? "Traces" : "Trace");
		html_text(out, hdr->traces[i]);
		fputs("</code></dd>\n", out);
	}
	for (size_t i = 0; i < hdr->ncommands; i++) {
		fprintf(out, "<dt>%s</dt><dd class=\"process\"><code>", i ? "" : "Ran");
		html_text(out, hdr->commands[i]);
		fputs("</code></dd>\n", out);
	}
	for (size_t i = 0; i < hdr->ndevices; i++) {
		const struct report_device *d = &hdr->devices[i];

		fprintf(out, "<dt>%s</dt><dd class=\"device\" data-trace=\"%" PRId64 "\" data-device=\"%" PRId64
			"\" data-busy-ns=\"%" PRId64 "\" data-operations=\"%" PRId64 "\">", i ? "" : "GPUs",
			d->trace_id, d->device, d->busy_ns, d->operations);
		html_text(out, d->label);
		fprintf(out, ": busy %.1f%% (%s), %" PRId64 " operations</dd>\n",
			span > 0 ? 100.0 * (double)d->busy_ns / (double)span : 0.0,
			units_duration(a, sizeof(a), d->busy_ns, UNITS_FINE), d->operations);
	}
	if (!hdr->ndevices)
		fputs("<dt>GPUs</dt><dd>no GPU work in the trace</dd>\n", out);
	fprintf(out, "<dt>Span</dt><dd>%s, from %s</dd>\n",
		units_duration(a, sizeof(a), span, UNITS_FINE),
		html_at(hdr, hdr->start, b, sizeof(b)));
	fprintf(out, "<dt>GPU busy</dt><dd>%.1f%%</dd>\n",
		span > 0 && hdr->ndevices ? 100.0 * (double)busy / ((double)span * (double)hdr->ndevices) : 0.0);
	fprintf(out, "<dt>Events</dt><dd>%" PRId64 " kernel%s, %" PRId64 " cop%s, %" PRId64 " API call%s</dd>\n",
		hdr->kernels, hdr->kernels == 1 ? "" : "s", hdr->copies, hdr->copies == 1 ? "y" : "ies", hdr->api_calls,
		hdr->api_calls == 1 ? "" : "s");
	if (hdr->scope) {
		fputs("<dt>Scope</dt><dd>", out);
		html_text(out, hdr->scope);
		fputs("</dd>\n", out);
	}
	if (hdr->steady_only && report_judged_span(hdr) > 0)
		fprintf(out,
			"<dt>Judged</dt><dd>the steady state only (%s); one-time costs are in the "
			"phases</dd>\n",
			units_duration(a, sizeof(a), report_judged_span(hdr), UNITS_FINE));
	else if (hdr->steady_only)
		fputs("<dt>Judged</dt><dd>the steady state only, and there is none: nothing repeats (see the phases)</dd>\n", out);
	fputs("</dl>\n", out);
	html_write_notes(out, hdr->notes, hdr->nnotes);
	fputs("</header>\n", out);
}

/* ---- phases ---- */

static const char *phase_class(int i)
{
	static const char *const names[PHASE_COUNT] = { "ph-start-up", "ph-warm-up", "ph-steady", "ph-tear-down" };

	return names[i];
}

static void write_cause_list(FILE *out, const struct phase *ph, size_t n)
{
	char label[256], a[32];

	for (size_t c = 0; c < ph->ncauses && c < n; c++) {
		fputs(c ? "; " : "", out);
		html_text(out, idle_cause_label(&ph->causes[c], label, sizeof(label)));
		fprintf(out, " %s", units_duration(a, sizeof(a), ph->causes[c].ns, UNITS_FINE));
	}
}

/* The phases to scale, except that a phase under 12% of the bar gets 12%, the others share the rest. */
static void write_phase_bar(FILE *out, const struct trace_phases *tp, size_t t)
{
	int64_t total = 0;
	double shown[PHASE_COUNT], fixed = 0, rest = 0;
	char a[32];

	for (int i = 0; i < PHASE_COUNT; i++) {
		int64_t len = tp->phase[i].end - tp->phase[i].start;

		total += len > 0 ? len : 0;
	}
	for (int i = 0; i < PHASE_COUNT; i++) {
		int64_t len = tp->phase[i].end - tp->phase[i].start;

		shown[i] = len <= 0 ? 0.0 : (double)len / (double)(total ? total : 1);
		if (shown[i] > 0 && shown[i] < 0.12) {
			shown[i] = -0.12;	/* fixed */
			fixed += 0.12;
		} else {
			rest += shown[i];
		}
	}
	for (int i = 0; i < PHASE_COUNT; i++)
		shown[i] = shown[i] < 0 ? 0.12 : rest > 0 ? shown[i] * (1.0 - fixed) / rest : shown[i];
	fputs("<div class=\"phasebar\" role=\"img\" aria-label=\"phases\">", out);
	for (int i = 0; i < PHASE_COUNT; i++) {
		const struct phase *ph = &tp->phase[i];

		if (shown[i] <= 0)
			continue;
		fprintf(out,
			"<div class=\"phase-seg %s\" style=\"width:%.2f%%\" data-trace=\"%zu\" "
			"data-phase=\"%s\" "
			"data-start-ns=\"%" PRId64 "\" data-end-ns=\"%" PRId64 "\" title=\"%s %s: ",
			phase_class(i), 100.0 * shown[i], t, phase_name((enum phase_id)i),
			ph->start, ph->end, phase_name((enum phase_id)i),
			units_duration(a, sizeof(a), ph->end - ph->start, UNITS_FINE));
		html_text(out, ph->reason);
		fprintf(out, "\">%s %s</div>", phase_name((enum phase_id)i), html_short(ph->end - ph->start, a, sizeof(a)));
	}
	fputs("</div>\n<p class=\"small muted\">To scale, except that phases under 12% of the trace are widened "
	      "to stay readable.</p>\n", out);
}

/* "Iterations: NVTX range 'step'; 38 steady of 40, median ..." */
static void write_iterations_line(FILE *out, const struct trace_phases *tp)
{
	size_t nsteady = tp->niterations - tp->first_steady;
	char a[32], b[32];

	fputs("</table>\n<p><b>Iterations:</b> ", out);
	switch (tp->source) {
	case ITERATIONS_STEP:
		fputs("NVTX ranges matching --step '", out);
		html_text(out, tp->source_name);
		fputs("'", out);
		break;
	case ITERATIONS_NVTX:
		fputs("NVTX range '", out);
		html_text(out, tp->source_name);
		fputs("'", out);
		break;
	case ITERATIONS_KERNELS: {
		char words[512];

		/* How its start was chosen, as the text report says it
		 * (analyzer/analysis/phases.h). */
		fprintf(out, "a repeating sequence of %" PRId64 " kernels: ", tp->period_ops);
		html_text(out, iteration_start_words(tp, words, sizeof(words)));
		break;
	}
	default:
		fputs("none found (no repeating NVTX range, no repeating kernel sequence)", out);
	}
	if (nsteady)
		fprintf(out, "; %zu steady of %zu, median %s, p90 %s", nsteady, tp->niterations,
			units_duration(a, sizeof(a), tp->median_ns, UNITS_FINE),
			units_duration(b, sizeof(b), tp->p90_ns, UNITS_FINE));
	fputs(".</p>\n", out);
}

/* The steady state split as HTA splits it (unions per category), where there is communication. */
static void write_union_line(FILE *out, const struct trace_phases *tp, size_t t)
{
	const struct time_split *s = &tp->phase[PHASE_STEADY].split;
	struct union_shares u;

	if (!time_split_union(s, &u))
		return;
	fprintf(out, "<p class=\"union\" data-trace=\"%zu\" data-compute-ns=\"%" PRId64 "\" data-comm-ns=\"%" PRId64
		"\" data-memory-ns=\"%" PRId64 "\" data-overlap-ns=\"%" PRId64 "\">Steady state by union, as HTA splits "
		"it: compute %.1f%%, communication %.1f%%, memory %.1f%%, idle %.1f%%; %.1f%% of communication overlaps "
		"compute. <span class=\"muted\">The bars count overlapped time once, for what started first.</span></p>\n",
		t, s->union_compute_ns, s->union_comm_ns, s->union_memory_ns, u.overlap_ns, u.compute, u.comm, u.memory,
		u.idle, u.overlap);
}

static void write_phases(FILE *out, const struct report_header *hdr)
{
	char a[32], b[32];

	fputs("<section id=\"phases\">\n<h2>Phases</h2>\n", out);
	if (!hdr->phases || !hdr->phases->ntraces) {
		fputs("<p class=\"muted\">Phases were not computed.</p>\n</section>\n", out);
		return;
	}
	for (size_t t = 0; t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];

		if (hdr->phases->ntraces > 1) {
			fputs("<h3>", out);
			html_text(out, t < hdr->ntraces ? hdr->traces[t] : "?");
			fputs("</h3>\n", out);
		}
		if (!tp->gpu_work) {
			fputs("<p class=\"muted\">None: nothing ran on a GPU.</p>\n", out);
			continue;
		}
		write_phase_bar(out, tp, t);
		fputs("<table class=\"phases\"><tr><th>Phase</th><th class=\"num\">Starts</th><th class=\"num\">Duration"
		      "</th><th>Why</th><th>Largest idle causes</th></tr>\n", out);
		for (int i = 0; i < PHASE_COUNT; i++) {
			const struct phase *ph = &tp->phase[i];

			fprintf(out,
				"<tr class=\"phase-row\" data-trace=\"%zu\" data-phase=\"%s\" "
				"data-duration-ns=\"%" PRId64
				"\"><td class=\"nowrap\"><i class=\"sw %s\"></i> %s</td><td "
				"class=\"num\">%s</td><td class=\"num\">%s</td><td>",
				t, phase_name((enum phase_id)i), ph->end - ph->start,
				phase_class(i), phase_name((enum phase_id)i),
				html_at(hdr, ph->start, a, sizeof(a)),
				units_duration(b, sizeof(b), ph->end - ph->start, UNITS_FINE));
			html_text(out, ph->reason);
			fputs("</td><td>", out);
			write_cause_list(out, ph, 3);
			fputs("</td></tr>\n", out);
		}
		write_iterations_line(out, tp);
		write_union_line(out, tp, t);
	}
	fputs("</section>\n", out);
}

/* ---- 3. iterations ---- */

/* The parts of a split in drawing order: work kinds, then idle kinds. */
#define SPLIT_PARTS (CHART_WORKS + PHASE_IDLE_KINDS)

static void split_parts(const struct time_split *s, int64_t *parts)
{
	parts[CHART_COMPUTE] = s->compute_ns;
	parts[CHART_COMM] = s->comm_ns;
	parts[CHART_COPY] = s->copy_ns;
	for (int k = 0; k < PHASE_IDLE_KINDS; k++)
		parts[CHART_WORKS + k] = s->idle_kind_ns[k];
}

static const char *part_color(int p)
{
	return p < CHART_WORKS ? html_work_color(p) : html_idle_color(p - CHART_WORKS);
}

static const char *part_words(int p)
{
	return p < CHART_WORKS ? work_names[p] : html_idle_words(p - CHART_WORKS);
}

#define IT_W 1200
#define IT_H 240
#define IT_LEFT 70
#define IT_TOP 10
#define IT_BOTTOM 30

static void write_iteration_bars(FILE *out, const struct report_header *hdr, size_t t)
{
	const struct trace_phases *tp = &hdr->phases->traces[t];
	size_t nsteady = tp->niterations - tp->first_steady;
	size_t group = (nsteady + ITERATION_BARS_MAX - 1) / ITERATION_BARS_MAX, nbars;
	double plot_w = IT_W - IT_LEFT - 10, plot_h = IT_H - IT_TOP - IT_BOTTOM, bar_w;
	int64_t ymax = 1, step;
	char a[32], b[32];

	if (group < 1)
		group = 1;
	nbars = (nsteady + group - 1) / group;
	for (size_t i = tp->first_steady; i < tp->niterations; i += group) {
		int64_t sum = 0;
		size_t n = 0;

		for (size_t j = i; j < i + group && j < tp->niterations; j++, n++)
			sum += split_total(&tp->iterations[j].split);
		if (sum / (int64_t)n > ymax)
			ymax = sum / (int64_t)n;
	}
	step = html_nice_step(ymax, 4);
	ymax = (ymax + step - 1) / step * step;
	bar_w = plot_w / (double)nbars;
	fprintf(out, "<figure><svg class=\"iter-bars\" data-trace=\"%zu\" data-bars=\"%zu\" data-group=\"%zu\" "
		"viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"time per steady iteration\">\n", t, nbars, group, IT_W, IT_H);
	for (int64_t y = 0; y <= ymax; y += step) {
		double py = IT_TOP + plot_h - plot_h * (double)y / (double)ymax;

		fprintf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", IT_LEFT, IT_W - 10, py, py, IT_LEFT - 4,
			py + 4, html_short(y, a, sizeof(a)));
	}
	for (size_t bar = 0; bar < nbars; bar++) {
		size_t first = tp->first_steady + bar * group, last = first + group - 1, n;
		int64_t parts[SPLIT_PARTS] = { 0 }, sum = 0;
		double x = IT_LEFT + bar_w * (double)bar, y = IT_TOP + plot_h;

		if (last >= tp->niterations)
			last = tp->niterations - 1;
		n = last - first + 1;
		for (size_t j = first; j <= last; j++) {
			int64_t p[SPLIT_PARTS];

			split_parts(&tp->iterations[j].split, p);
			for (int k = 0; k < SPLIT_PARTS; k++)
				parts[k] += p[k];
		}
		for (int k = 0; k < SPLIT_PARTS; k++) {
			parts[k] /= (int64_t)n;
			sum += parts[k];
		}
		fprintf(out, "<g class=\"iter-bar\" data-first=\"%zu\" data-last=\"%zu\" data-duration-ns=\"%" PRId64 "\"",
			first, last, sum);
		for (int k = 0; k < SPLIT_PARTS; k++)
			if (parts[k])
				fprintf(out, " data-p%d=\"%" PRId64 "\"", k, parts[k]);
		fputs("><title>", out);
		if (n == 1)
			fprintf(out, "iteration #%zu at %s: %s", first + 1,
				html_at(hdr, tp->iterations[first].start, a, sizeof(a)),
				units_duration(b, sizeof(b), sum, UNITS_FINE));
		else
			fprintf(out, "iterations #%zu-#%zu, mean %s", first + 1, last + 1,
				units_duration(b, sizeof(b), sum, UNITS_FINE));
		for (int k = 0; k < SPLIT_PARTS; k++)
			if (parts[k])
				fprintf(out, "\n%s %s", part_words(k),
					units_duration(a, sizeof(a), parts[k], UNITS_FINE));
		fputs("</title>", out);
		for (int k = 0; k < SPLIT_PARTS; k++) {
			double h = plot_h * (double)parts[k] / (double)ymax;

			if (!parts[k])
				continue;
			y -= h;
			fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>", x, y,
				bar_w > 2 ? bar_w * 0.85 : bar_w, h, part_color(k));
		}
		fputs("</g>\n", out);
	}
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", IT_LEFT, IT_W - 10,
		IT_TOP + plot_h, IT_TOP + plot_h);
	fprintf(out, "<text x=\"%d\" y=\"%d\">#%zu</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">#%zu</text>\n",
		IT_LEFT, IT_H - 8, tp->first_steady + 1, IT_W - 10, IT_H - 8, tp->niterations);
	fprintf(out, "</svg><figcaption class=\"small muted\">Each steady iteration's time on the GPU timeline, split "
		     "by what the device did and why it idled%s.</figcaption></figure>\n",
		group > 1 ? " (consecutive iterations averaged, to fit)" : "");
}

static void write_iteration_histogram(FILE *out, const struct report_header *hdr, size_t t)
{
	const struct trace_phases *tp = &hdr->phases->traces[t];
	size_t nsteady = tp->niterations - tp->first_steady, nbins, count[HIST_BINS_MAX] = { 0 }, cmax = 1;
	int64_t lo = INT64_MAX, hi = 0, width;
	double plot_w = IT_W - IT_LEFT - 10, plot_h = IT_H - IT_TOP - IT_BOTTOM;
	char a[32], b[32];

	for (size_t i = tp->first_steady; i < tp->niterations; i++) {
		int64_t d = split_total(&tp->iterations[i].split);

		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	nbins = (size_t)ceil(sqrt((double)nsteady));
	nbins = nbins < 5 ? 5 : nbins > HIST_BINS_MAX ? HIST_BINS_MAX : nbins;
	width = (hi - lo) / (int64_t)nbins + 1;
	for (size_t i = tp->first_steady; i < tp->niterations; i++) {
		size_t bin = (size_t)((split_total(&tp->iterations[i].split) - lo) / width);

		count[bin < nbins ? bin : nbins - 1]++;
	}
	for (size_t i = 0; i < nbins; i++)
		cmax = count[i] > cmax ? count[i] : cmax;
	fprintf(out, "<figure><svg class=\"iter-hist\" data-trace=\"%zu\" data-iterations=\"%zu\" viewBox=\"0 0 %d %d\" "
		"role=\"img\" aria-label=\"distribution of steady iteration times\">\n", t, nsteady, IT_W, IT_H);
	for (size_t i = 0; i < nbins; i++) {
		double x = IT_LEFT + plot_w * (double)i / (double)nbins, w = plot_w / (double)nbins;
		double h = plot_h * (double)count[i] / (double)cmax;

		fprintf(out,
			"<rect class=\"hist-bin\" data-count=\"%zu\" data-lo-ns=\"%" PRId64
			"\" x=\"%.2f\" y=\"%.2f\" "
			"width=\"%.2f\" height=\"%.2f\" fill=\"#0072B2\"><title>%zu iteration%s "
			"from %s to %s</title></rect>\n",
			count[i], lo + (int64_t)i * width, x + 0.5, IT_TOP + plot_h - h, w - 1, h,
			count[i], count[i] == 1 ? "" : "s",
			units_duration(a, sizeof(a), lo + (int64_t)i * width, UNITS_FINE),
			units_duration(b, sizeof(b), lo + (int64_t)(i + 1) * width, UNITS_FINE));
	}
	/* the median and p90 of phases.c, where they fall; labels on two lines, inside the plot */
	for (int m = 0; m < 2; m++) {
		int64_t v = m ? tp->p90_ns : tp->median_ns;
		double x = IT_LEFT + plot_w * (double)(v - lo) / (double)(width * (int64_t)nbins);
		int right = x > IT_W - 200;

		fprintf(out,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.1f\" stroke=\"#1a1a1a\" "
			"stroke-dasharray=\"%s\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s %s</text>\n",
			x, x, IT_TOP, IT_TOP + plot_h, m ? "2 3" : "6 3", right ? x - 4 : x + 4,
			IT_TOP + 12 + 14 * m, right ? "end" : "start", m ? "p90" : "median",
			units_duration(a, sizeof(a), v, UNITS_FINE));
	}
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", IT_LEFT, IT_W - 10,
		IT_TOP + plot_h, IT_TOP + plot_h);
	fprintf(out, "<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>"
		"<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%zu</text>"
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">steady iterations by time</text>\n", IT_LEFT, IT_H - 8,
		html_short(lo, a, sizeof(a)), IT_W - 10, IT_H - 8, html_short(lo + width * (int64_t)nbins, b, sizeof(b)),
		IT_LEFT - 4, IT_TOP + 10, cmax, (IT_W + IT_LEFT) / 2, IT_H - 8);
	fputs("</svg><figcaption class=\"small muted\">How many steady iterations took how long.</figcaption>"
	      "</figure>\n", out);
}

static void write_iterations(FILE *out, const struct report_header *hdr)
{
	int any = 0;

	fputs("<section id=\"iterations\">\n<h2>Iterations</h2>\n", out);
	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];

		if (tp->niterations <= tp->first_steady)
			continue;
		if (hdr->phases->ntraces > 1) {
			fputs("<h3>", out);
			html_text(out, t < hdr->ntraces ? hdr->traces[t] : "?");
			fputs("</h3>\n", out);
		}
		write_iteration_bars(out, hdr, t);
		write_legend(out, hdr, 1);
		write_iteration_histogram(out, hdr, t);
		any = 1;
	}
	if (!any)
		fputs("<p class=\"muted\">No steady iterations: nothing repeats in the trace (see Phases).</p>\n", out);
	fputs("</section>\n", out);
}

/* ---- 4. kernels, copies, idle time ---- */

static void write_kernels(FILE *out, const struct report_header *hdr)
{
	const struct report_charts *c = hdr->charts;
	char a[32], b[32];

	fputs("<section id=\"kernels\">\n<h2>Top kernels by total time</h2>\n", out);
	if (!c || !c->nkernels) {
		fputs("<p class=\"muted\">No kernels.</p>\n</section>\n", out);
		return;
	}
	fprintf(out,
		"<p class=\"small muted\">%zu of %" PRId64
		" kernel names, over the whole %s (all kernels: %s).</p>\n",
		c->nkernels, c->kernel_names, hdr->scope ? "scope" : "trace",
		units_duration(a, sizeof(a), c->kernel_ns, UNITS_FINE));
	fputs("<table class=\"kernels\"><tr><th>Kernel</th><th class=\"barcell\">Total time</th><th class=\"num\">Total</th>"
	      "<th class=\"num\">Share</th><th class=\"num\">Count</th><th class=\"num\">Median</th></tr>\n", out);
	for (size_t i = 0; i < c->nkernels; i++) {
		const struct chart_kernel *k = &c->kernels[i];

		fprintf(out, "<tr class=\"kernel\" data-count=\"%" PRId64 "\" data-total-ns=\"%" PRId64 "\" data-median-ns=\"%.1f\" "
			"data-name=\"", k->count, k->total_ns, k->median_ns);
		html_text(out, k->name);
		fputs("\"><td class=\"name mono\" title=\"", out);
		html_text(out, k->name);
		fputs("\">", out);
		html_kernel_name(out, k->name);
		fprintf(out,
			"</td><td class=\"barcell\"><div class=\"bar\" "
			"style=\"width:%.2f%%\"></div></td>"
			"<td class=\"num\">%s</td><td class=\"num\">%.1f%%</td><td "
			"class=\"num\">%" PRId64 "</td>"
			"<td class=\"num\">%s</td></tr>\n",
			100.0 * (double)k->total_ns /
			    (double)(c->kernels[0].total_ns ? c->kernels[0].total_ns : 1),
			units_duration(a, sizeof(a), k->total_ns, UNITS_FINE),
			c->kernel_ns ? 100.0 * (double)k->total_ns / (double)c->kernel_ns : 0.0,
			k->count,
			units_duration(b, sizeof(b), (int64_t)llround(k->median_ns), UNITS_FINE));
	}
	fputs("</table>\n</section>\n", out);
}

static void write_bytes(FILE *out, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	fprintf(out, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

static void write_copies(FILE *out, const struct report_header *hdr)
{
	const struct report_charts *c = hdr->charts;
	int64_t most = 1;
	char a[32], label[96];

	fputs("<section id=\"copies\">\n<h2>Copies by direction and memory kind</h2>\n", out);
	if (!c || !c->ncopies) {
		fputs("<p class=\"muted\">No copies or memsets.</p>\n</section>\n", out);
		return;
	}
	for (size_t i = 0; i < c->ncopies; i++)
		most = c->copies[i].total_ns > most ? c->copies[i].total_ns : most;
	fputs("<p class=\"small muted\">Copies to or from pageable host memory are marked: the driver stages them "
	      "through a pinned buffer, so they are slower and never overlap with compute.</p>\n", out);
	fputs("<table class=\"copies\"><tr><th>Operation</th><th class=\"barcell\">Total time</th><th class=\"num\">Total"
	      "</th><th class=\"num\">Count</th><th class=\"num\">Bytes</th><th class=\"num\">Bandwidth</th></tr>\n", out);
	for (size_t i = 0; i < c->ncopies; i++) {
		const struct chart_copy *cp = &c->copies[i];
		int pageable = html_copy_pageable(cp);

		fprintf(out, "<tr class=\"copy%s\" data-copy-kind=\"%" PRId64 "\" data-src-kind=\"%" PRId64 "\" "
			"data-dst-kind=\"%" PRId64 "\" data-count=\"%" PRId64 "\" data-bytes=\"%" PRId64 "\" "
			"data-total-ns=\"%" PRId64 "\" data-pageable=\"%d\"><td>", pageable ? " pageable" : "", cp->copy_kind,
			cp->src_kind, cp->dst_kind, cp->count, cp->bytes, cp->total_ns, pageable);
		html_text(out, html_copy_label(cp, label, sizeof(label)));
		if (pageable)
			fputs(" <span class=\"badge b-critical\">pageable</span>", out);
		fprintf(out,
			"</td><td class=\"barcell\"><div class=\"bar%s\" "
			"style=\"width:%.2f%%\"></div></td>"
			"<td class=\"num\">%s</td><td class=\"num\">%" PRId64
			"</td><td class=\"num\">",
			pageable ? " pageable" : "", 100.0 * (double)cp->total_ns / (double)most,
			units_duration(a, sizeof(a), cp->total_ns, UNITS_FINE), cp->count);
		write_bytes(out, (double)cp->bytes);
		fputs("</td><td class=\"num\">", out);
		if (cp->total_ns > 0 && cp->bytes > 0) {
			write_bytes(out, (double)cp->bytes * 1e9 / (double)cp->total_ns);
			fputs("/s", out);
		}
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n</section>\n", out);
}

#define CAUSES_SHOWN 6

/*
 * Idle time by cause, per phase after start-up: a bar of the idle time split by kind, then the
 * largest causes, each drawn against the phase's idle time.
 */
static void write_idle_causes(FILE *out, const struct report_header *hdr)
{
	char a[32], label[256];

	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];

		if (!tp->gpu_work)
			continue;
		fprintf(out, "<h3>Idle time by cause%s", hdr->phases->ntraces > 1 ? ": " : "");
		if (hdr->phases->ntraces > 1)
			html_text(out, t < hdr->ntraces ? hdr->traces[t] : "?");
		fputs("</h3>\n<table class=\"idle-causes\"><tr><th>Phase</th><th>Cause</th><th class=\"barcell\">Share of the "
		      "phase's idle time</th><th class=\"num\">Idle</th><th class=\"num\">Gaps</th></tr>\n", out);
		for (int i = PHASE_WARMUP; i < PHASE_COUNT; i++) {
			const struct phase *ph = &tp->phase[i];
			int64_t idle = ph->split.idle_ns > 0 ? ph->split.idle_ns : 1, rest = 0, nrest = 0;

			if (!ph->ncauses)
				continue;
			fprintf(out, "<tr class=\"idle-phase\" data-trace=\"%zu\" data-phase=\"%s\" data-idle-ns=\"%" PRId64 "\">"
				"<td><b>%s</b></td><td>all causes, by kind</td><td class=\"barcell\"><div class=\"stack\">",
				t, phase_name((enum phase_id)i), ph->split.idle_ns, phase_name((enum phase_id)i));
			for (int k = 0; k < PHASE_IDLE_KINDS; k++)
				if (ph->split.idle_kind_ns[k] > 0)
					fprintf(out,
						"<i style=\"width:%.3f%%;background:%s\" "
						"title=\"%s %s\"></i>",
						100.0 * (double)ph->split.idle_kind_ns[k] /
						    (double)idle,
						html_idle_color(k), html_idle_words(k),
						units_duration(a, sizeof(a),
							       ph->split.idle_kind_ns[k],
							       UNITS_FINE));
			fprintf(out, "</div></td><td class=\"num\"><b>%s</b></td><td></td></tr>\n",
				units_duration(a, sizeof(a), ph->split.idle_ns, UNITS_FINE));
			for (size_t k = 0; k < ph->ncauses; k++) {
				const struct idle_cause *ic = &ph->causes[k];

				if (k >= CAUSES_SHOWN) {
					rest += ic->ns;
					nrest++;
					continue;
				}
				fprintf(out, "<tr class=\"idle-cause\" data-trace=\"%zu\" data-phase=\"%s\" data-kind=\"%s\" "
					"data-ns=\"%" PRId64 "\" data-gaps=\"%" PRId64 "\"><td></td><td>", t, phase_name((enum phase_id)i),
					phase_idle_kind_name(ic->kind), ic->ns, ic->count);
				html_text(out, idle_cause_label(ic, label, sizeof(label)));
				fprintf(
				    out,
				    "</td><td class=\"barcell\"><div class=\"bar\" "
				    "style=\"width:%.2f%%;background:%s\">"
				    "</div></td><td class=\"num\">%s</td><td class=\"num\">%" PRId64
				    "</td></tr>\n",
				    100.0 * (double)ic->ns / (double)idle,
				    html_idle_color(ic->kind),
				    units_duration(a, sizeof(a), ic->ns, UNITS_FINE), ic->count);
			}
			if (nrest)
				fprintf(out,
					"<tr><td></td><td class=\"muted\">%" PRId64
					" more cause%s</td><td></td>"
					"<td class=\"num muted\">%s</td><td></td></tr>\n",
					nrest, nrest == 1 ? "" : "s",
					units_duration(a, sizeof(a), rest, UNITS_FINE));
		}
		fputs("</table>\n", out);
	}
}

#define GH_W 1200
#define GH_H 200

/* Idle gaps by length (from the trace), with the time they add up to. */
static void write_gap_histogram(FILE *out, const struct report_header *hdr)
{
	const struct report_charts *c = hdr->charts;
	int lo = -1, hi = -1;
	int64_t cmax = 1, nsmax = 1;
	double plot_w = GH_W - IT_LEFT - 10, plot_h = GH_H - 20 - 40;
	char a[32], b[32];

	for (int i = 0; c && i < CHART_GAP_BINS; i++) {
		if (!c->gap_bins[i].count)
			continue;
		lo = lo < 0 ? i : lo;
		hi = i;
		cmax = c->gap_bins[i].count > cmax ? c->gap_bins[i].count : cmax;
		nsmax = c->gap_bins[i].ns > nsmax ? c->gap_bins[i].ns : nsmax;
	}
	fputs("<h3>Idle gaps by length</h3>\n", out);
	if (lo < 0) {
		fputs("<p class=\"muted\">No idle gaps between GPU operations.</p>\n", out);
		return;
	}
	fprintf(out, "<figure><svg class=\"gap-hist\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"idle gaps by length\">\n",
		GH_W, GH_H);
	for (int i = lo; i <= hi; i++) {
		const struct chart_gap_bin *g = &c->gap_bins[i];
		double w = plot_w / (double)(hi - lo + 1), x = IT_LEFT + w * (double)(i - lo);
		double hc = plot_h * (double)g->count / (double)cmax, hn = plot_h * (double)g->ns / (double)nsmax;

		if (g->hi_ns)
			snprintf(b, sizeof(b), "%s",
				 units_duration(a, sizeof(a), g->hi_ns, UNITS_FINE));
		else
			snprintf(b, sizeof(b), "longer");
		fprintf(out,
			"<g class=\"gap-bin\" data-lo-ns=\"%" PRId64 "\" data-hi-ns=\"%" PRId64
			"\" data-count=\"%" PRId64 "\" data-ns=\"%" PRId64
			"\"><title>gaps from %s to %s: %" PRId64 ", %s of idle time</title>",
			g->lo_ns, g->hi_ns, g->count, g->ns,
			units_duration(a, sizeof(a), g->lo_ns, UNITS_FINE), b, g->count,
			units_duration(a, sizeof(a), g->ns, UNITS_FINE));
		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4D4D4D\"/>"
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#B0B0B0\"/>", x + w * 0.1,
			20 + plot_h - hc, w * 0.38, hc, x + w * 0.5, 20 + plot_h - hn, w * 0.38, hn);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text></g>\n", x + w / 2,
			20 + plot_h + 14, i ? html_short(g->lo_ns, a, sizeof(a)) : "0");
	}
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", IT_LEFT, GH_W - 10, 20 + plot_h,
		20 + plot_h);
	fprintf(out, "<text x=\"%d\" y=\"%d\">gap length from</text></svg>\n", IT_LEFT, GH_H - 6);
	fputs("<div class=\"legend\">", out);
	html_swatch(out, "#4D4D4D", "number of gaps");
	html_swatch(out, "#B0B0B0", "idle time in them");
	fprintf(out,
		"</div><figcaption class=\"small muted\">Every gap between the GPU operations of a "
		"device over the "
		"whole %s (tallest bars: %" PRId64 " gaps, %s).</figcaption></figure>\n",
		hdr->scope ? "scope" : "trace", cmax,
		units_duration(a, sizeof(a), nsmax, UNITS_FINE));
}

static void write_idle(FILE *out, const struct report_header *hdr)
{
	fputs("<section id=\"idle\">\n<h2>GPU idle time</h2>\n", out);
	write_idle_causes(out, hdr);
	write_gap_histogram(out, hdr);
	fputs("</section>\n", out);
}

/* ---- 5. findings ---- */

/* The ranked findings as a table, at the top of the page; the cards below hold their evidence. */
static void write_findings_table(FILE *out, const struct report_header *hdr, const struct findings *findings,
				 const struct report_options *opt)
{
	int64_t total = report_recoverable_total(hdr, findings);
	char a[32], b[32];

	fputs("<div id=\"ranked\">\n<h2>Findings, ranked</h2>\n", out);
	if (!findings->count) {
		fprintf(out, "<p>No findings from %zu rules%s.</p>\n</div>\n", opt->nrules,
			hdr->steady_only ? " in the steady state" : "");
		return;
	}
	fprintf(out,
		"<p id=\"findings-total\" data-recoverable-ns=\"%" PRId64
		"\">%zu finding%s from %zu rules%s, ranked by "
		"recoverable time: up to %s in all",
		total, findings->count, findings->count == 1 ? "" : "s", opt->nrules,
		hdr->steady_only ? " on the steady state" : "",
		units_duration(a, sizeof(a), total, UNITS_FINE));
	if (report_judged_span(hdr) > 0)
		fprintf(out, " (%.1f%% of the %s)", 100.0 * (double)total / (double)report_judged_span(hdr),
			hdr->steady_only ? "steady state" : "span");
	fputs(".</p>\n", out);
	fputs("<table class=\"finding-list\"><tr><th class=\"num\">#</th><th>Severity</th><th>Rule</th><th>Finding</th>"
	      "<th class=\"num\">Recoverable</th><th class=\"num\">Per iteration</th></tr>\n", out);
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "<tr><td class=\"num\"><a href=\"#finding-%zu\">%zu</a></td><td><span class=\"badge b-%s\">%s"
			"</span></td><td><code>%s</code></td><td>", i + 1, i + 1, html_severity_word(f->severity),
			html_severity_word(f->severity), f->rule_id);
		html_text(out, f->message);
		fprintf(out, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
			f->recoverable_ns > 0
			    ? units_duration(a, sizeof(a), f->recoverable_ns, UNITS_FINE)
			    : "unknown",
			f->recoverable_ns > 0 && hdr->steady_iterations > 0
			    ? units_duration(b, sizeof(b),
					     f->recoverable_ns / hdr->steady_iterations, UNITS_FINE)
			    : "");
	}
	fputs("</table>\n<p class=\"small muted\">Each one's evidence and fix: <a href=\"#findings\">Findings</a>."
	      "</p>\n</div>\n", out);
}

void report_write_html(FILE *out, const struct report_header *hdr, const struct findings *findings,
		       const struct report_options *opt)
{
	write_head(out, hdr);
	fputs("<body>\n", out);
	write_summary(out, hdr, findings);
	write_findings_table(out, hdr, findings, opt);
	report_fix_order_html(out, hdr, findings);
	write_phases(out, hdr);
	fputs("<section id=\"timeline\">\n<h2>Timeline</h2>\n", out);
	html_write_timeline(out, hdr, findings);
	write_legend(out, hdr, 1);
	html_write_utilization(out, hdr);
	fputs("</section>\n", out);
	report_memory_html(out, hdr);
	write_iterations(out, hdr);
	write_kernels(out, hdr);
	write_copies(out, hdr);
	write_idle(out, hdr);
	html_write_findings(out, hdr->origin, hdr->steady_iterations, findings);
	fprintf(out, "<footer class=\"small muted\"><p>gpt-trace %s &middot; the same data as <code>gpt-trace report "
		     "--format json</code> (docs/report-json.md); this page: docs/html-report.md</p></footer>\n"
		     "</body>\n</html>\n", GPT_TRACE_VERSION);
}
