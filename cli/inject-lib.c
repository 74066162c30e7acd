/*
 * Finding libgpt_inject.so relative to the running gpt-trace (/proc/self/exe), so that a build tree,
 * an installed prefix and a moved or copied prefix all work with no path baked in (inject-lib.h).
 */
#include "cli/inject-lib.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 if path is a readable regular file, else -errno. */
static int check_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (access(path, R_OK) < 0)
		return -errno;
	return 0;
}

static char *find_override(const char *override, char *problem, size_t problem_len)
{
	int ret = check_file(override);
	char *lib = ret < 0 ? NULL : realpath(override, NULL);

	if (!lib)
		snprintf(problem, problem_len, "cannot use GPT_TRACE_INJECT_LIB '%s': %s", override,
			 strerror(ret < 0 ? -ret : errno));
	return lib;
}

char *inject_lib_find(enum inject_lib_origin *origin, char *problem, size_t problem_len)
{
	const char *override = getenv("GPT_TRACE_INJECT_LIB");
	char exe[PATH_MAX], beside[PATH_MAX + 32], installed[PATH_MAX + 64];
	enum inject_lib_origin where;
	char *slash, *lib = NULL;
	ssize_t n;

	if (override && *override) {
		where = INJECT_LIB_ENV;
		lib = find_override(override, problem, problem_len);
		goto out;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		snprintf(problem, problem_len, "cannot find %s: cannot read /proc/self/exe: %s",
			 INJECT_LIB_NAME, strerror(errno));
		return NULL;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(beside, sizeof(beside), "%s/" INJECT_LIB_NAME, exe);
	snprintf(installed, sizeof(installed), "%s/../lib/gpt-trace/" INJECT_LIB_NAME, exe);

	where = INJECT_LIB_BESIDE;
	if (!check_file(beside))
		lib = realpath(beside, NULL);
	if (!lib && !check_file(installed)) {
		where = INJECT_LIB_INSTALLED;
		lib = realpath(installed, NULL);
	}
	if (!lib)
		snprintf(problem, problem_len, "cannot find %s: neither '%s' nor '%s' exists; build "
			 "the gpt_inject target or set GPT_TRACE_INJECT_LIB", INJECT_LIB_NAME, beside,
			 installed);
out:
	if (lib && origin)
		*origin = where;
	return lib;
}
