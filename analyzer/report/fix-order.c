/*
 * What to shorten first (fix-order.h): per trace, the steady window replayed as recorded, with each
 * modelled finding's fix alone, then greedily: at each turn the fix that leaves the shortest window
 * with those chosen before it.
 */
#include "analyzer/report/fix-order.h"
#include "analyzer/report/report.h"
#include "analyzer/report/html/html.h"
#include "analyzer/output/format.h"
#include "common/units.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t per(int64_t ns, size_t iterations)
{
	return iterations ? ns / (int64_t)iterations : ns;
}

/* " at best" after a window replayed with a fix that its rule bounds (what_if_fix.at_most), else "". */
static const char *at_best(const struct findings *findings, const struct report_fix *x)
{
	const struct what_if_fix *f = findings->items[x->finding].what_if;

	return f && f->at_most ? " at best" : "";
}

/* " at best" after the window with the fixes up to the i-th (o->nfixes - 1: all of them) where one of
   them is bounded, else "". */
static const char *after_best(const struct report_fix_order *o, const struct findings *findings, size_t i)
{
	for (size_t k = 0; k <= i && k < o->nfixes; k++)
		if (*at_best(findings, &o->fixes[k]))
			return " at best";
	return "";
}

/* A saving over the replayed window, over the trace's whole steady state. */
static int64_t whole(const struct report_fix_order *o, int64_t ns)
{
	return o->iterations ? (int64_t)((double)ns * (double)o->steady_iterations / (double)o->iterations) : ns;
}

/* The fixes chosen so far and the candidate, as the replay takes them. */
static int64_t replay_with(struct what_if *w, const struct findings *findings, const struct report_fix *order,
			   size_t n, size_t candidate, struct what_if_result *res)
{
	const struct what_if_fix **fixes = xcalloc(n + 1, sizeof(*fixes));
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		fixes[k++] = findings->items[order[i].finding].what_if;
	if (candidate != SIZE_MAX)
		fixes[k++] = findings->items[candidate].what_if;
	what_if_replay(w, fixes, k, res);
	free(fixes);
	return res->window_ns;
}

static void order_fixes(struct what_if *w, const struct findings *findings, struct report_fix_order *o)
{
	size_t n = 0;
	char *used;
	struct what_if_result res;

	for (size_t i = 0; i < findings->count; i++) {
		const struct what_if_fix *f = findings->items[i].what_if;

		n += f && f->trace_id == o->trace_id;
	}
	o->fixes = xcalloc(n ? n : 1, sizeof(*o->fixes));
	used = xcalloc(findings->count ? findings->count : 1, 1);
	while (o->nfixes < n) {
		size_t best = SIZE_MAX;
		int64_t best_ns = INT64_MAX;

		for (size_t i = 0; i < findings->count; i++) {
			const struct what_if_fix *f = findings->items[i].what_if;
			int64_t ns;

			if (!f || f->trace_id != o->trace_id || used[i])
				continue;
			ns = replay_with(w, findings, o->fixes, o->nfixes, i, &res);
			if (ns < best_ns) {	/* ties: the finding ranked first */
				best_ns = ns;
				best = i;
			}
		}
		used[best] = 1;
		o->fixes[o->nfixes].finding = best;
		o->fixes[o->nfixes].after_ns = best_ns;
		o->fixes[o->nfixes].alone_ns = replay_with(w, findings, NULL, 0, best, &res);
		o->nfixes++;
	}
	free(used);
	replay_with(w, findings, o->fixes, o->nfixes, SIZE_MAX, &o->all);
}

/* Each trace's steady state replayed: hdr->fix_order. */
static int replay_traces(struct trace *trace, struct report_header *hdr, const struct findings *findings,
			 int with_path, char *err, size_t errlen)
{
	struct analysis_context a = { .trace = trace, .who = "what-if replay" };

	for (size_t t = 0; t < hdr->phases->ntraces; t++) {
		const struct trace_phases *tp = &hdr->phases->traces[t];
		struct report_fix_order *o;
		struct what_if *w;
		int ret = what_if_load(&a, tp, &w, err, errlen);

		if (ret < 0)
			return ret;
		if (ret > 0)
			continue;
		hdr->fix_order = xrealloc(hdr->fix_order, (hdr->nfix_order + 1) * sizeof(*hdr->fix_order));
		o = &hdr->fix_order[hdr->nfix_order++];
		memset(o, 0, sizeof(*o));
		o->trace_id = tp->trace_id;
		o->iterations = what_if_iterations(w);
		o->steady_iterations = tp->niterations - tp->first_steady;
		o->measured_ns = what_if_measured(w);
		what_if_replay(w, NULL, 0, &o->recorded);
		if (with_path)
			what_if_critical_path(w, &o->path, &o->npath);
		order_fixes(w, findings, o);
		what_if_free(w);
	}
	return 0;
}

