/*
 * The stats section on busy time: each heavy kernel's SMs-active, tensor-pipe and DRAM shares from
 * sampled GPU metrics, what bounds it, and the steady state's GPU time by class
 * (analyzer/analysis/kernel-efficiency.h). Present only for traces recorded with GPU metrics.
 */
#ifndef GPT_STATS_EFFICIENCY_H
#define GPT_STATS_EFFICIENCY_H

#include "analyzer/output/format.h"
#include "analyzer/loader/trace.h"
#include "analyzer/analysis/kernel-efficiency.h"

#include <stdio.h>

struct stats_efficiency {
	struct kernel_efficiencies *kernels;
	int64_t start, end;	/* the window judged: the steady state, or the scope */
	char *window;		/* that window in words */
};

/*
 * For `gpt-trace stats`: whole_trace when no scope was given, then the window is the steady
 * state (analyzer/analysis/phases.h), else the scope. Returns 1 with *out set, 0 when the trace
 * holds no GPU metrics, or a negative error with one line in err.
 */
int stats_efficiency_compute(struct trace *trace, int whole_trace, struct stats_efficiency **out,
			     char *err, size_t errlen);
void stats_efficiency_free(struct stats_efficiency *e);

void stats_efficiency_text(FILE *out, const struct stats_efficiency *e, enum output_format format);
/* ",\n  \"gpu_efficiency\": {...}" for the stats JSON object. */
void stats_efficiency_json(FILE *out, const struct stats_efficiency *e);

#endif
