/*
 * gpt-trace report over the ranks of a multi-rank job (cmd-report.c hands over to it): summarize
 * each trace (or take the summaries given), merge, judge and write the cross-rank report.
 */
#ifndef GPT_CLI_REPORT_RANKS_H
#define GPT_CLI_REPORT_RANKS_H

#include "analyzer/report/report.h"
#include "rules/rule.h"

#include <stddef.h>

struct report_ranks_options {
	enum output_format format;
	const char *output;		/* NULL: stdout */
	const struct rule_config *config;
	const char *step;		/* --step, or NULL */
	int jobs;			/* summary workers; 0: every core */
	int gate;			/* --fail-on given */
	int force_job;			/* --force-job */
	enum finding_severity fail_on;
};

/* Whether the inputs are to be reported as the ranks of one job: force 1 yes, 0 no, -1 decide (a
   summary among them, or several traces that record ranks or all ran NCCL kernels). */
int report_ranks_wanted(char *const *paths, size_t n, int force);

/* Returns the exit status. */
int report_ranks(char *const *paths, size_t n, const struct report_ranks_options *options);

/*
 * gpt-trace export of several ranks: the job's timeline (analyzer/export/ranks-export.h) as Chrome JSON at
 * output (NULL: the first trace's name with .ranks.json, .gz when gzipped); traces recorded an
 * hour or more apart are refused unless force_job. Returns the exit status.
 */
int export_ranks(char *const *paths, size_t n, const char *output, int gzip, int force_job, int quiet);

/* Where the summary of trace goes: beside it (TRACE.summary) when its folder is writable, else in
   tmpdir (created on first use; *tmpdir is then set and the caller removes it). Free the result. */
char *report_ranks_summary_path(const char *trace, size_t index, char **tmpdir);

#endif
