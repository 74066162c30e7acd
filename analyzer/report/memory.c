/*
 * The report's memory section (see memory.h). Sizes print in decimal units (MB, GB) as the
 * rules' evidence does; the JSON has bytes.
 */
#include "analyzer/report/memory.h"
#include "analyzer/report/report.h"
#include "analyzer/output/format.h"

#include "analyzer/analysis/memory-use.h"

#include "analyzer/report/html/html.h"
#include "common/units.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int has_memory(const struct report_header *hdr)
{
	return hdr->memory && hdr->memory->ndevices > 0;
}

/* "78.37 GB (92.2% of 85.02 GB) at +4.734 s, iteration #2, NVTX range 'step'" */
static void peak_text(FILE *out, const struct report_header *hdr, const struct memory_device *d)
{
	char a[32], b[32], c[32];

	fprintf(out, "%s", units_bytes(a, sizeof(a), (double)d->peak_bytes, UNITS_FINE));
	if (d->capacity > 0)
		fprintf(out, " (%.1f%% of %s)", 100.0 * (double)d->peak_bytes / (double)d->capacity,
			units_bytes(b, sizeof(b), (double)d->capacity, UNITS_FINE));
	fprintf(out, " at %s", output_offset(d->peak_at - hdr->origin, c, sizeof(c)));
	if (d->peak_iteration)
		fprintf(out, ", iteration #%" PRId64, d->peak_iteration);
	if (d->peak_range)
		fprintf(out, ", NVTX range '%s'", d->peak_range);
}

/*
 * How often something happened in the n steady iterations, right for rare events too: at least once
 * an iteration, "2 allocations (838.86 KB)" or "1.5 allocations" (per iteration: the caller says so
 * where per_iteration is 0); less often, "1 allocation in 12 steady iterations (419.43 KB)", bytes
 * being the total then. count > 0.
 */
static void how_often(FILE *out, int64_t count, int64_t n, const char *noun, const int64_t *bytes,
		      int per_iteration)
{
	char b[32];

	if (count >= n) {
		if (count % n == 0)
			fprintf(out, "%" PRId64 " %s%s", count / n, noun, plural(count / n));
		else
			fprintf(out, "%.1f %ss", (double)count / (double)n, noun);
		if (bytes)
			fprintf(out, " (%s)",
				units_bytes(b, sizeof(b), (double)*bytes / (double)n, UNITS_FINE));
		if (per_iteration)
			fprintf(out, " per iteration");
		return;
	}
	fprintf(out, "%" PRId64 " %s%s in %" PRId64 " steady iterations", count, noun, plural(count), n);
	if (bytes)
		fprintf(out, " (%s)", units_bytes(b, sizeof(b), (double)*bytes, UNITS_FINE));
}

/* After "steady: ": "2 allocations (838.86 KB) and 2 releases per iteration; in use ...", "no
 * allocations or releases; ...", "1 allocation in 40 steady iterations (16.78 MB) and no releases; ..." */
static void steady_text(FILE *out, const struct memory_device *d)
{
	char b[32], c[32], g[32];
	int64_t n = d->steady_iterations, allocs = d->steady_allocs, releases = d->steady_releases;

	if (!allocs && !releases) {
		fprintf(out, "no allocations or releases");
	} else {
		if (allocs)
			how_often(out, allocs, n, "allocation", &d->steady_alloc_bytes, releases < n);
		else
			fprintf(out, "no allocations");
		fprintf(out, " and ");
		if (releases)
			how_often(out, releases, n, "release", NULL, 1);
		else
			fprintf(out, "no releases");
	}
	fprintf(
	    out,
	    "; in use %s after the first steady iteration, %s after the last (%s%s per iteration)",
	    units_bytes(b, sizeof(b), (double)d->steady_first_bytes, UNITS_FINE),
	    units_bytes(c, sizeof(c), (double)d->steady_last_bytes, UNITS_FINE),
	    d->growth_per_iteration < 0 ? "-" : "+",
	    units_bytes(g, sizeof(g),
			d->growth_per_iteration < 0 ? -d->growth_per_iteration
						    : d->growth_per_iteration,
			UNITS_FINE));
}

