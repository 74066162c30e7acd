/*
 * Minimal assertions for the collector's and the injected library's C tests: a failed CHECK prints
 * the expression and its place and the test goes on; check_exit() makes main's status 1 when any
 * check failed. Also small helpers shared by those tests (temporary directories, SQLite queries).
 */
#ifndef GPT_TESTS_CHECK_H
#define GPT_TESTS_CHECK_H

#include <ftw.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			check_failures++;                                                    \
		}                                                                            \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                   \
	do {                                                                                 \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);              \
		if (check_a_ != check_b_) {                                                  \
			fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n",    \
				__FILE__, __LINE__, #a, #b, check_a_, check_b_);             \
			check_failures++;                                                    \
		}                                                                            \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                                   \
	do {                                                                                 \
		const char *check_a_ = (a), *check_b_ = (b);                                 \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {            \
			fprintf(stderr, "%s:%d: check failed: %s == %s (\"%s\" != \"%s\")\n", \
				__FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",  \
				check_b_ ? check_b_ : "(null)");                             \
			check_failures++;                                                    \
		}                                                                            \
	} while (0)

static inline int check_exit(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}

/* A fresh temporary directory (under TMPDIR or /tmp); the path is static storage. */
static inline const char *check_tmpdir(void)
{
	static char dir[512];
	const char *base = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/gpt-trace-test-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	return dir;
}

static inline int check_remove_entry(const char *path, const struct stat *st, int flag,
				     struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove a test's temporary directory and everything in it. */
static inline void check_rmtree(const char *dir)
{
	if (getenv("GPT_TEST_KEEP")) {	/* for debugging: keep the files */
		fprintf(stderr, "kept %s\n", dir);
		return;
	}
	nftw(dir, check_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The first column of the first row of sql as an integer (-1 on error or no row). */
static inline long long query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(db));
		return -1;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The first column of the first row of sql as text, in buf ("" when none). */
static inline const char *query_text(sqlite3 *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(db));
		return buf;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

#endif
