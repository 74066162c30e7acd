/*
 * The merge of per-rank summaries into one job (see job.h).
 *
 * Matching key. NCCL requires every rank of a communicator to issue the same collectives in the
 * same order, and launches a communicator's collectives in issue order on that communicator's
 * stream; so the n-th collective of one type on a rank's k-th NCCL stream is the same operation on
 * every rank. Streams are numbered by first use, not by id, because stream ids are handed out per
 * process in creation order and differ between ranks. The type is part of the key so that a
 * collective missing on one rank (a truncated trace, an extra all-gather in a rank's logging)
 * shifts only that type's sequence, not every later collective's. Point-to-point kernels (SendRecv)
 * involve only some ranks and are never matched. Generic kernels whose collective nothing names
 * (analyzer/analysis/collectives.h) are matched as type "Other": NCCL picks the same kernel on
 * every rank.
 *
 * Who was late. Every rank leaves a collective together, so the rank that arrived last spends the
 * least time in its kernel and the others' extra time is how long they waited: durations, which
 * need no common clock. Clocks are aligned for the report and the timeline only: ranks on one host
 * share its clock (trace time 0 is the process's time_origin_ns on it); across hosts the wall-clock
 * anchors (time_origin_utc_ns) align them to NTP's accuracy, and the median difference of the
 * matched collectives' end times (the common exit) refines each other host against the first.
 *
 * Windows. Ranks whose traces cover different steps (capture windows) are lined up by lineup.c:
 * iterations by step number, collectives re-based at the first iteration every rank has whole.
 * The ranks are chosen, and the notes kept, by members.c.
 */
#include "analyzer/ranks/job.h"

#include "common/units.h"
#include "common/util.h"
#include "analyzer/ranks/job-path.h"
#include "analyzer/ranks/job-private.h"
#include "analyzer/ranks/lineup.h"
#include "analyzer/loader/job-check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct acc {
	uint64_t key;
	int used;
	int64_t n;
	int64_t sum_dur, min_dur, second_dur;
	size_t min_rank;			/* index into job->ranks */
	struct rank_collective min_c;		/* the last arrival's record */
	int64_t sum_idle, sum_compute, sum_copy, sum_longest;
	int64_t ref_end;			/* clock refinement: the reference rank's aligned end */
};

struct acc_table {
	struct acc *slots;
	size_t cap, count;
};

/* type: 4 bits, stream ordinal: 12 bits, sequence: 48 bits */
static uint64_t collective_key(const struct rank_collective *c)
{
	return (uint64_t)c->type << 60 | ((uint64_t)c->ordinal & 0xfff) << 48 | ((uint64_t)c->seq & 0xffffffffffffull);
}

static struct acc *acc_get(struct acc_table *t, uint64_t key, int create)
{
	size_t i;

