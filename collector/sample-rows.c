/*
 * A GPU metrics sample -> the integer values of its GPU_METRICS rows (see sample-rows.h).
 *
 * Percentages come from CUPTI's own pct_of_peak_sustained_elapsed where the sampler got one, and
 * otherwise from the counts: SMs active = active SM-cycles / elapsed SM-cycles; DRAM bandwidth =
 * bytes / duration / the device's peak. Clocks are stored in Hz, as nsys stores them under names
 * that say MHz (its exports read 1.4e9-1.7e9 for 'GPC Clock Frequency [MHz]'). The tensor pipe's
 * cycle count runs at four per SM-cycle on GH100 (measured on the H100, 2026-11-27: an HMMA loop on
 * every SM read 357%, a DMMA loop 395% of the elapsed SM-cycles), hence the 4 of the fallback.
 */
#include "collector/sample-rows.h"

#include <math.h>

const char *const gpu_metric_row_names[GPR_NR] = {
	[GPR_GPC_CLOCK] = "GPC Clock Frequency [MHz]",
	[GPR_GR_ACTIVE] = "GR Active [Throughput %]",
	[GPR_SM_ACTIVE] = "SMs Active [Throughput %]",
	[GPR_TENSOR_ACTIVE] = "Tensor Active [Throughput %]",
	[GPR_WARPS] = "Compute Warps in Flight [Throughput %]",
	[GPR_DRAM_READ] = "DRAM Read Bandwidth [Throughput %]",
	[GPR_DRAM_WRITE] = "DRAM Write Bandwidth [Throughput %]",
	[GPR_PCIE_RX] = "PCIe RX Throughput [Throughput %]",
	[GPR_PCIE_TX] = "PCIe TX Throughput [Throughput %]",
	[GPR_HMMA] = "HMMA Tensor Active [Throughput %]",
	[GPR_IMMA] = "IMMA Tensor Active [Throughput %]",
	[GPR_DMMA] = "DMMA Tensor Active [Throughput %]",
	[GPR_SYS_CLOCK] = "SYS Clock Frequency [MHz]",
	[GPR_SM_ISSUE] = "SM Issue [Throughput %]",
	[GPR_VTG_WARPS] = "Vertex/Tess/Geometry Warps in Flight [Throughput %]",
	[GPR_PS_WARPS] = "Pixel Warps in Flight [Throughput %]",
	[GPR_UNALLOC_WARPS] = "Unallocated Warps in Active SMs [Throughput %]",
};

const enum gpu_metric_raw gpu_metrics_gpt_columns[GPU_METRICS_GPT_COLUMNS] = {
	GPM_SM_CYCLES_ELAPSED, GPM_SM_CYCLES_ACTIVE, GPM_TENSOR_CYCLES,
	GPM_DRAM_READ_BYTES,   GPM_DRAM_WRITE_BYTES, GPM_PCIE_READ_BYTES,
	GPM_PCIE_WRITE_BYTES,  GPM_NVLINK_RX_BYTES,  GPM_NVLINK_TX_BYTES,
};

#define TENSOR_CYCLES_PER_SM_CYCLE 4.0

static int have(const struct gpu_metrics_sample *s, enum gpu_metric_raw m)
{
	return !isnan(s->value[m]) && !isinf(s->value[m]);
}

static int64_t percent(double v)
{
	if (!(v > 0))
		return 0;
	return v >= 100 ? 100 : (int64_t)llround(v);
}

/* A percentage from CUPTI (pct GPM_NR: none), or failing that a ratio of counts (den 0: none). */
static int pct_or_ratio(const struct gpu_metrics_sample *s, enum gpu_metric_raw pct, double num,
			double den, int64_t *out)
{
	if (pct < GPM_NR && have(s, pct)) {
		*out = percent(s->value[pct]);
		return 1;
	}
	if (isnan(num) || !(den > 0))
		return 0;
	*out = percent(100.0 * num / den);
	return 1;
}

static double value_or_nan(const struct gpu_metrics_sample *s, enum gpu_metric_raw m)
{
	return have(s, m) ? s->value[m] : NAN;
}

int gpu_metrics_idle(const struct gpu_metrics_sample *s)
{
	static const enum gpu_metric_raw traffic[] = { GPM_DRAM_READ_BYTES,  GPM_DRAM_WRITE_BYTES,
						       GPM_PCIE_READ_BYTES,  GPM_PCIE_WRITE_BYTES,
						       GPM_NVLINK_RX_BYTES, GPM_NVLINK_TX_BYTES };
	double bytes = 0;

	/* No SM cycles at all (NaN) is what a GPU that never ran a kernel reads: not active. */
	if ((have(s, GPM_SM_CYCLES_ACTIVE) && s->value[GPM_SM_CYCLES_ACTIVE] > 0) || s->end <= s->start)
		return 0;
	for (size_t i = 0; i < sizeof(traffic) / sizeof(traffic[0]); i++)
		if (have(s, traffic[i]))
			bytes += s->value[traffic[i]];
	return bytes < GPU_METRICS_IDLE_BYTES_PER_NS * (double)(s->end - s->start);
}

