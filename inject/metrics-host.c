/*
 * CUPTI's profiler host API (metrics-host.h) for the two users of CUPTI's performance counters:
 * the range profiler of the per-launch metrics (metrics-counters.c) and the PM sampler of the GPU
 * metrics (gpu-metrics-chip.c). Both build a host object for their chip, a config image of their
 * metrics with its pass count, and evaluate counter data with the host object. What each does when
 * a step fails stays with it: the range profiler deinitializes its host objects, the PM sampler
 * never does (what CUPTI 13.0 did not survive: gpu-metrics.c).
 *
 * The functions are looked up in the CUPTI library the injected library loaded, which links no
 * libcupti; both users load them from the same library, so the table is one.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "inject/metrics-host.h"

#define METRICS_HOST_CALLS(X)                                                                      \
	X(Initialize)                                                                              \
	X(Deinitialize)                                                                            \
	X(GetMetricProperties)                                                                     \
	X(ConfigAddMetrics)                                                                        \
	X(GetConfigImageSize)                                                                      \
	X(GetConfigImage)                                                                          \
	X(GetNumOfPasses)                                                                          \
	X(EvaluateToGpuValues)

#define METRICS_HOST_FIELD(name) __typeof__(&cuptiProfilerHost##name) name;
static struct {
	METRICS_HOST_CALLS(METRICS_HOST_FIELD)
} host_api;
#undef METRICS_HOST_FIELD

/* The PM sampler and the range profiler may load it from different threads. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

int metrics_host_load(void *lib, const char **missing)
{
	int rc = 0;

	if (!lib)
		lib = RTLD_DEFAULT;
	pthread_mutex_lock(&load_lock);
#define METRICS_HOST_LOAD(name)                                                                    \
	*(void **)&host_api.name = dlsym(lib, "cuptiProfilerHost" #name);                          \
	if (!host_api.name) {                                                                      \
		*missing = "cuptiProfilerHost" #name;                                              \
		rc = -1;                                                                           \
		goto out;                                                                          \
	}
	METRICS_HOST_CALLS(METRICS_HOST_LOAD)
#undef METRICS_HOST_LOAD
out:
	pthread_mutex_unlock(&load_lock);
	return rc;
}

CUptiResult metrics_host_open(gpt_cupti_profiler_type type, const char *chip,
			      const uint8_t *availability, CUpti_Profiler_Host_Object **host)
{
	gpt_host_initialize_params p = {
	    .structSize = GPT_HOST_SIZE(gpt_host_initialize_params, pHostObject)};
	CUptiResult r;

	*host = NULL;
	p.profilerType = type;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = availability;
	r = host_api.Initialize(&p);
	if (r == CUPTI_SUCCESS)
		*host = p.pHostObject;
	return r;
}

void metrics_host_close(CUpti_Profiler_Host_Object *host)
{
	gpt_host_deinitialize_params p = {
	    .structSize = GPT_HOST_SIZE(gpt_host_deinitialize_params, pHostObject)};

	if (!host)
		return;
	p.pHostObject = host;
	host_api.Deinitialize(&p);
}

CUptiResult metrics_host_metric_check(CUpti_Profiler_Host_Object *host, const char *metric)
{
	gpt_host_metric_properties_params p = {
	    .structSize = GPT_HOST_SIZE(gpt_host_metric_properties_params, metricType)};

	p.pHostObject = host;
	p.pMetricName = metric;
	return host_api.GetMetricProperties(&p);
}

CUptiResult metrics_host_config(CUpti_Profiler_Host_Object *host, const char *const *names,
				size_t count, uint8_t **config, size_t *size, const char **call)
{
	gpt_host_config_add_metrics_params add = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_add_metrics_params, numMetrics)};
	gpt_host_config_image_size_params image_size = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_image_size_params, configImageSize)};
	gpt_host_config_image_params image = {
	    .structSize = GPT_HOST_SIZE(gpt_host_config_image_params, pConfigImage)};
	CUptiResult r;

	*config = NULL;
	*call = "cuptiProfilerHostConfigAddMetrics";
	add.pHostObject = host;
	add.ppMetricNames = (const char **)names;
	add.numMetrics = count;
	r = host_api.ConfigAddMetrics(&add);
	if (r != CUPTI_SUCCESS)
		return r;
	*call = "cuptiProfilerHostGetConfigImageSize";
	image_size.pHostObject = host;
	r = host_api.GetConfigImageSize(&image_size);
	if (r != CUPTI_SUCCESS)
		return r;
	*call = NULL;
	image.pHostObject = host;
	image.configImageSize = image_size.configImageSize;
	image.pConfigImage = calloc(1, image_size.configImageSize);
	if (!image.pConfigImage)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	*call = "cuptiProfilerHostGetConfigImage";
	r = host_api.GetConfigImage(&image);
	if (r != CUPTI_SUCCESS) {
		free(image.pConfigImage);
		return r;
	}
	*call = NULL;
	*config = image.pConfigImage;
	*size = image_size.configImageSize;
	return CUPTI_SUCCESS;
}

CUptiResult metrics_host_passes(const uint8_t *config, size_t size, size_t *passes)
{
	gpt_host_num_passes_params p = {
	    .structSize = GPT_HOST_SIZE(gpt_host_num_passes_params, numOfPasses)};
	CUptiResult r;

	p.configImageSize = size;
	p.pConfigImage = (uint8_t *)config;
	r = host_api.GetNumOfPasses(&p);
	*passes = r == CUPTI_SUCCESS ? p.numOfPasses : 0;
	return r;
}

CUptiResult metrics_host_evaluate(CUpti_Profiler_Host_Object *host, const uint8_t *image,
				  size_t image_size, size_t index, const char *const *names,
				  size_t count, double *values)
{
	gpt_host_evaluate_params p = {
	    .structSize = GPT_HOST_SIZE(gpt_host_evaluate_params, pMetricValues)};

	p.pHostObject = host;
	p.pCounterDataImage = image;
	p.counterDataImageSize = image_size;
	p.rangeIndex = index;
	p.ppMetricNames = (const char **)names;
	p.numMetrics = count;
	p.pMetricValues = values;
	return host_api.EvaluateToGpuValues(&p);
}
