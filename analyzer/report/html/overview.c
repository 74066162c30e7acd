/*
 * The HTML report's overview timeline: one SVG over the whole span and, when the steady state is
 * short next to it, one zoomed on the steady state. Per trace (rank): its phases, its iterations
 * (NVTX steps or the kernel sequence's period), then per device a row of idle time coloured by its
 * cause and one lane per stream with its busy time; below, one row per finding where its evidence
 * lies. Busy and idle time are merged at the pixel scale (report_charts' buckets), so the drawing
 * does not grow with the events; each shape's <title> says what is there on hover.
 *
 * Idle time per pixel comes from the trace; its colour from the attribution of phases.c: the largest
 * idle cause of the iteration (or, outside iterations, the phase) the pixel lies in.
 */
#include "analyzer/report/html/html.h"
#include "analyzer/report/fix-order.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define ROW_PHASE 16
#define ROW_DEVICE 18
#define ROW_FINDING 14
#define LEVELS 8	/* busy and idle shares are drawn in eighths, so neighbouring pixels merge */

double html_timeline_x(const struct html_timeline *tl, int64_t t)
{
	double x = (double)(t - tl->w->start) / (double)tl->w->width;

	if (x < 0)
		x = 0;
	if (x > CHART_BUCKETS)
		x = CHART_BUCKETS;
	return TL_LEFT + x;
}

void html_timeline_label(struct html_timeline *tl, int height, const char *text, const char *cls)
{
	fprintf(tl->out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s%s%s>", TL_LEFT - 6, tl->y + height - 4,
		cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	html_text(tl->out, text);
	fputs("</text>", tl->out);
}

/* t as a tick label with as many decimals as the step between ticks needs: "+3.115 s", "+500 ms". */
static const char *tick_label(int64_t t, int64_t step, char *buf, size_t len)
{
	static const struct { int64_t scale; const char *unit; } units[] = {
		{ 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" }, { 1, "ns" },
	};
	size_t u = 0;
	int decimals = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && (t < units[u].scale || step < units[u].scale / 1000))
		u++;
	for (int64_t s = units[u].scale; s > step && decimals < 9; s /= 10)
		decimals++;
	if (!t)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "+%.*f %s", decimals, (double)t / (double)units[u].scale, units[u].unit);
	return buf;
}

void html_timeline_axis(struct html_timeline *tl)
{
	int64_t span = tl->w->end - tl->w->start, step = 1, first, target = span / 8, from;
	char a[32];

	/* About 8 ticks, at a 1-2-5 step; in divisions, since a damaged trace's span can be near
	 * INT64_MAX. */
	while (step < target && step <= INT64_MAX / 10) {
		if (step * 2 >= target || step * 5 >= target) {
			step *= step * 2 >= target ? 2 : 5;
			break;
		}
		step *= 10;
	}
	/* ticks count from the trace's first event, as the text report's times do */
	from = tl->w->start - tl->origin;
	first = tl->origin + (from / step + (from % step > 0)) * step;
	for (int64_t t = first; t <= tl->w->end; t += step) {
		double x = html_timeline_x(tl, t);

		fprintf(tl->out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			"<text x=\"%.1f\" y=\"14\" text-anchor=\"middle\">%s</text>\n", x, x, TL_AXIS - 4, tl->height, x,
			tick_label(t - tl->origin, step, a, sizeof(a)));
		if (t > tl->w->end - step)	/* the next tick is past the end, or past INT64_MAX */
			break;
	}
	tl->y = TL_AXIS;
}

static const char *const phase_fill[PHASE_COUNT] = { "#DDDDDD", "#F5D9A6", "#B9DDF1", "#EEEEEE" };

