/*
 * NCCL collectives of one trace, and the digest of a whole job that the cross-rank rules judge.
 *
 * collectives_read() finds every NCCL kernel of one trace
 * ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ncclKernel_AllGather_..."), names its collective and
 * gives each the key the cross-rank merge matches on. NCCL 2.19 and later specialize kernels only
 * for some algorithm/protocol pairs (LL); the others run in "ncclDevKernel_Generic" (_1, _2, _4),
 * whose name says nothing of the collective: that one is named by NCCL's own NVTX range
 * ("ncclAllReduce"...) around the kernel's launch call on the same host thread, else it stays
 * "Other" (and is still matched: every rank runs a collective with the same kernel, as NCCL's
 * algorithm choice is the same on every rank). The key: its NCCL stream's ordinal on that rank and
 * its sequence number among collectives of its type on that stream. With it, what the device did
 * while the collective ran (compute or copies on other streams: the communication is overlapped)
 * and in the window before it, from the end of the rank's previous collective (compute, copies,
 * idle device, the longest compute kernel): what a rank that arrives late did differently.
 *
 * The job digest (struct job_digest) is filled by the merge of the per-rank summaries (ranks/) and
 * handed to the two rules that need every rank: straggler and exposed-communication
 * (rules/job-rules.h).
 */
#ifndef GPT_ANALYSIS_COLLECTIVES_H
#define GPT_ANALYSIS_COLLECTIVES_H

#include "analyzer/analysis/what-if.h"
#include "analyzer/loader/trace.h"

#include <stddef.h>
#include <stdint.h>

enum collective_type {
	COLLECTIVE_ALLREDUCE = 0,
	COLLECTIVE_ALLGATHER,
	COLLECTIVE_REDUCESCATTER,
	COLLECTIVE_BROADCAST,
	COLLECTIVE_REDUCE,
	COLLECTIVE_ALLTOALL,
	COLLECTIVE_SENDRECV,		/* point to point: not every rank takes part, never matched */
	COLLECTIVE_OTHER,		/* an NCCL kernel whose collective neither its name nor an NVTX
					   range tells (a generic kernel launched in ncclGroupEnd) */
};
#define COLLECTIVE_TYPES 8

/* "AllReduce", "AllGather"...; NULL out of range. */
const char *collective_type_name(int type);
/* The collective an NCCL kernel name runs, or -1 when the name is not NCCL's. */
int collective_type_of(const char *kernel_name);
/* The collective of an NCCL API range ("ncclAllReduce", "ncclSend"...), or -1. */
int collective_type_of_range(const char *nvtx_text);

struct collective {
	int type;
	int stream_ordinal;		/* the rank's n-th NCCL stream, in order of first use */
	int64_t seq;			/* the n-th collective of this type on that stream, from 0 */
	int64_t device;
	int64_t start, end;		/* on the trace's clock */
	int64_t overlap_ns;		/* of [start, end): time compute or copies ran on the device */
	/* The window from the end of the rank's previous collective (any NCCL stream) to start. */
	int64_t window_start;
	int64_t compute_ns, copy_ns;	/* busy time of compute kernels and of copies/sets in it */
	int64_t idle_ns;		/* the device ran nothing: the host was late */
	int64_t longest_ns;		/* the longest compute kernel that started in it */
	int64_t longest_name;		/* its nameId (collectives_kernel_name()); -1: none */
};

struct trace_collectives {
	struct collective *items;	/* in order of start */
	size_t count;
	struct collective_name *names;	/* private: nameId -> text of the longest kernels */
	size_t nnames;
};

/*
 * Read the collectives of trace trace_id (in the trace's current scope). Returns 0, or a negative
 * error with one line in err. Release with collectives_release().
 */
int collectives_read(struct trace *trace, int64_t trace_id, struct trace_collectives *out, char *err,
		     size_t errlen);
void collectives_release(struct trace_collectives *list);
/* A longest_name's text ("" when unknown); owned by list. */
const char *collectives_kernel_name(const struct trace_collectives *list, int64_t name_id);

/* One iteration of the job with a rank that the others waited for. */
struct straggler_event {
	int64_t iteration;		/* index among the job's iterations */
	int64_t step;			/* its step number, when the report names iterations by it; -1 */
	int64_t rank;
	int64_t delay_ns;		/* how long the others waited for it at its latest collective */
	int64_t collectives;		/* how many collectives of the iteration it arrived last at */
	const char *cause;		/* what it did differently, in words */
	int steady;			/* the iteration is in the steady state (the rules judge only those) */
};

/* One rank on the job's critical path. */
struct job_path_rank {
	int64_t rank;
	int64_t collectives;		/* the path went through the window before these (it arrived last) */
	int64_t part_ns[WHAT_IF_PARTS];	/* its recorded critical path in those windows (what-if.h) */
};

/*
 * The job's critical path over its steady state (analyzer/ranks/job-path.h): back from the last
 * collective's end, through each collective's own time on the rank that arrived last, then through
 * that rank's own critical path in the window before it (its previous collective's end to its
 * arrival), to the collective that window began with. A rank that keeps the others waiting is on
 * it with whatever held it up: its host code, a kernel, a copy.
 */
/* A stretch of the job's critical path, on the job's clock: a rank's window before a collective it
 * arrived last at (part: the largest in its path there; WHAT_IF_PARTS: none, outside its replayed
 * steady state), or a collective's own time (rank -1, part WHAT_IF_COMM). */
struct job_path_stretch {
	int64_t start, end;
	int64_t rank;
	enum what_if_part part;
};

struct job_path {
	int64_t span_ns;		/* what it covers: the first window's start to the last collective's end */
	int64_t comm_ns;		/* the collectives themselves, on the rank that arrived last */
	int64_t unknown_ns;		/* windows outside a rank's replayed steady state, and time between
					   collectives that is no window of the path (point to point) */
	int64_t collectives;
	struct job_path_rank *ranks;	/* every rank of the job, in rank order */
	size_t nranks;
	struct job_path_stretch *stretches;	/* in time order, two per collective at most */
	size_t nstretches;
};

/* What the merge of every rank's summary hands to the cross-rank rules. */
struct job_digest {
	size_t nranks;
	int64_t iterations;		/* iterations matched across ranks */
	int64_t median_iteration_ns;	/* the job's steady iterations (slowest rank of each) */
	int64_t steady_ns;		/* the job's steady state: the sum of its iterations */
	const struct straggler_event *events;	/* iterations with a straggler, largest delay first */
	size_t nevents;
	/* Communication per collective type in the steady state, mean over ranks. */
	int64_t comm_ns[COLLECTIVE_TYPES];
	int64_t exposed_ns[COLLECTIVE_TYPES];	/* nothing else ran on the device */
	/* The exposed time of the rank that arrived last at each collective (it waited for no one):
	   the transfers themselves, not waiting for a late rank. */
	int64_t exposed_transfer_ns[COLLECTIVE_TYPES];
	const struct job_path *path;	/* its critical path; NULL: none (no steady collective) */
};

#endif
