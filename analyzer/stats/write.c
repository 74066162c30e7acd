/*
 * gpt-trace stats' output (stats_write, stats.h): the tables stats.c computed as text (columns
 * aligned as nsys stats prints them), Markdown tables, or JSON (schema gpt-trace-stats/1,
 * docs/report-json.md).
 */
#include "analyzer/stats/stats.h"
#include "analyzer/stats/efficiency.h"
#include "analyzer/analysis/owner.h"
#include "common/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define KEY_NULL STATS_KEY_NULL

/*
 * A table of preformatted cells for text and Markdown: numbers right-aligned, the last column (a
 * name, often long) left-aligned and unpadded, as nsys stats prints them.
 */
struct cells {
	size_t ncols, nrows;
	char **cell;		/* row-major; row 0 is the header */
};

static void cells_add(struct cells *c, size_t col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cells_add(struct cells *c, size_t col, const char *fmt, ...)
{
	va_list ap;
	char buf[256];

	if (col == 0) {
		c->cell = xrealloc(c->cell, (c->nrows + 1) * c->ncols * sizeof(*c->cell));
		c->nrows++;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->cell[(c->nrows - 1) * c->ncols + col] = xstrdup(buf);
}

/* The last column is added whole (names can be longer than the buffer of cells_add). */
static void cells_add_label(struct cells *c, const char *label)
{
	c->cell[(c->nrows - 1) * c->ncols + c->ncols - 1] = xstrdup(label ? label : "");
}

static void cells_print(FILE *out, enum output_format format, const char *title, struct cells *c)
{
	size_t *width = xcalloc(c->ncols, sizeof(*width));

	for (size_t r = 0; r < c->nrows; r++)
		for (size_t k = 0; k < c->ncols; k++) {
			size_t n = strlen(c->cell[r * c->ncols + k]);

			if (n > width[k])
				width[k] = n;
		}
	if (c->nrows == 1) {
		/* a header alone says nothing; say "none" instead */
		fprintf(out, format == OUTPUT_FORMAT_MARKDOWN ? "### %s\n\nNone.\n\n" : "%s\n  (none)\n\n", title);
	} else if (format == OUTPUT_FORMAT_MARKDOWN) {
		fprintf(out, "### %s\n\n", title);
		for (size_t r = 0; r < c->nrows; r++) {
			for (size_t k = 0; k < c->ncols; k++) {
				fprintf(out, "| ");
				output_md_cell(out, c->cell[r * c->ncols + k]);
				fprintf(out, " ");
			}
			fprintf(out, "|\n");
			if (r == 0) {
				for (size_t k = 0; k < c->ncols; k++)
					fprintf(out, "|%s", k + 1 < c->ncols ? " ---: " : " :--- ");
				fprintf(out, "|\n");
			}
		}
		fprintf(out, "\n");
	} else {
		fprintf(out, "%s\n", title);
		for (size_t r = 0; r < c->nrows; r++) {
			for (size_t k = 0; k + 1 < c->ncols; k++)
				fprintf(out, "%*s  ", (int)width[k], c->cell[r * c->ncols + k]);
			fprintf(out, "%s\n", c->cell[r * c->ncols + c->ncols - 1]);
		}
		fprintf(out, "\n");
	}
	for (size_t i = 0; i < c->nrows * c->ncols; i++)
		free(c->cell[i]);
	free(c->cell);
	free(width);
	c->cell = NULL;
	c->nrows = 0;
}

/* ns as microseconds with three decimals: exact for whole nanoseconds */
#define US(ns) ((double)(ns) / 1000.0)

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

static void write_summary_cells(struct cells *c, size_t col, const struct stats_summary *s)
{
	cells_add(c, col, "%.3f", US(s->total));
	cells_add(c, col + 1, "%" PRId64, s->count);
	cells_add(c, col + 2, "%.3f", US(stats_mean(s)));
	cells_add(c, col + 3, "%.3f", US(s->median));
	cells_add(c, col + 4, "%.3f", US(s->min));
	cells_add(c, col + 5, "%.3f", US(s->max));
	cells_add(c, col + 6, "%.3f", US(stats_stddev(s)));
}

/* What was read: the traces, the scope and the span. */
static void text_header(FILE *out, const struct stats *st, struct trace *trace, const char *scope,
			enum output_format format)
{
	int64_t span = st->end - st->start;
	char buf[64];

	for (size_t t = 0; t < trace_count(trace); t++)
		fprintf(out, format == OUTPUT_FORMAT_MARKDOWN ? "- trace `%s` (%s)\n" : "trace: %s (%s)\n",
			trace_path(trace, t), trace_format(trace, t) == TRACE_FORMAT_GPT ? "gpt-trace" : "nsys");
	if (scope)
		fprintf(out, format == OUTPUT_FORMAT_MARKDOWN ? "- scope: %s\n" : "scope: %s\n", scope);
	fprintf(out,
		format == OUTPUT_FORMAT_MARKDOWN ? "- span: %s (%" PRId64 " to %" PRId64 " ns)\n\n"
						 : "span: %s (%" PRId64 " to %" PRId64 " ns)\n\n",
		units_duration(buf, sizeof(buf), span, UNITS_FINE), st->start, st->end);
}

static void text_kernels(FILE *out, const struct stats *st, enum output_format format)
{
	struct cells c = { 0 };

	c.ncols = 10;
	cells_add(&c, 0, "Time %%");
	cells_add(&c, 1, "Total (us)");
	cells_add(&c, 2, "Count");
	cells_add(&c, 3, "Avg (us)");
	cells_add(&c, 4, "Med (us)");
	cells_add(&c, 5, "Min (us)");
	cells_add(&c, 6, "Max (us)");
	cells_add(&c, 7, "StdDev (us)");
	cells_add(&c, 8, "Owner");
	cells_add_label(&c, "Kernel");
	for (size_t i = 0; i < st->kernels.count; i++) {
		const struct stats_row *r = &st->kernels.rows[i];

		cells_add(&c, 0, "%.1f", 100.0 * share(r->sum.total, st->kernel_ns));
		write_summary_cells(&c, 1, &r->sum);
		cells_add(&c, 8, "%s", kernel_owner_id(kernel_owner(r->label)));
		cells_add_label(&c, r->label);
	}
	cells_print(out, format, "GPU kernels by name", &c);
}

static void text_memops(FILE *out, const struct stats *st, enum output_format format)
{
	struct cells c = { 0 };

	c.ncols = 10;
	cells_add(&c, 0, "Count");
	cells_add(&c, 1, "Total (us)");
	cells_add(&c, 2, "Avg (us)");
	cells_add(&c, 3, "Med (us)");
	cells_add(&c, 4, "Min (us)");
	cells_add(&c, 5, "Max (us)");
	cells_add(&c, 6, "Bytes");
	cells_add(&c, 7, "Avg bytes");
	cells_add(&c, 8, "GB/s");
	cells_add_label(&c, "Operation");
	for (size_t i = 0; i < st->memops.count; i++) {
		const struct stats_row *r = &st->memops.rows[i];

		cells_add(&c, 0, "%" PRId64, r->sum.count);
		cells_add(&c, 1, "%.3f", US(r->sum.total));
		cells_add(&c, 2, "%.3f", US(stats_mean(&r->sum)));
		cells_add(&c, 3, "%.3f", US(r->sum.median));
		cells_add(&c, 4, "%.3f", US(r->sum.min));
		cells_add(&c, 5, "%.3f", US(r->sum.max));
		cells_add(&c, 6, "%" PRId64, r->sum.bytes);
		cells_add(&c, 7, "%.0f", r->sum.count ? (double)r->sum.bytes / (double)r->sum.count : 0.0);
		/* bytes per ns is GB/s */
		cells_add(&c, 8, "%.3f", r->sum.total ? (double)r->sum.bytes / (double)r->sum.total : 0.0);
		cells_add_label(&c, r->label);
	}
	cells_print(out, format, "Memory operations by kind", &c);
}

static void text_api(FILE *out, const struct stats *st, enum output_format format)
{
	struct cells c = { 0 };
	int64_t api_total = 0;

	for (size_t i = 0; i < st->api.count; i++)
		api_total += st->api.rows[i].sum.total;
	c.ncols = 9;
	cells_add(&c, 0, "Time %%");
	cells_add(&c, 1, "Total (us)");
	cells_add(&c, 2, "Count");
	cells_add(&c, 3, "Avg (us)");
	cells_add(&c, 4, "Med (us)");
	cells_add(&c, 5, "Min (us)");
	cells_add(&c, 6, "Max (us)");
	cells_add(&c, 7, "StdDev (us)");
	cells_add_label(&c, "API call");
	for (size_t i = 0; i < st->api.count; i++) {
		const struct stats_row *r = &st->api.rows[i];

		cells_add(&c, 0, "%.1f", 100.0 * share(r->sum.total, api_total));
		write_summary_cells(&c, 1, &r->sum);
		cells_add_label(&c, r->label);
	}
	cells_print(out, format, "CUDA API calls by name", &c);
}

/* Each device's busy time, then its streams'. */
static void text_devices(FILE *out, const struct stats *st, enum output_format format)
{
	struct cells c = { 0 };
	int64_t span = st->end - st->start;

	c.ncols = 4;
	cells_add(&c, 0, "Busy %%");
	cells_add(&c, 1, "Busy (us)");
	cells_add(&c, 2, "Operations");
	cells_add_label(&c, "Device / stream");
	for (size_t i = 0; i < st->devices.count; i++) {
		const struct stats_row *r = &st->devices.rows[i];

		cells_add(&c, 0, "%.1f", 100.0 * share(r->busy_ns, span));
		cells_add(&c, 1, "%.3f", US(r->busy_ns));
		cells_add(&c, 2, "%" PRId64, r->sum.count);
		cells_add_label(&c, r->label);
		for (size_t j = 0; j < st->streams.count; j++) {
			const struct stats_row *s = &st->streams.rows[j];

			if (s->key[0] != r->key[0] || s->key[1] != r->key[1])
				continue;
			cells_add(&c, 0, "%.1f", 100.0 * share(s->busy_ns, span));
			cells_add(&c, 1, "%.3f", US(s->busy_ns));
			cells_add(&c, 2, "%" PRId64, s->sum.count);
			c.cell[(c.nrows - 1) * c.ncols + c.ncols - 1] = xasprintf("  %s", s->label);
		}
	}
	cells_print(out, format, "GPU busy time (share of the span)", &c);
}

static void text_nvtx(FILE *out, const struct stats *st, enum output_format format)
{
	struct cells c = { 0 };

	c.ncols = 6;
	cells_add(&c, 0, "Count");
	cells_add(&c, 1, "Total (us)");
	cells_add(&c, 2, "Avg (us)");
	cells_add(&c, 3, "Kernels");
	cells_add(&c, 4, "Kernel time (us)");
	cells_add_label(&c, "NVTX range");
	for (size_t i = 0; i < st->nvtx.count; i++) {
		const struct stats_row *r = &st->nvtx.rows[i];

		cells_add(&c, 0, "%" PRId64, r->sum.count);
		cells_add(&c, 1, "%.3f", US(r->sum.total));
		cells_add(&c, 2, "%.3f", US(stats_mean(&r->sum)));
		cells_add(&c, 3, "%" PRId64, r->launched);
		cells_add(&c, 4, "%.3f", US(r->launched_ns));
		cells_add_label(&c, r->label);
	}
	cells_print(out, format, "NVTX ranges (kernel time: kernels launched inside, same thread)", &c);

}

/* The tables as text or Markdown, one after another (cells_print empties the cells for the next). */
static void write_text(FILE *out, const struct stats *st, struct trace *trace, const char *scope,
		       enum output_format format)
{
	text_header(out, st, trace, scope, format);
	text_kernels(out, st, format);
	text_memops(out, st, format);
	text_api(out, st, format);
	text_devices(out, st, format);
	text_nvtx(out, st, format);
	if (st->efficiency)
		stats_efficiency_text(out, st->efficiency, format);
}

static void json_summary(FILE *out, const struct stats_summary *s)
{
	fprintf(out, "\"count\": %" PRId64 ", \"total_ns\": %" PRId64 ", \"avg_ns\": %.3f, \"median_ns\": %.1f, "
		"\"min_ns\": %" PRId64 ", \"max_ns\": %" PRId64 ", \"stddev_ns\": %.3f",
		s->count, s->total, stats_mean(s), s->median, s->min, s->max, stats_stddev(s));
}

static void json_key(FILE *out, int64_t k)
{
	if (k == KEY_NULL)
		fprintf(out, "null");
	else
		fprintf(out, "%" PRId64, k);
}

static void write_json(FILE *out, const struct stats *st, struct trace *trace, const char *scope)
{
	int64_t span = st->end - st->start, api_total = 0;

	fprintf(out, "{\n  \"schema\": \"gpt-trace-stats/1\",\n  \"traces\": [");
	for (size_t t = 0; t < trace_count(trace); t++) {
		fprintf(out, "%s{\"path\": ", t ? ", " : "");
		output_json_string(out, trace_path(trace, t));
		fprintf(out, ", \"format\": \"%s\"}", trace_format(trace, t) == TRACE_FORMAT_GPT ? "gpt-trace" : "nsys");
	}
	fprintf(out, "],\n  \"scope\": ");
	output_json_string(out, scope);
	fprintf(out, ",\n  \"span\": {\"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64 ", \"duration_ns\": %" PRId64
		"},\n", st->start, st->end, span);

	fprintf(out, "  \"kernels\": [");
	for (size_t i = 0; i < st->kernels.count; i++) {
		const struct stats_row *r = &st->kernels.rows[i];

		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		output_json_string(out, r->label);
		fprintf(out, ", ");
		json_summary(out, &r->sum);
		fprintf(out, ", \"share\": %.6f, \"owner\": \"%s\"}", share(r->sum.total, st->kernel_ns),
			kernel_owner_id(kernel_owner(r->label)));
	}
	fprintf(out, "%s],\n  \"memory\": [", st->kernels.count ? "\n  " : "");
	for (size_t i = 0; i < st->memops.count; i++) {
		const struct stats_row *r = &st->memops.rows[i];

		fprintf(out, "%s\n    {\"operation\": ", i ? "," : "");
		output_json_string(out, r->label);
		if (r->key[0] == -1) {
			fprintf(out, ", \"copy_kind\": null, \"src_kind\": null, \"dst_kind\": null, \"mem_kind\": ");
			json_key(out, r->key[1]);
		} else {
			fprintf(out, ", \"copy_kind\": ");
			json_key(out, r->key[0]);
			fprintf(out, ", \"src_kind\": ");
			json_key(out, r->key[1]);
			fprintf(out, ", \"dst_kind\": ");
			json_key(out, r->key[2]);
			fprintf(out, ", \"mem_kind\": null");
		}
		fprintf(out, ", \"bytes\": %" PRId64 ", ", r->sum.bytes);
		json_summary(out, &r->sum);
		fprintf(out, ", \"bandwidth_bytes_per_s\": %.1f}",
			r->sum.total ? (double)r->sum.bytes * 1e9 / (double)r->sum.total : 0.0);
	}
	for (size_t i = 0; i < st->api.count; i++)
		api_total += st->api.rows[i].sum.total;
	fprintf(out, "%s],\n  \"api\": [", st->memops.count ? "\n  " : "");
	for (size_t i = 0; i < st->api.count; i++) {
		const struct stats_row *r = &st->api.rows[i];

		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		output_json_string(out, r->label);
		fprintf(out, ", ");
		json_summary(out, &r->sum);
		fprintf(out, ", \"share\": %.6f}", share(r->sum.total, api_total));
	}
	fprintf(out, "%s],\n  \"devices\": [", st->api.count ? "\n  " : "");
	for (size_t i = 0; i < st->devices.count; i++) {
		const struct stats_row *r = &st->devices.rows[i];

		fprintf(out, "%s\n    {\"trace\": %" PRId64 ", \"device\": ", i ? "," : "", r->key[0]);
		json_key(out, r->key[1]);
		fprintf(out, ", \"label\": ");
		output_json_string(out, r->label);
		fprintf(out, ", \"operations\": %" PRId64 ", \"busy_ns\": %" PRId64 ", \"busy_share\": %.6f}",
			r->sum.count, r->busy_ns, share(r->busy_ns, span));
	}
	fprintf(out, "%s],\n  \"streams\": [", st->devices.count ? "\n  " : "");
	for (size_t i = 0; i < st->streams.count; i++) {
		const struct stats_row *r = &st->streams.rows[i];

		fprintf(out, "%s\n    {\"trace\": %" PRId64 ", \"device\": ", i ? "," : "", r->key[0]);
		json_key(out, r->key[1]);
		fprintf(out, ", \"stream\": ");
		json_key(out, r->key[2]);
		fprintf(out, ", \"operations\": %" PRId64 ", \"busy_ns\": %" PRId64 ", \"busy_share\": %.6f}",
			r->sum.count, r->busy_ns, share(r->busy_ns, span));
	}
	fprintf(out, "%s],\n  \"nvtx\": [", st->streams.count ? "\n  " : "");
	for (size_t i = 0; i < st->nvtx.count; i++) {
		const struct stats_row *r = &st->nvtx.rows[i];

		fprintf(out, "%s\n    {\"text\": ", i ? "," : "");
		output_json_string(out, r->label);
		fprintf(out, ", \"count\": %" PRId64 ", \"total_ns\": %" PRId64 ", \"avg_ns\": %.3f, "
			"\"kernels\": %" PRId64 ", \"kernel_ns\": %" PRId64 "}",
			r->sum.count, r->sum.total, stats_mean(&r->sum), r->launched, r->launched_ns);
	}
	fprintf(out, "%s]", st->nvtx.count ? "\n  " : "");
	if (st->efficiency)
		stats_efficiency_json(out, st->efficiency);
	fprintf(out, "\n}\n");
}

void stats_write(FILE *out, const struct stats *stats, struct trace *trace, const char *scope,
		 enum output_format format)
{
	if (format == OUTPUT_FORMAT_JSON)
		write_json(out, stats, trace, scope);
	else
		write_text(out, stats, trace, scope, format);
}
