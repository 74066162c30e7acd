/*
 * What both HTML pages are made of, the single-trace report (page.c) and the cross-rank one
 * (ranks-page.c), so that they look alike: the head with its style sheet and Content-Security-Policy,
 * legend swatches, the y axis' step, and the findings as cards with their evidence and fix.
 */
#include "analyzer/report/html/html.h"
#include "common/util.h"

#include <inttypes.h>
#include <string.h>

static const char css[] =
	"*{box-sizing:border-box}"
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',Arial,sans-serif;"
	"color:#1a1a1a;background:#fff;margin:0 auto;max-width:1260px;padding:12px 24px 40px}"
	"h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:2px solid #1a1a1a;"
	"padding-bottom:2px}h3{font-size:15px;margin:16px 0 6px}"
	"code,.mono{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:12.5px}"
	".muted{color:#555}.small{font-size:12px}"
	"dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}"
	"dl.summary dt{font-weight:600}dl.summary dd{margin:0;overflow-wrap:anywhere}"
	".note{background:#fff4e0;border-left:4px solid #E69F00;padding:4px 10px;margin:6px 0}"
	"table{border-collapse:collapse;width:100%;margin:6px 0}"
	"th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #ddd;vertical-align:top}"
	"th{background:#f2f2f2;font-weight:600}td.num,th.num{text-align:right;white-space:nowrap;"
	"font-variant-numeric:tabular-nums}"
	".name{overflow-wrap:anywhere}td.nowrap{white-space:nowrap}"
	".bar{height:12px;background:#0072B2;min-width:1px}.bar.pageable{background:#D55E00}"
	".barcell{width:28%}.stack{display:flex;height:14px;border:1px solid #777}.stack i{display:block;height:100%}"
	"tr.pageable td:first-child{border-left:4px solid #D55E00}"
	".badge{display:inline-block;padding:0 6px;border-radius:3px;font-size:12px;font-weight:600;"
	"border:1px solid #1a1a1a}"
	".b-critical{background:#D55E00;color:#fff;border-color:#D55E00}"
	".b-warning{background:#E69F00;color:#1a1a1a;border-color:#E69F00}"
	".b-info{background:#fff;color:#1a1a1a;border-color:#8C8C8C}"
	".phasebar{display:flex;height:26px;border:1px solid #1a1a1a;margin:6px 0 2px}"
	".phasebar div{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-size:11px;padding:5px 3px;"
	"border-right:1px solid #fff}"
	".ph-start-up{background:#DDDDDD}.ph-warm-up{background:#F5D9A6}.ph-steady{background:#B9DDF1}"
	".ph-tear-down{background:#EEEEEE}"
	".legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;margin:4px 0 10px}"
	".legend span{display:inline-flex;align-items:center;gap:5px}"
	".sw{display:inline-block;width:12px;height:12px;border:1px solid #777}"
	"svg{display:block;width:100%;height:auto;font-family:inherit}"
	"svg text{font-size:11px;fill:#1a1a1a}svg .axis{stroke:#999;stroke-width:1}"
	"svg .grid{stroke:#e4e4e4;stroke-width:1}"
	"article.finding{border:1px solid #ccc;border-left:6px solid #8C8C8C;padding:6px 12px;margin:10px 0;"
	"break-inside:avoid}"
	"article.finding.sev-critical{border-left-color:#D55E00}article.finding.sev-warning{border-left-color:#E69F00}"
	"article.finding h3{margin:2px 0 4px}article.finding ul{margin:4px 0;padding-left:20px}"
	"article.finding li{overflow-wrap:anywhere}li.src{list-style:square}"
	".fix{background:#eef6ee;border-left:4px solid #009E73;padding:4px 10px;margin:6px 0 2px}"
	".cols{display:grid;grid-template-columns:1fr 1fr;gap:18px}"
	"nav a{margin-right:14px;color:#0b4f8a}a{color:#0b4f8a}"
	"@media (max-width:900px){.cols{grid-template-columns:1fr}}"
	"@media print{body{max-width:none;padding:0}h2{break-after:avoid}nav{display:none}"
	"section,figure{break-inside:avoid-page}article.finding{break-inside:avoid}"
	"*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}";

