/*
 * The job's critical path (struct job_path, analyzer/analysis/collectives.h) from its matched
 * collectives: each one as the rank that arrived last saw it, on the job's clock.
 *
 * Every rank leaves a collective together, so the collective's end waited for its last arrival;
 * what that rank did before it arrived is what the others waited for: the window from its previous
 * collective's end, in which its own recorded critical path (analyzer/analysis/what-if.h, summed by
 * part in its summary) says what held it up. Back from the last end, the path takes a collective's
 * own time on the last arrival, that rank's window, then the collective that window began with (the
 * latest that ended by then: collectives that ran beside it on another stream are overlapped and
 * skipped), and so on to the first.
 */
#ifndef GPT_RANKS_JOB_PATH_H
#define GPT_RANKS_JOB_PATH_H

#include "analyzer/analysis/collectives.h"

#include <stddef.h>
#include <stdint.h>

/* A collective's end may read this much later than the window it began lies on another rank's clock
 * (aligned clocks, and ranks leave a collective a few us apart). */
#define JOB_PATH_SKEW_NS 100000

/* One collective of the steady state, as its last arrival saw it, on the job's clock. */
struct job_path_step {
	size_t rank;			/* the last arrival: index in the job's ranks */
	int64_t window_start, start, end;
	int64_t path_ns[WHAT_IF_PARTS];	/* that rank's recorded path in [window_start, start) */
};

/* The path through steps (n, any order: sorted here) into *out, with a row for each of the nranks
 * ranks (rank_numbers: their ranks). Release with job_path_release(). */
void job_path_compute(struct job_path_step *steps, size_t n, const int64_t *rank_numbers, size_t nranks,
		      struct job_path *out);
void job_path_release(struct job_path *path);

/* What the path went through, by rank and part, the collectives' own time and the ranks' windows'
 * communication in one (rank -1, WHAT_IF_COMM), largest first: *n of them (free() the list). */
struct job_path_share {
	int64_t rank;
	enum what_if_part part;
	int64_t ns;
};
struct job_path_share *job_path_shares(const struct job_path *path, size_t *n);

/* Shares named at most, and the least one named (per mille of the path's span). */
#define JOB_PATH_SHOWN 6
#define JOB_PATH_SHOWN_PERMILLE 5

/* "rank 1's host 69.0%, communication 23.0%, ...": the path's largest shares, into buf (returned);
 * *shown_ns: the time they hold. */
const char *job_path_words(const struct job_path *path, char *buf, size_t len, int64_t *shown_ns);

#endif
