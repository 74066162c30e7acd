/*
 * The trace writer: SQLite file creation, prepared inserts, string interning, and metadata
 * (see writer.h). Runs on the collector's writer thread only.
 *
 * Size matters here: a launch-bound program records a kernel row and an API row per launch, and we
 * aim at about 100 bytes on disk for both (the API table's correlationId is its primary key, so the
 * kernel -> launch join needs no index). Timestamps are stored relative
 * to the trace origin (small varints), optional columns stay NULL (zero bytes), and names are
 * StringIds ids. SQLite settings: synchronous=OFF (we guard against a killed process, not a power
 * cut: committed pages are in the OS's cache) and the default rollback journal, so the file is a
 * complete database after every commit and a single file at the end.
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
#include "collector/writer.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <unistd.h>

#include <sqlite3.h>

#include "collector/gpu_metrics.h"
#include "collector/hash.h"
#include "collector/names.h"
#include "collector/schema_sql.h"
#include "collector/schema_version.h"
#include "collector/threads.h"
#include "collector/trace_path.h"
#include "collector/windows.h"

#ifndef GPT_TRACE_VERSION
#define GPT_TRACE_VERSION "unknown"
#endif

#define WRITER_BUSY_TIMEOUT_MS 30000	/* how long a commit waits for readers of a live trace */

enum stmt_id {
	ST_KERNEL,
	ST_MEMCPY,
	ST_MEMSET,
	ST_SYNC,
	ST_API,
	ST_NVTX,
	ST_STRING,
	ST_META,
	ST_GPU_METRIC,
	ST_GPU_METRIC_INFO,
	ST_GPT_GPU_METRICS,
	ST_MEMORY,
	ST_MEMPOOL,
	ST_COUNT,
};

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
	[ST_GPU_METRIC] = "INSERT INTO GPU_METRICS (rawTimestamp, timestamp, typeId, metricId, value) "
			  "VALUES (?,?,?,?,?)",
	[ST_GPU_METRIC_INFO] = "INSERT INTO TARGET_INFO_GPU_METRICS (typeId, sourceId, typeName, "
			       "metricId, metricName) VALUES (?,?,?,?,?)",
	[ST_GPT_GPU_METRICS] = "INSERT INTO GPT_GPU_METRICS (start, end, deviceId, smCyclesElapsed, "
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

enum row_counter {
	COUNT_KERNEL,
	COUNT_MEMCPY,
	COUNT_MEMSET,
	COUNT_SYNC,
	COUNT_API,
	COUNT_NVTX,
	COUNT_API_DUPLICATE,
	COUNT_MEMORY,
	COUNT_MEMPOOL,
	COUNT_MEMORY_DROPPED,
	COUNT_MAX,
};

static const char *const count_meta_name[COUNT_MAX] = {
	"kernel_records", "memcpy_records", "memset_records",
	"sync_records",	  "api_records",    "nvtx_records",
	"api_records_duplicate",
	"memory_records", "mempool_records", "memory_records_dropped",
};

struct kernel_names {
	int64_t demangled, short_name, mangled;
};

struct meta_fact {
	char *name, *value;
};

/* A stream a row ran on, or CUPTI described: one TARGET_INFO_CUDA_STREAM row. */
struct stream_info {
	uint32_t context_id, stream_id, device_id;
	uint32_t priority;
	int flag;			/* ENUM_CUPTI_STREAM_TYPE, when described */
	int described;			/* CUPTI sent a stream record for it */
};

struct writer {
	struct writer_options options;
	char *pattern;			/* options.path, copied */
	char path[4096];
	int created, failed;
	char error[1024];

	sqlite3 *db;
	sqlite3_stmt *stmt[ST_COUNT];
	int64_t global_pid;
	uint64_t last_commit_ns;

	int64_t next_string_id;
	struct strmap strings;
	struct strmap kernel_name_index;	/* mangled name -> index into kernel_names */
	struct kernel_names *kernel_names;
	size_t nkernel_names, kernel_names_capacity;
	int64_t *api_names[2];			/* [event_class][cbid] -> StringIds id + 1 */
	size_t api_names_len[2];

	struct device_row *devices;
	char **device_names;
	size_t ndevices;
	struct context_row *contexts;
	size_t ncontexts;
	struct u64map stream_index;		/* contextId << 32 | streamId -> 1 + index */
	struct stream_info *streams;
	size_t nstreams, streams_capacity;
	uint64_t last_stream;			/* key of the last row's stream ... */
	int has_last_stream;			/* ... once there was one */

	struct threads threads;
	uint64_t thread_names_fallback;		/* ThreadNames rows named by their tid */

	struct meta_fact *meta;
	size_t nmeta;

	uint64_t counts[COUNT_MAX];
	uint64_t untimed;

	/* Capture windows and --max-size (windows.h; the block "Capture windows" below). */
	struct capture_windows windows;
	uint64_t rows_since_size_check;
	uint64_t page_size;
	/* GPU metrics: per device, the GPU_METRICS metrics described in TARGET_INFO_GPU_METRICS. */
	struct gpu_metrics_seen {
		uint32_t device_id;
		unsigned described;	/* bit per enum gpu_metric_row */
	} *gpu_metrics_seen;
	size_t ngpu_metrics_seen;
	uint64_t gpu_metric_samples;
	uint64_t gpu_metric_samples_idle;	/* not stored (gpu_metrics_idle) */
};

