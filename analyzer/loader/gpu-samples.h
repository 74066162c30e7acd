/*
 * Sampled GPU metrics as intervals (the gpu_metrics view of trace.h, pivoted): per device, one
 * sample per timestamp holding the metrics the analysis uses, each over [start, end).
 *
 * Ours and nsys exports store one GPU_METRICS row per sample and metric at the sample's start; the
 * interval ends where the device's next sample starts (PM sampling leaves no gap between samples:
 * measured on the H100), or, after a gap longer than GPU_SAMPLES_MAX_GAP sampling periods (the
 * sampler stopped, a sample was dropped), one median period after its start.
 */
#ifndef GPT_LOADER_GPU_SAMPLES_H
#define GPT_LOADER_GPU_SAMPLES_H

#include "analyzer/loader/trace.h"

#include <stddef.h>
#include <stdint.h>

#define GPU_SAMPLES_MAX_GAP 3

/* The metrics read, by nsys's metric names (ours add the tensor pipe by precision). */
enum gpu_sample_metric {
	GS_SM_ACTIVE,		/* "SMs Active [Throughput %]" */
	GS_TENSOR,		/* "Tensor Active [Throughput %]" */
	GS_HMMA,		/* "HMMA Tensor Active [Throughput %]" (ours) */
	GS_IMMA,
	GS_DMMA,
	GS_DRAM_READ,		/* "DRAM Read Bandwidth [Throughput %]" */
	GS_DRAM_WRITE,
	GS_WARPS,		/* "Compute Warps in Flight [Throughput %]" */
	GS_PCIE_RX,		/* "PCIe RX Throughput [Throughput %]": received by the GPU */
	GS_PCIE_TX,
	GS_NR,
};

/* metricName of each. */
extern const char *const gpu_sample_names[GS_NR];

struct gpu_sample {
	int64_t start, end;
	float value[GS_NR];	/* NaN: the trace has no such metric for this sample */
};

/* One device's samples, in time order. */
struct gpu_samples {
	int64_t trace_id, device;
	struct gpu_sample *samples;
	size_t count;
	int64_t period_ns;	/* the median sampling period */
	int present[GS_NR];	/* some sample holds the metric */
};

/* Does the trace hold any GPU metrics sample? (One row read.) */
int gpu_samples_present(struct trace *trace);

/*
 * Every device's samples, of every file of the trace (unscoped: callers pick their window).
 * Returns the number of devices (0: the trace holds no GPU metrics) with *out set (free with
 * gpu_samples_free), or a negative error with one line in err.
 */
int gpu_samples_load(struct trace *trace, struct gpu_samples **out, char *err, size_t errlen);
void gpu_samples_free(struct gpu_samples *devices, size_t ndevices);

#endif