	if (create && 2 * (t->count + 1) > t->cap) {
		struct acc_table bigger = { .cap = t->cap ? 2 * t->cap : 1024 };

		bigger.slots = xcalloc(bigger.cap, sizeof(*bigger.slots));
		for (size_t k = 0; k < t->cap; k++) {
			if (!t->slots[k].used)
				continue;
			i = (size_t)(t->slots[k].key * 0x9e3779b97f4a7c15ull) & (bigger.cap - 1);
			while (bigger.slots[i].used)
				i = (i + 1) & (bigger.cap - 1);
			bigger.slots[i] = t->slots[k];
		}
		bigger.count = t->count;
		free(t->slots);
		*t = bigger;
	}
	if (!t->cap)
		return NULL;
	i = (size_t)(key * 0x9e3779b97f4a7c15ull) & (t->cap - 1);
	while (t->slots[i].used) {
		if (t->slots[i].key == key)
			return &t->slots[i];
		i = (i + 1) & (t->cap - 1);
	}
	if (!create)
		return NULL;
	memset(&t->slots[i], 0, sizeof(t->slots[i]));
	t->slots[i].used = 1;
	t->slots[i].key = key;
	t->count++;
	return &t->slots[i];
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

struct pass {
	struct job_report *job;
	struct acc_table *table;
	size_t rank;			/* index into job->ranks */
	int64_t *diffs;			/* clock refinement samples */
	size_t ndiffs, capdiffs;
	int64_t shift;
	const struct rank_summary *s;
	int64_t max_seq;		/* the highest sequence seen on this rank, for truncation notes */
	size_t first_steady;
	const struct lineup_rebase *rebase;	/* the rank's re-basing (a lined-up job), NULL: none */
};

/* c as the job matches it: re-based when the job is lined up (lineup.h); NULL for point to point,
   which matches nothing. */
static const struct rank_collective *matchable(const struct pass *p, const struct rank_collective *c,
					       struct rank_collective *copy)
{
	if (c->type == COLLECTIVE_SENDRECV)
		return NULL;
	if (!p->rebase)
		return c;
	*copy = *c;
	lineup_rebase(p->rebase, copy);
	return copy;
}

#define CLOCK_SAMPLES 4096

static int keep_reference(const struct rank_collective *c, void *arg)
{
	struct pass *p = arg;
	struct rank_collective copy;
	struct acc *a;

	if (!(c = matchable(p, c, &copy)))
		return 0;
	a = acc_get(p->table, collective_key(c), 1);
	a->ref_end = c->end + p->shift;
	return 0;
}

static int compare_with_reference(const struct rank_collective *c, void *arg)
{
	struct pass *p = arg;
	struct rank_collective copy;
	struct acc *a;

	if (!(c = matchable(p, c, &copy)))
		return 0;
	a = acc_get(p->table, collective_key(c), 0);
	if (!a || p->ndiffs >= CLOCK_SAMPLES)
		return p->ndiffs >= CLOCK_SAMPLES;
	if (p->ndiffs == p->capdiffs) {
		p->capdiffs = p->capdiffs ? 2 * p->capdiffs : 256;
		p->diffs = xrealloc(p->diffs, p->capdiffs * sizeof(*p->diffs));
	}
	p->diffs[p->ndiffs++] = a->ref_end - (c->end + p->shift);
	return 0;
}

static int accumulate(const struct rank_collective *c, void *arg)
{
	struct pass *p = arg;
	int64_t dur = c->end - c->start;
	struct rank_collective copy;
	const struct rank_collective *key = matchable(p, c, &copy);
	struct acc *a;

	if (!key) {
		p->job->unmatched++;
		return 0;
	}
	/* matched by its re-based key, kept as its own trace numbers it (the cause names it so) */
	a = acc_get(p->table, collective_key(key), 1);
	if (!a->n || dur < a->min_dur) {
		a->second_dur = a->n ? a->min_dur : INT64_MAX;
		a->min_dur = dur;
		a->min_rank = p->rank;
		a->min_c = *c;
	} else if (dur < a->second_dur) {
		a->second_dur = dur;
	}
	a->n++;
	a->sum_dur = sat_add64(a->sum_dur, dur);
	a->sum_idle = sat_add64(a->sum_idle, c->idle_ns);
	a->sum_compute = sat_add64(a->sum_compute, c->compute_ns);
	a->sum_copy = sat_add64(a->sum_copy, c->copy_ns);
	a->sum_longest = sat_add64(a->sum_longest, c->longest_ns);
	if (c->seq > p->max_seq)
		p->max_seq = c->seq;
	return 0;
}

/*
 * Clocks, first part: the host's clock, and the wall-clock anchor across hosts. Returns each
 * member's host (an index; free it). *by_time is cleared when not every rank records a clock anchor
 * (nsys exports: each file's clock has its own origin, so only the collectives could align them).
 */
static size_t *clock_anchors(struct job_report *job, struct member *m, size_t k, int *by_time)
{
	const char **hosts = xcalloc(k ? k : 1, sizeof(*hosts));
	int64_t *host_anchor = xcalloc(k ? k : 1, sizeof(*host_anchor));
	size_t nhosts = 0, *host_of = xcalloc(k ? k : 1, sizeof(*host_of));
	int anchors = 1;

	for (size_t i = 0; i < k; i++) {
		size_t h;

		for (h = 0; h < nhosts && strcmp(hosts[h], m[i].s->host); h++)
			;
		if (h == nhosts) {
			hosts[nhosts] = m[i].s->host;
			/* wall - host clock, at trace time 0 */
			host_anchor[nhosts] = m[i].s->wall_ns - m[i].s->origin_ns;
			nhosts++;
		}
		host_of[i] = h;
		anchors &= m[i].s->has_anchor;
	}
	job->nhosts = nhosts;
	for (size_t i = 0; i < k; i++) {
		struct job_rank *r = &job->ranks[i];

		if (!anchors) {
			r->clock_anchor_ns = 0;
			continue;
		}
		/* onto the first rank's host clock: time 0 there is its trace's time 0 */
		r->clock_anchor_ns = m[i].s->origin_ns - m[0].s->origin_ns + (host_anchor[host_of[i]] - host_anchor[0]);
	}
	*by_time = anchors;
	if (nhosts > 1 && !anchors)
		job_note(job, "the traces come from %zu hosts but not all record a wall-clock anchor: clocks are "
		     "aligned only by the collectives, iterations matched by their %s", nhosts,
		     job->lineup == JOB_LINEUP_STEP ? "step number" : "index");
	free(hosts);
	free(host_anchor);
	return host_of;
}

/* Clocks, second part: each other host refined by the median difference of its ranks' collectives'
   ends from the first rank's (matched by key, re-based by rebases when not NULL). */
static void refine_clocks(struct job_report *job, struct member *m, size_t k, struct acc_table *table,
			  const size_t *host_of, const struct lineup_rebase *rebases)
{
	struct pass ref = { .job = job, .table = table, .shift = job->ranks[0].clock_anchor_ns,
			    .rebase = rebases ? &rebases[0] : NULL };
	char err[512];

	if (job->nhosts < 2 || k < 2)
		return;
	if (rank_summary_collectives(m[0].s, keep_reference, &ref, err, sizeof(err)) < 0)
		job_note(job, "clocks not refined: %s", err);
	for (size_t h = 1; h < job->nhosts; h++) {
		struct pass p = { .job = job, .table = table };
		int64_t median = 0;

		for (size_t i = 0; i < k && p.ndiffs < CLOCK_SAMPLES; i++) {
			if (host_of[i] != h)
				continue;
			p.shift = job->ranks[i].clock_anchor_ns;
			p.rebase = rebases ? &rebases[i] : NULL;
			rank_summary_collectives(m[i].s, compare_with_reference, &p, err, sizeof(err));
		}
		if (p.ndiffs) {
			qsort(p.diffs, p.ndiffs, sizeof(*p.diffs), cmp_i64);
			median = p.diffs[p.ndiffs / 2];
		}
		for (size_t i = 0; i < k; i++)
			if (host_of[i] == h)
				job->ranks[i].clock_refine_ns = median;
		free(p.diffs);
	}
	/* the table is reused for matching */
	free(table->slots);
	memset(table, 0, sizeof(*table));
}

/* Member i's time per job iteration into the job's: the sum, its count of ranks, and the slowest rank. */
static void add_rank_time(struct job_report *job, size_t i, const int64_t *rank_time, int64_t *sum)
{
	for (size_t j = 0; j < job->niterations; j++) {
		struct job_iteration *ji = &job->iterations[j];

		if (!rank_time[j])
			continue;
		sum[j] = sat_add64(sum[j], rank_time[j]);
		ji->ranks++;
		if (rank_time[j] > ji->time_ns) {
			ji->time_ns = rank_time[j];
			ji->slowest_rank = job->ranks[i].rank;
		}
	}
}

/* Each iteration's mean over ranks; the steady iterations' total and median. */
static void steady_iterations(struct job_report *job, const int64_t *sum)
{
	size_t n = job->niterations, nsteady = 0;
	int64_t *steady_times = xcalloc(n ? n : 1, sizeof(*steady_times));

	job->digest.steady_ns = job->median_iteration_ns = 0;	/* iterations may be matched twice */
	for (size_t j = 0; j < n; j++) {
		struct job_iteration *ji = &job->iterations[j];

		ji->mean_ns = ji->ranks ? sum[j] / ji->ranks : 0;
		if (ji->steady && ji->ranks) {
			steady_times[nsteady++] = ji->time_ns;
			job->digest.steady_ns = sat_add64(job->digest.steady_ns, ji->time_ns);
		}
	}
	if (nsteady) {
		qsort(steady_times, nsteady, sizeof(*steady_times), cmp_i64);
		job->median_iteration_ns = steady_times[nsteady / 2];
	}
	job->digest.iterations = (int64_t)nsteady;
	job->digest.median_iteration_ns = job->median_iteration_ns;
	free(steady_times);
}

/* The slowest rank overall: the highest median steady iteration, unless every rank is within 1%. */
static int64_t slowest_rank(const struct job_report *job, size_t k)
{
	int64_t lo = INT64_MAX, hi = -1, slowest = -1;

	for (size_t i = 0; i < k; i++) {
		if (job->ranks[i].median_iteration_ns > hi) {
			hi = job->ranks[i].median_iteration_ns;
			slowest = job->ranks[i].rank;
		}
		if (job->ranks[i].median_iteration_ns < lo)
			lo = job->ranks[i].median_iteration_ns;
	}
	if (k < 2 || (double)(hi - lo) <= 0.01 * (double)hi)
		return -1;
	return slowest;
}

/* The summaries of the k members, in their order: what lineup.c reads. */
static const struct rank_summary **summaries_of(const struct member *m, size_t k)
{
	const struct rank_summary **s = xcalloc(k ? k : 1, sizeof(*s));

	for (size_t i = 0; i < k; i++)
		s[i] = m[i].s;
	return s;
}

/*
 * The job's iterations, every rank's matched to them (lineup.c: by step number when every rank has
 * them, else by time on the common clock, else by index), each one's time over the ranks, and the
 * slowest rank. maps[i][local] is the job iteration of member i's local iteration, or -1.
 */
static void iterations(struct job_report *job, struct member *m, size_t k, int64_t **maps)
{
	const struct rank_summary **s = summaries_of(m, k);
	int64_t *sum, *rank_time;
	size_t n;

	lineup_iterations(job, s, k, maps);
	n = job->niterations;
	sum = xcalloc(n ? n : 1, sizeof(*sum));
	rank_time = xcalloc(n ? n : 1, sizeof(*rank_time));
	for (size_t i = 0; i < k; i++) {
		memset(rank_time, 0, (n ? n : 1) * sizeof(*rank_time));
		for (size_t it = 0; it < s[i]->niterations; it++)
			if (maps[i][it] >= 0)
				rank_time[maps[i][it]] = sat_add64(rank_time[maps[i][it]],
								   s[i]->iterations[it].end - s[i]->iterations[it].start);
		add_rank_time(job, i, rank_time, sum);
	}
	steady_iterations(job, sum);
	free(sum);
	free(rank_time);
	free(s);
	job->slowest_rank = slowest_rank(job, k);
}

/* A kernel name of at most 80 characters: longer ones lose their middle (templates). */
static const char *short_name(char *buf, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (n < 80 || len < 81) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	snprintf(buf, len, "%.48s...%s", name, name + n - 29);
	return buf;
}

/* What the last rank did differently in the window before the collective, in words. */
static char *what_differed(const struct acc *a, const struct rank_summary *s)
{
	const struct rank_collective *c = &a->min_c;
	double others = (double)(a->n - 1);
	int64_t idle = (int64_t)((double)(a->sum_idle - c->idle_ns) / others);
	int64_t compute = (int64_t)((double)(a->sum_compute - c->compute_ns) / others);
	int64_t copy = (int64_t)((double)(a->sum_copy - c->copy_ns) / others);
	int64_t longest = (int64_t)((double)(a->sum_longest - c->longest_ns) / others);
	int64_t d_idle = c->idle_ns - idle, d_compute = c->compute_ns - compute, d_copy = c->copy_ns - copy;
	char b1[32], b2[32], b3[32], b4[32], name[96];
	const char *type = collective_type_name(c->type);

	if (d_idle <= 0 && d_compute <= 0 && d_copy <= 0)
		return xasprintf("late at %s #%" PRId64 " with no more GPU work or idle time before it than the "
				 "others: the collective was issued late", type, c->seq);
	if (d_idle >= d_compute && d_idle >= d_copy)
		return xasprintf(
		    "a host gap before %s #%" PRId64 ": its GPU sat idle %s, the others' %s", type,
		    c->seq, units_duration(b1, sizeof(b1), c->idle_ns, UNITS_FINE),
		    units_duration(b2, sizeof(b2), idle, UNITS_FINE));
	if (d_copy >= d_compute)
		return xasprintf("copies before %s #%" PRId64 ": %s of copies, the others' %s",
				 type, c->seq,
				 units_duration(b1, sizeof(b1), c->copy_ns, UNITS_FINE),
				 units_duration(b2, sizeof(b2), copy, UNITS_FINE));
	return xasprintf("longer compute before %s #%" PRId64
			 ": %s of kernels, the others' %s; its longest, %s, "
			 "ran %s (the others' longest: %s)",
			 type, c->seq, units_duration(b1, sizeof(b1), c->compute_ns, UNITS_FINE),
			 units_duration(b2, sizeof(b2), compute, UNITS_FINE),
			 *rank_summary_name(s, c->name_id)
			     ? short_name(name, sizeof(name), rank_summary_name(s, c->name_id))
			     : "a kernel",
			 units_duration(b3, sizeof(b3), c->longest_ns, UNITS_FINE),
			 units_duration(b4, sizeof(b4), longest, UNITS_FINE));
}

/* "; on its critical path there: host 50.2 ms, compute 1.1 ms": the late rank's own path in the
   window before the collective, its two largest parts; "" when it has none. */
static const char *path_words(char *buf, size_t len, const struct rank_collective *c)
{
	enum what_if_part first = what_if_largest_part(c->path_ns), second;
	int64_t rest[WHAT_IF_PARTS];
	char b1[32], b2[32], more[64] = "";

	*buf = '\0';
	if (first == WHAT_IF_PARTS)
		return buf;
	memcpy(rest, c->path_ns, sizeof(rest));
	rest[first] = 0;
	second = what_if_largest_part(rest);
	if (second != WHAT_IF_PARTS)
		snprintf(more, sizeof(more), ", %s %s", what_if_part_name(second),
			 units_duration(b2, sizeof(b2), c->path_ns[second], UNITS_FINE));
	snprintf(buf, len, "; on its critical path there: %s %s%s", what_if_part_name(first),
		 units_duration(b1, sizeof(b1), c->path_ns[first], UNITS_FINE), more);
	return buf;
}

/* What the last rank did differently in the window before the collective, in words, and what its
   own critical path went through there. */
static char *cause_of(const struct acc *a, const struct rank_summary *s)
{
	char *what = what_differed(a, s), path[160], *cause;

	path_words(path, sizeof(path), &a->min_c);
	if (!*path)
		return what;
	cause = xasprintf("%s%s", what, path);
	free(what);
	return cause;
}

static int by_delay(const void *pa, const void *pb)
{
	const struct straggler_event *a = pa, *b = pb;

	if (a->delay_ns != b->delay_ns)
		return a->delay_ns < b->delay_ns ? 1 : -1;
	return (a->iteration > b->iteration) - (a->iteration < b->iteration);
}

/* The job iteration of a collective's record from member rank (-1: none). */
static int64_t job_iteration_of(const struct job_report *job, struct member *m, int64_t **maps, size_t rank,
				const struct rank_collective *c)
{
	(void)job;
	if (c->iteration < 0 || (size_t)c->iteration >= m[rank].s->niterations)
		return -1;
	return maps[rank][c->iteration];
}

static void judge_collectives(struct job_report *job, struct member *m, struct acc_table *table,
			      const struct rule_config *config, int64_t **maps)
{
	struct rule_context ctx = { .config = config };
	int64_t min_delay = (int64_t)(rule_param(&ctx, &rule_straggler, "min_delay_us") * 1000.0);
	double min_pct = rule_param(&ctx, &rule_straggler, "min_delay_pct");
	int64_t threshold = (int64_t)((double)job->median_iteration_ns * min_pct / 100.0);

	if (threshold < min_delay)
		threshold = min_delay;
	for (size_t i = 0; i < table->cap; i++) {
		struct acc *a = &table->slots[i];
		const struct rank_collective *c = &a->min_c;
		int64_t delay, it;
		struct job_iteration *ji;

		if (!a->used)
			continue;
		if (a->n < 2) {
			job->unmatched++;
			if (job->lined_up && (int64_t)(a->key & 0xffffffffffffull) < LINEUP_SEQ_BASE)
				job->ranks[a->min_rank].unmatched_first++;
			continue;
		}
		job->matched++;
		it = job_iteration_of(job, m, maps, a->min_rank, c);
		if (it >= 0 && job->iterations[it].steady)
			job->comm[c->type].transfer_ns = sat_add64(job->comm[c->type].transfer_ns, a->min_dur - c->overlap_ns);
		delay = (a->sum_dur - a->min_dur) / (a->n - 1) - a->min_dur;
		if (delay < threshold || it < 0)
			continue;
		ji = &job->iterations[it];
		if (ji->steady)
			job->ranks[a->min_rank].last_at++;
		if (delay > ji->delay_ns) {
			ji->delay_ns = delay;
			ji->straggler_rank = (int64_t)a->min_rank;	/* an index until the end */
			free(ji->cause);
			ji->cause = cause_of(a, m[a->min_rank].s);
		}
	}
	for (size_t i = 0; i < table->cap; i++) {
		struct acc *a = &table->slots[i];
		int64_t delay, it;

		if (!a->used || a->n < 2)
			continue;
		it = job_iteration_of(job, m, maps, a->min_rank, &a->min_c);
		delay = (a->sum_dur - a->min_dur) / (a->n - 1) - a->min_dur;
		if (it >= 0 && delay >= threshold && job->iterations[it].straggler_rank == (int64_t)a->min_rank)
			job->iterations[it].collectives++;
	}
	job->events = xcalloc(job->niterations ? job->niterations : 1, sizeof(*job->events));
	for (size_t it = 0; it < job->niterations; it++) {
		struct job_iteration *ji = &job->iterations[it];
		struct job_rank *r;

		if (ji->straggler_rank < 0)
			continue;
		r = &job->ranks[ji->straggler_rank];
		if (ji->steady)
			r->delay_ns = sat_add64(r->delay_ns, ji->delay_ns);
		ji->straggler_rank = r->rank;
		job->events[job->nevents++] = (struct straggler_event){
			.iteration = ji->index, .rank = r->rank, .delay_ns = ji->delay_ns,
			.collectives = ji->collectives, .cause = ji->cause, .steady = ji->steady,
			.step = job->lined_up ? ji->step : -1,
		};
	}
	qsort(job->events, job->nevents, sizeof(*job->events), by_delay);
}

/* The job's critical path over its steady collectives, each taken on its last arrival's clock. */
static void critical_path(struct job_report *job, struct member *m, const struct acc_table *table, int64_t **maps)
{
	struct job_path_step *steps = xcalloc(table->count ? table->count : 1, sizeof(*steps));
	int64_t *rank_numbers = xcalloc(job->nranks ? job->nranks : 1, sizeof(*rank_numbers));
	size_t n = 0;

	for (size_t i = 0; i < table->cap; i++) {
		const struct acc *a = &table->slots[i];
		const struct rank_collective *c = &a->min_c;
		const struct job_rank *r;
		int64_t it, shift;

		if (!a->used)
			continue;
		it = job_iteration_of(job, m, maps, a->min_rank, c);
		if (it < 0 || !job->iterations[it].steady)
			continue;
		r = &job->ranks[a->min_rank];
		shift = r->clock_anchor_ns + r->clock_refine_ns;
		steps[n] = (struct job_path_step){ .rank = a->min_rank, .window_start = c->window_start + shift,
						   .start = c->start + shift, .end = c->end + shift };
		memcpy(steps[n++].path_ns, c->path_ns, sizeof(c->path_ns));
	}
	for (size_t i = 0; i < job->nranks; i++)
		rank_numbers[i] = job->ranks[i].rank;
	job_path_compute(steps, n, rank_numbers, job->nranks, &job->path);
	free(rank_numbers);
	free(steps);
}

/* The job's ranks from its members, and the communication per type averaged over them. */
static void fill_ranks(struct job_report *job, const struct member *m, size_t k)
{
	job->ranks = xcalloc(k ? k : 1, sizeof(*job->ranks));
	job->nranks = k;
	job->digest.nranks = k;
	for (size_t i = 0; i < k; i++) {
		struct job_rank *r = &job->ranks[i];
		const struct rank_summary *rs = m[i].s;

		r->rank = m[i].rank;
		r->trace = xstrdup(rs->trace);
		r->host = xstrdup(rs->host);
		r->pid = rs->pid;
		r->complete = rs->complete || rs->format != TRACE_FORMAT_GPT;
		r->iterations = rs->niterations;
		r->first_steady = rs->first_steady;
		r->median_iteration_ns = rs->median_ns;
		r->collectives = (int64_t)rs->ncollectives;
		r->windows = (int64_t)rs->windows;
		for (int t = 0; t < COLLECTIVE_TYPES; t++) {
			r->comm_ns += rs->comm_ns[t];
			r->exposed_ns += rs->comm_ns[t] - rs->overlap_ns[t];
			job->comm[t].count += rs->comm_count[t];
			job->comm[t].ns += rs->comm_ns[t];
			job->comm[t].exposed_ns += rs->comm_ns[t] - rs->overlap_ns[t];
		}
	}
	for (int t = 0; k && t < COLLECTIVE_TYPES; t++) {
		job->comm[t].count /= (int64_t)k;
		job->comm[t].ns /= (int64_t)k;
		job->comm[t].exposed_ns /= (int64_t)k;
	}
}

/* Every rank's collectives into the table, matched by key (re-based by rebases when not NULL). */
static void match_collectives(struct job_report *job, struct member *m, size_t k, struct acc_table *table,
			      const struct lineup_rebase *rebases)
{
	for (size_t i = 0; i < k; i++) {
		struct pass p = { .job = job, .table = table, .rank = i, .s = m[i].s, .max_seq = -1,
				  .rebase = rebases ? &rebases[i] : NULL };
		char why[1024];

		if (rank_summary_collectives(m[i].s, accumulate, &p, why, sizeof(why)) < 0)
			job_note(job, "rank %" PRId64 ": %s; its collectives are matched as far as they go", m[i].rank, why);
	}
}

/* A note for each rank with fewer collectives than the most any rank has, or an incomplete trace
   (in a lined-up job, counted from the first iteration every rank has: those before are noted apart;
   counts: 0 when the ranks' windows share no iteration, and their counts say nothing). */
static void note_short_ranks(struct job_report *job, const struct member *m, size_t k, int counts)
{
	for (size_t i = 0; i < k; i++) {
		int64_t most = 0, own = job->ranks[i].collectives - job->ranks[i].before_common;

		for (size_t j = 0; j < k; j++)
			if (job->ranks[j].collectives - job->ranks[j].before_common > most)
				most = job->ranks[j].collectives - job->ranks[j].before_common;
		if (job->ranks[i].complete && counts && own < most && m[i].s->windows)
			/* a window closes by time: its last step's later collectives may fall after it */
			job_note(job, "rank %" PRId64 "'s window closed %" PRId64 " collective%s before the others' "
				 "(%" PRId64 " where others have %" PRId64 "): a window closes on the host's clock, and GPU "
				 "work of its last step that starts later is left out",
				 job->ranks[i].rank, most - own, most - own == 1 ? "" : "s", own, most);
		else if (!job->ranks[i].complete || (counts && own < most))
			job_note(job, "rank %" PRId64 "'s trace %s: %" PRId64 " collectives where others have %" PRId64
			     "; it is judged as far as it goes", job->ranks[i].rank,
			     job->ranks[i].complete ? "ends early" :
			     *m[i].s->exit_reason ? "is incomplete (the program did not finish writing it)" :
			     "is incomplete (truncated: no trace_complete mark)",
			     own, most);
	}
}

/* The job iteration in words: "step 12", or "iteration #3" when its step number is unknown. */
static const char *iteration_words(const struct job_iteration *ji, char *buf, size_t len)
{
	if (ji->step >= 0)
		snprintf(buf, len, "step %" PRId64, ji->step);
	else
		snprintf(buf, len, "iteration #%" PRId64, ji->index);
	return buf;
}

/* The job's first iteration of member i (-1: it has none). */
static int64_t first_iteration(const struct member *m, int64_t *const *maps, size_t i)
{
	for (size_t it = 0; it < m[i].s->niterations; it++)
		if (maps[i][it] >= 0)
			return maps[i][it];
	return -1;
}

/* A note for each rank of a lined-up job with collectives no other rank has before the first
   iteration they all have whole: its window opened earlier than theirs. */
static void note_unmatched_first(struct job_report *job, const struct member *m, size_t k, int64_t *const *maps)
{
	int64_t latest = -1;
	char at[64], others[64];

	for (size_t i = 0; i < k; i++)
		if (first_iteration(m, maps, i) > latest)
			latest = first_iteration(m, maps, i);
	for (size_t i = 0; i < k && latest >= 0; i++) {
		int64_t first = first_iteration(m, maps, i), n = job->ranks[i].unmatched_first;

		if (!n)
			continue;
		iteration_words(&job->iterations[latest], others, sizeof(others));
		if (first < 0 || first >= latest) {
			job_note(job, "rank %" PRId64 "'s trace holds %" PRId64 " collective%s before the others' first: "
			     "not matched", m[i].rank, n, n == 1 ? "" : "s");
			continue;
		}
		job_note(job, "rank %" PRId64 "'s %s at %s, %" PRId64 " iteration%s before the others' (%s): its first %"
		     PRId64 " collective%s not matched", m[i].rank, m[i].s->windows ? "window opened" : "trace begins",
		     iteration_words(&job->iterations[first], at, sizeof(at)), latest - first,
		     latest - first == 1 ? "" : "s", others, n, n == 1 ? " is" : "s are");
	}
}

/* The note for a lined-up job whose ranks share no whole iteration: each rank's first and last
   iteration (the first four ranks). */
static void note_no_common(struct job_report *job, const struct member *m, size_t k, int64_t *const *maps)
{
	char spans[512] = "", first[64], last[64];
	size_t len = 0;

	for (size_t i = 0; i < k && i < 4 && len < sizeof(spans); i++) {
		int64_t a = first_iteration(m, maps, i), b = -1;

		for (size_t it = 0; it < m[i].s->niterations; it++)
			b = maps[i][it] > b ? maps[i][it] : b;
		if (a < 0)
			continue;
		len += (size_t)snprintf(spans + len, sizeof(spans) - len, "%srank %" PRId64 ": %s to %s",
					len ? "; " : "", m[i].rank,
					iteration_words(&job->iterations[a], first, sizeof(first)),
					iteration_words(&job->iterations[b], last, sizeof(last)));
	}
	job_note(job, "the ranks' windows share no iteration whole (%s%s): no collective can be matched, nor a "
		 "straggler named", spans, k > 4 ? "; ..." : "");
}

/*
 * A lined-up job (lineup.h): each rank's collectives re-based at the first iteration every rank
 * has whole. Returns one re-basing per member (free each, then the array), NULL when the ranks
 * share no iteration.
 */
static struct lineup_rebase *rebase_ranks(struct job_report *job, struct member *m, size_t k, int64_t **maps)
{
	const struct rank_summary **s = summaries_of(m, k);
	size_t *local = xcalloc(k ? k : 1, sizeof(*local));
	struct lineup_rebase *rebases = NULL;
	char err[512];

