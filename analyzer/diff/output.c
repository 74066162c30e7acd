/*
 * The four renderings of a kernel comparison: text for a terminal, Markdown for a pull-request
 * comment, JSON for scripts, and JUnit XML so that CI systems list every kernel as a test case and
 * show the slower ones as failures without any plugin. All four carry the same numbers in the same
 * order (diff_result's report order).
 */
#include "analyzer/diff/diff.h"
#include "analyzer/output/format.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

int diff_format_parse(const char *s, enum diff_format *out)
{
	if (!strcmp(s, "text"))
		*out = DIFF_FORMAT_TEXT;
	else if (!strcmp(s, "markdown") || !strcmp(s, "md"))
		*out = DIFF_FORMAT_MARKDOWN;
	else if (!strcmp(s, "json"))
		*out = DIFF_FORMAT_JSON;
	else if (!strcmp(s, "junit"))
		*out = DIFF_FORMAT_JUNIT;
	else
		return -EINVAL;
	return 0;
}

static const char *command_name(const struct diff_result *r)
{
	return r->base->from_baseline ? "check" : "diff";
}

/* ---- number formatting ---- */

static const char *fmt_p(char *buf, size_t len, double p)
{
	if (p < 1e-16)
		snprintf(buf, len, "<1e-16");
	else if (p < 1e-3)
		snprintf(buf, len, "%.0e", p);
	else
		snprintf(buf, len, "%.3f", p);
	return buf;
}

static const char *fmt_interval(char *buf, size_t len, const struct rank_test *t)
{
	if (t->ratio_lo <= 0 || isinf(t->ratio_hi))
		snprintf(buf, len, "unbounded");
	else
		snprintf(buf, len, "%.3f-%.3f", t->ratio_lo, t->ratio_hi);
	return buf;
}

static const char *percent_text(char *buf, size_t len, double fraction)
{
	snprintf(buf, len, "%.4g%%", 100 * fraction);
	return buf;
}

static int same_limits(const struct diff_limits *a, const struct diff_limits *b)
{
	return a->threshold == b->threshold && a->alpha == b->alpha &&
	       a->min_samples == b->min_samples;
}

/* "threshold 10%, alpha 0.05" for a kernel whose limits differ from the defaults; "" otherwise. */
static const char *fmt_override(char *buf, size_t len, const struct kernel_diff *d,
				const struct diff_result *r)
{
	char pct[32];

	if (d->verdict == DIFF_IGNORED || same_limits(&d->limits, &r->defaults))
		buf[0] = '\0';
	else
		snprintf(buf, len, "threshold %s, alpha %g, min %zu launches",
			 percent_text(pct, sizeof(pct), d->limits.threshold), d->limits.alpha,
			 d->limits.min_samples);
	return buf;
}

static const struct kernel_timing *either(const struct kernel_diff *d)
{
	return d->new ? d->new : d->base;
}

/* The kernel's name, with its configuration where the name alone does not identify it. */
static void label(const struct kernel_diff *d, char *buf, size_t len)
{
	char base_cfg[256], new_cfg[256];

	if (!d->config_changed) {
		kernel_timing_label(either(d), d->show_config, buf, len);
		return;
	}
	snprintf(base_cfg, sizeof(base_cfg),
		 "grid %" PRId64 "x%" PRId64 "x%" PRId64 " block %" PRId64 "x%" PRId64 "x%" PRId64,
		 d->base->grid[0], d->base->grid[1], d->base->grid[2], d->base->block[0],
		 d->base->block[1], d->base->block[2]);
	snprintf(new_cfg, sizeof(new_cfg),
		 "grid %" PRId64 "x%" PRId64 "x%" PRId64 " block %" PRId64 "x%" PRId64 "x%" PRId64,
		 d->new->grid[0], d->new->grid[1], d->new->grid[2], d->new->block[0],
		 d->new->block[1], d->new->block[2]);
	snprintf(buf, len, "%s [%s -> %s]", d->base->name, base_cfg, new_cfg);
}

