/*
 * Allocation calls in the walk's scope and the GPU idle time they cost (private to rules/; used by
 * allocation-churn, host-pinning-in-loop and idle-gaps). One tally lists the calls of either the
 * host-pinning kind (cudaHostAlloc, cudaMallocHost, cudaHostRegister and their frees) or every
 * other call of the allocation family (gaps.h: FAMILY_ALLOCATION), so that the two rules never
 * count one call twice; every tally computes the claims of both kinds alike.
 *
 * What removing the calls saves is modelled as excessive-sync models its drains: time the host
 * spends in allocation calls delays everything it issues next, and cudaFree also synchronizes the
 * device, so once the queue has run dry the host's later time is exposed too. The calls' time
 * since the device last ran without a gap is pending; each host-wait gap (of at least min_gap)
 * takes what it can of it, allocation calls first, pinning next; an operation that starts without
 * a gap (the host is ahead again) clears what is left. The claim is thus never more than the time
 * in the calls, nor more than the idle time that followed them. (A call still running when such an
 * operation starts stays pending: the GPU's timeline lags the host's, and cudaFree waits for the
 * device, so it often ends after later work has started.) Measured on an H100: PyTorch's
 * empty_cache() every step, one cudaMalloc + cudaFree a step (see docs/rules.md).
 */
#ifndef GPT_RULES_ALLOC_TALLY_H
#define GPT_RULES_ALLOC_TALLY_H

#include "analyzer/analysis/gaps.h"
#include "rules/rule-util.h"

/* One call name of one trace. */
struct alloc_name {
	int64_t trace_id;
	char *name;			/* the call's name (a copy) */
	int64_t calls, call_ns;		/* calls in the scope and the time inside them */
	int64_t idle_ns;		/* GPU idle time while the issuing thread was inside them */
	int64_t first, last;		/* first call's start, last call's end */
	int64_t *name_ids;		/* the nameIds it was called by (runtime and driver twins) */
	size_t nname_ids;
};

/* A call whose time is not yet matched with idle time. */
struct alloc_pending {
	int64_t end, ns;
	int pins;
};
#define ALLOC_PENDING_MAX 64

/* One trace: calls and their time ([0] the others, [1] pinning), host-wait idle and the claims. */
struct alloc_trace {
	int64_t trace_id;
	int64_t calls[2], call_ns[2];
	struct alloc_pending pending[ALLOC_PENDING_MAX];	/* oldest first */
	size_t npending;
	int64_t claim[2];		/* host-wait idle time claimed by each kind */
	int64_t host_idle;		/* all host-wait idle time in gaps of at least min_gap */
};

/* What one device's host-wait lost to allocation calls of both kinds (for idle-gaps). */
struct alloc_device {
	struct rule_device key;
	int64_t claim;
};

struct alloc_tally {
	int pinning;			/* 1: names of host-pinning calls; 0: of the others; -1: none */
	int64_t min_gap;
	struct rule_context *ctx;
	struct alloc_name *names;	/* after alloc_tally_finish: most time in the calls first */
	size_t nnames;
	struct alloc_trace *traces;
	size_t ntraces;
	struct key_index device_index;	/* (trace, device) -> devices[] */
	struct alloc_device *devices;
	size_t ndevices;
	char *error;			/* a name lookup that failed during the walk */
};

/* Whether an allocation-family call pins host memory (cudaHostAlloc, cudaMallocHost, ...). */
int alloc_call_pins(const char *name);

/* A tally fed by a visitor of its own (allocation-churn, host-pinning-in-loop). */
void alloc_tally_visitor(struct alloc_tally *tally, int64_t min_gap, struct gap_visitor *visitor);
/* Or by another visitor's callbacks (idle-gaps): every operation (min_gap 0) and the API_ALLOC calls. */
int alloc_tally_gap(const struct gap *gap, void *tally);
void alloc_tally_call(const struct gap_call *call, void *tally);

void alloc_tally_release(struct alloc_tally *tally);

/* The what-if replay's fix for one trace: the tally's calls are not made (NULL: none). */
struct what_if_fix *alloc_tally_fix(const struct alloc_tally *tally, int64_t trace_id);

/*
 * What allocation-churn and host-pinning-in-loop share around their findings. alloc_tally_new() is a
 * rule's begin: a new tally of the pinning calls (pinning 1) or the others (0), fed by the visitor.
 * alloc_tally_report() is its finish: after a walk (walk NULL: it failed), the first name lookup that
 * failed as the rule's error, else report() once per trace with a call of the tally's kind, in trace
 * order, with the names sorted most time in the calls first; it frees the tally either way.
 */
typedef int alloc_report_fn(const struct rule *rule, struct rule_context *ctx,
			    const struct alloc_tally *tally, int64_t trace_id,
			    const struct span_clock *clock, char *err, size_t errlen);
struct alloc_tally *alloc_tally_new(struct rule_context *ctx, int pinning, int64_t min_gap,
				    struct gap_visitor *visitor);
int alloc_tally_report(struct alloc_tally *tally, const struct rule *rule, struct rule_context *ctx,
		       const struct gap_walk *walk, alloc_report_fn *report, char *err, size_t errlen);
/* One evidence line per call name of the trace (with calls per iteration when iterations > 0), and the
 * finding's time range widened to the calls'. */
void alloc_tally_evidence(struct finding *f, const struct alloc_tally *tally, int64_t trace_id,
			  int64_t iterations);
/* The trace's entry (NULL when it made no allocation call), and a device's claim. */
const struct alloc_trace *alloc_tally_trace(const struct alloc_tally *tally, int64_t trace_id);
int64_t alloc_tally_device_claim(const struct alloc_tally *tally, int64_t trace_id, int64_t device);

#endif