	job->common_iteration = lineup_common_iteration(job, s, k, maps, local);
	if (job->common_iteration < 0) {
		note_no_common(job, m, k, maps);
		goto out;
	}
	rebases = xcalloc(k ? k : 1, sizeof(*rebases));
	for (size_t i = 0; i < k; i++) {
		if (lineup_rebase_read(&rebases[i], s[i], s[i]->iterations[local[i]].start, err, sizeof(err)) < 0)
			job_note(job, "rank %" PRId64 ": %s", m[i].rank, err);
		job->ranks[i].before_common = rebases[i].before;
	}
out:
	free(local);
	free(s);
	return rebases;
}

/*
 * How the iterations will be lined up: by step number when every rank numbers its iterations
 * alike, else by time (line_up falls back to index without a common clock); and whether the ranks
 * cover different stretches of the run (a rank recorded in capture windows, or, among traces not
 * known to hold the whole run, the first steps differ), which re-bases their collectives.
 */
static void choose_lineup(struct job_report *job, const struct member *m, size_t k)
{
	const struct rank_summary **s = summaries_of(m, k);
	enum rank_steps_from from = lineup_steps_from(s, k);

	int whole = 1;

	job->lineup = from != RANK_STEPS_NONE ? JOB_LINEUP_STEP : JOB_LINEUP_TIME;
	for (size_t i = 0; i < k; i++) {
		job->lined_up |= s[i]->windows > 0;
		whole &= s[i]->whole;
	}
	/* traces known whole hold every collective from the start, whatever step their names begin at */
	job->lined_up |= !whole && from != RANK_STEPS_NONE && lineup_first_steps_differ(s, k);
	job->common_iteration = -1;
	job->step_words = from == RANK_STEPS_NAME	  ? xasprintf("%sN", s[0]->iteration_source)
			  : from == RANK_STEPS_CAPTURE ? xstrdup("counted by gpt-trace run --steps")
						       : xstrdup("");
	free(s);
}

/* Forget the job's iterations and maps, to match them again. */
static void forget_iterations(struct job_report *job, int64_t **maps, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		free(maps[i]);
		maps[i] = NULL;
	}
	free(job->iterations);
	job->iterations = NULL;
	job->niterations = 0;
}

