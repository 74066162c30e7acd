/*
 * What the memory rules (memory-growth, near-oom) share (private to rules/): one run over the
 * devices of the memory summary (analyzer/analysis/memory-use.h), which asks the rule which devices
 * qualify and has it report each of them, reading the trace's clock only once a device does.
 */
#ifndef GPT_RULES_MEMORY_RULE_H
#define GPT_RULES_MEMORY_RULE_H

#include "analyzer/analysis/memory-use.h"
#include "rules/rule-util.h"

typedef int memory_wanted_fn(const struct rule *rule, struct rule_context *ctx, const struct memory_device *d);
typedef void memory_report_fn(const struct rule *rule, struct rule_context *ctx,
			      const struct memory_device *d, const struct span_clock *clock);

/* The summary of the scope's traces (with the steady state's iterations), report() on each device that
 * wanted() accepts: 0, or a negative error with one line in err. */
int memory_rule_run(const struct rule *rule, struct rule_context *ctx, memory_wanted_fn *wanted,
		    memory_report_fn *report, char *err, size_t errlen);

#endif
