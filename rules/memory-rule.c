/*
 * The run shared by memory-growth and near-oom (see memory-rule.h).
 */
#include "rules/memory-rule.h"

int memory_rule_run(const struct rule *rule, struct rule_context *ctx, memory_wanted_fn *wanted,
		    memory_report_fn *report, char *err, size_t errlen)
{
	struct memory_summary *m;
	struct span_clock clock = {0};
	int ret;

	ret = memory_summary_compute(ctx->an.trace, ctx->steady, &m, err, errlen);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < m->ndevices && ret >= 0; i++) {
		const struct memory_device *d = &m->devices[i];

		if (!wanted(rule, ctx, d))
			continue;
		ret = span_clock_once(&clock, &ctx->an, err, errlen);
		if (ret < 0)
			break;
		report(rule, ctx, d, &clock);
	}
	span_clock_release(&clock);
	memory_summary_free(m);
	return ret < 0 ? ret : 0;
}
