/*
 * pageable-memcpy: host<->device copies whose host side is pageable memory (srcKind 0 for HtoD,
 * dstKind 0 for DtoH). The driver stages such a copy through a pinned bounce buffer: the calling
 * thread is blocked for the staging memcpy and the DMA, and the copy cannot overlap anything.
 *
 * Recoverable time: each pageable copy costs the longer of its GPU duration and its API call's
 * duration (the host is blocked throughout); from pinned memory it would take bytes / pinned
 * bandwidth. Only the GPU duration's excess is claimed as recoverable: the host's staging shows as
 * idle time before the copy, which idle-gaps claims, and no ns is counted by two rules. The pinned bandwidth is measured on the pinned copies of the same device and direction
 * in the trace when they move at least min_reference_mb; otherwise it is pinned_gbps, and when that
 * is 0 (the default) a figure for the device's host link, chosen by compute capability: 50 GB/s for
 * 9.x and later (Hopper: PCIe 5.0 x16), 25 GB/s for 8.x (Ampere: PCIe 4.0 x16), 12 GB/s otherwise
 * (PCIe 3.0 x16). Those are typical achieved rates, not link maxima; NVLink-C2C hosts (GH200) are
 * far faster, so set pinned_gbps there.
 */
#include "analyzer/analysis/gaps.h"
#include "analyzer/analysis/what-if.h"
#include "rules/rule-util.h"

#include "common/key-index.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const struct rule_param params[] = {
	{ "pinned_gbps", 0, "GB/s",
	  "pinned-copy bandwidth to compare with when the trace has no pinned copies to measure; "
	  "0 picks one from the device's compute capability" },
	{ "min_reference_mb", 1, "MB",
	  "pinned copies of one direction must move this much to serve as the measured reference" },
	{ "min_copies", 10, "count", "report a device with at least this many pageable copies" },
	{ "min_mb", 1, "MB", "or with at least this many megabytes copied from or to pageable memory" },
};

/* Copies per device and direction, pinned and pageable apart: a GROUP BY over the copies alone. */
static const char totals_sql[] =
	"SELECT traceId, deviceId, copyKind,"
	" (copyKind = 1 AND srcKind = 1) OR (copyKind = 2 AND dstKind = 1) AS pinned,"
	" COUNT(*), SUM(bytes), SUM(dur) FROM copies"
	" WHERE (copyKind = 1 AND srcKind IN (0, 1)) OR (copyKind = 2 AND dstKind IN (0, 1))"
	" GROUP BY 1, 2, 3, 4";
static const char gpus_sql[] =
	"SELECT traceId, id, MAX(computeMajor), MAX(computeMinor) FROM gpus GROUP BY traceId, id";

enum { HTOD, DTOH, NDIRS };

struct direction {
	int64_t count;
	double bytes;
	int64_t gpu_ns, host_ns;		/* host_ns: API time where known */
	double pinned_bw;			/* bytes per ns, the reference */
	int measured;				/* the reference was measured in the trace */
	int64_t pinned_count;
	double pinned_bytes;
	double recoverable;
	int64_t first, last;
	int64_t walked;				/* pageable copies seen in the walk */
};

struct device_copies {
	struct rule_device key;
	int major, minor;			/* -1 when unknown */
	struct direction dir[NDIRS];
};

struct pageable_state {
	struct key_index device_index;	/* (trace, device) -> devices[] */
	struct device_copies *devices;
	size_t n;
	double pinned_gbps;
	double min_reference;	/* bytes of pinned copies that make a measured reference */
	int walked;		/* something qualified, so the rule reads the walk */
};

static struct device_copies *device_get(struct pageable_state *s, int64_t trace_id, int64_t device)
{
	int created;
	struct device_copies *d = rule_device_get(&s->device_index, trace_id, device, &s->devices,
						  &s->n, sizeof(*s->devices), &created);

	if (created)
		d->major = d->minor = -1;
	return d;
}

/* The assumed pinned bandwidth in GB/s for a device of this compute capability (see top). */
static double link_gbps(int major)
{
	if (major >= 9)
		return 50;
	if (major == 8)
		return 25;
	return 12;
}

/* The replay's fix: the device's pageable copies from pinned memory, at the slower direction's
 * reference bandwidth (one figure per fix). */
static struct what_if_fix *pinned_fix(const struct device_copies *d)
{
	double bw = 0;

	for (int i = 0; i < NDIRS; i++)
		if (d->dir[i].count && d->dir[i].pinned_bw > 0 && (bw == 0 || d->dir[i].pinned_bw < bw))
			bw = d->dir[i].pinned_bw;
	return bw > 0 ? what_if_fix_new(WHAT_IF_PINNED, d->key.trace_id, d->key.device, NULL, 0, bw) : NULL;
}

