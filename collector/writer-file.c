/*
 * The trace file (see writer-private.h): created on the first row, with the schema, the prepared
 * statements and the metadata known so far, committed at once so that a killed program's trace
 * still says what it is; and a failure, which closes it keeping what was committed.
 *
 * SQLite settings: synchronous=OFF (we guard against a killed process, not a power cut: committed
 * pages are in the OS's cache) and the default rollback journal, so the file is a complete database
 * after every commit and a single file at the end.
 *
 * Rollback journal rather than WAL, deliberately: (1) a finished trace is one file, which users
 * copy, attach to issues and open with any SQLite tool; a WAL trace leaves -wal/-shm files until
 * checkpointed, and a WAL database cannot be opened read-only from a folder the reader cannot
 * write (the -shm must exist); (2) after a SIGKILL the main file already holds every committed
 * transaction and the hot journal only the before-images of the open one, so recovery (a
 * read-write open by the launcher, or by the loader on a copy) is a rollback of at most one commit
 * interval; a WAL trace's committed data would sit in the -wal until a checkpoint; (3) our
 * transactions are large (one per second), so WAL's advantage, cheap small commits, does not
 * apply. The per-launch cost of both is measured by tests/gpu/crash.sh (GPT_TRACE_JOURNAL=wal).
 */
#define _GNU_SOURCE
#include "collector/writer-private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "schema/schema-sql.h"
#include "schema/schema-version.h"
#include "collector/trace-path.h"

#ifndef GPT_TRACE_VERSION
#define GPT_TRACE_VERSION "unknown"
#endif

#define WRITER_BUSY_TIMEOUT_MS 30000	/* how long a commit waits for readers of a live trace */

static const char *const stmt_sql[ST_COUNT] = {
	[ST_KERNEL] = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
		      "streamId, correlationId, globalPid, demangledName, shortName, mangledName, "
		      "launchType, cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, "
		      "blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
		      "localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId, "
		      "sharedMemoryLimitConfig, graphId) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		      "?,?,?,?,?,?,?,?,?)",
	[ST_MEMCPY] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
		      "streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, "
		      "srcDeviceId, srcContextId, dstDeviceId, dstContextId, graphNodeId) VALUES "
		      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MEMSET] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
		      "streamId, correlationId, globalPid, value, bytes, graphNodeId, memKind) VALUES "
		      "(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_SYNC] = "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, "
		    "contextId, streamId, correlationId, globalPid, syncType, eventId) VALUES "
		    "(?,?,?,?,?,?,?,?,?)",
	/* correlationId is the primary key: a repeated id is counted (api_records_duplicate), not fatal. */
	[ST_API] = "INSERT OR IGNORE INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
		   "correlationId, nameId, returnValue) VALUES (?,?,?,?,?,?,?)",
	[ST_NVTX] = "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, "
		    "globalTid, endGlobalTid, textId, domainId, uint64Value, int64Value, doubleValue, "
		    "uint32Value, int32Value, floatValue) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_STRING] = "INSERT INTO StringIds (id, value) VALUES (?,?)",
	[ST_META] = "INSERT OR REPLACE INTO GPT_META (name, value) VALUES (?,?)",
	/* OR IGNORE: a sample whose start repeats one of its device's (none seen) is not fatal. */
	[ST_GPU_METRIC] = "INSERT OR IGNORE INTO GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value) "
			  "VALUES (?,?,?,?,?)",
	[ST_GPU_METRIC_INFO] = "INSERT INTO TARGET_INFO_GPU_METRICS (typeId, sourceId, typeName, "
			       "metricId, metricName) VALUES (?,?,?,?,?)",
	[ST_GPT_GPU_METRICS] = "INSERT OR IGNORE INTO GPT_GPU_METRICS (start, end, deviceId, smCyclesElapsed, "
			       "smCyclesActive, tensorCycles, dramReadBytes, dramWriteBytes, "
			       "pcieReadBytes, pcieWriteBytes, nvlinkRxBytes, nvlinkTxBytes) VALUES "
			       "(?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MEMORY] = "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, "
		      "address, pc, bytes, memKind, memoryOperationType, name, correlationId, streamId, "
		      "localMemoryPoolAddress, localMemoryPoolReleaseThreshold, localMemoryPoolSize, "
		      "localMemoryPoolUtilizedSize, importedMemoryPoolAddress, importedMemoryPoolProcessId) "
		      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MEMPOOL] = "INSERT INTO CUDA_GPU_MEMORY_POOL_EVENTS (start, globalPid, deviceId, address, "
		       "operationType, poolType, correlationId, minBytesToKeep, "
		       "localMemoryPoolReleaseThreshold, localMemoryPoolSize, localMemoryPoolUtilizedSize) "
		       "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
};