/* One-line explanation of a verdict, shared by text notes and JUnit messages. */
static void explain(const struct kernel_diff *d, char *buf, size_t len)
{
	char a[32], b[32], p[32], ci[48], pct[32];
	int level = (int)lround(100 * (1 - d->limits.alpha));

	switch (d->verdict) {
	case DIFF_NEW:
		snprintf(buf, len, "new kernel: %zu launches, median %s", d->new->summary.count,
			 units_duration(a, sizeof(a), llround(d->new->summary.median), UNITS_FINE));
		return;
	case DIFF_MISSING:
		snprintf(
		    buf, len, "kernel not launched in NEW (BASE: %zu launches, median %s)",
		    d->base->summary.count,
		    units_duration(a, sizeof(a), llround(d->base->summary.median), UNITS_FINE));
		return;
	case DIFF_IGNORED:
		snprintf(buf, len, "ignored by the configuration");
		return;
	case DIFF_INSUFFICIENT:
		snprintf(buf, len, "too few launches to judge: %zu / %zu, at least %zu needed (ratio %.3f)",
			 d->base->summary.count, d->new->summary.count, d->limits.min_samples,
			 d->test.ratio);
		return;
	default:
		break;
	}
	snprintf(
	    buf, len, "median %s -> %s, ratio %.3f (%d%% interval %s), p %s, %zu / %zu launches",
	    units_duration(a, sizeof(a), llround(d->base->summary.median), UNITS_FINE),
	    units_duration(b, sizeof(b), llround(d->new->summary.median), UNITS_FINE),
	    d->test.ratio, level, fmt_interval(ci, sizeof(ci), &d->test),
	    fmt_p(p, sizeof(p), d->test.p_value), d->base->summary.count, d->new->summary.count);
	if (d->verdict == DIFF_SLOWER || d->verdict == DIFF_FASTER) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "; the interval lies %s %.3f (threshold %s)",
			 d->verdict == DIFF_FASTER ? "below" : "above",
			 d->verdict == DIFF_FASTER ? 1 / (1 + d->limits.threshold)
						   : 1 + d->limits.threshold,
			 percent_text(pct, sizeof(pct), d->limits.threshold));
	}
}

/* ---- text ---- */

static void write_totals_text(const struct diff_result *r, FILE *out, int markdown)
{
	const struct gpu_totals *b = &r->base->totals, *n = &r->new->totals;
	const char *names[] = { "kernel time", "copy time", "memset time", "GPU span",
				"idle time" };
	double bv[] = { b->kernel_ns, b->copy_ns, b->set_ns, b->span_ns, b->idle_ns };
	double nv[] = { n->kernel_ns, n->copy_ns, n->set_ns, n->span_ns, n->idle_ns };
	char x[32], y[32], ratio[32];

	if (markdown)
		fprintf(out, "| GPU totals | BASE | NEW | NEW/BASE |\n|---|--:|--:|--:|\n");
	else
		fprintf(out, "%-14s %14s %14s %9s\n", "GPU totals", "BASE", "NEW", "NEW/BASE");
	for (int i = 0; i < 5; i++) {
		if (bv[i] > 0)
			snprintf(ratio, sizeof(ratio), "%.3f", nv[i] / bv[i]);
		else
			snprintf(ratio, sizeof(ratio), "-");
		if (markdown)
			fprintf(out, "| %s | %s | %s | %s |\n", names[i],
				units_duration(x, sizeof(x), llround(bv[i]), UNITS_FINE),
				units_duration(y, sizeof(y), llround(nv[i]), UNITS_FINE), ratio);
		else
			fprintf(out, "  %-12s %14s %14s %9s\n", names[i],
				units_duration(x, sizeof(x), llround(bv[i]), UNITS_FINE),
				units_duration(y, sizeof(y), llround(nv[i]), UNITS_FINE), ratio);
	}
	if (markdown)
		fprintf(out, "| launches | %zu | %zu | |\n", b->kernels, n->kernels);
	else
		fprintf(out, "  %-12s %14zu %14zu\n", "launches", b->kernels, n->kernels);
}

