/*
 * The cross-rank report (see ranks-report.h). Text and Markdown show every rank up to RANKS_SHOWN and then
 * the ones that held the job up; JSON lists every rank and iteration. The HTML page is
 * analyzer/report/html/ranks-page.c's.
 */
#include "analyzer/report/ranks-report.h"
#include "analyzer/ranks/job-path.h"
#include "analyzer/report/html/html.h"
#include "analyzer/analysis/owner.h"
#include "rules/rule.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define RANKS_SHOWN 16

static const char *dur(char *buf, size_t len, int64_t ns)
{
	return units_duration(buf, len, ns, UNITS_FINE);
}

/* Whether a rank's row is shown in text and Markdown: all of a small job, the late ones of a large one. */
static int shown(const struct job_report *job, const struct job_rank *r)
{
	return job->nranks <= RANKS_SHOWN || r->last_at > 0 || !r->complete;
}

static const char *severity_name(enum finding_severity s)
{
	return s == SEVERITY_CRITICAL ? "critical" : s == SEVERITY_WARNING ? "warning" : "info";
}

/* The title: ranks, job, world size, hosts; the notes. */
static void text_title(FILE *out, const struct job_report *job, int md)
{
	if (md)
		fprintf(out, "## gpt-trace report: %zu rank%s\n\n", job->nranks, plural((int64_t)job->nranks));
	else
		fprintf(out, "gpt-trace report: %zu rank%s", job->nranks, plural((int64_t)job->nranks));
	if (!md) {
		if (*job->job)
			fprintf(out, " of job %s", job->job);
		if (job->world_size > 0)
			fprintf(out, " (world size %" PRId64 ")", job->world_size);
		fprintf(out, " on %zu host%s\n", job->nhosts, job->nhosts == 1 ? "" : "s");
	} else {
		fprintf(out, "job `%s`, world size %" PRId64 ", %zu host%s\n\n", *job->job ? job->job : "-",
			job->world_size, job->nhosts, job->nhosts == 1 ? "" : "s");
	}
	for (size_t i = 0; i < job->nnotes; i++) {
		if (md) {
			fputs("> note: ", out);
			output_md_cell(out, job->notes[i]);
			fputs("\n", out);
		} else {
			fprintf(out, "  note  %s\n", job->notes[i]);
		}
	}
}

