/*
 * The cross-rank rules: judged over a whole job's digest (analyzer/analysis/collectives.h), which
 * the merge of the ranks' summaries fills (analyzer/ranks/job.c), not over one trace.
 */
#ifndef GPT_RULES_JOB_RULES_H
#define GPT_RULES_JOB_RULES_H

#include "analyzer/analysis/collectives.h"
#include "rules/rule.h"

/* The job's judgement: findings appended to ctx->out (ctx->an.trace unused). */
void straggler_judge(struct rule_context *ctx, const struct job_digest *job);
void exposed_communication_judge(struct rule_context *ctx, const struct job_digest *job);

extern const struct rule rule_straggler;
extern const struct rule rule_exposed_communication;

#endif
