/*
 * gpt-trace report: the bottleneck report. Opens the traces (ours or nsys exports), applies the
 * scope, runs the rules of rules/registry.c with the thresholds of --config and --set, and writes
 * the header and the ranked findings as text (colour on a terminal), Markdown, JSON or an HTML page.
 */
#include "report/report.h"
#include "cli/commands.h"
#include "cli/report-ranks.h"
#include "cli/trace-args.h"
#include "common/progress.h"
#include "common/util.h"
#include "rules/phases.h"

#include <getopt.h>
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
	{ "window", required_argument, NULL, 'w' },
	{ "nvtx", required_argument, NULL, 'n' },
	{ "kernel", required_argument, NULL, 'k' },
	{ "help", no_argument, NULL, 'h' },
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

int cmd_report(int argc, char **argv)
{
	struct report_options opt = { .format = OUTPUT_FORMAT_TEXT };
	struct report_header hdr = { 0 };
	struct findings findings = { 0 };
	struct rule_config *config = rule_config_new();
	struct trace_args args = { .keep = phases_keep_walk };
	const char **ids = NULL, *output = NULL, *color = "auto", *step = NULL;
	enum finding_severity fail_on = SEVERITY_INFO;
	struct trace *trace = NULL;
	char err[1024], *scope = NULL;
	size_t nids = 0;
	int64_t origin;
	int c, ret = GPT_EXIT_USAGE, gate = 0, timings = 0, whole = 0, n, ranks = -1, jobs = 0;
	FILE *out = stdout;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:c:s:r:w:n:k:j:qh", long_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "html")) {
				opt.format = OUTPUT_FORMAT_HTML;
			} else if (output_format_parse(optarg, &opt.format) < 0) {
				pr_err("unknown format '%s': want text, markdown, json or html", optarg);
				goto out;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'c':
			if (rule_config_load(config, optarg, err, sizeof(err)) < 0) {
				pr_err("%s", err);
				goto out;
			}
			break;
		case 's':
			if (rule_config_set(config, optarg, err, sizeof(err)) < 0) {
				pr_err("%s", err);
				goto out;
			}
			break;
		case 'r':
			if (!rule_find(optarg)) {
				pr_err("unknown rule '%s'; 'gpt-trace rules' lists them", optarg);
				goto out;
			}
			ids = xrealloc(ids, (nids + 1) * sizeof(*ids));
			ids[nids++] = optarg;
			break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never")) {
				pr_err("invalid --color '%s': want auto, always or never", optarg);
				goto out;
			}
			color = optarg;
			break;
		case OPT_FAIL_ON:
			if (parse_severity(optarg, &fail_on) < 0) {
				pr_err("invalid --fail-on '%s': want info, warning or critical", optarg);
				goto out;
			}
			gate = 1;
			break;
		case 'q':
			progress_enabled = 0;
			break;
		case OPT_TIMINGS:
			timings = 1;
			break;
		case OPT_STEP:
			step = optarg;
			break;
		case OPT_WHOLE:
			whole = 1;
			break;
		case OPT_RANKS:
			ranks = 1;
			break;
		case OPT_NO_RANKS:
			ranks = 0;
			break;
		case 'j':
			jobs = atoi(optarg);
			if (jobs < 1) {
				pr_err("invalid --jobs '%s': want a positive number", optarg);
				goto out;
			}
			break;
		case 'w':
			args.window = optarg;
			break;
		case 'n':
			args.nvtx = optarg;
			break;
		case 'k':
			args.kernel = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			ret = GPT_EXIT_OK;
			goto out;
		case ':':
			pr_err("option '%s' needs a value; see 'gpt-trace report --help'", argv[optind - 1]);
			goto out;
		default:
			pr_err("unknown option '%s'; see 'gpt-trace report --help'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind >= argc) {
		pr_err("no trace given; usage: gpt-trace report [options] TRACE...");
		goto out;
	}
	if (report_ranks_wanted(argv + optind, (size_t)(argc - optind), ranks)) {
		struct report_ranks_options ro = { .format = opt.format, .output = output, .config = config,
						   .step = step, .jobs = jobs, .gate = gate, .fail_on = fail_on };

		if (args.window || args.nvtx || args.kernel || ids) {
			pr_err("the cross-rank report of several ranks takes no --window, --nvtx, --kernel or --rule; "
			       "report one rank's trace for those");
			goto out;
		}
		if (opt.format == OUTPUT_FORMAT_HTML && !output) {
			pr_err("--format html needs an output file: -o report.html");
			goto out;
		}
		ret = report_ranks(argv + optind, (size_t)(argc - optind), &ro);
		goto out;
	}
	if (opt.format == OUTPUT_FORMAT_HTML && !output) {
		pr_err("--format html needs an output file: -o report.html");
		goto out;
	}
	trace = trace_args_open(argv + optind, argc - optind, &args, &origin, &scope);
	if (!trace)
		goto out;
	if (phases_compute(trace, step, &hdr.phases, err, sizeof(err)) < 0 ||
	    report_header_read(trace, scope, &hdr, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	hdr.origin = origin;
	/* the page's charts show the whole scope, so they are read before it narrows to the steady state */
	if (opt.format == OUTPUT_FORMAT_HTML && report_charts_read(trace, &hdr, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (judge_steady_state(trace, &hdr, scope != NULL || whole) < 0)
		goto out;
	n = report_run_rules(trace, config, ids, nids, origin, &findings, timings ? stderr : NULL, err, sizeof(err));
	if (n < 0) {
		pr_err("%s", err);
		goto out;
	}
	report_discount_replayed(&hdr, &findings);
	opt.nrules = (size_t)n;
	if (output && !(out = fopen(output, "w"))) {
		pr_err("cannot write '%s': %m", output);
		out = stdout;
		goto out;
	}
	opt.color = opt.format == OUTPUT_FORMAT_TEXT && use_color(color, output);
	report_write(out, &hdr, &findings, &opt);
	if (fflush(out) != 0 || ferror(out)) {
		pr_err("cannot write '%s': %m", output ? output : "stdout");
		goto out;
	}
	ret = GPT_EXIT_OK;
	for (size_t i = 0; gate && i < findings.count; i++) {
		if (findings.items[i].severity >= fail_on)
			ret = GPT_EXIT_REGRESSION;
	}
out:
	if (out != stdout)
		fclose(out);
	findings_release(&findings);
	report_header_release(&hdr);
	rule_config_free(config);
	trace_close(trace);
	free(scope);
	free(ids);
	return ret;
}
