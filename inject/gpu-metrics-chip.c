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
 * chip_build. So the sets are fixed lists that have run whole (configs): on GH100, the required
 * metrics (SM cycles, DRAM bytes) with the tensor pipes, PCIe bytes and nsys's own set (22), or
 * NVLink bytes instead of nsys's set where the GPU has NVLink (13); where refused, fewer.
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

/* One metric of a configuration: the sample value it fills, and CUPTI's name for it. */
struct metric {
	enum gpu_metric_raw raw;
	const char *name;
};

#define TRIAGE "TriageCompute."
#define PCT ".avg.pct_of_peak_sustained_elapsed"

/* What the analyzer needs: SM cycles and DRAM bytes. */
static const struct metric required[] = {
	{ GPM_SM_CYCLES_ELAPSED, "sm__cycles_elapsed.sum" },
	{ GPM_SM_CYCLES_ACTIVE, "TPC." TRIAGE "sm__cycles_active.sum" },
	{ GPM_DRAM_READ_BYTES, "dram__bytes_read.sum" },
	{ GPM_DRAM_WRITE_BYTES, "dram__bytes_write.sum" },
};
/* The tensor pipes: cycles, and the HMMA (fp16, bf16, tf32) share, ours (nsys has no split). */
static const struct metric tensor_counts[] = {
	{ GPM_TENSOR_CYCLES, "TPC." TRIAGE "sm__pipe_tensor_cycles_active_realtime.sum" },
	{ GPM_HMMA_PCT, "TPC." TRIAGE "sm__pipe_tensor_op_hmma_cycles_active_realtime" PCT },
};
static const struct metric tensor_pct[] = {
	{ GPM_TENSOR_PCT, "TPC." TRIAGE "sm__pipe_tensor_cycles_active_realtime" PCT },
};
static const struct metric pcie[] = {
	{ GPM_PCIE_READ_BYTES, "PCI." TRIAGE "pcie__read_bytes.sum" },
	{ GPM_PCIE_WRITE_BYTES, "PCI." TRIAGE "pcie__write_bytes.sum" },
	{ GPM_PCIE_READ_PCT, "PCI." TRIAGE "pcie__read_bytes" PCT },
	{ GPM_PCIE_WRITE_PCT, "PCI." TRIAGE "pcie__write_bytes" PCT },
};
/* Counted in packets (docs/gpu-metrics.md); nsys's user-data counters gave 2.1-4.3 GB for 4.3 GB. */
static const struct metric nvlink[] = {
	{ GPM_NVLINK_RX_BYTES, "nvlrx__bytes.sum" },
	{ GPM_NVLINK_TX_BYTES, "nvltx__bytes.sum" },
};
/*
 * Nsight Systems' GH100 set (its GpuMetrics/gh100.config, nsys 2025.3.1), less NVLink, under the
 * names nsys writes (collector/sample-rows.c), so that its recipes read our traces: the clocks, GR
 * Active, SMs Active, SM Issue, Tensor Active, the warps in flight by kind, DRAM throughput.
 */
