/*
 * What the two halves of the Kineto import share (private to import/): kineto-events.c turns each
 * event into its row as the JSON streams by; kineto.c runs the import and writes what is known only
 * at the end (threads, processes, devices, notes, GPT_META).
 */
#ifndef GPT_IMPORT_KINETO_PRIVATE_H
#define GPT_IMPORT_KINETO_PRIVATE_H

#include "common/key-index.h"
#include "common/strtab.h"
#include "analyzer/import/kineto-json.h"
#include "analyzer/import/kineto.h"
#include "analyzer/import/trace-out.h"

#include <stddef.h>
#include <stdint.h>

#define NS_PER_S 1000000000LL
#define TID_BITS 24
#define TID_MASK ((1LL << TID_BITS) - 1)
#define MAX_NOTES 16
/* A longer event is out of range: no kernel, copy or call of a profiled window lasts a day. */
#define KINETO_DUR_MAX_NS (86400LL * NS_PER_S)

struct thread {
	int64_t pid, tid;
	int64_t name_id;	/* StringIds id of its thread_name, 0: none */
	int used;		/* an imported row is on it */
};

struct step {
	int64_t start, end;
};

struct import {
	const char *path;
	struct trace_out out;
	struct kineto_import_counts *counts;
	char error[512];
	int have_origin;
	int64_t origin;			/* file ns (ts units) of trace time 0 */
	int64_t min_start;		/* the earliest relative time written */
	int have_host_pid;
	int64_t host_pid;
	int64_t host_pids;		/* distinct pids of host events */
	struct key_index pids;
	int64_t unowned_gpu_rows;	/* GPU rows written before the host pid was known */
	struct key_index thread_index;	/* (pid, tid) */
	struct thread *threads;
	struct key_index short_index;	/* kernel name id -> index in short_ids */
	int64_t *short_ids;
	struct strtab process_names;	/* "pid\tname" of process_name events, first one per pid */
	int64_t next_fake_corr;		/* API rows without a correlation id get -1, -2... */
	int64_t kineto_events, legacy_events, foreign_events;
	struct strtab skipped;		/* category names not imported, counted in skipped_count */
	int64_t *skipped_count;
	int64_t untimed, kernels_without_dims;
	int64_t out_of_range;		/* events whose ts or dur is out of range: not imported */
	struct step *steps;
	size_t nsteps;
	int have_window;
	int64_t window_end;		/* file ns: "Record Window End", or the end of the "Trace" span */
	char *notes[MAX_NOTES];
	int nnotes;
};

/* The yajl reader's callback: one event into its row (kineto-events.c). */
int kineto_on_event(void *arg, const struct kineto_event *ev, const struct kineto_header *hdr);
/* pid << 24 | tid for a host thread, marking it used (kineto-events.c). */
int64_t kineto_global_tid(struct import *im, int64_t pid, int64_t tid);

#endif
