/*
 * inject_say() (inject.h): the library's one way to speak, a line on stderr, below every module
 * that has something to say.
 */
#include "inject/inject.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GPT_PREFIX "gpt-trace: "

void inject_say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	memcpy(line, GPT_PREFIX, sizeof(GPT_PREFIX) - 1);
	va_start(ap, fmt);
	n = vsnprintf(line + sizeof(GPT_PREFIX) - 1, sizeof(line) - sizeof(GPT_PREFIX), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n += sizeof(GPT_PREFIX) - 1;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write, so that lines of several processes do not interleave. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
