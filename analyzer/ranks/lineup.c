/*
 * Lining up ranks whose traces cover different steps (see lineup.h): iterations matched by step
 * number, and collectives re-based at the first iteration every rank has.
 */
#include "analyzer/ranks/lineup.h"

#include "common/util.h"

#include <stdlib.h>
#include <string.h>

enum rank_steps_from lineup_steps_from(const struct rank_summary *const *s, size_t k)
{
	enum rank_steps_from from = k ? s[0]->steps_from : RANK_STEPS_NONE;

	for (size_t i = 1; i < k; i++)
		if (s[i]->steps_from != from)
			return RANK_STEPS_NONE;
	return from;
}

int lineup_first_steps_differ(const struct rank_summary *const *s, size_t k)
{
	for (size_t i = 1; i < k; i++)
		if (s[i]->niterations && s[0]->niterations && s[i]->iterations[0].step != s[0]->iterations[0].step)
			return 1;
	return 0;
}

static int cmp_step(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* Every step some rank has, in order, once; the count in *n. */
static int64_t *all_steps(const struct rank_summary *const *s, size_t k, size_t *n)
{
	size_t total = 0, out = 0;
	int64_t *steps;

	for (size_t i = 0; i < k; i++)
		total += s[i]->niterations;
	steps = xcalloc(total ? total : 1, sizeof(*steps));
	for (size_t i = 0, j = 0; i < k; i++)
		for (size_t it = 0; it < s[i]->niterations; it++)
			steps[j++] = s[i]->iterations[it].step;
	qsort(steps, total, sizeof(*steps), cmp_step);
	for (size_t j = 0; j < total; j++)
		if (!out || steps[out - 1] != steps[j])
			steps[out++] = steps[j];
	*n = out;
	return steps;
}

/* The index of step among steps[0..n) (sorted), -1 when it is not one of them. */
static int64_t step_index(const int64_t *steps, size_t n, int64_t step)
{
	const int64_t *at = bsearch(&step, steps, n, sizeof(*steps), cmp_step);

	return at ? (int64_t)(at - steps) : -1;
}

/* The job's iterations: every step some rank has; each rank's mapped to them by its step numbers. */
static void lineup_by_step(struct job_report *job, const struct rank_summary *const *s, size_t k, size_t ref,
			   int64_t **maps)
{
	size_t n;
	int64_t *steps = all_steps(s, k, &n);
	int *decided = xcalloc(n ? n : 1, sizeof(*decided));

	job->iterations = xcalloc(n ? n : 1, sizeof(*job->iterations));
	job->niterations = n;
	for (size_t j = 0; j < n; j++) {
		job->iterations[j].index = (int64_t)j;
		job->iterations[j].step = steps[j];
		job->iterations[j].slowest_rank = job->iterations[j].straggler_rank = -1;
	}
	/* the reference rank decides first, then the others in rank order */
	for (size_t o = 0; o < k; o++) {
		size_t i = o == 0 ? ref : o <= ref ? o - 1 : o;

		maps[i] = xcalloc(s[i]->niterations ? s[i]->niterations : 1, sizeof(**maps));
		for (size_t it = 0; it < s[i]->niterations; it++) {
			int64_t j = step_index(steps, n, s[i]->iterations[it].step);

			maps[i][it] = j;
			if (j < 0 || decided[j])
				continue;
			job->iterations[j].steady = !s[i]->iterations[it].warmup;
			decided[j] = 1;
		}
	}
	free(decided);
	free(steps);
}

/* The rank with the most iterations, the first of those tied: the job's iterations are its own when
   they are not lined up by step. */
static size_t reference_rank(const struct rank_summary *const *s, size_t k)
{
	size_t ref = 0;

	for (size_t i = 1; i < k; i++)
		if (s[i]->niterations > s[ref]->niterations)
			ref = i;
	return ref;
}

/* The reference iteration that holds mid (on the common clock), or -1: the first that ends after it. */
static int64_t iteration_at(const struct rank_summary *rs, int64_t ref_shift, int64_t mid)
{
	size_t lo = 0, hi = rs->niterations;

	while (lo < hi) {
		size_t h = lo + (hi - lo) / 2;

		if (rs->iterations[h].end + ref_shift <= mid)
			lo = h + 1;
		else
			hi = h;
	}
	if (lo < rs->niterations && rs->iterations[lo].start + ref_shift <= mid)
		return (int64_t)lo;
	return -1;
}

static int64_t shift_of(const struct job_rank *r)
{
	return r->clock_anchor_ns + r->clock_refine_ns;
}

/* The job's iterations as the reference rank's; rank i's mapped to them by time or by index. */
static void lineup_by_reference(struct job_report *job, const struct rank_summary *const *s, size_t k, size_t ref,
				int64_t **maps)
{
	const struct rank_summary *rs = k ? s[ref] : NULL;
	size_t n = rs ? rs->niterations : 0;

	job->iterations = xcalloc(n ? n : 1, sizeof(*job->iterations));
	job->niterations = n;
	for (size_t it = 0; it < n; it++) {
		job->iterations[it].index = (int64_t)it;
		job->iterations[it].step = rs->iterations[it].step;
		job->iterations[it].steady = it >= rs->first_steady;
		job->iterations[it].slowest_rank = job->iterations[it].straggler_rank = -1;
	}
	for (size_t i = 0; i < k; i++) {
		maps[i] = xcalloc(s[i]->niterations ? s[i]->niterations : 1, sizeof(**maps));
		for (size_t it = 0; it < s[i]->niterations; it++) {
			const struct rank_iteration *ri = &s[i]->iterations[it];
			int64_t mid = ri->start + (ri->end - ri->start) / 2 + shift_of(&job->ranks[i]);

			if (job->lineup == JOB_LINEUP_INDEX)
				maps[i][it] = it < n ? (int64_t)it : -1;
			else
				maps[i][it] = iteration_at(rs, shift_of(&job->ranks[ref]), mid);
		}
	}
}

void lineup_iterations(struct job_report *job, const struct rank_summary *const *s, size_t k, int64_t **maps)
{
	size_t ref = k ? reference_rank(s, k) : 0;

	if (job->lineup == JOB_LINEUP_STEP)
		lineup_by_step(job, s, k, ref, maps);
	else
		lineup_by_reference(job, s, k, ref, maps);
}

int64_t lineup_common_iteration(const struct job_report *job, const struct rank_summary *const *s, size_t k,
				int64_t *const *maps, size_t *local)
{
	size_t n = job->niterations;
	int64_t *ranks = xcalloc(n ? n : 1, sizeof(*ranks));
	size_t *seen = xcalloc(n ? n : 1, sizeof(*seen));
	int64_t common = -1;

	/*
	 * Each rank counts once per job iteration, however many of its iterations map there. The first
	 * iteration of a trace that may not hold the run's start (a window) counts for no rank: work
	 * launched before the window opened that ran after it (the previous step's last collectives)
	 * is recorded, without its launch, and lands in that iteration.
	 */
	for (size_t i = 0; i < k; i++) {
		for (size_t it = s[i]->whole ? 0 : 1; it < s[i]->niterations; it++) {
			int64_t j = maps[i][it];

			if (j >= 0 && seen[j] != i + 1)
				ranks[j]++, seen[j] = i + 1;
		}
	}
	for (size_t j = 0; j < n && common < 0; j++)
		if (ranks[j] == (int64_t)k)
			common = (int64_t)j;
	for (size_t i = 0; i < k && common >= 0; i++) {
		local[i] = s[i]->whole ? 0 : 1;
		while (local[i] < s[i]->niterations && maps[i][local[i]] != common)
			local[i]++;
	}
	free(seen);
	free(ranks);
	return common;
}

struct rebase_pass {
	struct lineup_rebase *r;
	int64_t from;
};

static struct lineup_key *find_key(const struct lineup_rebase *r, int type, int ordinal)
{
	for (size_t i = 0; i < r->nkeys; i++)
		if (r->keys[i].type == type && r->keys[i].ordinal == ordinal)
			return &r->keys[i];
	return NULL;
}

/* The index of ordinal among r's, added when new. */
static size_t ordinal_index(struct lineup_rebase *r, int ordinal)
{
	size_t o;

	for (o = 0; o < r->nordinals && r->ordinals[o] != ordinal; o++)
		;
	if (o == r->nordinals) {
		r->ordinals = xrealloc(r->ordinals, (r->nordinals + 1) * sizeof(*r->ordinals));
		r->ordinals[r->nordinals++] = ordinal;
	}
	return o;
}

static int count_before(const struct rank_collective *c, void *arg)
{
	struct rebase_pass *p = arg;
	struct lineup_rebase *r = p->r;
	struct lineup_key *key;

	if (c->type == COLLECTIVE_SENDRECV)
		return 0;
	key = find_key(r, c->type, c->ordinal);
	if (!key) {
		r->keys = xrealloc(r->keys, (r->nkeys + 1) * sizeof(*r->keys));
		key = &r->keys[r->nkeys++];
		*key = (struct lineup_key){ .type = c->type, .ordinal = c->ordinal };
	}
	if (c->start < p->from) {
		key->before++;
		r->before++;
	} else {
		ordinal_index(r, c->ordinal);
	}
	return 0;
}

int lineup_rebase_read(struct lineup_rebase *r, const struct rank_summary *s, int64_t from, char *err,
		       size_t errlen)
{
	struct rebase_pass p = { .r = r, .from = from };
	int ret;

	memset(r, 0, sizeof(*r));
	ret = rank_summary_collectives(s, count_before, &p, err, errlen);
	/* streams used only before the common iteration: numbered after the others, by key order */
	for (size_t i = 0; i < r->nkeys; i++)
		ordinal_index(r, r->keys[i].ordinal);
	return ret;
}

void lineup_rebase(const struct lineup_rebase *r, struct rank_collective *c)
{
	const struct lineup_key *key = find_key(r, c->type, c->ordinal);
	size_t o;

	if (!key)
		return;
	c->seq = c->seq - key->before + LINEUP_SEQ_BASE;
	for (o = 0; o < r->nordinals && r->ordinals[o] != c->ordinal; o++)
		;
	c->ordinal = (int)o;
}

void lineup_rebase_release(struct lineup_rebase *r)
{
	if (!r)
		return;
	free(r->keys);
	free(r->ordinals);
	memset(r, 0, sizeof(*r));
}
