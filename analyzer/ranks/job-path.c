/*
 * The job's critical path (see job-path.h): one walk back over the steady collectives sorted by end.
 */
#include "analyzer/ranks/job-path.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_end(const void *pa, const void *pb)
{
	const struct job_path_step *a = pa, *b = pb;

	if (a->end != b->end)
		return (a->end > b->end) - (a->end < b->end);
	return (a->start > b->start) - (a->start < b->start);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* One more stretch, walking back (job_path_compute() puts them in time order at the end). */
static void add_stretch(struct job_path *out, int64_t start, int64_t end, int64_t rank, enum what_if_part part)
{
	if (end <= start)
		return;
	if ((out->nstretches & (out->nstretches - 1)) == 0)	/* grown at each power of two */
		out->stretches = xrealloc(out->stretches, (out->nstretches ? 2 * out->nstretches : 1) *
							  sizeof(*out->stretches));
	out->stretches[out->nstretches++] = (struct job_path_stretch){ start, end, rank, part };
}

/* Step s on the path, which has come back to *cursor: the time after its end that no window holds,
 * its own time, then its last arrival's window, scaled down where the cursor cuts it. */
static void take_step(struct job_path *out, const struct job_path_step *s, int64_t *cursor)
{
	int64_t end = min64(s->end, *cursor), start = min64(s->start, end);
	int64_t from = min64(s->window_start, start), len = s->start - s->window_start, covered = 0;
	double keep = len > 0 ? (double)(start - from) / (double)len : 0;
	struct job_path_rank *r = &out->ranks[s->rank];

	out->unknown_ns += *cursor - end;
	out->comm_ns += end - start;
	for (int p = 0; p < WHAT_IF_PARTS; p++) {
		int64_t ns = (int64_t)((double)s->path_ns[p] * keep);

		r->part_ns[p] += ns;
		covered += ns;
	}
	out->unknown_ns += (start - from) - min64(covered, start - from);
	add_stretch(out, start, end, -1, WHAT_IF_COMM);
	add_stretch(out, from, start, r->rank, what_if_largest_part(s->path_ns));
	r->collectives++;
	out->collectives++;
	*cursor = from;
}

void job_path_compute(struct job_path_step *steps, size_t n, const int64_t *rank_numbers, size_t nranks,
		      struct job_path *out)
{
	int64_t cursor, last_end;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->ranks = xcalloc(nranks ? nranks : 1, sizeof(*out->ranks));
	out->nranks = nranks;
	for (size_t r = 0; r < nranks; r++)
		out->ranks[r].rank = rank_numbers[r];
	if (!n)
		return;
	qsort(steps, n, sizeof(*steps), by_end);
	i = n - 1;
	cursor = last_end = steps[i].end;
	for (;;) {
		take_step(out, &steps[i], &cursor);
		while (i > 0 && steps[i - 1].end > cursor + JOB_PATH_SKEW_NS)
			i--;	/* ran beside the window: overlapped */
		if (i-- == 0)
			break;
	}
	out->span_ns = last_end - cursor;
	for (size_t k = 0; k < out->nstretches / 2; k++) {
		struct job_path_stretch t = out->stretches[k];

		out->stretches[k] = out->stretches[out->nstretches - 1 - k];
		out->stretches[out->nstretches - 1 - k] = t;
	}
}

void job_path_release(struct job_path *path)
{
	if (!path)
		return;
	free(path->ranks);
	free(path->stretches);
	memset(path, 0, sizeof(*path));
}

static int by_ns(const void *pa, const void *pb)
{
	const struct job_path_share *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

struct job_path_share *job_path_shares(const struct job_path *p, size_t *n)
{
	struct job_path_share *e = xcalloc(p->nranks * WHAT_IF_PARTS + 1, sizeof(*e));

	*n = 1;
	e[0] = (struct job_path_share){ -1, WHAT_IF_COMM, p->comm_ns };
	for (size_t r = 0; r < p->nranks; r++)
		for (int k = 0; k < WHAT_IF_PARTS; k++) {
			if (k == WHAT_IF_COMM)
				e[0].ns += p->ranks[r].part_ns[k];
			else if (p->ranks[r].part_ns[k] > 0)
				e[(*n)++] = (struct job_path_share){ p->ranks[r].rank, (enum what_if_part)k,
								     p->ranks[r].part_ns[k] };
		}
	qsort(e, *n, sizeof(*e), by_ns);
	return e;
}

const char *job_path_words(const struct job_path *p, char *buf, size_t len, int64_t *shown_ns)
{
	size_t n, at = 0;
	struct job_path_share *e = job_path_shares(p, &n);

	*buf = '\0';
	*shown_ns = 0;
	for (size_t i = 0; i < n && i < JOB_PATH_SHOWN && p->span_ns > 0; i++) {
		double pct = 100.0 * (double)e[i].ns / (double)p->span_ns;

		if (e[i].ns * 1000 < JOB_PATH_SHOWN_PERMILLE * p->span_ns || at >= len)
			break;
		if (e[i].rank < 0)
			at += (size_t)snprintf(buf + at, len - at, "%scommunication %.1f%%", i ? ", " : "", pct);
		else
			at += (size_t)snprintf(buf + at, len - at, "%srank %" PRId64 "'s %s %.1f%%", i ? ", " : "",
					       e[i].rank, what_if_part_name(e[i].part), pct);
		*shown_ns += e[i].ns;
	}
	free(e);
	return buf;
}