void html_write_head(FILE *out, const char *title, const char *more_css)
{
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		     "style-src 'unsafe-inline'\">\n"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		     "<meta name=\"generator\" content=\"gpt-trace %s\">\n<title>", GPT_TRACE_VERSION);
	html_text(out, title);
	fprintf(out, "</title>\n<style>%s%s</style>\n</head>\n", css, more_css ? more_css : "");
}

void html_swatch(FILE *out, const char *color, const char *label)
{
	fprintf(out, "<span><i class=\"sw\" style=\"background:%s\"></i>", color);
	html_text(out, label);
	fputs("</span>", out);
}

void html_write_notes(FILE *out, char *const *notes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fputs("<p class=\"note\"><b>Note:</b> ", out);
		html_text(out, notes[i]);
		fputs("</p>\n", out);
	}
}

const char *html_severity_word(enum finding_severity s)
{
	return s == SEVERITY_CRITICAL ? "critical" : s == SEVERITY_WARNING ? "warning" : "info";
}

/* A y axis in duration: ticks at a 1-2-5 step, labelled. */
int64_t html_nice_step(int64_t range, int ticks)
{
	int64_t step = 1;

	while (step * ticks < range) {
		if (step * 2 * ticks >= range)
			return step * 2;
		if (step * 5 * ticks >= range)
			return step * 5;
		step *= 10;
	}
	return step;
}

/* An evidence line that names a source line ("source kernels/access.cu:17: ..."). */
static int is_source_line(const char *s)
{
	return !strncmp(s, "source ", 7);
}

void html_write_findings(FILE *out, int64_t origin, int64_t steady_iterations, const struct findings *findings)
{
	char a[32], b[32];

	fputs("<section id=\"findings\">\n<h2>Findings</h2>\n", out);
	if (!findings->count)
		fputs("<p>None.</p>\n", out);
	for (size_t i = 0; i < findings->count; i++) {
		const struct finding *f = &findings->items[i];

		fprintf(out, "<article class=\"finding sev-%s\" id=\"finding-%zu\" data-rank=\"%zu\" data-rule=\"%s\" "
			"data-severity=\"%s\" data-recoverable-ns=\"%" PRId64 "\"", html_severity_word(f->severity), i + 1, i + 1,
			f->rule_id, html_severity_word(f->severity), f->recoverable_ns);
		if (steady_iterations > 0)
			fprintf(out, " data-per-iteration-ns=\"%" PRId64 "\"", f->recoverable_ns / steady_iterations);
		if (f->start || f->end)
			fprintf(out, " data-start-ns=\"%" PRId64 "\" data-end-ns=\"%" PRId64 "\"", f->start, f->end);
		fprintf(out, ">\n<h3>%zu. <span class=\"badge b-%s\">%s</span> <code>%s</code> ", i + 1,
			html_severity_word(f->severity), html_severity_word(f->severity), f->rule_id);
		html_text(out, f->message);
		fputs("</h3>\n<p>", out);
		if (f->recoverable_ns > 0) {
			fprintf(out, "<b>Recoverable:</b> %s",
				units_duration(a, sizeof(a), f->recoverable_ns, UNITS_FINE));
			if (steady_iterations > 0)
				fprintf(out, " (%s per iteration)",
					units_duration(a, sizeof(a),
						       f->recoverable_ns / steady_iterations,
						       UNITS_FINE));
		} else {
			fputs("<b>Recoverable:</b> unknown", out);
		}
		if (f->start || f->end)
			fprintf(out, " &middot; <span class=\"muted\">where: %s to %s</span>", html_time(origin, f->start, a, sizeof(a)),
				html_time(origin, f->end, b, sizeof(b)));
		fputs("</p>\n", out);
		if (f->nevidence) {
			fputs("<ul class=\"evidence\">\n", out);
			for (size_t j = 0; j < f->nevidence; j++) {
				int src = is_source_line(f->evidence[j]);

				fputs(src ? "<li class=\"src\"><code>" : "<li>", out);
				html_text(out, f->evidence[j]);
				fputs(src ? "</code></li>\n" : "</li>\n", out);
			}
			fputs("</ul>\n", out);
		}
		if (f->fix && f->fix[0]) {
			fputs("<p class=\"fix\"><b>Fix:</b> ", out);
			html_text(out, f->fix);
			fputs("</p>\n", out);
		}
		fputs("</article>\n", out);
	}
	fputs("</section>\n", out);
}
