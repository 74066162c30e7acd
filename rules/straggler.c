/*
 * straggler: in a multi-rank job, a rank that arrives late at collectives while every other rank
 * waits for it inside its NCCL kernel. It needs every rank's trace: the merge of the per-rank
 * summaries (ranks/) matches each collective across ranks, and the rank whose kernel of a
 * collective is the shortest is the one the others waited for (all ranks leave a collective
 * together, so the last to arrive spends the least time in it); the others' extra time in that
 * collective is its delay. Durations need no aligned clocks, which is why the match uses them and
 * not start times.
 *
 * Recoverable time: per iteration, the largest delay the straggler caused there. The others lose at
 * least that much of that iteration; delays at later collectives of the same iteration mostly
 * repeat the same lateness, so they are not added.
 *
 * Over one trace (one rank) the rule has nothing to compare and finds nothing.
 */
#include "rules/job-rules.h"
#include "rules/rule-util.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const struct rule_param params[] = {
	{ "min_delay_us", 1000, "us", "a rank is a straggler at a collective when the others wait at least this long" },
	{ "min_delay_pct", 5, "%",
	  "and the wait reaches this share of the job's median iteration (below it, ranks differ by "
	  "noise)" },
};

static int straggler_run(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen)
{
	(void)rule, (void)ctx, (void)err, (void)errlen;
	return 0;
}

const struct rule rule_straggler = {
	.id = "straggler",
	.title = "A rank the others wait for at collectives",
	.measures = "across the ranks of a job (gpt-trace report RANK0 RANK1 ...): the rank that arrives "
		    "last at each NCCL collective and how long the others wait for it",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = straggler_run,
};

/* "on the job's critical path ...: rank 1 before 497 collectives, its host 502.8 ms (69.0% of the path)". */
static void path_evidence(struct finding *f, const struct job_path *path, int64_t rank)
{
	struct fmt_text t1, t2, t3;

	for (size_t r = 0; path && r < path->nranks; r++) {
		const struct job_path_rank *pr = &path->ranks[r];
		enum what_if_part top = what_if_largest_part(pr->part_ns);

		if (pr->rank != rank || !pr->collectives || path->span_ns <= 0)
			continue;
		if (top == WHAT_IF_PARTS)
			top = WHAT_IF_HOST;	/* no part has any time: they all read 0 */
		finding_evidence(f, "on the job's critical path (%s across ranks): rank %" PRId64 " before %" PRId64
				 " collectives it arrived last at, most in its %s, %s (%s of the path)",
				 fmt_duration(&t1, path->span_ns), rank, pr->collectives,
				 what_if_part_name(top), fmt_duration(&t2, pr->part_ns[top]),
				 fmt_percent(&t3, (double)pr->part_ns[top] / (double)path->span_ns));
	}
}

void straggler_judge(struct rule_context *ctx, const struct job_digest *job)
{
	struct fmt_text t1, t2;
	int64_t worst_rank = -1, worst_ns = 0;
	struct finding *f;
	/* per rank: how much delay it caused, for the worst one */
	struct {
		int64_t rank, ns, n;
	} *per = NULL;
	size_t nper = 0;

	if (!job->nevents)
		return;
	for (size_t i = 0; i < job->nevents; i++) {
		size_t r;

		/* a warm-up iteration (the first step's allocations, NCCL's set-up) is no straggler */
		if (!job->events[i].steady)
			continue;
		for (r = 0; r < nper && per[r].rank != job->events[i].rank; r++)
			;
		if (r == nper) {
			per = xrealloc(per, (nper + 1) * sizeof(*per));
			per[nper].rank = job->events[i].rank;
			per[nper].ns = per[nper].n = 0;
			nper++;
		}
		per[r].ns = sat_add64(per[r].ns, job->events[i].delay_ns);
		per[r].n++;
		if (per[r].ns > worst_ns) {
			worst_ns = per[r].ns;
			worst_rank = per[r].rank;
		}
	}
	for (size_t r = 0; r < nper; r++) {
		if (per[r].rank != worst_rank)
			continue;
		f = findings_add(ctx->out, &rule_straggler, rule_severity(worst_ns, job->steady_ns), worst_ns,
				 "Find what the slow rank does on those iterations (the cause below) and even it "
				 "out: spread data loading and host work evenly, or move it off the step.",
				 "rank %" PRId64 " held up the job in %" PRId64 " of %" PRId64 " iterations, %s in all",
				 worst_rank, per[r].n, job->iterations, fmt_duration(&t1, worst_ns));
		for (size_t i = 0, shown = 0; i < job->nevents && shown < 8; i++) {
			const struct straggler_event *e = &job->events[i];

			if (e->rank != worst_rank || !e->steady)
				continue;
			finding_evidence(f, "%s %" PRId64 ": the others waited %s (%s)", e->step >= 0 ? "step" : "iteration",
					 e->step >= 0 ? e->step : e->iteration, fmt_duration(&t2, e->delay_ns),
					 e->cause ? e->cause : "cause unknown");
			shown++;
		}
		path_evidence(f, job->path, worst_rank);
	}
	for (size_t r = 0; r < nper; r++) {
		if (per[r].rank == worst_rank)
			continue;
		f = findings_add(ctx->out, &rule_straggler, rule_severity(per[r].ns, job->steady_ns), per[r].ns,
				 "Find what this rank does on those iterations and even it out.",
				 "rank %" PRId64 " held up the job in %" PRId64 " of %" PRId64 " iterations, %s in all",
				 per[r].rank, per[r].n, job->iterations, fmt_duration(&t1, per[r].ns));
		(void)f;
	}
	free(per);
}