static void writer_fail(struct writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void writer_fail(struct writer *w, const char *fmt, ...)
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

static int writer_sql_failed(struct writer *w)
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

static int writer_exec(struct writer *w, const char *sql)
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

struct writer *writer_new(const struct writer_options *options)
{
	struct writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->options = *options;
	w->pattern = strdup(options->path ? options->path : "");
	if (!w->pattern) {
		free(w);
		return NULL;
	}
	w->options.path = w->pattern;
	if (!w->options.time_origin_utc_ns) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		w->options.time_origin_utc_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	}
	w->global_pid = (int64_t)options->pid << 24;
	w->next_string_id = 1;
	threads_init(&w->threads, options->pid);
	return w;
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

static int writer_put_all_meta(struct writer *w)
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
static int writer_create(struct writer *w)
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

static inline int writer_ready(struct writer *w)
{
	if (w->failed)
		return -1;
	if (!w->created)
		return writer_create(w);
	return 0;
}

static int writer_gated(struct writer *w, uint64_t start);

static int writer_step(struct writer *w, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return writer_sql_failed(w);
	return 0;
}

static int64_t rel(const struct writer *w, uint64_t ts)
{
	return (int64_t)(ts - w->options.time_origin);
}

static void bind_gpu_times(const struct writer *w, sqlite3_stmt *st, uint64_t start, uint64_t end)
{
	sqlite3_bind_int64(st, 1, rel(w, start));
	sqlite3_bind_int64(st, 2, rel(w, end));
}

/*
 * The seven columns every GPU-event table starts with (start, end, deviceId, contextId, streamId,
 * correlationId, globalPid), bound in that order; the caller binds from column 8 on.
 */
static void bind_gpu_event(const struct writer *w, sqlite3_stmt *st, uint64_t start, uint64_t end,
			   int64_t device_id, uint32_t context_id, uint32_t stream_id,
			   uint32_t correlation_id)
{
	sqlite3_bind_int64(st, 1, rel(w, start));
	sqlite3_bind_int64(st, 2, rel(w, end));
	sqlite3_bind_int64(st, 3, device_id);
	sqlite3_bind_int64(st, 4, context_id);
	sqlite3_bind_int64(st, 5, stream_id);
	sqlite3_bind_int64(st, 6, correlation_id);
	sqlite3_bind_int64(st, 7, w->global_pid);
}

static void bind_optional_id(sqlite3_stmt *st, int col, uint32_t id)
{
	if (id == ROW_NO_ID)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, id);
}

static void bind_nonzero(sqlite3_stmt *st, int col, uint64_t v)
{
	if (v == 0)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, (int64_t)v);
}

/* The entry of (context, stream), added if new; NULL when out of memory. */
static struct stream_info *writer_stream_info(struct writer *w, uint32_t context_id,
					      uint32_t stream_id)
{
	uint64_t key = (uint64_t)context_id << 32 | stream_id;
	uint64_t *found = u64map_get(&w->stream_index, key);
	struct stream_info *stream;

	if (found)
		return &w->streams[*found - 1];
	if (w->nstreams == w->streams_capacity) {
		size_t cap = w->streams_capacity ? w->streams_capacity * 2 : 16;
		struct stream_info *grown = realloc(w->streams, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		w->streams = grown;
		w->streams_capacity = cap;
	}
	if (u64map_put(&w->stream_index, key, w->nstreams + 1) < 0)
		return NULL;
	stream = &w->streams[w->nstreams++];
	memset(stream, 0, sizeof(*stream));
	stream->context_id = context_id;
	stream->stream_id = stream_id;
	stream->device_id = ROW_NO_ID;
	return stream;
}

/* A GPU row ran on (context, stream): TARGET_INFO_CUDA_STREAM gets a row for every such stream. */
static void writer_see_stream(struct writer *w, uint32_t device_id, uint32_t context_id,
			      uint32_t stream_id)
{
	uint64_t key = (uint64_t)context_id << 32 | stream_id;
	struct stream_info *stream;

	/* Most rows run on the stream of the row before: one comparison. */
	if (w->has_last_stream && key == w->last_stream)
		return;
	stream = writer_stream_info(w, context_id, stream_id);
	if (!stream)
		return;	/* out of memory only costs the stream's row */
	if (stream->device_id == ROW_NO_ID)
		stream->device_id = device_id;
	w->last_stream = key;
	w->has_last_stream = 1;
}

int writer_intern(struct writer *w, const char *s, size_t len, int64_t *id)
{
	sqlite3_stmt *st;
	int64_t found;

	if (writer_ready(w) < 0)
		return -1;
	found = strmap_get(&w->strings, s, len);
	if (found >= 0) {
		*id = found;
		return 0;
	}
	st = w->stmt[ST_STRING];
	sqlite3_bind_int64(st, 1, w->next_string_id);
	sqlite3_bind_text(st, 2, s, (int)len, SQLITE_STATIC);
	if (writer_step(w, st) < 0)
		return -1;
	if (strmap_put(&w->strings, s, len, w->next_string_id) < 0) {
		writer_fail(w, "cannot write trace '%s': out of memory", w->path);
		return -1;
	}
	*id = w->next_string_id++;
	return 0;
}

static int writer_intern_str(struct writer *w, const char *s, int64_t *id)
{
	return writer_intern(w, s, strlen(s), id);
}

/* The three name ids of a kernel; demangling happens once per distinct name. */
static int writer_kernel_names(struct writer *w, const char *mangled, struct kernel_names **out)
{
	size_t len = strlen(mangled);
	int64_t index = strmap_get(&w->kernel_name_index, mangled, len);
	struct kernel_names names;
	char *demangled;
	const char *short_name;
	size_t short_len;
	int rc;

	if (index >= 0) {
		*out = &w->kernel_names[index];
		return 0;
	}
	demangled = name_demangle(mangled);
	short_name = name_short(demangled ? demangled : mangled, &short_len);
	rc = writer_intern(w, mangled, len, &names.mangled);
	if (rc == 0)
		rc = demangled ? writer_intern_str(w, demangled, &names.demangled)
			       : (names.demangled = names.mangled, 0);
	if (rc == 0)
		rc = writer_intern(w, short_name, short_len, &names.short_name);
	free(demangled);
	if (rc < 0)
		return -1;
	if (w->nkernel_names == w->kernel_names_capacity) {
		size_t cap = w->kernel_names_capacity ? w->kernel_names_capacity * 2 : 64;
		struct kernel_names *grown = realloc(w->kernel_names, cap * sizeof(*grown));

		if (!grown)
			goto out_of_memory;
		w->kernel_names = grown;
		w->kernel_names_capacity = cap;
	}
	if (strmap_put(&w->kernel_name_index, mangled, len, (int64_t)w->nkernel_names) < 0)
		goto out_of_memory;
	w->kernel_names[w->nkernel_names] = names;
	*out = &w->kernel_names[w->nkernel_names++];
	return 0;

out_of_memory:
	writer_fail(w, "cannot write trace '%s': out of memory", w->path);
	return -1;
}

int writer_kernel(struct writer *w, const struct kernel_row *r)
{
	sqlite3_stmt *st;
	struct kernel_names *names;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0 ||
	    writer_kernel_names(w, r->name ? r->name : "<unknown>", &names) < 0)
		return -1;
	st = w->stmt[ST_KERNEL];
	bind_gpu_event(w, st, r->start, r->end, r->device_id, r->context_id, r->stream_id,
		       r->correlation_id);
	sqlite3_bind_int64(st, 8, names->demangled);
	sqlite3_bind_int64(st, 9, names->short_name);
	sqlite3_bind_int64(st, 10, names->mangled);
	sqlite3_bind_int(st, 11, r->launch_type);
	sqlite3_bind_int(st, 12, r->cache_config);
	sqlite3_bind_int64(st, 13, r->registers_per_thread);
	sqlite3_bind_int(st, 14, r->grid_x);
	sqlite3_bind_int(st, 15, r->grid_y);
	sqlite3_bind_int(st, 16, r->grid_z);
	sqlite3_bind_int(st, 17, r->block_x);
	sqlite3_bind_int(st, 18, r->block_y);
	sqlite3_bind_int(st, 19, r->block_z);
	sqlite3_bind_int(st, 20, r->static_shared);
	sqlite3_bind_int(st, 21, r->dynamic_shared);
	sqlite3_bind_int64(st, 22, r->local_per_thread);
	sqlite3_bind_int64(st, 23, (int64_t)r->local_total);
	sqlite3_bind_int64(st, 24, r->grid_id);
	sqlite3_bind_int64(st, 25, r->shared_executed);
	bind_nonzero(st, 26, r->graph_node_id);
	sqlite3_bind_int(st, 27, r->shared_mem_limit_config);
	bind_nonzero(st, 28, r->graph_id);
	if (writer_step(w, st) < 0)
		return -1;
	writer_see_stream(w, r->device_id, r->context_id, r->stream_id);
	w->counts[COUNT_KERNEL]++;
	return 0;
}

