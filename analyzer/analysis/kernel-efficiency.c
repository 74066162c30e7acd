/*
 * Per-kernel efficiency from sampled GPU metrics (see kernel-efficiency.h): one pass per device
 * over its kernels in start order against its samples in start order, noting how long each kernel
 * execution overlaps each sample; then, per sample and kernel group, the overlap is summed, and a
 * sample counts for a group (weighted by that overlap) only when the group covers at least
 * KEFF_MIN_PURITY of the sample's interval. The overlaps are summed as their samples finish, so
 * the memory stays about KEFF_FLUSH_RECS records whatever the trace's size.
 */
#include "analyzer/analysis/kernel-efficiency.h"

#include "common/strtab.h"
#include "analyzer/loader/gpu-samples.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* Overlap-weighted sums of one kernel group: per metric, value x ns and the ns it was sampled. */
struct group_sums {
	double weighted[GS_NR], weight[GS_NR];
	int64_t sampled_ns;
};

/* Overlap records held before the finished samples' are summed (sum_pure). */
#define KEFF_FLUSH_RECS 65536

/* How long one kernel execution of a group overlaps one sample. */
struct overlap_rec {
	const struct gpu_sample *sample;
	size_t group;
	int64_t ns;
};

struct builder {
	struct strtab keys;	/* "name|gx,gy,gz|bx,by,bz" -> group index */
	struct kernel_efficiency *kernels;
	struct group_sums *sums;
	size_t cap;
	struct overlap_rec *recs;
	size_t nrecs, cap_recs;
	size_t flush_at;	/* sum the finished samples' records when this many are held */
};

const char *kernel_bound_name(enum kernel_bound bound)
{
	static const char *const names[KERNEL_BOUND_COUNT] = {
		[KERNEL_BOUND_UNKNOWN] = "unknown",
		[KERNEL_BOUND_COMPUTE] = "compute-bound",
		[KERNEL_BOUND_MEMORY] = "memory-bound",
		[KERNEL_BOUND_LATENCY] = "latency-bound",
	};

	return (unsigned)bound < KERNEL_BOUND_COUNT ? names[bound] : "unknown";
}

enum kernel_bound kernel_bound_classify(double sm_pct, double tensor_pct, double dram_pct,
					double coverage)
{
	if (!(coverage >= KEFF_MIN_COVERAGE))
		return KERNEL_BOUND_UNKNOWN;
	if (dram_pct >= KEFF_MEMORY_DRAM_PCT)
		return KERNEL_BOUND_MEMORY;
	if (tensor_pct >= KEFF_COMPUTE_TENSOR_PCT || sm_pct >= KEFF_COMPUTE_SM_PCT)
		return KERNEL_BOUND_COMPUTE;
	if (isnan(sm_pct))
		return KERNEL_BOUND_UNKNOWN;
	return KERNEL_BOUND_LATENCY;
}

/* The group of a kernel execution, added when new; SIZE_MAX when out of memory. */
static size_t group_get(struct builder *b, const char *name, const int64_t dims[6])
{
	char key[2048];
	size_t i;
	int created = 0;

	snprintf(key, sizeof(key), "%s|%lld,%lld,%lld|%lld,%lld,%lld", name ? name : "?",
		 (long long)dims[0], (long long)dims[1], (long long)dims[2], (long long)dims[3],
		 (long long)dims[4], (long long)dims[5]);
	i = strtab_get(&b->keys, key, &created);
	if (i == SIZE_MAX || !created)
		return i;
	if (i >= b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct kernel_efficiency *k = realloc(b->kernels, cap * sizeof(*k));
		struct group_sums *s;

		if (!k)
			return SIZE_MAX;
		b->kernels = k;
		s = realloc(b->sums, cap * sizeof(*s));
		if (!s)
			return SIZE_MAX;
		b->sums = s;
		b->cap = cap;
	}
	memset(&b->kernels[i], 0, sizeof(b->kernels[i]));
	memset(&b->sums[i], 0, sizeof(b->sums[i]));
	b->kernels[i].name = strdup(name ? name : "?");
	memcpy(b->kernels[i].grid, dims, 3 * sizeof(int64_t));
	memcpy(b->kernels[i].block, dims + 3, 3 * sizeof(int64_t));
	return b->kernels[i].name ? i : SIZE_MAX;
}

