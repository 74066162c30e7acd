/*
 * Output helpers shared by the command families (stats/, report/, diff/), one layer below them so
 * that none borrows from another: the output formats' names, JSON string literals, Markdown table
 * cells, and times from the origin (durations themselves: common/units.h, at UNITS_FINE).
 */
#ifndef GPT_OUTPUT_FORMAT_H
#define GPT_OUTPUT_FORMAT_H

#include "common/units.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum output_format {
	OUTPUT_FORMAT_TEXT,
	OUTPUT_FORMAT_MARKDOWN,
	OUTPUT_FORMAT_JSON,
	OUTPUT_FORMAT_HTML,
};

/* "text", "markdown" (or "md"), "json"; returns -1 for anything else. Only report takes "html". */
int output_format_parse(const char *name, enum output_format *out);

/* s as a JSON string literal, quotes included; NULL as null. */
void output_json_string(FILE *out, const char *s);
/* s as one Markdown table cell: '|' escaped, newlines as spaces. */
void output_md_cell(FILE *out, const char *s);
/* A time from the report's origin, signed: "+12.345 ms", "-265.089 us" (an event before the
 * origin: an imported trace's first CPU op before its first CUDA call), "+0 ns". */
const char *output_offset(int64_t ns, char *buf, size_t len);

#endif