static const struct metric nsys_gh100[] = {
	{ GPM_GPC_CLOCK_HZ, "gpc__cycles_elapsed.avg.per_second" },
	{ GPM_SYS_CLOCK_HZ, "sys__cycles_elapsed.avg.per_second" },
	{ GPM_GR_ACTIVE_PCT, "gr__cycles_active.sum.pct_of_peak_sustained_elapsed" },
	{ GPM_SM_ACTIVE_PCT, "sm__cycles_active" PCT },
	{ GPM_SM_ISSUE_PCT, "sm__inst_executed_realtime" PCT },
	{ GPM_TENSOR_PCT, "sm__pipe_tensor_cycles_active_realtime" PCT },
	{ GPM_VTG_WARPS_PCT, "tpc__warps_active_shader_vtg_realtime" PCT },
	{ GPM_PS_WARPS_PCT, "tpc__warps_active_shader_ps_realtime" PCT },
	{ GPM_WARPS_PCT, "TPC." TRIAGE "tpc__warps_active_shader_cs_realtime" PCT },
	{ GPM_UNALLOC_WARPS_PCT, "tpc__warps_inactive_sm_active_realtime" PCT },
	{ GPM_DRAM_READ_PCT, "dram__read_throughput" PCT },
	{ GPM_DRAM_WRITE_PCT, "dram__write_throughput" PCT },
};
/* SM Issue alone of nsys's set, beside the PCIe set: what its gpu_metric_util_map needs, at 10 kHz. */
static const struct metric sm_issue[] = {
	{ GPM_SM_ISSUE_PCT, "sm__inst_executed_realtime" PCT },
};
/* Only with GPT_TRACE_GPU_METRICS_TRY=all, for re-checking a later CUPTI: GH100 refuses them. */
static const struct metric refused[] = {
	{ GPM_IMMA_PCT, "TPC." TRIAGE "sm__pipe_tensor_op_imma_cycles_active_realtime" PCT },
	{ GPM_DMMA_PCT, "SM_C." TRIAGE "smsp__pipe_tensor_op_dmma_cycles_active" PCT },
	{ GPM_GPC_CYCLES_AVG, "sm__cycles_elapsed.avg" },
};

#define COUNT(g) (sizeof(g) / sizeof(g[0]))
#define GROUP(g) { g, COUNT(g) }
_Static_assert(COUNT(required) + COUNT(tensor_counts) + COUNT(pcie) + COUNT(nsys_gh100) + COUNT(nvlink) +
		       COUNT(refused) <= GPM_NR,
	       "struct chip holds one metric per sample value at most");
struct group {
	const struct metric *metrics;
	size_t count;
};

/*
 * The configurations tried, best first, each a list of groups. Each was taken whole, in one pass,
 * by the H200 with CUPTI 13.0 (tests/gpu/busy/pm-probe/sets.sh 2026-11-27 and nsys-sets.sh
 * 2026-12-04, logs in tests/gpu/busy/logs): "nsys" 22 metrics on one H200 (GH100 only);
 * "issue" 12, the PCIe set and SM Issue; "nvlink" 13 where the GPUs have NVLink between them (the
 * nsys set with NVLink has not run: no two-GPU machine was lent since); "pcie" 11; "tensor" 7;
 * "required" 4.
 */
enum config_id {
	CONFIG_ALL,
	CONFIG_NSYS,
	CONFIG_ISSUE,
	CONFIG_NVLINK,
	CONFIG_PCIE,
	CONFIG_TENSOR,
	CONFIG_REQUIRED,
	CONFIG_NR
};
static const struct {
	const char *name;
	struct group groups[6];
} configs[CONFIG_NR] = {
	[CONFIG_ALL] = { "all", { GROUP(required), GROUP(tensor_counts), GROUP(pcie), GROUP(nsys_gh100),
				   GROUP(nvlink), GROUP(refused) } },
	[CONFIG_NSYS] = { "nsys", { GROUP(required), GROUP(tensor_counts), GROUP(pcie), GROUP(nsys_gh100) } },
	[CONFIG_ISSUE] = { "issue", { GROUP(required), GROUP(tensor_counts), GROUP(tensor_pct), GROUP(pcie),
				       GROUP(sm_issue) } },
	[CONFIG_NVLINK] = { "nvlink", { GROUP(required), GROUP(tensor_counts), GROUP(tensor_pct), GROUP(pcie),
					 GROUP(nvlink) } },
	[CONFIG_PCIE] = { "pcie", { GROUP(required), GROUP(tensor_counts), GROUP(tensor_pct), GROUP(pcie) } },
	[CONFIG_TENSOR] = { "tensor", { GROUP(required), GROUP(tensor_counts), GROUP(tensor_pct) } },
	[CONFIG_REQUIRED] = { "required", { GROUP(required) } },
};

/*
 * GPT_TRACE_GPU_METRICS_TRY, for re-checking a later CUPTI with tests/gpu/busy/stop-modes.sh:
 * "all" tries the whole metric list first (GH100 refuses it),
 * "deinit" deinitializes host objects (see chip_free).
 */
