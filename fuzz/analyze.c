/*
 * What every fuzz harness runs on the trace it built: each analyzer command's work, in the order
 * the commands do it, with the output thrown away. The loader (trace_open, trace_set_scope), report
 * (header, phases, the HTML charts, the steady-state scope, every rule, the text, Markdown, JSON and
 * HTML renderers), stats (text, Markdown, JSON), export (Perfetto and Chrome, once gzipped), diff
 * (the trace against itself, in every format) and baseline save / check (written, read back,
 * compared). An error return is a fine outcome; only a crash, a sanitizer report, a leak or a hang
 * is a finding.
 *
 * variant (any number; the harness derives it from its input) picks what varies between runs
 * without being part of the trace: a second copy of the trace opened beside the first, a scope
 * (kernel glob, NVTX range, time window), the Chrome export gzipped, warm-up launches skipped, the
 * walks' tables read through their temporary copies (phases_keep_walk, as the report command).
 */
#include "fuzz/analyze.h"

#include "analyzer/diff/baseline.h"
#include "analyzer/diff/diff.h"
#include "analyzer/export/export.h"
#include "analyzer/report/report.h"
#include "analyzer/stats/stats.h"
#include "analyzer/loader/trace.h"
#include "analyzer/analysis/phases.h"
#include "rules/rule.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *sink(void)
{
	static FILE *null;

	if (!null)
		null = fopen("/dev/null", "w");
	return null;
}

/* As cmd_report: the header and phases over the scope, the rules over the steady state. */
static void run_report(struct trace *trace, const char *scope_words, int keep_scope)
{
	struct report_header hdr = { 0 };
	struct findings findings = { 0 };
	struct rule_config *config = rule_config_new();
	struct report_options opt = { 0 };
	struct trace_scope steady = { 0 };
	char err[1024];
	int n;

	if (phases_compute(trace, NULL, &hdr.phases, err, sizeof(err)) < 0)
		goto out;
	if (report_header_read(trace, scope_words, &hdr, err, sizeof(err)) < 0)
		goto out;
	if (report_charts_read(trace, &hdr, err, sizeof(err)) < 0)
		goto out;
	for (size_t t = 0; t < hdr.phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr.phases->traces[t];

		hdr.steady_iterations += (int64_t)(tp->niterations - tp->first_steady);
	}
	phases_steady_window(hdr.phases, &hdr.steady_start, &hdr.steady_end);
	if (!keep_scope) {
		hdr.steady_only = 1;
		if (hdr.steady_end <= hdr.steady_start)
			hdr.steady_start = hdr.steady_end = INT64_MAX - 1;
		steady.start = hdr.steady_start;
		steady.end = hdr.steady_end + 1;
		if (trace_set_scope(trace, &steady, err, sizeof(err)) < 0)
			goto out;
	}
	n = report_run_rules(trace, config, NULL, 0, hdr.start, NULL, &findings, NULL, err, sizeof(err));
	if (n < 0)
		goto out;
	opt.nrules = (size_t)n;
	for (int f = OUTPUT_FORMAT_TEXT; f <= OUTPUT_FORMAT_HTML; f++) {
		opt.format = (enum output_format)f;
		opt.color = f == OUTPUT_FORMAT_TEXT;
		report_write(sink(), &hdr, &findings, &opt);
	}
out:
	findings_release(&findings);
	report_header_release(&hdr);
	rule_config_free(config);
}

static void run_stats(struct trace *trace, const char *scope_words)
{
	struct stats *stats = NULL;
	char err[1024];

	if (stats_compute(trace, &stats, err, sizeof(err)) == 0) {
		stats_write(sink(), stats, trace, scope_words, OUTPUT_FORMAT_TEXT);
		stats_write(sink(), stats, trace, scope_words, OUTPUT_FORMAT_MARKDOWN);
		stats_write(sink(), stats, trace, scope_words, OUTPUT_FORMAT_JSON);
	}
	stats_free(stats);
	stats = NULL;
	if (stats_compute_devices(trace, &stats, err, sizeof(err)) == 0)
		stats_free(stats);
}

/* As cmd_export: every rule with its defaults first, its findings on their own track. */
static void run_export(struct trace *trace, const char *dir, int gzip)
{
	struct rule_config *config = rule_config_new();
	struct findings findings = { 0 };
	struct rule_context ctx = {.an = {.trace = trace}, .config = config, .out = &findings};
	struct export_options opts = { .findings = &findings };
	char err[1024], path[4096];

	for (const struct rule *const *rule = rule_table; *rule; rule++) {
		rule_enter(&ctx, *rule);
		(*rule)->run(*rule, &ctx, err, sizeof(err));
	}
	opts.format = EXPORT_PERFETTO;
	snprintf(path, sizeof(path), "%s/out.perfetto-trace", dir);
	export_write(trace, &opts, path, err, sizeof(err));
	opts.format = EXPORT_CHROME;
	opts.gzip = gzip;
	snprintf(path, sizeof(path), "%s/out.json", dir);
	export_write(trace, &opts, path, err, sizeof(err));
	findings_release(&findings);
	rule_config_free(config);
}