/*
 * Clocks, iterations and, for a lined-up job, the re-basing of each rank's collectives (returned;
 * NULL when none). Traces recorded whole: clocks refined by the collectives, then iterations matched
 * on them. Lined up: the iterations first (by step number, or by time on the anchors alone), the
 * re-basing at their first common one, then the clocks refined by the re-based collectives, and
 * iterations matched by time again on the refined clocks.
 */
static struct lineup_rebase *line_up(struct job_report *job, struct member *m, size_t k, struct acc_table *table,
				     int64_t **maps)
{
	struct lineup_rebase *rebases = NULL;
	size_t *host_of;
	int by_time = 1;

	choose_lineup(job, m, k);
	host_of = clock_anchors(job, m, k, &by_time);
	if (job->lineup == JOB_LINEUP_TIME && !by_time)
		job->lineup = JOB_LINEUP_INDEX;
	if (!job->lined_up) {
		refine_clocks(job, m, k, table, host_of, NULL);
		iterations(job, m, k, maps);
		free(host_of);
		return NULL;
	}
	if (job->lineup == JOB_LINEUP_INDEX)
		job_note(job, "the ranks' iterations have no step numbers and no common clock: matched by their index, "
		     "right only if every rank's window opened at the same step");
	iterations(job, m, k, maps);
	rebases = rebase_ranks(job, m, k, maps);
	if (job->nhosts > 1) {
		refine_clocks(job, m, k, table, host_of, rebases);
		if (job->lineup == JOB_LINEUP_TIME) {
			forget_iterations(job, maps, k);
			iterations(job, m, k, maps);
		}
	}
	free(host_of);
	return rebases;
}

