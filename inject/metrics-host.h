/*
 * The part of CUPTI's profiler host API (cupti_profiler_host.h, CUDA 13.0) that the range profiler
 * (inject/metrics-counters.c) and the PM sampler (inject/gpu-metrics-chip.c) call, declared for C;
 * and metrics-host.c, the steps both take with it.
 *
 * Why a copy: cupti_profiler_host.h includes <string>, so no C compiler can read it, and the
 * injected library is C. The structures below repeat the header's field for field; CUPTI checks
 * structSize on every call, so a future CUPTI that grows a structure still accepts these. A C++
 * translation unit that defines GPT_METRICS_HOST_ABI_CHECK (tests/gpu/metrics/host_abi_check.cc)
 * includes both this file and the real header and compares every size and offset; the types here
 * have their own names so the two can meet, and the check leaves out the prototypes below, which
 * would clash.
 */
#ifndef GPT_INJECT_METRICS_HOST_H
#define GPT_INJECT_METRICS_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <cupti_result.h>

#ifndef CUPTI_PROFILER_STRUCT_SIZE
#define CUPTI_PROFILER_STRUCT_SIZE(type_, lastfield_)                                              \
	(offsetof(type_, lastfield_) + sizeof(((type_ *)0)->lastfield_))
#endif

typedef enum {
	GPT_CUPTI_METRIC_TYPE_COUNTER = 0,
	GPT_CUPTI_METRIC_TYPE_RATIO,
	GPT_CUPTI_METRIC_TYPE_THROUGHPUT,
} gpt_cupti_metric_type;

typedef enum {
	GPT_CUPTI_PROFILER_TYPE_RANGE_PROFILER = 0,
	GPT_CUPTI_PROFILER_TYPE_PM_SAMPLING,
} gpt_cupti_profiler_type;

typedef struct CUpti_Profiler_Host_Object CUpti_Profiler_Host_Object;

typedef struct {
	size_t structSize;
	void *pPriv;
	int profilerType; /* CUpti_ProfilerType, an enum (int) in the header */
	const char *pChipName;
	const uint8_t *pCounterAvailabilityImage;
	CUpti_Profiler_Host_Object *pHostObject;
} gpt_host_initialize_params;

typedef struct {
	size_t structSize;
	void *pPriv;
	CUpti_Profiler_Host_Object *pHostObject;
} gpt_host_deinitialize_params;

typedef struct {
	size_t structSize;
	void *pPriv;
	CUpti_Profiler_Host_Object *pHostObject;
	const char *pMetricName;
	const char *pDescription;
	const char *pHwUnit;
	const char *pDimUnit;
	int metricType; /* CUpti_MetricType */
} gpt_host_metric_properties_params;

typedef struct {
	size_t structSize;
	void *pPriv;
	CUpti_Profiler_Host_Object *pHostObject;
	const char **ppMetricNames;
	size_t numMetrics;
} gpt_host_config_add_metrics_params;

typedef struct {
	size_t structSize;
	void *pPriv;
	CUpti_Profiler_Host_Object *pHostObject;
	size_t configImageSize;
} gpt_host_config_image_size_params;

typedef struct {
	size_t structSize;
	void *pPriv;
	CUpti_Profiler_Host_Object *pHostObject;
	size_t configImageSize;
	uint8_t *pConfigImage;
} gpt_host_config_image_params;

typedef struct {
	size_t structSize;
	void *pPriv;
	size_t configImageSize;
	uint8_t *pConfigImage;
	size_t numOfPasses;
} gpt_host_num_passes_params;

typedef struct {
	size_t structSize;
	void *pPriv;
	CUpti_Profiler_Host_Object *pHostObject;
	const uint8_t *pCounterDataImage;
	size_t counterDataImageSize;
	size_t rangeIndex;
	const char **ppMetricNames;
	size_t numMetrics;
	double *pMetricValues;
} gpt_host_evaluate_params;

#define GPT_HOST_SIZE(type, last) CUPTI_PROFILER_STRUCT_SIZE(type, last)

#ifndef GPT_METRICS_HOST_ABI_CHECK
#ifdef __cplusplus
extern "C" {
#endif
/* The real prototypes take the header's structure types; these have the same layout. */
CUptiResult cuptiProfilerHostInitialize(gpt_host_initialize_params *params);
CUptiResult cuptiProfilerHostDeinitialize(gpt_host_deinitialize_params *params);
CUptiResult cuptiProfilerHostGetMetricProperties(gpt_host_metric_properties_params *params);
CUptiResult cuptiProfilerHostConfigAddMetrics(gpt_host_config_add_metrics_params *params);
CUptiResult cuptiProfilerHostGetConfigImageSize(gpt_host_config_image_size_params *params);
CUptiResult cuptiProfilerHostGetConfigImage(gpt_host_config_image_params *params);
CUptiResult cuptiProfilerHostGetNumOfPasses(gpt_host_num_passes_params *params);
CUptiResult cuptiProfilerHostEvaluateToGpuValues(gpt_host_evaluate_params *params);
#ifdef __cplusplus
}
#endif

/*
 * metrics-host.c: the host API looked up in the CUPTI library lib (NULL: the process's symbols).
 * Returns 0, or -1 with *missing the first function this CUPTI lacks.
 */
int metrics_host_load(void *lib, const char **missing);
/* A host object of type for chip; it reads availability, which must outlive it. */
CUptiResult metrics_host_open(gpt_cupti_profiler_type type, const char *chip,
			      const uint8_t *availability, CUpti_Profiler_Host_Object **host);
/* cuptiProfilerHostDeinitialize; NULL does nothing. */
void metrics_host_close(CUpti_Profiler_Host_Object *host);
/* CUPTI_SUCCESS when host's chip has metric. */
CUptiResult metrics_host_metric_check(CUpti_Profiler_Host_Object *host, const char *metric);
/*
 * The config image of names for host: *config malloc'd, the caller's, of *size bytes. On failure
 * *config is NULL and *call the CUPTI call that failed (NULL: out of memory, and the result
 * CUPTI_ERROR_OUT_OF_MEMORY).
 */
CUptiResult metrics_host_config(CUpti_Profiler_Host_Object *host, const char *const *names,
				size_t count, uint8_t **config, size_t *size, const char **call);
/* The passes the config image takes. */
CUptiResult metrics_host_passes(const uint8_t *config, size_t size, size_t *passes);
/* The values of names in range (or sample) index of a counter data image, in names' order. */
CUptiResult metrics_host_evaluate(CUpti_Profiler_Host_Object *host, const uint8_t *image,
				  size_t image_size, size_t index, const char *const *names,
				  size_t count, double *values);
#endif

#endif