static void write_phases_row(struct html_timeline *tl, const struct trace_phases *tp)
{
	char a[32], b[32];

	html_timeline_label(tl, ROW_PHASE, "phases", "muted");
	for (int i = 0; i < PHASE_COUNT; i++) {
		const struct phase *ph = &tp->phase[i];
		double x0 = html_timeline_x(tl, ph->start), x1 = html_timeline_x(tl, ph->end);

		if (ph->end <= ph->start || x1 <= x0)
			continue;
		fprintf(tl->out, "<g class=\"tl-phase\" data-phase=\"%s\"><title>%s from %s, %s: ",
			phase_name((enum phase_id)i), phase_name((enum phase_id)i),
			html_time(tl->origin, ph->start, a, sizeof(a)),
			units_duration(b, sizeof(b), ph->end - ph->start, UNITS_FINE));
		html_text(tl->out, ph->reason);
		fprintf(tl->out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", x0, tl->y + 1,
			x1 - x0 < 1 ? 1 : x1 - x0, ROW_PHASE - 2, phase_fill[i]);
		if (x1 - x0 > 70)
			fprintf(tl->out, "<text x=\"%.1f\" y=\"%d\">%s</text>", x0 + 4, tl->y + ROW_PHASE - 4,
				phase_name((enum phase_id)i));
		fputs("</g>\n", tl->out);
	}
	tl->y += ROW_PHASE;
}

/* The title of steps i..j: one iteration, or the group merged to be wide enough. */
static void step_title(struct html_timeline *tl, const struct html_step *steps, size_t i, size_t j, const char *noun,
		       int warm, size_t late)
{
	int64_t o = tl->origin;
	char a[32], b[32];

	if (i == j)
		fprintf(tl->out, "%s #%" PRId64 "%s from %s: %s", noun, steps[i].number,
			warm ? " (warm-up)" : "", html_time(o, steps[i].start, a, sizeof(a)),
			units_duration(b, sizeof(b), steps[i].end - steps[i].start, UNITS_FINE));
	else
		fprintf(tl->out, "iterations #%" PRId64 "-#%" PRId64 "%s from %s to %s", steps[i].number, steps[j].number,
			warm ? " (some warm-up)" : "", html_time(o, steps[i].start, a, sizeof(a)),
			html_time(o, steps[j].end, b, sizeof(b)));
	if (i == j && late)
		fprintf(tl->out, "; straggler: the others waited %s for this rank",
			units_duration(a, sizeof(a), steps[i].late_ns, UNITS_FINE));
	else if (late)
		fprintf(tl->out, "; this rank the straggler in %zu", late);
}

/*
 * Iterations in the window: one shape each where they are at least 3 pixels wide, else merged into
 * groups that are; warm-up iterations in orange, those a straggler held up (late_ns) in red.
 */
void html_timeline_steps(struct html_timeline *tl, const struct html_step *steps, size_t n, const char *words,
			 const char *noun)
{
	size_t i = 0, shapes = 0;

	if (!n)
		return;
	fprintf(tl->out, "<g class=\"tl-steps\" data-iterations=\"%zu\">", n);
	html_timeline_label(tl, ROW_STEPS, words, "muted");
	while (i < n && steps[i].end <= tl->w->start)
		i++;
	while (i < n && steps[i].start < tl->w->end) {
		size_t j = i, late = 0;
		double x0 = html_timeline_x(tl, steps[i].start), x1;
		int warm = 0;

		while (j + 1 < n && steps[j + 1].start < tl->w->end && html_timeline_x(tl, steps[j].end) - x0 < 3)
			j++;
		x1 = html_timeline_x(tl, steps[j].end);
		for (size_t k = i; k <= j; k++) {
			warm |= steps[k].warmup;
			late += steps[k].late_ns > 0;
		}
		fprintf(tl->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" stroke=\"#fff\" "
			"stroke-width=\"0.5\"%s><title>", x0, tl->y + 2, x1 - x0 < 1 ? 1 : x1 - x0, ROW_STEPS - 4,
			late ? "#D55E00" : warm ? "#E69F00" : shapes % 2 ? "#7FA7C9" : "#4F7FA8",
			late ? " class=\"tl-late\"" : "");
		step_title(tl, steps, i, j, noun, warm, late);
		fputs("</title></rect>", tl->out);
		shapes++;
		i = j + 1;
	}
	fputs("</g>\n", tl->out);
	tl->y += ROW_STEPS;
}

