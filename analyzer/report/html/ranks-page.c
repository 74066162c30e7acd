/*
 * The cross-rank report as one self-contained HTML page (gpt-trace report --format html over the
 * ranks of a job), in the single-trace page's frame and look (frame.c): a summary naming the
 * straggler, the ranked findings, the ranks side by side on the job's clock (ranks-timeline.c), the
 * iterations, the ranks, communication, and the findings' evidence.
 *
 * The iteration chart is scaled on the steady state: warm-up iterations (hundreds of ms of JIT and
 * NCCL set-up against steady steps of a few) get a small chart of their own, each bar labelled, and
 * a steady bar more than CLIP_MEDIANS times the median is cut at the top with its time written
 * above, so that an outlier does not flatten the rest. Every number drawn also sits in a data-*
 * attribute in ns, as on the single-trace page, for tests to read.
 */
#include "analyzer/report/html/html.h"
#include "analyzer/ranks/job-path.h"
#include "common/util.h"
#include "analyzer/ranks/job.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define IT_W 1200
#define IT_H 240
#define IT_LEFT 70
#define IT_TOP 24	/* room for the times of clipped bars */
#define IT_BOTTOM 30
#define BARS_MAX 300	/* steady bars; beyond, consecutive iterations are averaged */
#define CLIP_MEDIANS 8	/* the steady chart's scale stops at this many times the median bar */
#define WARM_BAR 56	/* px per warm-up bar, up to WARM_BARS_WIDE of them */
#define WARM_BARS_WIDE 12
#define TRACES_SHOWN 8	/* in the summary; the ranks' table has every rank */

static const char more_css[] = "tr.straggler td{background:#FBE3D6}.iter-charts{display:grid;gap:16px;"
			       "align-items:start}.iter-charts figure{margin:0}";

static const char *dur(int64_t ns, char *buf, size_t len)
{
	return units_duration(buf, len, ns, UNITS_FINE);
}

static const char *signed_dur(int64_t ns, char *buf, size_t len)
{
	char tmp[48];

	snprintf(buf, len, "%s%s", ns < 0 ? "-" : "+",
		 units_duration(tmp, sizeof(tmp), ns < 0 ? -ns : ns, UNITS_FINE));
	return buf;
}

static size_t steady_count(const struct job_report *job)
{
	size_t n = 0;

	for (size_t i = 0; i < job->niterations; i++)
		n += job->iterations[i].steady != 0;
	return n;
}

/* ---- summary ---- */

/* A lined-up job (analyzer/ranks/job.h): how its iterations were matched, where its collectives
 * count from. */
static void write_lineup(FILE *out, const struct job_report *job)
{
	char words[160], from[64];

	fputs("<dt>Lined up</dt><dd id=\"lined-up\">", out);
	html_text(out, job_lineup_words(job, words, sizeof(words)));
	if (job->common_iteration >= 0) {
		fputs("; collectives counted from ", out);
		html_text(out, job_iteration_name(job, &job->iterations[job->common_iteration], from, sizeof(from)));
		fputs(", the first iteration every rank has whole", out);
	}
	fputs("</dd>\n", out);
}

