/*
 * The words, numbers and colours every part of the HTML page uses (html.h's shared renderers):
 * escaped text, short durations, times from the trace's origin, the palette of work and idle causes,
 * and copies in words. Below page.c and overview.c, which both draw with them.
 */
#include "analyzer/report/html/html.h"
#include "common/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void html_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
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
			fputs("&#39;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

const char *html_short(int64_t ns, char *buf, size_t len)
{
	static const struct { int64_t scale; const char *unit; } units[] = {
		{ 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" }, { 1, "ns" },
	};
	int64_t a = ns < 0 ? -ns : ns;
	size_t u = 0;
	char *dot;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && a < units[u].scale)
		u++;
	snprintf(buf, len, "%.3g", (double)ns / (double)units[u].scale);
	/* %.3g may choose an exponent for values >= 1000 of the unit (only "s" has those) */
	if (strchr(buf, 'e'))
		snprintf(buf, len, "%.0f", (double)ns / (double)units[u].scale);
	dot = buf + strlen(buf);
	snprintf(dot, len - (size_t)(dot - buf), " %s", units[u].unit);
	return buf;
}

const char *html_time(int64_t origin, int64_t t, char *buf, size_t len)
{
	return output_offset(t - origin, buf, len);	/* signed: a margin before the origin reads "-2.264 ms" */
}

const char *html_at(const struct report_header *hdr, int64_t t, char *buf, size_t len)
{
	return html_time(hdr->origin, t, buf, len);
}

/* Okabe-Ito: blue, reddish purple, bluish green for work. */
const char *html_work_color(int work)
{
	static const char *const colors[CHART_WORKS] = { "#0072B2", "#CC79A7", "#009E73" };

	return work >= 0 && work < CHART_WORKS ? colors[work] : "#999999";
}

/* Idle kinds in the order of phases.h: sync, cuda-call, nvtx-range, host, launch, queued, unknown,
 * profiler. */
const char *html_idle_color(int kind)
{
	static const char *const colors[PHASE_IDLE_KINDS] = { "#D55E00", "#E69F00", "#F0E442", "#56B4E9",
							      "#8C8C8C", "#BDBDBD", "#E3E3E3", "#9E9AC8" };

	return kind >= 0 && kind < PHASE_IDLE_KINDS ? colors[kind] : "#E3E3E3";
}

const char *html_idle_words(int kind)
{
	static const char *const words[PHASE_IDLE_KINDS] = {
		"blocked in a sync", "in another CUDA call", "host code in an NVTX range",
		"host code outside NVTX ranges", "launch call and latency", "issued early, started late",
		"no API record", "the profiler's own work",
	};

	return kind >= 0 && kind < PHASE_IDLE_KINDS ? words[kind] : "?";
}

static const char *copy_kind_word(int64_t k)
{
	static const char *const names[] = { "unknown copy", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
					     "DtoA", "DtoD", "HtoH", "PtoP", "unified HtoD", "unified DtoH",
					     "unified DtoD" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "copy";
}

static const char *mem_kind_word(int64_t k)
{
	static const char *const names[] = { "pageable", "pinned", "device", "array", "managed",
					     "device static", "managed static", "unknown" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "unknown";
}

const char *html_copy_label(const struct chart_copy *c, char *buf, size_t len)
{
	if (c->copy_kind == -1)
		snprintf(buf, len, "memset (%s)", mem_kind_word(c->src_kind));
	else if (c->src_kind == -1 && c->dst_kind == -1)
		snprintf(buf, len, "%s", copy_kind_word(c->copy_kind));
	else
		snprintf(buf, len, "%s (%s to %s)", copy_kind_word(c->copy_kind), mem_kind_word(c->src_kind),
			 mem_kind_word(c->dst_kind));
	return buf;
}

/* A copy to or from pageable host memory (ENUM_CUDA_MEM_KIND 0). */
int html_copy_pageable(const struct chart_copy *c)
{
	return c->copy_kind != -1 && (c->src_kind == 0 || c->dst_kind == 0);
}

void html_kernel_name(FILE *out, const char *name)
{
	size_t n = strlen(name), head = 40, tail = 44;

	if (n <= head + tail + 3) {
		html_text(out, name);
		return;
	}
	/* cut at byte boundaries that do not split a UTF-8 sequence */
	while (head > 0 && ((unsigned char)name[head] & 0xC0) == 0x80)
		head--;
	while (tail > 0 && ((unsigned char)name[n - tail] & 0xC0) == 0x80)
		tail--;
	{
		char *h = xmalloc(head + 1);

		memcpy(h, name, head);
		h[head] = 0;
		html_text(out, h);
		free(h);
	}
	fputs("&#8230;", out);
	html_text(out, name + n - tail);
}
