/*
 * Private to the CUPTI side of inject/metrics: what metrics-cupti.c holds for the range profiler
 * (metrics-counters.c) and the SASS metrics (metrics-sass.c): CUPTI's functions in one table, and
 * the steps both take on a context before profiling it. What metrics.c calls of the three is in
 * metrics-internal.h.
 */
#ifndef GPT_INJECT_METRICS_CUPTI_H
#define GPT_INJECT_METRICS_CUPTI_H

#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include "inject/metrics-internal.h"

/*
 * CUPTI's functions besides the host API's (metrics-host.c), from the library CUPTI was loaded
 * from; looked up in this order, the host API's between the two lists (the first one missing is
 * named).
 */
#define METRICS_CUPTI_CALLS(X)                                                                     \
	X(GetResultString)                                                                         \
	X(GetDeviceId)                                                                             \
	X(GetContextId)                                                                            \
	X(GetCubinCrc)                                                                             \
	X(GetSassToSourceCorrelation)                                                              \
	X(DeviceGetChipName)                                                                       \
	X(ProfilerInitialize)                                                                      \
	X(ProfilerDeviceSupported)                                                                 \
	X(ProfilerGetCounterAvailability)
#define METRICS_CUPTI_PROFILER_CALLS(X)                                                            \
	X(RangeProfilerEnable)                                                                     \
	X(RangeProfilerDisable)                                                                    \
	X(RangeProfilerStart)                                                                      \
	X(RangeProfilerStop)                                                                       \
	X(RangeProfilerSetConfig)                                                                  \
	X(RangeProfilerDecodeData)                                                                 \
	X(RangeProfilerGetCounterDataSize)                                                         \
	X(RangeProfilerCounterDataImageInitialize)                                                 \
	X(RangeProfilerGetCounterDataInfo)                                                         \
	X(SassMetricsGetProperties)                                                                \
	X(SassMetricsSetConfig)                                                                    \
	X(SassMetricsUnsetConfig)                                                                  \
	X(SassMetricsEnable)                                                                       \
	X(SassMetricsDisable)                                                                      \
	X(SassMetricsGetDataProperties)                                                            \
	X(SassMetricsFlushData)

#define METRICS_CUPTI_FIELD(name) __typeof__(&cupti##name) name;
struct metrics_cupti_fns {
	bool loaded;
	METRICS_CUPTI_CALLS(METRICS_CUPTI_FIELD)
	METRICS_CUPTI_PROFILER_CALLS(METRICS_CUPTI_FIELD)
};
#undef METRICS_CUPTI_FIELD
extern struct metrics_cupti_fns metrics_cupti;

/* One line naming the device, the CUPTI call and the reason; the context goes on unprofiled. */
void metrics_context_failed(struct metrics_session *s, struct metrics_context *c, const char *what,
			    const char *call, CUptiResult r);
/* cuptiProfilerInitialize, once per session: 0, or -1 with one line (what: the metrics lost). */
int metrics_profiler_init(struct metrics_session *s, struct metrics_context *c, const char *what);
/* 0 when c's device supports which, else -1 with one line saying which support flag is off. */
int metrics_device_supported(struct metrics_session *s, struct metrics_context *c,
			     CUpti_Profiler_API which, const char *what);
/* The name of c's chip (CUPTI's string), or NULL with one line. */
const char *metrics_chip_name(struct metrics_session *s, struct metrics_context *c,
			      const char *what);

#endif
