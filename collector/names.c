/*
 * Kernel name demangling and short names (see names.h).
 */
#include "collector/names.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t cxa_demangle_once = PTHREAD_ONCE_INIT;

static void find_cxa_demangle(void)
{
	void *libstdcxx;

	/* Every C++ CUDA program and Python with PyTorch already has it loaded. */
	cxa_demangle = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (cxa_demangle)
		return;
	libstdcxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (libstdcxx)
		cxa_demangle = (cxa_demangle_fn)dlsym(libstdcxx, "__cxa_demangle");
}

char *name_demangle(const char *name)
{
	int status = -1;
	char *demangled;

	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	pthread_once(&cxa_demangle_once, find_cxa_demangle);
	if (!cxa_demangle)
		return NULL;
	demangled = cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(demangled);
		return NULL;
	}
	return demangled;
}

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