static void write_summary(FILE *out, const struct job_report *job, const struct ranks_timeline *tl)
{
	size_t nsteady = steady_count(job);
	char a[32], b[32];

	fprintf(out, "<header>\n<h1>gpt-trace report: %zu rank%s</h1>\n", job->nranks, job->nranks == 1 ? "" : "s");
	fprintf(out, "<nav class=\"small\"><a href=\"#timeline\">Timeline</a><a href=\"#iterations\">Iterations</a>"
		     "<a href=\"#ranks\">Ranks</a><a href=\"#communication\">Communication</a>"
		     "<a href=\"#findings\">Findings (%zu)</a></nav>\n", job->findings.count);
	fprintf(out, "<dl class=\"summary\" id=\"summary\" data-ranks=\"%zu\" data-world-size=\"%" PRId64 "\" "
		"data-hosts=\"%zu\" data-median-iteration-ns=\"%" PRId64 "\" data-straggler-rank=\"%" PRId64 "\">\n",
		job->nranks, job->world_size, job->nhosts, job->median_iteration_ns,
		tl->straggler >= 0 ? job->ranks[tl->straggler].rank : -1);
	fputs("<dt>Job</dt><dd><code>", out);
	html_text(out, *job->job ? job->job : "-");
	fprintf(out, "</code>, world size %" PRId64 ", %zu host%s%s</dd>\n", job->world_size, job->nhosts,
		job->nhosts == 1 ? "" : "s", job->ranks_from_processes ? " (no rank recorded: one per process)" : "");
	for (size_t i = 0; i < job->nranks && i < TRACES_SHOWN; i++) {
		fprintf(out, "<dt>%s</dt><dd class=\"trace\">rank %" PRId64 ": <code>", i ? "" : "Traces", job->ranks[i].rank);
		html_text(out, job->ranks[i].trace);
		fputs("</code></dd>\n", out);
	}
	if (job->nranks > TRACES_SHOWN)
		fprintf(out, "<dt></dt><dd>... and %zu more (<code>--format json</code> lists every one)</dd>\n",
			job->nranks - TRACES_SHOWN);
	fprintf(out, "<dt>Iterations</dt><dd>%zu steady of %zu, median %s (the slowest rank's)</dd>\n", nsteady,
		job->niterations, dur(job->median_iteration_ns, a, sizeof(a)));
	if (job->lined_up)
		write_lineup(out, job);
	if (tl->straggler >= 0)
		fprintf(out, "<dt>Straggler</dt><dd><b>rank %" PRId64 "</b>: the others waited %s for it in the steady "
			"state (%.1f%% of it)</dd>\n", job->ranks[tl->straggler].rank,
			dur(job->ranks[tl->straggler].delay_ns, a, sizeof(a)),
			job->digest.steady_ns > 0 ? 100.0 * (double)job->ranks[tl->straggler].delay_ns /
							    (double)job->digest.steady_ns : 0.0);
	else
		fputs("<dt>Straggler</dt><dd>none worth a warning</dd>\n", out);
	fprintf(out, "<dt>Collectives</dt><dd>%" PRId64 " matched across ranks, %" PRId64 " not matched; slowest rank "
		"overall: %s</dd>\n", job->matched, job->unmatched,
		job->slowest_rank >= 0 ? (snprintf(b, sizeof(b), "%" PRId64, job->slowest_rank), b)
				       : "none (every rank's median within 1%)");
	fputs("</dl>\n", out);
	html_write_notes(out, job->notes, job->nnotes);
	fputs("</header>\n", out);
}

static void write_findings_table(FILE *out, const struct job_report *job)
{
	char a[32];

	fputs("<div id=\"ranked\">\n<h2>Findings, ranked</h2>\n", out);
	if (!job->findings.count) {
		fputs("<p>No findings from the cross-rank rules.</p>\n</div>\n", out);
		return;
	}
	fprintf(out, "<p>%zu finding%s from the cross-rank rules, ranked by recoverable time.</p>\n",
		job->findings.count, job->findings.count == 1 ? "" : "s");
	fputs("<table class=\"finding-list\"><tr><th class=\"num\">#</th><th>Severity</th><th>Rule</th><th>Finding</th>"
	      "<th class=\"num\">Recoverable</th></tr>\n", out);
	for (size_t i = 0; i < job->findings.count; i++) {
		const struct finding *f = &job->findings.items[i];
		const char *sev = html_severity_word(f->severity);

		fprintf(out, "<tr><td class=\"num\"><a href=\"#finding-%zu\">%zu</a></td><td><span class=\"badge b-%s\">%s"
			"</span></td><td><code>%s</code></td><td>", i + 1, i + 1, sev, sev, f->rule_id);
		html_text(out, f->message);
		fprintf(out, "</td><td class=\"num\">%s</td></tr>\n",
			f->recoverable_ns > 0 ? dur(f->recoverable_ns, a, sizeof(a)) : "unknown");
	}
	fputs("</table>\n</div>\n", out);
}

/* What bounds the step: the job's critical path across ranks, its shares by rank and part. */
static void write_path(FILE *out, const struct job_path *p)
{
	char a[32], words[512];
	int64_t shown;

	if (!p->collectives || p->span_ns <= 0)
		return;
	fprintf(out, "<p id=\"critical-path\"><b>What bounds the step</b> (the critical path row; docs/what-if.md): "
		"over %s of the steady state and %" PRId64 " collectives, %s", dur(p->span_ns, a, sizeof(a)), p->collectives,
		job_path_words(p, words, sizeof(words), &shown));	/* digits and part names: nothing to escape */
	fputs(". Back from the last collective, the path takes each collective's own time on the rank that arrived "
	      "last, then that rank's own critical path before it: what the others waited for.</p>\n", out);
}

