/*
 * The short name of a kernel (see kernel-name.h): shared by the collector, which names CUPTI's
 * kernels, and the importers, which name other profilers' kernels the same way.
 */
#include "common/kernel-name.h"

#include <string.h>

static int is_opener(char c)
{
	return c == '(' || c == '<' || c == '[' || c == '{';
}

static int is_closer(char c)
{
	return c == ')' || c == '>' || c == ']' || c == '}';
}

/* Index of the bracket that opens the one closing at close, or -1. */
static long matching_open(const char *s, long close)
{
	long depth = 0;

	for (long i = close; i >= 0; i--) {
		if (is_closer(s[i]))
			depth++;
		else if (is_opener(s[i]) && --depth == 0)
			return i;
	}
	return -1;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c == '~';
}

const char *name_short(const char *name, size_t *len)
{
	long end = (long)strlen(name);
	long i, start;

	/* Drop trailing qualifiers of the parameter list (" const", " &&"). */
	i = end - 1;
	while (i >= 0 && name[i] != ')' && (name[i] == ' ' || name[i] == '&' ||
					   (name[i] >= 'a' && name[i] <= 'z')))
		i--;
	if (i >= 0 && name[i] == ')') {
		long open = matching_open(name, i);

		if (open > 0)
			end = open;
	}
	while (end > 0 && name[end - 1] == ' ')
		end--;
	/* Template arguments of the function itself. */
	if (end > 0 && name[end - 1] == '>') {
		long open = matching_open(name, end - 1);

		if (open > 0)
			end = open;
	}
	start = end;
	while (start > 0 && is_ident(name[start - 1]))
		start--;
	if (start == end) {
		/* Not an identifier (an operator, a lambda): keep everything after the last scope. */
		start = end;
		while (start > 0 && name[start - 1] != ':' && name[start - 1] != ' ')
			start--;
		if (start == end)
			start = 0;
	}
	*len = (size_t)(end - start);
	return name + start;
}
