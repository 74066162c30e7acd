/*
 * The HTML report's GPU utilization (issue 23): for traces recorded with GPU metrics (gpt-trace run
 * --gpu-metrics, nsys --gpu-metrics-devices), a chart per GPU under the timeline's lanes, on the
 * same axis, and a short "what bounds the GPU" summary beside it.
 *
 * The chart draws, per pixel column (one of the window's CHART_BUCKETS buckets, as the lanes
 * above), the time-weighted mean of the PM samples over the column, in bands of 0-100% as nsys
 * draws its metric rows: SMs active, tensor pipes active, DRAM read + write (share of peak), and
 * where the samples have it PCIe (the busier direction's share of the link). Samples the writer
 * left out because the GPU was idle count 0 (docs/gpu-metrics.md: counted, not stored); before the
 * device's first stored sample and after its last the column is blank, since nothing says whether
 * the sampler ran there. A mean, not a maximum, so that the chart reads as utilization and its
 * average over a window is the trace's; in the zoomed steady state a pixel is a few samples.
 *
 * The summary is analyzer/analysis/kernel-efficiency.h over the steady state, the numbers of
 * `gpt-trace stats`' "GPU busy time by what bounds it". Reading loads every sample of the trace, as
 * stats does.
 */
#include "analyzer/report/html/html.h"
#include "common/util.h"
#include "analyzer/loader/gpu-samples.h"
#include "analyzer/analysis/kernel-efficiency.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UTIL_PAD 4		/* above the first band */
#define UTIL_BAND 26		/* a series' band: 0 at its bottom, 100% at its top */
#define UTIL_GAP 8		/* between bands */
#define UTIL_HOVER 10		/* pixel columns under one hover title */

/* The loader's metric behind each of ours. */
static const enum gpu_sample_metric util_source[UTIL_METRICS] = {
	[UTIL_SM] = GS_SM_ACTIVE, [UTIL_TENSOR] = GS_TENSOR, [UTIL_DRAM_READ] = GS_DRAM_READ,
	[UTIL_DRAM_WRITE] = GS_DRAM_WRITE, [UTIL_PCIE_RX] = GS_PCIE_RX, [UTIL_PCIE_TX] = GS_PCIE_TX,
};

/* The series drawn: SMs active, tensor pipes, DRAM read + write; PCIe where sampled (the last). */
enum util_series { SERIES_SM, SERIES_TENSOR, SERIES_DRAM, SERIES_PCIE };
#define UTIL_SERIES 4

static const struct {
	const char *id, *label, *color;
} series[UTIL_SERIES] = {
	{ "sm", "SMs active", "#0072B2" },
	{ "tensor", "tensor pipes", "#009E73" },
	{ "dram", "DRAM rd+wr", "#D55E00" },
	{ "pcie", "PCIe rx|tx", "#CC79A7" },
};

/* ---- reading ---- */

static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* Each sample's values times its overlap with each bucket of w, into sums. */
static void spread_samples(const struct chart_window *w, const struct gpu_samples *d,
			   double (*sums)[UTIL_METRICS])
{
	for (size_t i = 0; i < d->count; i++) {
		const struct gpu_sample *s = &d->samples[i];
		int64_t lo = s->start > w->start ? s->start : w->start, hi = s->end < w->end ? s->end : w->end;

		if (hi <= lo)
			continue;
		for (int64_t b = (lo - w->start) / w->width; b < CHART_BUCKETS; b++) {
			int64_t bs = w->start + b * w->width, o = overlap(lo, hi, bs, bs + w->width);

			if (!o)
				break;
			for (int m = 0; m < UTIL_METRICS; m++)
				if (!isnan(s->value[util_source[m]]))
					sums[b][m] += (double)s->value[util_source[m]] * (double)o;
		}
	}
}

/* The time of bucket b of window w in u's sampled range. */
static int64_t bucket_sampled(const struct chart_window *w, const struct chart_util *u, int64_t b)
{
	int64_t bs = w->start + b * w->width;

	return overlap(bs, bs + w->width, u->first, u->last);
}

