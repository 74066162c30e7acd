/*
 * What-if replay of a trace's steady state: the steady iterations' host calls and GPU operations as
 * a graph of the constraints that timed them, replayed with fixes applied, so that savings compose.
 *
 * The graph, read once per trace (what_if_load):
 *   - each host thread's calls in order, with the host time between them (the program's own work);
 *   - each GPU operation's launch by its call (correlation id), its stream's previous operation, and
 *     a dependency on another stream of the device when an operation started within WHAT_IF_DEP_NS
 *     of one there ending, launched before it (an event the stream waited on);
 *   - each blocking call (a synchronize, a copy without "Async") and the operation it waited for:
 *     the one launched before the call whose end is the latest inside the call; any other call
 *     that returned within WHAT_IF_WAIT_NS of such an end after taking at least that long waited
 *     too (a copy from pageable memory, a launch into a full queue);
 *   - a thread that waited for another without a CUDA call: its call after a long gap that starts
 *     soon after a call of the other thread ended (WHAT_IF_GAP_NS, WHAT_IF_WAKE_NS).
 * Every operation records which of its constraints bound its start (the one it started least after)
 * and by how much; every blocking call how long it took after the operation it waited for. Replayed
 * as recorded, the graph gives back the measured times exactly; a fix changes durations (kernels
 * shortened, copies at the pinned bandwidth) or removes constraints (a call that no longer waits, a
 * call that is no longer made), and the replay moves everything after it as the constraints say.
 *
 * What it does not model: host threads waiting for each other in other ways than that one (a
 * thread's own time stays what it was), a launch queue that fills up only after a fix (a launch that did not
 * wait keeps its time), and other ranks (a collective's kernel keeps its duration, waiting
 * included).
 */
#ifndef GPT_ANALYSIS_WHAT_IF_H
#define GPT_ANALYSIS_WHAT_IF_H

#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/phases.h"

#include <stddef.h>
#include <stdint.h>

/* An operation starting this soon after one on another stream ended may have waited for it. */
#define WHAT_IF_DEP_NS 5000
/* A call of at least this long that returned at most this long after an operation ended waited for
 * it, whatever its name (a copy from pageable memory, a launch into a full queue). */
#define WHAT_IF_WAIT_NS 20000
/* A call after a gap of at least WHAT_IF_GAP_NS on its thread, starting at most WHAT_IF_WAKE_NS (and
 * half the gap) after a call of another thread ended in that gap, waited for that thread: PyTorch's
 * autograd thread starts the backward pass about 350 us after the main thread's last forward call,
 * the main thread goes on about 250 us after the backward pass's last (measured on an H100). */
#define WHAT_IF_GAP_NS 100000
#define WHAT_IF_WAKE_NS 1000000
/* The graph's size bound: past this many calls the window ends at the next steady iteration (the
 * replay's numbers are per iteration); about 250 bytes a call and its operation. */
#define WHAT_IF_MAX_CALLS 400000
/* A CUDA graph's kernel nodes on one stream start this long after the previous one ends (96-128 ns
 * in tests/fixtures/gpu/graph.sqlite, an H200; 4.5 us between its graph launches). */
#define WHAT_IF_GRAPH_NODE_NS 100
/* Host time between two launches that a graph takes away: the launch path's (PyTorch's dispatch
 * between tiny ops is 5-20 us). A longer gap is the program's own work, which stays, and the launch
 * after it begins another graph launch. */
#define WHAT_IF_GRAPH_GAP_NS 20000
/* Host time before the launch of a kernel that a fix removes (factor 0), up to this long since its
 * thread's previous call, was spent preparing it and goes with it; a longer gap is the program's own
 * work. cuDNN's NCHW<->NHWC conversions in resnet50 training (H200, tests/fixtures/gpu/advice): 17 us
 * on average before each launch, 99% of them within 100 us; channels_last took 5.5 ms of a 24 ms
 * traced step away, most of it host time. */
#define WHAT_IF_REMOVED_GAP_NS WHAT_IF_GAP_NS

enum what_if_kind {
	WHAT_IF_KERNELS,	/* the named kernels of one device run factor times as long (or each
				   its own factor) */
	WHAT_IF_NO_WAIT,	/* the named blocking calls return without waiting for the GPU */
	WHAT_IF_PINNED,		/* copies from or to pageable memory of one device run at factor bytes/ns,
				   without their staging, and their calls no longer wait for them */
	WHAT_IF_NO_CALL,	/* the named calls are not made (allocations moved out of the loop) */
	WHAT_IF_GRAPH,		/* the named kernels of one device are captured in a CUDA graph: a run of
				   launch calls of theirs on a thread, at most WHAT_IF_GRAPH_GAP_NS apart,
				   costs its first call alone (the graph's launch), without the host's time
				   between them, and each kernel starts WHAT_IF_GRAPH_NODE_NS after its
				   stream's previous operation */
};

