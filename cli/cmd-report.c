/*
 * gpt-trace report: the bottleneck report. Opens the traces (ours or nsys exports), applies the
 * scope, runs the rules of rules/registry.c with the thresholds of --config and --set, and writes
 * the header and the ranked findings as text (colour on a terminal), Markdown, JSON or an HTML page.
 */
#include "analyzer/report/report.h"
#include "analyzer/report/fix-order.h"
#include "cli/commands.h"
#include "cli/report-ranks.h"
#include "cli/trace-args.h"
#include "cli/usage.h"
#include "common/progress.h"
#include "common/util.h"
#include "analyzer/analysis/memory-use.h"
#include "analyzer/analysis/phases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: gpt-trace report [options] TRACE...\n"
	"\n"
	"Run the bottleneck rules over TRACE (a gpt-trace trace or an nsys SQLite export; several\n"
	"per-process traces of one job are read together) and report what ran, where, for how long and\n"
	"how busy the GPU was, then every finding ranked by the time it would recover, with evidence and\n"
	"a fix.\n"
	"\n"
	"options:\n"
	"  -f, --format FORMAT   text (default), markdown (for a PR comment or CI summary), json\n"
	"                        (schema gpt-trace-report/2, see docs/report-json.md) or html (one\n"
	"                        self-contained page with a timeline and charts; needs -o, see\n"
	"                        docs/html-report.md)\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"  -c, --config FILE     thresholds from FILE: [rule-id] sections of 'param = value' lines\n"
	"  -s, --set RULE.PARAM=VALUE\n"
	"                        set one threshold (repeatable; after --config, later wins)\n"
	"  -r, --rule ID         run only rule ID (repeatable; default: every rule)\n"
	"      --color WHEN      auto (default: on a terminal unless NO_COLOR is set), always, never\n"
	"      --fail-on SEVERITY  exit 1 when a finding has at least SEVERITY (info, warning,\n"
	"                        critical): a CI gate\n"
	"      --step REGEX      the NVTX ranges (POSIX extended regular expression on their text)\n"
	"                        that are the program's iterations (default: found automatically)\n"
	"      --whole-trace     judge the whole trace, start-up and warm-up included (default: the\n"
	"                        rules judge the steady state; one-time costs are listed apart)\n"
	"      --timings         print each rule's run time on stderr\n"
	"      --ranks, --no-ranks  read the traces as the ranks of one job, or not (default: yes\n"
	"                        when they record ranks or all ran NCCL kernels, or a TRACE is a\n"
	"                        .summary): the cross-rank report, see docs/multi-rank.md\n"
	"  -j, --jobs N          summarize N rank traces at a time (default: every core)\n"
	"  -q, --quiet           no progress line (shown on a terminal when the work takes over 2 s)\n"
	"  -h, --help            print this help\n"
	"\n" TRACE_ARGS_USAGE
	"\n'gpt-trace rules' lists the rules and their thresholds.\n"
	"exit status: 0 report written, 1 a finding reached --fail-on, 2 usage error or unreadable trace\n";

enum {
	OPT_COLOR = 256,
	OPT_FAIL_ON,
	OPT_TIMINGS,
	OPT_STEP,
	OPT_WHOLE,
	OPT_RANKS,
	OPT_NO_RANKS,
};

static const struct option long_options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "config", required_argument, NULL, 'c' },
	{ "set", required_argument, NULL, 's' },
	{ "rule", required_argument, NULL, 'r' },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
	{ "timings", no_argument, NULL, OPT_TIMINGS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "step", required_argument, NULL, OPT_STEP },
	{ "whole-trace", no_argument, NULL, OPT_WHOLE },
	{ "ranks", no_argument, NULL, OPT_RANKS },
	{ "no-ranks", no_argument, NULL, OPT_NO_RANKS },
	{ "jobs", required_argument, NULL, 'j' },
	TRACE_ARGS_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

static int parse_severity(const char *s, enum finding_severity *out)
{
	if (!strcmp(s, "info"))
		*out = SEVERITY_INFO;
	else if (!strcmp(s, "warning"))
		*out = SEVERITY_WARNING;
	else if (!strcmp(s, "critical"))
		*out = SEVERITY_CRITICAL;
	else
		return -1;
	return 0;
}

static int use_color(const char *when, const char *output)
{
	const char *no_color = getenv("NO_COLOR");

	if (!strcmp(when, "always"))
		return 1;
	if (!strcmp(when, "never") || output)
		return 0;
	return isatty(STDOUT_FILENO) && !(no_color && no_color[0]);
}