static struct {
	bool deinit, all;
	int first;	/* GPT_TRACE_GPU_METRICS_SET's configuration; -1: the default order */
} try_opts = { .first = -1 };

void gpu_metrics_chip_try(const char *spec, const char *set)
{
	try_opts.deinit = spec && strstr(spec, "deinit") != NULL;
	try_opts.all = spec && strstr(spec, "all") != NULL;
	try_opts.first = -1;
	for (int i = 0; set && i < CONFIG_NR; i++)
		if (!strcmp(set, configs[i].name))
			try_opts.first = i;
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

/* Configuration id's metrics into c's list. */
static void config_fill(struct chip *c, enum config_id id)
{
	c->count = 0;
	c->sampled = 0;
	for (size_t g = 0; g < sizeof(configs[id].groups) / sizeof(configs[id].groups[0]); g++)
		for (size_t i = 0; i < configs[id].groups[g].count; i++) {
			const struct metric *m = &configs[id].groups[g].metrics[i];

			c->names[c->count] = m->name;
			c->raws[c->count++] = m->raw;
			c->sampled |= 1u << m->raw;
		}
}

/*
 * The first configuration of the list that takes one pass: on GH100 without an NVLink peer, nsys's
 * set at intervals of 200 us or more and the PCIe set with SM Issue at shorter ones (one thread
 * decodes and evaluates 22 metrics in about 125 us a sample on the H200, 12 in about 80 us:
 * nsys-sets.sh), else the NVLink set where the device has a peer, else PCIe, tensor, required
 * (from the one GPT_TRACE_GPU_METRICS_SET names, if it does; the whole list first with
 * try_opts.all; the required ones alone with required_only). One host object per try, never
 * deinitialized (see chip_free). Growing the set a metric at a time (the first
 * version) made some twenty host objects and refused configurations, and on the H200 every traced
 * program then crashed inside libnvperf_host sooner or later; with the whole list tried first
 * (try_opts.all: GH100 refused it then), one short run in four still crashed at the sampler's
 * stop. So a chip tries only what has run on it: nsys's set is for GH100 alone, and on another
 * chip that refuses the PCIe set, the refusal comes before the set it takes.
 */
static int chip_build(struct gpu_metrics *g, struct chip *c, const uint8_t *availability,
		      bool required_only, uint32_t device)
{
	enum config_id order[CONFIG_NR];
	size_t n = 0;

	if (required_only) {
		order[n++] = CONFIG_REQUIRED;
	} else if (try_opts.first >= 0) {	/* that one, then the smaller ones of the default order */
		order[n++] = (enum config_id)try_opts.first;
		for (int i = try_opts.first + 1; i < CONFIG_NR; i++)
			if (i >= CONFIG_PCIE)
				order[n++] = (enum config_id)i;
	} else {
		if (try_opts.all)
			order[n++] = CONFIG_ALL;
		if (nvlink_peer(device))
			order[n++] = CONFIG_NVLINK;
		else if (!strcmp(c->name, "GH100"))
			order[n++] = g->interval_ns >= GPU_METRICS_NSYS_SET_MIN_INTERVAL_NS ? CONFIG_NSYS : CONFIG_ISSUE;
		order[n++] = CONFIG_PCIE;
		order[n++] = CONFIG_TENSOR;
		order[n++] = CONFIG_REQUIRED;
	}
	for (size_t t = 0; t < n; t++) {
		CUpti_Profiler_Host_Object *host;
		uint8_t *config;
		size_t size, passes;
		CUptiResult r;

		config_fill(c, order[t]);
		r = host_configure(c->name, availability, c->names, c->count, &host, &config, &size,
				   &passes);
		if (g->debug)
			gpu_metrics_report(g, "gpu metrics debug: set %s, %zu metrics: %s, %zu passes",
					   configs[order[t]].name, c->count,
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
		return 0;
	}
	c->count = 0;
	c->sampled = 0;
	gpu_metrics_report(g, "no GPU metrics on device %u: chip %s cannot sample %s and the other "
			   "required metrics in one pass; tracing goes on without them", device,
			   c->name, required[0].name);
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