/* A fix as the replay applies it; a finding carries at most one (rules/rule.h). */
struct what_if_fix {
	enum what_if_kind kind;
	int64_t trace_id;
	int64_t device;			/* -1: every device (calls are not a device's) */
	int64_t *name_ids;		/* kernels' or calls' nameIds, sorted; none: every blocking call
					   (WHAT_IF_NO_WAIT) or copy (WHAT_IF_PINNED) */
	size_t nnames;
	double factor;
	double *factors;		/* WHAT_IF_KERNELS: each name's own factor, by name_ids; NULL:
					   factor for all */
	int at_most;			/* the fix as its rule bounds it: what it saves at most (small-grid
					   cannot tell work that does not split) */
};

/* A fix with names (copied and sorted); free with what_if_fix_free(). */
struct what_if_fix *what_if_fix_new(enum what_if_kind kind, int64_t trace_id, int64_t device,
				    const int64_t *name_ids, size_t nnames, double factor);
/* A WHAT_IF_KERNELS fix whose kernels each have a factor of their own (factors[i] for
 * name_ids[i]; copied and sorted together); free with what_if_fix_free(). */
struct what_if_fix *what_if_fix_new_each(int64_t trace_id, int64_t device, const int64_t *name_ids,
					 const double *factors, size_t nnames);
void what_if_fix_free(struct what_if_fix *fix);

/* What the replayed steady state's critical path went through, in ns of the replayed window. */
enum what_if_part {
	WHAT_IF_HOST,		/* the host: its own code between calls, and the calls */
	WHAT_IF_COMPUTE,	/* kernels other than NCCL's */
	WHAT_IF_COMM,		/* NCCL kernels */
	WHAT_IF_COPY,		/* copies and memsets */
	WHAT_IF_LAUNCH,		/* an operation waiting for its launch, or its stream's previous one */
	WHAT_IF_PARTS
};
const char *what_if_part_name(enum what_if_part part);	/* "host", "launch and queue", ... */
const char *what_if_part_id(enum what_if_part part);	/* "host", "launch", ...: JSON keys */
/* The part with the most time in part_ns (the first of equals); WHAT_IF_PARTS when none has any. */
enum what_if_part what_if_largest_part(const int64_t part_ns[WHAT_IF_PARTS]);

struct what_if_result {
	int64_t window_ns;		/* the replayed steady state, first call to last end */
	int64_t part_ns[WHAT_IF_PARTS];	/* its critical path, by part */
	int64_t top_stream;		/* the stream the path spent most GPU time on; -1: none */
};

/* A stretch of the critical path: [start, end) spent in part, on stream (kernels and copies; -1 else). */
struct what_if_segment {
	int64_t start, end;
	enum what_if_part part;
	int64_t stream;
};

struct what_if;

/*
 * Read trace tp->trace_id's steady iterations (tp's first steady one to its last, or as many as
 * WHAT_IF_MAX_CALLS calls hold: what_if_iterations() says how many). Returns 0 with
 * *out set, 1 with *out NULL when the trace has no steady iterations or no calls in them, or a
 * negative error with one line in err.
 */
int what_if_load(const struct analysis_context *a, const struct trace_phases *tp, struct what_if **out,
		 char *err, size_t errlen);
/* The replay with fixes applied (those of other traces are ignored); n 0: the graph as recorded. */
void what_if_replay(struct what_if *w, const struct what_if_fix *const *fixes, size_t n,
		    struct what_if_result *out);
/* The critical path of the graph as recorded, in time order, adjacent stretches of one part and stream
 * merged: *out (free() it) and *n. */
void what_if_critical_path(struct what_if *w, struct what_if_segment **out, size_t *n);
/* What the path of segs (n stretches in time order, as what_if_critical_path gives them) spent in
 * [from, to), by part, added to part_ns; returns the ns of that window it covers (the path covers
 * the replayed window, first call to last end, and nothing outside it). */
int64_t what_if_path_parts(const struct what_if_segment *segs, size_t n, int64_t from, int64_t to,
			   int64_t part_ns[WHAT_IF_PARTS]);
int64_t what_if_measured(const struct what_if *w);	/* the measured window */
size_t what_if_iterations(const struct what_if *w);	/* steady iterations in it */
int64_t what_if_trace(const struct what_if *w);
void what_if_free(struct what_if *w);

#endif
