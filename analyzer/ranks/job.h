/*
 * The cross-rank view of a job, merged from its ranks' summaries (summary.h): which traces are the
 * job's ranks (and notes on the ones that are not: another job, a rank twice, a rank missing, a
 * trace cut short or unreadable), the clock correction of each rank, per-rank and per-iteration
 * times, the stragglers found by matching each collective across ranks, the communication per
 * collective type, overlapped or exposed, and the critical path across ranks (job-path.h). The
 * cross-rank rules (analyzer/analysis/collectives.h) judge it.
 *
 * Memory grows with the number of ranks plus the number of distinct collectives (one accumulator
 * per matched collective, whatever the rank count; the critical path holds two stretches a
 * collective at most), never with ranks x events: every summary's collectives are streamed from its
 * file, once to refine the clocks across hosts and once to match.
 */
#ifndef GPT_RANKS_JOB_H
#define GPT_RANKS_JOB_H

#include "analyzer/ranks/summary.h"
#include "rules/job-rules.h"
#include "rules/rule.h"

#include <stddef.h>
#include <stdint.h>

struct job_rank {
	int64_t rank;
	char *trace, *host;
	int64_t pid;
	int complete;
	size_t iterations, first_steady;
	int64_t median_iteration_ns;	/* its steady iterations' median (phases) */
	int64_t collectives;
	int64_t clock_anchor_ns;	/* added to its trace times: host clock and wall-clock anchor */
	int64_t clock_refine_ns;	/* then added: from the collectives' common ends (other hosts) */
	int64_t last_at;		/* collectives it arrived last at, with a straggler's delay (steady
					   iterations) */
	int64_t delay_ns;		/* the largest delay per steady iteration it caused, added up */
	int64_t comm_ns, exposed_ns;	/* steady state, every collective type */
	int64_t *iteration_of;		/* the job iteration of each of its iterations, -1 for none */
	int64_t windows;		/* its trace's capture windows (0: recorded whole) */
	int64_t before_common;		/* lined up: its collectives before the first iteration every
					   rank has whole */
	int64_t unmatched_first;	/* lined up: of those, how many no other rank has (its window
					   opened earlier) */
};

struct job_iteration {
	int64_t index;
	int64_t step;			/* its step number when the ranks' iterations are lined up by
					   them, else -1 */
	int steady;
	int64_t time_ns;		/* the slowest rank's */
	int64_t slowest_rank;
	int64_t mean_ns;
	int64_t ranks;			/* ranks that have it */
	int64_t straggler_rank;		/* -1: none */
	int64_t delay_ns, collectives;
	char *cause;
};

struct job_comm {
	int64_t count, ns, exposed_ns, transfer_ns;	/* per rank (mean), steady state */
};

/* How every rank's iterations were matched to the job's. */
enum job_lineup {
	JOB_LINEUP_TIME = 0,		/* by time on the common clock (the iteration holding the midpoint) */
	JOB_LINEUP_INDEX,		/* by index: no common clock (several hosts without anchors) */
	JOB_LINEUP_STEP,		/* by step number: every rank numbers its iterations (summary.h) */
};

struct job_report {
	struct job_rank *ranks;		/* by rank */
	size_t nranks;
	int64_t world_size;		/* as recorded; -1 when no trace recorded one */
	char *job;			/* the job id, "" when not recorded */
	size_t nhosts;
	int ranks_from_processes;	/* no rank recorded: one rank per process by host and pid */
	char **notes;			/* what was left out, or could not be judged, and why */
	size_t nnotes;
	struct job_iteration *iterations;
	size_t niterations;
	enum job_lineup lineup;
	char *step_words;		/* JOB_LINEUP_STEP: where the numbers are ("ProfilerStep#N"), else "" */
	/* The ranks' traces cover different stretches of the run (a rank recorded in capture windows,
	   or, among traces not known to hold the whole run, their first steps differ): each rank's
	   collectives were re-based at the first iteration every rank has (common_iteration), and the
	   report says how the iterations were lined up. Traces recorded whole are matched as they
	   always were. */
	int lined_up;
	int64_t common_iteration;	/* -1: none (or not lined_up) */
	int64_t median_iteration_ns, slowest_rank;
	int64_t matched;		/* collectives matched across at least two ranks */
	int64_t unmatched;		/* collectives only one rank ran (or point-to-point) */
	struct job_comm comm[COLLECTIVE_TYPES];
	struct straggler_event *events;	/* iterations with a straggler, largest delay first */
	size_t nevents;
	struct job_path path;		/* the critical path across ranks (job-path.h) */
	struct job_digest digest;
	struct findings findings;	/* the cross-rank rules', ranked */
};

/*
 * Merge the summaries (paths of summary files, any order) into a job report, and judge it with the
 * cross-rank rules under config (NULL: defaults). A failure to read every summary is an error, and
 * so are ranks recorded an hour or more apart unless force_job (analyzer/loader/job-check.h:
 * nothing else may tell that they are different runs); any single bad one becomes a note, and one
 * of another job (job id, world size) is left out with a note. Free with job_report_free().
 */
int job_merge(const char *const *summaries, size_t n, const struct rule_config *config, int force_job,
	      struct job_report **out, char *err, size_t errlen);
void job_report_free(struct job_report *job);

/* How the iterations were lined up, in words ("by step number (ProfilerStep#N)", "by time on the
   common clock", "by index (no step numbers, no common clock)"), into buf, which is returned. */
const char *job_lineup_words(const struct job_report *job, char *buf, size_t len);
/* A job iteration's name: "step 12" when the report names it by its step number (a lined-up job
   whose iterations have them), else "#3" (its index); into buf, which is returned. */
const char *job_iteration_name(const struct job_report *job, const struct job_iteration *it, char *buf,
			       size_t len);

/* The shift that puts trace_path's times on the job's clock; 0 for a trace that is no rank of it. */
int64_t job_clock_shift(const struct job_report *job, const char *trace_path);

#endif