/* The ranks' table; those that arrived last at no collective are counted, not shown. */
static void text_ranks(FILE *out, const struct job_report *job, int md)
{
	char b1[48], b2[48], b3[48], b4[48], b5[48];
	size_t hidden = 0;

	if (md)
		fputs("\n| rank | host | pid | iterations | median iteration | collectives | arrived last | delay caused "
		      "| communication | exposed | clock |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		      out);
	else
		fprintf(out, "\n  %-5s %-12s %8s %6s %12s %6s %5s %12s %12s %12s %12s\n", "rank", "host", "pid", "iters",
			"median iter", "colls", "last", "delay", "comm", "exposed", "clock");
	for (size_t i = 0; i < job->nranks; i++) {
		const struct job_rank *r = &job->ranks[i];

		if (!shown(job, r)) {
			hidden++;
			continue;
		}
		fprintf(out,
			md ? "| %" PRId64 " | %s | %" PRId64 " | %zu | %s | %" PRId64 " | %" PRId64 " | %s | %s | %s | %s |\n"
			   : "  %-5" PRId64 " %-12s %8" PRId64 " %6zu %12s %6" PRId64 " %5" PRId64 " %12s %12s %12s %12s\n",
			r->rank, *r->host ? r->host : "-", r->pid, r->iterations, dur(b1, sizeof(b1), r->median_iteration_ns),
			r->collectives, r->last_at, dur(b2, sizeof(b2), r->delay_ns), dur(b3, sizeof(b3), r->comm_ns),
			dur(b4, sizeof(b4), r->exposed_ns),
			output_offset(r->clock_anchor_ns + r->clock_refine_ns, b5, sizeof(b5)));
	}
	if (hidden)
		fprintf(out, md ? "\n%zu more ranks arrived last at no collective (JSON lists them)\n"
				: "  ... %zu more ranks arrived last at no collective (--format json lists them)\n",
			hidden);
}

/* How a lined-up job's iterations were matched across ranks, and where its collectives count from. */
static void text_lineup(FILE *out, const struct job_report *job, int md)
{
	char words[160], from[64];

	fprintf(out, md ? "Iterations lined up %s" : "  lined up %s", job_lineup_words(job, words, sizeof(words)));
	if (job->common_iteration >= 0)
		fprintf(out, "; collectives counted from %s, the first iteration every rank has whole",
			job_iteration_name(job, &job->iterations[job->common_iteration], from, sizeof(from)));
	fputs(md ? "\n\n" : "\n", out);
}

/* The iterations: steady ones, the median, the slowest rank, each with a straggler. */
static void text_iterations(FILE *out, const struct job_report *job, int md)
{
	char b1[48], b2[48], name[48];
	int64_t steady = 0, with = 0;

	for (size_t i = 0; i < job->niterations; i++) {
		steady += job->iterations[i].steady;
		with += job->iterations[i].straggler_rank >= 0;
	}
	fprintf(out, md ? "\n### Iterations\n\n%" PRId64 " steady of %zu, median %s (the slowest rank's); slowest rank "
			  "overall: %s; %" PRId64 " with a straggler\n\n"
			: "\niterations  %" PRId64 " steady of %zu, median %s (the slowest rank's); slowest rank overall: %s; "
			  "%" PRId64 " with a straggler\n",
		steady, job->niterations, dur(b1, sizeof(b1), job->median_iteration_ns),
		job->slowest_rank >= 0 ? (snprintf(b2, sizeof(b2), "rank %" PRId64, job->slowest_rank), b2)
				       : "none (every rank's median within 1%)",
		with);
	if (job->lined_up)
		text_lineup(out, job, md);
	if (with && md)
		fputs("| iteration | time | slowest rank | straggler | others waited | collectives | what it did |\n"
		      "|---:|---:|---:|---:|---:|---:|---|\n", out);
	for (size_t i = 0; i < job->niterations; i++) {
		const struct job_iteration *it = &job->iterations[i];

		if (it->straggler_rank < 0)
			continue;
		job_iteration_name(job, it, name, sizeof(name));
		if (md) {
			fprintf(out, "| %s%s | %s | %" PRId64 " | %" PRId64 " | %s | %" PRId64 " | ", name + (*name == '#'),
				it->steady ? "" : " (warm-up)", dur(b1, sizeof(b1), it->time_ns), it->slowest_rank, it->straggler_rank,
				dur(b2, sizeof(b2), it->delay_ns), it->collectives);
			output_md_cell(out, it->cause);
			fputs(" |\n", out);
		} else {
			fprintf(out, "  %-*s %10s  %sstraggler rank %" PRId64 ": the others waited %s at %" PRId64
				" collective%s; %s\n", job->lined_up ? 10 : 5, name, dur(b1, sizeof(b1), it->time_ns),
				it->steady ? "" : "warm-up, ", it->straggler_rank,
				dur(b2, sizeof(b2), it->delay_ns), it->collectives, it->collectives == 1 ? "" : "s",
				it->cause ? it->cause : "");
		}
	}
}

/* Communication per collective type, matched collectives, and the clocks' alignment. */
static void text_comm(FILE *out, const struct job_report *job, int md)
{
	char b1[48], b2[48], b3[48], b4[48];

	fputs(md ? "\n### Communication (steady state, per rank)\n\n| collective | calls | time | exposed | transfers "
		   "exposed | waiting for late ranks |\n|---|---:|---:|---:|---:|---:|\n"
		 : "\ncommunication (steady state, per rank)\n", out);
	for (int t = 0; t < COLLECTIVE_TYPES; t++) {
		const struct job_comm *c = &job->comm[t];
		int64_t waiting = c->exposed_ns - c->transfer_ns;

		if (!c->count && !c->ns)
			continue;
		if (waiting < 0)
			waiting = 0;
		fprintf(out, md ? "| %s | %" PRId64 " | %s | %s | %s | %s |\n"
				: "  %-14s %6" PRId64 " calls %12s, exposed %12s: transfers %s, waiting for late ranks %s\n",
			collective_type_name(t), c->count, dur(b1, sizeof(b1), c->ns), dur(b2, sizeof(b2), c->exposed_ns),
			dur(b3, sizeof(b3), c->transfer_ns), dur(b4, sizeof(b4), waiting));
	}
	fprintf(out, md ? "\n%" PRId64 " collectives matched across ranks, %" PRId64 " not matched (point to point, or "
			  "run by one rank only)\n"
			: "  %" PRId64 " collectives matched across ranks, %" PRId64 " not matched (point to point, or "
			  "run by one rank only)\n",
		job->matched, job->unmatched);
	if (job->nhosts > 1) {
		fputs(md ? "\n### Clocks\n\n" : "\nclocks     ", out);
		fprintf(out, "rank %" PRId64 "'s clock is the reference; other hosts aligned by the wall-clock anchor, "
			"then by the collectives' common ends\n", job->nranks ? job->ranks[0].rank : 0);
		for (size_t i = 0; i < job->nranks; i++) {
			const struct job_rank *r = &job->ranks[i];

			if (!r->clock_refine_ns && i)
				continue;
			fprintf(out, md ? "- rank %" PRId64 " (%s): anchor %s, refined by %s\n"
					: "  rank %" PRId64 " (%s): anchor %s, refined by %s\n",
				r->rank, *r->host ? r->host : "-", output_offset(r->clock_anchor_ns, b1, sizeof(b1)),
				output_offset(r->clock_refine_ns, b2, sizeof(b2)));
		}
	}
}

/* What bounds the job's step: its critical path across ranks, by rank and part, then each rank's
   windows on it. */
static void text_path(FILE *out, const struct job_report *job, int md)
{
	const struct job_path *p = &job->path;
	int64_t rest, shown;
	char b1[48], words[512];

	if (!p->collectives || p->span_ns <= 0)
		return;
	fprintf(out, md ? "\n### What bounds the step\n\nThe critical path across ranks (docs/what-if.md), steady "
			  "state: %s through %" PRId64 " collectives: %s"
			: "\nwhat bounds the step  the critical path across ranks (docs/what-if.md), steady state: %s "
			  "through %" PRId64 " collectives\n  %s",
		dur(b1, sizeof(b1), p->span_ns), p->collectives, job_path_words(p, words, sizeof(words), &shown));
	rest = p->span_ns - shown;
	if (rest * 1000 >= JOB_PATH_SHOWN_PERMILLE * p->span_ns)
		fprintf(out, ", %s %.1f%%", rest == p->unknown_ns ? "not on a rank's replayed path" : "the rest",
			100.0 * (double)rest / (double)p->span_ns);
	fputs(md ? "\n\n" : "\n", out);
	for (size_t r = 0, lines = 0; r < p->nranks && lines < RANKS_SHOWN; r++) {
		const struct job_path_rank *pr = &p->ranks[r];
		const char *sep = "";

		if (!pr->collectives)
			continue;
		fprintf(out, md ? "- rank %" PRId64 ", last at %" PRId64 " of them; before them: " : "  rank %" PRId64
			", last at %" PRId64 " of them; before them: ", pr->rank, pr->collectives);
		for (int k = 0; k < WHAT_IF_PARTS; k++)
			if (pr->part_ns[k] > 0) {
				fprintf(out, "%s%s %s", sep, what_if_part_name((enum what_if_part)k),
					dur(b1, sizeof(b1), pr->part_ns[k]));
				sep = ", ";
			}
		fprintf(out, "%s\n", *sep ? "" : "nothing on its replayed path");
		lines++;
	}
}

/* The cross-rank findings, ranked. */
static void text_findings(FILE *out, const struct job_report *job, int md)
{
	char b1[48];

	fprintf(out, md ? "\n### Findings\n\n%zu finding%s from the cross-rank rules\n\n"
			: "\n%zu finding%s from the cross-rank rules, ranked by recoverable time\n",
		job->findings.count, job->findings.count == 1 ? "" : "s");
	for (size_t i = 0; i < job->findings.count; i++) {
		const struct finding *f = &job->findings.items[i];

		if (md) {
			fprintf(out, "%zu. **%s** `%s` ", i + 1, severity_name(f->severity), f->rule_id);
			output_md_cell(out, f->message);
			fprintf(out, "  \n   recoverable: %s  \n", dur(b1, sizeof(b1), f->recoverable_ns));
			for (size_t e = 0; e < f->nevidence; e++) {
				fputs("   - ", out);
				output_md_cell(out, f->evidence[e]);
				fputs("\n", out);
			}
			fprintf(out, "   fix: %s\n", f->fix ? f->fix : "");
		} else {
			fprintf(out, "\n %zu. %-8s %s  %s\n    recoverable: %s\n", i + 1, severity_name(f->severity),
				f->rule_id, f->message, dur(b1, sizeof(b1), f->recoverable_ns));
			for (size_t e = 0; e < f->nevidence; e++)
				fprintf(out, "    - %s\n", f->evidence[e]);
			fprintf(out, "    fix: %s\n", f->fix ? f->fix : "");
		}
	}
}

static void write_text(FILE *out, const struct job_report *job, int md)
{
	text_title(out, job, md);
	text_ranks(out, job, md);
	text_iterations(out, job, md);
	text_comm(out, job, md);
	text_path(out, job, md);
	text_findings(out, job, md);
}

static void json_field(FILE *out, const char *name, const char *value, int comma)
{
	fprintf(out, "\"%s\": ", name);
	output_json_string(out, value);
	if (comma)
		fputs(", ", out);
}

/* A lined-up job: how its iterations were matched and where its collectives count from. */
static void json_lineup(FILE *out, const struct job_report *job)
{
	static const char *const by[] = { "time", "index", "step" };
	const struct job_iteration *common =
		job->common_iteration >= 0 ? &job->iterations[job->common_iteration] : NULL;

	fprintf(out, "\"lined_up\": {\"by\": \"%s\", ", by[job->lineup]);
	json_field(out, "steps", job->step_words, 1);
	fprintf(out, "\"common_iteration\": %" PRId64 ", ", job->common_iteration);
	if (common && common->step >= 0)
		fprintf(out, "\"common_step\": %" PRId64 "},\n  ", common->step);
	else
		fputs("\"common_step\": null},\n  ", out);
}

/* The critical path across ranks: "critical_path": {...}, (null without steady collectives). */
static void json_path(FILE *out, const struct job_path *p)
{
	if (!p->collectives) {
		fputs("\"critical_path\": null,\n  ", out);
		return;
	}
	fprintf(out, "\"critical_path\": {\"span_ns\": %" PRId64 ", \"collectives\": %" PRId64 ", \"comm_ns\": %" PRId64
		", \"unknown_ns\": %" PRId64 ", \"ranks\": [", p->span_ns, p->collectives, p->comm_ns, p->unknown_ns);
	for (size_t r = 0; r < p->nranks; r++) {
		fprintf(out, "%s\n    {\"rank\": %" PRId64 ", \"collectives\": %" PRId64, r ? "," : "", p->ranks[r].rank,
			p->ranks[r].collectives);
		for (int k = 0; k < WHAT_IF_PARTS; k++)
			fprintf(out, ", \"%s_ns\": %" PRId64, what_if_part_id((enum what_if_part)k), p->ranks[r].part_ns[k]);
		fputs("}", out);
	}
	fputs("]},\n  ", out);
}

static void write_json(FILE *out, const struct job_report *job)
{
	fprintf(out, "{\n  \"schema\": \"%s\",\n  ", JOB_REPORT_JSON_SCHEMA);
	json_field(out, "job", job->job, 1);
	fprintf(out, "\"world_size\": %" PRId64 ", \"hosts\": %zu, \"ranks_from_processes\": %s,\n  \"notes\": [",
		job->world_size, job->nhosts, job->ranks_from_processes ? "true" : "false");
	for (size_t i = 0; i < job->nnotes; i++) {
		fputs(i ? ", " : "", out);
		output_json_string(out, job->notes[i]);
	}
	fputs("],\n  \"ranks\": [", out);
	for (size_t i = 0; i < job->nranks; i++) {
		const struct job_rank *r = &job->ranks[i];

		fprintf(out, "%s\n    {\"rank\": %" PRId64 ", ", i ? "," : "", r->rank);
		json_field(out, "trace", r->trace, 1);
		json_field(out, "host", r->host, 1);
		fprintf(out,
			"\"pid\": %" PRId64 ", \"complete\": %s, \"iterations\": %zu, \"first_steady\": %zu, "
			"\"median_iteration_ns\": %" PRId64 ", \"collectives\": %" PRId64 ", \"arrived_last\": %" PRId64
			", \"delay_caused_ns\": %" PRId64 ", \"comm_ns\": %" PRId64 ", \"exposed_ns\": %" PRId64
			", \"clock_anchor_ns\": %" PRId64 ", \"clock_refine_ns\": %" PRId64,
			r->pid, r->complete ? "true" : "false", r->iterations, r->first_steady, r->median_iteration_ns,
			r->collectives, r->last_at, r->delay_ns, r->comm_ns, r->exposed_ns, r->clock_anchor_ns,
			r->clock_refine_ns);
		if (job->lined_up)
			fprintf(out, ", \"capture_windows\": %" PRId64 ", \"unmatched_first\": %" PRId64, r->windows,
				r->unmatched_first);
		fputs("}", out);
	}
	fprintf(out, "\n  ],\n  \"median_iteration_ns\": %" PRId64 ", \"slowest_rank\": %" PRId64 ",\n  ",
		job->median_iteration_ns, job->slowest_rank);
	if (job->lined_up)
		json_lineup(out, job);
	fputs("\"iterations\": [", out);
	for (size_t i = 0; i < job->niterations; i++) {
		const struct job_iteration *it = &job->iterations[i];

		fprintf(out,
			"%s\n    {\"index\": %" PRId64 ", \"steady\": %s, \"time_ns\": %" PRId64 ", \"mean_ns\": %" PRId64
			", \"ranks\": %" PRId64 ", \"slowest_rank\": %" PRId64 ", \"straggler_rank\": %" PRId64
			", \"delay_ns\": %" PRId64 ", \"collectives\": %" PRId64 ", ",
			i ? "," : "", it->index, it->steady ? "true" : "false", it->time_ns, it->mean_ns, it->ranks,
			it->slowest_rank, it->straggler_rank, it->delay_ns, it->collectives);
		if (job->lined_up && it->step >= 0)
			fprintf(out, "\"step\": %" PRId64 ", ", it->step);
		else if (job->lined_up)
			fputs("\"step\": null, ", out);
		json_field(out, "cause", it->cause, 0);
		fputs("}", out);
	}
	fputs("\n  ],\n  \"communication\": [", out);
	for (int t = 0, first = 1; t < COLLECTIVE_TYPES; t++) {
		const struct job_comm *c = &job->comm[t];

		if (!c->count && !c->ns)
			continue;
		fprintf(out, "%s\n    {\"collective\": \"%s\", \"calls\": %" PRId64 ", \"ns\": %" PRId64
			", \"exposed_ns\": %" PRId64 ", \"exposed_transfer_ns\": %" PRId64 "}",
			first ? "" : ",", collective_type_name(t), c->count, c->ns, c->exposed_ns, c->transfer_ns);
		first = 0;
	}
	fprintf(out, "\n  ],\n  \"matched_collectives\": %" PRId64 ", \"unmatched_collectives\": %" PRId64
		",\n  ", job->matched, job->unmatched);
	json_path(out, &job->path);
	fputs("\"findings\": [", out);
	for (size_t i = 0; i < job->findings.count; i++) {
		const struct finding *f = &job->findings.items[i];

		fprintf(out, "%s\n    {", i ? "," : "");
		json_field(out, "rule", f->rule_id, 1);
		json_field(out, "severity", severity_name(f->severity), 1);
		json_field(out, "message", f->message, 1);
		fprintf(out, "\"recoverable_ns\": %" PRId64 ", ", f->recoverable_ns);
		if (f->owner >= 0)
			fprintf(out, "\"owner\": \"%s\", ", kernel_owner_id((enum kernel_owner)f->owner));
		else
			fputs("\"owner\": null, ", out);
		fputs("\"evidence\": [", out);
		for (size_t e = 0; e < f->nevidence; e++) {
			fputs(e ? ", " : "", out);
			output_json_string(out, f->evidence[e]);
		}
		fputs("], ", out);
		json_field(out, "fix", f->fix, 0);
		fputs("}", out);
	}
	fputs("\n  ]\n}\n", out);
}

void report_ranks_write(FILE *out, const struct job_report *job, const char *const *summaries,
			enum output_format format)
{
	if (format == OUTPUT_FORMAT_HTML)
		report_ranks_write_html(out, job, summaries);
	else if (format == OUTPUT_FORMAT_JSON)
		write_json(out, job);
	else
		write_text(out, job, format == OUTPUT_FORMAT_MARKDOWN);
}
