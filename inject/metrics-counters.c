/*
 * The per-launch counters of inject/metrics (metrics-cupti.h): CUPTI's Range Profiler in
 * auto-range, kernel-replay mode, per context.
 *
 * Sequence, as in NVIDIA's range_profiling sample: cuptiProfilerInitialize once; per chip a host
 * object (counter availability image of the first context, config image with the metrics, number
 * of passes: metrics-host.c); per context cuptiRangeProfilerEnable, a counter data image sized for
 * a few ranges, cuptiRangeProfilerSetConfig(auto range, kernel replay). Per profiled launch Start
 * before and Stop after the launch call; kernel replay has run every pass by the time the launch
 * returns, so Decode and Evaluate follow at once and the image is initialized again for the next.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/metrics-cupti.h"

const char *const metrics_counter_names[NR_COUNTERS] = {
    [COUNTER_LD_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    [COUNTER_LD_REQUESTS] = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    [COUNTER_ST_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    [COUNTER_ST_REQUESTS] = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    [COUNTER_DURATION] = "gpu__time_duration.sum",
};

/* Ranges the counter data image holds: one is expected per launch, the rest detect surprises. */
#define RANGES_PER_IMAGE 4

static void chip_free(struct metrics_chip *chip)
{
	if (!chip)
		return;
	metrics_host_close(chip->host);
	free(chip->availability);
	free(chip->config);
	free(chip->name);
	free(chip);
}

void metrics_chips_free(struct metrics_session *s)
{
	while (s->chips) {
		struct metrics_chip *next = s->chips->next;

		chip_free(s->chips);
		s->chips = next;
	}
}

/*
 * Host object, config image and pass count for chip->name with the given metrics. Each metric is
 * looked up on its own first: cuptiProfilerHostConfigAddMetrics says only "invalid parameter" for
 * a metric the chip lacks, and the user should learn which one. Needs no GPU: the host API runs on
 * any machine (the CPU unit test calls it for GH100).
 */
static int chip_configure(struct metrics_session *s, struct metrics_chip *chip,
			  const char *const *names, size_t nr_names, uint32_t device_id)
{
	const char *what = "hardware counters", *call;
	CUptiResult r;
	size_t i;

	r = metrics_host_open(GPT_CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip->name,
			      chip->availability, &chip->host);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiProfilerHostInitialize";
		goto out_fail;
	}
	for (i = 0; i < nr_names; i++) {
		r = metrics_host_metric_check(chip->host, names[i]);
		if (r != CUPTI_SUCCESS) {
			metrics_report(s,
				       "no %s on device %u: metric '%s' is not available on chip "
				       "%s (%s); the program continues without them",
				       what, device_id, names[i], chip->name,
				       metrics_cupti_reason(r));
			return -1;
		}
	}
	r = metrics_host_config(chip->host, names, nr_names, &chip->config, &chip->config_size,
				&call);
	if (r != CUPTI_SUCCESS && !call) {
		metrics_report(s, "no %s on device %u: %s", what, device_id, strerror(ENOMEM));
		return -1;
	}
	if (r != CUPTI_SUCCESS)
		goto out_fail;
	/* A pass count CUPTI cannot give is written as 0; the counters are read all the same. */
	metrics_host_passes(chip->config, chip->config_size, &chip->passes);
	metrics_debug(s, "chip %s: config image %zu bytes, %zu passes", chip->name,
		      chip->config_size, chip->passes);
	return 0;

out_fail:
	metrics_report(s, "no %s on device %u: %s failed: %s; the program continues without them",
		       what, device_id, call, metrics_cupti_reason(r));
	return -1;
}