/* A trace's iterations (NVTX steps or the kernel sequence's period) on the steps row. */
static void write_steps_row(struct html_timeline *tl, const struct trace_phases *tp)
{
	struct html_step *steps;
	char words[64];

	if (!tp->niterations)
		return;
	steps = xcalloc(tp->niterations, sizeof(*steps));
	for (size_t i = 0; i < tp->niterations; i++)
		steps[i] = (struct html_step){ .start = tp->iterations[i].start, .end = tp->iterations[i].end,
					       .number = (int64_t)i + 1, .warmup = tp->iterations[i].warmup };
	snprintf(words, sizeof(words), "%s (%zu)", tp->source == ITERATIONS_KERNELS ? "iterations" : "NVTX steps",
		 tp->niterations);
	html_timeline_steps(tl, steps, tp->niterations, words, tp->source == ITERATIONS_KERNELS ? "iteration" : "step");
	free(steps);
}

/*
 * What the GPU idled for where t lies: the kind of idle time that is largest in the iteration there
 * (as in the iteration bars) or, outside iterations, the phase's largest cause; words in buf.
 */
static int cause_at(const struct trace_phases *tp, int64_t t, char *buf, size_t len)
{
	size_t lo = 0, hi = tp->niterations;
	const struct phase *ph = NULL;
	char words[192];

	while (lo < hi) {	/* the last iteration starting at or before t */
		size_t mid = (lo + hi) / 2;

		if (tp->iterations[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && t < tp->iterations[lo - 1].end && tp->iterations[lo - 1].split.idle_ns > 0) {
		const struct iteration *it = &tp->iterations[lo - 1];
		struct idle_cause c = { .kind = it->top_kind, .detail = it->top_detail };
		int kind = 0;

		for (int k = 1; k < PHASE_IDLE_KINDS; k++)
			kind = it->split.idle_kind_ns[k] > it->split.idle_kind_ns[kind] ? k : kind;
		snprintf(buf, len, "iteration #%zu idled mostly for %s (%.0f%% of its idle time); its largest cause: %s", lo,
			 html_idle_words(kind), 100.0 * (double)it->split.idle_kind_ns[kind] / (double)it->split.idle_ns,
			 it->top_ns > 0 ? idle_cause_label(&c, words, sizeof(words)) : "?");
		return kind;
	}
	for (int i = PHASE_WARMUP; i < PHASE_COUNT; i++)
		if (t >= tp->phase[i].start && t < tp->phase[i].end)
			ph = &tp->phase[i];
	if (ph && ph->ncauses) {
		snprintf(buf, len, "largest idle cause of the %s phase: %s", phase_name((enum phase_id)(ph - tp->phase)),
			 idle_cause_label(&ph->causes[0], words, sizeof(words)));
		return ph->causes[0].kind;
	}
	snprintf(buf, len, "cause not attributed here");
	return PHASE_IDLE_UNKNOWN;
}

static const struct trace_phases *phases_of(const struct report_header *hdr, int64_t trace_id)
{
	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++)
		if (hdr->phases->traces[t].trace_id == trace_id)
			return &hdr->phases->traces[t];
	return NULL;
}

static void write_device_row(struct html_timeline *tl, const struct report_header *hdr, const struct chart_device *d)
{
	const struct trace_phases *tp = phases_of(hdr, d->trace_id);
	size_t wi = tl->wi;
	const struct chart_window *w = tl->w;
	char text[96], a[32], b[32], c[32], why[320];
	int64_t b0 = 0;

	snprintf(text, sizeof(text), "GPU %" PRId64 " idle", d->device);
	fprintf(tl->out, "<g class=\"tl-device\" data-trace=\"%" PRId64 "\" data-device=\"%" PRId64 "\" data-busy-ns=\"%"
		PRId64 "\" data-idle-ns=\"%" PRId64 "\" data-gaps=\"%" PRId64 "\" data-first-ns=\"%" PRId64 "\" "
		"data-last-ns=\"%" PRId64 "\">", d->trace_id, d->device, d->busy_ns, d->idle_ns, d->gaps, d->first, d->last);
	html_timeline_label(tl, ROW_DEVICE, text, NULL);
	fprintf(tl->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"#f4f4f4\"/>", html_timeline_x(tl, d->first),
		tl->y + 1, html_timeline_x(tl, d->last) - html_timeline_x(tl, d->first), ROW_DEVICE - 2);
	/* runs of buckets with the same cause and the same share of idle time, in eighths */
	while (b0 < CHART_BUCKETS) {
		int64_t bs = w->start + b0 * w->width, b1 = b0, idle = d->idle[wi][b0];
		int level = (int)((idle * LEVELS + w->width - 1) / w->width), kind;

		if (!idle) {
			b0++;
			continue;
		}
		kind = tp ? cause_at(tp, bs + w->width / 2, why, sizeof(why)) : PHASE_IDLE_UNKNOWN;
		if (!tp)
			snprintf(why, sizeof(why), "cause not attributed");
		while (b1 + 1 < CHART_BUCKETS && d->idle[wi][b1 + 1]) {
			int64_t next = d->idle[wi][b1 + 1];
			char why2[320];

			if ((int)((next * LEVELS + w->width - 1) / w->width) != level ||
			    (tp && cause_at(tp, bs + (b1 + 1 - b0) * w->width + w->width / 2, why2, sizeof(why2)) != kind))
				break;
			idle += next;
			b1++;
		}
		{
			double h = (double)(ROW_DEVICE - 2) * level / LEVELS;

			fprintf(tl->out,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%" PRId64
				"\" height=\"%.1f\" fill=\"%s\"><title>"
				"%s to %s: GPU %" PRId64 " idle %s (%.0f%%); ",
				(double)TL_LEFT + (double)b0, tl->y + 1 + (ROW_DEVICE - 2) - h,
				b1 - b0 + 1, h, html_idle_color(kind),
				html_time(tl->origin, bs, a, sizeof(a)),
				html_time(tl->origin, w->start + (b1 + 1) * w->width, b, sizeof(b)),
				d->device, units_duration(c, sizeof(c), idle, UNITS_FINE),
				100.0 * (double)idle / (double)((b1 - b0 + 1) * w->width));
			html_text(tl->out, why);
			fputs("</title></rect>", tl->out);
		}
		b0 = b1 + 1;
	}
	fputs("</g>\n", tl->out);
	tl->y += ROW_DEVICE;
}

void html_timeline_lane(struct html_timeline *tl, const struct chart_lane *l, const char *text)
{
	const struct chart_window *w = tl->w;
	size_t wi = tl->wi;
	char a[32], b[32], c[32];
	int64_t b0 = 0;

	fprintf(tl->out, "<g class=\"tl-lane\" data-trace=\"%" PRId64 "\" data-device=\"%" PRId64 "\" data-stream=\"%" PRId64
		"\" data-ops=\"%" PRId64 "\" data-busy-ns=\"%" PRId64 "\">", l->trace_id, l->device, l->stream, l->ops,
		l->busy_ns);
	html_timeline_label(tl, ROW_LANE, text, NULL);
	while (b0 < CHART_BUCKETS) {
		int64_t sum[CHART_WORKS], total = 0, b1 = b0;
		int level, work = 0;

		for (int k = 0; k < CHART_WORKS; k++) {
			sum[k] = l->busy[wi][b0][k];
			total += sum[k];
			work = sum[k] > sum[work] ? k : work;
		}
		if (!total) {
			b0++;
			continue;
		}
		/* at least one eighth: a 1 us kernel in a 1 ms pixel still shows */
		level = (int)((total * LEVELS + w->width - 1) / w->width);
		level = level > LEVELS ? LEVELS : level;
		while (b1 + 1 < CHART_BUCKETS) {
			int64_t n[CHART_WORKS], nt = 0;
			int nw = 0, nl;

			for (int k = 0; k < CHART_WORKS; k++) {
				n[k] = l->busy[wi][b1 + 1][k];
				nt += n[k];
				nw = n[k] > n[nw] ? k : nw;
			}
			nl = (int)((nt * LEVELS + w->width - 1) / w->width);
			nl = nl > LEVELS ? LEVELS : nl;
			if (!nt || nw != work || nl != level)
				break;
			for (int k = 0; k < CHART_WORKS; k++)
				sum[k] += n[k];
			total += nt;
			b1++;
		}
		{
			double h = (double)(ROW_LANE - 2) * level / LEVELS;

			fprintf(tl->out,
				"<rect x=\"%d\" y=\"%.1f\" width=\"%" PRId64
				"\" height=\"%.1f\" fill=\"%s\"><title>%s to %s: "
				"%s busy %s",
				TL_LEFT + (int)b0, tl->y + 1 + (ROW_LANE - 2) - h, b1 - b0 + 1, h,
				html_work_color(work),
				html_time(tl->origin, w->start + b0 * w->width, a, sizeof(a)),
				html_time(tl->origin, w->start + (b1 + 1) * w->width, b, sizeof(b)),
				text, units_duration(c, sizeof(c), total, UNITS_FINE));
			for (int k = 0; k < CHART_WORKS; k++)
				if (sum[k] && sum[k] != total)
					fprintf(tl->out, ", %s %s",
						k == CHART_COMPUTE ? "compute"
						: k == CHART_COMM  ? "NCCL"
								   : "copies",
						units_duration(c, sizeof(c), sum[k], UNITS_FINE));
			fputs("</title></rect>", tl->out);
		}
		b0 = b1 + 1;
	}
	fputs("</g>\n", tl->out);
	tl->y += ROW_LANE;
}

static void write_lane(struct html_timeline *tl, const struct chart_lane *l)
{
	char text[64];

	if (l->stream == -1)
		snprintf(text, sizeof(text), "other streams");
	else
		snprintf(text, sizeof(text), "stream %" PRId64, l->stream);
	html_timeline_lane(tl, l, text);
}

static void write_findings_rows(struct html_timeline *tl, const struct findings *findings)
{
	static const char *const fill[3] = { "#8C8C8C", "#E69F00", "#D55E00" };
	char a[32], b[32], c[32], text[64];

	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];
		double x0, x1;

		if (!f->start && !f->end)
			continue;
		x0 = html_timeline_x(tl, f->start);
		x1 = html_timeline_x(tl, f->end);
		if (x1 - x0 < 3)
			x1 = x0 + 3;
		snprintf(text, sizeof(text), "#%zu %s", i + 1, f->rule_id);
		fprintf(tl->out, "<g class=\"tl-finding\" data-rank=\"%zu\" data-start-ns=\"%" PRId64 "\" data-end-ns=\"%" PRId64
			"\">", i + 1, f->start, f->end);
		html_timeline_label(tl, ROW_FINDING, text, NULL);
		fprintf(tl->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>#%zu %s %s: ", x0,
			tl->y + 2, x1 - x0, ROW_FINDING - 4, fill[f->severity <= SEVERITY_CRITICAL ? f->severity : 0], i + 1,
			f->rule_id, f->severity == SEVERITY_CRITICAL ? "critical" : f->severity == SEVERITY_WARNING ? "warning" : "info");
		html_text(tl->out, f->message);
		fprintf(tl->out, "\nevidence from %s to %s", html_time(tl->origin, f->start, a, sizeof(a)),
			html_time(tl->origin, f->end, b, sizeof(b)));
		if (f->recoverable_ns > 0)
			fprintf(tl->out, "; recoverable %s",
				units_duration(c, sizeof(c), f->recoverable_ns, UNITS_FINE));
		fputs("</title></rect></g>\n", tl->out);
		tl->y += ROW_FINDING;
	}
}