static void write_timeline(FILE *out, const struct job_report *job, const struct ranks_timeline *tl)
{
	fputs("<section id=\"timeline\">\n<h2>Timeline</h2>\n", out);
	ranks_timeline_write(out, job, tl);
	fputs("<div class=\"legend\">", out);
	html_swatch(out, html_work_color(CHART_COMPUTE), "compute");
	html_swatch(out, html_work_color(CHART_COMM), "communication (NCCL)");
	html_swatch(out, html_work_color(CHART_COPY), "copies and memsets");
	html_swatch(out, "#4F7FA8", "iteration");
	html_swatch(out, "#E69F00", "warm-up iteration");
	html_swatch(out, "#D55E00", "the straggler's iteration: the others waited for it");
	if (job->path.nstretches) {
		html_swatch(out, "#1A1A1A", "critical path: a rank's host");
		html_swatch(out, "#AAAAAA", "critical path: launch and queue");
	}
	fputs("</div>\n", out);
	write_path(out, &job->path);
	fputs("</section>\n", out);
}

/* ---- iterations ---- */

static int compare_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* A bar: one iteration, or the mean of a group of consecutive ones of its kind. */
struct bar {
	size_t first, last;		/* job iterations */
	int64_t time_ns, delay_ns;	/* the slowest rank's time; the wait for the straggler in it */
	int64_t straggler;		/* the straggler's rank when one iteration; -1 */
	int64_t n;			/* iterations in it */
};

/* The bars of the steady (steady = 1) or warm-up iterations, at most max of them. */
static size_t make_bars(const struct job_report *job, int steady, size_t max, struct bar **out, size_t *group)
{
	size_t n = 0, nbars = 0;
	struct bar *bars;

	for (size_t i = 0; i < job->niterations; i++)
		n += !job->iterations[i].steady == !steady;
	*group = n > max ? (n + max - 1) / max : 1;
	bars = xcalloc(n ? n : 1, sizeof(*bars));
	for (size_t i = 0; i < job->niterations; i++) {
		const struct job_iteration *it = &job->iterations[i];
		struct bar *b = nbars ? &bars[nbars - 1] : NULL;

		if (!it->steady != !steady)
			continue;
		if (!b || b->n == (int64_t)*group) {
			b = &bars[nbars++];
			*b = (struct bar){ .first = i, .straggler = it->straggler_rank };
		} else {
			b->straggler = -1;
		}
		b->last = i;
		b->n++;
		b->time_ns = sat_add64(b->time_ns, it->time_ns);
		b->delay_ns = sat_add64(b->delay_ns, it->straggler_rank >= 0 ? it->delay_ns : 0);
	}
	for (size_t i = 0; i < nbars; i++) {
		bars[i].time_ns /= bars[i].n;
		bars[i].delay_ns /= bars[i].n;
	}
	*out = bars;
	return nbars;
}

/* The scale of the steady chart: its largest bar, unless that is over CLIP_MEDIANS medians. */
static int64_t steady_scale(const struct bar *bars, size_t n, int64_t *median)
{
	int64_t *v = xcalloc(n ? n : 1, sizeof(*v)), max = 1;

	for (size_t i = 0; i < n; i++) {
		v[i] = bars[i].time_ns;
		max = v[i] > max ? v[i] : max;
	}
	qsort(v, n, sizeof(*v), compare_i64);
	*median = n ? v[n / 2] : 0;
	free(v);
	if (*median > 0 && max / CLIP_MEDIANS > *median)
		max = *median * CLIP_MEDIANS;
	return max;
}

static void write_y_axis(FILE *out, int width, int64_t ymax, int64_t step)
{
	double plot_h = IT_H - IT_TOP - IT_BOTTOM;
	char a[32];

	for (int64_t y = 0; y <= ymax; y += step) {
		double py = IT_TOP + plot_h - plot_h * (double)y / (double)ymax;

		fprintf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", IT_LEFT, width - 10, py, py, IT_LEFT - 4,
			py + 4, html_short(y, a, sizeof(a)));
	}
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", IT_LEFT, width - 10,
		IT_TOP + plot_h, IT_TOP + plot_h);
}

/* One bar at x, w wide: the rest of the iteration in blue, the wait for the straggler in red on
   top; cut at ymax with its time above when taller (or always, labelled). */
