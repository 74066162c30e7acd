/*
 * The busy-time section of `gpt-trace stats` (see stats-efficiency.h): the window, then the
 * rules layer's per-kernel efficiency, written as text, Markdown or JSON.
 */
#include "analyzer/stats/efficiency.h"

#include "common/util.h"
#include "analyzer/loader/gpu-samples.h"
#include "analyzer/analysis/phases.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EFFICIENCY_MAX_KERNELS 20	/* kernels listed, most time first */

int stats_efficiency_compute(struct trace *trace, int whole_trace, struct stats_efficiency **out,
			     char *err, size_t errlen)
{
	struct stats_efficiency *e;
	struct phases *phases = NULL;
	int ret;

	*out = NULL;
	if (!gpu_samples_present(trace))
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	if (whole_trace && phases_compute(trace, NULL, &phases, err, errlen) == 0) {
		phases_steady_window(phases, &e->start, &e->end);
		phases_free(phases);
	}
	e->window = e->end > e->start ? xasprintf("the steady state, %.3f to %.3f ms", e->start / 1e6,
						  e->end / 1e6)
				      : xstrdup(whole_trace ? "the whole trace (no steady state found)"
							    : "the scope");
	if (e->end <= e->start)
		e->start = e->end = 0;
	ret = kernel_efficiency_compute(trace, e->start, e->end, &e->kernels, err, errlen);
	if (ret <= 0) {
		stats_efficiency_free(e);
		return ret;
	}
	*out = e;
	return 1;
}

void stats_efficiency_free(struct stats_efficiency *e)
{
	if (!e)
		return;
	kernel_efficiency_free(e->kernels);
	free(e->window);
	free(e);
}