static void report_device(const struct rule *rule, struct rule_context *ctx,
			  const struct device_copies *d, const struct span_clock *clock,
			  double pinned_gbps)
{
	static const char *const dir_name[NDIRS] = { "HtoD", "DtoH" };
	struct fmt_text t1, t2, t3, t4, t5, t6;
	int64_t count = d->dir[HTOD].count + d->dir[DTOH].count;
	double bytes = d->dir[HTOD].bytes + d->dir[DTOH].bytes;
	int64_t recoverable = (int64_t)(d->dir[HTOD].recoverable + d->dir[DTOH].recoverable);
	int64_t first = INT64_MAX, last = 0;
	struct finding *f;

	f = findings_add(
	    ctx->out, rule, rule_severity(recoverable, span_clock_span(clock, d->key.trace_id)),
	    recoverable,
	    "Allocate the host buffers with cudaMallocHost or cudaHostAlloc (or register "
	    "existing ones with cudaHostRegister; pin_memory=True in a PyTorch DataLoader), so "
	    "copies run at full DMA bandwidth without a staging copy and can be made "
	    "asynchronous with cudaMemcpyAsync.",
	    "%s: %" PRId64 " host<->device cop%s (%s) use%s pageable host memory",
	    fmt_device(&t1, ctx->an.trace, d->key.trace_id, d->key.device), count,
	    count == 1 ? "y" : "ies", fmt_bytes(&t2, bytes), count == 1 ? "s" : "");
	f->device = (int32_t)d->key.device;
	finding_what_if(f, pinned_fix(d));
	for (int i = 0; i < NDIRS; i++) {
		const struct direction *dir = &d->dir[i];

		if (!dir->count)
			continue;
		if (dir->first < first)
			first = dir->first;
		if (dir->last > last)
			last = dir->last;
		snprintf(t5.s, sizeof(t5.s), "%.1f GB/s",
			 dir->gpu_ns ? dir->bytes / (double)dir->gpu_ns : 0.0);
		snprintf(t6.s, sizeof(t6.s), "%.1f GB/s",
			 dir->host_ns ? dir->bytes / (double)dir->host_ns : 0.0);
		finding_evidence(f, "%s: %" PRId64 " pageable cop%s, %s, GPU time %s (%s), host blocked %s (%s)",
				 dir_name[i], dir->count, dir->count == 1 ? "y" : "ies", fmt_bytes(&t1, dir->bytes),
				 fmt_duration(&t2, dir->gpu_ns), t5.s, fmt_duration(&t3, dir->host_ns), t6.s);
		if (dir->measured)
			finding_evidence(f, "%s pinned reference: %.1f GB/s, measured on %" PRId64
					 " pinned cop%s of %s in this trace; estimated %s from pinned memory",
					 dir_name[i], dir->pinned_bw, dir->pinned_count,
					 dir->pinned_count == 1 ? "y" : "ies",
					 fmt_bytes(&t1, dir->pinned_bytes),
					 fmt_duration(&t4, (int64_t)(dir->bytes / dir->pinned_bw)));
		else if (pinned_gbps > 0)
			finding_evidence(f, "%s pinned reference: %.1f GB/s (pinned_gbps); estimated %s from "
					 "pinned memory",
					 dir_name[i], dir->pinned_bw,
					 fmt_duration(&t4, (int64_t)(dir->bytes / dir->pinned_bw)));
		else if (d->major >= 0)
			finding_evidence(f, "%s pinned reference: %.1f GB/s, assumed for compute capability "
					 "%d.%d (no pinned copies to measure; set pageable-memcpy.pinned_gbps); "
					 "estimated %s from pinned memory",
					 dir_name[i], dir->pinned_bw, d->major, d->minor,
					 fmt_duration(&t4, (int64_t)(dir->bytes / dir->pinned_bw)));
		else
			finding_evidence(f, "%s pinned reference: %.1f GB/s, assumed (device unknown, no pinned "
					 "copies to measure; set pageable-memcpy.pinned_gbps); estimated %s from "
					 "pinned memory",
					 dir_name[i], dir->pinned_bw,
					 fmt_duration(&t4, (int64_t)(dir->bytes / dir->pinned_bw)));
	}
	finding_evidence(f, "first at %s, last ending at %s", fmt_at(&t1, clock, first),
			 fmt_at(&t2, clock, last));
	f->start = first;
	f->end = last;
}

/* One pageable copy, with the API call that issued it, from the gap walk over copies. */
static int on_copy(const struct gap *g, void *arg)
{
	struct pageable_state *s = arg;
	struct device_copies *d;
	struct direction *dir;
	double pinned;
	int64_t gpu, host;

	if (g->next_op != GPU_OP_COPY || !((g->copy_kind == 1 && g->src_kind == 0) ||
					   (g->copy_kind == 2 && g->dst_kind == 0)))
		return 0;
	d = device_get(s, g->trace_id, g->device);
	dir = &d->dir[g->copy_kind == 1 ? HTOD : DTOH];
	gpu = g->next_end - g->next_start;
	host = g->api_start >= 0 ? g->api_end - g->api_start : 0;
	if (!dir->measured)
		dir->pinned_bw = s->pinned_gbps > 0 ? s->pinned_gbps : link_gbps(d->major);
	/* GB/s is bytes per ns. */
	pinned = (double)(g->bytes > 0 ? g->bytes : 0) / dir->pinned_bw;
	if (!dir->walked++)
		dir->first = g->next_start;
	dir->last = g->next_end;
	dir->gpu_ns += gpu;
	dir->host_ns += host;
	/* Only the copy's own GPU time is claimed: the idle time around it (the host staging the data)
	 * is idle-gaps' and sync-memcpy's, and each ns counts once. */
	if ((double)gpu > pinned)
		dir->recoverable += (double)gpu - pinned;
	return 0;
}

