/*
 * Private to the phases (phases.c, phases-iterations.c): the buckets of the walk and how a trace's
 * iterations are found.
 */
#ifndef GPT_ANALYSIS_PHASES_PRIVATE_H
#define GPT_ANALYSIS_PHASES_PRIVATE_H

#include "analyzer/analysis/phases.h"
#include "analyzer/analysis/gaps.h"
#include "analyzer/analysis/analysis.h"
#include "common/key-index.h"
#include "common/util.h"
#include "analyzer/loader/events.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARM_MAX 16				/* warm-up iterations are among the first WARM_MAX */
#define BUCKET_PRE 0				/* operations before the first iteration */
#define BUCKET_ITER(i) (1 + ((i) < WARM_MAX ? (i) : WARM_MAX))
#define BUCKET_POST (WARM_MAX + 2)		/* after the last iteration */
#define BUCKET_STARTUP (WARM_MAX + 3)
#define NBUCKETS (WARM_MAX + 4)

static const char first_launch[] = "first launch of a kernel (module loading)";

/* Iterations (phases-iterations.c): one more, of host time [host_start, host_end). */
void add_iteration(struct trace_phases *tp, int64_t host_start, int64_t host_end);
int collect_ranges(const struct analysis_context *ctx, struct trace_phases *tp, const regex_t *re,
		   const char *norm, char *err, size_t errlen);
int find_nvtx_step(const struct analysis_context *ctx, struct trace_phases *tp, char *err,
		   size_t errlen);
/* The period of the kernel sequence (phases-period.c). */
int find_kernel_period(const struct analysis_context *ctx, struct trace_phases *tp,
		       int64_t *last_first_end, char *err, size_t errlen);

#endif