static double pct_share(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A percentage cell: "-" when not sampled. */
static const char *pct(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

static void text_classes(FILE *out, const struct kernel_efficiencies *k, int md)
{
	static const enum kernel_bound order[] = { KERNEL_BOUND_COMPUTE, KERNEL_BOUND_MEMORY,
						   KERNEL_BOUND_LATENCY, KERNEL_BOUND_UNKNOWN };

	if (md)
		fprintf(out, "| class | share of kernel time | time (ms) |\n| :--- | ---: | ---: |\n");
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int64_t ns = k->bound_ns[order[i]];

		fprintf(out, md ? "| %s | %.1f%% | %.3f |\n" : "  %-14s %6.1f%%  %12.3f ms\n",
			kernel_bound_name(order[i]), pct_share(ns, k->total_ns), ns / 1e6);
	}
	fprintf(out, "\n");
}

static void text_kernel(FILE *out, const struct kernel_efficiency *k, int64_t total, int md)
{
	char sm[16], tc[16], h[16], i8[16], d[16], dr[16], dw[16], gbps[16];

	if (isnan(k->dram_gbps))
		snprintf(gbps, sizeof(gbps), "-");
	else
		snprintf(gbps, sizeof(gbps), "%.0f", k->dram_gbps);
	fprintf(out, md ? "| %.3f | %.1f | %" PRId64 " | %s | %s | %s/%s/%s | %s+%s | %s | %s | "
			: "%10.3f %6.1f %8" PRId64 " %4s %6s %11s/%s/%s %5s+%-3s %6s  %-13s ",
		k->time_ns / 1e6, pct_share(k->time_ns, total), k->launches,
		pct(k->sm_pct, sm, sizeof(sm)), pct(k->tensor_pct, tc, sizeof(tc)),
		pct(k->hmma_pct, h, sizeof(h)), pct(k->imma_pct, i8, sizeof(i8)),
		pct(k->dmma_pct, d, sizeof(d)), pct(k->dram_read_pct, dr, sizeof(dr)),
		pct(k->dram_write_pct, dw, sizeof(dw)), gbps, kernel_bound_name(k->bound));
	fprintf(out, "%s [%" PRId64 ",%" PRId64 ",%" PRId64 "]x[%" PRId64 ",%" PRId64 ",%" PRId64 "]%s\n",
		k->name, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
		md ? " |" : "");
}

/* Is d's device number also another trace's (several files): then name the trace too. */
static int device_shared(const struct kernel_efficiencies *k, const struct device_utilization *d)
{
	for (size_t i = 0; i < k->ndevices; i++)
		if (&k->devices[i] != d && k->devices[i].device == d->device)
			return 1;
	return 0;
}

/* Each device's means over the window: "SMs active 45%, tensor 12%, DRAM rd 20% wr 8%, ...". */
static void text_devices(FILE *out, const struct kernel_efficiencies *k, int md)
{
	static const struct {
		enum gpu_sample_metric m;
		const char *label;
	} shown[] = {
		{ GS_SM_ACTIVE, "SMs active" }, { GS_TENSOR, "tensor" }, { GS_DRAM_READ, "DRAM rd" },
		{ GS_DRAM_WRITE, "DRAM wr" }, { GS_PCIE_RX, "PCIe rx" }, { GS_PCIE_TX, "PCIe tx" },
	};

	if (!k->ndevices)
		return;
	fputs(md ? "Each GPU's means over the window (time without a stored sample counts 0):\n\n"
		 : "  each GPU's means over the window (time without a stored sample counts 0):\n", out);
	for (size_t i = 0; i < k->ndevices; i++) {
		const struct device_utilization *d = &k->devices[i];
		int n = 0;

		fprintf(out, md ? "- GPU %" PRId64 : "    GPU %" PRId64, d->device);
		if (device_shared(k, d))
			fprintf(out, " (trace %" PRId64 ")", d->trace_id);
		fputs(":", out);
		for (size_t j = 0; j < sizeof(shown) / sizeof(shown[0]); j++)
			if (!isnan(d->pct[shown[j].m]))
				fprintf(out, "%s %s %.0f%%", n++ ? "," : "", shown[j].label,
					d->pct[shown[j].m]);
		fprintf(out, " (over %.3f ms)\n", d->ns / 1e6);
	}
	fputs(md ? "\n" : "", out);
}

void stats_efficiency_text(FILE *out, const struct stats_efficiency *e, enum output_format format)
{
	const struct kernel_efficiencies *k = e->kernels;
	int md = format == OUTPUT_FORMAT_MARKDOWN;

	fprintf(out, md ? "### GPU busy time by what bounds it\n\n" : "GPU busy time by what bounds it\n");
	fprintf(out, md ? "Window: %s; %" PRId64 " GPU metric samples. Memory-bound: DRAM read+write >= "
			  "%.0f%% of peak; compute-bound: tensor pipes >= %.0f%% or SMs active >= %.0f%%; "
			  "latency-bound: neither; unknown: under %.0f%% of its time in samples it fills at least half of "
			  "(shorter kernels: sample faster, e.g. --gpu-metrics=20us).\n\n"
			: "  window: %s; %" PRId64 " GPU metric samples\n  memory-bound: DRAM read+write >= "
			  "%.0f%% of peak; compute-bound: tensor pipes >= %.0f%% or SMs active >= %.0f%%;\n"
			  "  latency-bound: neither; unknown: under %.0f%% of its time in samples it fills at least\n"
			  "  half of (shorter kernels: sample faster, e.g. --gpu-metrics=20us)\n",
		e->window, k->samples, KEFF_MEMORY_DRAM_PCT, KEFF_COMPUTE_TENSOR_PCT,
		KEFF_COMPUTE_SM_PCT, KEFF_MIN_COVERAGE * 100);
	text_devices(out, k, md);
	text_classes(out, k, md);
	fputs(md ? "| time (ms) | share % | launches | SM % | tensor % | hmma/imma/dmma % | "
			  "DRAM rd+wr % | GB/s | class | kernel [grid]x[block] |\n"
			  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- | :--- |\n"
			: "  time (ms) share% launches  SM% tensor% hmma/imma/dmma DRAM%rd+wr   GB/s  "
			  "class         kernel [grid]x[block]\n", out);
	for (size_t i = 0; i < k->count && i < EFFICIENCY_MAX_KERNELS; i++)
		text_kernel(out, &k->kernels[i], k->total_ns, md);
	if (k->dram_peak_gbps > 0)
		fprintf(out, md ? "\nDRAM shares are CUPTI's share of the peak; GB/s = that share of "
				  "TARGET_INFO_GPU.memoryBandwidth (%.0f GB/s).\n\n"
				: "  (DRAM %%: CUPTI's share of the peak; GB/s: that share of the device's "
				  "memoryBandwidth attribute, %.0f GB/s)\n\n",
			k->dram_peak_gbps);
	else
		fprintf(out, "\n");
}

static void json_number(FILE *out, const char *name, double v)
{
	if (isnan(v))
		fprintf(out, ", \"%s\": null", name);
	else
		fprintf(out, ", \"%s\": %.3f", name, v);
}

void stats_efficiency_json(FILE *out, const struct stats_efficiency *e)
{
	const struct kernel_efficiencies *k = e->kernels;

	fprintf(out, ",\n  \"gpu_efficiency\": {\"window\": ");
	output_json_string(out, e->window);
	fprintf(out, ", \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64 ", \"samples\": %" PRId64
		", \"kernel_ns\": %" PRId64 ", \"dram_peak_gbps\": %.1f, \"thresholds\": "
		"{\"memory_dram_pct\": %.0f, \"compute_tensor_pct\": %.0f, \"compute_sm_pct\": %.0f, "
		"\"min_coverage\": %.2f}, \"classes\": {",
		e->start, e->end, k->samples, k->total_ns, k->dram_peak_gbps, KEFF_MEMORY_DRAM_PCT,
		KEFF_COMPUTE_TENSOR_PCT, KEFF_COMPUTE_SM_PCT, KEFF_MIN_COVERAGE);
	for (int b = 0; b < KERNEL_BOUND_COUNT; b++)
		fprintf(out, "%s\"%s\": {\"ns\": %" PRId64 ", \"share\": %.6f}", b ? ", " : "",
			kernel_bound_name((enum kernel_bound)b), k->bound_ns[b],
			pct_share(k->bound_ns[b], k->total_ns) / 100.0);
	fprintf(out, "},\n    \"devices\": [");
	for (size_t i = 0; i < k->ndevices; i++) {
		const struct device_utilization *d = &k->devices[i];

		fprintf(out, "%s{\"trace_id\": %" PRId64 ", \"device\": %" PRId64 ", \"ns\": %" PRId64,
			i ? ", " : "", d->trace_id, d->device, d->ns);
		json_number(out, "sm_active_pct", d->pct[GS_SM_ACTIVE]);
		json_number(out, "tensor_active_pct", d->pct[GS_TENSOR]);
		json_number(out, "hmma_pct", d->pct[GS_HMMA]);
		json_number(out, "dram_read_pct", d->pct[GS_DRAM_READ]);
		json_number(out, "dram_write_pct", d->pct[GS_DRAM_WRITE]);
		json_number(out, "pcie_rx_pct", d->pct[GS_PCIE_RX]);
		json_number(out, "pcie_tx_pct", d->pct[GS_PCIE_TX]);
		fputs("}", out);
	}
	fprintf(out, "],\n    \"kernels\": [");
	for (size_t i = 0; i < k->count; i++) {
		const struct kernel_efficiency *r = &k->kernels[i];

		fprintf(out, "%s\n      {\"name\": ", i ? "," : "");
		output_json_string(out, r->name);
		fprintf(out, ", \"grid\": [%" PRId64 ", %" PRId64 ", %" PRId64 "], \"block\": [%" PRId64
			", %" PRId64 ", %" PRId64 "], \"launches\": %" PRId64 ", \"time_ns\": %" PRId64
			", \"sampled_ns\": %" PRId64, r->grid[0], r->grid[1], r->grid[2], r->block[0],
			r->block[1], r->block[2], r->launches, r->time_ns, r->sampled_ns);
		json_number(out, "sm_active_pct", r->sm_pct);
		json_number(out, "tensor_active_pct", r->tensor_pct);
		json_number(out, "hmma_pct", r->hmma_pct);
		json_number(out, "imma_pct", r->imma_pct);
		json_number(out, "dmma_pct", r->dmma_pct);
		json_number(out, "dram_read_pct", r->dram_read_pct);
		json_number(out, "dram_write_pct", r->dram_write_pct);
		json_number(out, "dram_gbps", r->dram_gbps);
		fprintf(out, ", \"class\": \"%s\"}", kernel_bound_name(r->bound));
	}
	fprintf(out, "%s]}", k->count ? "\n    " : "");
}
