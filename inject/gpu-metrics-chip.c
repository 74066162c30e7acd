/*
 * The chip side of the GPU metrics (gpu-metrics-private.h): per chip, a host object of type
 * PM_SAMPLING built from the first device's counter availability image, and a config image of the
 * metrics below, through the profiler host API (metrics-host.c). The counter availability image
 * lives as long as the chip: the host objects keep reading it.
 *
 * Which metrics: the sampler takes only sets that fit in one pass, and it refuses some that its
 * host API accepts (on the H100, 2026-11-27, cuptiProfilerHostConfigAddMetrics failed with
 * CUPTI_ERROR_UNKNOWN for a 34-metric set that the host API alone, without the device's
 * availability image, called one pass). A refused configuration is not harmless either: see
 * chip_build. So the set is the required metrics (SM cycles, DRAM bytes) with the tensor pipes,
 * PCIe bytes and, where the GPU has NVLink, NVLink bytes: eleven or thirteen on GH100; where that
 * is refused, fewer (in_tier).
 *
 * A host object deinitialized while the process samples, and a refused configuration, are two of
 * the things CUPTI 13.0 did not survive (the top of gpu-metrics.c): so the host objects live until
 * the process ends, and no more configurations are tried than chip_build says.
 */
#define _GNU_SOURCE
#include "inject/gpu-metrics-private.h"
#include "inject/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CANDIDATES 3

