/*
 * gpt-trace export: write a trace as a timeline for ui.perfetto.dev (native Perfetto protobuf, the
 * default) or chrome://tracing (Chrome Trace Event JSON, optionally gzipped). Several traces of one
 * job go into one timeline. The rules run first, as `gpt-trace report` runs them (default thresholds,
 * the steady state), and their findings become instant events on a findings track, so the report's
 * evidence shows on the timeline.
 */
#include "analyzer/export/export.h"
#include "analyzer/report/report.h"
#include "analyzer/report/fix-order.h"
#include "analyzer/loader/trace.h"
#include "cli/commands.h"
#include "cli/report-ranks.h"
#include "cli/trace-args.h"
#include "cli/usage.h"
#include "common/progress.h"
#include "common/util.h"
#include "rules/rule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_text[] =
	"usage: gpt-trace export [--format perfetto|chrome] [-o FILE] [--gzip] [--no-findings]\n"
	"                        [--force-job] TRACE...\n"
	"\n"
	"Write the traces as one timeline: host threads with CUDA API calls and NVTX ranges, one track\n"
	"per GPU stream with kernels, copies and sets, arrows from each launch to its GPU work, GPU busy\n"
	"and copy bandwidth counters, and the findings of gpt-trace report (the rules on the steady\n"
	"state).\n"
	"\n"
	"  -f, --format FORMAT  perfetto (default; open in ui.perfetto.dev) or chrome (Trace Event JSON)\n"
	"  -o, --output FILE    where to write; default: the first trace's name with .perfetto-trace\n"
	"                       or .json (and .gz when gzipped) in place of .sqlite\n"
	"  -z, --gzip           compress the output (gzip)\n"
	"      --no-findings    do not run the rules; no findings track\n"
	"      --force-job      read traces recorded an hour or more apart as one job's\n"
	"\n"
	"The ranks of one job (traces that record ranks, or all ran NCCL kernels) go into one Chrome\n"
	"JSON timeline, a process per rank on a common clock, each collective's kernels linked across\n"
	"ranks (default output: the first trace's name with .ranks.json; docs/multi-rank.md).\n"
	"  -q, --quiet          no progress line (shown on a terminal when the work takes over 2 s)\n";

/* Every trace's steady-state critical path from the replay (hdr's fix order), taken into *path. */
static void take_path(struct report_header *hdr, struct what_if_segment **path, size_t *npath)
{
	for (size_t t = 0; t < hdr->nfix_order; t++) {
		struct report_fix_order *o = &hdr->fix_order[t];

		*path = xrealloc(*path, (*npath + o->npath + 1) * sizeof(**path));
		if (o->npath)
			memcpy(*path + *npath, o->path, o->npath * sizeof(*o->path));
		*npath += o->npath;
	}
}

/*
 * The report's findings: every rule with its defaults, on the steady state as `gpt-trace report`
 * judges it (start-up and warm-up are the phases' business), sharing one walk, and the steady
 * state's critical path; the scope goes back to the whole trace for the timeline. A rule that fails
 * leaves the timeline without findings (and the path), and says so. Returns -1 only when the scope
 * cannot be restored.
 */
static int collect_findings(struct trace *trace, struct findings *out, struct what_if_segment **path,
			    size_t *npath)
{
	struct rule_config *config = rule_config_new();
	struct report_header hdr = { 0 };
	struct trace_scope whole = { 0 };
	int64_t origin = 0;
	char err[512] = "";
	int ret = 0;

	if (trace_args_origin(trace, &origin, err, sizeof(err)) < 0 ||
	    phases_compute(trace, NULL, &hdr.phases, err, sizeof(err)) < 0 ||
	    report_header_read(trace, NULL, &hdr, err, sizeof(err)) < 0 ||
	    report_scope_steady(trace, hdr.phases, &hdr.steady_start, &hdr.steady_end, err, sizeof(err)) < 0 ||
	    report_run_rules(trace, config, NULL, 0, origin, hdr.phases, out, NULL, err, sizeof(err)) < 0 ||
	    report_fix_order_compute(trace, &hdr, out, 1, err, sizeof(err)) < 0) {
		pr_warn("the rules failed, the timeline has no findings: %s", err[0] ? err : "no reason given");
		findings_release(out);
		memset(out, 0, sizeof(*out));
		report_fix_order_release(&hdr);
	}
	hdr.steady_only = 1;	/* as the report judges them */
	/* the findings' recoverable time as the report gives it: replayed where the replay models the fix */
	report_fix_order_apply(&hdr, out);
	take_path(&hdr, path, npath);
	if (trace_set_scope(trace, &whole, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		ret = -1;
	}
	report_fix_order_release(&hdr);
	report_header_release(&hdr);
	rule_config_free(config);
	return ret;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* What the command line asked for. */
struct export_command {
	struct export_options opts;
	const char *output;
	int no_findings, force_job;
};

/* One option into cmd: 0, or -1 (said). */
static int export_option(void *data, int c, const char *arg)
{
	struct export_command *cmd = data;

	switch (c) {
	case 'f':
		cmd->opts.format = export_format_parse(arg);
		if (!cmd->opts.format) {
			pr_err("unknown export format '%s'; use perfetto or chrome", arg);
			return -1;
		}
		return 0;
	case 'o':
		cmd->output = arg;
		return 0;
	case 'q':
		progress_enabled = 0;
		return 0;
	case 'z':
		cmd->opts.gzip = 1;
		return 0;
	case 'F':
		cmd->no_findings = 1;
		return 0;
	case TRACE_ARGS_FORCE_JOB:
		cmd->force_job = 1;
		return 0;
	}
	return 0;
}

/* The options, then at least one trace: 0, or -1 (said), or 1 (--help printed). */
static int export_parse(struct export_command *cmd, int argc, char **argv)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "no-findings", no_argument, NULL, 'F' },
		{ "force-job", no_argument, NULL, TRACE_ARGS_FORCE_JOB },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct usage_command usage = {
		.name = "export", .args = USAGE_ARGS_TRACE, .help = usage_text, .shortopts = "f:o:zq",
		.longopts = options, .option = export_option,
	};

	return usage_parse(&usage, cmd, argc, argv);
}