void writer_fail(struct writer *w, const char *fmt, ...)
{
	va_list ap;

	if (w->failed)
		return;
	w->failed = 1;
	va_start(ap, fmt);
	vsnprintf(w->error, sizeof(w->error), fmt, ap);
	va_end(ap);
	if (w->db) {
		for (int i = 0; i < ST_COUNT; i++)
			sqlite3_finalize(w->stmt[i]);
		memset(w->stmt, 0, sizeof(w->stmt));
		/* Keep what was committed: the file stays a valid trace up to the last commit. */
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(w->db);
		w->db = NULL;
	}
	if (w->options.report)
		w->options.report(w->error);
}

int writer_sql_failed(struct writer *w)
{
	int err = w->db ? sqlite3_system_errno(w->db) : 0;

	/* "disk I/O error" alone does not tell a full disk from a file size limit. */
	if (err)
		writer_fail(w, "cannot write trace '%s': %s (%s)", w->path, sqlite3_errmsg(w->db),
			    strerror(err));
	else
		writer_fail(w, "cannot write trace '%s': %s", w->path, sqlite3_errmsg(w->db));
	return -1;
}

int writer_exec(struct writer *w, const char *sql)
{
	if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return writer_sql_failed(w);
	return 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int writer_put_meta(struct writer *w, const char *name, const char *value)
{
	sqlite3_stmt *st = w->stmt[ST_META];

	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_reset(st);
		return writer_sql_failed(w);
	}
	sqlite3_reset(st);
	return 0;
}

int writer_put_all_meta(struct writer *w)
{
	char origin[32];

	snprintf(origin, sizeof(origin), "%llu", (unsigned long long)w->options.time_origin);
	if (writer_put_meta(w, "gpt_schema_version", GPT_SCHEMA_VERSION) < 0 ||
	    writer_put_meta(w, "time_origin_ns", origin) < 0)
		return -1;
	for (size_t i = 0; i < w->nmeta; i++)
		if (writer_put_meta(w, w->meta[i].name, w->meta[i].value) < 0)
			return -1;
	return 0;
}

static const char *writer_meta_value(const struct writer *w, const char *name)
{
	for (size_t i = 0; i < w->nmeta; i++)
		if (strcmp(w->meta[i].name, name) == 0)
			return w->meta[i].value;
	return NULL;
}

/*
 * META_DATA_EXPORT as nsys writes it, with the rows tools read to choose their code path for an
 * export version (EXPORT_SCHEMA_VERSION and its three parts): the nsys schema our DDL copies. The
 * product rows name us, not nsys. Written with the schema, so that a killed program's trace has
 * them.
 */