int writer_memcpy(struct writer *w, const struct memcpy_row *r)
{
	sqlite3_stmt *st;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0)
		return -1;
	st = w->stmt[ST_MEMCPY];
	bind_gpu_event(w, st, r->start, r->end, r->device_id, r->context_id, r->stream_id,
		       r->correlation_id);
	sqlite3_bind_int64(st, 8, (int64_t)r->bytes);
	sqlite3_bind_int(st, 9, r->copy_kind);
	sqlite3_bind_int(st, 10, r->src_kind);
	sqlite3_bind_int(st, 11, r->dst_kind);
	bind_optional_id(st, 12, r->src_device);
	bind_optional_id(st, 13, r->src_context);
	bind_optional_id(st, 14, r->dst_device);
	bind_optional_id(st, 15, r->dst_context);
	bind_nonzero(st, 16, r->graph_node_id);
	if (writer_step(w, st) < 0)
		return -1;
	writer_see_stream(w, r->device_id, r->context_id, r->stream_id);
	w->counts[COUNT_MEMCPY]++;
	return 0;
}

int writer_memset(struct writer *w, const struct memset_row *r)
{
	sqlite3_stmt *st;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0)
		return -1;
	st = w->stmt[ST_MEMSET];
	bind_gpu_event(w, st, r->start, r->end, r->device_id, r->context_id, r->stream_id,
		       r->correlation_id);
	sqlite3_bind_int64(st, 8, r->value);
	sqlite3_bind_int64(st, 9, (int64_t)r->bytes);
	bind_nonzero(st, 10, r->graph_node_id);
	sqlite3_bind_int(st, 11, r->mem_kind);
	if (writer_step(w, st) < 0)
		return -1;
	writer_see_stream(w, r->device_id, r->context_id, r->stream_id);
	w->counts[COUNT_MEMSET]++;
	return 0;
}

/* ---- GPU memory ---- */

static void bind_pool(sqlite3_stmt *st, int col, uint64_t v)
{
	if (v == ROW_NO_POOL)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, (int64_t)v);
}

/* Whether one more memory row fits under the bound; counts the ones that do not. */
static int memory_room(struct writer *w)
{
	uint64_t max = w->options.memory_max ? w->options.memory_max : WRITER_MEMORY_MAX;

	if (w->counts[COUNT_MEMORY] + w->counts[COUNT_MEMPOOL] < max)
		return 1;
	w->counts[COUNT_MEMORY_DROPPED]++;
	return 0;
}

int writer_memory(struct writer *w, const struct memory_row *r)
{
	sqlite3_stmt *st;

	if (writer_ready(w) < 0)
		return -1;
	if (!memory_room(w))
		return 0;
	st = w->stmt[ST_MEMORY];
	sqlite3_bind_int64(st, 1, rel(w, r->start));
	sqlite3_bind_int64(st, 2, w->global_pid);
	sqlite3_bind_int64(st, 3, r->device_id);
	sqlite3_bind_int64(st, 4, r->context_id);
	sqlite3_bind_int64(st, 5, (int64_t)r->address);
	sqlite3_bind_int64(st, 6, (int64_t)r->pc);
	sqlite3_bind_int64(st, 7, (int64_t)r->bytes);
	sqlite3_bind_int(st, 8, r->mem_kind);
	sqlite3_bind_int(st, 9, r->operation);
	if (r->name && r->name[0])
		sqlite3_bind_text(st, 10, r->name, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 10);
	sqlite3_bind_int64(st, 11, r->correlation_id);
	bind_optional_id(st, 12, r->stream_id);
	bind_pool(st, 13, r->pool_address);
	bind_pool(st, 14, r->pool_release_threshold);
	bind_pool(st, 15, r->pool_size);
	bind_pool(st, 16, r->pool_utilized);
	bind_pool(st, 17, r->imported_pool_address);
	bind_pool(st, 18, r->imported_pool_pid);
	if (writer_step(w, st) < 0)
		return -1;
	w->counts[COUNT_MEMORY]++;
	return 0;
}

