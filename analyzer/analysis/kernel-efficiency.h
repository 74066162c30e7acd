/*
 * How well each heavy kernel uses the GPU while it runs, from sampled GPU metrics (issue 23):
 * for each kernel (by name and launch configuration) the samples that it covers for at least
 * KEFF_MIN_PURITY of their interval (its executions together), weighted by that coverage, give its
 * SMs-active, tensor-pipe (by precision where sampled) and DRAM bandwidth shares; a sample's values
 * are means over its interval, so a kernel much shorter than the interval is not judged by its
 * neighbours' activity. Each kernel is then classified (thresholds below, docs/gpu-metrics.md):
 *
 *   memory-bound     DRAM read + write bandwidth >= KEFF_MEMORY_DRAM_PCT % of the device's peak
 *   compute-bound    otherwise, tensor pipes active >= KEFF_COMPUTE_TENSOR_PCT %, or SMs active
 *                    >= KEFF_COMPUTE_SM_PCT % (SMs active is residency, not issue rate: a kernel that
 *                    fills every SM and then waits on latency also lands here)
 *   latency-bound    neither: most SMs empty (a small grid, low occupancy) or waiting on latency
 *   unknown          less than KEFF_MIN_COVERAGE of its time lay in samples it covers (not
 *                    sampled: before the sampler started, or in a gap; or shorter than the sampling
 *                    interval, with other work in the same samples: sample faster); a quarter
 *                    suffices for a kernel that repeats
 *
 * DRAM bandwidth is CUPTI's own share of peak (dram__read/write_throughput pct_of_peak_sustained,
 * what nsys stores as "DRAM Read/Write Bandwidth [Throughput %]"); the GB/s shown next to it is
 * that share of TARGET_INFO_GPU.memoryBandwidth, the device's attribute.
 *
 * A sample overlapping two concurrent kernels counts for both. Rules call this; `gpt-trace stats`
 * prints it.
 */
#ifndef GPT_ANALYSIS_KERNEL_EFFICIENCY_H
#define GPT_ANALYSIS_KERNEL_EFFICIENCY_H

#include "analyzer/loader/gpu-samples.h"
#include "analyzer/loader/trace.h"

#include <stddef.h>
#include <stdint.h>

#define KEFF_MEMORY_DRAM_PCT 50.0
#define KEFF_COMPUTE_TENSOR_PCT 30.0
#define KEFF_COMPUTE_SM_PCT 70.0
#define KEFF_MIN_COVERAGE 0.25
#define KEFF_MIN_PURITY 0.5

enum kernel_bound {
	KERNEL_BOUND_UNKNOWN,
	KERNEL_BOUND_COMPUTE,
	KERNEL_BOUND_MEMORY,
	KERNEL_BOUND_LATENCY,
};
#define KERNEL_BOUND_COUNT 4

/* "unknown", "compute-bound", "memory-bound", "latency-bound". */
const char *kernel_bound_name(enum kernel_bound bound);

struct kernel_efficiency {
	char *name;
	int64_t grid[3], block[3];
	int64_t launches;
	int64_t time_ns;	/* its executions' total time in the window */
	int64_t sampled_ns;	/* of which in samples it covers for KEFF_MIN_PURITY of their interval */
	/* overlap-weighted means over the samples, percent; NaN where not sampled */
	double sm_pct, tensor_pct, hmma_pct, imma_pct, dmma_pct, dram_read_pct, dram_write_pct;
	double dram_gbps;	/* (read + write) share of the peak bandwidth; NaN: no peak known */
	enum kernel_bound bound;
};

/*
 * A device's utilization over the window: each sampled metric's time-weighted mean over the part
 * of the window in the device's sampled range (its first sample's start to its last one's end),
 * time without a stored sample counting 0 (the recorder stores no idle sample), as the HTML
 * report's chart and nsys's gpu_metric_util_sum recipe average.
 */
struct device_utilization {
	int64_t trace_id, device;
	int64_t ns;			/* the window's time in the sampled range */
	double pct[GS_NR];		/* NaN: not sampled */
};

struct kernel_efficiencies {
	struct kernel_efficiency *kernels;	/* most time first */
	size_t count;
	int64_t total_ns;			/* kernel time in the window */
	int64_t bound_ns[KERNEL_BOUND_COUNT];	/* of which in each class */
	double dram_peak_gbps;			/* TARGET_INFO_GPU memoryBandwidth of the first GPU, 0: none */
	int64_t samples;			/* samples in the window */
	struct device_utilization *devices;	/* every sampled device with time in the window */
	size_t ndevices;
};

/*
 * Every kernel starting in [start, end) (end 0: no bound) of the trace, with the GPU metrics of
 * its device. Returns 1 with *out set (free with kernel_efficiency_free), 0 when the trace holds
 * no GPU metrics (*out NULL), or a negative error with one line in err.
 */
int kernel_efficiency_compute(struct trace *trace, int64_t start, int64_t end,
			      struct kernel_efficiencies **out, char *err, size_t errlen);
void kernel_efficiency_free(struct kernel_efficiencies *e);

/* The class of one kernel from its means (the thresholds above). */
enum kernel_bound kernel_bound_classify(double sm_pct, double tensor_pct, double dram_pct,
					double coverage);

#endif