static int writer_put_export_meta(struct writer *w)
{
	static const char sql[] = "INSERT INTO META_DATA_EXPORT (name, value) VALUES (?, ?)";
	const char *host = writer_meta_value(w, "host");
	time_t now = time(NULL);
	char when[32];
	struct tm tm;
	const char *rows[][2] = {
		{ "EXPORT_PRODUCT_NAME", "gpt-trace" },
		{ "EXPORT_PRODUCT_VERSION", GPT_TRACE_VERSION },
		{ "EXPORT_SCHEMA_VERSION",
		  NSYS_SCHEMA_MAJOR "." NSYS_SCHEMA_MINOR "." NSYS_SCHEMA_MICRO },
		{ "EXPORT_SCHEMA_VERSION_MAJOR", NSYS_SCHEMA_MAJOR },
		{ "EXPORT_SCHEMA_VERSION_MINOR", NSYS_SCHEMA_MINOR },
		{ "EXPORT_SCHEMA_VERSION_MICRO", NSYS_SCHEMA_MICRO },
		{ "EXPORT_TIME_UTC", when },
		{ "EXPORT_HOST", host },
	};
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		return writer_sql_failed(w);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && rc == SQLITE_DONE; i++) {
		if (!rows[i][1])
			continue;
		sqlite3_bind_text(st, 1, rows[i][0], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, rows[i][1], -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : writer_sql_failed(w);
}

static int writer_create_file(struct writer *w);

/* Create the file, the schema and the statements; begin the first transaction. */
int writer_create(struct writer *w)
{
	if (!w->pattern[0]) {
		writer_fail(w, "cannot create trace: no output path");
		return -1;
	}
	if (writer_create_file(w) < 0) {
		/* Half a schema is no trace: leave nothing behind. */
		if (w->created) {
			unlink(w->path);
			w->created = 0;
		}
		return -1;
	}
	return 0;
}

/*
 * A file size limit (ulimit -f, RLIMIT_FSIZE): a write past it would raise SIGXFSZ, whose default
 * action kills the whole program, since the kernel sends it to the process and the program's
 * threads do not block it. SQLite's page limit makes it stop short with SQLITE_FULL instead, like
 * a full disk: the writer keeps what was committed and says so once (a journal is never larger
 * than the pages it saves, so it stays under the limit too).
 */
static void writer_limit_size(struct writer *w)
{
	struct rlimit limit;
	sqlite3_int64 page_size = 4096;
	sqlite3_stmt *st;
	char sql[64];

	if (getrlimit(RLIMIT_FSIZE, &limit) < 0 || limit.rlim_cur == RLIM_INFINITY)
		return;
	if (sqlite3_prepare_v2(w->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			page_size = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	/* Two pages of margin: the journal's header and the page being written. */
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %llu",
		 (unsigned long long)(limit.rlim_cur / (rlim_t)page_size > 2
					      ? limit.rlim_cur / (rlim_t)page_size - 2
					      : 1));
	sqlite3_exec(w->db, sql, NULL, NULL, NULL);
}

static int writer_create_file(struct writer *w)
{
	int rc;

	rc = trace_path_create(w->pattern, w->options.force, w->path, sizeof(w->path));
	if (rc < 0) {
		snprintf(w->path, sizeof(w->path), "%s", w->pattern);
		writer_fail(w, "cannot create trace '%s': %s", w->pattern, strerror(-rc));
		return -1;
	}
	w->created = 1;
	if (sqlite3_open_v2(w->path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		if (!w->db) {
			writer_fail(w, "cannot open trace '%s': out of memory", w->path);
			return -1;
		}
		return writer_sql_failed(w);
	}
	/*
	 * Someone may read the trace while the program runs (sqlite3, gpt-trace report): a commit
	 * then waits for their shared lock instead of failing the whole trace with SQLITE_BUSY.
	 */
	sqlite3_busy_timeout(w->db, WRITER_BUSY_TIMEOUT_MS);
	writer_limit_size(w);
	if ((w->options.wal && writer_exec(w, "PRAGMA journal_mode=WAL") < 0) ||
	    writer_exec(w, "PRAGMA synchronous=OFF; PRAGMA cache_size=-32768; "
			   "PRAGMA temp_store=MEMORY; BEGIN") < 0 ||
	    writer_exec(w, gpt_schema_sql) < 0)
		return -1;
	for (int i = 0; i < ST_COUNT; i++)
		if (sqlite3_prepare_v3(w->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->stmt[i],
				       NULL) != SQLITE_OK)
			return writer_sql_failed(w);
	/* Facts known so far: a killed program's trace still says what it is. */
	if (writer_put_all_meta(w) < 0 || writer_put_export_meta(w) < 0 ||
	    writer_exec(w, "COMMIT; BEGIN") < 0)
		return -1;
	w->last_commit_ns = monotonic_ns();
	if (w->options.created)
		w->options.created(w->path);
	return 0;
}

void writer_meta(struct writer *w, const char *name, const char *value)
{
	struct meta_fact *meta;
	char *n, *v;

	for (size_t i = 0; i < w->nmeta; i++)
		if (strcmp(w->meta[i].name, name) == 0) {
			v = strdup(value);
			if (v) {
				free(w->meta[i].value);
				w->meta[i].value = v;
			}
			return;
		}
	meta = realloc(w->meta, (w->nmeta + 1) * sizeof(*meta));
	if (!meta)
		return;
	w->meta = meta;
	n = strdup(name);
	v = strdup(value);
	if (!n || !v) {
		free(n);
		free(v);
		return;
	}
	w->meta[w->nmeta].name = n;
	w->meta[w->nmeta].value = v;
	w->nmeta++;
}
