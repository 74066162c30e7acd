/*
 * Recovering unfinished traces (see run-recover.h).
 *
 * Why this is safe: the library's writer commits every --commit-ms, so the main file holds every
 * committed transaction; a hot journal holds only the before-images of the transaction that was
 * open when the process died. SQLite's own recovery (the first read-write open that finds the
 * journal without a lock holder) puts those pages back: the file becomes the trace as of its last
 * commit. The rows added here say so, so that a reader can tell a recovered trace from a finished
 * one (trace_complete 0) and how much may be missing.
 */
#define _GNU_SOURCE
#include "cli/run-recover.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <sqlite3.h>

static int nonempty(const char *path, const char *suffix)
{
	char name[4096];
	struct stat st;

	if (snprintf(name, sizeof(name), "%s%s", path, suffix) >= (int)sizeof(name))
		return 0;
	return stat(name, &st) == 0 && st.st_size > 0;
}

static int64_t meta_int(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int64_t value = -1;

	if (sqlite3_prepare_v2(db, "SELECT value FROM GPT_META WHERE name = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		value = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return value;
}

static int put_meta(sqlite3 *db, const char *name, const char *value)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO GPT_META (name, value) VALUES (?, ?)", -1,
			       &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int run_recover(const char *path, pid_t pid, int status, struct run_recovery *out, char *err,
		size_t errlen)
{
	char reason[128], value[64];
	struct timespec now;
	uint64_t now_ns;
	int64_t origin;
	sqlite3 *db = NULL;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->journal = nonempty(path, "-journal") || nonempty(path, "-wal");
	clock_gettime(CLOCK_REALTIME, &now);
	now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		goto out_fail;
	sqlite3_busy_timeout(db, 2000);
	/* The first read takes the locks that roll a hot journal back. */
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		goto out_fail;
	if (status != -1 && WIFSIGNALED(status))
		snprintf(reason, sizeof(reason), "signal %d", WTERMSIG(status));
	else if (status != -1 && WIFEXITED(status))
		snprintf(reason, sizeof(reason), "unknown (exit status %d without finishing its trace)",
			 WEXITSTATUS(status));
	else
		snprintf(reason, sizeof(reason), "unknown (ended without finishing its trace)");
	origin = meta_int(db, "time_origin_utc_ns");
	snprintf(value, sizeof(value), "%lld", (long long)pid);
	if (put_meta(db, "exit_reason", reason) < 0 || put_meta(db, "trace_complete", "0") < 0 ||
	    put_meta(db, "recovered_by", out->journal ? "gpt-trace run (journal rolled back)"
						       : "gpt-trace run") < 0)
		goto out_fail;
	/* When the launcher saw the end, on the trace's time axis: the process died before it. */
	if (origin > 0 && now_ns > (uint64_t)origin) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)(now_ns - (uint64_t)origin));
		if (put_meta(db, "ended_by_ns", value) < 0)
			goto out_fail;
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto out_fail;
	out->annotated = 1;
	ret = 0;
	goto out_close;

out_fail:
	snprintf(err, errlen, "cannot recover '%s': %s", path,
		 db ? sqlite3_errmsg(db) : "out of memory");
out_close:
	sqlite3_close(db);
	return ret;
}