static void write_bar(FILE *out, const struct bar *b, double x, double w, int64_t ymax, int labelled)
{
	double plot_h = IT_H - IT_TOP - IT_BOTTOM, base = IT_TOP + plot_h;
	int clipped = b->time_ns > ymax;
	int64_t shown = clipped ? ymax : b->time_ns;
	double h = plot_h * (double)shown / (double)ymax;
	double d = plot_h * (double)(b->delay_ns < shown ? b->delay_ns : shown) / (double)ymax;
	char a[32], c[32];

	fprintf(out, "<g class=\"iter-bar\" data-first=\"%zu\" data-last=\"%zu\" data-time-ns=\"%" PRId64 "\" "
		"data-delay-ns=\"%" PRId64 "\" data-straggler=\"%" PRId64 "\"%s><title>", b->first, b->last, b->time_ns,
		b->delay_ns, b->straggler, clipped ? " data-clipped=\"1\"" : "");
	if (b->first == b->last)
		fprintf(out, "iteration #%zu: %s (the slowest rank's)", b->first, dur(b->time_ns, a, sizeof(a)));
	else
		fprintf(out, "iterations #%zu-#%zu: mean %s", b->first, b->last, dur(b->time_ns, a, sizeof(a)));
	if (b->delay_ns > 0 && b->straggler >= 0)
		fprintf(out, "\nthe others waited %s for rank %" PRId64, dur(b->delay_ns, c, sizeof(c)), b->straggler);
	else if (b->delay_ns > 0)
		fprintf(out, "\nwaiting for stragglers: %s", dur(b->delay_ns, c, sizeof(c)));
	fputs("</title>", out);
	fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>", x, base - h + d,
		w, h - d, html_work_color(CHART_COMPUTE));
	if (d > 0)
		fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#D55E00\"/>", x, base - h, w, d);
	if (clipped)	/* a break across the top */
		fprintf(out, "<path d=\"M%.2f %.2f l%.2f -4 l0 3 l%.2f 4 z\" fill=\"#fff\"/>", x, base - h + 8, w, -w);
	if (clipped || labelled)
		fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" style=\"font-size:10px\">%s</text>",
			x + w / 2, base - h - 4, html_short(b->time_ns, a, sizeof(a)));
	fputs("</g>\n", out);
}

/* The steady iterations, scaled on themselves; a viewBox IT_W wide. */
static void write_steady_chart(FILE *out, const struct job_report *job)
{
	struct bar *bars;
	size_t group, n = make_bars(job, 1, BARS_MAX, &bars, &group), clipped = 0;
	int64_t median, ymax = steady_scale(bars, n, &median), step = html_nice_step(ymax, 4);
	double bar_w = (double)(IT_W - IT_LEFT - 10) / (double)(n ? n : 1);

	ymax = (ymax + step - 1) / step * step;
	for (size_t i = 0; i < n; i++)
		clipped += bars[i].time_ns > ymax;
	fprintf(out, "<figure><svg class=\"iter-bars job-steady\" data-bars=\"%zu\" data-group=\"%zu\" data-ymax-ns=\"%"
		PRId64 "\" data-median-ns=\"%" PRId64 "\" data-clipped=\"%zu\" viewBox=\"0 0 %d %d\" role=\"img\" "
		"aria-label=\"time per steady iteration\">\n", n, group, ymax, median, clipped, IT_W, IT_H);
	write_y_axis(out, IT_W, ymax, step);
	for (size_t i = 0; i < n; i++)
		write_bar(out, &bars[i], IT_LEFT + bar_w * (double)i, bar_w > 2 ? bar_w * 0.85 : bar_w, ymax, 0);
	if (n) {	/* the first and last iteration's names: "step 40" in a job lined up by step, else "#0" */
		char first[64], last[64];

		fprintf(out, "<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
			IT_LEFT, IT_H - 8, job_iteration_name(job, &job->iterations[bars[0].first], first, sizeof(first)),
			IT_W - 10, IT_H - 8,
			job_iteration_name(job, &job->iterations[bars[n - 1].last], last, sizeof(last)));
	}
	fprintf(out, "</svg><figcaption class=\"small muted\">Steady iterations: the slowest rank's time, the wait for "
		     "the straggler on top in red%s%s.</figcaption></figure>\n",
		clipped ? "; bars over eight times the median are cut, their time written above" : "",
		group > 1 ? " (consecutive iterations averaged, to fit)" : "");
	free(bars);
}