void report_memory_text(FILE *out, const struct report_header *hdr)
{
	const struct memory_summary *m = hdr->memory;
	char a[32], b[32];

	if (!has_memory(hdr))
		return;
	fprintf(out, "memory\n");
	for (size_t i = 0; i < m->ndevices; i++) {
		const struct memory_device *d = &m->devices[i];

		fprintf(out, "  device %" PRId64 "%s%s  peak ", d->device, hdr->ntraces > 1 ? " of trace " : "",
			hdr->ntraces > 1 ? hdr->traces[d->trace_id] : "");
		peak_text(out, hdr, d);
		fprintf(out,
			"\n             %" PRId64 " allocation%s, %" PRId64
			" release%s; %s in use at the end\n",
			d->allocs, plural(d->allocs), d->releases, plural(d->releases),
			units_bytes(a, sizeof(a), (double)d->end_bytes, UNITS_FINE));
		if (d->steady_iterations > 0) {
			fprintf(out, "             steady: ");
			steady_text(out, d);
			fprintf(out, "\n");
		}
		for (size_t j = 0; j < d->nlargest && j < 3; j++) {
			const struct memory_alloc *al = &d->largest[j];

			fprintf(out, "             %s %s at %s by %s", j ? "       " : "largest",
				units_bytes(a, sizeof(a), (double)al->bytes, UNITS_FINE),
				output_offset(al->start - hdr->origin, b, sizeof(b)),
				al->call ? al->call : "?");
			if (al->range)
				fprintf(out, " in NVTX range '%s'", al->range);
			fprintf(out, "\n");
		}
		if (memory_pool_reserved(d))
			fprintf(out, "             note: the largest allocation, %.0f%% of the device, is a pool reserved up "
				"front (JAX/XLA preallocates 75%% of the GPU: XLA_PYTHON_CLIENT_PREALLOCATE=false "
				"allocates as needed, XLA_PYTHON_CLIENT_MEM_FRACTION sets the share); CUDA sees the "
				"pool, not what the program keeps in it\n",
				100.0 * (double)memory_pool_reserved(d) / (double)d->capacity);
	}
	if (m->dropped > 0)
		fprintf(out, "  note       the collector dropped %" PRId64 " memory records over its bound: in use is "
			"understated from then on\n", m->dropped);
	fprintf(out, "\n");
}

void report_memory_markdown(FILE *out, const struct report_header *hdr)
{
	const struct memory_summary *m = hdr->memory;
	char a[32];

	if (!has_memory(hdr))
		return;
	fprintf(out, "### Memory\n\n| device | peak | allocations | steady state |\n| --- | --- | --- | --- |\n");
	for (size_t i = 0; i < m->ndevices; i++) {
		const struct memory_device *d = &m->devices[i];

		fprintf(out, "| %" PRId64 " | ", d->device);
		peak_text(out, hdr, d);
		fprintf(out,
			" | %" PRId64 " allocation%s, %" PRId64
			" release%s, %s in use at the end | ",
			d->allocs, plural(d->allocs), d->releases, plural(d->releases),
			units_bytes(a, sizeof(a), (double)d->end_bytes, UNITS_FINE));
		if (d->steady_iterations > 0)
			steady_text(out, d);
		fprintf(out, " |\n");
	}
	fprintf(out, "\n");
}