/* The chip of c, set up on its first context: counter availability, then the host side. */
static struct metrics_chip *chip_get(struct metrics_session *s, struct metrics_context *c)
{
	const char *what = "hardware counters";
	CUpti_Profiler_GetCounterAvailability_Params avail = {
	    .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
	struct metrics_chip *chip;
	const char *name;
	CUptiResult r;

	name = metrics_chip_name(s, c, what);
	if (!name)
		return NULL;
	for (chip = s->chips; chip; chip = chip->next)
		if (!strcmp(chip->name, name))
			return chip;

	chip = calloc(1, sizeof(*chip));
	if (!chip || !(chip->name = strdup(name)))
		goto out_nomem;

	/* Where profiling is restricted to administrators, this is the call that says so. */
	avail.ctx = c->ctx;
	r = metrics_cupti.ProfilerGetCounterAvailability(&avail);
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, what, "cuptiProfilerGetCounterAvailability", r);
		goto out_free;
	}
	chip->availability = calloc(1, avail.counterAvailabilityImageSize);
	if (!chip->availability)
		goto out_nomem;
	avail.pCounterAvailabilityImage = chip->availability;
	r = metrics_cupti.ProfilerGetCounterAvailability(&avail);
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, what, "cuptiProfilerGetCounterAvailability", r);
		goto out_free;
	}
	if (chip_configure(s, chip, metrics_counter_names, NR_COUNTERS, c->device_id) < 0)
		goto out_free;
	chip->next = s->chips;
	s->chips = chip;
	return chip;

out_nomem:
	metrics_report(s, "no %s on device %u: %s", what, c->device_id, strerror(ENOMEM));
out_free:
	chip_free(chip);
	return NULL;
}

static CUptiResult counter_data_reset(struct metrics_context *c)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params p = {
	    .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};

	p.pRangeProfilerObject = c->range;
	p.counterDataSize = c->counter_data_size;
	p.pCounterData = c->counter_data;
	return metrics_cupti.RangeProfilerCounterDataImageInitialize(&p);
}

static CUptiResult range_set_config(struct metrics_context *c)
{
	CUpti_RangeProfiler_SetConfig_Params p = {
	    .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};

	p.pRangeProfilerObject = c->range;
	p.configSize = c->chip->config_size;
	p.pConfig = c->chip->config;
	p.counterDataImageSize = c->counter_data_size;
	p.pCounterDataImage = c->counter_data;
	p.range = CUPTI_AutoRange;
	p.replayMode = CUPTI_KernelReplay;
	p.maxRangesPerPass = RANGES_PER_IMAGE;
	p.numNestingLevels = 1;
	p.minNestingLevel = 1;
	p.passIndex = 0;
	p.targetNestingLevel = 1;
	return metrics_cupti.RangeProfilerSetConfig(&p);
}

static void range_disable(struct metrics_context *c)
{
	CUpti_RangeProfiler_Disable_Params p = {.structSize =
						    CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};

	if (!c->range)
		return;
	p.pRangeProfilerObject = c->range;
	metrics_cupti.RangeProfilerDisable(&p);
	c->range = NULL;
	c->configured = false;
}

/* Range profiler on for c: enable, counter data image, config. */
static int range_enable(struct metrics_session *s, struct metrics_context *c)
{
	const char *what = "hardware counters";
	CUpti_RangeProfiler_Enable_Params enable = {
	    .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	CUpti_RangeProfiler_GetCounterDataSize_Params size = {
	    .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
	CUptiResult r;

	enable.ctx = c->ctx;
	r = metrics_cupti.RangeProfilerEnable(&enable);
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, what, "cuptiRangeProfilerEnable", r);
		return -1;
	}
	c->range = enable.pRangeProfilerObject;

	if (!c->counter_data) {
		size.pRangeProfilerObject = c->range;
		size.pMetricNames = (const char **)metrics_counter_names;
		size.numMetrics = NR_COUNTERS;
		size.maxNumOfRanges = RANGES_PER_IMAGE;
		size.maxNumRangeTreeNodes = RANGES_PER_IMAGE;
		r = metrics_cupti.RangeProfilerGetCounterDataSize(&size);
		if (r != CUPTI_SUCCESS) {
			metrics_context_failed(s, c, what, "cuptiRangeProfilerGetCounterDataSize",
					       r);
			goto out_disable;
		}
		c->counter_data = calloc(1, size.counterDataSize);
		if (!c->counter_data) {
			metrics_report(s, "no hardware counters on device %u: %s", c->device_id,
				       strerror(ENOMEM));
			goto out_disable;
		}
		c->counter_data_size = size.counterDataSize;
	}
	r = counter_data_reset(c);
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, what,
				       "cuptiRangeProfilerCounterDataImageInitialize", r);
		goto out_disable;
	}
	r = range_set_config(c);
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, what, "cuptiRangeProfilerSetConfig", r);
		goto out_disable;
	}
	c->configured = true;
	return 0;

out_disable:
	range_disable(c);
	return -1;
}

