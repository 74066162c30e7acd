/*
 * What the merge of rank summaries (job.c) shares with the choice of the job's ranks (members.c):
 * the members, and the notes on what was left out. Private to ranks/.
 */
#ifndef GPT_RANKS_JOB_PRIVATE_H
#define GPT_RANKS_JOB_PRIVATE_H

#include "analyzer/ranks/job.h"
#include "analyzer/ranks/summary.h"

#include <stddef.h>
#include <stdint.h>

/* The summaries that are ranks of the job, in rank order. */
struct member {
	struct rank_summary *s;
	int64_t rank;
};

/* One more note on the job: what was left out, or could not be judged, and why. */
void job_note(struct job_report *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Read every summary of paths into s, noting those left out; returns how many were read. */
size_t job_summaries_load(struct job_report *job, const char *const *paths, size_t n, struct rank_summary *s);

/* Choose the job's ranks among the n readable summaries (sets job->job and world_size), noting
   every one left out; in rank order (or by host and pid, numbered, when none records its rank).
   Returns them (free it), their count in *nmembers. */
struct member *job_members_choose(struct job_report *job, struct rank_summary *s, size_t n, size_t *nmembers);

#endif
