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
