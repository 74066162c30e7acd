/*
 * A trace file in gpt-trace's schema, written from converted rows (see trace-out.h). The schema is
 * schema/schema.sql, embedded at build time as the collector embeds it, so an imported trace has
 * every table and enum a recorded one has.
 */
#include "analyzer/import/trace-out.h"

#include "common/cleanup.h"
#include "common/util.h"
#include "schema/schema-sql.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *sql;
	int ncols;
} inserts[OUT_TABLES] = {
	[OUT_KERNEL] = { "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
			 "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, "
			 "gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
			 "localMemoryPerThread, localMemoryTotal, gridId) "
			 "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", KERNEL_COLS },
	[OUT_MEMCPY] = { "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
			 "correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, srcContextId, "
			 "dstDeviceId, dstContextId) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", MEMCPY_COLS },
	[OUT_MEMSET] = { "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
			 "correlationId, globalPid, value, bytes, memKind) VALUES (?,?,?,?,?,?,?,?,?,?)",
			 MEMSET_COLS },
	[OUT_SYNC] = { "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, "
		       "streamId, correlationId, globalPid, syncType, eventId) VALUES (?,?,?,?,?,?,?,?,?)",
		       SYNC_COLS },
	/* correlationId is the primary key: a repeated id is counted, not fatal */
	[OUT_API] = { "INSERT OR IGNORE INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
		      "correlationId, nameId, returnValue) VALUES (?,?,?,?,?,?,?)", API_COLS },
	[OUT_NVTX] = { "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId) "
		       "VALUES (?,?,?,?,?,?)", NVTX_COLS },
	[OUT_GPU] = { "INSERT INTO TARGET_INFO_GPU (vmId, id, totalMemory, smCount, computeMajor, computeMinor, "
		      "maxThreadsPerBlock, maxRegistersPerBlock, maxRegistersPerSm, threadsPerWarp, "
		      "maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, maxWarpsPerSm, cuDevice, name) "
		      "VALUES (0,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?1,?14)", GPU_COLS },
	[OUT_THREAD] = { "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?1, NULL, ?2)",
			 THREAD_COLS },
	[OUT_PROCESS] = { "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?,?,?)", PROCESS_COLS },
};

static int fail(struct trace_out *out, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct trace_out *out, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!out->error[0]) {
		va_start(ap, fmt);
		vsnprintf(out->error, sizeof(out->error), fmt, ap);
		va_end(ap);
	}
	return ret;
}

static int sql_fail(struct trace_out *out)
{
	int code = sqlite3_errcode(out->db) & 0xff;

	return fail(out, code == SQLITE_FULL ? -ENOSPC : -EIO, "cannot write '%s': %s", out->path,
		    sqlite3_errmsg(out->db));
}

int trace_out_exec(struct trace_out *out, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(out->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int ret = fail(out, -EIO, "cannot write '%s': %s", out->path, msg ? msg : "sqlite error");

		sqlite3_free(msg);
		return ret;
	}
	return 0;
}

/*
 * Temporary twins that a dead conversion left beside path ("NAME.tmp-PID-XXXXXX", made by a process
 * that is gone, killed by a signal no handler sees): removed, when they are ours to remove.
 */
static void remove_stale(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xasprintf("%.*s", (int)(slash - path + 1), path) : xstrdup("./");
	char *prefix = xasprintf("%s.tmp-", slash ? slash + 1 : path);
	size_t n = strlen(prefix);
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *end, *full;
		long pid;
		struct stat st;

		if (strncmp(e->d_name, prefix, n))
			continue;
		pid = strtol(e->d_name + n, &end, 10);
		if (end == e->d_name + n || *end != '-' || strlen(end + 1) != 6 || pid <= 0 ||
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		full = xasprintf("%s%s", dir, e->d_name);
		if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
			unlink(full);
		free(full);
	}
	if (d)
		closedir(d);
	free(dir);
	free(prefix);
}

/*
 * A fresh name beside the target: the rename that commits stays on one file system. It carries the
 * pid, so that a later run can tell a dead conversion's leftover from a live one's file, and it is
 * registered for removal on SIGINT, SIGTERM and SIGHUP (common/cleanup.h).
 */
static int make_tmp(struct trace_out *out)
{
	mode_t um;
	int fd;

	remove_stale(out->path);
	out->tmp_path = xasprintf("%s.tmp-%ld-XXXXXX", out->path, (long)getpid());
	fd = mkstemp(out->tmp_path);
	if (fd < 0) {
		int e = errno;

		free(out->tmp_path);
		out->tmp_path = NULL;
		return fail(out, -e, "cannot write '%s': %s", out->path, strerror(e));
	}
	/* mkstemp makes it private; a trace is as readable as any file its user makes */
	um = umask(0);
	umask(um);
	if (fchmod(fd, 0666 & ~um) < 0) {
		int e = errno;

		close(fd);
		unlink(out->tmp_path);
		return fail(out, -e, "cannot write '%s': %s", out->path, strerror(e));
	}
	close(fd);
	cleanup_add(out->tmp_path);
	return 0;
}

