/*
 * The output helpers every command family shares (see format.h): format names, JSON strings,
 * Markdown table cells and durations in words.
 */
#include "analyzer/output/format.h"

#include <inttypes.h>
#include <string.h>

int output_format_parse(const char *name, enum output_format *out)
{
	if (!strcmp(name, "text"))
		*out = OUTPUT_FORMAT_TEXT;
	else if (!strcmp(name, "markdown") || !strcmp(name, "md"))
		*out = OUTPUT_FORMAT_MARKDOWN;
	else if (!strcmp(name, "json"))
		*out = OUTPUT_FORMAT_JSON;
	else
		return -1;
	return 0;
}

void output_json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

void output_md_cell(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

const char *output_offset(int64_t ns, char *buf, size_t len)
{
	char d[40];

	snprintf(buf, len, "%s%s", ns < 0 ? "-" : "+",
		 units_duration(d, sizeof(d), ns < 0 ? -ns : ns, UNITS_FINE));
	return buf;
}
