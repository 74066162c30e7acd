/*
 * The cross-rank page's timeline (ranks-page.c draws the rest): the ranks side by side on the job's
 * clock (each rank's times moved by analyzer/ranks/job.h's clock correction), drawn with the
 * single-trace page's rows (overview.c). Under the axis, a row marks the iterations a straggler
 * held up, and one with the job's critical path across ranks (analyzer/ranks/job-path.h: per pixel
 * the rank and part it spent most of it in); then per rank a header (tinted for the straggler), its
 * iterations from its summary (red where it was the straggler: the others waited for it), and per
 * GPU one lane of its NCCL kernels and one of the rest (compute, copies), busy time per pixel read
 * from its trace (data.c). Two
 * windows: the job's steady state, and zoomed, the steady iteration the straggler held up most
 * (else the slowest one).
 *
 * Ranks are read one at a time, and at most RANK_LANES_MAX are drawn: every rank of a small job,
 * the ones that held the others up longest first in a large one. Memory grows with the ranks drawn
 * and their streams, never with their events.
 */
#include "analyzer/report/html/html.h"
#include "common/util.h"
#include "analyzer/ranks/job.h"
#include "analyzer/ranks/summary.h"
#include "rules/rule.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define ZOOM_MARGIN 12	/* the zoomed iteration plus 1/ZOOM_MARGIN of it on each side */
#define RANKS_DETAILED 4	/* up to this many ranks drawn, each gets a header and its own iterations */

static int64_t shift_of(const struct job_rank *r)
{
	return sat_add64(r->clock_anchor_ns, r->clock_refine_ns);
}

/* The rank that held the job up, when it is worth a warning (as the straggler rule judges): -1. */
static ssize_t straggler_of(const struct job_report *job)
{
	ssize_t worst = -1;

	for (size_t i = 0; i < job->nranks; i++)
		if (job->ranks[i].delay_ns > 0 && (worst < 0 || job->ranks[i].delay_ns > job->ranks[worst].delay_ns))
			worst = (ssize_t)i;
	if (worst >= 0 && rule_severity(job->ranks[worst].delay_ns, job->digest.steady_ns) < SEVERITY_WARNING)
		return -1;
	return worst;
}

/* A rank in the order of drawing: who held the others up longest first, then by rank. */
struct drawn {
	int64_t delay_ns, rank;
	size_t index;
};