/* Iterations found in the kernel sequence begin on the GPU, and their launches may lie before the
 * steady scope (a GPU-bound program's host runs ahead): the replay reads them in the whole trace
 * (it keeps to its own window), then the steady scope is set again. 1 when the scope was widened. */
static int widen_scope(struct trace *trace, const struct report_header *hdr, char *err, size_t errlen)
{
	struct trace_scope whole = { 0 };

	for (size_t t = 0; t < hdr->phases->ntraces; t++)
		if (hdr->phases->traces[t].source == ITERATIONS_KERNELS)
			return trace_set_scope(trace, &whole, err, errlen) < 0 ? -1 : 1;
	return 0;
}

int report_fix_order_compute(struct trace *trace, struct report_header *hdr, const struct findings *findings,
			     int with_path, char *err, size_t errlen)
{
	int64_t start, end;
	char why[512];
	int widened, ret;

	if (!hdr->phases)
		return 0;
	widened = widen_scope(trace, hdr, err, errlen);
	if (widened < 0)
		return -EIO;
	ret = replay_traces(trace, hdr, findings, with_path, err, errlen);
	if (widened && report_scope_steady(trace, hdr->phases, &start, &end, why, sizeof(why)) < 0 && ret >= 0) {
		snprintf(err, errlen, "%s", why);
		ret = -EIO;
	}
	return ret;
}



void report_fix_order_apply(struct report_header *hdr, struct findings *findings)
{
	const char **keys;
	size_t n = 0;
	char a[32], b[32], c[32], d[32];

	for (size_t t = 0; t < hdr->nfix_order; t++)
		n += hdr->fix_order[t].nfixes;
	if (!n)
		return;
	keys = xcalloc(n, sizeof(*keys));
	n = 0;
	for (size_t t = 0; t < hdr->nfix_order; t++) {
		const struct report_fix_order *o = &hdr->fix_order[t];
		size_t it = o->iterations;

		for (size_t i = 0; i < o->nfixes; i++) {
			struct finding *f = &findings->items[o->fixes[i].finding];
			int64_t saved = o->recorded.window_ns - o->fixes[i].alone_ns;

			if (saved < 0)
				saved = 0;
			finding_evidence(f, "replayed (docs/what-if.md): with this fix alone the steady iteration takes%s %s "
					 "instead of %s; %s after the fixes before it in the order (the rule's own "
					 "estimate was %s in all)", at_best(findings, &o->fixes[i]),
					 units_duration(a, sizeof(a), per(o->fixes[i].alone_ns, it), UNITS_FINE),
					 units_duration(b, sizeof(b), per(o->recorded.window_ns, it), UNITS_FINE),
					 units_duration(d, sizeof(d), per(o->fixes[i].after_ns, it), UNITS_FINE),
					 units_duration(c, sizeof(c), f->recoverable_ns, UNITS_FINE));
			o->fixes[i].estimate_ns = f->recoverable_ns;
			f->recoverable_ns = whole(o, saved);
			f->severity = rule_severity(f->recoverable_ns, report_judged_span(hdr));
			keys[n++] = f->message;	/* a finding's own allocation: it finds it after the sort */
		}
	}
	findings_rank(findings);
	n = 0;
	for (size_t t = 0; t < hdr->nfix_order; t++) {
		struct report_fix_order *o = &hdr->fix_order[t];

		for (size_t i = 0; i < o->nfixes; i++, n++)
			for (size_t k = 0; k < findings->count; k++)
				if (findings->items[k].message == keys[n])
					o->fixes[i].finding = k;
	}
	free(keys);
}