int writer_mempool(struct writer *w, const struct mempool_row *r)
{
	sqlite3_stmt *st;

	if (writer_ready(w) < 0)
		return -1;
	if (!memory_room(w))
		return 0;
	st = w->stmt[ST_MEMPOOL];
	sqlite3_bind_int64(st, 1, rel(w, r->start));
	sqlite3_bind_int64(st, 2, w->global_pid);
	sqlite3_bind_int64(st, 3, r->device_id);
	sqlite3_bind_int64(st, 4, (int64_t)r->address);
	sqlite3_bind_int(st, 5, r->operation);
	sqlite3_bind_int(st, 6, r->pool_type);
	sqlite3_bind_int64(st, 7, r->correlation_id);
	bind_pool(st, 8, r->min_bytes_to_keep);
	bind_pool(st, 9, r->release_threshold);
	bind_pool(st, 10, r->size);
	bind_pool(st, 11, r->utilized);
	if (writer_step(w, st) < 0)
		return -1;
	w->counts[COUNT_MEMPOOL]++;
	return 0;
}

static uint32_t writer_context_device(const struct writer *w, uint32_t context_id)
{
	for (size_t i = 0; i < w->ncontexts; i++)
		if (w->contexts[i].context_id == context_id)
			return w->contexts[i].device_id;
	/* A context created before tracing began: nearly always device 0 in practice. */
	return 0;
}

int writer_sync(struct writer *w, const struct sync_row *r)
{
	uint32_t device_id = writer_context_device(w, r->context_id);
	sqlite3_stmt *st;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0)
		return -1;
	st = w->stmt[ST_SYNC];
	bind_gpu_event(w, st, r->start, r->end, device_id, r->context_id, r->stream_id,
		       r->correlation_id);
	sqlite3_bind_int(st, 8, r->sync_type);
	sqlite3_bind_int64(st, 9, r->event_id);
	if (writer_step(w, st) < 0)
		return -1;
	/* 4294967295: no stream applies (a context or event synchronization). */
	if (r->stream_id != UINT32_MAX && r->context_id != UINT32_MAX)
		writer_see_stream(w, device_id, r->context_id, r->stream_id);
	w->counts[COUNT_SYNC]++;
	return 0;
}

static int64_t global_tid(uint32_t pid, uint32_t tid)
{
	return thread_global_tid(pid, tid);
}

/* StringIds id of an API function name, cached per (class, cbid). */
static int writer_api_name(struct writer *w, int event_class, uint32_t cbid, int64_t *id)
{
	int64_t **names = &w->api_names[event_class & 1];
	size_t *len = &w->api_names_len[event_class & 1];
	const char *name = NULL;
	char fallback[48];

	if (cbid < *len && (*names)[cbid]) {
		*id = (*names)[cbid] - 1;
		return 0;
	}
	if (cbid >= *len) {
		size_t n = cbid + 64;
		int64_t *grown = realloc(*names, n * sizeof(*grown));

		if (!grown) {
			writer_fail(w, "cannot write trace '%s': out of memory", w->path);
			return -1;
		}
		memset(grown + *len, 0, (n - *len) * sizeof(*grown));
		*names = grown;
		*len = n;
	}
	if (w->options.api_name)
		name = w->options.api_name(event_class, cbid);
	if (!name) {
		snprintf(fallback, sizeof(fallback), "%s_cbid_%u", event_class ? "cu" : "cuda", cbid);
		name = fallback;
	}
	if (writer_intern_str(w, name, id) < 0)
		return -1;
	(*names)[cbid] = *id + 1;
	return 0;
}

int writer_api(struct writer *w, const struct api_row *r)
{
	sqlite3_stmt *st;
	int64_t name_id;
	uint32_t pid;

	if (writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0 || writer_api_name(w, r->event_class, r->cbid, &name_id) < 0)
		return -1;
	pid = r->pid ? r->pid : w->options.pid;
	st = w->stmt[ST_API];
	sqlite3_bind_int64(st, 1, rel(w, r->start));
	sqlite3_bind_int64(st, 2, rel(w, r->end));
	sqlite3_bind_int(st, 3, r->event_class);
	sqlite3_bind_int64(st, 4, global_tid(pid, r->tid));
	sqlite3_bind_int64(st, 5, r->correlation_id);
	sqlite3_bind_int64(st, 6, name_id);
	sqlite3_bind_int64(st, 7, r->return_value);
	if (writer_step(w, st) < 0)
		return -1;
	if (!sqlite3_changes(w->db)) {
		w->counts[COUNT_API_DUPLICATE]++;
		return 0;
	}
	threads_see(&w->threads, pid, r->tid);
	w->counts[COUNT_API]++;
	return 0;
}

int writer_nvtx(struct writer *w, const struct nvtx_row *r)
{
	sqlite3_stmt *st;
	union {
		uint64_t u64;
		int64_t i64;
		double f64;
		uint32_t u32;
		int32_t i32;
		float f32;
	} payload;

	/* Events, not definitions: a domain's name must stay known. */
	if ((r->event_type == NVTX_TYPE_MARK || r->event_type == NVTX_TYPE_PUSHPOP ||
	     r->event_type == NVTX_TYPE_STARTEND) && writer_gated(w, r->start))
		return 0;
	if (writer_ready(w) < 0)
		return -1;
	st = w->stmt[ST_NVTX];
	sqlite3_bind_int64(st, 1, rel(w, r->start));
	if (r->has_end)
		sqlite3_bind_int64(st, 2, rel(w, r->end));
	else
		sqlite3_bind_null(st, 2);
	sqlite3_bind_int(st, 3, r->event_type);
	bind_nonzero(st, 4, r->range_id);
	bind_nonzero(st, 5, r->category);
	if (r->has_color)
		sqlite3_bind_int64(st, 6, r->color);
	else
		sqlite3_bind_null(st, 6);
	if (r->text)
		sqlite3_bind_text(st, 7, r->text, (int)r->text_len, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 7);
	sqlite3_bind_int64(st, 8, global_tid(w->options.pid, r->tid));
	if (r->end_tid)
		sqlite3_bind_int64(st, 9, global_tid(w->options.pid, r->end_tid));
	else
		sqlite3_bind_null(st, 9);
	if (r->text_id >= 0)
		sqlite3_bind_int64(st, 10, r->text_id);
	else
		sqlite3_bind_null(st, 10);
	sqlite3_bind_int64(st, 11, r->domain);
	for (int col = 12; col <= 17; col++)
		sqlite3_bind_null(st, col);
	payload.u64 = r->payload;
	switch (r->payload_type) {
	case 1:
		sqlite3_bind_int64(st, 12, (int64_t)payload.u64);
		break;
	case 2:
		sqlite3_bind_int64(st, 13, payload.i64);
		break;
	case 3:
		sqlite3_bind_double(st, 14, payload.f64);
		break;
	case 4:
		sqlite3_bind_int64(st, 15, payload.u32);
		break;
	case 5:
		sqlite3_bind_int64(st, 16, payload.i32);
		break;
	case 6:
		sqlite3_bind_double(st, 17, payload.f32);
		break;
	}
	if (writer_step(w, st) < 0)
		return -1;
	threads_see(&w->threads, w->options.pid, r->tid);
	if (r->end_tid)
		threads_see(&w->threads, w->options.pid, r->end_tid);
	w->counts[COUNT_NVTX]++;
	return 0;
}