/* The warm-up iterations on a scale of their own, each bar labelled. */
static void write_warmup_chart(FILE *out, const struct job_report *job, int width)
{
	struct bar *bars;
	size_t group, n = make_bars(job, 0, WARM_BARS_WIDE * 4, &bars, &group);
	int64_t ymax = 1, step;
	double bar_w = (double)(width - IT_LEFT - 10) / (double)(n ? n : 1);

	for (size_t i = 0; i < n; i++)
		ymax = bars[i].time_ns > ymax ? bars[i].time_ns : ymax;
	step = html_nice_step(ymax, 4);
	ymax = (ymax + step - 1) / step * step;
	fprintf(out, "<figure><svg class=\"iter-bars job-warmup\" data-bars=\"%zu\" data-group=\"%zu\" data-ymax-ns=\"%"
		PRId64 "\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"time per warm-up iteration\">\n", n, group,
		ymax, width, IT_H);
	write_y_axis(out, width, ymax, step);
	for (size_t i = 0; i < n; i++) {
		write_bar(out, &bars[i], IT_LEFT + bar_w * (double)i + bar_w * 0.1, bar_w * 0.8, ymax, 1);
		if (bar_w >= 24)
			fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">#%zu</text>",
				IT_LEFT + bar_w * ((double)i + 0.5), IT_H - 8, bars[i].first);
	}
	fputs("</svg><figcaption class=\"small muted\">Warm-up, on its own scale: one-time costs (JIT, NCCL set-up, "
	      "allocator growth).</figcaption></figure>\n", out);
	free(bars);
}

static void write_iteration_charts(FILE *out, const struct job_report *job)
{
	size_t nwarm = job->niterations - steady_count(job);
	int warm_w = IT_LEFT + 10 + WARM_BAR * (int)(nwarm < WARM_BARS_WIDE ? nwarm : WARM_BARS_WIDE);

	if (!job->niterations)
		return;
	if (warm_w < 240)	/* room for its caption */
		warm_w = 240;
	/* the columns in proportion to the viewBoxes' widths: both charts come out as tall */
	if (nwarm)
		fprintf(out, "<div class=\"iter-charts\" style=\"grid-template-columns:%dfr %dfr\">\n", warm_w, IT_W);
	if (nwarm)
		write_warmup_chart(out, job, warm_w);
	if (nwarm < job->niterations)
		write_steady_chart(out, job);
	if (nwarm)
		fputs("</div>\n", out);
}

static void write_iterations(FILE *out, const struct job_report *job)
{
	size_t with = 0;
	char a[32], b[32], name[48];

	fputs("<section id=\"iterations\">\n<h2>Iterations</h2>\n", out);
	write_iteration_charts(out, job);
	for (size_t i = 0; i < job->niterations; i++)
		with += job->iterations[i].straggler_rank >= 0;
	fprintf(out, "<h3>Iterations with a straggler (%zu of %zu)</h3>\n", with, job->niterations);
	if (!with) {
		fputs("<p>None: no rank made the others wait.</p>\n</section>\n", out);
		return;
	}
	fputs("<table class=\"late-iterations\"><tr><th class=\"num\">Iteration</th><th class=\"num\">Time</th>"
	      "<th class=\"num\">Slowest rank</th><th class=\"num\">Straggler</th><th class=\"num\">Others waited</th>"
	      "<th class=\"num\">Collectives</th><th>What it did</th></tr>\n", out);
	for (size_t i = 0; i < job->niterations; i++) {
		const struct job_iteration *it = &job->iterations[i];

		if (it->straggler_rank < 0)
			continue;
		job_iteration_name(job, it, name, sizeof(name));
		fprintf(out, "<tr class=\"late\" data-index=\"%" PRId64 "\" data-straggler=\"%" PRId64 "\" data-delay-ns=\"%"
			PRId64 "\"><td class=\"num\">%s%s</td><td class=\"num\">%s</td><td class=\"num\">%" PRId64
			"</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%s</td><td class=\"num\">%" PRId64 "</td><td>",
			it->index, it->straggler_rank, it->delay_ns, name + (*name == '#'), it->steady ? "" : " (warm-up)",
			dur(it->time_ns, a, sizeof(a)), it->slowest_rank, it->straggler_rank, dur(it->delay_ns, b, sizeof(b)),
			it->collectives);
		html_text(out, it->cause ? it->cause : "");
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n<p class=\"small muted\">Every iteration, with and without a straggler: "
	      "<code>--format json</code>.</p>\n</section>\n", out);
}

/* ---- ranks, communication ---- */