static void util_fill(struct chart_util *u, const struct gpu_samples *d, const struct report_charts *c)
{
	double (*sums)[UTIL_METRICS] = xcalloc(CHART_BUCKETS, sizeof(*sums));

	u->first = d->samples[0].start;
	u->last = d->samples[d->count - 1].end;
	u->samples = (int64_t)d->count;
	u->period_ns = d->period_ns;
	for (int m = 0; m < UTIL_METRICS; m++)
		u->present[m] = d->present[util_source[m]];
	for (size_t wi = 0; wi < c->nwindows; wi++) {
		const struct chart_window *w = &c->windows[wi];

		memset(sums, 0, CHART_BUCKETS * sizeof(*sums));
		spread_samples(w, d, sums);
		u->pct[wi] = xcalloc(CHART_BUCKETS, sizeof(*u->pct[wi]));
		for (int64_t b = 0; b < CHART_BUCKETS; b++) {
			int64_t sampled = bucket_sampled(w, u, b);

			for (int m = 0; m < UTIL_METRICS; m++)
				u->pct[wi][b][m] = sampled && u->present[m] ? (float)(sums[b][m] / (double)sampled) : NAN;
		}
	}
	free(sums);
}

static int has_device(const struct report_charts *c, int64_t trace_id, int64_t device)
{
	for (size_t i = 0; i < c->ndevices; i++)
		if (c->devices[i].trace_id == trace_id && c->devices[i].device == device)
			return 1;
	return 0;
}

/* Kernel time by class over the steady state (the scope when one was given or nothing repeats). */
static int read_bounds(struct trace *trace, const struct report_header *hdr, struct report_charts *c, char *err,
		       size_t errlen)
{
	int64_t start = 0, end = 0;
	int ret;

	if (!hdr->scope && hdr->phases)
		phases_steady_window(hdr->phases, &start, &end);
	if (end <= start)
		start = end = 0;
	ret = kernel_efficiency_compute(trace, start, end, &c->bounds, err, errlen);
	c->bounds_start = start;
	c->bounds_end = end;
	return ret < 0 ? ret : 0;
}

int html_util_read(struct trace *trace, const struct report_header *hdr, struct report_charts *c, char *err,
		   size_t errlen)
{
	struct gpu_samples *devices = NULL;
	int n = gpu_samples_load(trace, &devices, err, errlen);

	if (n <= 0)
		return n;
	for (int i = 0; i < n; i++) {
		const struct gpu_samples *d = &devices[i];
		struct chart_util *u;

		/* drawn under the device's lanes: only devices that ran something */
		if (!d->count || !has_device(c, d->trace_id, d->device))
			continue;
		c->utils = xrealloc(c->utils, (c->nutils + 1) * sizeof(*c->utils));
		u = memset(&c->utils[c->nutils++], 0, sizeof(*u));
		u->trace_id = d->trace_id;
		u->device = d->device;
		util_fill(u, d, c);
	}
	gpu_samples_free(devices, (size_t)n);
	return read_bounds(trace, hdr, c, err, errlen);
}

void html_util_release(struct report_charts *c)
{
	for (size_t i = 0; i < c->nutils; i++)
		for (size_t w = 0; w < CHART_WINDOWS; w++)
			free(c->utils[i].pct[w]);
	free(c->utils);
	c->utils = NULL;
	c->nutils = 0;
	kernel_efficiency_free(c->bounds);
	c->bounds = NULL;
}

/* ---- the chart, a row of the timeline: one band per series ---- */

