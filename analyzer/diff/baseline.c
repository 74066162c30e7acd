/*
 * Baseline files (see baseline.h): writing them by hand-formatted JSON, so that the key order and
 * line layout stay fixed, and reading them through SQLite's JSON functions, which the analyzer
 * links already and which validate the text more thoroughly than a parser of our own would.
 */
#include "analyzer/diff/baseline.h"
#include "analyzer/output/format.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* Summaries are rounded to 0.1 ns: finer digits are noise and make review diffs longer. */
static double tenth(double v)
{
	return round(v * 10) / 10;
}

static void write_summary_field(FILE *out, const char *key, double v)
{
	fprintf(out, ", \"%s\": ", key);
	diff_json_number(out, tenth(v));
}

int baseline_write(const struct kernel_set *set, size_t max_points, FILE *out)
{
	double *points = xmalloc((max_points ? max_points : 1) * sizeof(*points));

	fprintf(out, "{\n  \"gpt_trace_baseline\": %d,\n  \"source\": ", BASELINE_FORMAT_VERSION);
	output_json_string(out, set->source);
	fputs(",\n  \"nvtx\": ", out);
	if (set->nvtx)
		output_json_string(out, set->nvtx);
	else
		fputs("null", out);
	fprintf(out, ",\n  \"skip_first\": %zu,\n  \"points\": %zu,\n", set->skip_first,
		max_points);
	fputs("  \"totals\": ", out);
	diff_json_totals(out, &set->totals);
	fputs(",\n", out);
	fputs("  \"kernels\": [", out);
	for (size_t i = 0; i < set->count; i++) {
		const struct kernel_timing *k = &set->kernels[i];
		const struct duration_summary *s = &k->summary;
		size_t npoints = duration_points(k->sample, k->nsample, points, max_points);

		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		output_json_string(out, k->name);
		fprintf(out,
			", \"grid\": [%" PRId64 ", %" PRId64 ", %" PRId64 "], \"block\": [%" PRId64
			", %" PRId64 ", %" PRId64 "],\n     \"count\": %zu",
			k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
			s->count);
		write_summary_field(out, "median", s->median);
		write_summary_field(out, "p5", s->p5);
		write_summary_field(out, "p25", s->p25);
		write_summary_field(out, "p75", s->p75);
		write_summary_field(out, "p95", s->p95);
		write_summary_field(out, "min", s->min);
		write_summary_field(out, "max", s->max);
		write_summary_field(out, "mean", s->mean);
		write_summary_field(out, "stddev", s->stddev);
		write_summary_field(out, "mad", s->mad);
		write_summary_field(out, "total", s->total);
		fputs(",\n     \"points\": [", out);
		for (size_t p = 0; p < npoints; p++) {
			if (p)
				fputs(", ", out);
			diff_json_number(out, tenth(points[p]));
		}
		fputs("]}", out);
	}
	fputs(set->count ? "\n  ]\n}\n" : "]\n}\n", out);
	free(points);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

int baseline_sniff(const char *path)
{
	FILE *f = fopen(path, "rb");
	int c;

	if (!f)
		return -errno;
	do
		c = fgetc(f);
	while (c != EOF && isspace(c));
	fclose(f);
	return c == '{';
}

/* The whole file as a NUL-terminated string. */
static char *read_file(const char *path, char *err, size_t errlen, int *ret)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 65536, n;
	char *text;

	if (!f) {
		*ret = -errno;
		snprintf(err, errlen, "cannot open baseline '%s': %s", path, strerror(errno));
		return NULL;
	}
	text = xmalloc(cap);
	while ((n = fread(text + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap)
			text = xrealloc(text, cap *= 2);
	}
	if (ferror(f)) {
		*ret = -EIO;
		snprintf(err, errlen, "cannot read baseline '%s': %s", path, strerror(errno));
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	text[len] = '\0';
	if (strlen(text) != len) {
		*ret = -EINVAL;
		snprintf(err, errlen, "cannot read baseline '%s': not a text file", path);
		free(text);
		return NULL;
	}
	return text;
}

/* A JSON value of the document through json_extract: its SQLite type, and the statement to read. */
static int extract(sqlite3 *db, const char *text, const char *json_path, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, "SELECT json_extract(?1, ?2), json_type(?1, ?2)", -1, st,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(*st, 1, text, -1, SQLITE_STATIC);
	sqlite3_bind_text(*st, 2, json_path, -1, SQLITE_STATIC);
	if (sqlite3_step(*st) != SQLITE_ROW) {
		sqlite3_finalize(*st);
		*st = NULL;
		return -EIO;
	}
	return 0;
}

/* A number at json_path: 0 if present and numeric, 1 if absent, -EINVAL if of another type. */
static int extract_number(sqlite3 *db, const char *text, const char *json_path, double *out)
{
	sqlite3_stmt *st;
	const char *type;
	int ret;

	if (extract(db, text, json_path, &st) < 0)
		return -EIO;
	type = (const char *)sqlite3_column_text(st, 1);
	if (!type) {
		ret = 1;
	} else if (!strcmp(type, "integer") || !strcmp(type, "real")) {
		*out = sqlite3_column_double(st, 0);
		ret = isfinite(*out) ? 0 : -EINVAL;
	} else {
		ret = -EINVAL;
	}
	sqlite3_finalize(st);
	return ret;
}

/* A text value at json_path (NULL if absent or null; -EINVAL if of another type), malloc'ed. */
static int extract_text(sqlite3 *db, const char *text, const char *json_path, char **out)
{
	sqlite3_stmt *st;
	const char *type;
	int ret = 0;

	*out = NULL;
	if (extract(db, text, json_path, &st) < 0)
		return -EIO;
	type = (const char *)sqlite3_column_text(st, 1);
	if (type && !strcmp(type, "text"))
		*out = xstrdup((const char *)sqlite3_column_text(st, 0));
	else if (type && strcmp(type, "null"))
		ret = -EINVAL;
	sqlite3_finalize(st);
	return ret;
}

static int count_value(double v, size_t *out)
{
	if (v < 0 || v != floor(v) || v > 1e15)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

struct reader {
	sqlite3 *db;
	const char *path;
	const char *text;
	char *err;
	size_t errlen;
};

static int bad(struct reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct reader *rd, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(rd->err, rd->errlen, "bad baseline '%s': %s", rd->path, why);
	return -EINVAL;
}

static int read_header(struct reader *rd, struct kernel_set *set)
{
	static const struct {
		const char *key;
		size_t offset;
	} totals[] = {
		{ "kernel_ns", offsetof(struct gpu_totals, kernel_ns) },
		{ "copy_ns", offsetof(struct gpu_totals, copy_ns) },
		{ "memset_ns", offsetof(struct gpu_totals, set_ns) },
		{ "span_ns", offsetof(struct gpu_totals, span_ns) },
		{ "idle_ns", offsetof(struct gpu_totals, idle_ns) },
	};
	double v;
	char path[64], *s;
	int ret;

	ret = extract_number(rd->db, rd->text, "$.gpt_trace_baseline", &v);
	if (ret)
		return bad(rd, "not a gpt-trace baseline (no numeric \"gpt_trace_baseline\" key)");
	if (v != BASELINE_FORMAT_VERSION)
		return bad(rd, "format version %g is not supported (this gpt-trace reads %d)", v,
			   BASELINE_FORMAT_VERSION);
	if (extract_text(rd->db, rd->text, "$.nvtx", &set->nvtx) < 0)
		return bad(rd, "\"nvtx\" must be a string or null");
	ret = extract_number(rd->db, rd->text, "$.skip_first", &v);
	if (ret < 0 || (!ret && count_value(v, &set->skip_first) < 0))
		return bad(rd, "\"skip_first\" must be a count");
	/* Reports name the baseline file, not the trace it was saved from. */
	if (extract_text(rd->db, rd->text, "$.source", &s) < 0)
		return bad(rd, "\"source\" must be a string");
	free(s);
	for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
		snprintf(path, sizeof(path), "$.totals.%s", totals[i].key);
		ret = extract_number(rd->db, rd->text, path, &v);
		if (ret < 0)
			return bad(rd, "totals: \"%s\" must be a number", totals[i].key);
		if (!ret)
			*(double *)((char *)&set->totals + totals[i].offset) = v;
	}
	if (!extract_number(rd->db, rd->text, "$.totals.launches", &v))
		count_value(v, &set->totals.kernels);
	if (!extract_number(rd->db, rd->text, "$.totals.copies", &v))
		count_value(v, &set->totals.copies);
	if (!extract_number(rd->db, rd->text, "$.totals.memsets", &v))
		count_value(v, &set->totals.sets);
	return 0;
}

static int compare_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* The "points" array of kernel i: numbers >= 0, returned sorted. */
static int read_points(struct reader *rd, size_t i, double **out, size_t *n)
{
	sqlite3_stmt *st;
	char path[64];
	size_t count = 0, cap = 64;
	double *points;
	int rc, ret = 0;

	snprintf(path, sizeof(path), "$.kernels[%zu].points", i);
	if (sqlite3_prepare_v2(rd->db,
			       "SELECT value, type FROM json_each(?1, ?2) ORDER BY CAST(key AS INTEGER)",
			       -1, &st, NULL) != SQLITE_OK)
		return bad(rd, "cannot query: %s", sqlite3_errmsg(rd->db));
	sqlite3_bind_text(st, 1, rd->text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	points = xmalloc(cap * sizeof(*points));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 1);
		double v = sqlite3_column_double(st, 0);

		if (!type || (strcmp(type, "integer") && strcmp(type, "real")) || !(v >= 0) ||
		    !isfinite(v)) {
			ret = -EINVAL;
			break;
		}
		if (count == cap)
			points = xrealloc(points, (cap *= 2) * sizeof(*points));
		points[count++] = v;
	}
	sqlite3_finalize(st);
	if (ret < 0 || (rc != SQLITE_DONE && rc != SQLITE_ROW) || !count) {
		free(points);
		return -EINVAL;
	}
	qsort(points, count, sizeof(*points), compare_double);
	*out = points;
	*n = count;
	return 0;
}

static int read_kernel(struct reader *rd, struct kernel_set *set, size_t i)
{
	static const struct {
		const char *key;
		size_t offset;
	} fields[] = {
		{ "median", offsetof(struct duration_summary, median) },
		{ "p5", offsetof(struct duration_summary, p5) },
		{ "p25", offsetof(struct duration_summary, p25) },
		{ "p75", offsetof(struct duration_summary, p75) },
		{ "p95", offsetof(struct duration_summary, p95) },
		{ "min", offsetof(struct duration_summary, min) },
		{ "max", offsetof(struct duration_summary, max) },
		{ "mean", offsetof(struct duration_summary, mean) },
		{ "stddev", offsetof(struct duration_summary, stddev) },
		{ "mad", offsetof(struct duration_summary, mad) },
		{ "total", offsetof(struct duration_summary, total) },
	};
	char path[96], *name;
	int64_t grid[3], block[3];
	double v, *points = NULL;
	size_t npoints = 0, count;
	struct kernel_timing *k;
	int ret;

	snprintf(path, sizeof(path), "$.kernels[%zu].name", i);
	if (extract_text(rd->db, rd->text, path, &name) < 0 || !name || !*name) {
		free(name);
		return bad(rd, "kernel %zu: \"name\" must be a non-empty string", i + 1);
	}
	for (int d = 0; d < 6; d++) {
		snprintf(path, sizeof(path), "$.kernels[%zu].%s[%d]", i, d < 3 ? "grid" : "block",
			 d % 3);
		if (extract_number(rd->db, rd->text, path, &v) || v != floor(v) || v < 0) {
			ret = bad(rd, "kernel %zu ('%s'): \"%s\" must be three counts", i + 1, name,
				  d < 3 ? "grid" : "block");
			free(name);
			return ret;
		}
		(d < 3 ? grid : block)[d % 3] = (int64_t)v;
	}
	snprintf(path, sizeof(path), "$.kernels[%zu].count", i);
	if (extract_number(rd->db, rd->text, path, &v) || count_value(v, &count) < 0 || !count) {
		ret = bad(rd, "kernel %zu ('%s'): \"count\" must be a launch count >= 1", i + 1,
			  name);
		free(name);
		return ret;
	}
	if (read_points(rd, i, &points, &npoints) < 0) {
		ret = bad(rd, "kernel %zu ('%s'): \"points\" must be a non-empty array of durations "
			      "in ns",
			  i + 1, name);
		free(name);
		return ret;
	}
	if (npoints > count) {
		ret = bad(rd, "kernel %zu ('%s'): %zu points but only %zu launches", i + 1, name,
			  npoints, count);
		free(name);
		free(points);
		return ret;
	}
	/* Summaries default to those of the points; the stored ones (of every launch) win. */
	k = kernel_set_add(set, name, grid, block, points, npoints);
	k->summary.count = count;
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		snprintf(path, sizeof(path), "$.kernels[%zu].%s", i, fields[f].key);
		ret = extract_number(rd->db, rd->text, path, &v);
		if (ret < 0)
			return bad(rd, "kernel %zu ('%s'): \"%s\" must be a number", i + 1, k->name,
				   fields[f].key);
		if (!ret)
			*(double *)((char *)&k->summary + fields[f].offset) = v;
	}
	return 0;
}

