/*
 * The cross-rank report (see report-ranks.h): summaries are made beside the traces, once (a fresh
 * one is reused), by forked workers; the merge reads them back one at a time.
 */
#include "cli/report-ranks.h"

#include "analyzer/report-ranks.h"
#include "common/util.h"
#include "ranks/job.h"
#include "ranks/summary.h"

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

int report_ranks(char *const *paths, size_t n, const struct report_ranks_options *o)
{
	char **summaries = xcalloc(n ? n : 1, sizeof(*summaries));
	const char **traces = xcalloc(n ? n : 1, sizeof(*traces));
	const char **outs = xcalloc(n ? n : 1, sizeof(*outs));
	struct job_report *job = NULL;
	char *tmpdir = NULL, err[1024];
	size_t ntraces = 0;
	int ret = GPT_EXIT_USAGE, jobs = o->jobs;
	FILE *out = stdout;

	for (size_t i = 0; i < n; i++) {
		if (is_summary(paths[i])) {
			summaries[i] = xstrdup(paths[i]);
			continue;
		}
		summaries[i] = report_ranks_summary_path(paths[i], i, &tmpdir);
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
	if (rank_summaries_make(traces, outs, ntraces, jobs, o->step, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (job_merge((const char *const *)summaries, n, o->config, &job, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (o->output && !(out = fopen(o->output, "w"))) {
		pr_err("cannot write '%s': %m", o->output);
		out = stdout;
		goto out;
	}
	report_ranks_write(out, job, o->format);
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
	free(traces);
	free(outs);
	return ret;
}