/* A series' value in bucket b of window wi; NaN where not sampled. */
static double series_value(const struct chart_util *u, size_t wi, int64_t b, int s)
{
	const float *v = u->pct[wi][b];

	if (s == SERIES_SM)
		return v[UTIL_SM];
	if (s == SERIES_TENSOR)
		return v[UTIL_TENSOR];
	if (s == SERIES_PCIE) {	/* each direction has its own peak: the busier one */
		if (isnan(v[UTIL_PCIE_RX]) && isnan(v[UTIL_PCIE_TX]))
			return NAN;
		return fmax(isnan(v[UTIL_PCIE_RX]) ? 0 : v[UTIL_PCIE_RX], isnan(v[UTIL_PCIE_TX]) ? 0 : v[UTIL_PCIE_TX]);
	}
	if (isnan(v[UTIL_DRAM_READ]) && isnan(v[UTIL_DRAM_WRITE]))
		return NAN;
	return (isnan(v[UTIL_DRAM_READ]) ? 0 : v[UTIL_DRAM_READ]) + (isnan(v[UTIL_DRAM_WRITE]) ? 0 : v[UTIL_DRAM_WRITE]);
}

static int series_present(const struct chart_util *u, int s)
{
	if (s == SERIES_DRAM)
		return u->present[UTIL_DRAM_READ] || u->present[UTIL_DRAM_WRITE];
	if (s == SERIES_PCIE)
		return u->present[UTIL_PCIE_RX] || u->present[UTIL_PCIE_TX];
	return u->present[s == SERIES_SM ? UTIL_SM : UTIL_TENSOR];
}

/* The bands drawn for u: PCIe's only where sampled. */
static int util_series(const struct chart_util *u)
{
	return series_present(u, SERIES_PCIE) ? UTIL_SERIES : UTIL_SERIES - 1;
}

int html_util_height(const struct chart_util *u)
{
	return UTIL_PAD + util_series(u) * (UTIL_BAND + UTIL_GAP);
}

static int band_top(const struct html_timeline *tl, int s)
{
	return tl->y + UTIL_PAD + s * (UTIL_BAND + UTIL_GAP);
}

/* The y of pct in series s's band: 0 at its bottom, 100% (or more) at its top. */
static double band_y(const struct html_timeline *tl, int s, double pct)
{
	if (pct > 100)
		pct = 100;
	if (pct < 0)
		pct = 0;
	return band_top(tl, s) + UTIL_BAND * (1 - pct / 100);
}

/*
 * A series as one area: a step per pixel column, broken where nothing was sampled. Its values, one
 * per column ("-": not sampled), in data-pct.
 */
static void write_series(struct html_timeline *tl, const struct chart_util *u, int s)
{
	double base = band_y(tl, s, 0), y = 0;
	int open = 0;

	fprintf(tl->out, "<path class=\"util-series\" data-series=\"%s\" data-pct=\"", series[s].id);
	for (int64_t b = 0; b < CHART_BUCKETS; b++) {
		double v = series_value(u, tl->wi, b, s);

		if (isnan(v))
			fprintf(tl->out, "%s-", b ? " " : "");
		else
			fprintf(tl->out, "%s%.1f", b ? " " : "", v);
	}
	fputs("\" d=\"", tl->out);
	for (int64_t b = 0; b <= CHART_BUCKETS; b++) {
		double v = b < CHART_BUCKETS ? series_value(u, tl->wi, b, s) : NAN;
		int x = TL_LEFT + (int)b;

		if (isnan(v)) {
			if (open)
				fprintf(tl->out, "H%dV%.1fZ", x, base);
			open = 0;
			continue;
		}
		if (!open)
			fprintf(tl->out, "M%d %.1fV%.1f", x, base, band_y(tl, s, v));
		else if (band_y(tl, s, v) != y)
			fprintf(tl->out, "H%dV%.1f", x, band_y(tl, s, v));
		y = band_y(tl, s, v);
		open = 1;
	}
	fprintf(tl->out, "\" fill=\"%s\"/>", series[s].color);
}

/* The mean of metric m over buckets [b0, b1) of window wi, weighted by their sampled time. */
static double util_mean(const struct html_timeline *tl, const struct chart_util *u, int64_t b0, int64_t b1, int m)
{
	double sum = 0, weight = 0;

	for (int64_t b = b0; b < b1; b++) {
		double t = (double)bucket_sampled(tl->w, u, b);

		if (t > 0 && !isnan(u->pct[tl->wi][b][m])) {
			sum += u->pct[tl->wi][b][m] * t;
			weight += t;
		}
	}
	return weight > 0 ? sum / weight : NAN;
}