/* The job's digest, and the cross-rank rules' findings on it (a job of one rank has none). */
static void judge_job(struct job_report *job, const struct rule_config *config, size_t k)
{
	struct rule_context ctx = { .config = config, .out = &job->findings };

	for (int t = 0; t < COLLECTIVE_TYPES; t++) {
		job->digest.comm_ns[t] = job->comm[t].ns;
		job->digest.exposed_ns[t] = job->comm[t].exposed_ns;
		job->digest.exposed_transfer_ns[t] = job->comm[t].transfer_ns;
	}
	job->digest.events = job->events;
	job->digest.nevents = job->nevents;
	job->digest.path = job->path.collectives ? &job->path : NULL;
	if (k > 1) {
		straggler_judge(&ctx, &job->digest);
		exposed_communication_judge(&ctx, &job->digest);
		findings_rank(&job->findings);
	}
}

/* Members recorded hours apart: -EINVAL with one line in err (job-check.h), else 0. */
static int members_together(const struct member *m, size_t k, char *err, size_t errlen)
{
	struct job_start *starts = xcalloc(k ? k : 1, sizeof(*starts));
	int apart;

	for (size_t i = 0; i < k; i++)
		starts[i] = (struct job_start){ .name = m[i].s->trace, .wall_ns = m[i].s->wall_ns > 0 ? m[i].s->wall_ns : -1 };
	apart = job_starts_apart(starts, k, err, errlen);
	free(starts);
	return apart ? -EINVAL : 0;
}