/* The output is neither an input trace nor a directory: 0 or -1 (said). */
static int check_output(char **paths, int npaths, const char *output)
{
	struct stat st;

	for (int i = 0; i < npaths; i++) {
		if (same_file(paths[i], output)) {
			pr_err("cannot write '%s': it is the input trace", output);
			return -1;
		}
	}
	if (!stat(output, &st) && S_ISDIR(st.st_mode)) {
		pr_err("cannot write '%s': is a directory", output);
		return -1;
	}
	return 0;
}

/* The traces' timeline, with the report's findings unless --no-findings, into output: 0 or -1 (said). */
static int export_timeline(struct export_command *cmd, char **paths, int npaths, const char *output)
{
	struct findings findings = { 0 };
	struct what_if_segment *path = NULL;
	size_t npath = 0;
	struct trace *trace = NULL;
	char err[1024];
	struct stat st;
	int ret = -1;

	if (trace_open((const char *const *)paths, (size_t)npaths, &trace, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (npaths > 1 && !cmd->force_job && trace_args_check_job(trace, paths, npaths) < 0)
		goto out;
	export_keep(trace);
	if (!cmd->no_findings) {
		phases_keep_walk(trace);	/* into the export's copies: each table still read once */
		if (collect_findings(trace, &findings, &path, &npath) < 0)
			goto out;
		cmd->opts.findings = &findings;
		cmd->opts.path = path;
		cmd->opts.npath = npath;
	}
	if (export_write(trace, &cmd->opts, output, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		goto out;
	}
	if (!stat(output, &st))
		printf("wrote '%s' (%s%s, %lld bytes)\n", output,
		       cmd->opts.format == EXPORT_CHROME ? "chrome json" : "perfetto",
		       cmd->opts.gzip ? ", gzip" : "", (long long)st.st_size);
	ret = 0;
out:
	cmd->opts.findings = NULL;
	cmd->opts.path = NULL;
	cmd->opts.npath = 0;
	free(path);
	findings_release(&findings);
	trace_close(trace);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	struct export_command cmd = { .opts = { .format = EXPORT_PERFETTO } };
	const char *output;
	char *default_output = NULL, **paths = NULL;
	int status = GPT_EXIT_USAGE, parsed, npaths = 0;

	parsed = export_parse(&cmd, argc, argv);
	if (parsed)
		return usage_status(parsed);
	paths = trace_args_paths(argv + optind, argc - optind, &npaths);
	if (!paths)
		return GPT_EXIT_USAGE;
	if (report_ranks_wanted(paths, (size_t)npaths, -1)) {
		status = export_ranks(paths, (size_t)npaths, cmd.output, cmd.opts.gzip, cmd.force_job,
				      !progress_enabled);
		goto out;
	}
	output = cmd.output;
	if (!output) {
		default_output = export_default_path(paths[0], &cmd.opts);
		if (!default_output)
			die("out of memory");
		output = default_output;
	}
	if (check_output(paths, npaths, output) < 0 || export_timeline(&cmd, paths, npaths, output) < 0)
		goto out;
	status = GPT_EXIT_OK;
out:
	trace_args_paths_free(paths, npaths);
	free(default_output);
	return status;
}
