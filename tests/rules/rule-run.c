/*
 * rule-run: the rules' test driver. Opens a trace, runs one rule (or all), and prints the findings
 * in a stable plain-text form that tests compare with expected files:
 *
 *   rule-run [-c CONFIG] [-s rule.param=value]... [-r RULE] [-f] [-x SQL] TRACE...
 *   rule-run -l             (the rule table: ids, titles, parameters with their values)
 *
 * -x (repeatable) runs SQL on the trace's connection before the rules: the tests use it to stand in for views
 * that later features create (kernel_metrics).
 *
 *   <rule> <severity> recoverable=<ns> device=<d> stream=<s> range=<start>..<end>
 *     <message>
 *     - <evidence line>
 *     fix: <fix>            (with -f)
 *
 * Findings are ranked as reports rank them. Exit status 0, or 2 with one line on stderr.
 */
#include "rules/rule.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const severity_name[] = { "info", "warning", "critical" };

static void list_rules(struct rule_config *config)
{
	struct rule_context ctx = { .config = config };

	for (size_t i = 0; rule_table[i]; i++) {
		const struct rule *rule = rule_table[i];

		printf("%s: %s\n  %s\n", rule->id, rule->title, rule->measures);
		for (size_t j = 0; j < rule->nparams; j++)
			printf("  %s.%s = %g %s (default %g): %s\n", rule->id, rule->params[j].name,
			       rule_param(&ctx, rule, rule->params[j].name), rule->params[j].unit,
			       rule->params[j].default_value, rule->params[j].help);
	}
}

static void print_finding(const struct finding *f, int with_fix)
{
	printf("%s %s recoverable=%" PRId64 " device=%d stream=%" PRId64 " range=%" PRId64 "..%" PRId64
	       "\n",
	       f->rule_id, severity_name[f->severity], f->recoverable_ns, f->device, f->stream, f->start,
	       f->end);
	printf("  %s\n", f->message);
	for (size_t i = 0; i < f->nevidence; i++)
		printf("  - %s\n", f->evidence[i]);
	if (with_fix)
		printf("  fix: %s\n", f->fix);
}

int main(int argc, char **argv)
{
	struct rule_config *config = rule_config_new();
	struct findings findings = { 0 };
	const char *only = NULL, *sql[8];
	size_t nsql = 0;
	struct trace *trace = NULL;
	struct rule_context ctx;
	int with_fix = 0, list = 0, opt, status = 2;
	char err[512];

	while ((opt = getopt(argc, argv, "c:s:r:flx:")) != -1) {
		switch (opt) {
		case 'c':
			if (rule_config_load(config, optarg, err, sizeof(err)) < 0)
				goto out_err;
			break;
		case 's':
			if (rule_config_set(config, optarg, err, sizeof(err)) < 0)
				goto out_err;
			break;
		case 'r':
			only = optarg;
			if (!rule_find(only)) {
				snprintf(err, sizeof(err), "unknown rule '%s'", only);
				goto out_err;
			}
			break;
		case 'f':
			with_fix = 1;
			break;
		case 'l':
			list = 1;
			break;
		case 'x':
			if (nsql == sizeof(sql) / sizeof(sql[0])) {
				snprintf(err, sizeof(err), "too many -x");
				goto out_err;
			}
			sql[nsql++] = optarg;
			break;
		default:
			snprintf(err, sizeof(err), "usage: rule-run [-c CONFIG] [-s rule.param=value]... "
				 "[-r RULE] [-f] [-x SQL] TRACE... | -l");
			goto out_err;
		}
	}
	if (list) {
		list_rules(config);
		status = 0;
		goto out;
	}
	if (optind >= argc) {
		snprintf(err, sizeof(err), "no trace given");
		goto out_err;
	}
	if (trace_open((const char *const *)argv + optind, (size_t)(argc - optind), &trace, err,
		       sizeof(err)) < 0)
		goto out_err;
	for (size_t i = 0; i < nsql; i++) {
		char *msg = NULL;

		if (sqlite3_exec(trace_db(trace), sql[i], NULL, NULL, &msg) != SQLITE_OK) {
			snprintf(err, sizeof(err), "-x: %s", msg ? msg : "failed");
			sqlite3_free(msg);
			goto out_err;
		}
	}
	ctx = (struct rule_context){.an = {.trace = trace}, .config = config, .out = &findings};
	for (size_t i = 0; rule_table[i]; i++) {
		const struct rule *rule = rule_table[i];

		if (only && strcmp(only, rule->id))
			continue;
		rule_enter(&ctx, rule);
		if (rule->run(rule, &ctx, err, sizeof(err)) < 0)
			goto out_err;
	}
	findings_rank(&findings);
	for (size_t i = 0; i < findings.count; i++)
		print_finding(&findings.items[i], with_fix);
	status = 0;
	goto out;
out_err:
	fprintf(stderr, "rule-run: %s\n", err);
out:
	findings_release(&findings);
	trace_close(trace);
	rule_config_free(config);
	return status;
}