int64_t report_recoverable_total(const struct report_header *hdr, const struct findings *findings)
{
	int64_t total = 0, saved = 0, left;

	for (size_t i = 0; i < findings->count; i++) {
		const struct what_if_fix *f = findings->items[i].what_if;
		int replayed = 0;

		for (size_t t = 0; f && t < hdr->nfix_order; t++)
			replayed |= hdr->fix_order[t].trace_id == f->trace_id && hdr->fix_order[t].nfixes;
		if (!replayed)
			total += findings->items[i].recoverable_ns;
	}
	for (size_t t = 0; t < hdr->nfix_order; t++)
		if (hdr->fix_order[t].nfixes && hdr->fix_order[t].recorded.window_ns > hdr->fix_order[t].all.window_ns)
			saved += whole(&hdr->fix_order[t],
				       hdr->fix_order[t].recorded.window_ns - hdr->fix_order[t].all.window_ns);
	if (!saved)
		return total;
	/* The other findings' estimates may overlap the replayed savings (idle-gaps' launch-path gaps
	 * are what small-kernels' graph takes away): they add at most what the replay left of the span
	 * (a launch-bound PyTorch step read 188.9% of its steady state without this). */
	left = report_judged_span(hdr) - saved;
	return saved + (total < left ? total : left > 0 ? left : 0);
}

void report_fix_order_release(struct report_header *hdr)
{
	for (size_t i = 0; i < hdr->nfix_order; i++) {
		free(hdr->fix_order[i].fixes);
		free(hdr->fix_order[i].path);
	}
	free(hdr->fix_order);
	hdr->fix_order = NULL;
	hdr->nfix_order = 0;
}

/* ---- writers ---- */


/* "host 51%, compute 47%, launch and queue 2%": the critical path's parts, largest first. */
static void bound_words(FILE *out, const struct what_if_result *r)
{
	int done[WHAT_IF_PARTS] = { 0 };
	int first = 1;

	for (int k = 0; k < WHAT_IF_PARTS; k++) {
		int best = -1;

		for (int p = 0; p < WHAT_IF_PARTS; p++)
			if (!done[p] && r->part_ns[p] > 0 && (best < 0 || r->part_ns[p] > r->part_ns[best]))
				best = p;
		if (best < 0 || r->window_ns <= 0)
			break;
		done[best] = 1;
		if (100.0 * (double)r->part_ns[best] / (double)r->window_ns < 0.5)
			break;
		fprintf(out, "%s%s %.0f%%", first ? "" : ", ", what_if_part_name((enum what_if_part)best),
			100.0 * (double)r->part_ns[best] / (double)r->window_ns);
		if ((best == WHAT_IF_COMPUTE || best == WHAT_IF_COMM) && r->top_stream >= 0 && first)
			fprintf(out, " (most on stream %" PRId64 ")", r->top_stream);
		first = 0;
	}
}

static size_t unmodelled(const struct findings *findings)
{
	size_t n = 0;

	for (size_t i = 0; i < findings->count; i++)
		n += !findings->items[i].what_if && findings->items[i].recoverable_ns > 0;
	return n;
}


/* The fix's name in the order: its rule, and where the rule has several findings in it (one per kernel:
   uncoalesced-access) the finding's number in the list below ("uncoalesced-access, finding 5"). */
static const char *fix_label(char *buf, size_t len, const struct report_fix_order *o, const struct findings *findings,
			     size_t i)
{
	const char *rule = findings->items[o->fixes[i].finding].rule_id;
	size_t same = 0;

	for (size_t k = 0; k < o->nfixes; k++)
		same += !strcmp(findings->items[o->fixes[k].finding].rule_id, rule);
	if (same < 2)
		snprintf(buf, len, "%s", rule);
	else
		snprintf(buf, len, "%s, finding %zu", rule, o->fixes[i].finding + 1);
	return buf;
}