int baseline_read(const char *path, struct kernel_set **out, char *err, size_t errlen)
{
	struct reader rd = { .path = path, .err = err, .errlen = errlen };
	struct kernel_set *set = NULL;
	sqlite3_stmt *st = NULL;
	char *text;
	int64_t nkernels = 0;
	int ret = 0;

	*out = NULL;
	text = read_file(path, err, errlen, &ret);
	if (!text)
		return ret;
	rd.text = text;
	if (sqlite3_open_v2(":memory:", &rd.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read baseline '%s': %s", path,
			 rd.db ? sqlite3_errmsg(rd.db) : "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	if (sqlite3_prepare_v2(rd.db,
			       "SELECT json_valid(?1), json_type(?1), json_array_length(?1, '$.kernels')",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read baseline '%s': %s", path, sqlite3_errmsg(rd.db));
		ret = -EIO;
		goto out;
	}
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW || !sqlite3_column_int(st, 0)) {
		ret = bad(&rd, "not valid JSON");
		goto out;
	}
	if (strcmp((const char *)sqlite3_column_text(st, 1), "object")) {
		ret = bad(&rd, "not a gpt-trace baseline (not a JSON object)");
		goto out;
	}
	set = kernel_set_new(path);
	set->from_baseline = 1;
	ret = read_header(&rd, set);
	if (ret < 0)
		goto out;
	if (sqlite3_column_type(st, 2) == SQLITE_NULL) {
		ret = bad(&rd, "no \"kernels\" array");
		goto out;
	}
	nkernels = sqlite3_column_int64(st, 2);
	for (int64_t i = 0; i < nkernels; i++) {
		ret = read_kernel(&rd, set, (size_t)i);
		if (ret < 0)
			goto out;
	}
	kernel_set_sort(set);
	for (size_t i = 1; i < set->count; i++) {
		const struct kernel_timing *a = &set->kernels[i - 1], *b = &set->kernels[i];

		if (!strcmp(a->name, b->name) && !memcmp(a->grid, b->grid, sizeof(a->grid)) &&
		    !memcmp(a->block, b->block, sizeof(a->block))) {
			ret = bad(&rd, "kernel '%s' is listed twice with the same launch configuration",
				  a->name);
			goto out;
		}
	}
	*out = set;
	set = NULL;
out:
	sqlite3_finalize(st);
	sqlite3_close(rd.db);
	kernel_set_free(set);
	free(text);
	return ret;
}