static uint64_t writer_dram_peak(const struct writer *w, uint32_t device_id)
{
	for (size_t i = 0; i < w->ndevices; i++)
		if (w->devices[i].id == device_id)
			return w->devices[i].memory_bandwidth;
	return 0;
}

/* The device's entry in gpu_metrics_seen, added when new (NULL: out of memory). */
static struct gpu_metrics_seen *writer_gpu_metrics_seen(struct writer *w, uint32_t device_id)
{
	struct gpu_metrics_seen *seen;

	for (size_t i = 0; i < w->ngpu_metrics_seen; i++)
		if (w->gpu_metrics_seen[i].device_id == device_id)
			return &w->gpu_metrics_seen[i];
	seen = realloc(w->gpu_metrics_seen, (w->ngpu_metrics_seen + 1) * sizeof(*seen));
	if (!seen)
		return NULL;
	w->gpu_metrics_seen = seen;
	seen += w->ngpu_metrics_seen++;
	seen->device_id = device_id;
	seen->described = 0;
	return seen;
}

/* TARGET_INFO_GPU_METRICS rows for the metrics in mask not described yet for this device. */
static int writer_gpu_metrics_describe(struct writer *w, struct gpu_metrics_seen *seen,
				       unsigned mask)
{
	sqlite3_stmt *st = w->stmt[ST_GPU_METRIC_INFO];
	char type_name[96];

	snprintf(type_name, sizeof(type_name), "GPU %u PM sampling (gpt-trace)", seen->device_id);
	for (int m = 0; m < GPR_NR; m++) {
		if (!(mask & ~seen->described & (1u << m)))
			continue;
		sqlite3_bind_int64(st, 1, GPU_METRICS_TYPE_ID(seen->device_id));
		sqlite3_bind_int64(st, 2, seen->device_id);
		sqlite3_bind_text(st, 3, type_name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, m);
		sqlite3_bind_text(st, 5, gpu_metric_row_names[m], -1, SQLITE_STATIC);
		if (writer_step(w, st) < 0)
			return -1;
		seen->described |= 1u << m;
	}
	return 0;
}

static int writer_gpu_sample(struct writer *w, struct gpu_metrics_seen *seen, uint64_t dram_peak,
			     const struct gpu_metrics_sample *s)
{
	sqlite3_stmt *st = w->stmt[ST_GPT_GPU_METRICS];
	int64_t values[GPR_NR];
	unsigned mask;

	if (gpu_metrics_idle(s)) {
		w->gpu_metric_samples_idle++;
		return 0;
	}
	bind_gpu_times(w, st, s->start, s->end);
	sqlite3_bind_int64(st, 3, seen->device_id);
	for (int i = 0; i < GPU_METRICS_GPT_COLUMNS; i++) {
		double v = s->value[gpu_metrics_gpt_columns[i]];

		if (isnan(v) || isinf(v))
			sqlite3_bind_null(st, 4 + i);
		else
			sqlite3_bind_double(st, 4 + i, v);
	}
	if (writer_step(w, st) < 0)
		return -1;
	mask = gpu_metrics_derive(s, dram_peak, values);
	if ((mask & ~seen->described) && writer_gpu_metrics_describe(w, seen, mask) < 0)
		return -1;
	st = w->stmt[ST_GPU_METRIC];
	for (int m = 0; m < GPR_NR; m++) {
		if (!(mask & (1u << m)))
			continue;
		sqlite3_bind_int64(st, 1, (int64_t)s->start);
		sqlite3_bind_int64(st, 2, rel(w, s->start));
		sqlite3_bind_int64(st, 3, GPU_METRICS_TYPE_ID(seen->device_id));
		sqlite3_bind_int64(st, 4, m);
		sqlite3_bind_int64(st, 5, values[m]);
		if (writer_step(w, st) < 0)
			return -1;
	}
	w->gpu_metric_samples++;
	return 0;
}

int writer_gpu_metrics(struct writer *w, const struct gpu_metrics_batch *batch)
{
	struct gpu_metrics_seen *seen;
	uint64_t dram_peak;

	if (!batch->count || writer_ready(w) < 0)
		return w->failed ? -1 : 0;
	seen = writer_gpu_metrics_seen(w, batch->device_id);
	if (!seen)
		return 0;
	dram_peak = writer_dram_peak(w, batch->device_id);
	for (size_t i = 0; i < batch->count; i++)
		if (writer_gpu_sample(w, seen, dram_peak, &batch->samples[i]) < 0)
			return -1;
	return 0;
}

void writer_device(struct writer *w, const struct device_row *r)
{
	struct device_row *devices;
	char **names;
	size_t i;

	for (i = 0; i < w->ndevices; i++)
		if (w->devices[i].id == r->id)
			break;
	if (i == w->ndevices) {
		devices = realloc(w->devices, (w->ndevices + 1) * sizeof(*devices));
		if (!devices)
			return;
		w->devices = devices;
		names = realloc(w->device_names, (w->ndevices + 1) * sizeof(*names));
		if (!names)
			return;
		w->device_names = names;
		w->device_names[i] = NULL;
		w->ndevices++;
	}
	w->devices[i] = *r;
	/* CUPTI owns the name only while the record lives. */
	free(w->device_names[i]);
	w->device_names[i] = r->name ? strdup(r->name) : NULL;
	w->devices[i].name = w->device_names[i];
}

