/*
 * gpt-trace rules: every rule of the rule table (rules/registry.c) with what it measures and its
 * parameters, their defaults and units; the names are the ones --set and --config of 'gpt-trace
 * report' take.
 */
#include "analyzer/report/report.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "common/util.h"
#include "rules/rule.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] =
	"usage: gpt-trace rules [options] [RULE...]\n"
	"\n"
	"List the bottleneck rules that 'gpt-trace report' runs (or only RULE...): what each measures\n"
	"and its thresholds with their defaults and units. Change a threshold with\n"
	"'gpt-trace report --set RULE.PARAM=VALUE' or a --config file of [RULE] sections.\n"
	"\n"
	"options:\n"
	"  -f, --format FORMAT   text (default), markdown or json\n"
	"  -h, --help            print this help\n";

static const struct option long_options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

static void write_text(const struct rule *r)
{
	printf("%s: %s\n  measures: %s\n", r->id, r->title, r->measures);
	if (!r->nparams)
		printf("  no parameters\n");
	for (size_t i = 0; i < r->nparams; i++) {
		const struct rule_param *p = &r->params[i];

		printf("  %s.%s = %g %s\n      %s\n", r->id, p->name, p->default_value, p->unit, p->help);
	}
}

static void write_markdown(const struct rule *r)
{
	printf("### `%s`: ", r->id);
	output_md_cell(stdout, r->title);
	printf("\n\n");
	output_md_cell(stdout, r->measures);
	printf("\n\n");
	if (!r->nparams) {
		printf("No parameters.\n\n");
		return;
	}
	printf("| Parameter | Default | Unit | Meaning |\n| --- | ---: | --- | --- |\n");
	for (size_t i = 0; i < r->nparams; i++) {
		const struct rule_param *p = &r->params[i];

		printf("| `%s.%s` | %g | ", r->id, p->name, p->default_value);
		output_md_cell(stdout, p->unit);
		printf(" | ");
		output_md_cell(stdout, p->help);
		printf(" |\n");
	}
	printf("\n");
}

static void write_json(const struct rule *r, int first)
{
	printf("%s\n    {\"id\": ", first ? "" : ",");
	output_json_string(stdout, r->id);
	printf(", \"title\": ");
	output_json_string(stdout, r->title);
	printf(", \"measures\": ");
	output_json_string(stdout, r->measures);
	printf(", \"params\": [");
	for (size_t i = 0; i < r->nparams; i++) {
		const struct rule_param *p = &r->params[i];

		printf("%s{\"name\": ", i ? ", " : "");
		output_json_string(stdout, p->name);
		printf(", \"default\": %.17g, \"unit\": ", p->default_value);
		output_json_string(stdout, p->unit);
		printf(", \"help\": ");
		output_json_string(stdout, p->help);
		printf("}");
	}
	printf("]}");
}

static void write_rule(const struct rule *r, enum output_format format, int first)
{
	if (format == OUTPUT_FORMAT_JSON) {
		write_json(r, first);
	} else if (format == OUTPUT_FORMAT_MARKDOWN) {
		write_markdown(r);
	} else {
		if (!first)
			printf("\n");
		write_text(r);
	}
}

/* --format into *format, the one option: 0, or -1 (said). */
static int rules_option(void *format, int c, const char *arg)
{
	(void)c;
	if (output_format_parse(arg, format) < 0) {
		pr_err("unknown format '%s': want text, markdown or json", arg);
		return -1;
	}
	return 0;
}

static const struct usage_command rules_usage = {
	.name = "rules", .help = usage_text, .shortopts = "f:", .longopts = long_options,
	.option = rules_option,
};

int cmd_rules(int argc, char **argv)
{
	enum output_format format = OUTPUT_FORMAT_TEXT;
	int parsed, first = 1;

	parsed = usage_parse(&rules_usage, &format, argc, argv);
	if (parsed)
		return usage_status(parsed);
	for (int i = optind; i < argc; i++) {
		if (!rule_find(argv[i])) {
			pr_err("unknown rule '%s'; 'gpt-trace rules' lists them", argv[i]);
			return GPT_EXIT_USAGE;
		}
	}
	if (format == OUTPUT_FORMAT_JSON)
		printf("{\n  \"schema\": \"gpt-trace-rules/1\",\n  \"rules\": [");
	if (optind < argc) {
		for (int i = optind; i < argc; i++, first = 0)
			write_rule(rule_find(argv[i]), format, first);
	} else {
		for (size_t i = 0; rule_table[i]; i++, first = 0)
			write_rule(rule_table[i], format, first);
	}
	if (format == OUTPUT_FORMAT_JSON)
		printf("\n  ]\n}\n");
	if (fflush(stdout) != 0) {
		pr_err("cannot write the rule list: %m");
		return GPT_EXIT_USAGE;
	}
	return GPT_EXIT_OK;
}