static int prepare_all(struct trace_out *out)
{
	for (int t = 0; t < OUT_TABLES; t++)
		if (sqlite3_prepare_v3(out->db, inserts[t].sql, -1, SQLITE_PREPARE_PERSISTENT, &out->insert[t],
				       NULL) != SQLITE_OK)
			return sql_fail(out);
	if (sqlite3_prepare_v3(out->db, "INSERT INTO StringIds (id, value) VALUES (?,?)", -1,
			       SQLITE_PREPARE_PERSISTENT, &out->string, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(out->db, "INSERT OR REPLACE INTO GPT_META (name, value) VALUES (?,?)", -1,
			       SQLITE_PREPARE_PERSISTENT, &out->meta, NULL) != SQLITE_OK)
		return sql_fail(out);
	return 0;
}

int trace_out_create(struct trace_out *out, const char *path)
{
	int ret;

	memset(out, 0, sizeof(*out));
	out->path = xstrdup(path);
	ret = make_tmp(out);
	if (ret < 0)
		goto out_abort;
	if (sqlite3_open_v2(out->tmp_path, &out->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		ret = sql_fail(out);
		goto out_abort;
	}
	/* no journal: the file is not renamed into place unless the whole import succeeded */
	ret = trace_out_exec(out, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-8192; "
			     "PRAGMA temp_store=MEMORY; BEGIN");
	if (!ret)
		ret = trace_out_exec(out, gpt_schema_sql);
	if (!ret)
		ret = prepare_all(out);
	if (!ret)
		return 0;
out_abort:
	trace_out_abort(out);
	return ret;
}

static int step_done(struct trace_out *out, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(out);
}

static void bind_values(sqlite3_stmt *st, const int64_t *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (v[i] == TRACE_OUT_NULL)
			sqlite3_bind_null(st, i + 1);
		else
			sqlite3_bind_int64(st, i + 1, v[i]);
	}
}

int trace_out_row(struct trace_out *out, enum trace_out_table table, const int64_t *v)
{
	sqlite3_stmt *st = out->insert[table];
	int ret;

	bind_values(st, v, inserts[table].ncols);
	ret = step_done(out, st);
	if (ret < 0)
		return ret;
	if (table == OUT_API && !sqlite3_changes(out->db))
		out->changes_ignored++;
	else
		out->rows[table]++;
	return 0;
}

static int row_with_text(struct trace_out *out, enum trace_out_table table, const int64_t *v, const char *text)
{
	sqlite3_stmt *st = out->insert[table];
	int n = inserts[table].ncols;

	bind_values(st, v, n);
	if (text)
		sqlite3_bind_text(st, n + 1, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, n + 1);
	out->rows[table]++;
	return step_done(out, st);
}

int trace_out_gpu(struct trace_out *out, const int64_t *v, const char *name)
{
	return row_with_text(out, OUT_GPU, v, name);
}

int trace_out_process(struct trace_out *out, const int64_t *v, const char *name)
{
	return row_with_text(out, OUT_PROCESS, v, name);
}

int64_t trace_out_string(struct trace_out *out, const char *s)
{
	int created;
	size_t i = strtab_get(&out->strings, s, &created);
	int ret;

	if (!created)
		return (int64_t)i + 1;
	sqlite3_bind_int64(out->string, 1, (int64_t)i + 1);
	sqlite3_bind_text(out->string, 2, s, -1, SQLITE_STATIC);
	ret = step_done(out, out->string);
	return ret < 0 ? ret : (int64_t)i + 1;
}

int trace_out_meta(struct trace_out *out, const char *name, const char *value)
{
	sqlite3_bind_text(out->meta, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(out->meta, 2, value, -1, SQLITE_STATIC);
	return step_done(out, out->meta);
}

int trace_out_meta_int(struct trace_out *out, const char *name, int64_t value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)value);
	return trace_out_meta(out, name, buf);
}

static void finalize_all(struct trace_out *out)
{
	for (int t = 0; t < OUT_TABLES; t++)
		sqlite3_finalize(out->insert[t]);
	sqlite3_finalize(out->string);
	sqlite3_finalize(out->meta);
	memset(out->insert, 0, sizeof(out->insert));
	out->string = out->meta = NULL;
}

int trace_out_commit(struct trace_out *out)
{
	int ret = trace_out_exec(out, "COMMIT");

	finalize_all(out);
	if (!ret && sqlite3_close(out->db) != SQLITE_OK)
		ret = sql_fail(out);
	else if (!ret)
		out->db = NULL;
	if (!ret && rename(out->tmp_path, out->path) < 0)
		ret = fail(out, -errno, "cannot write '%s': %s", out->path, strerror(errno));
	if (ret < 0) {
		trace_out_abort(out);
		return ret;
	}
	cleanup_remove(out->tmp_path);
	free(out->tmp_path);
	out->tmp_path = NULL;
	trace_out_abort(out);	/* frees the rest */
	return 0;
}

void trace_out_abort(struct trace_out *out)
{
	finalize_all(out);
	if (out->db)
		sqlite3_close(out->db);
	out->db = NULL;
	if (out->tmp_path) {
		unlink(out->tmp_path);
		cleanup_remove(out->tmp_path);
	}
	free(out->tmp_path);
	free(out->path);
	out->tmp_path = out->path = NULL;
	strtab_release(&out->strings);
}