static void write_scope(const struct kernel_set *set, FILE *out)
{
	if (set->nvtx)
		fprintf(out, ", NVTX range '%s'", set->nvtx);
	if (set->skip_first)
		fprintf(out, ", first %zu launches per kernel skipped", set->skip_first);
}

static void write_rule(const struct diff_result *r, FILE *out)
{
	char pct[32];

	fprintf(out,
		"a kernel is slower when p < %g and the %g%% interval of NEW/BASE lies above %.3f "
		"(threshold %s); at least %zu launches a side\n",
		r->defaults.alpha, 100 * (1 - r->defaults.alpha), 1 + r->defaults.threshold,
		percent_text(pct, sizeof(pct), r->defaults.threshold), r->defaults.min_samples);
}

static void write_summary_line(const struct diff_result *r, FILE *out)
{
	static const enum diff_verdict order[] = { DIFF_SLOWER, DIFF_FASTER, DIFF_SAME, DIFF_NEW,
						   DIFF_MISSING, DIFF_INSUFFICIENT, DIFF_IGNORED };
	const char *sep = "";

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		fprintf(out, "%s%zu %s", sep, r->verdicts[order[i]], diff_verdict_name(order[i]));
		sep = ", ";
	}
}

static void write_text(const struct diff_result *r, FILE *out)
{
	char name[16384], ci[48], p[32], nb[32], nn[32], mb[32], mn[32], note[160];

	fprintf(out, "gpt-trace %s: BASE %s%s", command_name(r), r->base->from_baseline ? "baseline " : "",
		r->base->source);
	write_scope(r->base, out);
	fprintf(out, "\n%*s NEW %s", (int)strlen(command_name(r)) + 11, "", r->new->source);
	write_scope(r->new, out);
	fprintf(out, "\n");
	write_rule(r, out);
	snprintf(ci, sizeof(ci), "%g%% interval", 100 * (1 - r->defaults.alpha));
	fprintf(out, "\n%-12s %7s %-13s %7s %15s %11s %11s  %s\n", "verdict", "ratio", ci, "p",
		"launches", "BASE median", "NEW median", "kernel");
	for (size_t i = 0; i < r->count; i++) {
		const struct kernel_diff *d = &r->kernels[i];
		char ratio[16] = "-", launches[80];

		label(d, name, sizeof(name));
		snprintf(ci, sizeof(ci), "-");
		snprintf(p, sizeof(p), "-");
		if (d->tested) {
			snprintf(ratio, sizeof(ratio), "%.3f", d->test.ratio);
			fmt_interval(ci, sizeof(ci), &d->test);
			fmt_p(p, sizeof(p), d->test.p_value);
		}
		snprintf(nb, sizeof(nb), "-");
		snprintf(nn, sizeof(nn), "-");
		snprintf(mb, sizeof(mb), "-");
		snprintf(mn, sizeof(mn), "-");
		if (d->base) {
			snprintf(nb, sizeof(nb), "%zu", d->base->summary.count);
			units_duration(mb, sizeof(mb), llround(d->base->summary.median),
				       UNITS_FINE);
		}
		if (d->new) {
			snprintf(nn, sizeof(nn), "%zu", d->new->summary.count);
			units_duration(mn, sizeof(mn), llround(d->new->summary.median), UNITS_FINE);
		}
		snprintf(launches, sizeof(launches), "%s / %s", nb, nn);
		fmt_override(note, sizeof(note), d, r);
		fprintf(out, "%-12s %7s %-13s %7s %15s %11s %11s  %s%s%s%s\n",
			diff_verdict_name(d->verdict), ratio, ci, p, launches, mb, mn, name,
			*note ? " (" : "", note, *note ? ")" : "");
	}
	if (!r->count)
		fprintf(out, "(no kernels)\n");
	fprintf(out, "\n");
	write_totals_text(r, out, 0);
	fprintf(out, "\nkernels: ");
	write_summary_line(r, out);
	fprintf(out, "\nresult: %s\n",
		diff_regressions(r) ? "REGRESSION (a kernel is slower by more than its threshold)"
				    : "ok (no kernel slower by more than its threshold)");
}

