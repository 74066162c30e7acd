/*
 * Per-rank summaries: what the cross-rank report needs from one rank's trace, computed once, in a
 * small text file beside the trace (TRACE.summary), so that a job of any number of ranks is merged
 * without opening every trace together (SQLite attaches at most ~10) or holding every rank's
 * events.
 *
 * A summary holds the rank's identity (rank, world size, host, pid, launcher, job id), its clock
 * anchor (trace time 0 on the host's clock and on the wall clock), whether the trace is complete,
 * its iterations (analyzer/analysis/phases.h), its communication per collective type in the steady
 * state, and one line per NCCL collective (analyzer/analysis/collectives.h): type, stream ordinal
 * and sequence number (the matching key), times, overlap, and what filled the window before it.
 * Collectives come last, so a reader takes the header alone and streams the collectives only when
 * it merges them.
 *
 * Summaries are made in parallel by forked workers (so that nothing in the loader or the walk has
 * to be thread-safe, and a trace that crashes one costs that worker's traces their summaries, which
 * the merge then notes), or one per process under an MPI or Slurm launcher (gpt-trace summarize
 * --launcher): see docs/multi-rank.md.
 *
 * Format (one record per line, fields separated by one space, text fields last on their line):
 *   gpt-trace-rank-summary 3
 *   source SIZE MTIME_NS PATH
 *   step REGEX                                  (--step, "-" for none)
 *   error MESSAGE                               (the trace could not be read; nothing else follows)
 *   rank RANK LOCAL_RANK WORLD_SIZE PID FORMAT COMPLETE
 *   host TEXT / launcher TEXT / job TEXT / exit TEXT
 *   clock ORIGIN_NS WALL_NS HAS_ANCHOR
 *   capture WINDOWS STEPS_FROM WHOLE            (capture windows; where step numbers come from;
 *                                                whether it is known to hold the whole run)
 *   iterations N FIRST_STEADY MEDIAN_NS SOURCE
 *   i START END WARMUP STEP                     (N lines; STEP -1: unknown)
 *   comm TYPE COUNT NS OVERLAP_NS               (steady state)
 *   k NAME_ID TEXT                              (names of the windows' longest kernels)
 *   collectives N
 *   c TYPE ORDINAL SEQ START END ITER OVERLAP COMPUTE COPY IDLE LONGEST_NS NAME_ID WINDOW_START
 *     HOST_NS COMPUTE_NS COMM_NS COPY_NS LAUNCH_NS                   (N lines, one each; the last five:
 *                                                the rank's recorded critical path in the window
 *                                                before the collective, by part: what-if.h)
 *   end
 */
#ifndef GPT_RANKS_SUMMARY_H
#define GPT_RANKS_SUMMARY_H

#include "analyzer/analysis/collectives.h"
#include "analyzer/analysis/what-if.h"

#include <stddef.h>
#include <stdint.h>

/* The format's version goes up whenever a summary's meaning changes, not only its layout: version 2
 * came with the phases' new warm-up (iterations that run one-time kernels), so a summary cached by
 * an older build, whose steady state differs, is made again; version 3 with step numbers and capture
 * windows, by which the merge lines up ranks whose traces cover different steps; version 4 with the
 * window before each collective and the rank's critical path in it (the job's critical path). */
#define RANK_SUMMARY_PREFIX "gpt-trace-rank-summary "
#define RANK_SUMMARY_MAGIC RANK_SUMMARY_PREFIX "4"
#define RANK_SUMMARY_SUFFIX ".summary"

struct rank_iteration {
	int64_t start, end;		/* on the trace's clock */
	int warmup;
	int64_t step;			/* its step number (steps_from), -1 when unknown */
};

/* Where a summary's step numbers come from: every iteration has one, in increasing order, or none has. */
enum rank_steps_from {
	RANK_STEPS_NONE = 0,
	RANK_STEPS_NAME,		/* the step ranges' names end in it (ProfilerStep#12) */
	RANK_STEPS_CAPTURE,		/* gpt-trace run --steps A-B: the window's first step is A, counted from 1 */
};

