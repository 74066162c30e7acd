/*
 * Kineto traces wherever a trace is accepted (see kineto.h): the loader asks kineto_sniff() about a
 * file that is not SQLite, and kineto_cached() for the trace file made from it, which sits beside
 * the JSON as the cross-rank report's summaries do (TRACE.summary), so that the second command on the
 * same file does not parse it again. A cache is used only when it was made from the file as it is
 * now, by this version of the importer.
 */
#include "analyzer/import/kineto.h"

#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_SUFFIX ".sqlite"

int kineto_sniff(const char *path)
{
	unsigned char buf[256];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
		return 1;
	for (ssize_t i = n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0; i < n; i++) {
		if (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')
			continue;
		return buf[i] == '{' || buf[i] == '[';
	}
	return 0;
}

/* Whether cache was imported from json_path as it is now (GPT_META import_source_size,
   import_source_mtime_ns) by this version. */
static int cache_fresh(const char *json_path, const char *cache)
{
	struct stat js, cs;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int matched = 0;

	if (stat(json_path, &js) < 0 || stat(cache, &cs) < 0 || !S_ISREG(cs.st_mode))
		return 0;
	if (sqlite3_open_v2(cache, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		goto out;
	if (sqlite3_prepare_v2(db, "SELECT name, value FROM GPT_META WHERE name IN ('import_source_size', "
			       "'import_source_mtime_ns', 'tool_version', 'trace_complete')", -1, &st, NULL) != SQLITE_OK)
		goto out;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *value = (const char *)sqlite3_column_text(st, 1);
		long long v = value ? strtoll(value, NULL, 10) : -1;

		if (!name || !value)
			continue;
		if (!strcmp(name, "import_source_size"))
			matched += v == (long long)js.st_size;
		else if (!strcmp(name, "import_source_mtime_ns"))
			matched += v == (long long)js.st_mtim.tv_sec * 1000000000LL + js.st_mtim.tv_nsec;
		else if (!strcmp(name, "tool_version"))
			matched += !strcmp(value, GPT_TRACE_VERSION);
		else
			matched += !strcmp(value, "1");
	}
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return matched == 4;
}

/* The folder cannot be written: convert into a private temporary folder instead. */
static int import_to_tmp(const char *json_path, char **sqlite_path, char **tmp_dir, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR"), *base = strrchr(json_path, '/');
	char *dir = xasprintf("%s/gpt-trace-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char *path;
	int ret;

	if (!mkdtemp(dir)) {
		ret = -errno;
		snprintf(err, errlen, "cannot import '%s': its folder is read-only and no temporary folder could "
			 "be made: %s", json_path, strerror(errno));
		free(dir);
		return ret;
	}
	path = xasprintf("%s/%s%s", dir, base ? base + 1 : json_path, CACHE_SUFFIX);
	ret = kineto_import(json_path, path, NULL, err, errlen);
	if (ret < 0) {
		rmdir(dir);
		free(dir);
		free(path);
		return ret;
	}
	*sqlite_path = path;
	*tmp_dir = dir;
	return 0;
}

int kineto_cached(const char *json_path, char **sqlite_path, char **tmp_dir, char *err, size_t errlen)
{
	char *cache = xasprintf("%s%s", json_path, CACHE_SUFFIX);
	int ret;

	*sqlite_path = NULL;
	*tmp_dir = NULL;
	if (cache_fresh(json_path, cache)) {
		*sqlite_path = cache;
		return 0;
	}
	ret = kineto_import(json_path, cache, NULL, err, errlen);
	if (ret == -EACCES || ret == -EROFS || ret == -EPERM) {
		free(cache);
		return import_to_tmp(json_path, sqlite_path, tmp_dir, err, errlen);
	}
	if (ret < 0) {
		free(cache);
		return ret;
	}
	*sqlite_path = cache;
	return 0;
}