/* ---- Markdown ---- */

/* Kernel names go in code spans; a '|' would end the table cell even there (GFM). */
static void md_code(FILE *out, const char *s)
{
	fputc('`', out);
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else if (*s == '`')
			fputc('\'', out);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
	fputc('`', out);
}

static void write_markdown(const struct diff_result *r, FILE *out)
{
	char name[16384], ci[48], p[32], mb[32], mn[32], note[160];
	size_t slower = diff_regressions(r);

	if (slower)
		fprintf(out, "### gpt-trace %s: %zu kernel%s slower\n\n", command_name(r), slower,
			slower == 1 ? "" : "s");
	else
		fprintf(out, "### gpt-trace %s: no kernel slower\n\n", command_name(r));
	fprintf(out, "BASE ");
	md_code(out, r->base->source);
	write_scope(r->base, out);
	fprintf(out, " → NEW ");
	md_code(out, r->new->source);
	write_scope(r->new, out);
	fprintf(out, "  \n");
	write_rule(r, out);
	fprintf(out, "\n| verdict | kernel | NEW/BASE | %g%% interval | p | launches BASE / NEW | "
		     "median BASE → NEW |\n|---|---|--:|--:|--:|--:|--:|\n",
		100 * (1 - r->defaults.alpha));
	for (size_t i = 0; i < r->count; i++) {
		const struct kernel_diff *d = &r->kernels[i];

		label(d, name, sizeof(name));
		fprintf(out, "| %s%s%s | ", d->verdict == DIFF_SLOWER ? "**" : "",
			diff_verdict_name(d->verdict), d->verdict == DIFF_SLOWER ? "**" : "");
		md_code(out, name);
		fmt_override(note, sizeof(note), d, r);
		if (*note)
			fprintf(out, " (%s)", note);
		if (d->tested)
			fprintf(out, " | %.3f | %s | %s", d->test.ratio,
				fmt_interval(ci, sizeof(ci), &d->test),
				fmt_p(p, sizeof(p), d->test.p_value));
		else
			fprintf(out, " | - | - | -");
		snprintf(mb, sizeof(mb), "-");
		snprintf(mn, sizeof(mn), "-");
		if (d->base)
			units_duration(mb, sizeof(mb), llround(d->base->summary.median),
				       UNITS_FINE);
		if (d->new)
			units_duration(mn, sizeof(mn), llround(d->new->summary.median), UNITS_FINE);
		fprintf(out, " | ");
		if (d->base)
			fprintf(out, "%zu", d->base->summary.count);
		else
			fprintf(out, "-");
		fprintf(out, " / ");
		if (d->new)
			fprintf(out, "%zu", d->new->summary.count);
		else
			fprintf(out, "-");
		fprintf(out, " | %s → %s |\n", mb, mn);
	}
	fprintf(out, "\n");
	write_totals_text(r, out, 1);
	fprintf(out, "\nkernels: ");
	write_summary_line(r, out);
	fprintf(out, "\n");
}

/* ---- JSON ---- */

void diff_json_number(FILE *out, double v)
{
	if (!isfinite(v))
		fputs("null", out);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.10g", v);
}

static void json_config(FILE *out, const int64_t grid[3], const int64_t block[3])
{
	fprintf(out, "\"grid\": [%" PRId64 ", %" PRId64 ", %" PRId64 "], \"block\": [%" PRId64
		     ", %" PRId64 ", %" PRId64 "]",
		grid[0], grid[1], grid[2], block[0], block[1], block[2]);
}