/* Hover titles over the bands, UTIL_HOVER columns each, where anything was sampled. */
static void write_hover(struct html_timeline *tl, const struct chart_util *u)
{
	const struct chart_window *w = tl->w;
	char a[32], b[32];

	for (int64_t b0 = 0; b0 < CHART_BUCKETS; b0 += UTIL_HOVER) {
		int64_t b1 = b0 + UTIL_HOVER < CHART_BUCKETS ? b0 + UTIL_HOVER : CHART_BUCKETS;
		double sm = util_mean(tl, u, b0, b1, UTIL_SM), tc = util_mean(tl, u, b0, b1, UTIL_TENSOR);
		double rd = util_mean(tl, u, b0, b1, UTIL_DRAM_READ), wr = util_mean(tl, u, b0, b1, UTIL_DRAM_WRITE);
		double rx = util_mean(tl, u, b0, b1, UTIL_PCIE_RX), tx = util_mean(tl, u, b0, b1, UTIL_PCIE_TX);

		if (isnan(sm) && isnan(tc) && isnan(rd) && isnan(wr))
			continue;
		fprintf(tl->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"transparent\"><title>%s to %s: "
			"SMs %.0f%%", TL_LEFT + (int)b0, band_top(tl, 0), (int)(b1 - b0),
			band_top(tl, util_series(u) - 1) + UTIL_BAND - band_top(tl, 0),
			html_time(tl->origin, w->start + b0 * w->width, a, sizeof(a)),
			html_time(tl->origin, w->start + b1 * w->width, b, sizeof(b)), isnan(sm) ? 0 : sm);
		if (!isnan(tc))
			fprintf(tl->out, ", tensor %.0f%%", tc);
		fprintf(tl->out, ", DRAM %.0f+%.0f%% (read+write of peak)", isnan(rd) ? 0 : rd, isnan(wr) ? 0 : wr);
		if (!isnan(rx) || !isnan(tx))
			fprintf(tl->out, ", PCIe rx %.0f%% tx %.0f%% (of the link)", isnan(rx) ? 0 : rx, isnan(tx) ? 0 : tx);
		fputs("</title></rect>", tl->out);
	}
}