void report_fix_order_text(FILE *out, const struct report_header *hdr, const struct findings *findings,
			   const char *bold, const char *reset)
{
	char a[32], b[32], c[32], name[64];

	for (size_t t = 0; t < hdr->nfix_order; t++) {
		const struct report_fix_order *o = &hdr->fix_order[t];
		size_t it = o->iterations;

		fprintf(out, "%sWhat to shorten first%s", bold, reset);
		if (hdr->nfix_order > 1)
			fprintf(out, " (trace %" PRId64 ")", o->trace_id);
		fprintf(out, ": the steady state replayed, %zu iteration%s of %s (replayed: %s)\n", it,
			it == 1 ? "" : "s", units_duration(a, sizeof(a), per(o->measured_ns, it), UNITS_FINE),
			units_duration(b, sizeof(b), per(o->recorded.window_ns, it), UNITS_FINE));
		fprintf(out, "  bounded by ");
		bound_words(out, &o->recorded);
		fprintf(out, "\n");
		for (size_t i = 0; i < o->nfixes; i++) {
			const struct report_fix *x = &o->fixes[i];

			fprintf(out, "  %zu. %-20s %s alone%s; %s after it%s%s\n", i + 1,
				fix_label(name, sizeof(name), o, findings, i),
				units_duration(a, sizeof(a), per(x->alone_ns, it), UNITS_FINE), at_best(findings, x),
				units_duration(b, sizeof(b), per(x->after_ns, it), UNITS_FINE),
				i ? " and the ones above" : "", after_best(o, findings, i));
		}
		if (o->nfixes) {
			int64_t saved = o->recorded.window_ns - o->all.window_ns;

			fprintf(out, "  all %zu fix%s: %s per iteration%s, %s less (%.1f%%); then bounded by ", o->nfixes,
				o->nfixes == 1 ? "" : "es", units_duration(a, sizeof(a), per(o->all.window_ns, it), UNITS_FINE),
				after_best(o, findings, o->nfixes - 1), units_duration(c, sizeof(c), per(saved, it), UNITS_FINE),
				o->recorded.window_ns > 0 ? 100.0 * (double)saved / (double)o->recorded.window_ns : 0.0);
			bound_words(out, &o->all);
			fprintf(out, "\n");
		} else {
			fprintf(out, "  no finding's fix is one the replay models\n");
		}
	}
	if (hdr->nfix_order && unmodelled(findings))
		fprintf(out, "  not replayed: %zu finding%s whose fix the replay does not model (their own estimates "
			"below)\n", unmodelled(findings), unmodelled(findings) == 1 ? "" : "s");
	if (hdr->nfix_order)
		fprintf(out, "\n");
}

void report_fix_order_markdown(FILE *out, const struct report_header *hdr, const struct findings *findings)
{
	char a[32], b[32], name[64];

	for (size_t t = 0; t < hdr->nfix_order; t++) {
		const struct report_fix_order *o = &hdr->fix_order[t];
		size_t it = o->iterations;

		fprintf(out, "## What to shorten first");
		if (hdr->nfix_order > 1)
			fprintf(out, " (trace %" PRId64 ")", o->trace_id);
		fprintf(out, "\n\nThe steady state replayed: %zu iteration%s of %s (replayed: %s), bounded by ", it,
			it == 1 ? "" : "s", units_duration(a, sizeof(a), per(o->measured_ns, it), UNITS_FINE),
			units_duration(b, sizeof(b), per(o->recorded.window_ns, it), UNITS_FINE));
		bound_words(out, &o->recorded);
		fprintf(out, ".\n\n");
		if (!o->nfixes) {
			fprintf(out, "No finding's fix is one the replay models.\n\n");
			continue;
		}
		fprintf(out, "| # | fix of | iteration with it alone | with it and the ones above |\n|---|---|---|---|\n");
		for (size_t i = 0; i < o->nfixes; i++) {
			const struct report_fix *x = &o->fixes[i];

			fprintf(out, "| %zu | ", i + 1);
			output_md_cell(out, fix_label(name, sizeof(name), o, findings, i));
			fprintf(out, " | %s%s | %s%s |\n", units_duration(a, sizeof(a), per(x->alone_ns, it), UNITS_FINE),
				at_best(findings, x), units_duration(b, sizeof(b), per(x->after_ns, it), UNITS_FINE),
				after_best(o, findings, i));
		}
		fprintf(out, "\n");
	}
}

static void json_parts(FILE *out, const struct what_if_result *r)
{
	fprintf(out, "{\"window_ns\": %" PRId64 ", \"critical_path_ns\": {", r->window_ns);
	for (int p = 0; p < WHAT_IF_PARTS; p++) {
		fprintf(out, "%s", p ? ", " : "");
		output_json_string(out, what_if_part_id((enum what_if_part)p));
		fprintf(out, ": %" PRId64, r->part_ns[p]);
	}
	fprintf(out, "}, \"top_stream\": ");
	if (r->top_stream >= 0)
		fprintf(out, "%" PRId64 "}", r->top_stream);
	else
		fprintf(out, "null}");
}