static void json_side(FILE *out, const struct kernel_timing *k)
{
	const struct duration_summary *s;

	if (!k) {
		fputs("null", out);
		return;
	}
	s = &k->summary;
	fputs("{", out);
	json_config(out, k->grid, k->block);
	fprintf(out, ", \"launches\": %zu, \"median_ns\": ", s->count);
	diff_json_number(out, s->median);
	fputs(", \"mean_ns\": ", out);
	diff_json_number(out, s->mean);
	fputs(", \"p5_ns\": ", out);
	diff_json_number(out, s->p5);
	fputs(", \"p95_ns\": ", out);
	diff_json_number(out, s->p95);
	fputs(", \"total_ns\": ", out);
	diff_json_number(out, s->total);
	fputs("}", out);
}

void diff_json_totals(FILE *out, const struct gpu_totals *t)
{
	fprintf(out, "{\"kernel_ns\": ");
	diff_json_number(out, t->kernel_ns);
	fputs(", \"copy_ns\": ", out);
	diff_json_number(out, t->copy_ns);
	fputs(", \"memset_ns\": ", out);
	diff_json_number(out, t->set_ns);
	fputs(", \"span_ns\": ", out);
	diff_json_number(out, t->span_ns);
	fputs(", \"idle_ns\": ", out);
	diff_json_number(out, t->idle_ns);
	fprintf(out, ", \"launches\": %zu, \"copies\": %zu, \"memsets\": %zu}", t->kernels,
		t->copies, t->sets);
}

static void json_source(FILE *out, const struct kernel_set *set)
{
	fputs("{\"source\": ", out);
	output_json_string(out, set->source);
	fputs(", \"nvtx\": ", out);
	if (set->nvtx)
		output_json_string(out, set->nvtx);
	else
		fputs("null", out);
	fprintf(out, ", \"skip_first\": %zu, \"baseline\": %s, \"totals\": ", set->skip_first,
		set->from_baseline ? "true" : "false");
	diff_json_totals(out, &set->totals);
	fputs("}", out);
}

static void write_json(const struct diff_result *r, FILE *out)
{
	fprintf(out, "{\n  \"command\": \"%s\",\n  \"regression\": %s,\n  \"base\": ",
		command_name(r), diff_regressions(r) ? "true" : "false");
	json_source(out, r->base);
	fputs(",\n  \"new\": ", out);
	json_source(out, r->new);
	fputs(",\n  \"defaults\": {\"threshold\": ", out);
	diff_json_number(out, r->defaults.threshold);
	fputs(", \"alpha\": ", out);
	diff_json_number(out, r->defaults.alpha);
	fprintf(out, ", \"min_samples\": %zu},\n  \"counts\": {", r->defaults.min_samples);
	for (int v = 0; v <= DIFF_IGNORED; v++)
		fprintf(out, "%s\"%s\": %zu", v ? ", " : "", diff_verdict_name(v), r->verdicts[v]);
	fputs("},\n  \"kernels\": [", out);
	for (size_t i = 0; i < r->count; i++) {
		const struct kernel_diff *d = &r->kernels[i];

		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		output_json_string(out, either(d)->name);
		fprintf(out, ", \"verdict\": \"%s\", \"config_changed\": %s, \"ratio\": ",
			diff_verdict_name(d->verdict), d->config_changed ? "true" : "false");
		if (d->tested) {
			diff_json_number(out, d->test.ratio);
			fputs(", \"ci\": [", out);
			diff_json_number(out, d->test.ratio_lo > 0 ? d->test.ratio_lo : NAN);
			fputs(", ", out);
			diff_json_number(out, d->test.ratio_hi);
			fputs("], \"p_value\": ", out);
			diff_json_number(out, d->test.p_value);
		} else {
			fputs("null, \"ci\": null, \"p_value\": null", out);
		}
		fputs(", \"threshold\": ", out);
		diff_json_number(out, d->limits.threshold);
		fputs(", \"alpha\": ", out);
		diff_json_number(out, d->limits.alpha);
		fprintf(out, ", \"min_samples\": %zu,\n     \"base\": ", d->limits.min_samples);
		json_side(out, d->base);
		fputs(",\n     \"new\": ", out);
		json_side(out, d->new);
		fputs("}", out);
	}
	fputs(r->count ? "\n  ]\n}\n" : "]\n}\n", out);
}