/* What we ask the sampler for, in order: required first, then by use to the analyzer. */
static const struct wanted_metric {
	enum gpu_metric_raw raw;
	bool required;
	const char *names[MAX_CANDIDATES];	/* CUPTI metric names, tried in turn */
} wanted[] = {
	{ GPM_SM_CYCLES_ELAPSED, true, { "sm__cycles_elapsed.sum" } },
	{ GPM_SM_CYCLES_ACTIVE, true,
	  { "TPC.TriageCompute.sm__cycles_active.sum", "sm__cycles_active.sum" } },
	{ GPM_DRAM_READ_BYTES, true, { "dram__bytes_read.sum" } },
	{ GPM_DRAM_WRITE_BYTES, true, { "dram__bytes_write.sum" } },
	{ GPM_TENSOR_CYCLES, false,
	  { "TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.sum",
	    "sm__pipe_tensor_cycles_active_realtime.sum" } },
	{ GPM_TENSOR_PCT, false,
	  { "TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_HMMA_PCT, false,
	  { "TPC.TriageCompute.sm__pipe_tensor_op_hmma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_IMMA_PCT, false,
	  { "TPC.TriageCompute.sm__pipe_tensor_op_imma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_DMMA_PCT, false,
	  { "SM_C.TriageCompute.smsp__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_GPC_CYCLES_AVG, false, { "sm__cycles_elapsed.avg" } },
	{ GPM_PCIE_READ_BYTES, false,
	  { "PCI.TriageCompute.pcie__read_bytes.sum", "pcie__read_bytes.sum" } },
	{ GPM_PCIE_WRITE_BYTES, false,
	  { "PCI.TriageCompute.pcie__write_bytes.sum", "pcie__write_bytes.sum" } },
	{ GPM_DRAM_READ_PCT, false,
	  { "dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
	    "FBSP.TriageCompute.dramc__read_throughput.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_DRAM_WRITE_PCT, false,
	  { "dram__write_throughput.avg.pct_of_peak_sustained_elapsed",
	    "FBSP.TriageCompute.dramc__write_throughput.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_PCIE_READ_PCT, false,
	  { "PCI.TriageCompute.pcie__read_bytes.avg.pct_of_peak_sustained_elapsed",
	    "pcie__read_bytes.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_PCIE_WRITE_PCT, false,
	  { "PCI.TriageCompute.pcie__write_bytes.avg.pct_of_peak_sustained_elapsed",
	    "pcie__write_bytes.avg.pct_of_peak_sustained_elapsed" } },
	{ GPM_NVLINK_RX_BYTES, false, { "nvlrx__bytes.sum" } },
	{ GPM_NVLINK_TX_BYTES, false, { "nvltx__bytes.sum" } },
	{ GPM_GR_ACTIVE_PCT, false,
	  { "FE_B.TriageCompute.gr__cycles_active.sum.pct_of_peak_sustained_elapsed",
	    "gr__cycles_active.sum.pct_of_peak_sustained_elapsed" } },
	{ GPM_WARPS_PCT, false,
	  { "TPC.TriageCompute.tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
};
#define NR_WANTED (sizeof(wanted) / sizeof(wanted[0]))
_Static_assert(NR_WANTED <= GPM_NR, "struct chip holds one metric per sample value at most");

/*
 * GPT_TRACE_GPU_METRICS_TRY, for re-checking a later CUPTI with tests/gpu/busy/stop-modes.sh:
 * "all" tries the whole metric list first (GH100 refuses it),
 * "deinit" deinitializes host objects (see chip_free).
 */
static struct {
	bool deinit, all;
} try_opts;

void gpu_metrics_chip_try(const char *spec)
{
	if (!spec)
		return;
	try_opts.deinit = strstr(spec, "deinit") != NULL;
	try_opts.all = strstr(spec, "all") != NULL;
}

static void host_free(CUpti_Profiler_Host_Object *host)
{
	if (try_opts.deinit)
		metrics_host_close(host);
}

/*
 * A host object for chip configured with names; *passes its pass count. Returns CUPTI's result;
 * on success *host and the config image are the caller's.
 */
static CUptiResult host_configure(const char *chip, const uint8_t *availability,
				  const char *const *names, size_t count,
				  CUpti_Profiler_Host_Object **host, uint8_t **config,
				  size_t *config_size, size_t *passes)
{
	const char *call;
	CUptiResult r;

	*config = NULL;
	r = metrics_host_open(GPT_CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, availability, host);
	if (r != CUPTI_SUCCESS)
		return r;
	r = metrics_host_config(*host, names, count, config, config_size, &call);
	if (r == CUPTI_SUCCESS) {
		r = metrics_host_passes(*config, *config_size, passes);
		if (r != CUPTI_SUCCESS) {
			free(*config);
			*config = NULL;
		}
	}
	/* Not deinitialized: what CUPTI left of a refused configuration is not ours to trust. */
	if (r != CUPTI_SUCCESS)
		*host = NULL;
	return r;
}

/*
 * Is raw in tier: 0 the required metrics, 1 with the tensor pipes, 2 with PCIe bytes and
 * percentages, 3 with NVLink bytes, 4 all. On the H200 with CUPTI 13.0 (2026-11-27,
 * tests/gpu/busy/pm-probe/sets.sh): tier 3 (13 metrics) takes one pass where the GPUs have NVLink
 * between them; on one H200 without, any set with NVLink bytes is refused (CUPTI_ERROR_UNKNOWN in
 * cuptiProfilerHostConfigAddMetrics), tier 2 (11) takes one pass.
 */
static bool in_tier(const struct wanted_metric *w, int tier)
{
	switch (w->raw) {
	case GPM_TENSOR_CYCLES:
	case GPM_TENSOR_PCT:
	case GPM_HMMA_PCT:
		return tier >= 1;
	case GPM_PCIE_READ_BYTES:
	case GPM_PCIE_WRITE_BYTES:
	case GPM_PCIE_READ_PCT:
	case GPM_PCIE_WRITE_PCT:
		return tier >= 2;
	case GPM_NVLINK_RX_BYTES:
	case GPM_NVLINK_TX_BYTES:
		return tier >= 3;
	default:
		return w->required || tier >= 4;
	}
}

/*
 * Does device reach another GPU over NVLink? Native atomics between two GPUs are NVLink's (PCIe
 * peers have none). Asked so that a GPU without NVLink is never given the NVLink set: a refused
 * configuration is one of the things CUPTI did not survive (chip_build).
 */
static bool nvlink_peer(uint32_t device)
{
	CUresult (*count_fn)(int *) = (CUresult (*)(int *))driver_function("cuDeviceGetCount");
	CUresult (*p2p)(int *, CUdevice_P2PAttribute, CUdevice, CUdevice) =
		(CUresult (*)(int *, CUdevice_P2PAttribute, CUdevice, CUdevice))driver_function(
			"cuDeviceGetP2PAttribute");
	int count = 0;

	if (!count_fn || !p2p || count_fn(&count) != CUDA_SUCCESS)
		return false;
	for (int peer = 0; peer < count; peer++) {
		int atomics = 0;

		if ((uint32_t)peer != device &&
		    p2p(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, (CUdevice)device,
			(CUdevice)peer) == CUDA_SUCCESS && atomics)
			return true;
	}
	return false;
}

/*
 * The set in at most four configurations, each with every metric's first name (see in_tier):
 * tier 3 where the device has NVLink, else tier 2; else tier 1; else the required ones alone.
 * One host object per try, never deinitialized (see chip_free). Growing the set a metric at a
 * time (the first version) made some twenty host objects and refused configurations, and on the
 * H200 every traced program then crashed inside libnvperf_host sooner or later; with the whole
 * list tried first (try_opts.all: GH100 refuses it), one short run in four still crashed at the
 * sampler's stop. Only GH100 has run this: on another chip that refuses tier 2, the refusal
 * comes before the set it takes.
 */
static int chip_build(struct gpu_metrics *g, struct chip *c, const uint8_t *availability,
		      bool required_only, uint32_t device)
{
	int first = required_only ? 0 : try_opts.all ? 4 : nvlink_peer(device) ? 3 : 2;

	for (int tier = first; tier >= 0; tier--) {
		CUpti_Profiler_Host_Object *host;
		uint8_t *config;
		size_t size, passes, n = 0;
		CUptiResult r;

		for (size_t i = 0; i < NR_WANTED; i++) {
			if (!in_tier(&wanted[i], tier))
				continue;
			c->names[n] = wanted[i].names[0];
			c->raws[n++] = wanted[i].raw;
		}
		r = host_configure(c->name, availability, c->names, n, &host, &config, &size,
				   &passes);
		if (g->debug)
			gpu_metrics_report(g, "gpu metrics debug: tier %d, %zu metrics: %s, %zu "
					   "passes", tier, n,
					   r == CUPTI_SUCCESS ? "configured" : "refused",
					   r == CUPTI_SUCCESS ? passes : 0);
		if (r != CUPTI_SUCCESS)
			continue;
		if (passes != 1) {
			free(config);
			continue;
		}
		c->host = host;
		c->config = config;
		c->config_size = size;
		c->count = n;
		return 0;
	}
	gpu_metrics_report(g, "no GPU metrics on device %u: chip %s cannot sample %s and the other "
			   "required metrics in one pass; tracing goes on without them", device,
			   c->name, wanted[0].names[0]);
	return -1;
}

/* The host object, and the availability image it reads, stay unless try_opts.deinit. */
void gpu_metrics_chip_free(struct chip *c)
{
	if (!c)
		return;
	host_free(c->host);
	free(c->config);
	if (try_opts.deinit)
		free(c->availability);
	free(c);
}

/* device's counter availability image (malloc'd), or NULL with one line said. */
static uint8_t *availability_get(struct gpu_metrics *g, uint32_t device)
{
	CUpti_PmSampling_GetCounterAvailability_Params avail = {
	    .structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
	uint8_t *image = NULL;
	CUptiResult r;

	/* Where profiling is restricted to administrators, this is the call that says so. */
	avail.deviceIndex = device;
	r = gpu_metrics_cupti.PmSamplingGetCounterAvailability(&avail);
	if (r == CUPTI_SUCCESS) {
		image = calloc(1, avail.counterAvailabilityImageSize);
		avail.pCounterAvailabilityImage = image;
		r = image ? gpu_metrics_cupti.PmSamplingGetCounterAvailability(&avail)
			  : CUPTI_ERROR_OUT_OF_MEMORY;
	}
	if (r != CUPTI_SUCCESS) {
		gpu_metrics_failed(g, device, "cuptiPmSamplingGetCounterAvailability", r);
		free(image);
		return NULL;
	}
	return image;
}

struct chip *gpu_metrics_chip_setup(struct gpu_metrics *g, uint32_t device, bool required_only)
{
	CUpti_Device_GetChipName_Params name = {.structSize =
						    CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	uint8_t *image;
	struct chip *c;
	CUptiResult r;

	name.deviceIndex = device;
	r = gpu_metrics_cupti.DeviceGetChipName(&name);
	if (r != CUPTI_SUCCESS || !name.pChipName) {
		gpu_metrics_failed(g, device, "cuptiDeviceGetChipName", r);
		return NULL;
	}
	image = availability_get(g, device);
	if (!image)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		free(image);
		return NULL;
	}
	snprintf(c->name, sizeof(c->name), "%s", name.pChipName);
	/*
	 * The host objects read the availability image after cuptiProfilerHostInitialize (the range
	 * profiler's chip keeps it too, metrics-counters.c): it lives as long as the chip.
	 */
	c->availability = image;
	if (chip_build(g, c, c->availability, required_only, device) < 0) {
		gpu_metrics_chip_free(c);
		c = NULL;
	}
	return c;
}