static void write_ranks(FILE *out, const struct job_report *job, const struct ranks_timeline *tl)
{
	char a[5][32];

	fputs("<section id=\"ranks\">\n<h2>Ranks</h2>\n<table class=\"ranks\"><tr><th class=\"num\">Rank</th><th>Host"
	      "</th><th class=\"num\">PID</th><th class=\"num\">Iterations</th><th class=\"num\">Median iteration</th>"
	      "<th class=\"num\">Collectives</th><th class=\"num\">Arrived last</th><th class=\"num\">Delay caused</th>"
	      "<th class=\"num\">Communication</th><th class=\"num\">Exposed</th><th class=\"num\">Clock correction"
	      "</th></tr>\n", out);
	for (size_t i = 0; i < job->nranks; i++) {
		const struct job_rank *r = &job->ranks[i];

		fprintf(out, "<tr class=\"rank%s\" data-rank=\"%" PRId64 "\" data-delay-ns=\"%" PRId64 "\"><td class=\"num\">%"
			PRId64 "</td><td>", (ssize_t)i == tl->straggler ? " straggler" : "", r->rank, r->delay_ns, r->rank);
		html_text(out, *r->host ? r->host : "-");
		fprintf(out, "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%zu%s</td><td class=\"num\">%s</td>"
			"<td class=\"num\">%" PRId64 "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%s</td>"
			"<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n", r->pid,
			r->iterations, r->complete ? "" : " (cut short)", dur(r->median_iteration_ns, a[0], sizeof(a[0])),
			r->collectives, r->last_at, dur(r->delay_ns, a[1], sizeof(a[1])), dur(r->comm_ns, a[2], sizeof(a[2])),
			dur(r->exposed_ns, a[3], sizeof(a[3])),
			signed_dur(r->clock_anchor_ns + r->clock_refine_ns, a[4], sizeof(a[4])));
	}
	fputs("</table>\n<p class=\"small muted\">Arrived last: the collectives the others waited at it for; delay "
	      "caused: the longest such wait per steady iteration, added up. Clock correction: what the timeline "
	      "adds to the rank's times to put them on the job's clock.</p>\n</section>\n", out);
}

static void write_communication(FILE *out, const struct job_report *job)
{
	char a[4][32];

	fputs("<section id=\"communication\">\n<h2>Communication (steady state, per rank)</h2>\n<table class=\"comm\">"
	      "<tr><th>Collective</th><th class=\"num\">Calls</th><th class=\"num\">Time</th><th class=\"num\">Exposed"
	      "</th><th class=\"num\">Transfers exposed</th><th class=\"num\">Waiting for late ranks</th></tr>\n", out);
	for (int t = 0; t < COLLECTIVE_TYPES; t++) {
		const struct job_comm *c = &job->comm[t];
		int64_t waiting = c->exposed_ns - c->transfer_ns;

		if (!c->count && !c->ns)
			continue;
		fprintf(out, "<tr><td>%s</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%s</td><td class=\"num\">%s"
			"</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n", collective_type_name(t), c->count,
			dur(c->ns, a[0], sizeof(a[0])), dur(c->exposed_ns, a[1], sizeof(a[1])),
			dur(c->transfer_ns, a[2], sizeof(a[2])), dur(waiting > 0 ? waiting : 0, a[3], sizeof(a[3])));
	}
	fprintf(out, "</table>\n<p>%" PRId64 " collectives matched across ranks, %" PRId64 " not matched (point to "
		"point, or run by one rank only).</p>\n</section>\n", job->matched, job->unmatched);
}

void report_ranks_write_html(FILE *out, const struct job_report *job, const char *const *summaries)
{
	struct ranks_timeline tl;
	char *title = xasprintf("gpt-trace report: %zu rank%s%s%s", job->nranks, job->nranks == 1 ? "" : "s",
				*job->job ? " of job " : "", job->job);

	ranks_timeline_read(job, summaries, &tl);
	html_write_head(out, title, more_css);
	free(title);
	fputs("<body>\n", out);
	write_summary(out, job, &tl);
	write_findings_table(out, job);
	write_timeline(out, job, &tl);
	write_iterations(out, job);
	write_ranks(out, job, &tl);
	write_communication(out, job);
	html_write_findings(out, tl.origin, (int64_t)steady_count(job), &job->findings);
	fprintf(out, "<footer class=\"small muted\"><p>gpt-trace %s &middot; the same data as <code>gpt-trace report "
		     "--format json</code> over the ranks (docs/multi-rank.md); this page: docs/html-report.md</p>"
		     "</footer>\n</body>\n</html>\n", GPT_TRACE_VERSION);
	ranks_timeline_release(&tl);
}