int job_merge(const char *const *paths, size_t n, const struct rule_config *config, int force_job,
	      struct job_report **out, char *err, size_t errlen)
{
	struct job_report *job = xcalloc(1, sizeof(*job));
	struct rank_summary *s = xcalloc(n ? n : 1, sizeof(*s));
	struct acc_table table = { 0 };
	struct member *m;
	struct lineup_rebase *rebases;
	int64_t **maps;
	size_t ns, k;

	*out = NULL;
	ns = job_summaries_load(job, paths, n, s);
	if (!ns) {
		snprintf(err, errlen, "no rank trace could be read%s%s", job->nnotes ? ": " : "",
			 job->nnotes ? job->notes[0] : "");
		job_report_free(job);
		free(s);
		return -EINVAL;
	}
	m = job_members_choose(job, s, ns, &k);
	if (!force_job && members_together(m, k, err, errlen) < 0) {
		free(m);
		for (size_t i = 0; i < ns; i++)
			rank_summary_release(&s[i]);
		free(s);
		job_report_free(job);
		return -EINVAL;
	}
	fill_ranks(job, m, k);
	maps = xcalloc(k ? k : 1, sizeof(*maps));
	rebases = line_up(job, m, k, &table, maps);
	if (job->lined_up && !rebases) {
		/* windows that share no whole iteration: any pairing of their collectives is a guess */
		for (size_t i = 0; i < k; i++)
			job->unmatched = sat_add64(job->unmatched, job->ranks[i].collectives);
	} else {
		match_collectives(job, m, k, &table, rebases);
	}
	judge_collectives(job, m, &table, config, maps);
	critical_path(job, m, &table, maps);
	if (rebases)
		note_unmatched_first(job, m, k, maps);
	note_short_ranks(job, m, k, !job->lined_up || rebases);
	judge_job(job, config, k);
	free(table.slots);
	for (size_t i = 0; i < k; i++) {
		job->ranks[i].iteration_of = maps[i];
		if (rebases)
			lineup_rebase_release(&rebases[i]);
	}
	free(rebases);
	free(maps);
	free(m);
	for (size_t i = 0; i < ns; i++)
		rank_summary_release(&s[i]);
	free(s);
	*out = job;
	return 0;
}