/* Note the samples overlapping [start, end) for group g; *first: the first sample still ending
   later. Returns 0, or -ENOMEM. */
static int overlap(struct builder *b, const struct gpu_samples *d, size_t *first, int64_t start,
		   int64_t end, size_t g)
{
	while (*first < d->count && d->samples[*first].end <= start)
		(*first)++;
	for (size_t i = *first; i < d->count && d->samples[i].start < end; i++) {
		const struct gpu_sample *s = &d->samples[i];
		int64_t lo = s->start > start ? s->start : start, hi = s->end < end ? s->end : end;

		if (hi <= lo)
			continue;
		if (b->nrecs == b->cap_recs) {
			size_t cap = b->cap_recs ? 2 * b->cap_recs : 1024;
			struct overlap_rec *r = realloc(b->recs, cap * sizeof(*r));

			if (!r)
				return -ENOMEM;
			b->recs = r;
			b->cap_recs = cap;
		}
		b->recs[b->nrecs++] = (struct overlap_rec){ .sample = s, .group = g, .ns = hi - lo };
	}
	return 0;
}

static int compare_rec(const void *pa, const void *pb)
{
	const struct overlap_rec *a = pa, *b = pb;

	if (a->sample != b->sample)
		return a->sample < b->sample ? -1 : 1;
	return (a->group > b->group) - (a->group < b->group);
}

/* Whether all of a sample's overlaps are recorded: it is another device's (the kernels come device
   after device), or it ends before the current kernel starts (they come in start order). */
static int sample_done(const struct gpu_sample *s, const struct gpu_samples *cur, int64_t start)
{
	return !cur || s < cur->samples || s >= cur->samples + cur->count || s->end <= start;
}

/*
 * Each group's coverage of each finished sample, summed over its executions; a sample it covers
 * for at least KEFF_MIN_PURITY of the sample's interval adds its values, weighted by that coverage.
 * A sample's values are means over its whole interval, so a kernel shorter than that would
 * otherwise take on its neighbours' activity (JAX's 10 us kernels at 10 kHz all read "22% tensor"
 * alike). The overlaps of samples not finished yet (see sample_done; cur NULL: all are) are kept,
 * so that the records held stay about as many as KEFF_FLUSH_RECS.
 */
static void sum_pure(struct builder *b, const struct gpu_samples *cur, int64_t start)
{
	size_t kept = 0;

	if (!b->nrecs)
		return;
	qsort(b->recs, b->nrecs, sizeof(*b->recs), compare_rec);
	for (size_t i = 0, j; i < b->nrecs; i = j) {
		const struct gpu_sample *s = b->recs[i].sample;
		struct group_sums *sums = &b->sums[b->recs[i].group];
		int64_t covered = 0;

		for (j = i; j < b->nrecs && b->recs[j].sample == s && b->recs[j].group == b->recs[i].group; j++)
			covered += b->recs[j].ns;
		if (!sample_done(s, cur, start)) {
			while (i < j)
				b->recs[kept++] = b->recs[i++];
			continue;
		}
		if ((double)covered < KEFF_MIN_PURITY * (double)(s->end - s->start))
			continue;
		sums->sampled_ns += covered;
		for (int m = 0; m < GS_NR; m++) {
			if (isnan(s->value[m]))
				continue;
			sums->weighted[m] += (double)s->value[m] * (double)covered;
			sums->weight[m] += (double)covered;
		}
	}
	b->nrecs = kept;
}

static const struct gpu_samples *device_samples(const struct gpu_samples *devices, size_t n,
					       int64_t trace_id, int64_t device)
{
	for (size_t i = 0; i < n; i++)
		if (devices[i].trace_id == trace_id && devices[i].device == device)
			return &devices[i];
	return NULL;
}