/* The trace's steady-state critical path (fix-order.h), NULL when it has none. */
static const struct report_fix_order *critical_of(const struct report_header *hdr, int64_t trace_id)
{
	for (size_t i = 0; i < hdr->nfix_order; i++)
		if (hdr->fix_order[i].trace_id == trace_id && hdr->fix_order[i].npath)
			return &hdr->fix_order[i];
	return NULL;
}

/* A row with the critical path: per pixel column the part it spent most of that column in. */
static void write_critical_row(struct html_timeline *tl, const struct report_fix_order *o)
{
	static const char *const fill[WHAT_IF_PARTS] = {
		[WHAT_IF_HOST] = "#1A1A1A", [WHAT_IF_COMPUTE] = "#0072B2", [WHAT_IF_COMM] = "#CC79A7",
		[WHAT_IF_COPY] = "#009E73", [WHAT_IF_LAUNCH] = "#AAAAAA",
	};
	double (*col)[WHAT_IF_PARTS] = xcalloc(CHART_BUCKETS, sizeof(*col));
	int64_t width = tl->w->width > 0 ? tl->w->width : 1;
	int run = -1;
	size_t run_start = 0;

	for (size_t i = 0; i < o->npath; i++) {
		const struct what_if_segment *g = &o->path[i];
		int64_t a = g->start - tl->w->start, b = g->end - tl->w->start;

		if (b <= 0 || a >= width * CHART_BUCKETS)
			continue;
		for (int64_t k = a > 0 ? a / width : 0; k < CHART_BUCKETS && k * width < b; k++) {
			int64_t lo = k * width > a ? k * width : a, hi = (k + 1) * width < b ? (k + 1) * width : b;

			col[k][g->part] += (double)(hi - lo);
		}
	}
	html_timeline_label(tl, ROW_LANE, "critical path", NULL);
	for (size_t k = 0; k <= CHART_BUCKETS; k++) {
		int top = -1;

		for (int p = 0; k < CHART_BUCKETS && p < WHAT_IF_PARTS; p++)
			if (col[k][p] > 0 && (top < 0 || col[k][p] > col[k][top]))
				top = p;
		if (top == run && k < CHART_BUCKETS)
			continue;
		if (run >= 0)
			fprintf(tl->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%zu\" height=\"%d\" fill=\"%s\">"
				"<title>critical path: %s</title></rect>", TL_LEFT + (double)run_start, tl->y + 3,
				k - run_start, ROW_LANE - 6, fill[run], what_if_part_name((enum what_if_part)run));
		run = top;
		run_start = k;
	}
	fputs("\n", tl->out);
	tl->y += ROW_LANE;
	free(col);
}