int metrics_counters_setup(struct metrics_session *s, struct metrics_context *c)
{
	const char *what = "hardware counters";

	if (c->counters_state == CTX_READY)
		return 0;
	if (c->counters_state == CTX_FAILED)
		return -1;
	c->counters_state = CTX_FAILED;
	if (metrics_profiler_init(s, c, what) < 0)
		return -1;
	if (metrics_device_supported(s, c, CUPTI_PROFILER_RANGE_PROFILING, what) < 0)
		return -1;
	c->chip = chip_get(s, c);
	if (!c->chip)
		return -1;
	if (range_enable(s, c) < 0)
		return -1;
	c->counters_state = CTX_READY;
	return 0;
}

int metrics_counters_start(struct metrics_session *s, struct metrics_context *c)
{
	CUpti_RangeProfiler_Start_Params p = {.structSize =
						  CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	CUptiResult r;

	if (!c->range && range_enable(s, c) < 0)
		goto out_fail;
	p.pRangeProfilerObject = c->range;
	r = metrics_cupti.RangeProfilerStart(&p);
	if (r != CUPTI_SUCCESS && !c->configured) {
		/* The image was initialized again after the last decode: configure it anew. */
		metrics_debug(s, "start without SetConfig failed (%d), configuring again", r);
		r = range_set_config(c);
		if (r == CUPTI_SUCCESS) {
			c->configured = true;
			r = metrics_cupti.RangeProfilerStart(&p);
		}
	}
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, "hardware counters", "cuptiRangeProfilerStart", r);
		goto out_fail;
	}
	return 0;

out_fail:
	range_disable(c);
	c->counters_state = CTX_FAILED;
	return -1;
}

/*
 * Stop, decode and evaluate the launch's range into row. Returns 0 with row->has_counters set, 1
 * when the launch left no range (it failed to launch), or a negative error.
 */
int metrics_counters_stop(struct metrics_session *s, struct metrics_context *c,
			  struct metrics_row *row)
{
	const char *what = "hardware counters";
	CUpti_RangeProfiler_Stop_Params stop = {.structSize =
						    CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	CUpti_RangeProfiler_DecodeData_Params decode = {
	    .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
	    .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
	const char *call;
	CUptiResult r;
	int ret = 1;

	stop.pRangeProfilerObject = c->range;
	r = metrics_cupti.RangeProfilerStop(&stop);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiRangeProfilerStop";
		goto out_fail;
	}
	if (!stop.isAllPassSubmitted)
		metrics_debug(s, "stop: not all passes submitted (pass %zu)", stop.passIndex);
	decode.pRangeProfilerObject = c->range;
	r = metrics_cupti.RangeProfilerDecodeData(&decode);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiRangeProfilerDecodeData";
		goto out_fail;
	}
	info.pCounterDataImage = c->counter_data;
	info.counterDataImageSize = c->counter_data_size;
	r = metrics_cupti.RangeProfilerGetCounterDataInfo(&info);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiRangeProfilerGetCounterDataInfo";
		goto out_fail;
	}
	metrics_debug(s, "correlation %u: %zu range(s), %zu dropped", row->correlation_id,
		      info.numTotalRanges, decode.numOfRangeDropped);
	if (info.numTotalRanges == 0) {
		s->ranges_missing++;
	} else {
		/* The session lock keeps other launches out, so range 0 is this launch. */
		s->ranges_extra += info.numTotalRanges - 1;
		r = metrics_host_evaluate(c->chip->host, c->counter_data, c->counter_data_size, 0,
					  metrics_counter_names, NR_COUNTERS, row->counters);
		if (r != CUPTI_SUCCESS) {
			call = "cuptiProfilerHostEvaluateToGpuValues";
			goto out_fail;
		}
		row->has_counters = true;
		row->passes = (uint32_t)c->chip->passes;
		ret = 0;
	}
	r = counter_data_reset(c);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiRangeProfilerCounterDataImageInitialize";
		goto out_fail;
	}
	c->configured = false;
	return ret;

out_fail:
	metrics_context_failed(s, c, what, call, r);
	range_disable(c);
	c->counters_state = CTX_FAILED;
	return -1;
}

void metrics_context_release(struct metrics_session *s, struct metrics_context *c)
{
	(void)s;
	range_disable(c);
	free(c->counter_data);
	c->counter_data = NULL;
	c->counter_data_size = 0;
	c->counters_state = CTX_FAILED;
	c->sass_state = CTX_FAILED;
}
