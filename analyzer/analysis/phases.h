/*
 * Where a trace's steady state is, and where its GPU idle time goes.
 *
 * Real programs spend seconds before their loop: imports and model construction (start-up, before
 * the first GPU work), then one-time GPU-side work (warm-up: lazy module loading with each kernel's
 * first launch, JIT and autotuning, allocation growth, communicator set-up). A report about "why is
 * my step slow" must judge the loop, so every trace is split into phases:
 *
 *   start-up   from the trace's first event to its first GPU operation
 *   warm-up    from there to the first steady iteration (iterations that launch kernels never
 *              launched before, or that take more than twice the median, among the first half)
 *   steady     the remaining iterations
 *   tear-down  after the last iteration
 *
 * Iterations are found, in this order: the NVTX ranges named by --step (a POSIX extended regular
 * expression matched against the range text); else the repeating user NVTX range that covers the
 * most time ("step", "train_step", PyTorch's "ProfilerStep#N": trailing digits are ignored, NCCL's
 * own ranges are not candidates); else the period of the repeating kernel sequence (the kernel that
 * recurs at one fixed distance in the launch sequence over the longest stretch), each iteration
 * starting after the idle gap that recurs once per period, else at the optimizer's first kernel,
 * else at the recurring kernel; else none, and the steady state is what follows the last first
 * launch of a kernel (when that lies in the first half of the GPU's active time).
 *
 * An operation belongs to the iteration whose NVTX range was open when its API call was made (the
 * host's view), or, for kernel-sequence iterations, in which it started. Each iteration adds up the
 * device's busy time its operations added (compute kernels, NCCL kernels, copies and memsets) and
 * the idle time before each of them, split by what the issuing host thread did (gaps.h: idle_part),
 * so an iteration's parts add up to its time on the GPU timeline exactly, and every idle ns has one
 * cause.
 */
#ifndef GPT_ANALYSIS_PHASES_H
#define GPT_ANALYSIS_PHASES_H

#include "analyzer/loader/trace.h"

#include <stddef.h>
#include <stdint.h>

enum phase_id {
	PHASE_STARTUP = 0,
	PHASE_WARMUP,
	PHASE_STEADY,
	PHASE_TEARDOWN,
};
#define PHASE_COUNT 4

const char *phase_name(enum phase_id id);	/* "start-up", "warm-up", "steady", "tear-down" */

/* Idle kinds, as gaps.h's enum idle_kind (sync, cuda-call, nvtx-range, host, launch, queued, unknown,
 * profiler). */
#define PHASE_IDLE_KINDS 8
#define PHASE_IDLE_UNKNOWN 6	/* no API record of the launch */
#define PHASE_IDLE_PROFILER 7	/* the profiler's own work: --metrics replay, PROFILER_OVERHEAD */
const char *phase_idle_kind_name(int kind);

/* Idle time of one cause: a kind and what names it (a call, a range; may be NULL). */
struct idle_cause {
	int kind;
	const char *detail;	/* the CUDA call or NVTX range; NULL for host code, launch... */
	const char *range;	/* SYNC and CUDA calls: the innermost NVTX range around the call */
	int64_t ns, count;	/* idle ns, and in how many gaps */
};

/* A cause in words: "blocked in cudaStreamSynchronize (in NVTX range 'step')", "host code outside
 * NVTX ranges"... written into buf, which is returned. */
const char *idle_cause_label(const struct idle_cause *cause, char *buf, size_t len);

/* The time of a stretch split by what the device did. */
struct time_split {
	int64_t compute_ns;	/* kernels other than NCCL's */
	int64_t comm_ns;	/* NCCL kernels (name starts with "nccl") */
	int64_t copy_ns;	/* copies and memsets */
	int64_t idle_ns;
	int64_t idle_kind_ns[PHASE_IDLE_KINDS];
	/* The same time as Holistic Trace Analysis splits it: per category, the union of its operations'
	 * intervals on each device (the parts above attribute overlapping time to whichever started
	 * first). Compute: kernels other than NCCL's; memory: copies and memsets; compute_or_comm: the
	 * union of both, so that compute and communication overlapped for union_compute_ns +
	 * union_comm_ns - union_compute_or_comm_ns. */
	int64_t union_compute_ns, union_comm_ns, union_memory_ns, union_compute_or_comm_ns;
};

/* A split as HTA splits it: compute, communication, memory and idle in % of the split's device
 * time, the comm/comp overlap in % of communication, and overlap_ns the time both ran. */
struct union_shares {
	double compute, comm, memory, idle, overlap;
	int64_t overlap_ns;
};
/* Fill u (overlap_ns always); returns 1 when the split has communication and device time, else 0
 * (the shares are then 0: HTA's split tells nothing ours does not). */
