/*
 * GPU metrics samples (issue 23): what inject/gpu-metrics-sampler.c hands the collector, and how a sample
 * becomes rows the way Nsight Systems stores its GPU metrics.
 *
 * A sample is one PM-sampling interval of one device: its start and end (absolute ns on the
 * records' clock: CUPTI converts the sampler's timestamps with the clock the library registered,
 * measured on the H100) and the values CUPTI evaluated for the metrics below (NaN: not collected,
 * or CUPTI gave none). The collector writes each sample as one wide GPT_GPU_METRICS row (bytes,
 * cycles, the precise values) and as GPU_METRICS rows, one per nsys metric, integer values, mostly
 * percentages 0..100 (gpu_metrics_derive), described once per device in TARGET_INFO_GPU_METRICS.
 * docs/schema.md has the tables and the formulas.
 */
#ifndef GPT_COLLECTOR_SAMPLE_ROWS_H
#define GPT_COLLECTOR_SAMPLE_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* What a sample carries, whatever CUPTI metric measured it (inject/gpu-metrics-chip.c names them). */
enum gpu_metric_raw {
	GPM_SM_CYCLES_ELAPSED,	/* sum over SMs of cycles elapsed */
	GPM_SM_CYCLES_ACTIVE,	/* sum over SMs of cycles with at least one warp resident */
	GPM_TENSOR_CYCLES,	/* tensor pipe active cycles, summed over SMs (4 per SM-cycle on GH100) */
	GPM_TENSOR_PCT,		/* tensor pipe active, % of peak sustained elapsed */
	GPM_HMMA_PCT,		/* ... of which HMMA (fp16, bf16, tf32) */
	GPM_IMMA_PCT,		/* ... IMMA (int8, int4) */
	GPM_DMMA_PCT,		/* ... DMMA (fp64) */
	GPM_DRAM_READ_BYTES,
	GPM_DRAM_WRITE_BYTES,
	GPM_DRAM_READ_PCT,	/* DRAM read throughput, % of peak */
	GPM_DRAM_WRITE_PCT,
	GPM_PCIE_READ_BYTES,	/* bytes the GPU received over PCIe (nsys: RX) */
	GPM_PCIE_WRITE_BYTES,	/* bytes it sent (TX) */
	GPM_PCIE_READ_PCT,
	GPM_PCIE_WRITE_PCT,
	GPM_NVLINK_RX_BYTES,
	GPM_NVLINK_TX_BYTES,
	GPM_GR_ACTIVE_PCT,	/* graphics/compute engine active */
	GPM_WARPS_PCT,		/* compute warps in flight, % of the SMs' warp slots */
	GPM_GPC_CYCLES_AVG,	/* cycles elapsed per SM: GPC clock = this / duration */
	GPM_SM_ACTIVE_PCT,	/* SMs with a warp in flight, % of cycles (nsys's SMs Active) */
	GPM_SM_ISSUE_PCT,	/* instructions issued, % of 4 per SM-cycle */
	GPM_VTG_WARPS_PCT,	/* graphics warps in flight (0 in compute work), as nsys samples them */
	GPM_PS_WARPS_PCT,
	GPM_UNALLOC_WARPS_PCT,	/* warp slots free on active SMs */
	GPM_GPC_CLOCK_HZ,	/* gpc__cycles_elapsed.avg.per_second */
	GPM_SYS_CLOCK_HZ,
	GPM_NR,
};
_Static_assert(GPM_NR <= 32, "a batch's sampled mask holds one bit per sample value");

struct gpu_metrics_sample {
	uint64_t start, end;	/* absolute ns */
	double value[GPM_NR];	/* NaN: none */
};

/* One device's samples, as the sampler decoded them (malloc'd, the collector frees it). */
struct gpu_metrics_batch {
	uint32_t device_id;
	uint32_t sampled;	/* bit m: the sampler's configuration holds value m */
	size_t count;
	struct gpu_metrics_sample samples[];
};

/* GPT_GPU_METRICS's value columns, in table order, and the sample value each holds. */
#define GPU_METRICS_GPT_COLUMNS 9
extern const enum gpu_metric_raw gpu_metrics_gpt_columns[GPU_METRICS_GPT_COLUMNS];

/* The metrics stored in GPU_METRICS: nsys's names, where nsys has the metric. */
enum gpu_metric_row {
	GPR_GPC_CLOCK,
	GPR_GR_ACTIVE,
	GPR_SM_ACTIVE,
	GPR_TENSOR_ACTIVE,
	GPR_WARPS,
	GPR_DRAM_READ,
	GPR_DRAM_WRITE,
	GPR_PCIE_RX,
	GPR_PCIE_TX,
	GPR_HMMA,		/* ours: the tensor pipe split by precision */
	GPR_IMMA,
	GPR_DMMA,
	GPR_SYS_CLOCK,		/* since 2026-12-04: the rest of nsys's GH100 set */
	GPR_SM_ISSUE,
	GPR_VTG_WARPS,
	GPR_PS_WARPS,
	GPR_UNALLOC_WARPS,
	GPR_NR,
};

/* metricName of each, as TARGET_INFO_GPU_METRICS holds it. */
extern const char *const gpu_metric_row_names[GPR_NR];

/* TARGET_INFO_GPU_METRICS.typeId of a device's metrics; typeId & 0xFF is the device id. */
#define GPU_METRICS_TYPE_BASE 0x1000100000000ll
#define GPU_METRICS_TYPE_ID(device) (GPU_METRICS_TYPE_BASE | ((int64_t)(device) & 0xFF))

/*
 * An idle sample: no SM held a warp, and DRAM, PCIe and NVLink together moved under
 * GPU_METRICS_IDLE_BYTES_PER_NS (1 GB/s; an idle H100 moved 0.03-0.1 GB/s, a copy 10-58 GB/s). A
 * sample with no SM cycles at all counts as no SM active: on 2 H200s, a GPU the process never ran a
 * kernel on read NaN for them, and JAX's unused GPU stored every sample. The writer stores idle
 * samples like the others, as nsys does (SQL that averages rows then averages time), and counts
 * them apart (GPT_META gpu_metric_samples_idle).
 */
#define GPU_METRICS_IDLE_BYTES_PER_NS 1.0
int gpu_metrics_idle(const struct gpu_metrics_sample *s);

/*
 * The GPU_METRICS values of sample s: out[i] is set and bit i of the result is 1 for each row that
 * can be derived. sampled is the batch's mask of the values the sampler's configuration holds: on
 * a GPU whose SMs counted nothing (NaN SM cycles: the process ran no kernel there), the SM rows it
 * holds are 0, so every GPU of a trace has the same rows. dram_peak_bps is the device's DRAM
 * bandwidth in B/s (TARGET_INFO_GPU memoryBandwidth; 0: unknown), used when the sampler gave bytes
 * but no DRAM percentage.
 */
unsigned gpu_metrics_derive(const struct gpu_metrics_sample *s, uint32_t sampled, uint64_t dram_peak_bps,
			    int64_t out[GPR_NR]);

#endif
