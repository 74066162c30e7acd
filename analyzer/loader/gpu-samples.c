/*
 * The gpu_metrics view read as intervals (see gpu-samples.h): one ordered pass, rows of one
 * timestamp folded into one sample, then each device's ends set from the next start.
 */
#include "analyzer/loader/gpu-samples.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

const char *const gpu_sample_names[GS_NR] = {
	[GS_SM_ACTIVE] = "SMs Active [Throughput %]",
	[GS_TENSOR] = "Tensor Active [Throughput %]",
	[GS_HMMA] = "HMMA Tensor Active [Throughput %]",
	[GS_IMMA] = "IMMA Tensor Active [Throughput %]",
	[GS_DMMA] = "DMMA Tensor Active [Throughput %]",
	[GS_DRAM_READ] = "DRAM Read Bandwidth [Throughput %]",
	[GS_DRAM_WRITE] = "DRAM Write Bandwidth [Throughput %]",
	[GS_WARPS] = "Compute Warps in Flight [Throughput %]",
	[GS_PCIE_RX] = "PCIe RX Throughput [Throughput %]",
	[GS_PCIE_TX] = "PCIe TX Throughput [Throughput %]",
};

/* Names other nsys versions and GPUs give the same metrics. */
static const struct {
	const char *name;
	enum gpu_sample_metric metric;
} aliases[] = {
	{ "SM Active [Throughput %]", GS_SM_ACTIVE },
	{ "Tensor Active / FP16 Active [Throughput %]", GS_TENSOR },
	{ "DRAM Read Throughput [Throughput %]", GS_DRAM_READ },
	{ "DRAM Write Throughput [Throughput %]", GS_DRAM_WRITE },
	{ "Compute Warps In Flight [Throughput %]", GS_WARPS },
	/* ours before 2026-12-04, when SQL selecting LIKE 'Tensor Active%' caught them too */
	{ "Tensor Active HMMA [Throughput %]", GS_HMMA },
	{ "Tensor Active IMMA [Throughput %]", GS_IMMA },
	{ "Tensor Active DMMA [Throughput %]", GS_DMMA },
};

static int metric_index(const char *name)
{
	for (int i = 0; name && i < GS_NR; i++)
		if (!strcmp(name, gpu_sample_names[i]))
			return i;
	for (size_t i = 0; name && i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(name, aliases[i].name))
			return (int)aliases[i].metric;
	return -1;
}

int gpu_samples_present(struct trace *trace)
{
	sqlite3_stmt *st;
	int found = 0;

	if (!trace_view_exists(trace, "gpu_metrics") ||
	    sqlite3_prepare_v2(trace_db(trace), "SELECT 1 FROM gpu_metrics LIMIT 1", -1, &st, NULL) !=
		    SQLITE_OK)
		return 0;
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median gap between starts, and each sample's end from it (see gpu-samples.h). */
static int set_ends(struct gpu_samples *d)
{
	int64_t *gaps;
	size_t n = d->count;

	if (!n)
		return 0;
	d->period_ns = 0;
	if (n > 1) {
		gaps = malloc((n - 1) * sizeof(*gaps));
		if (!gaps)
			return -ENOMEM;
		for (size_t i = 0; i + 1 < n; i++)
			gaps[i] = d->samples[i + 1].start - d->samples[i].start;
		qsort(gaps, n - 1, sizeof(*gaps), cmp_i64);
		d->period_ns = gaps[(n - 1) / 2];
		free(gaps);
	}
	for (size_t i = 0; i < n; i++) {
		struct gpu_sample *s = &d->samples[i];
		int64_t next = i + 1 < n ? d->samples[i + 1].start : INT64_MAX;

		s->end = next - s->start <= GPU_SAMPLES_MAX_GAP * d->period_ns ? next
									     : s->start + d->period_ns;
	}
	return 0;
}

static struct gpu_samples *device_get(struct gpu_samples **devices, size_t *n, int64_t trace_id,
				      int64_t device)
{
	struct gpu_samples *grown;

	if (*n && (*devices)[*n - 1].trace_id == trace_id && (*devices)[*n - 1].device == device)
		return &(*devices)[*n - 1];
	grown = realloc(*devices, (*n + 1) * sizeof(**devices));
	if (!grown)
		return NULL;
	*devices = grown;
	memset(&grown[*n], 0, sizeof(grown[*n]));
	grown[*n].trace_id = trace_id;
	grown[*n].device = device;
	return &grown[(*n)++];
}

static struct gpu_sample *sample_get(struct gpu_samples *d, size_t *cap, int64_t start)
{
	struct gpu_sample *s;

	if (d->count && d->samples[d->count - 1].start == start)
		return &d->samples[d->count - 1];
	if (d->count == *cap) {
		size_t grown_cap = *cap ? *cap * 2 : 1024;
		struct gpu_sample *grown = realloc(d->samples, grown_cap * sizeof(*grown));

		if (!grown)
			return NULL;
		d->samples = grown;
		*cap = grown_cap;
	}
	s = &d->samples[d->count++];
	s->start = s->end = start;
	for (int i = 0; i < GS_NR; i++)
		s->value[i] = NAN;
	return s;
}

int gpu_samples_load(struct trace *trace, struct gpu_samples **out, char *err, size_t errlen)
{
	sqlite3 *db = trace_db(trace);
	struct gpu_samples *devices = NULL, *d = NULL;
	size_t ndevices = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int rc, ret = -ENOMEM;

	*out = NULL;
	if (!trace_view_exists(trace, "gpu_metrics"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT traceId, deviceId, timestamp, metricName, value FROM "
			       "gpu_metrics ORDER BY traceId, deviceId, timestamp", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read GPU metrics: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int m = metric_index((const char *)sqlite3_column_text(st, 3));
		int64_t trace_id = sqlite3_column_int64(st, 0), device = sqlite3_column_int64(st, 1);
		struct gpu_sample *s;

		if (!d || d->trace_id != trace_id || d->device != device) {
			if (d && set_ends(d) < 0)
				goto out_fail;
			d = device_get(&devices, &ndevices, trace_id, device);
			cap = 0;
			if (!d)
				goto out_fail;
		}
		s = sample_get(d, &cap, sqlite3_column_int64(st, 2));
		if (!s)
			goto out_fail;
		if (m >= 0) {
			s->value[m] = (float)sqlite3_column_double(st, 4);
			d->present[m] = 1;
		}
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read GPU metrics: %s", sqlite3_errmsg(db));
		ret = -EIO;
		goto out_fail;
	}
	if (d && set_ends(d) < 0)
		goto out_fail;
	sqlite3_finalize(st);
	*out = devices;
	return (int)ndevices;

out_fail:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "cannot read GPU metrics: out of memory");
	sqlite3_finalize(st);
	gpu_samples_free(devices, ndevices);
	return ret;
}

void gpu_samples_free(struct gpu_samples *devices, size_t ndevices)
{
	if (!devices)
		return;
	for (size_t i = 0; i < ndevices; i++)
		free(devices[i].samples);
	free(devices);
}