/* Series s's band: its label and scale in the label column, the sampled columns shaded, its area. */
static void write_band(struct html_timeline *tl, const struct chart_util *u, int s, int64_t x0, int64_t x1)
{
	int top = band_top(tl, s);

	fprintf(tl->out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", TL_LEFT - 36, top + UTIL_BAND / 2 + 5);
	if (!s)
		fprintf(tl->out, "GPU %" PRId64 " ", u->device);
	fprintf(tl->out, "%s%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"muted\" font-size=\"9\">100%%"
		"</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"muted\" font-size=\"9\">0</text>",
		series[s].label, series_present(u, s) ? "" : " (not sampled)", TL_LEFT - 4, top + 8, TL_LEFT - 4,
		top + UTIL_BAND);
	if (x1 > x0)	/* the sampled columns, shaded as the GPU rows' active span */
		fprintf(tl->out, "<rect class=\"util-sampled\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			"fill=\"#f4f4f4\"/>", TL_LEFT + (int)x0, top, (int)(x1 - x0), UTIL_BAND);
	fprintf(tl->out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke-dasharray=\"2 3\"/>",
		TL_LEFT, TL_LEFT + CHART_BUCKETS, band_y(tl, s, 50), band_y(tl, s, 50));
	if (series_present(u, s))
		write_series(tl, u, s);
	fprintf(tl->out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>", TL_LEFT,
		TL_LEFT + CHART_BUCKETS, top + UTIL_BAND, top + UTIL_BAND);
}

void html_util_row(struct html_timeline *tl, const struct chart_util *u)
{
	const struct chart_window *w = tl->w;
	int64_t x0 = (u->first - w->start) / w->width, x1 = (u->last - w->start + w->width - 1) / w->width;

	x0 = x0 < 0 ? 0 : x0 > CHART_BUCKETS ? CHART_BUCKETS : x0;
	x1 = x1 < 0 ? 0 : x1 > CHART_BUCKETS ? CHART_BUCKETS : x1;
	fprintf(tl->out, "<g class=\"util\" data-trace=\"%" PRId64 "\" data-device=\"%" PRId64 "\" data-start-ns=\"%"
		PRId64 "\" data-end-ns=\"%" PRId64 "\" data-bucket-ns=\"%" PRId64 "\" data-x0=\"%d\" data-x1=\"%d\" "
		"data-first-ns=\"%" PRId64 "\" data-last-ns=\"%" PRId64 "\" data-samples=\"%" PRId64 "\" "
		"data-period-ns=\"%" PRId64 "\">", u->trace_id, u->device, w->start, w->end, w->width, TL_LEFT,
		TL_LEFT + CHART_BUCKETS, u->first, u->last, u->samples, u->period_ns);
	for (int s = 0; s < util_series(u); s++)
		write_band(tl, u, s, x0, x1);
	write_hover(tl, u);
	fputs("</g>\n", tl->out);
	tl->y += html_util_height(u);
}

/* ---- under the timeline: the legend, and what bounds the GPU ---- */

static const char *const bound_color[KERNEL_BOUND_COUNT] = {
	[KERNEL_BOUND_UNKNOWN] = "#E3E3E3", [KERNEL_BOUND_COMPUTE] = "#0072B2",
	[KERNEL_BOUND_MEMORY] = "#D55E00", [KERNEL_BOUND_LATENCY] = "#E69F00",
};

static void write_util_legend(FILE *out, const struct report_charts *c)
{
	int pcie = 0;
	char a[32];

	for (size_t i = 0; i < c->nutils; i++)
		pcie |= util_series(&c->utils[i]) == UTIL_SERIES;
	fputs("<div class=\"legend\">", out);
	for (int s = 0; s < UTIL_SERIES - !pcie; s++)
		html_swatch(out, series[s].color, series[s].label);
	fprintf(out, "</div>\n<p class=\"small muted\">GPU utilization: %s bands of 0 to 100%% per GPU from its GPU metrics",
		pcie ? "three or four" : "three");
	if (c->utils[0].period_ns > 0)
		fprintf(out, ", sampled every %s", html_short(c->utils[0].period_ns, a, sizeof(a)));
	fputs(" (<code>gpt-trace run --gpu-metrics</code>), on the timeline's axis. Each pixel column is the "
	      "time-weighted mean of the samples over it; a sample the recorder left out because the GPU was idle "
	      "counts 0; blank before the first sample and after the last. SMs active: the share of SMs holding a "
	      "warp (residency, not issue rate); DRAM: read + write bandwidth, each CUPTI's share of the peak (cut at "
	      "100%).", out);
	if (pcie)
		fputs(" PCIe: the busier direction's share of the link's peak, where the samples have it.", out);
	fputs(" Hover for the values.</p>\n", out);
}

/* The class's largest kernel with its sampled shares. */
static void write_class_kernel(FILE *out, const struct kernel_efficiencies *k, enum kernel_bound bound)
{
	char a[32];

	for (size_t i = 0; i < k->count; i++) {
		const struct kernel_efficiency *e = &k->kernels[i];

		if (e->bound != bound)
			continue;
		fputs("<span class=\"mono\" title=\"", out);
		html_text(out, e->name);
		fputs("\">", out);
		html_kernel_name(out, e->name);
		fprintf(out, "</span> %s", units_duration(a, sizeof(a), e->time_ns, UNITS_FINE));
		if (!isnan(e->sm_pct))
			fprintf(out, ": SMs %.0f%%, tensor %.0f%%, DRAM %.0f+%.0f%%", e->sm_pct,
				isnan(e->tensor_pct) ? 0 : e->tensor_pct, isnan(e->dram_read_pct) ? 0 : e->dram_read_pct,
				isnan(e->dram_write_pct) ? 0 : e->dram_write_pct);
		return;
	}
}

static void write_bounds(FILE *out, const struct report_header *hdr, const struct kernel_efficiencies *k)
{
	static const enum kernel_bound order[] = { KERNEL_BOUND_COMPUTE, KERNEL_BOUND_MEMORY, KERNEL_BOUND_LATENCY,
						   KERNEL_BOUND_UNKNOWN };
	const struct report_charts *c = hdr->charts;
	int64_t total = k->total_ns > 0 ? k->total_ns : 1;
	char a[32], b[32];

	fprintf(out, "<div id=\"bounds\" data-start-ns=\"%" PRId64 "\" data-end-ns=\"%" PRId64 "\" data-kernel-ns=\"%"
		PRId64 "\" data-samples=\"%" PRId64 "\">\n<h3>What bounds the GPU</h3>\n<p>", c->bounds_start, c->bounds_end,
		k->total_ns, k->samples);
	if (c->bounds_end > c->bounds_start)
		fprintf(out, "In the steady state (%s to %s)", html_at(hdr, c->bounds_start, a, sizeof(a)),
			html_at(hdr, c->bounds_end, b, sizeof(b)));
	else
		fprintf(out, "Over the whole %s", hdr->scope ? "scope" : "trace (no steady state)");
	fprintf(out,
		", kernels ran %s, by what bounds each (the overlap-weighted mean of the %" PRId64
		" samples its "
		"executions overlap; as <code>gpt-trace stats</code>):</p>\n<div class=\"stack\">",
		units_duration(a, sizeof(a), k->total_ns, UNITS_FINE), k->samples);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (k->bound_ns[order[i]] > 0)
			fprintf(out, "<i style=\"width:%.3f%%;background:%s\" title=\"%s %s\"></i>",
				100.0 * (double)k->bound_ns[order[i]] / (double)total,
				bound_color[order[i]], kernel_bound_name(order[i]),
				units_duration(a, sizeof(a), k->bound_ns[order[i]], UNITS_FINE));
	fputs("</div>\n<table class=\"bounds\"><tr><th>Class</th><th class=\"num\">Share</th><th class=\"num\">Time</th>"
	      "<th>Largest kernel</th></tr>\n", out);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int64_t ns = k->bound_ns[order[i]];

		if (!ns)
			continue;
		fprintf(out,
			"<tr class=\"bound\" data-class=\"%s\" data-ns=\"%" PRId64
			"\"><td class=\"nowrap\"><i class=\"sw\" "
			"style=\"background:%s\"></i> %s</td><td class=\"num\">%.1f%%</td><td "
			"class=\"num\">%s</td>"
			"<td class=\"name\">",
			kernel_bound_name(order[i]), ns, bound_color[order[i]],
			kernel_bound_name(order[i]), 100.0 * (double)ns / (double)total,
			units_duration(a, sizeof(a), ns, UNITS_FINE));
		write_class_kernel(out, k, order[i]);
		fputs("</td></tr>\n", out);
	}
	fprintf(out, "</table>\n<p class=\"small muted\">Memory-bound: DRAM read + write at least %.0f%% of peak; "
		"compute-bound: otherwise tensor pipes at least %.0f%% or SMs active at least %.0f%%; latency-bound: "
		"neither (few SMs busy, or waiting on latency); unknown: under %.0f%% of its time in samples it "
		"fills at least half of (shorter kernels: sample faster, e.g. --gpu-metrics=20us) "
		"(docs/gpu-metrics.md).</p>\n</div>\n", KEFF_MEMORY_DRAM_PCT, KEFF_COMPUTE_TENSOR_PCT, KEFF_COMPUTE_SM_PCT,
		KEFF_MIN_COVERAGE * 100);
}

void html_write_utilization(FILE *out, const struct report_header *hdr)
{
	const struct report_charts *c = hdr->charts;

	if (!c)
		return;
	if (c->nutils && c->nwindows)
		write_util_legend(out, c);
	if (c->bounds && c->bounds->total_ns > 0)
		write_bounds(out, hdr, c->bounds);
}