void report_memory_json(FILE *out, const struct report_header *hdr)
{
	const struct memory_summary *m = hdr->memory;

	if (!has_memory(hdr)) {
		fprintf(out, "  \"memory\": null,\n");
		return;
	}
	fprintf(out, "  \"memory\": {\"dropped_records\": %" PRId64 ", \"devices\": [", m->dropped);
	for (size_t i = 0; i < m->ndevices; i++) {
		const struct memory_device *d = &m->devices[i];

		fprintf(out, "%s\n    {\"trace\": %" PRId64 ", \"device\": %" PRId64 ", \"capacity_bytes\": ", i ? "," : "",
			d->trace_id, d->device);
		if (d->capacity > 0)
			fprintf(out, "%" PRId64, d->capacity);
		else
			fprintf(out, "null");
		fprintf(out, ", \"allocations\": %" PRId64 ", \"releases\": %" PRId64 ", \"end_bytes\": %" PRId64
			",\n     \"peak\": {\"bytes\": %" PRId64 ", \"at_ns\": %" PRId64 ", \"share\": ", d->allocs,
			d->releases, d->end_bytes, d->peak_bytes, d->peak_at);
		if (d->capacity > 0)
			fprintf(out, "%.6f", (double)d->peak_bytes / (double)d->capacity);
		else
			fprintf(out, "null");
		fprintf(out, ", \"iteration\": ");
		if (d->peak_iteration)
			fprintf(out, "%" PRId64, d->peak_iteration);
		else
			fprintf(out, "null");
		fprintf(out, ", \"nvtx_range\": ");
		output_json_string(out, d->peak_range);
		fprintf(out, ", \"kernel\": ");
		output_json_string(out, d->peak_kernel);
		fprintf(out, "},\n     \"steady\": ");
		if (d->steady_iterations > 0)
			fprintf(out, "{\"iterations\": %" PRId64 ", \"allocations\": %" PRId64 ", \"allocated_bytes\": %" PRId64
				", \"releases\": %" PRId64 ", \"first_end_bytes\": %" PRId64 ", \"last_end_bytes\": %" PRId64
				", \"growth_per_iteration_bytes\": %.1f, \"rising_iterations\": %" PRId64 "}",
				d->steady_iterations, d->steady_allocs, d->steady_alloc_bytes, d->steady_releases,
				d->steady_first_bytes, d->steady_last_bytes, d->growth_per_iteration,
				d->growing_iterations);
		else
			fprintf(out, "null");
		fprintf(out, ",\n     \"pool_reserved_bytes\": ");
		if (memory_pool_reserved(d))
			fprintf(out, "%" PRId64, memory_pool_reserved(d));
		else
			fprintf(out, "null");
		fprintf(out, ",\n     \"largest\": [");
		for (size_t j = 0; j < d->nlargest; j++) {
			const struct memory_alloc *al = &d->largest[j];

			fprintf(out, "%s{\"bytes\": %" PRId64 ", \"at_ns\": %" PRId64 ", \"call\": ", j ? ", " : "",
				al->bytes, al->start);
			output_json_string(out, al->call);
			fprintf(out, ", \"nvtx_range\": ");
			output_json_string(out, al->range);
			fprintf(out, ", \"iteration\": ");
			if (al->iteration)
				fprintf(out, "%" PRId64 "}", al->iteration);
			else
				fprintf(out, "null}");
		}
		fprintf(out, "]}");
	}
	fprintf(out, "\n  ]},\n");
}

#define CHART_W 900
#define CHART_H 180
#define CHART_LEFT 70
#define CHART_BOTTOM 24
#define CHART_STEPS 2000	/* at most this many points drawn per device */