void report_fix_order_json(FILE *out, const struct report_header *hdr, const struct findings *findings)
{
	fprintf(out, "  \"what_if\": [");
	for (size_t t = 0; t < hdr->nfix_order; t++) {
		const struct report_fix_order *o = &hdr->fix_order[t];

		fprintf(out, "%s\n    {\"trace\": %" PRId64 ", \"iterations\": %zu, \"steady_iterations\": %zu, "
			"\"measured_ns\": %" PRId64 ",\n     \"recorded\": ", t ? "," : "", o->trace_id, o->iterations,
			o->steady_iterations, o->measured_ns);
		json_parts(out, &o->recorded);
		fprintf(out, ",\n     \"all\": ");
		json_parts(out, &o->all);
		fprintf(out, ",\n     \"fixes\": [");
		for (size_t i = 0; i < o->nfixes; i++) {
			const struct report_fix *x = &o->fixes[i];

			fprintf(out, "%s{\"finding\": %zu, \"rule\": ", i ? ", " : "", x->finding + 1);
			output_json_string(out, findings->items[x->finding].rule_id);
			fprintf(out, ", \"alone_ns\": %" PRId64 ", \"after_ns\": %" PRId64 ", \"estimate_ns\": %" PRId64
				", \"at_most\": %s}", x->alone_ns, x->after_ns, x->estimate_ns, *at_best(findings, x) ? "true" : "false");
		}
		fprintf(out, "]}");
	}
	fprintf(out, "%s],\n", hdr->nfix_order ? "\n  " : "");
}

/* bound_words() into a string, for the page */
static void bound_html(FILE *out, const struct what_if_result *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (!mem)
		return;
	bound_words(mem, r);
	fclose(mem);
	html_text(out, text);
	free(text);
}

void report_fix_order_html(FILE *out, const struct report_header *hdr, const struct findings *findings)
{
	char a[32], b[32], name[64];

	if (!hdr->nfix_order)
		return;
	fputs("<section id=\"what-if\">\n<h2>What to shorten first</h2>\n", out);
	for (size_t t = 0; t < hdr->nfix_order; t++) {
		const struct report_fix_order *o = &hdr->fix_order[t];
		size_t it = o->iterations;

		fputs("<p>", out);
		if (hdr->nfix_order > 1)
			fprintf(out, "trace %" PRId64 ": ", o->trace_id);
		fprintf(out, "%zu steady iteration%s of %s, replayed: %s, bounded by ", it, it == 1 ? "" : "s",
			units_duration(a, sizeof(a), per(o->measured_ns, it), UNITS_FINE),
			units_duration(b, sizeof(b), per(o->recorded.window_ns, it), UNITS_FINE));
		bound_html(out, &o->recorded);
		fputs(".</p>\n", out);
		if (!o->nfixes) {
			fputs("<p>No finding's fix is one the replay models.</p>\n", out);
			continue;
		}
		fputs("<table>\n<tr><th>#</th><th>fix of</th><th>iteration with it alone</th>"
		      "<th>with it and the ones above</th></tr>\n", out);
		for (size_t i = 0; i < o->nfixes; i++) {
			const struct report_fix *x = &o->fixes[i];

			fprintf(out, "<tr><td>%zu</td><td>", i + 1);
			html_text(out, fix_label(name, sizeof(name), o, findings, i));
			fprintf(out, "</td><td>%s%s</td><td>%s%s</td></tr>\n",
				units_duration(a, sizeof(a), per(x->alone_ns, it), UNITS_FINE), at_best(findings, x),
				units_duration(b, sizeof(b), per(x->after_ns, it), UNITS_FINE), after_best(o, findings, i));
		}
		fputs("</table>\n<p>All the fixes together: ", out);
		fprintf(out, "%s per iteration%s, then bounded by ",
			units_duration(a, sizeof(a), per(o->all.window_ns, it), UNITS_FINE),
			after_best(o, findings, o->nfixes - 1));
		bound_html(out, &o->all);
		fputs(" (docs/what-if.md).</p>\n", out);
	}
	fputs("</section>\n", out);
}