void job_report_free(struct job_report *job)
{
	if (!job)
		return;
	for (size_t i = 0; i < job->nranks; i++) {
		free(job->ranks[i].trace);
		free(job->ranks[i].host);
		free(job->ranks[i].iteration_of);
	}
	free(job->ranks);
	for (size_t i = 0; i < job->nnotes; i++)
		free(job->notes[i]);
	free(job->notes);
	for (size_t i = 0; i < job->niterations; i++)
		free(job->iterations[i].cause);
	free(job->iterations);
	free(job->events);
	job_path_release(&job->path);
	free(job->job);
	free(job->step_words);
	findings_release(&job->findings);
	free(job);
}

const char *job_lineup_words(const struct job_report *job, char *buf, size_t len)
{
	if (job->lineup == JOB_LINEUP_STEP)
		snprintf(buf, len, "by step number (%s)", job->step_words);
	else if (job->lineup == JOB_LINEUP_TIME)
		snprintf(buf, len, "by time on the common clock");
	else
		snprintf(buf, len, "by index (no step numbers, no common clock)");
	return buf;
}

const char *job_iteration_name(const struct job_report *job, const struct job_iteration *it, char *buf,
			       size_t len)
{
	if (job->lined_up && it->step >= 0)
		snprintf(buf, len, "step %" PRId64, it->step);
	else
		snprintf(buf, len, "#%" PRId64, it->index);
	return buf;
}

int64_t job_clock_shift(const struct job_report *job, const char *trace_path)
{
	for (size_t i = 0; i < job->nranks; i++)
		if (!strcmp(job->ranks[i].trace, trace_path))
			return job->ranks[i].clock_anchor_ns + job->ranks[i].clock_refine_ns;
	return 0;
}