int time_split_union(const struct time_split *s, struct union_shares *u);

struct phase {
	int64_t start, end;		/* on the trace's clock; end == start when the phase is empty */
	char *reason;			/* why it begins and ends there, in words */
	struct time_split split;
	struct idle_cause *causes;	/* largest first */
	size_t ncauses;
};

struct iteration {
	int64_t start, end;		/* on the GPU timeline: from the end of the previous work to the
					   end of its own last operation */
	int64_t host_start, host_end;	/* its NVTX range (NVTX iterations), else start, end */
	int64_t operations, new_kernels;
	struct time_split split;
	const char *top_detail;		/* its largest idle cause: kind and detail */
	int top_kind;
	int64_t top_ns;
	int warmup;
	int64_t step;			/* the number its NVTX range's name ends with (ProfilerStep#12: 12;
					   JAX's "train:#step_num=12#": 12), -1 when none or not from a range */
};

enum iteration_source {
	ITERATIONS_NONE = 0,
	ITERATIONS_STEP,		/* --step */
	ITERATIONS_NVTX,		/* a repeating NVTX range */
	ITERATIONS_KERNELS,		/* the period of the kernel sequence */
};

/* ITERATIONS_KERNELS: where in the period each iteration starts. */
enum iteration_start {
	ITERATION_START_KERNEL = 0,	/* at the recurring kernel (nothing better found) */
	ITERATION_START_GAP,		/* at the first operation after the idle gap that recurs once per
					   period: the host's work between steps (data loading, the optimizer) */
	ITERATION_START_OPTIMIZER,	/* at the optimizer's first kernel */
};

/* One trace's phases and iterations. */
struct trace_phases {
	int64_t trace_id;
	int gpu_work;			/* the trace has GPU operations; without, only start-up is set */
	int windowed; /* recorded in capture windows (analyzer/loader/windows.h) */
	enum iteration_source source;
	char *source_name;		/* the NVTX range's name, or each iteration's first kernel's */
	int64_t period_ops;		/* ITERATIONS_KERNELS: kernels per iteration */
	enum iteration_start start_by;	/* ITERATIONS_KERNELS: how the start was chosen */
	/* ITERATIONS_KERNELS: no recurring gap or optimizer kernel marks the period, nor a multiple
	 * of it: an iteration may be one layer of the program's step. */
	int period_unmarked;
	int64_t period_multiple;	/* > 1: the period is that many repeats of the kernel sequence's
					   own, the multiple a recurring gap marks (identical layers) */
	int64_t start_gap_ns;		/* ITERATION_START_GAP: the recurring gap's median length */
	struct phase phase[PHASE_COUNT];
	struct iteration *iterations;
	size_t niterations;
	size_t first_steady;		/* index of the first steady iteration (== niterations: none) */
	int64_t warmup_until;		/* no iterations: operations starting before it are warm-up */
	/* Steady iterations' time on the GPU timeline: median, 90th percentile. */
	int64_t median_ns, p90_ns;
	size_t slowest[5];		/* indexes of the slowest steady iterations, slowest first */
	size_t nslowest;
};

/* ITERATIONS_KERNELS: how each iteration's start was chosen, in words ("each iteration starts after
 * the idle gap that recurs once per period (median 312.4 us), its first kernel ..."), into buf. */
const char *iteration_start_words(const struct trace_phases *tp, char *buf, size_t len);

/* What the walk saw of one device: its busy time, the union of its operations. */
struct phase_device {
	int64_t trace_id, device;
	int64_t first, last;	/* first operation's start, last one's end */
	int64_t busy_ns, operations;
};

struct phases {
	struct trace_phases *traces;
	size_t ntraces;
	struct phase_device *devices;	/* every device that ran anything, in order of first work */
	size_t ndevices;
	/* Strings that causes and iterations point to (a struct strtab); private. */
	void *strings;
};

/*
 * Split each trace of a (not scoped) trace into phases and iterations; step: --step's regular
 * expression, or NULL for automatic. Returns 0, or a negative error with one line in err (a step
 * expression that does not compile or matches no range with GPU work is an error). Free with
 * phases_free().
 */
int phases_compute(struct trace *trace, const char *step, struct phases **out, char *err, size_t errlen);
/* For a command that computes the phases and then runs the rules (report), called before anything
 * reads the trace: the tables that both walk are read from it once (gap_walk_keep in gaps.h). */
void phases_keep_walk(struct trace *trace);
void phases_free(struct phases *phases);

/* The window [start, end) that holds every trace's steady state (0, 0 when no trace has one). */
void phases_steady_window(const struct phases *phases, int64_t *start, int64_t *end);

#endif
