/*
 * The cross-rank report (see report-ranks.h): summaries are made beside the traces, once (a fresh
 * one is reused), by forked workers; the merge reads them back one at a time.
 */
#include "cli/report-ranks.h"

#include "analyzer/export/ranks-export.h"
#include "analyzer/report/ranks-report.h"
#include "common/util.h"
#include "analyzer/ranks/job.h"
#include "analyzer/ranks/summary.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_summary(const char *path)
{
	size_t n = strlen(path), k = strlen(RANK_SUMMARY_SUFFIX);

	return n > k && !strcmp(path + n - k, RANK_SUMMARY_SUFFIX);
}

int report_ranks_wanted(char *const *paths, size_t n, int force)
{
	if (force >= 0)
		return force;
	for (size_t i = 0; i < n; i++)
		if (is_summary(paths[i]))
			return 1;
	/* more traces than SQLite can attach together are only ever read as ranks */
	return n > 8 || rank_traces_are_job((const char *const *)paths, n);
}

char *report_ranks_summary_path(const char *trace, size_t index, char **tmpdir)
{
	char *copy = xstrdup(trace), *dir = dirname(copy);
	int writable = access(dir, W_OK) == 0;

	free(copy);
	if (writable)
		return rank_summary_path(trace);
	if (!*tmpdir) {
		const char *base = getenv("TMPDIR");
		char *tmpl = xasprintf("%s/gpt-trace-summaries.XXXXXX", base && *base ? base : "/tmp");

		if (!mkdtemp(tmpl)) {
			free(tmpl);
			return NULL;
		}
		*tmpdir = tmpl;
	}
	return xasprintf("%s/%zu%s", *tmpdir, index, RANK_SUMMARY_SUFFIX);
}

static void remove_tmpdir(char *tmpdir, char **paths, size_t n)
{
	if (!tmpdir)
		return;
	for (size_t i = 0; i < n; i++)
		if (paths[i] && !strncmp(paths[i], tmpdir, strlen(tmpdir)))
			unlink(paths[i]);
	rmdir(tmpdir);
	free(tmpdir);
}

/* Summaries of the traces (made where missing or stale) and their merge; summaries[i] for paths[i]. */
static int merge_job(char *const *paths, size_t n, int jobs, const struct rule_config *config, const char *step,
		     int force_job, char **summaries, char **tmpdir, struct job_report **job)
{
	const char **traces = xcalloc(n ? n : 1, sizeof(*traces));
	const char **outs = xcalloc(n ? n : 1, sizeof(*outs));
	size_t ntraces = 0;
	char err[1024];
	int ret = -1;

	for (size_t i = 0; i < n; i++) {
		if (is_summary(paths[i])) {
			summaries[i] = xstrdup(paths[i]);
			continue;
		}
		summaries[i] = report_ranks_summary_path(paths[i], i, tmpdir);
		if (!summaries[i]) {
			pr_err("cannot make a folder for the summaries of '%s': %m", paths[i]);
			goto out;
		}
		traces[ntraces] = paths[i];
		outs[ntraces++] = summaries[i];
	}
	if (jobs <= 0) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = cores > 0 ? (int)cores : 1;
	}
	/* a worker that died leaves its traces without a summary: the merge notes each and goes on */
	if (rank_summaries_make(traces, outs, ntraces, jobs, step, err, sizeof(err)) < 0)
		pr_warn("%s", err);
	if (job_merge((const char *const *)summaries, n, config, force_job, job, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	ret = 0;
out:
	free(traces);
	free(outs);
	return ret;
}

/* The summary of each of the job's ranks, in the job's rank order (NULL where none): a trace's is
   the one made for it, a summary given is its own trace's. Free the array. */
static const char **rank_summaries(const struct job_report *job, char *const *paths, char *const *summaries,
				   size_t n)
{
	const char **ordered = xcalloc(job->nranks ? job->nranks : 1, sizeof(*ordered));

	for (size_t i = 0; i < n; i++) {
		struct rank_summary s = { 0 };
		const char *trace = paths[i];
		char err[256];

		if (is_summary(paths[i]))
			trace = rank_summary_load(paths[i], &s, err, sizeof(err)) == 0 ? s.trace : NULL;
		for (size_t r = 0; trace && r < job->nranks; r++)
			if (!ordered[r] && !strcmp(trace, job->ranks[r].trace))
				ordered[r] = summaries[i];
		rank_summary_release(&s);
	}
	return ordered;
}

int export_ranks(char *const *paths, size_t n, const char *output, int gzip, int force_job, int quiet)
{
	char **summaries = xcalloc(n ? n : 1, sizeof(*summaries)), *tmpdir = NULL, *path = NULL, err[1024];
	const char **ordered = NULL;
	struct job_report *job = NULL;
	int ret = GPT_EXIT_USAGE;

	if (merge_job(paths, n, 0, NULL, NULL, force_job, summaries, &tmpdir, &job) < 0)
		goto out;
	for (size_t i = 0; i < job->nnotes; i++)
		pr_warn("%s", job->notes[i]);
	ordered = rank_summaries(job, paths, summaries, n);
	if (output) {
		path = xstrdup(output);
	} else {
		size_t len = strlen(paths[0]);

		if (len > 7 && !strcmp(paths[0] + len - 7, ".sqlite"))
			len -= 7;
		path = xasprintf("%.*s.ranks.json%s", (int)len, paths[0], gzip ? ".gz" : "");
	}
	if (export_ranks_write(job, ordered, path, gzip, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (!quiet)
		printf("wrote '%s' (chrome json of %zu ranks%s)\n", path, job->nranks, gzip ? ", gzip" : "");
	ret = GPT_EXIT_OK;
out:
	job_report_free(job);
	remove_tmpdir(tmpdir, summaries, n);
	for (size_t i = 0; i < n; i++)
		free(summaries[i]);
	free(summaries);
	free(ordered);
	free(path);
	return ret;
}

int report_ranks(char *const *paths, size_t n, const struct report_ranks_options *o)
{
	char **summaries = xcalloc(n ? n : 1, sizeof(*summaries));
	const char **ordered = NULL;
	struct job_report *job = NULL;
	char *tmpdir = NULL;
	int ret = GPT_EXIT_USAGE;
	FILE *out = stdout;

	if (merge_job(paths, n, o->jobs, o->config, o->step, o->force_job, summaries, &tmpdir, &job) < 0)
		goto out;
	if (o->output && !(out = fopen(o->output, "w"))) {
		pr_err("cannot write '%s': %m", o->output);
		out = stdout;
		goto out;
	}
	ordered = rank_summaries(job, paths, summaries, n);
	report_ranks_write(out, job, ordered, o->format);
	if (fflush(out) != 0 || ferror(out)) {
		pr_err("cannot write '%s': %m", o->output ? o->output : "stdout");
		goto out;
	}
	ret = GPT_EXIT_OK;
	for (size_t i = 0; o->gate && i < job->findings.count; i++)
		if (job->findings.items[i].severity >= o->fail_on)
			ret = GPT_EXIT_REGRESSION;
out:
	if (out != stdout)
		fclose(out);
	job_report_free(job);
	remove_tmpdir(tmpdir, summaries, n);
	for (size_t i = 0; i < n; i++)
		free(summaries[i]);
	free(summaries);
	free(ordered);
	return ret;
}