/* A sample's value in Hz as nsys stores its clocks (under a name that says MHz). */
static int clock_hz(const struct gpu_metrics_sample *s, enum gpu_metric_raw m, int64_t *out)
{
	if (!have(s, m) || !(s->value[m] > 0))
		return 0;
	*out = (int64_t)llround(s->value[m]);
	return 1;
}

unsigned gpu_metrics_derive(const struct gpu_metrics_sample *s, uint32_t sampled, uint64_t dram_peak_bps,
			    int64_t out[GPR_NR])
{
	double seconds = s->end > s->start ? (double)(s->end - s->start) / 1e9 : 0;
	double elapsed = value_or_nan(s, GPM_SM_CYCLES_ELAPSED);
	double dram_peak = dram_peak_bps && seconds > 0 ? (double)dram_peak_bps * seconds : 0;
	/* The SMs of a GPU the process ran no kernel on count nothing: NaN, stored as none active. */
	int sms_silent = !have(s, GPM_SM_CYCLES_ELAPSED);
	struct {
		enum gpu_metric_row row;
		enum gpu_metric_raw pct, count;	/* GPM_NR: none */
		double den;
	} sm_rows[] = {
		{ GPR_SM_ACTIVE, GPM_SM_ACTIVE_PCT, GPM_SM_CYCLES_ACTIVE, elapsed },
		{ GPR_TENSOR_ACTIVE, GPM_TENSOR_PCT, GPM_TENSOR_CYCLES, TENSOR_CYCLES_PER_SM_CYCLE * elapsed },
		{ GPR_WARPS, GPM_WARPS_PCT, GPM_NR, 0 },
		{ GPR_SM_ISSUE, GPM_SM_ISSUE_PCT, GPM_NR, 0 },
		{ GPR_VTG_WARPS, GPM_VTG_WARPS_PCT, GPM_NR, 0 },
		{ GPR_PS_WARPS, GPM_PS_WARPS_PCT, GPM_NR, 0 },
		{ GPR_UNALLOC_WARPS, GPM_UNALLOC_WARPS_PCT, GPM_NR, 0 },
		{ GPR_HMMA, GPM_HMMA_PCT, GPM_NR, 0 },
		{ GPR_IMMA, GPM_IMMA_PCT, GPM_NR, 0 },
		{ GPR_DMMA, GPM_DMMA_PCT, GPM_NR, 0 },
	};
	unsigned mask = 0;
	int i;

	for (i = 0; i < GPR_NR; i++)
		out[i] = 0;
	if (clock_hz(s, GPM_GPC_CLOCK_HZ, &out[GPR_GPC_CLOCK]))
		mask |= 1u << GPR_GPC_CLOCK;
	else if (have(s, GPM_GPC_CYCLES_AVG) && seconds > 0) {
		out[GPR_GPC_CLOCK] = (int64_t)llround(s->value[GPM_GPC_CYCLES_AVG] / seconds);
		mask |= 1u << GPR_GPC_CLOCK;
	}
	if (clock_hz(s, GPM_SYS_CLOCK_HZ, &out[GPR_SYS_CLOCK]))
		mask |= 1u << GPR_SYS_CLOCK;
	if (pct_or_ratio(s, GPM_GR_ACTIVE_PCT, NAN, 0, &out[GPR_GR_ACTIVE]))
		mask |= 1u << GPR_GR_ACTIVE;
	for (size_t r = 0; r < sizeof(sm_rows) / sizeof(sm_rows[0]); r++) {
		enum gpu_metric_raw pct = sm_rows[r].pct, count = sm_rows[r].count;
		int held = (pct < GPM_NR && (sampled & (1u << pct))) || (count < GPM_NR && (sampled & (1u << count)));

		if (pct_or_ratio(s, pct, count < GPM_NR ? value_or_nan(s, count) : NAN, sm_rows[r].den,
				 &out[sm_rows[r].row]) ||
		    (sms_silent && held))
			mask |= 1u << sm_rows[r].row;
	}
	if (pct_or_ratio(s, GPM_DRAM_READ_PCT, value_or_nan(s, GPM_DRAM_READ_BYTES), dram_peak,
			 &out[GPR_DRAM_READ]))
		mask |= 1u << GPR_DRAM_READ;
	if (pct_or_ratio(s, GPM_DRAM_WRITE_PCT, value_or_nan(s, GPM_DRAM_WRITE_BYTES), dram_peak,
			 &out[GPR_DRAM_WRITE]))
		mask |= 1u << GPR_DRAM_WRITE;
	if (pct_or_ratio(s, GPM_PCIE_READ_PCT, NAN, 0, &out[GPR_PCIE_RX]))
		mask |= 1u << GPR_PCIE_RX;
	if (pct_or_ratio(s, GPM_PCIE_WRITE_PCT, NAN, 0, &out[GPR_PCIE_TX]))
		mask |= 1u << GPR_PCIE_TX;
	return mask;
}
