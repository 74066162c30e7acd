/*
 * Summary statistics of a trace, in the spirit of `nsys stats`: kernels by name, memory operations by
 * kind, API calls by name, per-device and per-stream busy time, NVTX ranges with the GPU time of the
 * kernels launched inside them. Computed in streaming passes over the canonical views of trace.h:
 * memory grows with the number of distinct names, kinds, streams and NVTX texts, never with the
 * number of events (medians come from a second pass sorted by duration, which SQLite's external
 * sorter does in bounded memory).
 */
#ifndef GPT_STATS_STATS_H
#define GPT_STATS_STATS_H

#include "analyzer/output/format.h"
#include "analyzer/loader/trace.h"

#include <stdint.h>
#include <stdio.h>

/* Count, sum, extremes, mean and variance (Welford) and the exact median of a set of durations. */
/* A key column that was NULL (copy kinds an old export lacks). */
#define STATS_KEY_NULL INT64_MIN

struct stats_summary {
	int64_t count, total, min, max;
	double mean, m2;	/* running mean and sum of squared deviations */
	double median;
	int64_t bytes;		/* memory operations: bytes moved or set */
};

/*
 * For the stats command, before anything reads the trace: the scan that finds each table's storage
 * order keeps the columns the passes read, and the passes read that copy, so each table is read from
 * SQLite once (instead of that scan and then every row again).
 */
void stats_keep(struct trace *trace);
/* total / count, exact whatever order the durations came in (the running mean's last digits are not). */
double stats_mean(const struct stats_summary *s);
double stats_stddev(const struct stats_summary *s);	/* sample standard deviation */

/* One row of a table: a label (kernel name, copy kind, API name, stream...) and its numbers. */
struct stats_row {
	char *label;
	int64_t key[3];		/* what the label stands for (ids, kinds); -1 where unused */
	struct stats_summary sum;
	int64_t launched;	/* NVTX ranges: kernels launched inside */
	int64_t launched_ns;	/* NVTX ranges: GPU time of those kernels */
	int64_t busy_ns;	/* devices: union of busy intervals; streams: sum of operation times */
};

struct stats_table {
	struct stats_row *rows;
	size_t count;
};

struct stats {
	int64_t start, end;		/* the span: first to last GPU operation, sync or API call */
	int64_t kernel_ns;		/* sum of kernel times, for the share column */
	struct stats_table kernels;	/* by name, most total time first */
	struct stats_table memops;	/* copies by (copyKind, srcKind, dstKind), then memsets by memKind */
	struct stats_table api;		/* by name */
	struct stats_table devices;	/* key: traceId, deviceId */
	struct stats_table streams;	/* key: traceId, deviceId, streamId */
	struct stats_table nvtx;	/* by range text */
	size_t ntraces;
	struct stats_efficiency *efficiency;	/* GPU metrics: what bounds the busy time; NULL: none */
};

/*
 * Compute every table over the trace's current scope. Returns 0, or a negative error with one line in
 * err (a SQL failure, such as a file found corrupt while reading). Free with stats_free().
 */
int stats_compute(struct trace *trace, struct stats **out, char *err, size_t errlen);
void stats_free(struct stats *stats);

/*
 * Just the span and each device's busy time (one sorted pass over GPU operations); what the report
 * header needs. Fills stats->start, end and devices; the other tables stay empty.
 */
int stats_compute_devices(struct trace *trace, struct stats **out, char *err, size_t errlen);

/* scope: the scope in words (as in the report header), NULL for the whole trace. */
void stats_write(FILE *out, const struct stats *stats, struct trace *trace, const char *scope,
		 enum output_format format);

#endif
