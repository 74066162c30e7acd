/*
 * Compile-time check that inject/metrics-host.h, the C copy of the part of cupti_profiler_host.h
 * that inject/metrics.c calls, has exactly the layout of the real (C++-only) header. It compiles or
 * it does not; the program itself only prints "ok".
 */
#include <cstddef>
#include <cstdio>
#include <cupti_profiler_host.h>
#define GPT_METRICS_HOST_ABI_CHECK 1
#include "inject/metrics-host.h"

#define SAME(mine, theirs, field)                                                                  \
	static_assert(offsetof(mine, field) == offsetof(theirs, field), #theirs "." #field);       \
	static_assert(sizeof(((mine *)0)->field) == sizeof(((theirs *)0)->field),                  \
		      #theirs "." #field)
#define SAME_SIZE(mine, theirs) static_assert(sizeof(mine) == sizeof(theirs), #theirs)

SAME_SIZE(gpt_host_initialize_params, CUpti_Profiler_Host_Initialize_Params);
SAME(gpt_host_initialize_params, CUpti_Profiler_Host_Initialize_Params, structSize);
SAME(gpt_host_initialize_params, CUpti_Profiler_Host_Initialize_Params, pPriv);
SAME(gpt_host_initialize_params, CUpti_Profiler_Host_Initialize_Params, profilerType);
SAME(gpt_host_initialize_params, CUpti_Profiler_Host_Initialize_Params, pChipName);
SAME(gpt_host_initialize_params, CUpti_Profiler_Host_Initialize_Params, pCounterAvailabilityImage);
SAME(gpt_host_initialize_params, CUpti_Profiler_Host_Initialize_Params, pHostObject);
static_assert(CUPTI_PROFILER_TYPE_RANGE_PROFILER == (int)GPT_CUPTI_PROFILER_TYPE_RANGE_PROFILER,
	      "type");

SAME_SIZE(gpt_host_deinitialize_params, CUpti_Profiler_Host_Deinitialize_Params);
SAME(gpt_host_deinitialize_params, CUpti_Profiler_Host_Deinitialize_Params, pHostObject);

SAME_SIZE(gpt_host_metric_properties_params, CUpti_Profiler_Host_GetMetricProperties_Params);
SAME(gpt_host_metric_properties_params, CUpti_Profiler_Host_GetMetricProperties_Params,
     pHostObject);
SAME(gpt_host_metric_properties_params, CUpti_Profiler_Host_GetMetricProperties_Params,
     pMetricName);
SAME(gpt_host_metric_properties_params, CUpti_Profiler_Host_GetMetricProperties_Params,
     pDescription);
SAME(gpt_host_metric_properties_params, CUpti_Profiler_Host_GetMetricProperties_Params, pHwUnit);
SAME(gpt_host_metric_properties_params, CUpti_Profiler_Host_GetMetricProperties_Params, pDimUnit);
SAME(gpt_host_metric_properties_params, CUpti_Profiler_Host_GetMetricProperties_Params, metricType);

SAME_SIZE(gpt_host_config_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params);
SAME(gpt_host_config_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, pHostObject);
SAME(gpt_host_config_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params,
     ppMetricNames);
SAME(gpt_host_config_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics);

SAME_SIZE(gpt_host_config_image_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params);
SAME(gpt_host_config_image_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params, pHostObject);
SAME(gpt_host_config_image_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params,
     configImageSize);

SAME_SIZE(gpt_host_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params);
SAME(gpt_host_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params, pHostObject);
SAME(gpt_host_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params, configImageSize);
SAME(gpt_host_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage);

SAME_SIZE(gpt_host_num_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params);
SAME(gpt_host_num_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, configImageSize);
SAME(gpt_host_num_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, pConfigImage);
SAME(gpt_host_num_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, numOfPasses);

SAME_SIZE(gpt_host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params);
SAME(gpt_host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pHostObject);
SAME(gpt_host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pCounterDataImage);
SAME(gpt_host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params,
     counterDataImageSize);
SAME(gpt_host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, rangeIndex);
SAME(gpt_host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, ppMetricNames);
SAME(gpt_host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, numMetrics);
SAME(gpt_host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pMetricValues);

int main()
{
	std::puts("ok");
	return 0;
}
