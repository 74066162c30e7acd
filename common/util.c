/*
 * Messages and allocation helpers (see util.h).
 */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	/* One fprintf call per message so that lines from several processes do not interleave. */
	char line[1024];
	int n = vsnprintf(line, sizeof(line), fmt, ap);

	if (n < 0)
		return;
	fprintf(stderr, GPT_PREFIX "%s%s\n", kind, line);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	exit(GPT_EXIT_USAGE);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		die("out of memory allocating %zu bytes", size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu bytes", size);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory copying a string");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = xmalloc((size_t)(n < 0 ? 0 : n) + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	va_end(ap);
	return s;
}