/*
 * Restrict the rules to the steady state (unless the user chose a scope, or --whole-trace): one-time
 * costs are the phases' business, not findings.
 */
static int judge_steady_state(struct trace *trace, struct report_header *hdr, int keep_scope)
{
	char err[512];

	for (size_t t = 0; t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];

		hdr->steady_iterations += (int64_t)(tp->niterations - tp->first_steady);
	}
	phases_steady_window(hdr->phases, &hdr->steady_start, &hdr->steady_end);
	if (keep_scope)
		return 0;
	hdr->steady_only = 1;
	if (report_scope_steady(trace, hdr->phases, &hdr->steady_start, &hdr->steady_end, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	return 0;
}

/* What the command line asked for. */
struct report_command {
	struct report_options opt;
	struct rule_config *config;
	struct trace_args args;
	const char **ids, *output, *color, *step;
	size_t nids;
	enum finding_severity fail_on;
	int gate, timings, whole, ranks, jobs;
};

/* One option into cmd: 0, or -1 (said). */
static int report_option(void *data, int c, const char *arg)
{
	struct report_command *cmd = data;
	char err[1024];

	if (trace_args_option(&cmd->args, c, arg))
		return 0;
	switch (c) {
	case 'f':
		if (!strcmp(arg, "html")) {
			cmd->opt.format = OUTPUT_FORMAT_HTML;
		} else if (output_format_parse(arg, &cmd->opt.format) < 0) {
			pr_err("unknown format '%s': want text, markdown, json or html", arg);
			return -1;
		}
		return 0;
	case 'o':
		cmd->output = arg;
		return 0;
	case 'c':
		if (rule_config_load(cmd->config, arg, err, sizeof(err)) < 0) {
			pr_err("%s", err);
			return -1;
		}
		return 0;
	case 's':
		if (rule_config_set(cmd->config, arg, err, sizeof(err)) < 0) {
			pr_err("%s", err);
			return -1;
		}
		return 0;
	case 'r':
		if (!rule_find(arg)) {
			pr_err("unknown rule '%s'; 'gpt-trace rules' lists them", arg);
			return -1;
		}
		cmd->ids = xrealloc(cmd->ids, (cmd->nids + 1) * sizeof(*cmd->ids));
		cmd->ids[cmd->nids++] = arg;
		return 0;
	case OPT_COLOR:
		if (strcmp(arg, "auto") && strcmp(arg, "always") && strcmp(arg, "never")) {
			pr_err("invalid --color '%s': want auto, always or never", arg);
			return -1;
		}
		cmd->color = arg;
		return 0;
	case OPT_FAIL_ON:
		if (parse_severity(arg, &cmd->fail_on) < 0) {
			pr_err("invalid --fail-on '%s': want info, warning or critical", arg);
			return -1;
		}
		cmd->gate = 1;
		return 0;
	case 'q':
		progress_enabled = 0;
		return 0;
	case OPT_TIMINGS:
		cmd->timings = 1;
		return 0;
	case OPT_STEP:
		cmd->step = arg;
		return 0;
	case OPT_WHOLE:
		cmd->whole = 1;
		return 0;
	case OPT_RANKS:
		cmd->ranks = 1;
		return 0;
	case OPT_NO_RANKS:
		cmd->ranks = 0;
		return 0;
	case 'j':
		return usage_positive("--jobs", arg, &cmd->jobs);
	}
	return 0;
}

static const struct usage_command report_usage = {
	.name = "report", .args = USAGE_ARGS_TRACE, .help = usage_text,
	.shortopts = "f:o:c:s:r:w:n:k:j:q", .longopts = long_options, .option = report_option,
};

/* The cross-rank report of several ranks' traces (cli/report-ranks.c); an exit status. */
static int report_job(struct report_command *cmd, char **traces, size_t ntraces)
{
	struct report_ranks_options ro = { .format = cmd->opt.format, .output = cmd->output, .config = cmd->config,
					   .force_job = cmd->args.force_job,
					   .step = cmd->step, .jobs = cmd->jobs, .gate = cmd->gate,
					   .fail_on = cmd->fail_on };

	if (cmd->args.window || cmd->args.nvtx || cmd->args.kernel || cmd->ids) {
		pr_err("the cross-rank report of several ranks takes no --window, --nvtx, --kernel or --rule; "
		       "report one rank's trace for those");
		return GPT_EXIT_USAGE;
	}
	if (cmd->opt.format == OUTPUT_FORMAT_HTML && !cmd->output) {
		pr_err("--format html needs an output file: -o report.html");
		return GPT_EXIT_USAGE;
	}
	return report_ranks(traces, ntraces, &ro);
}

/* The header and phases over the scope (the page's charts too), then the scope narrowed to the
 * steady state where the rules judge: 0 or -1 (said). */
static int report_load(struct report_command *cmd, struct trace *trace, const char *scope, int64_t origin,
		       struct report_header *hdr)
{
	char err[1024];

	if (phases_compute(trace, cmd->step, &hdr->phases, err, sizeof(err)) < 0 ||
	    report_header_read(trace, scope, hdr, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	hdr->origin = origin;
	if (memory_summary_compute(trace, hdr->phases, &hdr->memory, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	/* the page's charts show the whole scope, so they are read before it narrows to the steady state */
	if (cmd->opt.format == OUTPUT_FORMAT_HTML && report_charts_read(trace, hdr, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	return judge_steady_state(trace, hdr, scope != NULL || cmd->whole);
}

/* The rules over the scope, their findings ranked (and discounted on a replayed trace): 0 or -1. */
static int report_compute(struct report_command *cmd, struct trace *trace, struct report_header *hdr,
			  struct findings *findings)
{
	char err[1024];
	int n = report_run_rules(trace, cmd->config, cmd->ids, cmd->nids, hdr->origin,
				 hdr->steady_only ? hdr->phases : NULL, findings, cmd->timings ? stderr : NULL, err,
				 sizeof(err));

	if (n < 0) {
		pr_err("%s", err);
		return -1;
	}
	cmd->opt.nrules = (size_t)n;
	if (hdr->steady_only && report_fix_order_compute(trace, hdr, findings, cmd->opt.format == OUTPUT_FORMAT_HTML, err,
							      sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	report_fix_order_apply(hdr, findings);
	return 0;
}

/* The report to -o's file or stdout: 0 or -1 (said). */
static int report_output(struct report_command *cmd, const struct report_header *hdr,
			 const struct findings *findings)
{
	FILE *out = stdout;
	int ret = 0;

	if (cmd->output && !(out = fopen(cmd->output, "w"))) {
		pr_err("cannot write '%s': %m", cmd->output);
		return -1;
	}
	cmd->opt.color = cmd->opt.format == OUTPUT_FORMAT_TEXT && use_color(cmd->color, cmd->output);
	report_write(out, hdr, findings, &cmd->opt);
	if (fflush(out) != 0 || ferror(out)) {
		pr_err("cannot write '%s': %m", cmd->output ? cmd->output : "stdout");
		ret = -1;
	}
	if (out != stdout)
		fclose(out);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_command cmd = { .opt = { .format = OUTPUT_FORMAT_TEXT }, .config = rule_config_new(),
				      .args = { .keep = phases_keep_walk }, .color = "auto",
				      .fail_on = SEVERITY_INFO, .ranks = -1 };
	struct report_header hdr = { 0 };
	struct findings findings = { 0 };
	struct trace *trace = NULL;
	char *scope = NULL, **paths = NULL;
	int64_t origin;
	int ret = GPT_EXIT_USAGE, parsed, npaths = 0;

	parsed = usage_parse(&report_usage, &cmd, argc, argv);
	if (parsed) {
		ret = usage_status(parsed);
		goto out;
	}
	paths = trace_args_paths(argv + optind, argc - optind, &npaths);
	if (!paths)
		goto out;
	if (report_ranks_wanted(paths, (size_t)npaths, cmd.ranks)) {
		ret = report_job(&cmd, paths, (size_t)npaths);
		goto out;
	}
	if (cmd.opt.format == OUTPUT_FORMAT_HTML && !cmd.output) {
		pr_err("--format html needs an output file: -o report.html");
		goto out;
	}
	trace = trace_args_open(paths, npaths, &cmd.args, &origin, &scope);
	if (!trace || report_load(&cmd, trace, scope, origin, &hdr) < 0 ||
	    report_compute(&cmd, trace, &hdr, &findings) < 0 || report_output(&cmd, &hdr, &findings) < 0)
		goto out;
	ret = GPT_EXIT_OK;
	for (size_t i = 0; cmd.gate && i < findings.count; i++) {
		if (findings.items[i].severity >= cmd.fail_on)
			ret = GPT_EXIT_REGRESSION;
	}
out:
	findings_release(&findings);
	report_fix_order_release(&hdr);
	report_header_release(&hdr);
	rule_config_free(cmd.config);
	trace_close(trace);
	trace_args_paths_free(paths, npaths);
	free(scope);
	free(cmd.ids);
	return ret;
}