/* ---- JUnit XML ---- */

/* Escaped for an attribute or text; characters XML 1.0 cannot hold become '?'. */
static void xml_text(FILE *out, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			if (*c < 0x20 && *c != '\t' && *c != '\n' && *c != '\r')
				fputc('?', out);
			else
				fputc(*c, out);
		}
	}
}

/*
 * One test case per kernel. slower is a <failure>; insufficient, ignored and missing are <skipped>
 * (nothing was judged); same, faster and new pass, with the numbers in <system-out>. time is the
 * kernel's GPU time in NEW, in seconds, so CI pages rank kernels by cost.
 */
static void write_junit(const struct diff_result *r, FILE *out)
{
	size_t failures = r->verdicts[DIFF_SLOWER];
	size_t skipped = r->verdicts[DIFF_INSUFFICIENT] + r->verdicts[DIFF_IGNORED] +
			 r->verdicts[DIFF_MISSING];
	char name[16384], why[1024];
	double total = 0;

	for (size_t i = 0; i < r->count; i++)
		total += r->kernels[i].new ? r->kernels[i].new->summary.total : 0;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(out, "<testsuites name=\"gpt-trace %s\" tests=\"%zu\" failures=\"%zu\" "
		     "errors=\"0\" skipped=\"%zu\" time=\"%.9f\">\n",
		command_name(r), r->count, failures, skipped, total / 1e9);
	fprintf(out, "  <testsuite name=\"gpt-trace %s: ", command_name(r));
	xml_text(out, r->base->source);
	fprintf(out, " -&gt; ");
	xml_text(out, r->new->source);
	fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
		     "time=\"%.9f\">\n",
		r->count, failures, skipped, total / 1e9);
	for (size_t i = 0; i < r->count; i++) {
		const struct kernel_diff *d = &r->kernels[i];

		label(d, name, sizeof(name));
		explain(d, why, sizeof(why));
		fprintf(out, "    <testcase classname=\"gpt-trace.kernels\" name=\"");
		xml_text(out, name);
		fprintf(out, "\" time=\"%.9f\">", d->new ? d->new->summary.total / 1e9 : 0.0);
		switch (d->verdict) {
		case DIFF_SLOWER:
			fprintf(out, "\n      <failure type=\"slower\" message=\"");
			xml_text(out, why);
			fprintf(out, "\">");
			xml_text(out, name);
			fprintf(out, " is slower: ");
			xml_text(out, why);
			fprintf(out, "</failure>\n    ");
			break;
		case DIFF_INSUFFICIENT:
		case DIFF_IGNORED:
		case DIFF_MISSING:
			fprintf(out, "\n      <skipped message=\"");
			xml_text(out, why);
			fprintf(out, "\"/>\n    ");
			break;
		default:
			fprintf(out, "\n      <system-out>");
			if (d->verdict != DIFF_NEW)
				fprintf(out, "%s: ", diff_verdict_name(d->verdict));
			xml_text(out, why);
			fprintf(out, "</system-out>\n    ");
			break;
		}
		fprintf(out, "</testcase>\n");
	}
	fprintf(out, "  </testsuite>\n</testsuites>\n");
}

int diff_write(const struct diff_result *result, enum diff_format format, FILE *out)
{
	switch (format) {
	case DIFF_FORMAT_TEXT:
		write_text(result, out);
		break;
	case DIFF_FORMAT_MARKDOWN:
		write_markdown(result, out);
		break;
	case DIFF_FORMAT_JSON:
		write_json(result, out);
		break;
	case DIFF_FORMAT_JUNIT:
		write_junit(result, out);
		break;
	}
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
