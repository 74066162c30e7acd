/*
 * CUPTI, found and loaded (see cupti-private.h). It is dlopen'ed only when CUDA initialises, so that
 * the many processes of a job that never use CUDA (shells, compilers, data loaders) do not map its
 * 4 MiB, nor pay its constructors. The library already in the process wins (PyTorch links its own
 * libcupti.so.13); otherwise we search the usual places (cupti-search.h). All calls go through the
 * function table filled here.
 */
#define _GNU_SOURCE
#include "inject/cupti-private.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/cupti-search.h"

struct cupti_fns cupti;

static int dl_find_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libcupti.so")) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static int dl_find_cudart_dir(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *slash;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libcudart.so") &&
	    (slash = strrchr(info->dlpi_name, '/'))) {
		snprintf(data, PATH_MAX, "%.*s", (int)(slash - info->dlpi_name), info->dlpi_name);
		return 1;
	}
	return 0;
}

static void *cupti_try(const char *path, int flags)
{
	void *lib = dlopen(path, flags);

	if (lib && snprintf(cupti.path, sizeof(cupti.path), "%s", path) >= (int)sizeof(cupti.path))
		cupti.path[0] = '\0';
	return lib;
}

static void *cupti_open(char *err, size_t errlen)
{
	char loaded[PATH_MAX] = "", dir[PATH_MAX] = "", path[PATH_MAX + 32];
	const char *env = getenv("GPT_TRACE_CUPTI_LIB");
	void *lib;

	/* One CUPTI per process: use the program's own if it has one. */
	if (dl_iterate_phdr(dl_find_cupti, loaded) && (lib = cupti_try(loaded, RTLD_NOW | RTLD_NOLOAD)))
		return lib;
	if (env && *env && (lib = cupti_try(env, RTLD_NOW | RTLD_LOCAL)))
		return lib;
	for (size_t i = 0; i < sizeof(cupti_places) / sizeof(cupti_places[0]); i++) {
		if (cupti_places[i].path) {
			if ((lib = cupti_try(cupti_places[i].path, RTLD_NOW | RTLD_LOCAL)))
				return lib;
		} else if (dl_iterate_phdr(dl_find_cudart_dir, dir)) {
			snprintf(path, sizeof(path), "%s/" GPT_CUPTI_SONAME, dir);
			if ((lib = cupti_try(path, RTLD_NOW | RTLD_LOCAL)))
				return lib;
		}
	}
	snprintf(err, errlen, "cannot load CUPTI (libcupti.so.13: %s): running untraced", dlerror());
	return NULL;
}

int cupti_load(char *err, size_t errlen)
{
	cupti.lib = cupti_open(err, errlen);
	if (!cupti.lib)
		return -1;
#define LOAD(name) (cupti.name = (__typeof__(cupti.name))dlsym(cupti.lib, "cupti" #name))
	LOAD(GetVersion);
	LOAD(Subscribe);
	LOAD(Subscribe_v2);
	LOAD(Unsubscribe);
	LOAD(EnableCallback);
	LOAD(GetCallbackName);
	LOAD(GetResultString);
	LOAD(ActivityEnable);
	LOAD(ActivityDisable);
	LOAD(ActivityEnableRuntimeApi);
	LOAD(ActivityEnableDriverApi);
	LOAD(ActivityRegisterCallbacks);
	LOAD(ActivityFlushAll);
	LOAD(ActivityGetNumDroppedRecords);
	LOAD(ActivityGetNextRecord);
	LOAD(ActivitySetAttribute);
	LOAD(ActivityRegisterTimestampCallback);
	LOAD(SetThreadIdType);
	LOAD(GetTimestamp);
	LOAD(GetContextId);
	LOAD(GetDeviceId);
	LOAD(GetStreamIdEx);
#undef LOAD
	if (!(cupti.Subscribe || cupti.Subscribe_v2) || !cupti.EnableCallback ||
	    !cupti.ActivityEnable || !cupti.ActivityRegisterCallbacks || !cupti.ActivityFlushAll ||
	    !cupti.ActivityGetNextRecord || !cupti.ActivityGetNumDroppedRecords) {
		snprintf(err, errlen, "cannot use CUPTI '%s': a required function is missing: "
			 "running untraced", cupti.path);
		return -1;
	}
	return 0;
}

const char *cupti_result(CUptiResult result)
{
	const char *text = NULL;

	if (!cupti.GetResultString || cupti.GetResultString(result, &text) != CUPTI_SUCCESS || !text)
		return "unknown CUPTI error";
	return text;
}
