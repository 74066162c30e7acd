/*
 * The CUPTI side of inject/metrics: per context, CUPTI's Range Profiler in auto-range,
 * kernel-replay mode for the per-launch counters (metrics-counters.c), and the SASS Metrics API,
 * with lazy patching, for the ideal sector counts per instruction and their source lines
 * (metrics-sass.c). Called only from metrics.c with the session lock held, on the launching
 * thread, with the launch's context current.
 *
 * This file holds what both share (metrics-cupti.h): CUPTI's functions in one table, the contexts,
 * the profiler initialized once, the device's support and chip, and problems said in one line.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/driver.h"
#include "inject/metrics-cupti.h"

struct metrics_cupti_fns metrics_cupti;

/*
 * CUPTI through a table: libgpt_inject.so dlopens CUPTI when CUDA starts and links no libcupti, so
 * these are looked up in the library it loaded (metrics_session_attach()).
 */
int metrics_cupti_load(void *lib, char *err, size_t errlen)
{
	const char *missing;

	if (metrics_cupti.loaded)
		return 0;
	if (!lib)
		lib = RTLD_DEFAULT;
#define METRICS_CUPTI_LOAD(name)                                                                   \
	*(void **)&metrics_cupti.name = dlsym(lib, "cupti" #name);                                 \
	if (!metrics_cupti.name) {                                                                 \
		missing = "cupti" #name;                                                           \
		goto out_missing;                                                                  \
	}
	METRICS_CUPTI_CALLS(METRICS_CUPTI_LOAD)
	if (metrics_host_load(lib, &missing) < 0)
		goto out_missing;
	METRICS_CUPTI_PROFILER_CALLS(METRICS_CUPTI_LOAD)
#undef METRICS_CUPTI_LOAD
	metrics_cupti.loaded = true;
	return 0;

out_missing:
	snprintf(err, errlen, "no hardware metrics: this CUPTI lacks %s (the Range Profiler and "
		 "SASS Metrics APIs need CUDA 12.6 or later)", missing);
	return -1;
}

const char *metrics_cupti_reason(CUptiResult r)
{
	const char *name = NULL;

	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return "access to the GPU performance counters is restricted to administrators "
		       "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): run as root, or have an "
		       "administrator set 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
		       "in a file under /etc/modprobe.d/ and reload the nvidia module (or reboot)";
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
	case CUPTI_ERROR_HARDWARE_BUSY:
	case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
		return "another profiler (Nsight Compute, Nsight Systems, cuda-gdb or another "
		       "CUPTI tool) holds the GPU counters";
	case CUPTI_ERROR_NOT_SUPPORTED:
	case CUPTI_ERROR_INVALID_DEVICE:
	case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
		return "the device does not support CUPTI profiling in this configuration";
	default:
		if (!metrics_cupti.GetResultString ||
		    metrics_cupti.GetResultString(r, &name) != CUPTI_SUCCESS || !name)
			name = "unknown CUPTI error";
		return name;
	}
}

/* One line naming the device, the CUPTI call and the reason; the context goes on unprofiled. */
void metrics_context_failed(struct metrics_session *s, struct metrics_context *c, const char *what,
			    const char *call, CUptiResult r)
{
	const char *name = NULL;

	if (!metrics_cupti.GetResultString ||
	    metrics_cupti.GetResultString(r, &name) != CUPTI_SUCCESS || !name)
		name = "?";
	metrics_report(s,
		       "no %s on device %u: %s failed: %s [%s]; the program continues without them",
		       what, c->device_id, call, metrics_cupti_reason(r), name);
}

struct metrics_context *metrics_context_get(struct metrics_session *s, CUcontext ctx)
{
	struct metrics_context *c;

	for (c = s->contexts; c; c = c->next)
		if (c->ctx == ctx)
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ctx = ctx;
	if (metrics_cupti.GetDeviceId(ctx, &c->device_id) != CUPTI_SUCCESS)
		c->device_id = 0;
	if (metrics_cupti.GetContextId(ctx, &c->context_id) != CUPTI_SUCCESS)
		c->context_id = 0;
	c->next = s->contexts;
	s->contexts = c;
	return c;
}

int metrics_profiler_init(struct metrics_session *s, struct metrics_context *c, const char *what)
{
	CUpti_Profiler_Initialize_Params p = {.structSize =
						  CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	CUptiResult r;

	if (s->profiler_initialized)
		return 0;
	if (s->profiler_failed)
		return -1;
	r = metrics_cupti.ProfilerInitialize(&p);
	if (r != CUPTI_SUCCESS) {
		s->profiler_failed = true;
		metrics_context_failed(s, c, what, "cuptiProfilerInitialize", r);
		return -1;
	}
	s->profiler_initialized = true;
	return 0;
}

/* Says which of CUPTI's support flags is off, in one line. */
int metrics_device_supported(struct metrics_session *s, struct metrics_context *c,
			     CUpti_Profiler_API which, const char *what)
{
	CUpti_Profiler_DeviceSupported_Params p = {
	    .structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
	const char *why = "unknown reason";
	CUptiResult r;

	p.cuDevice = (CUdevice)c->device_id;
	p.api = which;
	r = metrics_cupti.ProfilerDeviceSupported(&p);
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, what, "cuptiProfilerDeviceSupported", r);
		return -1;
	}
	if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return 0;
	if (p.architecture == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why =
		    "its architecture is not supported (compute capability 7.5 or later is needed)";
	else if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED)
		why = "profiling is disabled on this vGPU by the hypervisor";
	else if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "this vGPU does not support profiling";
	else if (p.confidentialCompute == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "confidential computing is on";
	else if (p.cmp == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "it is a crypto-mining processor (CMP)";
	else if (p.sli == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "SLI is on";
	else if (p.wsl == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED)
		why = "WSL is not supported";
	metrics_report(s,
		       "no %s on device %u: the device is not supported: %s; the program "
		       "continues without them",
		       what, c->device_id, why);
	return -1;
}

const char *metrics_chip_name(struct metrics_session *s, struct metrics_context *c,
			      const char *what)
{
	CUpti_Device_GetChipName_Params p = {.structSize =
						 CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	CUptiResult r;

	p.deviceIndex = c->device_id;
	r = metrics_cupti.DeviceGetChipName(&p);
	if (r != CUPTI_SUCCESS || !p.pChipName) {
		metrics_context_failed(s, c, what, "cuptiDeviceGetChipName", r);
		return NULL;
	}
	return p.pChipName;
}

/* cuCtxSynchronize from the driver the program has loaded (driver.h). */
CUresult metrics_context_synchronize(void)
{
	static CUresult (*sync)(void);

	if (!sync)
		*(void **)&sync = driver_function("cuCtxSynchronize");
	return sync ? sync() : CUDA_ERROR_NOT_INITIALIZED;
}