/* The trace (rank) whose steady iterations are slowest, when several are given: the straggler. */
static ssize_t straggler(const struct report_header *hdr, int64_t *excess_pct)
{
	ssize_t slow = -1;
	int64_t fastest = INT64_MAX, slowest = 0;

	for (size_t t = 0; hdr->phases && hdr->phases->ntraces > 1 && t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];

		if (tp->niterations <= tp->first_steady || tp->median_ns <= 0)
			continue;
		if (tp->median_ns > slowest) {
			slowest = tp->median_ns;
			slow = (ssize_t)t;
		}
		fastest = tp->median_ns < fastest ? tp->median_ns : fastest;
	}
	if (slow < 0 || fastest == INT64_MAX || slowest * 100 < fastest * 105)	/* within 5%: nobody lags */
		return -1;
	*excess_pct = (slowest - fastest) * 100 / fastest;
	return slow;
}

static int rows_height(const struct report_header *hdr, const struct findings *findings)
{
	const struct report_charts *c = hdr->charts;
	int h = TL_AXIS + 6;

	for (size_t t = 0; hdr->phases && t < hdr->phases->ntraces; t++)
		h += (hdr->phases->ntraces > 1 || hdr->ntraces > 1 ? ROW_TRACE : 0) + ROW_PHASE +
		     (hdr->phases->traces[t].niterations ? ROW_STEPS : 0) +
		     (critical_of(hdr, hdr->phases->traces[t].trace_id) ? ROW_LANE : 0);
	if (!hdr->phases)
		for (size_t t = 0; t < hdr->ntraces; t++)
			h += hdr->ntraces > 1 ? ROW_TRACE : 0;
	h += (int)c->ndevices * ROW_DEVICE + (int)c->nlanes * ROW_LANE;
	for (size_t i = 0; i < c->nutils; i++)
		h += html_util_height(&c->utils[i]);
	for (size_t i = 0; i < findings->count; i++)
		if (findings->items[i].start || findings->items[i].end)
			h += ROW_FINDING;
	return h;
}

