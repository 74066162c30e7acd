/*
 * Whether several traces can be one job's, when nothing else says (no job id, the same world size,
 * ranks that do not repeat): by when they were recorded. The processes of one job start together;
 * traces recorded JOB_APART_NS or more apart are of different runs, and read as one they would be
 * one report with a span of hours and clocks "aligned" by days (HTA's nccl_parser_config rank 0
 * with df_index_resolver's rank 1: 15 collectives "matched", a clock offset of -540 days).
 */
#ifndef GPT_LOADER_JOB_CHECK_H
#define GPT_LOADER_JOB_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define JOB_APART_NS (3600LL * 1000000000LL)	/* an hour */

/* One trace: its name, and when its time 0 was on the wall clock (UTC ns; -1: unknown). */
struct job_start {
	const char *name;
	int64_t wall_ns;
};

/*
 * 1 when two of the traces started JOB_APART_NS or more apart, with one line in why naming the
 * earliest and the latest ("'a.json' and 'b.json' were recorded 19.4 h apart (...)"); else 0.
 * Traces whose start is unknown are left out of the comparison.
 */
int job_starts_apart(const struct job_start *starts, size_t n, char *why, size_t len);

#endif
