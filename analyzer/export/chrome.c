/*
 * Chrome Trace Event JSON writer for the exporter (the format chrome://tracing, Perfetto and
 * speedscope read): "M" metadata names processes and threads and fixes their order, "X" complete
 * events are the slices, "i" instants, "s"/"f" pairs the flows (the "f" binds to the enclosing slice
 * with "bp":"e"), "C" the counters.
 *
 * Timestamps are microseconds in this format and readers hold them as doubles; an absolute CUPTI
 * timestamp (~1.7e18 ns) would lose its nanoseconds there. So every time is rebased to the trace's
 * first event and printed as an exact decimal with three digits after the point, from integers.
 * Strings are escaped for JSON and invalid UTF-8 (NVTX text can hold anything) becomes U+FFFD, so
 * the output always parses.
 */
#include "analyzer/export/timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct chrome_sink {
	struct timeline_sink base;
	struct export_file *file;
	int64_t origin;
	int nevents;
	char *buf;		/* the event being formatted */
	size_t len, cap;
	int oom;
};

static void put(struct chrome_sink *cs, const char *s, size_t n)
{
	if (cs->len + n > cs->cap) {
		size_t cap = cs->cap ? cs->cap : 4096;
		char *buf;

		while (cap < cs->len + n)
			cap *= 2;
		buf = realloc(cs->buf, cap);
		if (!buf) {
			cs->oom = 1;
			return;
		}
		cs->buf = buf;
		cs->cap = cap;
	}
	memcpy(cs->buf + cs->len, s, n);
	cs->len += n;
}

static void puts_raw(struct chrome_sink *cs, const char *s)
{
	put(cs, s, strlen(s));
}

