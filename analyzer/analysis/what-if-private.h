/*
 * The what-if replay's graph (what-if.h), shared by the replay (what-if.c) and the reading of a
 * trace's steady state into it (what-if-load.c). Private to those two files.
 */
#ifndef GPT_ANALYSIS_WHAT_IF_PRIVATE_H
#define GPT_ANALYSIS_WHAT_IF_PRIVATE_H

#include "analyzer/analysis/what-if.h"

#include <stddef.h>
#include <stdint.h>

enum op_kind { OP_KERNEL, OP_COPY, OP_SET };

/* What bound an operation's start, or a call's end. */
enum bound_by {
	BY_NONE,	/* recorded times kept: outside the replayed window */
	BY_THREAD,	/* a call: its thread's previous call (the host's own time between them) */
	BY_AWAITED,	/* a call: the operation it waited for */
	BY_LAUNCH,	/* an operation: its launch call */
	BY_STREAM,	/* an operation: its stream's previous operation */
	BY_DEP,		/* an operation: an operation on another stream */
	BY_WAKE,	/* a call: a call of another thread, whose end woke this one */
};

/* A top-level call: one that no other call of its thread encloses (a driver call inside a runtime
 * one is not a node: its operations are its parent's, launched that much after the parent began). */
struct call {
	int64_t start, end, name_id, tid;
	unsigned cls;
	int64_t prev;		/* the thread's previous call, -1 */
	int64_t awaited;	/* blocking: the operation it waited for, -1 */
	int64_t woken_by;	/* the call of another thread it waited for, -1 */
	size_t first_op, nops;	/* its operations in struct what_if's launch order */
	/* replayed */
	int64_t rstart, rend;
	enum bound_by by;
	int rcaptured;		/* its launches are a graph fix's (captured()) */
	int rremoved;		/* it launches only kernels a fix removes (removed()) */
};

struct op {
	int64_t start, end, device, stream, corr, name_id, bytes;
	enum op_kind kind;
	int pageable, nccl;
	int64_t call;		/* its launch call in the window, -1: recorded times kept */
	int64_t launch_off;	/* when it was launched, after its call's start (a nested call's) */
	int64_t prev;		/* its stream's previous operation, -1 */
	int64_t dep;		/* the operation on another stream it waited for, -1 */
	enum bound_by by;	/* the constraint its start came least after */
	int64_t slack;		/* by how much */
	int64_t launch_min;	/* the device's shortest launch-to-start time */
	int use_prev;		/* 1: after the stream's previous operation ended; 2: after it started (it
				   overlapped it: programmatic dependent launch); 0: neither */
	/* replayed */
	int64_t rstart, rend;
	enum bound_by rby;	/* the constraint its start came after in the replay */
	int done;
};

struct what_if {
	int64_t trace_id;
	size_t iterations;
	int64_t h0;			/* the window's first call */
	int64_t measured;
	struct call *calls;		/* by start (a nested call after its parent) */
	size_t ncalls;
	struct op *ops;			/* by start */
	size_t nops;
	size_t *launched;		/* op indices by launch call, then start */
};

static inline int64_t what_if_max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

#endif
