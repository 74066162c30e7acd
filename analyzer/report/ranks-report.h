/*
 * The cross-rank report of a multi-rank job (analyzer/ranks/job.h) as text, Markdown, JSON (schema
 * "gpt-trace-job-report/1", docs/multi-rank.md) or one self-contained HTML page: the ranks, the
 * notes on traces left out, the iterations with their slowest rank and straggler, communication per
 * collective type (overlapped or exposed), the clock corrections, and the cross-rank rules'
 * findings; the page adds the ranks side by side on the job's clock (docs/html-report.md).
 */
#ifndef GPT_REPORT_RANKS_REPORT_H
#define GPT_REPORT_RANKS_REPORT_H

#include "analyzer/report/report.h"
#include "analyzer/ranks/job.h"

#include <stdio.h>

#define JOB_REPORT_JSON_SCHEMA "gpt-trace-job-report/1"

/* summaries[i]: the summary file of job->ranks[i], whose iterations the HTML page's timeline draws
   (NULL, or a NULL entry: drawn without); only HTML reads them, and the ranks' traces. */
void report_ranks_write(FILE *out, const struct job_report *job, const char *const *summaries,
			enum output_format format);

#endif