static void write_window(FILE *out, const struct report_header *hdr, const struct findings *findings, size_t wi)
{
	const struct report_charts *c = hdr->charts;
	struct html_timeline tl = { .out = out, .origin = hdr->origin, .w = &c->windows[wi], .wi = wi,
				    .height = rows_height(hdr, findings) };
	int64_t excess = 0;
	ssize_t slow = straggler(hdr, &excess);
	char a[32], b[32];

	fprintf(out, "<h3>%s: %s to %s</h3>\n", wi ? "Steady state, zoomed" : "Whole span",
		html_at(hdr, wi ? c->windows[wi].start : hdr->start, a, sizeof(a)),
		html_at(hdr, wi ? c->windows[wi].end : hdr->end, b, sizeof(b)));
	fprintf(out, "<figure><svg class=\"timeline\" data-window=\"%s\" data-start-ns=\"%" PRId64 "\" data-end-ns=\"%" PRId64
		"\" data-bucket-ns=\"%" PRId64 "\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"timeline\">\n",
		wi ? "steady" : "span", c->windows[wi].start, c->windows[wi].end, c->windows[wi].width, TL_W, tl.height);
	html_timeline_axis(&tl);
	for (size_t t = 0; t < hdr->ntraces; t++) {
		const struct trace_phases *tp = phases_of(hdr, (int64_t)t);

		fprintf(out, "<g class=\"tl-trace\" data-trace=\"%zu\"%s>\n", t, (ssize_t)t == slow ? " data-straggler=\"1\"" : "");
		if (hdr->ntraces > 1) {
			char text[300];
			const char *path = hdr->traces[t], *base = strrchr(path, '/');

			snprintf(text, sizeof(text), "%s", base ? base + 1 : path);
			fprintf(out, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", tl.y + 1, TL_W, ROW_TRACE - 2,
				(ssize_t)t == slow ? "#FBE3D6" : "#F2F2F2");
			fprintf(out, "<text x=\"4\" y=\"%d\" font-weight=\"600\">", tl.y + ROW_TRACE - 6);
			html_text(out, text);
			if ((ssize_t)t == slow)
				fprintf(out, " &#8212; straggler: median iteration %" PRId64 "%% slower than the fastest rank", excess);
			fputs("</text>\n", out);
			tl.y += ROW_TRACE;
		}
		if (tp) {
			write_phases_row(&tl, tp);
			write_steps_row(&tl, tp);
			if (critical_of(hdr, tp->trace_id))
				write_critical_row(&tl, critical_of(hdr, tp->trace_id));
		}
		for (size_t d = 0; d < c->ndevices; d++) {
			if (c->devices[d].trace_id != (int64_t)t)
				continue;
			write_device_row(&tl, hdr, &c->devices[d]);
			for (size_t l = 0; l < c->nlanes; l++)
				if (c->lanes[l].trace_id == (int64_t)t && c->lanes[l].device == c->devices[d].device)
					write_lane(&tl, &c->lanes[l]);
			for (size_t u = 0; u < c->nutils; u++)
				if (c->utils[u].trace_id == (int64_t)t && c->utils[u].device == c->devices[d].device)
					html_util_row(&tl, &c->utils[u]);
		}
		fputs("</g>\n", out);
	}
	write_findings_rows(&tl, findings);
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n</svg></figure>\n", TL_LEFT, TL_LEFT,
		TL_AXIS - 4, tl.y);
}

void html_write_timeline(FILE *out, const struct report_header *hdr, const struct findings *findings)
{
	const struct report_charts *c = hdr->charts;

	if (!c || !c->nwindows) {
		fputs("<p class=\"muted\">No GPU work to draw.</p>\n", out);
		return;
	}
	fprintf(out, "<p class=\"small muted\">Each pixel column is %s. Stream lanes: the share of the column the stream was "
		     "busy, coloured by the kind of work that dominates it. GPU rows: the share it was idle, coloured by the "
		     "kind of idle time largest in the iteration there (outside iterations: the phase's largest cause). "
		     "Critical path (the steady state's, as the what-if replay finds it): what the column's stretch of it "
		     "went through most, black the host, coloured as the lanes for kernels and copies, grey an operation "
		     "waiting for its launch or stream. Hover for details.</p>\n",
		"one thousandth of the window");
	for (size_t w = 0; w < c->nwindows; w++)
		write_window(out, hdr, findings, w);
}
