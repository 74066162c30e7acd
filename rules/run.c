/*
 * Running rules: one shared walk for every rule that reads it (see rule.h), the others one by one.
 * The walk is the expensive part of a report (it merges every GPU operation with the API calls that
 * issued them), so a report of seven rules reads the trace once instead of once per rule.
 */
#include "analyzer/analysis/gaps.h"
#include "rules/program-state.h"
#include "rules/rule.h"

#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rule_enter(struct rule_context *ctx, const struct rule *rule)
{
	snprintf(ctx->who, sizeof(ctx->who), "rule %s", rule->id);
	ctx->an.who = ctx->who;
}

int rule_walk_run(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen)
{
	return rules_run(&rule, 1, ctx, NULL, err, errlen);
}

static void timing(FILE *timings, const char *what, double t0, size_t findings)
{
	if (timings)
		fprintf(timings, "gpt-trace: rule %-20s %8.3f s, %zu finding%s\n", what, now_seconds() - t0, findings,
			findings == 1 ? "" : "s");
}

int rules_run(const struct rule *const *rules, size_t n, struct rule_context *ctx, FILE *timings, char *err,
	      size_t errlen)
{
	struct gap_visitor *visitors = xcalloc(n ? n : 1, sizeof(*visitors));
	void **states = xcalloc(n ? n : 1, sizeof(*states));
	char *begun = xcalloc(n ? n : 1, 1);
	struct gap_walk walk = { .visitors = visitors, .nvisitors = n, .progress = "rules" };
	struct program_state program = { 0 };
	int own_program = !ctx->program;
	size_t walkers = 0;
	int ret = 0, walked = 0;
	double t0;

	if (own_program)
		ctx->program = &program;	/* read once, by the first rule that advises */

	/* Begin every walking rule (in table order), then walk once if any of them wants to. A rule
	 * whose begin failed has freed its state; the others are finished (and freed) below. */
	for (size_t i = 0; i < n && !ret; i++) {
		if (!rules[i]->begin)
			continue;
		rule_enter(ctx, rules[i]);
		ret = rules[i]->begin(rules[i], ctx, &visitors[i], &states[i], err, errlen);
		if (ret < 0) {
			visitors[i].fn = NULL;
			break;
		}
		begun[i] = 1;
		walkers += visitors[i].fn != NULL;
	}
	if (!ret && walkers) {
		/* Errors name the first walking rule: the walk is theirs together. */
		const struct rule *first = NULL;

		for (size_t i = 0; i < n && !first; i++)
			if (visitors[i].fn)
				first = rules[i];
		rule_enter(ctx, first);
		t0 = now_seconds();
		ret = gap_walk(&ctx->an, &walk, err, errlen);
		walked = ret == 0;
		if (walkers > 1 || n > 1)
			timing(timings, "(shared walk)", t0, 0);
	}
	for (size_t i = 0; i < n; i++) {
		size_t before = ctx->out->count;
		int r;

		if (!begun[i])
			continue;
		rule_enter(ctx, rules[i]);
		t0 = now_seconds();
		r = rules[i]->finish(rules[i], ctx, states[i], walked ? &walk : NULL, err, errlen);
		if (!ret)
			ret = r;
		timing(timings, rules[i]->id, t0, ctx->out->count - before);
	}
	gap_walk_release(&walk);
	free(visitors);
	free(states);
	free(begun);
	for (size_t i = 0; i < n && !ret; i++) {
		size_t before = ctx->out->count;

		if (rules[i]->begin)
			continue;
		rule_enter(ctx, rules[i]);
		t0 = now_seconds();
		ret = rules[i]->run(rules[i], ctx, err, errlen);
		timing(timings, rules[i]->id, t0, ctx->out->count - before);
	}
	if (own_program)
		ctx->program = NULL;
	return ret;
}