static int compare_drawn(const void *pa, const void *pb)
{
	const struct drawn *a = pa, *b = pb;

	if (a->delay_ns != b->delay_ns)
		return a->delay_ns > b->delay_ns ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

static int compare_index(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	return (a > b) - (a < b);
}

/* The ranks drawn (indexes into job->ranks), in the job's rank order. */
static size_t choose_ranks(const struct job_report *job, size_t *chosen)
{
	struct drawn *order = xcalloc(job->nranks ? job->nranks : 1, sizeof(*order));
	size_t n = job->nranks < RANK_LANES_MAX ? job->nranks : RANK_LANES_MAX;

	for (size_t i = 0; i < job->nranks; i++)
		order[i] = (struct drawn){ job->ranks[i].delay_ns, job->ranks[i].rank, i };
	if (job->nranks > RANK_LANES_MAX)
		qsort(order, job->nranks, sizeof(*order), compare_drawn);
	for (size_t i = 0; i < n; i++)
		chosen[i] = order[i].index;
	qsort(chosen, n, sizeof(*chosen), compare_index);
	free(order);
	return n;
}

/*
 * The job's iterations on its clock: those of the reference rank (the first with as many iterations
 * as the job), as analyzer/ranks/job.c matches every rank's to them. NULL when its summary cannot
 * be read.
 */
static struct html_step *job_steps(const struct job_report *job, const char *const *summaries)
{
	struct rank_summary s;
	struct html_step *steps = NULL;
	char err[256];

	for (size_t i = 0; summaries && i < job->nranks; i++) {
		if (job->ranks[i].iterations != job->niterations || !job->niterations || !summaries[i])
			continue;
		if (rank_summary_load(summaries[i], &s, err, sizeof(err)) == 0 && s.niterations == job->niterations) {
			steps = xcalloc(s.niterations, sizeof(*steps));
			for (size_t it = 0; it < s.niterations; it++) {
				const struct job_iteration *ji = &job->iterations[it];

				steps[it] = (struct html_step){ .start = s.iterations[it].start + shift_of(&job->ranks[i]),
								.end = s.iterations[it].end + shift_of(&job->ranks[i]),
								.number = ji->index, .warmup = !ji->steady,
								.late_ns = ji->straggler_rank >= 0 ? ji->delay_ns : 0 };
			}
		}
		rank_summary_release(&s);
		if (steps)
			break;
	}
	return steps;
}

/* A rank's iterations on the job's clock, numbered as the job's (as analyzer/ranks/job.c matched
   them), red where it was the straggler. */
static void read_steps(const struct job_report *job, struct ranks_timeline_rank *rr,
		       const char *summary)
{
	const struct job_rank *r = &job->ranks[rr->index];
	struct rank_summary s;
	char err[256];

	if (!summary)
		return;
	if (rank_summary_load(summary, &s, err, sizeof(err)) < 0) {
		rank_summary_release(&s);
		return;
	}
	rr->steps = xcalloc(s.niterations ? s.niterations : 1, sizeof(*rr->steps));
	rr->nsteps = s.niterations;
	for (size_t it = 0; it < s.niterations; it++) {
		struct html_step *st = &rr->steps[it];
		int64_t j;

		st->start = s.iterations[it].start + shift_of(r);
		st->end = s.iterations[it].end + shift_of(r);
		st->warmup = s.iterations[it].warmup;
		j = r->iteration_of && it < r->iterations ? r->iteration_of[it] : -1;
		st->number = j >= 0 ? j : (int64_t)it;
		if (j >= 0 && job->iterations[j].straggler_rank == r->rank)
			st->late_ns = job->iterations[j].delay_ns > 0 ? job->iterations[j].delay_ns : 1;
	}
	rank_summary_release(&s);
}

/* Widen [*lo, *hi) to hold the steps numbered first..last (job iterations). */
static void cover(const struct html_step *steps, size_t n, int64_t first, int64_t last, int64_t *lo, int64_t *hi)
{
	for (size_t i = 0; i < n; i++) {
		if (steps[i].number < first || steps[i].number > last)
			continue;
		*lo = steps[i].start < *lo ? steps[i].start : *lo;
		*hi = steps[i].end > *hi ? steps[i].end : *hi;
	}
}

/* The steady iteration to zoom on: the one a straggler held up most, else the slowest; -1. */
static int64_t zoom_iteration(const struct job_report *job)
{
	int64_t best = -1;

	for (size_t i = 0; i < job->niterations; i++) {
		const struct job_iteration *it = &job->iterations[i], *b = best >= 0 ? &job->iterations[best] : NULL;
		int64_t delay = it->straggler_rank >= 0 ? it->delay_ns : 0, bdelay;

		if (!it->steady)
			continue;
		bdelay = b && b->straggler_rank >= 0 ? b->delay_ns : 0;
		if (!b || delay > bdelay || (delay == bdelay && it->time_ns > b->time_ns))
			best = (int64_t)i;
	}
	return best;
}

/* The windows on the job's clock: the steady state (every iteration when none is steady), and one
   iteration zoomed when there are several. */
static void choose_windows(struct ranks_timeline *tl, const struct job_report *job)
{
	int64_t first = 0, last = (int64_t)job->niterations - 1, lo = INT64_MAX, hi = INT64_MIN, k;

	while (first <= last && !job->iterations[first].steady)
		first++;
	if (first > last)
		first = 0;
	if (tl->job_steps)
		cover(tl->job_steps, job->niterations, first, last, &lo, &hi);
	for (size_t i = 0; i < tl->nranks; i++)
		cover(tl->ranks[i].steps, tl->ranks[i].nsteps, first, last, &lo, &hi);
	if (lo >= hi)
		return;
	tl->windows[tl->nwindows++] = html_chart_window(lo, hi);
	k = zoom_iteration(job);
	if (k < 0 || last == first)
		return;
	lo = INT64_MAX;
	hi = INT64_MIN;
	if (tl->job_steps)
		cover(tl->job_steps, job->niterations, k, k, &lo, &hi);
	for (size_t i = 0; i < tl->nranks; i++)
		cover(tl->ranks[i].steps, tl->ranks[i].nsteps, k, k, &lo, &hi);
	if (lo >= hi)
		return;
	tl->zoomed = k;
	tl->windows[tl->nwindows++] = html_chart_window(lo - (hi - lo) / ZOOM_MARGIN, hi + (hi - lo) / ZOOM_MARGIN);
}

/* The rank's lane for device's NCCL kernels (nccl) or the rest of its work, made on first use. */
static struct chart_lane *rank_lane(struct ranks_timeline *tl, struct ranks_timeline_rank *rr, int64_t device,
				    int nccl)
{
	size_t i;

	for (i = 0; i < rr->nlanes; i++)
		if (rr->lanes[i].device == device && (rr->lanes[i].stream == -2) == nccl)
			return &rr->lanes[i];
	/* both lanes of a device together, compute first */
	rr->lanes = xrealloc(rr->lanes, (rr->nlanes + 2) * sizeof(*rr->lanes));
	for (int k = 0; k < 2; k++) {
		struct chart_lane *l = &rr->lanes[rr->nlanes++];

		*l = (struct chart_lane){ .trace_id = (int64_t)rr->index, .device = device, .stream = k ? -2 : -1 };
		for (size_t w = 0; w < tl->nwindows; w++)
			l->busy[w] = xcalloc(CHART_BUCKETS, sizeof(*l->busy[w]));
	}
	return &rr->lanes[rr->nlanes - (nccl ? 1 : 2)];
}

/* A stream's busy time into its device's two lanes: NCCL kernels into one (a program's own
   all_reduce may run on its compute stream), the rest into the other; busy_ns: in the first window. */
static void add_stream(struct ranks_timeline *tl, struct ranks_timeline_rank *rr, const struct chart_lane *s)
{
	struct chart_lane *other = rank_lane(tl, rr, s->device, 0), *nccl = rank_lane(tl, rr, s->device, 1);

	for (size_t w = 0; w < tl->nwindows; w++)
		for (size_t b = 0; b < CHART_BUCKETS; b++)
			for (int k = 0; k < CHART_WORKS; k++) {
				struct chart_lane *l = k == CHART_COMM ? nccl : other;

				l->busy[w][b][k] += s->busy[w][b][k];
				if (!w)
					l->busy_ns = sat_add64(l->busy_ns, s->busy[w][b][k]);
			}
}

/* A rank's lanes, from its trace read over the windows moved onto its own clock. */
static void read_lanes(struct ranks_timeline *tl, const struct job_report *job, struct ranks_timeline_rank *rr)
{
	const struct job_rank *r = &job->ranks[rr->index];
	const char *paths[1] = { r->trace };
	struct chart_window mine[CHART_WINDOWS];
	struct report_charts *c = NULL;
	struct trace *trace = NULL;
	char err[512];

	for (size_t w = 0; w < tl->nwindows; w++) {
		mine[w] = tl->windows[w];
		mine[w].start -= shift_of(r);
		mine[w].end -= shift_of(r);
	}
	if (trace_open(paths, 1, &trace, err, sizeof(err)) < 0 ||
	    report_charts_read_windows(trace, mine, tl->nwindows, &c, err, sizeof(err)) < 0) {
		rr->error = xstrdup(err);
		trace_close(trace);
		return;
	}
	for (size_t i = 0; i < c->nlanes; i++)
		add_stream(tl, rr, &c->lanes[i]);
	for (size_t d = 0; d < c->ndevices; d++)
		if (c->devices[d].first + shift_of(r) < tl->origin)
			tl->origin = c->devices[d].first + shift_of(r);
	report_charts_free(c);
	trace_close(trace);
}

void ranks_timeline_read(const struct job_report *job, const char *const *summaries, struct ranks_timeline *tl)
{
	size_t *chosen = xcalloc(job->nranks ? job->nranks : 1, sizeof(*chosen));

	*tl = (struct ranks_timeline){ .zoomed = -1, .origin = INT64_MAX, .straggler = straggler_of(job) };
	tl->nranks = choose_ranks(job, chosen);
	tl->compact = tl->nranks > RANKS_DETAILED;
	tl->ranks = xcalloc(tl->nranks ? tl->nranks : 1, sizeof(*tl->ranks));
	tl->job_steps = job_steps(job, summaries);
	for (size_t i = 0; i < tl->nranks; i++) {
		tl->ranks[i].index = chosen[i];
		read_steps(job, &tl->ranks[i], summaries ? summaries[chosen[i]] : NULL);
	}
	free(chosen);
	choose_windows(tl, job);
	for (size_t i = 0; i < tl->nranks && tl->nwindows; i++)
		read_lanes(tl, job, &tl->ranks[i]);
	if (tl->origin == INT64_MAX)
		tl->origin = tl->nwindows ? tl->windows[0].start : 0;
}

void ranks_timeline_release(struct ranks_timeline *tl)
{
	for (size_t i = 0; i < tl->nranks; i++) {
		struct ranks_timeline_rank *rr = &tl->ranks[i];

		for (size_t l = 0; l < rr->nlanes; l++)
			for (size_t w = 0; w < CHART_WINDOWS; w++)
				free(rr->lanes[l].busy[w]);
		free(rr->lanes);
		free(rr->steps);
		free(rr->error);
	}
	free(tl->ranks);
	free(tl->job_steps);
	memset(tl, 0, sizeof(*tl));
}

/* ---- drawing ---- */

static int rank_height(const struct ranks_timeline *tl, const struct ranks_timeline_rank *rr)
{
	int lanes = (rr->nlanes ? (int)rr->nlanes : 1) * ROW_LANE;

	return tl->compact ? lanes : ROW_TRACE + (rr->nsteps ? ROW_STEPS : 0) + lanes;
}

/* How many of the job's iterations rank held up (steady ones only, with steady_only). */
static size_t held_up(const struct job_report *job, int64_t rank, int steady_only)
{
	size_t n = 0;

	for (size_t i = 0; i < job->niterations; i++)
		n += job->iterations[i].straggler_rank == rank && (job->iterations[i].steady || !steady_only);
	return n;
}

/* Faint bands across every rank where a straggler held the job up, and a row naming it. */
static void write_straggler_row(struct html_timeline *t, const struct ranks_timeline *tl,
				const struct job_report *job)
{
	char a[32], b[32];

	fputs("<g class=\"tl-stragglers\">", t->out);
	html_timeline_label(t, ROW_STEPS, "straggler waits", "muted");
	for (size_t i = 0; i < job->niterations; i++) {
		const struct job_iteration *it = &job->iterations[i];
		const struct html_step *st = &tl->job_steps[i];
		double x0 = html_timeline_x(t, st->start), x1 = html_timeline_x(t, st->end);

		if (it->straggler_rank < 0 || st->end <= t->w->start || st->start >= t->w->end)
			continue;
		if (x1 - x0 < 2)
			x1 = x0 + 2;
		fprintf(t->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"#D55E00\" fill-opacity=\"0.07\"/>",
			x0, t->y, x1 - x0, t->height - t->y);
		fprintf(
		    t->out,
		    "<g class=\"tl-held\" data-iteration=\"%" PRId64 "\" data-rank=\"%" PRId64 "\" "
		    "data-delay-ns=\"%" PRId64
		    "\"><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"#D55E00\"%s>"
		    "<title>iteration #%" PRId64 "%s from %s: rank %" PRId64
		    " the straggler, the others waited %s; ",
		    it->index, it->straggler_rank, it->delay_ns, x0, t->y + 2, x1 - x0,
		    ROW_STEPS - 4, it->steady ? "" : " fill-opacity=\"0.5\"", it->index,
		    it->steady ? "" : " (warm-up)", html_time(t->origin, st->start, a, sizeof(a)),
		    it->straggler_rank, units_duration(b, sizeof(b), it->delay_ns, UNITS_FINE));
		html_text(t->out, it->cause);
		fputs("</title></rect>", t->out);
		if (x1 - x0 >= 80)
			fprintf(t->out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#fff\" style=\"fill:#fff;"
				"font-size:10px\">rank %" PRId64 " +%s</text>", (x0 + x1) / 2, t->y + ROW_STEPS - 4,
				it->straggler_rank, html_short(it->delay_ns, a, sizeof(a)));
		fputs("</g>\n", t->out);
	}
	fputs("</g>\n", t->out);
	t->y += ROW_STEPS;
}

/* Per pixel column, the few kinds of stretch (a rank's part, or communication) that fill the most
   of it: a column holds at most PATH_KINDS, a smaller newcomer is dropped. */
#define PATH_KINDS 4

struct path_column {
	struct {
		int64_t rank;	/* -2: none */
		int part;
		int64_t ns;
	} kind[PATH_KINDS];
};

static void column_add(struct path_column *c, const struct job_path_stretch *x, int64_t ns)
{
	int k, low = 0;

	for (k = 0; k < PATH_KINDS; k++) {
		if (c->kind[k].rank == x->rank && c->kind[k].part == (int)x->part) {
			c->kind[k].ns += ns;
			return;
		}
		if (c->kind[k].ns < c->kind[low].ns)
			low = k;
	}
	if (c->kind[low].ns < ns) {
		c->kind[low].rank = x->rank;
		c->kind[low].part = (int)x->part;
		c->kind[low].ns = ns;
	}
}

/* The column's top kind's index, -1 when it is empty. */
static int column_top(const struct path_column *c)
{
	int top = -1;

	for (int k = 0; k < PATH_KINDS; k++)
		if (c->kind[k].ns > 0 && (top < 0 || c->kind[k].ns > c->kind[top].ns))
			top = k;
	return top;
}

/* One run of columns of one kind: a rect, coloured by part, titled by rank and part. */
static void write_path_run(struct html_timeline *t, size_t from, size_t to, int64_t rank, int part)
{
	static const char *const fill[WHAT_IF_PARTS + 1] = {
		[WHAT_IF_HOST] = "#1A1A1A", [WHAT_IF_COMPUTE] = "#0072B2", [WHAT_IF_COMM] = "#CC79A7",
		[WHAT_IF_COPY] = "#009E73", [WHAT_IF_LAUNCH] = "#AAAAAA", [WHAT_IF_PARTS] = "#DDDDDD",
	};
	const char *what = part < WHAT_IF_PARTS ? what_if_part_name((enum what_if_part)part) : "not on its replayed path";

	fprintf(t->out, "<rect class=\"tl-path\" data-rank=\"%" PRId64 "\" x=\"%.2f\" y=\"%d\" width=\"%zu\" "
		"height=\"%d\" fill=\"%s\"><title>", rank, TL_LEFT + (double)from, t->y + 3, to - from, ROW_LANE - 6,
		fill[part]);
	if (rank < 0)
		fputs("critical path: communication (the collective itself)", t->out);
	else
		fprintf(t->out, "critical path: rank %" PRId64 "'s %s", rank, what);
	fputs("</title></rect>", t->out);
	if (rank >= 0 && to - from >= 40)
		fprintf(t->out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" style=\"fill:#fff;font-size:10px\">"
			"rank %" PRId64 "</text>", TL_LEFT + (double)(from + to) / 2, t->y + ROW_LANE - 5, rank);
}

/* The job's critical path across ranks (analyzer/ranks/job-path.h): per pixel column the rank and
   part it spent most of that column in. */
static void write_path_row(struct html_timeline *t, const struct job_path *p)
{
	struct path_column *col = xcalloc(CHART_BUCKETS, sizeof(*col));
	int64_t width = t->w->width > 0 ? t->w->width : 1;
	int64_t run_rank = -2;
	int run_part = -1;
	size_t run_start = 0;

	for (size_t k = 0; k < CHART_BUCKETS; k++)
		for (int j = 0; j < PATH_KINDS; j++)
			col[k].kind[j].rank = -2;
	for (size_t i = 0; i < p->nstretches; i++) {
		const struct job_path_stretch *x = &p->stretches[i];
		int64_t a = x->start - t->w->start, b = x->end - t->w->start;

		if (b <= 0 || a >= width * CHART_BUCKETS)
			continue;
		for (int64_t k = a > 0 ? a / width : 0; k < CHART_BUCKETS && k * width < b; k++)
			column_add(&col[k], x, (b < (k + 1) * width ? b : (k + 1) * width) - (a > k * width ? a : k * width));
	}
	html_timeline_label(t, ROW_LANE, "critical path", NULL);
	for (size_t k = 0; k <= CHART_BUCKETS; k++) {
		int top = k < CHART_BUCKETS ? column_top(&col[k]) : -1;
		int64_t rank = top >= 0 ? col[k].kind[top].rank : -2;
		int part = top >= 0 ? col[k].kind[top].part : -1;

		if (k < CHART_BUCKETS && rank == run_rank && part == run_part)
			continue;
		if (run_part >= 0)
			write_path_run(t, run_start, k, run_rank, run_part);
		run_rank = rank;
		run_part = part;
		run_start = k;
	}
	fputs("\n", t->out);
	t->y += ROW_LANE;
	free(col);
}

/* A rank's header: who it is and, for one that held the others up, how long. */
static void write_rank_header(struct html_timeline *t, const struct ranks_timeline *tl, const struct job_report *job,
			      const struct ranks_timeline_rank *rr)
{
	const struct job_rank *r = &job->ranks[rr->index];
	int straggler = (ssize_t)rr->index == tl->straggler;
	size_t n = held_up(job, r->rank, 1);
	char a[32];

	fprintf(t->out, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", t->y + 1, TL_W, ROW_TRACE - 2,
		straggler ? "#FBE3D6" : "#F2F2F2");
	fprintf(t->out, "<text x=\"4\" y=\"%d\" font-weight=\"600\">rank %" PRId64, t->y + ROW_TRACE - 6, r->rank);
	fputs(" <tspan font-weight=\"400\">(", t->out);
	html_text(t->out, *r->host ? r->host : "-");
	fprintf(t->out, ", pid %" PRId64 ", median iteration %s)</tspan>", r->pid,
		units_duration(a, sizeof(a), r->median_iteration_ns, UNITS_FINE));
	if (straggler)
		fprintf(t->out,
			" &#8212; straggler: the others waited %s for it in %zu steady iteration%s",
			units_duration(a, sizeof(a), r->delay_ns, UNITS_FINE), n,
			n == 1 ? "" : "s");
	else if (r->delay_ns > 0)
		fprintf(t->out,
			"<tspan font-weight=\"400\"> &#8212; held the others up %s in %zu steady "
			"iteration%s</tspan>",
			units_duration(a, sizeof(a), r->delay_ns, UNITS_FINE), n,
			n == 1 ? "" : "s");
	fputs("</text>\n", t->out);
	t->y += ROW_TRACE;
}

/* With many ranks, a rank is its lanes only: a rule above them, a tint behind the straggler's. */
static void write_compact_header(struct html_timeline *t, const struct ranks_timeline *tl,
				 const struct ranks_timeline_rank *rr)
{
	if ((ssize_t)rr->index == tl->straggler)
		fprintf(t->out, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#FBE3D6\"/>", t->y, TL_W,
			rank_height(tl, rr));
	fprintf(t->out, "<line x1=\"0\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#ccc\"/>", TL_W, t->y, t->y);
}

static void write_rank(struct html_timeline *t, const struct ranks_timeline *tl, const struct job_report *job,
		       const struct ranks_timeline_rank *rr)
{
	const struct job_rank *r = &job->ranks[rr->index];
	char words[64];

	fprintf(t->out, "<g class=\"tl-rank\" data-rank=\"%" PRId64 "\" data-shift-ns=\"%" PRId64 "\" data-delay-ns=\"%"
		PRId64 "\"%s>\n", r->rank, shift_of(r), r->delay_ns,
		(ssize_t)rr->index == tl->straggler ? " data-straggler=\"1\"" : "");
	if (tl->compact) {
		write_compact_header(t, tl, rr);
	} else {
		write_rank_header(t, tl, job, rr);
		snprintf(words, sizeof(words), "iterations (%zu)", rr->nsteps);
		html_timeline_steps(t, rr->steps, rr->nsteps, words, "iteration");
	}
	for (size_t l = 0; l < rr->nlanes; l++) {
		if (tl->compact && rr->lanes[l].stream != -2)
			snprintf(words, sizeof(words), "rank %" PRId64 "%s GPU %" PRId64, r->rank,
				 (ssize_t)rr->index == tl->straggler ? " (straggler)" : "", rr->lanes[l].device);
		else
			snprintf(words, sizeof(words), "GPU %" PRId64 " %s", rr->lanes[l].device,
				 rr->lanes[l].stream == -2 ? "NCCL" : "compute");
		html_timeline_lane(t, &rr->lanes[l], words);
	}
	if (!rr->nlanes) {
		snprintf(words, sizeof(words), "rank %" PRId64 " GPU", r->rank);
		html_timeline_label(t, ROW_LANE, tl->compact ? words : "GPU", NULL);
		fprintf(t->out, "<text x=\"%d\" y=\"%d\" class=\"muted\">", TL_LEFT + 4, t->y + ROW_LANE - 4);
		html_text(t->out, rr->error ? rr->error : "no GPU work in this window");
		fputs("</text>", t->out);
		t->y += ROW_LANE;
	}
	fputs("</g>\n", t->out);
}

/* The zoomed window's title: which iteration, and why that one. */
static void write_zoom_title(FILE *out, const struct ranks_timeline *tl, const struct job_report *job)
{
	const struct job_iteration *it = &job->iterations[tl->zoomed];
	const struct chart_window *w = &tl->windows[1];
	char a[32], b[32], c[32], name[64];

	/* "Step 40" in a job lined up by step number, else "Iteration #0" */
	job_iteration_name(job, it, name, sizeof(name));
	if (name[0] == '#')
		fprintf(out, "<h3>Iteration %s", name);
	else
		fprintf(out, "<h3>%c%s", toupper((unsigned char)name[0]), name + 1);
	fprintf(out, ", zoomed: %s to %s</h3>\n<p class=\"small muted\">",
		html_time(tl->origin, w->start, a, sizeof(a)), html_time(tl->origin, w->end, b, sizeof(b)));
	if (it->straggler_rank >= 0 && it->delay_ns > 0) {
		fprintf(out,
			"The steady iteration a straggler held up most: the others waited %s for "
			"rank %" PRId64 " (",
			units_duration(c, sizeof(c), it->delay_ns, UNITS_FINE), it->straggler_rank);
		html_text(out, it->cause);
		fputs(").</p>\n", out);
	} else {
		fprintf(
		    out,
		    "The slowest steady iteration (%s); no rank held the others up in it.</p>\n",
		    units_duration(c, sizeof(c), it->time_ns, UNITS_FINE));
	}
}

static void write_window(FILE *out, const struct ranks_timeline *tl, const struct job_report *job, size_t wi)
{
	const struct chart_window *w = &tl->windows[wi];
	struct html_timeline t = { .out = out, .origin = tl->origin, .w = w, .wi = wi, .height = TL_AXIS + 6 };
	char a[32], b[32];

	t.height += tl->job_steps ? ROW_STEPS * (1 + tl->compact) : 0;
	t.height += job->path.nstretches ? ROW_LANE : 0;
	for (size_t i = 0; i < tl->nranks; i++)
		t.height += rank_height(tl, &tl->ranks[i]);
	if (wi)
		write_zoom_title(out, tl, job);
	else
		fprintf(out, "<h3>Steady state: %s to %s</h3>\n", html_time(tl->origin, w->start, a, sizeof(a)),
			html_time(tl->origin, w->end, b, sizeof(b)));
	fprintf(out, "<figure><svg class=\"timeline ranks-timeline\" data-window=\"%s\" data-start-ns=\"%" PRId64
		"\" data-end-ns=\"%" PRId64 "\" data-bucket-ns=\"%" PRId64 "\" viewBox=\"0 0 %d %d\" role=\"img\" "
		"aria-label=\"the ranks' timeline\">\n", wi ? "zoom" : "steady", w->start, w->end, w->width, TL_W, t.height);
	html_timeline_axis(&t);
	if (tl->job_steps)
		write_straggler_row(&t, tl, job);
	if (job->path.nstretches)
		write_path_row(&t, &job->path);
	if (tl->job_steps && tl->compact) {	/* the job's iterations once, not every rank's */
		char words[64];

		snprintf(words, sizeof(words), "iterations (%zu)", job->niterations);
		html_timeline_steps(&t, tl->job_steps, job->niterations, words, "iteration");
	}
	for (size_t i = 0; i < tl->nranks; i++)
		write_rank(&t, tl, job, &tl->ranks[i]);
	fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n</svg></figure>\n", TL_LEFT, TL_LEFT,
		TL_AXIS - 4, t.y);
}

void ranks_timeline_write(FILE *out, const struct job_report *job, const struct ranks_timeline *tl)
{
	char a[32];

	if (!tl->nwindows) {
		fputs("<p class=\"muted\">No iterations in the ranks' summaries: nothing to line the ranks up by.</p>\n", out);
		return;
	}
	fprintf(out, "<p class=\"small muted\">Every rank on the job's clock (its own clock moved by the correction in "
		     "the ranks' table), times from the first GPU operation of the ranks drawn. Each pixel column is %s: "
		     "each GPU's lanes show the share of it its NCCL kernels, and the rest of its work, kept it busy, "
		     "coloured by the work that dominates it. Red: the iterations a straggler held the others up in. Hover for "
		     "details.</p>\n", html_short(tl->windows[0].width, a, sizeof(a)));
	if (job->nranks > tl->nranks)
		fprintf(out, "<p class=\"note\"><b>Note:</b> %zu of %zu ranks drawn: those that held the others up "
			"longest, then the first by rank (the ranks' table lists every one).</p>\n", tl->nranks, job->nranks);
	for (size_t w = 0; w < tl->nwindows; w++)
		write_window(out, tl, job, w);
}