/* One device's memory in use as a step chart over the trace's span, its capacity as a dashed line. */
static void chart_html(FILE *out, const struct report_header *hdr, const struct memory_device *d)
{
	int64_t t0 = hdr->start < d->points[0].at ? hdr->start : d->points[0].at;
	int64_t t1 = hdr->end > d->points[d->npoints - 1].at ? hdr->end : d->points[d->npoints - 1].at;
	double ymax = (double)(d->capacity > d->peak_bytes ? d->capacity : d->peak_bytes);
	double pw = CHART_W - CHART_LEFT - 10, ph = CHART_H - CHART_BOTTOM - 10, y, x;
	size_t stride = d->npoints / CHART_STEPS + 1;
	char a[32];

	if (t1 <= t0)
		t1 = t0 + 1;
	if (ymax <= 0)
		ymax = 1;
	fprintf(out, "<figure><svg class=\"memory-chart\" data-device=\"%" PRId64 "\" data-points=\"%zu\" "
		"viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"GPU memory in use over time\">\n", d->device,
		d->npoints, CHART_W, CHART_H);
	for (int i = 0; i <= 4; i++) {
		y = 10 + ph - ph * i / 4.0;
		fprintf(out,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text "
			"x=\"%d\" y=\"%.1f\" "
			"text-anchor=\"end\" font-size=\"11\">%s</text>\n",
			CHART_LEFT, CHART_W - 10, y, y, CHART_LEFT - 4, y + 4,
			units_bytes(a, sizeof(a), ymax * i / 4.0, UNITS_FINE));
	}
	if (d->capacity > 0) {
		y = 10 + ph - ph * (double)d->capacity / ymax;
		fprintf(out, "<line class=\"capacity\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" "
			"stroke-dasharray=\"4 3\"/>\n", CHART_LEFT, CHART_W - 10, y, y);
	}
	fprintf(out, "<polyline class=\"in-use\" fill=\"none\" stroke=\"#2a6fdb\" stroke-width=\"1.5\" points=\"");
	y = 10 + ph;
	fprintf(out, "%d,%.1f", CHART_LEFT, y);
	for (size_t i = 0; i < d->npoints; i += stride) {
		const struct memory_point *p = &d->points[i];
		size_t last = i + stride - 1 < d->npoints ? i + stride - 1 : d->npoints - 1;
		int64_t top = p->bytes;

		for (size_t j = i; j <= last; j++)	/* a group draws its highest value: peaks stay visible */
			if (d->points[j].bytes > top)
				top = d->points[j].bytes;
		x = CHART_LEFT + pw * (double)(p->at - t0) / (double)(t1 - t0);
		fprintf(out, " %.1f,%.1f", x, y);
		y = 10 + ph - ph * (double)top / ymax;
		fprintf(out, " %.1f,%.1f", x, y);
	}
	fprintf(out, " %d,%.1f\"/>\n", CHART_W - 10, y);
	fprintf(out,
		"<text x=\"%d\" y=\"%d\" font-size=\"11\">+0</text><text x=\"%d\" y=\"%d\" "
		"font-size=\"11\" "
		"text-anchor=\"end\">+%s</text>\n</svg>",
		CHART_LEFT, CHART_H - 6, CHART_W - 10, CHART_H - 6,
		units_duration(a, sizeof(a), t1 - t0, UNITS_FINE));
	fprintf(out, "<figcaption class=\"small muted\">device %" PRId64 ": memory in use (blue) against capacity (dashed "
		"red), from the allocation records</figcaption></figure>\n", d->device);
}

/* The text writers' output, escaped for HTML: one device's peak (steady 0) or steady-state line. */
static void html_line(FILE *out, const struct report_header *hdr, const struct memory_device *d, int steady)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *s = open_memstream(&buf, &len);

	if (!s)
		return;
	if (steady)
		steady_text(s, d);
	else
		peak_text(s, hdr, d);
	if (fclose(s) == 0)
		html_text(out, buf);
	free(buf);
}

void report_memory_html(FILE *out, const struct report_header *hdr)
{
	const struct memory_summary *m = hdr->memory;
	char a[32];

	if (!has_memory(hdr))
		return;
	fputs("<section id=\"memory\">\n<h2>GPU memory</h2>\n", out);
	for (size_t i = 0; i < m->ndevices; i++) {
		const struct memory_device *d = &m->devices[i];

		fprintf(out, "<p>device %" PRId64 ": peak ", d->device);
		html_line(out, hdr, d, 0);
		fprintf(out,
			"; %" PRId64 " allocation%s, %" PRId64 " release%s, %s in use at the end",
			d->allocs, plural(d->allocs), d->releases, plural(d->releases),
			units_bytes(a, sizeof(a), (double)d->end_bytes, UNITS_FINE));
		if (d->steady_iterations > 0) {
			fputs("; steady: ", out);
			html_line(out, hdr, d, 1);
		}
		fputs("</p>\n", out);
		if (d->npoints)
			chart_html(out, hdr, d);
	}
	fputs("</section>\n", out);
}
