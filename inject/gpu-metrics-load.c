/*
 * CUPTI's PM-sampling functions for the GPU metrics (gpu-metrics-private.h): looked up in the CUPTI
 * library the injected library loaded, as the host API's are (metrics-host.c), and CUPTI's results
 * said in the user's words, one line per problem.
 */
#define _GNU_SOURCE
#include "inject/gpu-metrics-private.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

struct gpu_metrics_cupti gpu_metrics_cupti;

int gpu_metrics_load(void *cupti_lib, char *err, size_t errlen)
{
	void *lib = cupti_lib ? cupti_lib : RTLD_DEFAULT;
	const char *missing;

#define GPU_METRICS_LOAD(name)                                                                     \
	*(void **)&gpu_metrics_cupti.name = dlsym(lib, "cupti" #name);                             \
	if (!gpu_metrics_cupti.name) {                                                             \
		missing = "cupti" #name;                                                           \
		goto out_missing;                                                                  \
	}
	GPU_METRICS_CUPTI_CALLS(GPU_METRICS_LOAD)
	if (metrics_host_load(lib, &missing) < 0)
		goto out_missing;
	GPU_METRICS_PM_CALLS(GPU_METRICS_LOAD)
#undef GPU_METRICS_LOAD
	return 0;

out_missing:
	snprintf(err, errlen, "no GPU metrics: this CUPTI lacks %s (PM sampling needs CUDA 12.6 or "
		 "later); tracing goes on without them", missing);
	return -1;
}

void gpu_metrics_report(struct gpu_metrics *g, const char *fmt, ...)
{
	char line[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (g->report)
		g->report(line);
	else
		fprintf(stderr, "gpt-trace: %s\n", line);
}

static const char *reason(CUptiResult r)
{
	const char *name = NULL;

	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return "access to the GPU performance counters is restricted to administrators: "
		       "run as root, or set 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
		       "(docs/gpu-metrics.md)";
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
	case CUPTI_ERROR_HARDWARE_BUSY:
	case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
	case CUPTI_ERROR_INVALID_OPERATION:
		return "another profiler (Nsight Systems or Compute, DCGM, another CUPTI tool) "
		       "holds the GPU counters";
	case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
		return "the device is a MIG instance, where PM sampling is not supported";
	case CUPTI_ERROR_NOT_SUPPORTED:
	case CUPTI_ERROR_INVALID_DEVICE:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
		return "the device does not support PM sampling in this configuration (Turing or "
		       "later, no vGPU without profiling)";
	default:
		if (!gpu_metrics_cupti.GetResultString ||
		    gpu_metrics_cupti.GetResultString(r, &name) != CUPTI_SUCCESS || !name)
			name = "unknown CUPTI error";
		return name;
	}
}

void gpu_metrics_failed(struct gpu_metrics *g, uint32_t device, const char *call, CUptiResult r)
{
	const char *code = NULL;

	if (!gpu_metrics_cupti.GetResultString ||
	    gpu_metrics_cupti.GetResultString(r, &code) != CUPTI_SUCCESS || !code)
		code = "?";
	gpu_metrics_report(g, "no GPU metrics on device %u: %s failed: %s [%s]; tracing goes on "
			   "without them", device, call, reason(r), code);
}