/* The kernels of the window, by device and start, into the builder's groups. */
static int kernels_pass(struct trace *trace, const struct gpu_samples *devices, size_t ndevices,
			int64_t start, int64_t end, struct builder *b, char *err, size_t errlen)
{
	const struct gpu_samples *d = NULL;
	int64_t cur_trace = -1, cur_device = -1;
	sqlite3_stmt *st;
	size_t first = 0;
	int rc;

	if (sqlite3_prepare_v2(trace_db(trace),
			       "SELECT traceId, deviceId, start, end, name, gridX, gridY, gridZ, blockX, "
			       "blockY, blockZ FROM kernels WHERE start >= ?1 AND (?2 = 0 OR start < ?2) "
			       "ORDER BY traceId, deviceId, start", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read kernels: %s", sqlite3_errmsg(trace_db(trace)));
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, start);
	sqlite3_bind_int64(st, 2, end);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t trace_id = sqlite3_column_int64(st, 0), device = sqlite3_column_int64(st, 1);
		int64_t ks = sqlite3_column_int64(st, 2), ke = sqlite3_column_int64(st, 3), dims[6];
		size_t g;

		for (int i = 0; i < 6; i++)
			dims[i] = sqlite3_column_int64(st, 5 + i);
		g = group_get(b, (const char *)sqlite3_column_text(st, 4), dims);
		if (g == SIZE_MAX) {
			sqlite3_finalize(st);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		if (trace_id != cur_trace || device != cur_device) {
			d = device_samples(devices, ndevices, trace_id, device);
			first = 0;
			cur_trace = trace_id;
			cur_device = device;
		}
		b->kernels[g].launches++;
		b->kernels[g].time_ns += ke - ks;
		if (b->nrecs >= b->flush_at) {
			sum_pure(b, d, ks);
			/* records of samples still running stay: flush again when they have doubled */
			b->flush_at = b->nrecs > KEFF_FLUSH_RECS / 2 ? 2 * b->nrecs : KEFF_FLUSH_RECS;
		}
		if (d && overlap(b, d, &first, ks, ke, g) < 0) {
			sqlite3_finalize(st);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read kernels: %s", sqlite3_errmsg(trace_db(trace)));
		return -EIO;
	}
	return 0;
}

static double mean(const struct group_sums *s, enum gpu_sample_metric m)
{
	return s->weight[m] > 0 ? s->weighted[m] / s->weight[m] : NAN;
}

static void finish_group(struct kernel_efficiency *k, const struct group_sums *s, double peak_gbps)
{
	double dram;

	k->sampled_ns = s->sampled_ns;
	k->sm_pct = mean(s, GS_SM_ACTIVE);
	k->tensor_pct = mean(s, GS_TENSOR);
	k->hmma_pct = mean(s, GS_HMMA);
	k->imma_pct = mean(s, GS_IMMA);
	k->dmma_pct = mean(s, GS_DMMA);
	k->dram_read_pct = mean(s, GS_DRAM_READ);
	k->dram_write_pct = mean(s, GS_DRAM_WRITE);
	dram = (isnan(k->dram_read_pct) ? 0 : k->dram_read_pct) +
	       (isnan(k->dram_write_pct) ? 0 : k->dram_write_pct);
	if (isnan(k->dram_read_pct) && isnan(k->dram_write_pct))
		dram = NAN;
	k->dram_gbps = peak_gbps > 0 && !isnan(dram) ? dram / 100.0 * peak_gbps : NAN;
	k->bound = kernel_bound_classify(k->sm_pct, k->tensor_pct, dram,
					 k->time_ns ? (double)k->sampled_ns / (double)k->time_ns : 0);
}

static int compare_time_desc(const void *pa, const void *pb)
{
	const struct kernel_efficiency *a = pa, *b = pb;

	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

static double dram_peak_gbps(struct trace *trace)
{
	sqlite3_stmt *st;
	double peak = 0;

	if (sqlite3_prepare_v2(trace_db(trace), "SELECT memoryBandwidth FROM gpus WHERE "
			       "memoryBandwidth > 0 ORDER BY traceId, id LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		peak = sqlite3_column_double(st, 0) / 1e9;
	sqlite3_finalize(st);
	return peak;
}

static int64_t samples_in(const struct gpu_samples *devices, size_t n, int64_t start, int64_t end)
{
	int64_t count = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < devices[i].count; j++)
			count += devices[i].samples[j].start >= start &&
				 (!end || devices[i].samples[j].start < end);
	return count;
}

/* Each device's means over [start, end) (0: unbounded) into e->devices (device_utilization). */
static int device_means(struct kernel_efficiencies *e, const struct gpu_samples *devices, size_t n,
			int64_t start, int64_t end)
{
	e->devices = calloc(n ? n : 1, sizeof(*e->devices));
	if (!e->devices)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct gpu_samples *d = &devices[i];
		struct device_utilization *u = &e->devices[e->ndevices];
		int64_t lo, hi;

		if (!d->count)
			continue;
		lo = d->samples[0].start > start ? d->samples[0].start : start;
		hi = d->samples[d->count - 1].end;
		if (end && end < hi)
			hi = end;
		if (hi <= lo)
			continue;
		u->trace_id = d->trace_id;
		u->device = d->device;
		u->ns = hi - lo;
		for (int m = 0; m < GS_NR; m++) {
			double sum = 0;

			for (size_t j = 0; j < d->count; j++) {
				const struct gpu_sample *s = &d->samples[j];
				int64_t a = s->start > lo ? s->start : lo, z = s->end < hi ? s->end : hi;

				if (!isnan(s->value[m]) && z > a)
					sum += (double)s->value[m] * (double)(z - a);
			}
			u->pct[m] = d->present[m] ? sum / (double)u->ns : NAN;
		}
		e->ndevices++;
	}
	return 0;
}

int kernel_efficiency_compute(struct trace *trace, int64_t start, int64_t end,
			      struct kernel_efficiencies **out, char *err, size_t errlen)
{
	struct builder b = { .flush_at = KEFF_FLUSH_RECS };
	struct kernel_efficiencies *e;
	struct gpu_samples *devices;
	int ndevices, ret;

	*out = NULL;
	ndevices = gpu_samples_load(trace, &devices, err, errlen);
	if (ndevices <= 0)
		return ndevices;
	ret = kernels_pass(trace, devices, (size_t)ndevices, start, end, &b, err, errlen);
	if (ret == 0)
		sum_pure(&b, NULL, 0);
	e = calloc(1, sizeof(*e));
	if (ret == 0 && !e) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
	}
	if (ret < 0)
		goto out;
	e->dram_peak_gbps = dram_peak_gbps(trace);
	e->samples = samples_in(devices, (size_t)ndevices, start, end);
	if (device_means(e, devices, (size_t)ndevices, start, end) < 0) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	e->kernels = b.kernels;
	e->count = b.keys.count;
	b.kernels = NULL;
	for (size_t i = 0; i < e->count; i++) {
		finish_group(&e->kernels[i], &b.sums[i], e->dram_peak_gbps);
		e->total_ns += e->kernels[i].time_ns;
		e->bound_ns[e->kernels[i].bound] += e->kernels[i].time_ns;
	}
	if (e->count > 1)
		qsort(e->kernels, e->count, sizeof(*e->kernels), compare_time_desc);
	*out = e;
	e = NULL;
	ret = 1;
out:
	kernel_efficiency_free(e);
	for (size_t i = 0; b.kernels && i < b.keys.count; i++)
		free(b.kernels[i].name);
	free(b.kernels);
	free(b.sums);
	free(b.recs);
	strtab_release(&b.keys);
	gpu_samples_free(devices, (size_t)ndevices);
	return ret;
}

void kernel_efficiency_free(struct kernel_efficiencies *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->count; i++)
		free(e->kernels[i].name);
	free(e->kernels);
	free(e->devices);
	free(e);
}
