/*
 * Lining up the ranks of a job whose traces cover different stretches of the run
 * (analyzer/ranks/job.h): a rank recorded in capture windows (gpt-trace run --steps, -c
 * cudaProfilerApi, -c nvtx, --delay, gpt-trace start all) may begin a step earlier or later than
 * the others, so neither the index of its iterations nor the sequence numbers of its collectives,
 * both counted from its trace's start, say which of the others' they are.
 *
 * Iterations are matched by step number when every rank has them (summary.h: the step ranges'
 * names, or --steps A-B). Collectives are re-based: each rank's sequence numbers (per type and
 * stream) count from the first iteration every rank has whole, and its NCCL streams are numbered by
 * first use from there, so that one collective has one key on every rank whatever each window began
 * with. A rank's collectives that no other rank recorded (its window opened earlier) match nothing.
 */
#ifndef GPT_RANKS_LINEUP_H
#define GPT_RANKS_LINEUP_H

#include "analyzer/ranks/job.h"
#include "analyzer/ranks/summary.h"

#include <stddef.h>
#include <stdint.h>

/* Where every one of the k summaries' step numbers come from, when all come from one source;
   RANK_STEPS_NONE when any rank's iterations are not numbered, or the sources differ. */
enum rank_steps_from lineup_steps_from(const struct rank_summary *const *s, size_t k);

/* Whether the k ranks' first step numbers differ (every one numbered). */
int lineup_first_steps_differ(const struct rank_summary *const *s, size_t k);

/*
 * The job's iterations, and maps[i] (allocated: the job iteration of each of rank i's iterations,
 * -1 for none), as job->lineup says. By step number: every step some rank has, in order, steady
 * as on the reference rank (the one with the most iterations) when it has the step, else as on the
 * first rank that has it. By time or index: the reference rank's iterations; each rank's go to the
 * one holding its midpoint on the common clock (job->ranks' corrections), or of its index.
 */
void lineup_iterations(struct job_report *job, const struct rank_summary *const *s, size_t k, int64_t **maps);

/* The first job iteration that each of the k ranks has whole (maps[i] as above: not the first
   iteration of a trace that may not hold the run's start), -1 when none; local[i] gets rank i's
   iteration mapped to it. */
int64_t lineup_common_iteration(const struct job_report *job, const struct rank_summary *const *s, size_t k,
				int64_t *const *maps, size_t *local);

/* One rank's re-basing: per collective type and stream, how many of its collectives come before
   the common iteration; its streams renumbered by first use from there. */
struct lineup_rebase {
	struct lineup_key {
		int type, ordinal;
		int64_t before;
	} *keys;
	size_t nkeys;
	int *ordinals;			/* its stream ordinals, in order of first use from the common
					   iteration (then those used only before it) */
	size_t nordinals;
	int64_t before;			/* collectives before it, every type (point to point left out) */
};

/* Read s's collectives into r: those starting before from (its trace's clock) come before the
   common iteration. Returns 0, or a negative error with one line in err. */
int lineup_rebase_read(struct lineup_rebase *r, const struct rank_summary *s, int64_t from, char *err,
		       size_t errlen);

/*
 * Re-base c (not point to point): its sequence number counted from the common iteration, plus
 * LINEUP_SEQ_BASE (those before it count backward from there, and still match: a window's first
 * collectives are the last ones before, contiguous, as a stream runs them in order and a window
 * keeps what starts in it), and its stream ordinal by first use from there.
 */
#define LINEUP_SEQ_BASE ((int64_t)1 << 46)
void lineup_rebase(const struct lineup_rebase *r, struct rank_collective *c);
void lineup_rebase_release(struct lineup_rebase *r);

#endif