/* One row of totals_sql: a device's pageable or pinned copies in one direction. */
static void totals_row(sqlite3_stmt *row, void *arg)
{
	struct pageable_state *s = arg;
	struct device_copies *d = device_get(s, sqlite3_column_int64(row, 0),
					     sqlite3_column_int64(row, 1));
	struct direction *dir = &d->dir[sqlite3_column_int(row, 2) == 1 ? HTOD : DTOH];

	if (sqlite3_column_int(row, 3)) {
		dir->pinned_count = sqlite3_column_int64(row, 4);
		dir->pinned_bytes = sqlite3_column_double(row, 5);
		if (dir->pinned_bytes >= s->min_reference && sqlite3_column_int64(row, 6) > 0) {
			dir->measured = 1;
			dir->pinned_bw = dir->pinned_bytes / sqlite3_column_double(row, 6);
		}
	} else {
		dir->count = sqlite3_column_int64(row, 4);
		dir->bytes = sqlite3_column_double(row, 5);
	}
}

/* A device's compute capability from the trace's GPU table. */
static void gpu_row(sqlite3_stmt *row, void *arg)
{
	struct device_copies *d;

	if (sqlite3_column_type(row, 2) == SQLITE_NULL)
		return;
	d = device_get(arg, sqlite3_column_int64(row, 0), sqlite3_column_int64(row, 1));
	d->major = sqlite3_column_int(row, 2);
	d->minor = sqlite3_column_int(row, 3);
}

/* Totals first (the pinned reference where there is one, whether anything qualifies); then, in the
 * walk, each pageable copy against its own API call: how long the host was blocked. */
static int pageable_memcpy_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
				 void **state, char *err, size_t errlen)
{
	double min_copies = rule_param(ctx, rule, "min_copies");
	double min_bytes = rule_param(ctx, rule, "min_mb") * 1e6;
	struct pageable_state *s = xcalloc(1, sizeof(*s));
	int ret, any = 0;

	s->pinned_gbps = rule_param(ctx, rule, "pinned_gbps");
	s->min_reference = rule_param(ctx, rule, "min_reference_mb") * 1e6;
	ret = analysis_query(&ctx->an, totals_sql, totals_row, s, err, errlen);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		const struct device_copies *d = &s->devices[i];
		int64_t count = d->dir[HTOD].count + d->dir[DTOH].count;

		if (count && ((double)count >= min_copies ||
			      d->dir[HTOD].bytes + d->dir[DTOH].bytes >= min_bytes))
			any = 1;
	}
	if (!any)
		goto out;
	ret = analysis_query(&ctx->an, gpus_sql, gpu_row, s, err, errlen);
	if (ret < 0)
		goto out;
	*visitor = (struct gap_visitor){ .api = API_COPY, .fn = on_copy, .arg = s };
	s->walked = 1;
out:
	if (ret < 0) {
		key_index_release(&s->device_index);
		free(s->devices);
		free(s);
		s = NULL;
	}
	*state = s;
	return ret;
}

static int pageable_memcpy_finish(const struct rule *rule, struct rule_context *ctx, void *state,
				  const struct gap_walk *walk, char *err, size_t errlen)
{
	double min_copies = rule_param(ctx, rule, "min_copies");
	double min_bytes = rule_param(ctx, rule, "min_mb") * 1e6;
	struct pageable_state *s = state;
	struct span_clock clock = {0};
	int ret = 0;

	/* No walk: it failed, or nothing qualified and this rule's visitor took no part. */
	if (!walk || !s->walked)
		goto out;
	ret = span_clock_init(&clock, &ctx->an, err, errlen);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		const struct device_copies *d = &s->devices[i];
		int64_t count = d->dir[HTOD].count + d->dir[DTOH].count;
		double bytes = d->dir[HTOD].bytes + d->dir[DTOH].bytes;

		if (count && ((double)count >= min_copies || bytes >= min_bytes))
			report_device(rule, ctx, d, &clock, s->pinned_gbps);
	}
out:
	span_clock_release(&clock);
	key_index_release(&s->device_index);
	free(s->devices);
	free(s);
	return ret;
}

const struct rule rule_pageable_memcpy = {
	.id = "pageable-memcpy",
	.title = "Copies from pageable host memory",
	.measures = "host<->device copies whose host buffer is pageable (not pinned), and the time "
		    "they would save at the pinned-copy bandwidth",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = pageable_memcpy_begin,
	.finish = pageable_memcpy_finish,
};
