/*
 * Trace names: GPT_TRACE_OUTPUT pattern expansion (%p, %h, %%) and creation without overwriting
 * (".1", ".2" before the extension; force truncates).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/trace_path.h"
#include "tests/collector/check.h"

static void test_expand(void)
{
	char out[64];

	CHECK_EQ_INT(trace_path_expand("gpt-trace-%h-%p.sqlite", 1234, "node7", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "gpt-trace-node7-1234.sqlite");
	CHECK_EQ_INT(trace_path_expand("/a/100%%-%p%x", 5, "h", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "/a/100%-5%x");
	CHECK_EQ_INT(trace_path_expand("trailing%", 5, "h", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "trailing%");
	CHECK_EQ_INT(trace_path_expand("%p%p%p%p%p", 123456789, "h", out, 20), -ENAMETOOLONG);
}

static void test_create(const char *dir)
{
	char path[600], actual[700], expected[700];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/t.sqlite", dir);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	CHECK_EQ_STR(actual, path);
	fd = open(path, O_WRONLY);
	CHECK(write(fd, "data", 4) == 4);
	close(fd);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	snprintf(expected, sizeof(expected), "%s/t.1.sqlite", dir);
	CHECK_EQ_STR(actual, expected);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	snprintf(expected, sizeof(expected), "%s/t.2.sqlite", dir);
	CHECK_EQ_STR(actual, expected);
	/* The original is untouched. */
	CHECK(stat(path, &st) == 0 && st.st_size == 4);
	/* force: the same name, emptied. */
	CHECK_EQ_INT(trace_path_create(path, 1, actual, sizeof(actual)), 0);
	CHECK_EQ_STR(actual, path);
	CHECK(stat(path, &st) == 0 && st.st_size == 0);
	/* No extension: the number goes at the end. */
	snprintf(path, sizeof(path), "%s/noext", dir);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	snprintf(expected, sizeof(expected), "%s/noext.1", dir);
	CHECK_EQ_STR(actual, expected);
	snprintf(path, sizeof(path), "%s/missing/t.sqlite", dir);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), -ENOENT);
}

int main(void)
{
	const char *dir = check_tmpdir();

	test_expand();
	test_create(dir);
	check_rmtree(dir);
	return check_exit("test_trace_path");
}