static void putf(struct chrome_sink *cs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct chrome_sink *cs, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(cs, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void put_string(struct chrome_sink *cs, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	put(cs, "\"", 1);
	while (*s) {
		const unsigned char *run = s;
		size_t n;

		/* Copy the longest stretch that needs no escaping in one go. */
		while (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
			s++;
		if (s > run)
			put(cs, (const char *)run, (size_t)(s - run));
		if (!*s)
			break;
		switch (*s) {
		case '"': put(cs, "\\\"", 2); s++; continue;
		case '\\': put(cs, "\\\\", 2); s++; continue;
		case '\n': put(cs, "\\n", 2); s++; continue;
		case '\r': put(cs, "\\r", 2); s++; continue;
		case '\t': put(cs, "\\t", 2); s++; continue;
		case '\b': put(cs, "\\b", 2); s++; continue;
		case '\f': put(cs, "\\f", 2); s++; continue;
		default: break;
		}
		if (*s < 0x20) {
			putf(cs, "\\u%04x", *s);
			s++;
			continue;
		}
		n = export_utf8_len(s);
		if (n) {
			put(cs, (const char *)s, n);
			s += n;
		} else {
			put(cs, "\\ufffd", 6);
			s++;
		}
	}
	put(cs, "\"", 1);
}

/* ns since the origin as microseconds with exactly three decimals: integer arithmetic, no rounding. */
static void put_us(struct chrome_sink *cs, int64_t ns)
{
	uint64_t abs = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	putf(cs, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", abs / 1000, abs % 1000);
}

static void put_double(struct chrome_sink *cs, double v)
{
	if (isfinite(v))
		putf(cs, "%.9g", v);
	else
		puts_raw(cs, "null");
}

static int end_event(struct chrome_sink *cs)
{
	int ret;

	if (cs->oom)
		return -ENOMEM;
	ret = export_file_write(cs->file, cs->buf, cs->len);
	cs->len = 0;
	cs->nevents++;
	return ret;
}

static void start_event(struct chrome_sink *cs, const char *ph)
{
	cs->len = 0;
	puts_raw(cs, cs->nevents ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
	puts_raw(cs, ph);
	puts_raw(cs, "\"");
}

static void put_ids(struct chrome_sink *cs, const struct timeline_track *track)
{
	putf(cs, ",\"pid\":%" PRId32, track->pid);
	if (track->kind != TIMELINE_PROCESS && track->kind != TIMELINE_COUNTER)
		putf(cs, ",\"tid\":%" PRId32, track->tid);
}

static void put_args(struct chrome_sink *cs, const struct timeline_arg *args, size_t nargs)
{
	puts_raw(cs, ",\"args\":{");
	for (size_t i = 0; i < nargs; i++) {
		if (i)
			put(cs, ",", 1);
		put_string(cs, args[i].name);
		put(cs, ":", 1);
		switch (args[i].type) {
		case TIMELINE_ARG_INT:
			putf(cs, "%" PRId64, args[i].i);
			break;
		case TIMELINE_ARG_DOUBLE:
			put_double(cs, args[i].d);
			break;
		case TIMELINE_ARG_STRING:
			put_string(cs, args[i].s);
			break;
		}
	}
	put(cs, "}", 1);
}

static int chrome_begin(struct timeline_sink *sink, int64_t origin)
{
	struct chrome_sink *cs = (struct chrome_sink *)sink;
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gpt-trace "
				   GPT_TRACE_VERSION "\",\"origin_ns\":";
	char num[32];
	int ret;

	cs->origin = origin;
	ret = export_file_write(cs->file, head, sizeof(head) - 1);
	snprintf(num, sizeof(num), "%" PRId64, origin);
	if (!ret)
		ret = export_file_write(cs->file, num, strlen(num));
	if (!ret)
		ret = export_file_write(cs->file, "},\"traceEvents\":[", 17);
	return ret;
}

static int metadata(struct chrome_sink *cs, const struct timeline_track *track, const char *what,
		    const char *name, int32_t sort_index)
{
	int ret;

	start_event(cs, "M");
	putf(cs, ",\"name\":\"%s_name\"", what);
	put_ids(cs, track);
	puts_raw(cs, ",\"args\":{\"name\":");
	put_string(cs, name);
	puts_raw(cs, "}}");
	ret = end_event(cs);
	if (ret < 0)
		return ret;
	start_event(cs, "M");
	putf(cs, ",\"name\":\"%s_sort_index\"", what);
	put_ids(cs, track);
	putf(cs, ",\"args\":{\"sort_index\":%" PRId32 "}}", sort_index);
	return end_event(cs);
}

static int chrome_track(struct timeline_sink *sink, const struct timeline_track *track)
{
	struct chrome_sink *cs = (struct chrome_sink *)sink;

	switch (track->kind) {
	case TIMELINE_PROCESS:
		return metadata(cs, track, "process", track->name, track->sort_index);
	case TIMELINE_THREAD:
	case TIMELINE_LANE:
		return metadata(cs, track, "thread", track->name, track->sort_index);
	case TIMELINE_COUNTER:
		break;	/* a counter is named by its events */
	}
	return 0;
}

static void put_event_head(struct chrome_sink *cs, const char *ph, const struct timeline_event *ev)
{
	start_event(cs, ph);
	puts_raw(cs, ",\"name\":");
	put_string(cs, ev->name);
	puts_raw(cs, ",\"cat\":");
	put_string(cs, ev->category);
	put_ids(cs, ev->track);
	puts_raw(cs, ",\"ts\":");
	put_us(cs, ev->start - cs->origin);
}

/* Flow ids stay below 2^53 (see timeline.c), so JSON readers hold them exactly. */
static int put_flow(struct chrome_sink *cs, const struct timeline_event *ev, const char *ph, uint64_t id)
{
	start_event(cs, ph);
	putf(cs, ",\"id\":%" PRIu64 ",\"name\":\"launch\",\"cat\":\"cuda.flow\"", id);
	if (ph[0] == 'f')
		puts_raw(cs, ",\"bp\":\"e\"");
	put_ids(cs, ev->track);
	puts_raw(cs, ",\"ts\":");
	put_us(cs, ev->start - cs->origin);
	put(cs, "}", 1);
	return end_event(cs);
}

static int chrome_slice_begin(struct timeline_sink *sink, const struct timeline_event *ev)
{
	struct chrome_sink *cs = (struct chrome_sink *)sink;
	int ret;

	put_event_head(cs, "X", ev);
	puts_raw(cs, ",\"dur\":");
	put_us(cs, ev->end - ev->start);
	put_args(cs, ev->args, ev->nargs);
	put(cs, "}", 1);
	ret = end_event(cs);
	/* After the slice, so that a reader sorting by time finds the slice already open. */
	for (size_t i = 0; !ret && i < ev->nflows_out; i++)
		ret = put_flow(cs, ev, "s", ev->flows_out[i]);
	if (!ret && ev->flow_in)
		ret = put_flow(cs, ev, "f", ev->flow_in);
	return ret;
}

static int chrome_slice_end(struct timeline_sink *sink, const struct timeline_track *track, int64_t ts)
{
	(void)sink;
	(void)track;
	(void)ts;
	return 0;	/* "X" events carry their duration */
}

static int chrome_instant(struct timeline_sink *sink, const struct timeline_event *ev)
{
	struct chrome_sink *cs = (struct chrome_sink *)sink;

	put_event_head(cs, "i", ev);
	puts_raw(cs, ",\"s\":\"t\"");
	put_args(cs, ev->args, ev->nargs);
	put(cs, "}", 1);
	return end_event(cs);
}

static int chrome_counter(struct timeline_sink *sink, const struct timeline_track *track, int64_t ts,
			  double value)
{
	struct chrome_sink *cs = (struct chrome_sink *)sink;

	start_event(cs, "C");
	puts_raw(cs, ",\"name\":");
	put_string(cs, track->name);
	put_ids(cs, track);
	puts_raw(cs, ",\"ts\":");
	put_us(cs, ts - cs->origin);
	puts_raw(cs, ",\"args\":{");
	put_string(cs, track->unit);
	put(cs, ":", 1);
	put_double(cs, value);
	puts_raw(cs, "}}");
	return end_event(cs);
}

static int chrome_finish(struct timeline_sink *sink)
{
	struct chrome_sink *cs = (struct chrome_sink *)sink;

	return export_file_write(cs->file, "\n]}\n", 4);
}

static void chrome_free(struct timeline_sink *sink)
{
	struct chrome_sink *cs = (struct chrome_sink *)sink;

	if (!cs)
		return;
	free(cs->buf);
	free(cs);
}

static const struct timeline_sink_ops chrome_ops = {
	.begin = chrome_begin,
	.track = chrome_track,
	.slice_begin = chrome_slice_begin,
	.slice_end = chrome_slice_end,
	.instant = chrome_instant,
	.counter = chrome_counter,
	.finish = chrome_finish,
	.free = chrome_free,
};

struct timeline_sink *chrome_sink_new(struct export_file *file)
{
	struct chrome_sink *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->base.ops = &chrome_ops;
	cs->file = file;
	return &cs->base;
}
