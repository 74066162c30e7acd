/*
 * What metrics.c and metrics-cupti.c both use of a metrics session, below both: its problem lines
 * (each distinct one once) and debug lines, a kernel's source lines, and the cubins kept for them,
 * found by CRC.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "inject/metrics-internal.h"

#define REPORTED_MAX 16

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static void report_stderr(const char *line)
{
	char buf[1024];
	int len = snprintf(buf, sizeof(buf), "gpt-trace: %s\n", line);

	if (len > (int)sizeof(buf) - 1) {
		len = (int)sizeof(buf) - 1;
		buf[len - 1] = '\n';
	}
	/* One write, so that lines of several processes do not interleave. */
	if (write(STDERR_FILENO, buf, (size_t)len) < 0)
		return;
}

/* Each distinct line once: eight GPUs without permission make one line, not eight. */
void metrics_report(struct metrics_session *s, const char *fmt, ...)
{
	static char *reported[REPORTED_MAX];
	static int nr_reported;
	char line[1024];
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&report_lock);
	for (i = 0; i < nr_reported; i++) {
		if (!strcmp(reported[i], line)) {
			pthread_mutex_unlock(&report_lock);
			return;
		}
	}
	if (nr_reported < REPORTED_MAX)
		reported[nr_reported++] = strdup(line);
	if (s && !s->first_problem)
		s->first_problem = strdup(line);
	pthread_mutex_unlock(&report_lock);

	if (s && s->report)
		s->report(line);
	else
		report_stderr(line);
}

void metrics_debug(struct metrics_session *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!s || !s->debug)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "gpt-trace: metrics debug: %s\n", line);
}

struct metrics_line *metrics_kernel_line(struct metrics_kernel *k, const char *file, uint32_t line)
{
	struct metrics_line *l;
	size_t i;

	for (i = 0; i < k->nr_lines; i++) {
		l = &k->lines[i];
		if (l->line == line &&
		    ((!l->file && !file) || (l->file && file && !strcmp(l->file, file))))
			return l;
	}
	if (k->nr_lines == k->alloc_lines) {
		size_t alloc = k->alloc_lines ? 2 * k->alloc_lines : 8;
		struct metrics_line *lines = realloc(k->lines, alloc * sizeof(*lines));

		if (!lines)
			return NULL;
		k->lines = lines;
		k->alloc_lines = alloc;
	}
	l = &k->lines[k->nr_lines];
	memset(l, 0, sizeof(*l));
	if (file && !(l->file = strdup(file)))
		return NULL;
	l->line = line;
	k->nr_lines++;
	return l;
}

/* SASS records carry a 32-bit CRC; cuptiGetCubinCrc gives 64 bits. */
struct metrics_cubin *metrics_cubin_find(struct metrics_session *s, uint32_t crc)
{
	struct metrics_cubin *c;

	pthread_mutex_lock(&s->cubin_lock);
	for (c = s->cubins; c; c = c->next)
		if ((uint32_t)c->crc == crc || c->crc == crc)
			break;
	pthread_mutex_unlock(&s->cubin_lock);
	return c;
}