struct rank_summary {
	char *path;			/* the summary file */
	char *trace;			/* the trace it summarizes */
	char *error;			/* the trace could not be summarized: why; NULL when it was */
	int64_t rank, local_rank, world_size;	/* -1: not recorded */
	int64_t pid;
	int format;			/* enum trace_format */
	int complete;			/* the writer finished the trace (GPT_META trace_complete) */
	char *host, *launcher, *job, *exit_reason;	/* "" when not recorded */
	int64_t origin_ns;		/* trace time 0 on the host's clock */
	int64_t wall_ns;		/* trace time 0 on the wall clock (UTC ns) */
	int has_anchor;
	size_t windows;			/* capture windows (GPT_CAPTURE_WINDOWS) */
	int whole;			/* known to hold the whole run: written by gpt-trace run without
					   windows (not an import, whose profiler may have kept some steps,
					   nor an nsys export) */
	enum rank_steps_from steps_from;
	char *iteration_source;		/* what its iterations are ("ProfilerStep#", a kernel's name), "" */
	struct rank_iteration *iterations;
	size_t niterations, first_steady;
	int64_t median_ns;
	int64_t comm_count[COLLECTIVE_TYPES], comm_ns[COLLECTIVE_TYPES], overlap_ns[COLLECTIVE_TYPES];
	struct { int64_t id; char *text; } *names;
	size_t nnames;
	size_t ncollectives;
	long collectives_at;		/* file offset of the first collective line */
};

/* One collective line. */
struct rank_collective {
	int type, ordinal;
	int64_t seq, start, end, iteration;
	int64_t overlap_ns, compute_ns, copy_ns, idle_ns, longest_ns, name_id;
	int64_t window_start;			/* the window before it: from the rank's previous collective */
	int64_t path_ns[WHAT_IF_PARTS];		/* the rank's recorded critical path in that window, by
						   part; all 0 outside its replayed steady state */
};

/* Where the summary of trace_path goes: TRACE.summary. Free the result. */
char *rank_summary_path(const char *trace_path);

/*
 * Summarize one trace into summary_path (written to a temporary name, then renamed). step: --step's
 * expression or NULL. A trace that cannot be read still gets a summary, with its error line: the
 * merge notes it and goes on. Returns 0, or a negative error with one line in err when the summary
 * itself cannot be written.
 */
int rank_summary_write(const char *trace_path, const char *summary_path, const char *step, char *err,
		       size_t errlen);

/* Whether summary_path is a summary of trace_path as it is now (size and modification time), made
   with the same --step (NULL: none). */
int rank_summary_fresh(const char *trace_path, const char *summary_path, const char *step);

/*
 * Summarize paths[i] into out_paths[i] with up to jobs worker processes, skipping fresh ones.
 * Returns 0, or a negative error with one line in err (a worker that could not write).
 */
int rank_summaries_make(const char *const *paths, const char *const *out_paths, size_t n, int jobs,
			const char *step, char *err, size_t errlen);

/* Read a summary's header (everything but the collectives). Release with rank_summary_release(). */
int rank_summary_load(const char *path, struct rank_summary *out, char *err, size_t errlen);
void rank_summary_release(struct rank_summary *summary);
const char *rank_summary_name(const struct rank_summary *summary, int64_t name_id);

/* Stream a loaded summary's collectives to fn (which returns non-zero to stop). Returns 0, or a
   negative error with one line in err (a truncated or damaged file). */
int rank_summary_collectives(const struct rank_summary *summary,
			     int (*fn)(const struct rank_collective *c, void *arg), void *arg, char *err,
			     size_t errlen);

/* Whether the traces look like the ranks of one job: each records a rank, or each ran NCCL kernels
   (one rank per process). */
int rank_traces_are_job(const char *const *paths, size_t n);

#endif