static void write_diff(const struct kernel_set *base, const struct kernel_set *new, struct diff_config *cfg)
{
	struct diff_result *result = NULL;
	char err[1024];

	if (diff_compare(base, new, cfg, &result, err, sizeof(err)) < 0)
		return;
	for (int f = DIFF_FORMAT_TEXT; f <= DIFF_FORMAT_JUNIT; f++)
		diff_write(result, (enum diff_format)f, sink());
	diff_result_free(result);
}

/* As cmd_diff (the trace against itself), cmd_baseline save and cmd_check. */
static void run_diff(struct trace *trace, const char *dir, const char *nvtx, size_t skip_first)
{
	struct kernel_set *set = NULL, *saved = NULL;
	struct diff_config cfg;
	char err[1024], path[4096];
	FILE *out;

	diff_config_init(&cfg);
	if (kernel_set_load(trace, nvtx, skip_first, &set, err, sizeof(err)) < 0 || !set->count)
		goto out;
	write_diff(set, set, &cfg);
	snprintf(path, sizeof(path), "%s/baseline.json", dir);
	out = fopen(path, "w");
	if (!out)
		goto out;
	if (baseline_write(set, BASELINE_DEFAULT_POINTS, out) < 0) {
		fclose(out);
		goto out;
	}
	fclose(out);
	if (baseline_sniff(path) != 1 || baseline_read(path, &saved, err, sizeof(err)) < 0)
		goto out;
	if (saved->count)
		write_diff(saved, set, &cfg);
out:
	kernel_set_free(saved);
	kernel_set_free(set);
	diff_config_release(&cfg);
}

void fuzz_analyze(const char *path, const char *dir, unsigned variant)
{
	const char *paths[2] = { path, path };
	struct trace_scope scope = { 0 };
	const char *scope_words = NULL;
	struct trace *trace = NULL;
	char err[1024];

	if (trace_open(paths, (variant & 1) ? 2 : 1, &trace, err, sizeof(err)) < 0)
		return;
	/* as cmd_report: the tables the walks read are copied as first scanned, and read from there */
	if ((variant >> 6) & 1)
		phases_keep_walk(trace);
	switch ((variant >> 1) & 3) {
	case 1:
		scope.kernel_glob = "*k*";
		scope_words = "kernels matching '*k*'";
		break;
	case 2:
		scope.nvtx_range = "step";
		scope_words = "NVTX range 'step'";
		break;
	case 3:
		scope.start = 1000;
		scope.end = INT64_MAX / 2;
		scope_words = "window";
		break;
	}
	if (scope_words && trace_set_scope(trace, &scope, err, sizeof(err)) < 0)
		scope_words = NULL;
	run_report(trace, scope_words, scope_words != NULL);
	/* the report narrowed the scope to the steady state: back to the command's own */
	memset(&scope, 0, sizeof(scope));
	trace_set_scope(trace, &scope, err, sizeof(err));
	run_stats(trace, NULL);
	run_export(trace, dir, (variant >> 3) & 1);
	trace_close(trace);

	/* diff, baseline and check open one trace each */
	if (trace_open(paths, 1, &trace, err, sizeof(err)) < 0)
		return;
	run_diff(trace, dir, (variant >> 4) & 1 ? "step" : NULL, (variant >> 5) & 1);
	trace_close(trace);
}

/* A private folder for the exports, on tmpfs when there is one (export fsyncs what it writes). */
const char *fuzz_workdir(void)
{
	static char dir[256];
	const char *base;

	if (dir[0])
		return dir;
	base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	snprintf(dir, sizeof(dir), "%s/gpt-fuzz.XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	return dir;
}

/* Write data to dir/name; 0 or -1. */
int fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

unsigned fuzz_variant(const uint8_t *data, size_t size)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < size; i += 1 + size / 4096)
		h = (h ^ data[i]) * 16777619u;
	return h ^ (uint32_t)size;
}

void fuzz_remove_db(const char *path)
{
	static const char *const suffixes[] = { "", "-journal", "-wal", "-shm" };
	char name[4096];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
		unlink(name);
	}
}

void fuzz_workdir_remove(void)
{
	static const char *const names[] = { "input.sqlite", "out.perfetto-trace", "out.json", "baseline.json" };
	char path[4096];
	const char *dir = fuzz_workdir();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		fuzz_remove_db(path);
	}
	rmdir(dir);
}
