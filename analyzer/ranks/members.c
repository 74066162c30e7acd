/*
 * The ranks of a job among its summaries (job-private.h): the summaries read, the job id and
 * world size most of them record, the ones left out (another job, a rank given twice, no rank
 * recorded among ranked ones), the ranks missing; and the notes that say so.
 */
#define _GNU_SOURCE /* vasprintf */
#include "analyzer/ranks/job-private.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void job_note(struct job_report *job, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	job->notes = xrealloc(job->notes, (job->nnotes + 1) * sizeof(*job->notes));
	job->notes[job->nnotes++] = s;
}

static int member_by_rank(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;

	return (a->rank > b->rank) - (a->rank < b->rank);
}

static int member_by_host_pid(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;
	int c = strcmp(a->s->host, b->s->host);

	if (c)
		return c;
	if (a->s->pid != b->s->pid)
		return (a->s->pid > b->s->pid) - (a->s->pid < b->s->pid);
	return strcmp(a->s->trace, b->s->trace);
}

/* The value most summaries share (ties: the first seen). */
static const char *majority_text(struct rank_summary *s, size_t n, const char *(*get)(const struct rank_summary *))
{
	const char *best = NULL;
	size_t best_n = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		for (size_t j = 0; j < n; j++)
			k += !strcmp(get(&s[i]), get(&s[j]));
		if (k > best_n)
			best = get(&s[i]), best_n = k;
	}
	return best;
}

static const char *get_job(const struct rank_summary *s)
{
	return s->job;
}

/* The world size most summaries record (ties: the first seen). */
static int64_t majority_world(struct rank_summary *s, size_t n)
{
	int64_t best = -1;
	size_t best_n = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		for (size_t j = 0; j < n; j++)
			k += s[i].world_size == s[j].world_size;
		if (k > best_n)
			best = s[i].world_size, best_n = k;
	}
	return best;
}

struct member *job_members_choose(struct job_report *job, struct rank_summary *s, size_t n, size_t *nmembers)
{
	struct member *m = xcalloc(n ? n : 1, sizeof(*m));
	size_t k = 0, ranked = 0;
	char *job_id;

	for (size_t i = 0; i < n; i++)
		ranked += s[i].rank >= 0;
	job_id = xstrdup(majority_text(s, n, get_job) ? majority_text(s, n, get_job) : "");
	job->job = xstrdup(job_id);
	job->world_size = majority_world(s, n);
	for (size_t i = 0; i < n; i++) {
		if (ranked && s[i].rank < 0) {
			job_note(job, "'%s' left out: it records no rank, the other traces do", s[i].trace);
			continue;
		}
		if (strcmp(s[i].job, job_id)) {
			job_note(job, "'%s' left out: it is from another job (job id '%s', this job's '%s')", s[i].trace,
			     s[i].job, job_id);
			continue;
		}
		if (s[i].world_size != job->world_size) {
			job_note(job, "'%s' left out: it is from another job (world size %" PRId64 ", this job's %" PRId64 ")",
			     s[i].trace, s[i].world_size, job->world_size);
			continue;
		}
		m[k].s = &s[i];
		m[k].rank = s[i].rank;
		k++;
	}
	if (ranked) {
		size_t out = 0;

		qsort(m, k, sizeof(*m), member_by_rank);
		for (size_t i = 0; i < k; i++) {
			if (out && m[out - 1].rank == m[i].rank) {
				job_note(job, "rank %" PRId64 " given twice ('%s' and '%s'): traces of different runs? keeping "
				     "the first", m[i].rank, m[out - 1].s->trace, m[i].s->trace);
				continue;
			}
			m[out++] = m[i];
		}
		k = out;
	} else {
		qsort(m, k, sizeof(*m), member_by_host_pid);
		for (size_t i = 0; i < k; i++)
			m[i].rank = (int64_t)i;
		job->ranks_from_processes = 1;
		if (k)
			job_note(job, "no trace records its rank: one rank per process, numbered by host and pid");
	}
	if (job->world_size > 0 && ranked) {
		char missing[512] = "";
		size_t len = 0, nmissing = 0;

		for (int64_t r = 0, i = 0; r < job->world_size; r++) {
			while ((size_t)i < k && m[i].rank < r)
				i++;
			if ((size_t)i < k && m[i].rank == r)
				continue;
			nmissing++;
			if (len < sizeof(missing) - 32)
				len += (size_t)snprintf(missing + len, sizeof(missing) - len, "%s%" PRId64,
							len ? ", " : "", r);
		}
		if (nmissing)
			job_note(job, "%zu of %" PRId64 " ranks missing (rank%s %s%s): no trace given; the others are "
			     "compared without them", nmissing, job->world_size, nmissing > 1 ? "s" : "", missing,
			     len >= sizeof(missing) - 32 ? ", ..." : "");
	}
	free(job_id);
	*nmembers = k;
	return m;
}

size_t job_summaries_load(struct job_report *job, const char *const *paths, size_t n, struct rank_summary *s)
{
	size_t ns = 0;

	for (size_t i = 0; i < n; i++) {
		char why[1024];

		if (rank_summary_load(paths[i], &s[ns], why, sizeof(why)) < 0) {
			job_note(job, "%s: left out", why);
			rank_summary_release(&s[ns]);
			continue;
		}
		if (s[ns].error) {
			job_note(job, "'%s' left out: %s", s[ns].trace, s[ns].error);
			rank_summary_release(&s[ns]);
			continue;
		}
		ns++;
	}
	return ns;
}