void writer_context(struct writer *w, const struct context_row *r)
{
	struct context_row *contexts;

	for (size_t i = 0; i < w->ncontexts; i++)
		if (w->contexts[i].context_id == r->context_id) {
			w->contexts[i] = *r;
			return;
		}
	contexts = realloc(w->contexts, (w->ncontexts + 1) * sizeof(*contexts));
	if (!contexts)
		return;
	w->contexts = contexts;
	w->contexts[w->ncontexts++] = *r;
}

void writer_stream(struct writer *w, const struct stream_row *r)
{
	struct stream_info *stream = writer_stream_info(w, r->context_id, r->stream_id);

	if (!stream)
		return;
	stream->priority = r->priority;
	stream->flag = r->flag;
	stream->described = 1;
}

void writer_thread_name(struct writer *w, uint32_t tid, const char *name, size_t len)
{
	threads_set_nvtx_name(&w->threads, w->options.pid, tid, name, len);
}

void writer_thread_reported_name(struct writer *w, uint32_t tid, const char *name, size_t len,
				 int has_priority, int priority)
{
	threads_set_reported_name(&w->threads, w->options.pid, tid, name, len, has_priority,
				  priority);
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

/*
 * Capture windows (windows.h) and --max-size. The size is the main file's, read from SQLite's own
 * page count (uncommitted pages included) every WRITER_SIZE_CHECK_ROWS kept rows: about 100 KB of
 * rows, the most a trace can pass its limit by, besides the tables written at the end.
 */
#define WRITER_SIZE_CHECK_ROWS 1024

static uint64_t writer_file_bytes(struct writer *w)
{
	sqlite3_stmt *st;
	uint64_t pages = 0;

	if (!w->page_size && sqlite3_prepare_v2(w->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			w->page_size = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (sqlite3_prepare_v2(w->db, "PRAGMA page_count", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			pages = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return pages * (w->page_size ? w->page_size : 4096);
}

/* Whether a row starting at `start` stays out of the trace. */
static int writer_gated(struct writer *w, uint64_t start)
{
	uint64_t bytes;

	if (!w->windows.gated)
		return 0;
	if (!windows_keep(&w->windows, start))
		return 1;
	if (!w->options.max_size || !w->created || w->failed ||
	    ++w->rows_since_size_check < WRITER_SIZE_CHECK_ROWS)
		return 0;
	w->rows_since_size_check = 0;
	bytes = writer_file_bytes(w);
	if (bytes < w->options.max_size)
		return 0;
	windows_fill(&w->windows, start);
	if (w->options.full)
		w->options.full(w->path, bytes, rel(w, start));
	return 1;
}

/* GPT_CAPTURE_WINDOWS, rewritten whenever the windows changed (a handful of rows). */
static int writer_put_windows(struct writer *w)
{
	static const char sql[] = "INSERT INTO GPT_CAPTURE_WINDOWS (id, start, end, openedBy, "
				  "closedBy) VALUES (?, ?, ?, ?, ?)";
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	if (!w->windows.changed || !w->created || w->failed)
		return 0;
	if (writer_exec(w, "DELETE FROM GPT_CAPTURE_WINDOWS") < 0)
		return -1;
	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		return writer_sql_failed(w);
	for (size_t i = 0; i < w->windows.count && rc == SQLITE_DONE; i++) {
		const struct capture_window *win = &w->windows.list[i];

		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_int64(st, 2, rel(w, win->start));
		if (win->end == WINDOW_OPEN_END)
			sqlite3_bind_null(st, 3);
		else
			sqlite3_bind_int64(st, 3, rel(w, win->end));
		sqlite3_bind_text(st, 4, win->opened, -1, SQLITE_STATIC);
		if (win->closed[0])
			sqlite3_bind_text(st, 5, win->closed, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 5);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return writer_sql_failed(w);
	w->windows.changed = 0;
	return 0;
}

void writer_window(struct writer *w, enum writer_window_event event, uint64_t at, const char *why)
{
	char value[32];

	switch (event) {
	case WRITER_WINDOW_GATE:
		windows_gate(&w->windows);
		break;
	case WRITER_WINDOW_OPEN:
		if (windows_open(&w->windows, at, why) < 0)
			writer_meta(w, "capture_windows_lost", "1");
		break;
	case WRITER_WINDOW_CLOSE:
		windows_close(&w->windows, at, why);
		break;
	case WRITER_WINDOW_END:
		windows_end(&w->windows, at, why);
		if (!w->windows.gated)
			break;
		/*
		 * A process whose activity all fell outside the windows still leaves a trace saying so
		 * (GPT_META, the windows); one that recorded nothing at all leaves none, as before.
		 */
		if (w->windows.dropped && writer_ready(w) < 0)
			break;
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->windows.dropped);
		writer_meta(w, "capture_records_outside", value);
		break;
	}
}

void writer_count_untimed(struct writer *w)
{
	w->untimed++;
}

int writer_tick(struct writer *w, uint64_t now_ns, uint64_t interval_ns)
{
	if (w->failed || !w->created || now_ns - w->last_commit_ns < interval_ns)
		return 0;
	if (writer_put_windows(w) < 0 || writer_exec(w, "COMMIT; BEGIN") < 0)
		return -1;
	w->last_commit_ns = now_ns;
	return 0;
}

static void format_uuid(const uint8_t *u, char *out, size_t len)
{
	snprintf(out, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
}

static int writer_finish_devices(struct writer *w)
{
	static const char sql[] =
		"INSERT INTO TARGET_INFO_GPU (vmId, id, name, l2CacheSize, totalMemory, "
		"memoryBandwidth, clockRate, smCount, uuid, cuDevice, constantMemory, maxIPC, "
		"maxRegistersPerBlock, maxShmemPerBlock, maxShmemPerSm, maxRegistersPerSm, "
		"threadsPerWarp, maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock, maxBlockDimX, "
		"maxBlockDimY, maxBlockDimZ, maxGridDimX, maxGridDimY, maxGridDimZ, computeMajor, "
		"computeMinor, smMajor, smMinor) VALUES (0,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		"?,?,?,?,?,?,?,?)";
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		return writer_sql_failed(w);
	for (size_t i = 0; i < w->ndevices; i++) {
		const struct device_row *d = &w->devices[i];
		char uuid[40];
		int col = 1;

		format_uuid(d->uuid, uuid, sizeof(uuid));
		sqlite3_bind_int64(st, col++, d->id);
		sqlite3_bind_text(st, col++, d->name ? d->name : "", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, col++, d->l2_cache_size);
		sqlite3_bind_int64(st, col++, (int64_t)d->total_memory);
		sqlite3_bind_int64(st, col++, (int64_t)d->memory_bandwidth);
		sqlite3_bind_int64(st, col++, (int64_t)d->clock_rate);
		sqlite3_bind_int64(st, col++, d->sm_count);
		sqlite3_bind_text(st, col++, uuid, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, col++, d->id);
		sqlite3_bind_int64(st, col++, d->constant_memory);
		sqlite3_bind_int64(st, col++, d->max_ipc);
		sqlite3_bind_int64(st, col++, d->max_registers_per_block);
		sqlite3_bind_int64(st, col++, d->max_shmem_per_block);
		sqlite3_bind_int64(st, col++, d->max_shmem_per_sm);
		sqlite3_bind_int64(st, col++, d->max_registers_per_sm);
		sqlite3_bind_int64(st, col++, d->threads_per_warp);
		sqlite3_bind_int64(st, col++, d->max_warps_per_sm);
		sqlite3_bind_int64(st, col++, d->max_blocks_per_sm);
		sqlite3_bind_int64(st, col++, d->max_threads_per_block);
		for (int k = 0; k < 3; k++)
			sqlite3_bind_int64(st, col++, d->max_block_dim[k]);
		for (int k = 0; k < 3; k++)
			sqlite3_bind_int64(st, col++, d->max_grid_dim[k]);
		sqlite3_bind_int64(st, col++, d->compute_major);
		sqlite3_bind_int64(st, col++, d->compute_minor);
		sqlite3_bind_int64(st, col++, d->compute_major);
		sqlite3_bind_int64(st, col++, d->compute_minor);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return writer_sql_failed(w);
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
}

/* Read a small /proc file into buf (NUL-terminated); returns its length or -1. */
static ssize_t read_small_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* A process's name as nsys's PROCESSES has it: argv[0], else its comm, else "?". */
static void process_name(const struct writer *w, uint32_t pid, char *name, size_t len)
{
	char path[64];

	if (pid == w->options.pid)
		snprintf(path, sizeof(path), "/proc/self/cmdline");
	else
		snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	if (read_small_file(path, name, len) > 0)
		return;	/* argv[0]: the text up to the first NUL */
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (pid != w->options.pid && read_small_file(path, name, len) > 0) {
		name[strcspn(name, "\n")] = '\0';
		return;
	}
	snprintf(name, len, "?");
}

/* PROCESSES: the traced process, and any other process a row names (CUPTI's API records). */
static int writer_finish_processes(struct writer *w)
{
	uint32_t *pids = NULL;
	size_t npids = 0;
	char name[4096];
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	pids = malloc((w->threads.count + 1) * sizeof(*pids));
	if (!pids) {
		writer_fail(w, "cannot write trace '%s': out of memory", w->path);
		return -1;
	}
	pids[npids++] = w->options.pid;
	for (size_t i = 0; i < w->threads.count; i++) {
		size_t j = 0;

		while (j < npids && pids[j] != w->threads.items[i].pid)
			j++;
		if (j == npids)
			pids[npids++] = w->threads.items[i].pid;
	}
	if (sqlite3_prepare_v2(w->db, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK) {
		free(pids);
		return writer_sql_failed(w);
	}
	for (size_t i = 0; i < npids && rc == SQLITE_DONE; i++) {
		process_name(w, pids[i], name, sizeof(name));
		sqlite3_bind_int64(st, 1, (int64_t)pids[i] << 24);
		sqlite3_bind_int64(st, 2, pids[i]);
		sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	free(pids);
	return rc == SQLITE_DONE ? 0 : writer_sql_failed(w);
}

/*
 * ThreadNames: one row per thread any row names. The names of threads still alive are read again
 * here, so that a thread that renamed itself after its first recorded call has its final name;
 * threads gone keep the name read when they were first seen.
 */
static int writer_finish_threads(struct writer *w)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(w->db, "INSERT INTO ThreadNames (nameId, priority, globalTid) "
				      "VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return writer_sql_failed(w);
	for (size_t i = 0; i < w->threads.count; i++) {
		struct thread_info *thread = &w->threads.items[i];
		const char *name;
		char tid_text[16];
		int64_t name_id;
		int fallback;

		threads_read(&w->threads, thread);
		name = thread_name(thread, tid_text, sizeof(tid_text), &fallback);
		w->thread_names_fallback += fallback;
		if (writer_intern_str(w, name, &name_id) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
		sqlite3_bind_int64(st, 1, name_id);
		if (thread->has_priority)
			sqlite3_bind_int64(st, 2, thread->priority);
		else
			sqlite3_bind_null(st, 2);
		sqlite3_bind_int64(st, 3, global_tid(thread->pid, thread->tid));
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return writer_sql_failed(w);
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
}

static const struct context_row *writer_context_row(const struct writer *w, uint32_t context_id)
{
	for (size_t i = 0; i < w->ncontexts; i++)
		if (w->contexts[i].context_id == context_id)
			return &w->contexts[i];
	return NULL;
}

/*
 * TARGET_INFO_CUDA_CONTEXT_INFO and TARGET_INFO_CUDA_STREAM, as nsys fills them from the same CUPTI
 * records (hwId and vmId 0: our globalPid carries no host bits either). A context or stream known
 * only from the rows that ran on it (CUPTI described none: created before tracing began, or the
 * stream activity kind unavailable) gets a row too: nullStreamId 0 for such a context; for such a
 * stream priority 0 and flag 3 (NULL stream) when it is its context's NULL stream, else 0 (unknown).
 */
static int writer_finish_cuda_targets(struct writer *w)
{
	sqlite3_stmt *ctx = NULL, *str = NULL;
	int rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(w->db, "INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId, hwId, "
				      "vmId, processId, deviceId, contextId, parentContextId, "
				      "isGreenContext) VALUES (?, 0, 0, ?, ?, ?, ?, ?)",
			       -1, &ctx, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(w->db, "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, "
				      "processId, contextId, priority, flag) VALUES (?, 0, 0, ?, ?, ?, ?)",
			       -1, &str, NULL) != SQLITE_OK)
		goto out_failed;
	for (size_t i = 0; i < w->ncontexts && rc == SQLITE_DONE; i++) {
		const struct context_row *c = &w->contexts[i];

		sqlite3_bind_int64(ctx, 1, c->null_stream_id);
		sqlite3_bind_int64(ctx, 2, w->options.pid);
		sqlite3_bind_int64(ctx, 3, c->device_id);
		sqlite3_bind_int64(ctx, 4, c->context_id);
		sqlite3_bind_int64(ctx, 5, c->parent_context_id);
		sqlite3_bind_int(ctx, 6, c->is_green_context);
		rc = sqlite3_step(ctx);
		sqlite3_reset(ctx);
	}
	for (size_t i = 0; i < w->nstreams && rc == SQLITE_DONE; i++) {
		const struct stream_info *s = &w->streams[i];
		const struct context_row *c = writer_context_row(w, s->context_id);
		size_t first;
		int flag;

		/* A context only the rows name: one row, from the first of its streams. */
		for (first = 0; first < i && w->streams[first].context_id != s->context_id; first++)
			;
		if (!c && first == i) {
			sqlite3_bind_int64(ctx, 1, 0);
			sqlite3_bind_int64(ctx, 2, w->options.pid);
			sqlite3_bind_int64(ctx, 3, s->device_id == ROW_NO_ID ? 0 : s->device_id);
			sqlite3_bind_int64(ctx, 4, s->context_id);
			sqlite3_bind_int64(ctx, 5, 0);
			sqlite3_bind_int(ctx, 6, 0);
			rc = sqlite3_step(ctx);
			sqlite3_reset(ctx);
			if (rc != SQLITE_DONE)
				break;
		}
		sqlite3_bind_int64(str, 1, s->stream_id);
		sqlite3_bind_int64(str, 2, w->options.pid);
		sqlite3_bind_int64(str, 3, s->context_id);
		if (s->described)
			flag = s->flag;
		else
			flag = c && c->null_stream_id == s->stream_id ? CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL
								      : CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN;
		sqlite3_bind_int64(str, 4, s->described ? s->priority : 0);
		sqlite3_bind_int(str, 5, flag);
		rc = sqlite3_step(str);
		sqlite3_reset(str);
	}
	if (rc != SQLITE_DONE)
		goto out_failed;
	sqlite3_finalize(ctx);
	sqlite3_finalize(str);
	return 0;

out_failed:
	sqlite3_finalize(ctx);
	sqlite3_finalize(str);
	return writer_sql_failed(w);
}

static int writer_finish_session_start(struct writer *w)
{
	time_t secs = (time_t)(w->options.time_origin_utc_ns / 1000000000ull);
	char utc[40], local[40], sql[256];
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(utc, sizeof(utc), "%Y-%m-%dT%H:%M:%S", &tm);
	localtime_r(&secs, &tm);
	strftime(local, sizeof(local), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(sql, sizeof(sql), "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (%llu, '%s', '%s')",
		 (unsigned long long)w->options.time_origin_utc_ns, utc, local);
	return writer_exec(w, sql);
}

static int writer_finish_meta(struct writer *w, uint64_t dropped)
{
	char value[32];

	snprintf(value, sizeof(value), "%llu", (unsigned long long)dropped);
	writer_meta(w, "cupti_dropped_records", value);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)w->untimed);
	writer_meta(w, "untimed_records", value);
	for (int i = 0; i < COUNT_MAX; i++) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->counts[i]);
		writer_meta(w, count_meta_name[i], value);
	}
	if (w->thread_names_fallback) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->thread_names_fallback);
		writer_meta(w, "thread_names_fallback", value);
	}
	if (w->gpu_metric_samples || w->gpu_metric_samples_idle) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->gpu_metric_samples);
		writer_meta(w, "gpu_metric_samples", value);
		snprintf(value, sizeof(value), "%llu", (unsigned long long)w->gpu_metric_samples_idle);
		writer_meta(w, "gpu_metric_samples_idle", value);
	}
	writer_meta(w, "trace_complete", "1");
	return writer_put_all_meta(w);
}

int writer_finish(struct writer *w, uint64_t dropped)
{
	if (w->failed)
		return -1;
	if (!w->created)
		return 0;
	if (writer_finish_devices(w) < 0 || writer_finish_processes(w) < 0 ||
	    writer_finish_threads(w) < 0 || writer_finish_cuda_targets(w) < 0 ||
	    writer_finish_session_start(w) < 0 || writer_put_windows(w) < 0 ||
	    writer_finish_meta(w, dropped) < 0)
		return -1;
	if (writer_exec(w, "COMMIT") < 0)
		return -1;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(w->stmt[i]);
	memset(w->stmt, 0, sizeof(w->stmt));
	if (sqlite3_close(w->db) != SQLITE_OK)
		return writer_sql_failed(w);
	w->db = NULL;
	return 1;
}

const char *writer_error(const struct writer *w)
{
	return w->failed ? w->error : NULL;
}

const char *writer_path(const struct writer *w)
{
	return w->created ? w->path : NULL;
}

void writer_free(struct writer *w)
{
	if (!w)
		return;
	if (w->db) {
		for (int i = 0; i < ST_COUNT; i++)
			sqlite3_finalize(w->stmt[i]);
		sqlite3_close(w->db);
	}
	strmap_release(&w->strings);
	strmap_release(&w->kernel_name_index);
	free(w->kernel_names);
	free(w->api_names[0]);
	free(w->api_names[1]);
	for (size_t i = 0; i < w->ndevices; i++)
		free(w->device_names[i]);
	free(w->device_names);
	free(w->devices);
	free(w->contexts);
	free(w->gpu_metrics_seen);
	u64map_release(&w->stream_index);
	free(w->streams);
	threads_release(&w->threads);
	windows_release(&w->windows);
	for (size_t i = 0; i < w->nmeta; i++) {
		free(w->meta[i].name);
		free(w->meta[i].value);
	}
	free(w->meta);
	free(w->pattern);
	free(w);
}
