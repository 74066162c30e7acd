/*
 * The trace loader (see trace.h): checks each file before SQLite sees it (a PyTorch profiler JSON
 * trace is imported first, into a cache), opens the first read-only and ATTACHes the others, tells our traces from nsys exports, and builds the canonical TEMP views by
 * introspection. Nothing here knows nsys versions: each view column is described once, with the
 * source columns it needs; a column whose source is missing in a file reads NULL there, and a table
 * missing from a file contributes a typed, empty SELECT. That is how lazily created nsys tables, old
 * schemas (no NVTX_EVENTS, EXPORT_META_DATA) and our own writer all read the same.
 *
 * Every view exists twice: gpt_all_<view> over the whole trace (private to the analyzer) and
 * <view>, the same rows restricted to the scope of trace_set_scope(). Views are plain SQL, so memory
 * stays with SQLite's page cache however large the trace is.
 */
#include "loader/trace.h"
#include "loader/trace-private.h"
#include "common/util.h"
#include "import/kineto.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * PRAGMA quick_check reads every page: about 0.5 s of CPU per 100 MB, as much as a statistics pass.
 * Files up to this size get it; bigger ones get the header check and the b-tree probes of
 * check_integrity(), and damage elsewhere surfaces as SQLITE_CORRUPT ("database disk image is
 * malformed") from the query that reads it.
 */
#define QUICK_CHECK_MAX_BYTES (32LL << 20)

/* The source tables the views read; indexes into trace_file.columns. */
enum source_table {
	SRC_STRINGS,
	SRC_KERNEL,
	SRC_MEMCPY,
	SRC_MEMSET,
	SRC_SYNC,
	SRC_RUNTIME,
	SRC_NVTX,
	SRC_GPU,
	SRC_PROCESSES,
	SRC_GPT_META,
	SRC_META_EXPORT,
	SRC_META_EXPORT_OLD,
	SRC_SESSION_START,
	SRC_KERNEL_METRICS,
	SRC_SOURCE_METRICS,
	SRC_CAPTURE_WINDOWS,
	SRC_GPU_METRICS,
	SRC_GPU_METRICS_INFO,
	SRC_MEMORY,
	SRC_COUNT,
};

static const char *const source_names[SRC_COUNT] = {
	[SRC_STRINGS] = "StringIds",
	[SRC_KERNEL] = "CUPTI_ACTIVITY_KIND_KERNEL",
	[SRC_MEMCPY] = "CUPTI_ACTIVITY_KIND_MEMCPY",
	[SRC_MEMSET] = "CUPTI_ACTIVITY_KIND_MEMSET",
	[SRC_SYNC] = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
	[SRC_RUNTIME] = "CUPTI_ACTIVITY_KIND_RUNTIME",
	[SRC_NVTX] = "NVTX_EVENTS",
	[SRC_GPU] = "TARGET_INFO_GPU",
	[SRC_PROCESSES] = "PROCESSES",
	[SRC_GPT_META] = "GPT_META",
	[SRC_META_EXPORT] = "META_DATA_EXPORT",
	[SRC_META_EXPORT_OLD] = "EXPORT_META_DATA",
	[SRC_SESSION_START] = "TARGET_INFO_SESSION_START_TIME",
	[SRC_KERNEL_METRICS] = "GPT_KERNEL_METRICS",
	[SRC_SOURCE_METRICS] = "GPT_SOURCE_METRICS",
	[SRC_CAPTURE_WINDOWS] = "GPT_CAPTURE_WINDOWS",
	[SRC_GPU_METRICS] = "GPU_METRICS",
	[SRC_GPU_METRICS_INFO] = "TARGET_INFO_GPU_METRICS",
	[SRC_MEMORY] = "CUDA_GPU_MEMORY_USAGE_EVENTS",
};

struct trace_file {
	char *path;
	char *open_path;		/* what SQLite opens: path, or its recovered copy */
	char *copy_dir;			/* the recovered copy's temporary folder, NULL when none */
	char schema[24];		/* "main" for the first file, "t1", "t2"... for attached ones */
	enum trace_format format;
	int64_t origin;			/* absolute ns of the file's time zero, 0 when unknown */
	int64_t shift;			/* added to the file's timestamps so that all files line up */
	int64_t nprocess_rows;		/* rows in PROCESSES */
	/* ",col1,col2," per source table, NULL when the table is absent */
	char *columns[SRC_COUNT];
};

struct trace {
	sqlite3 *db;
	struct trace_file *files;
	size_t nfiles;
	/* the scope in force: its window, and whether an NVTX range or a kernel glob narrows it */
	int64_t scope_start, scope_end;
	int scope_ranges, scope_glob;
	struct trace_cache caches[TRACE_CACHES];	/* the modules' above, freed here */
	/* trace_span()'s answers for the scope in force: per file, start and end, and whether known */
	int64_t (*spans)[2];
	unsigned char *span_known;
};

/* How one column of a canonical view is computed from a source row (alias e). */
enum col_kind {
	COL_TRACE_ID,	/* the file's index */
	COL_PLAIN,	/* e.<src> */
	COL_TIME,	/* e.<src> + the file's shift */
	COL_DUR,	/* e.end - e.start */
	COL_PID,	/* pid unpacked from the globalPid/globalTid column <src> */
	COL_TID,	/* tid unpacked from the globalTid column <src> */
	COL_STRING,	/* StringIds value of the id column <src> */
	COL_FIRST_ID,	/* the first non-NULL of the id columns <src>, <src2>, <src3> */
	COL_FIRST_STRING, /* the first non-NULL StringIds value of <src>, <src2>, <src3> */
	COL_INLINE_OR_STRING, /* e.<src> (inline text), else the StringIds value of <src2> */
	COL_META_GLOBALPID, /* pid << 24 from the file's GPT_META (one traced process per file) */
};

struct view_col {
	const char *name;
	enum col_kind kind;
	int text;		/* the column holds text (for a typed NULL) */
	const char *src, *src2, *src3;
};

struct view_spec {
	const char *name;
	enum source_table source;
	const struct view_col *cols;
	size_t ncols;
};

#define EVENT_COLS                                                                                 \
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL }, { "start", COL_TIME, 0, "start", NULL, NULL }, \
	{ "end", COL_TIME, 0, "end", NULL, NULL }, { "dur", COL_DUR, 0, NULL, NULL, NULL }
#define GPU_EVENT_COLS                                                                             \
	EVENT_COLS, { "deviceId", COL_PLAIN, 0, "deviceId", NULL, NULL },                        \
	{ "contextId", COL_PLAIN, 0, "contextId", NULL, NULL },                                    \
	{ "streamId", COL_PLAIN, 0, "streamId", NULL, NULL },                                      \
	{ "correlationId", COL_PLAIN, 0, "correlationId", NULL, NULL },                            \
	{ "globalPid", COL_PLAIN, 0, "globalPid", NULL, NULL },                                    \
	{ "pid", COL_PID, 0, "globalPid", NULL, NULL }
#define PLAIN(c) { c, COL_PLAIN, 0, c, NULL, NULL }
#define PLAIN_TEXT(c) { c, COL_PLAIN, 1, c, NULL, NULL }

static const struct view_col kernel_cols[] = {
	GPU_EVENT_COLS,
	{ "nameId", COL_FIRST_ID, 0, "demangledName", "shortName", "mangledName" },
	{ "name", COL_FIRST_STRING, 1, "demangledName", "shortName", "mangledName" },
	{ "shortName", COL_STRING, 1, "shortName", NULL, NULL },
	{ "shortNameId", COL_PLAIN, 0, "shortName", NULL, NULL },
	{ "mangledName", COL_STRING, 1, "mangledName", NULL, NULL },
	{ "mangledNameId", COL_PLAIN, 0, "mangledName", NULL, NULL },
	PLAIN("gridX"), PLAIN("gridY"), PLAIN("gridZ"), PLAIN("blockX"), PLAIN("blockY"), PLAIN("blockZ"),
	PLAIN("registersPerThread"), PLAIN("staticSharedMemory"), PLAIN("dynamicSharedMemory"),
	PLAIN("localMemoryPerThread"), PLAIN("graphNodeId"), PLAIN("graphId"),
};

static const struct view_col copy_cols[] = {
	GPU_EVENT_COLS, PLAIN("bytes"), PLAIN("copyKind"), PLAIN("srcKind"), PLAIN("dstKind"),
	PLAIN("graphNodeId"),
};

static const struct view_col set_cols[] = {
	GPU_EVENT_COLS, PLAIN("bytes"), PLAIN("value"), PLAIN("memKind"), PLAIN("graphNodeId"),
};

static const struct view_col sync_cols[] = {
	GPU_EVENT_COLS, PLAIN("syncType"), PLAIN("eventId"),
};

static const struct view_col api_cols[] = {
	EVENT_COLS, PLAIN("globalTid"),
	{ "pid", COL_PID, 0, "globalTid", NULL, NULL },
	{ "tid", COL_TID, 0, "globalTid", NULL, NULL },
	PLAIN("correlationId"), PLAIN("nameId"),
	{ "name", COL_STRING, 1, "nameId", NULL, NULL },
	PLAIN("eventClass"), PLAIN("returnValue"),
};

static const struct view_col nvtx_cols[] = {
	EVENT_COLS, PLAIN("globalTid"),
	{ "pid", COL_PID, 0, "globalTid", NULL, NULL },
	{ "tid", COL_TID, 0, "globalTid", NULL, NULL },
	PLAIN("eventType"), PLAIN("rangeId"),
	{ "text", COL_INLINE_OR_STRING, 1, "text", "textId", NULL },
	PLAIN("domainId"), PLAIN("category"), PLAIN("color"),
};

static const struct view_col gpu_cols[] = {
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL },
	PLAIN("id"), PLAIN_TEXT("name"), PLAIN("smCount"), PLAIN("totalMemory"), PLAIN("memoryBandwidth"),
	PLAIN("clockRate"), PLAIN("l2CacheSize"), PLAIN("computeMajor"), PLAIN("computeMinor"),
	PLAIN_TEXT("busLocation"), PLAIN_TEXT("uuid"),
};

static const struct view_col string_cols[] = {
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL }, PLAIN("id"), PLAIN_TEXT("value"),
};

/*
 * Hardware metrics (gpt-trace run --metrics, docs/metrics.md): one row per launch measured by the
 * counters; the SASS rows of GPT_KERNEL_METRICS only lend their ideal share, which the collector has
 * already scaled into the counter rows' gld/gstSectorsIdeal, so counting them again would double the
 * sectors.
 */
static const struct view_col kernel_metrics_cols[] = {
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL },
	PLAIN("correlationId"),
	{ "globalPid", COL_META_GLOBALPID, 0, NULL, NULL, NULL },
	PLAIN("deviceId"), PLAIN_TEXT("kernelName"), PLAIN_TEXT("shortName"),
	PLAIN("gldSectors"), PLAIN("gldRequests"), PLAIN("gstSectors"), PLAIN("gstRequests"),
	PLAIN("gldSectorsIdeal"), PLAIN("gstSectorsIdeal"), PLAIN("durationNs"), PLAIN_TEXT("source"),
};

static const struct view_col source_metrics_cols[] = {
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL },
	PLAIN_TEXT("kernelName"), PLAIN_TEXT("shortName"), PLAIN_TEXT("file"), PLAIN("line"),
	PLAIN("gldSectors"), PLAIN("gldSectorsIdeal"), PLAIN("gldRequests"),
	PLAIN("gstSectors"), PLAIN("gstSectorsIdeal"), PLAIN("gstRequests"), PLAIN("launches"),
};

/*
 * GPU memory allocations and releases (nsys --cuda-memory-usage, ours by default): never scoped,
 * since what is in use at any time depends on every earlier allocation. op: 0 allocation, 1 release
 * (ENUM_CUDA_DEV_MEM_EVENT_OPER); memKind: ENUM_CUDA_MEM_KIND.
 */
static const struct view_col memory_cols[] = {
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL }, { "start", COL_TIME, 0, "start", NULL, NULL },
	PLAIN("deviceId"), PLAIN("contextId"), PLAIN("address"), PLAIN("bytes"), PLAIN("memKind"),
	{ "op", COL_PLAIN, 0, "memoryOperationType", NULL, NULL }, PLAIN("correlationId"), PLAIN("streamId"),
	PLAIN("globalPid"), { "pid", COL_PID, 0, "globalPid", NULL, NULL },
};

static const struct view_col meta_cols[] = {
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL }, PLAIN_TEXT("name"), PLAIN_TEXT("value"),
};

/* Capture windows (gpt-trace run --delay, --capture-range, ...; docs/schema.md). */
static const struct view_col window_cols[] = {
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL }, PLAIN("id"),
	{ "start", COL_TIME, 0, "start", NULL, NULL }, { "end", COL_TIME, 0, "end", NULL, NULL },
	PLAIN_TEXT("openedBy"), PLAIN_TEXT("closedBy"),
};

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

/* The event views, which the scope restricts. */
static const struct view_spec event_views[] = {
	{ "kernels", SRC_KERNEL, kernel_cols, NCOLS(kernel_cols) },
	{ "copies", SRC_MEMCPY, copy_cols, NCOLS(copy_cols) },
	{ "sets", SRC_MEMSET, set_cols, NCOLS(set_cols) },
	{ "syncs", SRC_SYNC, sync_cols, NCOLS(sync_cols) },
	{ "api_calls", SRC_RUNTIME, api_cols, NCOLS(api_cols) },
	{ "nvtx", SRC_NVTX, nvtx_cols, NCOLS(nvtx_cols) },
};

static void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int has_table(const struct trace_file *f, enum source_table t)
{
	return f->columns[t] != NULL;
}

static int has_column(const struct trace_file *f, enum source_table t, const char *col)
{
	char key[128];

	if (!col || !f->columns[t])
		return 0;
	snprintf(key, sizeof(key), ",%s,", col);
	return strstr(f->columns[t], key) != NULL;
}

/* ---- checks before SQLite opens a file ---- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * Catch what SQLite would report vaguely or late: a missing file, a directory, a non-SQLite file,
 * and a file shorter than its own header says (a copy cut short, a crashed writer without WAL).
 */
static int check_file(const char *path, char *err, size_t errlen)
{
	unsigned char hdr[100];
	struct stat st;
	uint32_t page_size, npages;
	ssize_t n;
	int fd;

	if (stat(path, &st) < 0) {
		int e = errno;

		set_err(err, errlen, "cannot open '%s': %s", path,
			e == ENOENT ? "no such file" : e == EACCES ? "permission denied" : strerror(e));
		return -e;
	}
	if (S_ISDIR(st.st_mode)) {
		set_err(err, errlen, "cannot open '%s': is a directory", path);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		set_err(err, errlen, "cannot open '%s': not a regular file", path);
		return -EINVAL;
	}
	if (st.st_size == 0) {
		set_err(err, errlen, "cannot open '%s': empty file, not a SQLite database", path);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		set_err(err, errlen, "cannot open '%s': %s", path,
			e == EACCES ? "permission denied" : strerror(e));
		return -e;
	}
	n = read(fd, hdr, sizeof(hdr));
	close(fd);
	if (n < (ssize_t)sizeof(hdr) || memcmp(hdr, "SQLite format 3", 16)) {
		set_err(err, errlen, "cannot open '%s': not a SQLite database", path);
		return -EINVAL;
	}
	page_size = (uint32_t)hdr[16] << 8 | hdr[17];
	if (page_size == 1)
		page_size = 65536;
	if (page_size < 512 || (page_size & (page_size - 1))) {
		set_err(err, errlen, "cannot open '%s': corrupt SQLite header (page size %u)", path,
			page_size);
		return -EINVAL;
	}
	/* The in-header page count is only valid when "version-valid-for" equals the change counter. */
	npages = be32(hdr + 28);
	if (npages && be32(hdr + 92) == be32(hdr + 24) && st.st_size < (off_t)npages * page_size) {
		set_err(err, errlen, "cannot open '%s': truncated file (%lld of %lld bytes)", path,
			(long long)st.st_size, (long long)npages * page_size);
		return -EINVAL;
	}
	if (st.st_size % page_size) {
		set_err(err, errlen, "cannot open '%s': truncated file (%lld bytes is not a whole number "
			"of %u-byte pages)", path, (long long)st.st_size, page_size);
		return -EINVAL;
	}
	return 0;
}

/* One line for a SQLite failure while reading a file's structure. */
static int sqlite_failure(sqlite3 *db, int rc, const char *path, char *err, size_t errlen)
{
	int code = rc & 0xff;

	if (code == SQLITE_NOTADB)
		set_err(err, errlen, "cannot open '%s': not a SQLite database", path);
	else if (code == SQLITE_CORRUPT)
		set_err(err, errlen, "cannot open '%s': corrupt or truncated file (%s)", path,
			sqlite3_errmsg(db));
	else
		set_err(err, errlen, "cannot open '%s': %s", path, sqlite3_errmsg(db));
	return -EIO;
}

/* ---- introspection ---- */

static int read_columns(struct trace *trace, struct trace_file *f, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	char *sql;
	int rc;

	sql = sqlite3_mprintf("SELECT name FROM \"%w\".sqlite_master WHERE type IN ('table', 'view')",
			      f->schema);
	rc = sqlite3_prepare_v2(trace->db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return sqlite_failure(trace->db, rc, f->path, err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		for (int t = 0; t < SRC_COUNT; t++) {
			if (name && !strcmp(name, source_names[t]) && !f->columns[t])
				f->columns[t] = xstrdup(",");
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sqlite_failure(trace->db, rc, f->path, err, errlen);

	for (int t = 0; t < SRC_COUNT; t++) {
		size_t len, cap;

		if (!f->columns[t])
			continue;
		rc = sqlite3_prepare_v2(trace->db, "SELECT name FROM pragma_table_info(?1, ?2)", -1, &st,
					NULL);
		if (rc != SQLITE_OK)
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
		sqlite3_bind_text(st, 1, source_names[t], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, f->schema, -1, SQLITE_STATIC);
		len = 1;
		cap = 2;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *col = (const char *)sqlite3_column_text(st, 0);
			size_t n = col ? strlen(col) : 0;

			if (!n)
				continue;
			if (len + n + 2 > cap) {
				cap = (len + n + 2) * 2;
				f->columns[t] = xrealloc(f->columns[t], cap);
			}
			memcpy(f->columns[t] + len, col, n);
			len += n;
			f->columns[t][len++] = ',';
			f->columns[t][len] = '\0';
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
	}
	return 0;
}

static int detect_format(struct trace_file *f, char *err, size_t errlen)
{
	if (has_table(f, SRC_GPT_META)) {
		f->format = TRACE_FORMAT_GPT;
		return 0;
	}
	if (has_table(f, SRC_META_EXPORT) || has_table(f, SRC_META_EXPORT_OLD) || has_table(f, SRC_KERNEL) ||
	    has_table(f, SRC_MEMCPY) || has_table(f, SRC_MEMSET) || has_table(f, SRC_SYNC) ||
	    has_table(f, SRC_RUNTIME) || has_table(f, SRC_NVTX)) {
		f->format = TRACE_FORMAT_NSYS;
		return 0;
	}
	set_err(err, errlen, "cannot open '%s': not a gpt-trace or nsys trace (no GPT_META, "
		"META_DATA_EXPORT or CUPTI_ACTIVITY_KIND_* table)", f->path);
	return -EINVAL;
}

/* Run one query returning one integer; *out untouched when it returns no row or NULL. */
static int query_int(struct trace *trace, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(trace->db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * The absolute time (ns) of the file's clock zero, from GPT_META or the nsys session start; and the
 * size of PROCESSES, which decides how the processes view finds its rows.
 */
static int read_origin(struct trace *trace, struct trace_file *f, char *err, size_t errlen)
{
	char *sql = NULL;
	int rc = SQLITE_OK;

	f->origin = 0;
	if (f->format == TRACE_FORMAT_GPT && has_column(f, SRC_GPT_META, "name") &&
	    has_column(f, SRC_GPT_META, "value"))
		sql = sqlite3_mprintf("SELECT CAST(value AS INTEGER) FROM \"%w\".GPT_META "
				      "WHERE name = 'time_origin_ns'", f->schema);
	else if (has_column(f, SRC_SESSION_START, "utcEpochNs"))
		sql = sqlite3_mprintf("SELECT utcEpochNs FROM \"%w\".TARGET_INFO_SESSION_START_TIME "
				      "LIMIT 1", f->schema);
	if (sql) {
		rc = query_int(trace, sql, &f->origin);
		sqlite3_free(sql);
	}
	if (rc == SQLITE_OK && has_table(f, SRC_PROCESSES)) {
		sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".PROCESSES", f->schema);
		rc = query_int(trace, sql, &f->nprocess_rows);
		sqlite3_free(sql);
	}
	if (rc != SQLITE_OK)
		return sqlite_failure(trace->db, rc, f->path, err, errlen);
	return 0;
}

/* quick_check's first problem, as one line: "*** in database main ***\nPage 48: ..." -> "page 48: ..." */
static const char *one_line(const char *msg, char *line, size_t len)
{
	const char *nl = strrchr(msg, '\n');
	size_t i;

	snprintf(line, len, "%s", nl ? nl + 1 : msg);
	for (i = 0; line[i]; i++) {
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	}
	if (!strncmp(line, "Page ", 5))
		line[0] = 'p';
	return line;
}

/*
 * Structural checks. quick_check on files small enough to read whole; on big ones, a descent to the
 * first and the last row of every table we read, which is where a file cut short breaks.
 */
static int check_integrity(struct trace *trace, struct trace_file *f, char *err, size_t errlen)
{
	char line[256];
	struct stat st;
	sqlite3_stmt *q;
	char *sql;
	int rc;

	if (stat(f->path, &st) == 0 && st.st_size <= QUICK_CHECK_MAX_BYTES) {
		sql = sqlite3_mprintf("PRAGMA \"%w\".quick_check(1)", f->schema);
		rc = sqlite3_prepare_v2(trace->db, sql, -1, &q, NULL);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
		rc = sqlite3_step(q);
		if (rc == SQLITE_ROW) {
			const char *msg = (const char *)sqlite3_column_text(q, 0);

			if (!msg || strcmp(msg, "ok")) {
				set_err(err, errlen, "cannot open '%s': corrupt or truncated file (%s)",
					f->path, msg ? one_line(msg, line, sizeof(line)) : "integrity check failed");
				sqlite3_finalize(q);
				return -EIO;
			}
			rc = SQLITE_OK;
		}
		sqlite3_finalize(q);
		if (rc != SQLITE_OK && rc != SQLITE_DONE)
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
		return 0;
	}
	for (int t = 0; t < SRC_COUNT; t++) {
		int64_t dummy = 0;

		if (!has_table(f, t))
			continue;
		sql = sqlite3_mprintf("SELECT (SELECT max(rowid) FROM \"%w\".\"%w\") + "
				      "(SELECT rowid FROM \"%w\".\"%w\" LIMIT 1)",
				      f->schema, source_names[t], f->schema, source_names[t]);
		rc = query_int(trace, sql, &dummy);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
	}
	return 0;
}

/* ---- view SQL ---- */

static void append_string_lookup(sqlite3_str *s, const struct trace_file *f, const char *idcol)
{
	sqlite3_str_appendf(s, "(SELECT value FROM \"%w\".StringIds WHERE id = e.\"%w\")", f->schema, idcol);
}

static int can_lookup(const struct trace_file *f, enum source_table src, const char *idcol)
{
	return has_column(f, src, idcol) && has_column(f, SRC_STRINGS, "id") &&
	       has_column(f, SRC_STRINGS, "value");
}

/* Column c of a file's SELECT, named as the view names it (alias set) or bare (a function's argument). */
static void append_col(sqlite3_str *s, const struct trace_file *f, size_t trace_id, enum source_table src,
		       const struct view_col *c, int alias)
{
	const char *ids[3] = { c->src, c->src2, c->src3 };
	int n = 0;

	switch (c->kind) {
	case COL_TRACE_ID:
		sqlite3_str_appendf(s, "%lld", (long long)trace_id);
		break;
	case COL_PLAIN:
		if (!has_column(f, src, c->src))
			goto null;
		sqlite3_str_appendf(s, "e.\"%w\"", c->src);
		break;
	case COL_TIME:
		if (!has_column(f, src, c->src))
			goto null;
		if (f->shift)
			sqlite3_str_appendf(s, "(e.\"%w\" + %lld)", c->src, (long long)f->shift);
		else
			sqlite3_str_appendf(s, "e.\"%w\"", c->src);
		break;
	case COL_DUR:
		if (!has_column(f, src, "start") || !has_column(f, src, "end"))
			goto null;
		sqlite3_str_appendall(s, "(e.\"end\" - e.start)");
		break;
	case COL_PID:
		if (!has_column(f, src, c->src))
			goto null;
		sqlite3_str_appendf(s, "((e.\"%w\" >> 24) & 16777215)", c->src);
		break;
	case COL_TID:
		if (!has_column(f, src, c->src))
			goto null;
		sqlite3_str_appendf(s, "(e.\"%w\" & 16777215)", c->src);
		break;
	case COL_STRING:
		if (!can_lookup(f, src, c->src))
			goto null;
		append_string_lookup(s, f, c->src);
		break;
	case COL_FIRST_ID:
	case COL_FIRST_STRING:
		for (int i = 0; i < 3; i++) {
			int ok = c->kind == COL_FIRST_ID ? has_column(f, src, ids[i]) : can_lookup(f, src, ids[i]);

			if (!ids[i] || !ok)
				continue;
			sqlite3_str_appendall(s, n++ ? ", " : "coalesce(");
			if (c->kind == COL_FIRST_ID)
				sqlite3_str_appendf(s, "e.\"%w\"", ids[i]);
			else
				append_string_lookup(s, f, ids[i]);
		}
		if (!n)
			goto null;
		/* coalesce() needs two arguments */
		sqlite3_str_appendall(s, n == 1 ? ", NULL)" : ")");
		break;
	case COL_META_GLOBALPID: {
		/* The traced process from GPT_META, else the process of the kernel with that id. */
		int meta = has_column(f, SRC_GPT_META, "name") && has_column(f, SRC_GPT_META, "value");
		int kernel = has_column(f, SRC_KERNEL, "globalPid") &&
			     has_column(f, SRC_KERNEL, "correlationId");

		if (!meta && !kernel)
			goto null;
		sqlite3_str_appendall(s, "coalesce(");
		if (meta)
			sqlite3_str_appendf(s, "CAST((SELECT value FROM \"%w\".GPT_META WHERE name = 'pid')"
					    " AS INTEGER) << 24, ", f->schema);
		if (kernel)
			sqlite3_str_appendf(s, "(SELECT k.globalPid FROM \"%w\".CUPTI_ACTIVITY_KIND_KERNEL AS k"
					    " WHERE k.correlationId = e.correlationId LIMIT 1), ", f->schema);
		sqlite3_str_appendall(s, "NULL)");
		break;
	}
	case COL_INLINE_OR_STRING: {
		int inl = has_column(f, src, c->src), ref = can_lookup(f, src, c->src2);

		if (inl && ref) {
			sqlite3_str_appendf(s, "coalesce(e.\"%w\", ", c->src);
			append_string_lookup(s, f, c->src2);
			sqlite3_str_appendall(s, ")");
		} else if (inl) {
			sqlite3_str_appendf(s, "e.\"%w\"", c->src);
		} else if (ref) {
			append_string_lookup(s, f, c->src2);
		} else {
			goto null;
		}
		break;
	}
	}
	if (alias)
		sqlite3_str_appendf(s, " AS \"%w\"", c->name);
	return;
null:
	sqlite3_str_appendf(s, "CAST(NULL AS %s)", c->text ? "TEXT" : "INTEGER");
	if (alias)
		sqlite3_str_appendf(s, " AS \"%w\"", c->name);
}

/*
 * Events whose times no clock can produce are left out: a start before zero or past TRACE_TIME_MAX,
 * an end before the start or past TRACE_TIME_MAX (an end may be NULL: NVTX marks and unclosed
 * ranges); the bound is on the time after the file's shift. Every consumer may then add, subtract and compare any two times (and a file's shift,
 * itself at most TRACE_TIME_MAX) without overflow; the fuzzer found such rows overflowing sums and
 * differences in stats, the report and the HTML timeline (docs/fuzzing.md).
 */
static void append_time_filter(sqlite3_str *s, const struct trace_file *f, enum source_table src)
{
	int64_t max = TRACE_TIME_MAX - f->shift;	/* the file's own clock; shift <= TRACE_TIME_MAX */

	if (!has_column(f, src, "start"))
		return;
	sqlite3_str_appendf(s, " WHERE e.start BETWEEN 0 AND %lld", (long long)max);
	if (has_column(f, src, "end"))
		sqlite3_str_appendf(s, " AND (e.\"end\" IS NULL OR e.\"end\" BETWEEN e.start AND %lld)",
				    (long long)max);
}

/* One file's SELECT for a view; a file without the source table gives a typed empty SELECT. */
static void append_select(sqlite3_str *s, const struct trace_file *f, size_t trace_id, enum source_table src,
			  const struct view_col *cols, size_t ncols)
{
	sqlite3_str_appendall(s, "SELECT ");
	for (size_t i = 0; i < ncols; i++) {
		if (i)
			sqlite3_str_appendall(s, ", ");
		append_col(s, f, trace_id, src, &cols[i], 1);
	}
	if (has_table(f, src)) {
		sqlite3_str_appendf(s, " FROM \"%w\".\"%w\" AS e", f->schema, source_names[src]);
		append_time_filter(s, f, src);
	} else
		sqlite3_str_appendall(s, " WHERE 0");
}

static enum source_table meta_source(const struct trace_file *f)
{
	static const enum source_table order[] = { SRC_GPT_META, SRC_META_EXPORT, SRC_META_EXPORT_OLD };

	for (size_t i = 0; i < NCOLS(order); i++) {
		if (has_column(f, order[i], "name") && has_column(f, order[i], "value"))
			return order[i];
	}
	return SRC_GPT_META;
}

/*
 * processes: the processes that own GPU events or API calls, with their names from PROCESSES when
 * it lists them. nsys lists every process of the machine, so the owners are found by one pass over
 * the events (seconds on 10 million); a file listing a few processes (ours lists the traced one)
 * instead probes the events of each listed process, which stops at the first row found.
 */
#define FEW_PROCESSES 8

static const enum source_table process_owners[] = { SRC_KERNEL, SRC_MEMCPY, SRC_MEMSET, SRC_SYNC };

static void append_listed_processes(sqlite3_str *s, const struct trace_file *f, size_t trace_id)
{
	int n = 0;

	sqlite3_str_appendf(s, "SELECT %lld AS traceId, p.globalPid AS globalPid, "
			    "((p.globalPid >> 24) & 16777215) AS pid, p.name AS name FROM \"%w\".PROCESSES AS p "
			    "WHERE ", (long long)trace_id, f->schema);
	for (size_t i = 0; i < NCOLS(process_owners); i++) {
		if (!has_column(f, process_owners[i], "globalPid"))
			continue;
		sqlite3_str_appendf(s, "%sEXISTS (SELECT 1 FROM \"%w\".\"%w\" WHERE globalPid = p.globalPid)",
				    n++ ? " OR " : "", f->schema, source_names[process_owners[i]]);
	}
	if (has_column(f, SRC_RUNTIME, "globalTid"))
		sqlite3_str_appendf(s, "%sEXISTS (SELECT 1 FROM \"%w\".CUPTI_ACTIVITY_KIND_RUNTIME WHERE "
				    "globalTid >= p.globalPid AND globalTid < p.globalPid + 16777216)",
				    n++ ? " OR " : "", f->schema);
	if (!n)
		sqlite3_str_appendall(s, "0");
}

static void append_processes(sqlite3_str *s, const struct trace_file *f, size_t trace_id)
{
	const enum source_table *owners = process_owners;
	int n = 0;

	if (f->nprocess_rows > 0 && f->nprocess_rows <= FEW_PROCESSES && has_column(f, SRC_PROCESSES, "name") &&
	    has_column(f, SRC_PROCESSES, "globalPid")) {
		append_listed_processes(s, f, trace_id);
		return;
	}

	sqlite3_str_appendf(s, "SELECT %lld AS traceId, g.globalPid AS globalPid, "
			    "((g.globalPid >> 24) & 16777215) AS pid, ", (long long)trace_id);
	if (has_column(f, SRC_PROCESSES, "name") && has_column(f, SRC_PROCESSES, "globalPid"))
		sqlite3_str_appendf(s, "(SELECT p.name FROM \"%w\".PROCESSES AS p WHERE p.globalPid = "
				    "g.globalPid LIMIT 1)", f->schema);
	else if (has_column(f, SRC_PROCESSES, "name") && has_column(f, SRC_PROCESSES, "pid"))
		sqlite3_str_appendf(s, "(SELECT p.name FROM \"%w\".PROCESSES AS p WHERE p.pid = "
				    "((g.globalPid >> 24) & 16777215) LIMIT 1)", f->schema);
	else
		sqlite3_str_appendall(s, "CAST(NULL AS TEXT)");
	sqlite3_str_appendall(s, " AS name FROM (");
	for (size_t i = 0; i < NCOLS(process_owners); i++) {
		if (!has_column(f, owners[i], "globalPid"))
			continue;
		sqlite3_str_appendf(s, "%sSELECT globalPid FROM \"%w\".\"%w\"", n++ ? " UNION " : "",
				    f->schema, source_names[owners[i]]);
	}
	/*
	 * globalTid = globalPid | tid: clear the low 24 bits. Named and DISTINCT because it may be the
	 * only SELECT: an export without globalPid columns.
	 */
	if (has_column(f, SRC_RUNTIME, "globalTid"))
		sqlite3_str_appendf(s, "%sSELECT DISTINCT globalTid & ~16777215 AS globalPid "
				    "FROM \"%w\".CUPTI_ACTIVITY_KIND_RUNTIME", n++ ? " UNION " : "", f->schema);
	if (!n)
		sqlite3_str_appendall(s, "SELECT NULL AS globalPid WHERE 0");
	sqlite3_str_appendall(s, ") AS g WHERE g.globalPid IS NOT NULL");
}

static int exec_sql(struct trace *trace, char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	int rc;

	if (!sql) {
		set_err(err, errlen, "out of memory building the trace views");
		return -ENOMEM;
	}
	rc = sqlite3_exec(trace->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		set_err(err, errlen, "cannot build the trace views: %s", msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		sqlite3_free(sql);
		return -EIO;
	}
	sqlite3_free(sql);
	return 0;
}

/* CREATE TEMP VIEW gpt_all_<name> as the UNION ALL of every file's SELECT. */
static int create_base_view(struct trace *trace, const char *name, enum source_table src,
			    const struct view_col *cols, size_t ncols, int processes, char *err, size_t errlen)
{
	sqlite3_str *s = sqlite3_str_new(trace->db);

	sqlite3_str_appendf(s, "CREATE TEMP VIEW \"gpt_all_%w\" AS ", name);
	for (size_t i = 0; i < trace->nfiles; i++) {
		const struct trace_file *f = &trace->files[i];

		if (i)
			sqlite3_str_appendall(s, " UNION ALL ");
		if (processes)
			append_processes(s, f, i);
		else
			append_select(s, f, i, src == SRC_GPT_META ? meta_source(f) : src, cols, ncols);
	}
	return exec_sql(trace, sqlite3_str_finish(s), err, errlen);
}

/*
 * kernel_metrics and source_metrics exist only when some file was recorded with --metrics, so that
 * the uncoalesced-access rule can tell "not measured" from "measured, nothing found".
 */
static int create_metrics_views(struct trace *trace, char *err, size_t errlen)
{
	size_t with = 0;
	int ret;

	for (size_t i = 0; i < trace->nfiles; i++)
		with += has_table(&trace->files[i], SRC_KERNEL_METRICS);
	if (!with)
		return 0;
	ret = create_base_view(trace, "kernel_metrics", SRC_KERNEL_METRICS, kernel_metrics_cols,
			       NCOLS(kernel_metrics_cols), 0, err, errlen);
	if (!ret)
		ret = create_base_view(trace, "source_metrics", SRC_SOURCE_METRICS, source_metrics_cols,
				       NCOLS(source_metrics_cols), 0, err, errlen);
	if (!ret)
		ret = exec_sql(trace, sqlite3_mprintf(
			"CREATE TEMP VIEW kernel_metrics AS SELECT * FROM gpt_all_kernel_metrics"
			" WHERE source IS NULL OR source = 'counters';"
			"CREATE TEMP VIEW source_metrics AS SELECT * FROM gpt_all_source_metrics"), err, errlen);
	return ret;
}

/*
 * gpu_metrics(traceId, deviceId, timestamp, metricName, value): the sampled GPU metrics of ours
 * (gpt-trace run --gpu-metrics) and of nsys exports (--gpu-metrics-devices), one row per sample and
 * metric, named through TARGET_INFO_GPU_METRICS; the GPU is typeId & 0xFF, as in nsys. Exists only
 * when some file has them, so that a consumer can tell "not sampled" from "idle".
 */
static int create_gpu_metrics_view(struct trace *trace, char *err, size_t errlen)
{
	sqlite3_str *s;
	size_t with = 0;

	for (size_t i = 0; i < trace->nfiles; i++) {
		const struct trace_file *f = &trace->files[i];

		with += has_column(f, SRC_GPU_METRICS, "timestamp") &&
			has_column(f, SRC_GPU_METRICS_INFO, "metricName");
	}
	if (!with)
		return 0;
	s = sqlite3_str_new(trace->db);
	sqlite3_str_appendall(s, "CREATE TEMP VIEW gpu_metrics AS ");
	with = 0;
	for (size_t i = 0; i < trace->nfiles; i++) {
		const struct trace_file *f = &trace->files[i];

		if (!has_column(f, SRC_GPU_METRICS, "timestamp") ||
		    !has_column(f, SRC_GPU_METRICS_INFO, "metricName"))
			continue;
		sqlite3_str_appendf(s, "%sSELECT %lld AS traceId, (g.typeId & 255) AS deviceId, "
				    "g.timestamp + %lld AS timestamp, t.metricName AS metricName, "
				    "g.value AS value FROM \"%w\".GPU_METRICS AS g JOIN "
				    "\"%w\".TARGET_INFO_GPU_METRICS AS t ON t.metricId = g.metricId AND "
				    "t.typeId = g.typeId",
				    with++ ? " UNION ALL " : "", (long long)i, (long long)f->shift,
				    f->schema, f->schema);
	}
	return exec_sql(trace, sqlite3_str_finish(s), err, errlen);
}

static int create_views(struct trace *trace, char *err, size_t errlen)
{
	int ret;

	for (size_t i = 0; i < NCOLS(event_views); i++) {
		const struct view_spec *v = &event_views[i];

		ret = create_base_view(trace, v->name, v->source, v->cols, v->ncols, 0, err, errlen);
		if (ret < 0)
			return ret;
	}
	ret = create_base_view(trace, "gpus", SRC_GPU, gpu_cols, NCOLS(gpu_cols), 0, err, errlen);
	if (!ret)
		ret = create_base_view(trace, "meta", SRC_GPT_META, meta_cols, NCOLS(meta_cols), 0, err,
				       errlen);
	if (!ret)
		ret = create_base_view(trace, "strings", SRC_STRINGS, string_cols, NCOLS(string_cols), 0, err,
				       errlen);
	if (!ret)
		ret = create_base_view(trace, "processes", SRC_PROCESSES, NULL, 0, 1, err, errlen);
	if (!ret)
		ret = create_base_view(trace, "memory", SRC_MEMORY, memory_cols, NCOLS(memory_cols), 0, err,
				       errlen);
	if (!ret)
		ret = create_metrics_views(trace, err, errlen);
	if (!ret)
		ret = create_base_view(trace, "windows", SRC_CAPTURE_WINDOWS, window_cols,
				       NCOLS(window_cols), 0, err, errlen);
	if (!ret)
		ret = create_gpu_metrics_view(trace, err, errlen);
	if (!ret)
		ret = exec_sql(trace, sqlite3_mprintf("CREATE TEMP VIEW windows AS SELECT * FROM "
						      "gpt_all_windows;"
						      "CREATE TEMP VIEW gpus AS SELECT * FROM gpt_all_gpus;"
						      "CREATE TEMP VIEW meta AS SELECT * FROM gpt_all_meta;"
						      "CREATE TEMP VIEW strings AS SELECT * FROM gpt_all_strings;"
						      "CREATE TEMP VIEW processes AS SELECT * FROM "
						      "gpt_all_processes;"
						      "CREATE TEMP VIEW memory AS SELECT * FROM gpt_all_memory"), err, errlen);
	if (!ret) {
		struct trace_scope all = { 0 };

		ret = trace_set_scope(trace, &all, err, errlen);
	}
	return ret;
}

/* ---- scope ---- */

/*
 * The NVTX ranges of the scope, merged per process into disjoint spans, so that "inside any range"
 * is one index probe: the last span starting at or before the event must end after it.
 */
static int build_scope_ranges(struct trace *trace, const char *text, char *err, size_t errlen)
{
	int64_t n = 0;
	char *sql;
	int ret;

	ret = exec_sql(trace, sqlite3_mprintf(
		"DROP TABLE IF EXISTS temp.gpt_scope_ranges;"
		/* Declared INTEGER columns: a table made by CREATE TABLE AS from expressions has columns
		 * without affinity, and SQLite then searches its index by (traceId, pid) only, not by
		 * start: every event scanned all the ranges of its process (minutes at 1M kernels). */
		"CREATE TEMP TABLE gpt_scope_ranges(traceId INTEGER, pid INTEGER, start INTEGER, \"end\" INTEGER);"
		"INSERT INTO temp.gpt_scope_ranges "
		"WITH r AS (SELECT traceId, pid, start, \"end\" FROM gpt_all_nvtx "
		"           WHERE text = %Q AND \"end\" IS NOT NULL AND \"end\" > start AND pid IS NOT NULL), "
		"m AS (SELECT *, max(\"end\") OVER (PARTITION BY traceId, pid ORDER BY start, \"end\" "
		"             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end FROM r), "
		"g AS (SELECT *, sum(prev_end IS NULL OR start > prev_end) OVER (PARTITION BY traceId, pid "
		"             ORDER BY start, \"end\" ROWS UNBOUNDED PRECEDING) AS island FROM m) "
		"SELECT traceId, pid, min(start) AS start, max(\"end\") AS \"end\" FROM g "
		"GROUP BY traceId, pid, island;"
		"CREATE INDEX temp.gpt_scope_ranges_start ON gpt_scope_ranges(traceId, pid, start)",
		text), err, errlen);
	if (ret < 0)
		return ret;
	sql = sqlite3_mprintf("SELECT count(*) FROM temp.gpt_scope_ranges");
	ret = query_int(trace, sql, &n);
	sqlite3_free(sql);
	if (ret != SQLITE_OK) {
		set_err(err, errlen, "cannot scope to NVTX range '%s': %s", text, sqlite3_errmsg(trace->db));
		return -EIO;
	}
	if (!n) {
		set_err(err, errlen, "no NVTX range named '%s' in the trace", text);
		return -ENOENT;
	}
	return 0;
}

int trace_set_scope(struct trace *trace, const struct trace_scope *scope, char *err, size_t errlen)
{
	int ret;

	if (scope->start < 0 || (scope->end && scope->end <= scope->start)) {
		set_err(err, errlen, "invalid time window [%lld, %lld)", (long long)scope->start,
			(long long)scope->end);
		return -EINVAL;
	}
	if (scope->nvtx_range) {
		ret = build_scope_ranges(trace, scope->nvtx_range, err, errlen);
		if (ret < 0)
			return ret;
	}
	if (trace->span_known)
		memset(trace->span_known, 0, trace->nfiles);
	trace->scope_start = scope->start;
	trace->scope_end = scope->end;
	trace->scope_ranges = scope->nvtx_range != NULL;
	trace->scope_glob = scope->kernel_glob != NULL;
	for (size_t i = 0; i < NCOLS(event_views); i++) {
		const char *name = event_views[i].name;
		sqlite3_str *s = sqlite3_str_new(trace->db);
		const char *and = " WHERE ";

		sqlite3_str_appendf(s, "DROP VIEW IF EXISTS temp.\"%w\"; CREATE TEMP VIEW \"%w\" AS "
				    "SELECT * FROM \"gpt_all_%w\" AS v", name, name, name);
		if (scope->start) {
			sqlite3_str_appendf(s, "%sv.start >= %lld", and, (long long)scope->start);
			and = " AND ";
		}
		if (scope->end) {
			sqlite3_str_appendf(s, "%sv.start < %lld", and, (long long)scope->end);
			and = " AND ";
		}
		if (scope->nvtx_range) {
			sqlite3_str_appendf(s, "%s(SELECT r.\"end\" FROM temp.gpt_scope_ranges AS r "
					    "WHERE r.traceId = v.traceId AND r.pid = v.pid AND r.start <= v.start "
					    "ORDER BY r.start DESC LIMIT 1) > v.start", and);
			and = " AND ";
		}
		if (scope->kernel_glob && !strcmp(name, "kernels"))
			sqlite3_str_appendf(s, "%sv.name GLOB %Q", and, scope->kernel_glob);
		ret = exec_sql(trace, sqlite3_str_finish(s), err, errlen);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- spans ---- */

unsigned char *trace_span_slot(struct trace *trace, size_t trace_id, int64_t **span)
{
	if (trace_id >= trace->nfiles)
		return NULL;
	if (!trace->span_known) {
		trace->spans = xcalloc(trace->nfiles, sizeof(*trace->spans));
		trace->span_known = xcalloc(trace->nfiles, 1);
	}
	*span = trace->spans[trace_id];
	return &trace->span_known[trace_id];
}

/* ---- for the event reader (events.c) ---- */

char *trace_event_sql(const struct trace *trace, size_t file, const char *view, const char *const *cols,
		      size_t ncols, enum trace_event_sql mode, size_t nkey, const char *wrap, int *absent)
{
	const struct view_spec *v = NULL;
	const struct trace_file *f;
	sqlite3_str *s;

	*absent = 0;
	for (size_t i = 0; i < NCOLS(event_views) && !v; i++)
		if (!strcmp(event_views[i].name, view))
			v = &event_views[i];
	if (!v || file >= trace->nfiles)
		return NULL;
	f = &trace->files[file];
	if (!has_table(f, v->source)) {
		*absent = 1;
		return NULL;
	}
	s = sqlite3_str_new(NULL);
	/* Sorted reads are for tables that may have no rowid (a view of that name): no tie-break. */
	if (mode == TRACE_SQL_SORTED)
		wrap = NULL;
	sqlite3_str_appendall(s, "SELECT ");
	if (wrap)
		sqlite3_str_appendf(s, "%s(", wrap);
	sqlite3_str_appendall(s, mode == TRACE_SQL_SORTED ? "0" : "e.rowid");
	for (size_t i = 0; i <= ncols; i++) {
		const char *name = i ? cols[i - 1] : "start";
		const struct view_col *c = NULL;

		for (size_t j = 0; j < v->ncols && !c; j++)
			if (!strcmp(v->cols[j].name, name))
				c = &v->cols[j];
		if (!c) {
			sqlite3_free(sqlite3_str_finish(s));
			return NULL;
		}
		sqlite3_str_appendall(s, ", ");
		append_col(s, f, file, v->source, c, !wrap);
	}
	if (wrap)
		sqlite3_str_appendall(s, ")");
	sqlite3_str_appendf(s, " FROM \"%w\".\"%w\" AS e", f->schema, source_names[v->source]);
	if (mode != TRACE_SQL_SCAN_RAW && mode != TRACE_SQL_RANGE_RAW)
		append_time_filter(s, f, v->source);
	if (mode == TRACE_SQL_RANGE)
		sqlite3_str_appendf(s, "%se.rowid BETWEEN ?1 AND ?2", has_column(f, v->source, "start") ? " AND " :
				    " WHERE ");
	if (mode == TRACE_SQL_RANGE_RAW)
		sqlite3_str_appendall(s, " WHERE e.rowid BETWEEN ?1 AND ?2");
	if (mode == TRACE_SQL_SORTED) {
		sqlite3_str_appendall(s, " ORDER BY 2");
		for (size_t i = 0; i < nkey && i < ncols; i++)
			sqlite3_str_appendf(s, ", %d", (int)i + 3);
	}
	return sqlite3_str_finish(s);
}

int trace_event_rowid_range(struct trace *trace, size_t file, const char *view, int64_t *first, int64_t *last)
{
	*first = *last = 0;
	for (size_t i = 0; i < NCOLS(event_views); i++) {
		const struct trace_file *f = &trace->files[file];
		const char *table = source_names[event_views[i].source];
		char *sql;
		int ok;

		if (strcmp(event_views[i].name, view) || !has_table(f, event_views[i].source))
			continue;
		/* one look-up each: min() and max() in one SELECT make SQLite scan the table */
		sql = sqlite3_mprintf("SELECT min(rowid) FROM \"%w\".\"%w\"", f->schema, table);
		ok = sql && query_int(trace, sql, first) == SQLITE_OK;
		sqlite3_free(sql);
		sql = sqlite3_mprintf("SELECT max(rowid) FROM \"%w\".\"%w\"", f->schema, table);
		ok = ok && sql && query_int(trace, sql, last) == SQLITE_OK;
		sqlite3_free(sql);
		return ok && *last >= *first && *last > 0;
	}
	return 0;
}

int trace_event_filter(const struct trace *trace, size_t file, const char *view, int64_t *shift)
{
	const struct trace_file *f = &trace->files[file];

	for (size_t i = 0; i < NCOLS(event_views); i++)
		if (!strcmp(event_views[i].name, view)) {
			*shift = f->shift;
			return has_column(f, event_views[i].source, "start");
		}
	*shift = 0;
	return 0;
}

int trace_scope_window(const struct trace *trace, const char *view, int64_t *start, int64_t *end)
{
	*start = trace->scope_start;
	*end = trace->scope_end;
	return trace->scope_ranges || (trace->scope_glob && !strcmp(view, "kernels"));
}

struct trace_cache *trace_cache(struct trace *trace, enum trace_cache_kind kind)
{
	return &trace->caches[kind];
}

/* GPT_TRACE_SQL_PROFILE=1: each statement's text and run time on stderr, for finding the dear ones. */
static int sql_profile(unsigned type, void *arg, void *p, void *x)
{
	char *sql = sqlite3_expanded_sql(p);

	(void)type;
	(void)arg;
	fprintf(stderr, "gpt-trace: sql %8.3f s: %.300s\n", (double)*(sqlite3_int64 *)x / 1e9, sql ? sql : "?");
	sqlite3_free(sql);
	return 0;
}

/*
 * A read-only connection to file f (the first of a trace) as "main". One thread uses a connection:
 * without its mutex, every sqlite3_column_*() call of a walk no longer locks and unlocks (18% of a
 * report's time at 1M kernels). Returns SQLite's code; *db is to be closed either way.
 */
static int connect_first(const struct trace_file *f, sqlite3 **db)
{
	int rc = sqlite3_open_v2(f->open_path ? f->open_path : f->path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
				 NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_extended_result_codes(*db, 1);
	if (getenv("GPT_TRACE_SQL_PROFILE"))
		sqlite3_trace_v2(*db, SQLITE_TRACE_PROFILE, sql_profile, NULL);
	return SQLITE_OK;
}

/* Attach file f to db under its schema name: SQLite's code (SQLITE_OK when attached). */
static int attach(sqlite3 *db, const struct trace_file *f)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ?1 AS ?2", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, f->open_path ? f->open_path : f->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, f->schema, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/*
 * A second read-only connection to the trace, for a scan on another thread (events.c): the files
 * under the schema names they have on the trace's own connection ("main", "t1"...), so that
 * trace_event_sql()'s text prepares on either. NULL when it cannot be opened.
 */
sqlite3 *trace_db_reader(const struct trace *trace)
{
	sqlite3 *db = NULL;
	int rc = connect_first(&trace->files[0], &db);

	for (size_t i = 1; rc == SQLITE_OK && i < trace->nfiles; i++)
		rc = attach(db, &trace->files[i]);
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* ---- open/close ---- */

/*
 * Line files up by their origins. Our origins are on CUPTI's clock and nsys's are UTC, so each kind
 * of file aligns only with files of its own kind; a file without a known origin stays on its own
 * clock.
 */
static void set_shifts(struct trace *trace)
{
	for (size_t i = 0; i < trace->nfiles; i++) {
		struct trace_file *f = &trace->files[i];
		int64_t min_origin = f->origin;

		f->shift = 0;
		if (f->origin <= 0 || trace->nfiles < 2)
			continue;
		for (size_t j = 0; j < trace->nfiles; j++) {
			const struct trace_file *o = &trace->files[j];

			if (o->format == f->format && o->origin > 0 && o->origin < min_origin)
				min_origin = o->origin;
		}
		f->shift = f->origin - min_origin;
		if (f->shift > TRACE_TIME_MAX)	/* origins that far apart are not one job's clock */
			f->shift = 0;
	}
}

/*
 * Medians, gaps and joins over millions of events are external sorts; SQLite runs its sorter on
 * worker threads when allowed (about a third faster on 10 million kernels with 2 cores).
 */
static void set_sort_threads(sqlite3 *db)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA threads = %ld", ncpu < 1 ? 1 : ncpu > 4 ? 4 : ncpu);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static int file_nonempty(const char *path, const char *suffix)
{
	char name[PATH_MAX];
	struct stat st;

	if (snprintf(name, sizeof(name), "%s%s", path, suffix) >= (int)sizeof(name))
		return 0;
	return stat(name, &st) == 0 && st.st_size > 0;
}

/*
 * A trace whose process died mid-transaction (SIGKILL) has a hot rollback journal (or an
 * uncheckpointed WAL) beside it, and SQLite refuses to read it read-only until someone rolls the
 * journal back with write access. A live trace also has a journal, but its writer holds the lock
 * that makes it not hot, and reads work: so only a failing read means recovery is needed.
 */
static int needs_recovery(const char *path)
{
	sqlite3 *db = NULL;
	int rc;

	if (!file_nonempty(path, "-journal") && !file_nonempty(path, "-wal"))
		return 0;
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN;
}

static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int in, out, ret = -1;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? 0 : -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		goto out_in;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			goto out_out;
	ret = n < 0 ? -1 : 0;
out_out:
	close(out);
out_in:
	close(in);
	return ret;
}

/*
 * Read such a trace without writing to it or its folder: copy the file and its journal (or WAL)
 * into a private temporary folder, let SQLite roll the copy back there (a read-write open), and
 * read the copy. One note on stderr says so: the copy is gone when the trace is closed.
 */
static int recover_copy(struct trace_file *f, char *err, size_t errlen)
{
	static const char *const suffixes[] = { "", "-journal", "-wal" };
	const char *tmpdir = getenv("TMPDIR"), *base = strrchr(f->path, '/');
	char dir[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	sqlite3 *db = NULL;
	int rc;

	base = base ? base + 1 : f->path;
	snprintf(dir, sizeof(dir), "%s/gpt-trace-recovered-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir)) {
		set_err(err, errlen, "cannot open '%s': it needs recovery (hot journal) and no "
			"temporary folder could be made for a copy: %s", f->path, strerror(errno));
		return -errno;
	}
	f->copy_dir = xstrdup(dir);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(from, sizeof(from), "%s%s", f->path, suffixes[i]);
		if (snprintf(to, sizeof(to), "%s/%s%s", dir, base, suffixes[i]) >= (int)sizeof(to) ||
		    copy_file(from, to) < 0) {
			set_err(err, errlen, "cannot open '%s': it needs recovery (hot journal) and "
				"copying it to '%s' failed: %s", f->path, dir, strerror(errno));
			return -EIO;
		}
	}
	if (snprintf(to, sizeof(to), "%s/%s", dir, base) >= (int)sizeof(to))
		return -ENAMETOOLONG;
	f->open_path = xstrdup(to);
	rc = sqlite3_open_v2(to, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	sqlite3_close(db);
	if (rc != SQLITE_OK) {
		set_err(err, errlen, "cannot open '%s': its recovered copy does not open (%s)", f->path,
			sqlite3_errstr(rc));
		return -EIO;
	}
	/* The loader's only message of its own: every command that reads the trace must say it. */
	pr_warn("'%s' was left unfinished with a hot journal (its process was killed): read "
		"from a recovered copy; opening it once with write access (sqlite3, or gpt-trace run "
		"when it is the launcher's) recovers the file itself", f->path);
	return 0;
}

static void remove_copy(struct trace_file *f)
{
	static const char *const suffixes[] = { "", "-journal", "-wal", "-shm" };
	char name[PATH_MAX];

	if (!f->copy_dir)
		return;
	for (size_t i = 0; f->open_path && i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", f->open_path, suffixes[i]);
		unlink(name);
	}
	rmdir(f->copy_dir);
	free(f->copy_dir);
	f->copy_dir = NULL;
}

/*
 * A PyTorch profiler (Kineto) JSON trace is read through the trace file imported from it, cached
 * beside it (import/kineto.h); a cache made in a temporary folder goes with the trace's close.
 */
static int open_imported(struct trace_file *f, char *err, size_t errlen)
{
	char *cache, *tmp_dir;
	int ret = kineto_cached(f->path, &cache, &tmp_dir, err, errlen);

	if (ret < 0)
		return ret;
	f->open_path = cache;
	f->copy_dir = tmp_dir;
	return check_file(cache, err, errlen);
}

static int open_file(struct trace *trace, size_t i, char *err, size_t errlen)
{
	struct trace_file *f = &trace->files[i];
	int ret, rc;

	if (kineto_sniff(f->path))
		ret = open_imported(f, err, errlen);
	else
		ret = check_file(f->path, err, errlen);
	if (ret < 0)
		return ret;
	if (!f->open_path && needs_recovery(f->path)) {
		ret = recover_copy(f, err, errlen);
		if (ret < 0)
			return ret;
	}
	if (i == 0) {
		snprintf(f->schema, sizeof(f->schema), "main");
		rc = connect_first(f, &trace->db);
		if (rc != SQLITE_OK)
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
		set_sort_threads(trace->db);
	} else {
		snprintf(f->schema, sizeof(f->schema), "t%zu", i);
		rc = attach(trace->db, f);
		if (rc != SQLITE_OK) {
			if ((rc & 0xff) == SQLITE_ERROR && strstr(sqlite3_errmsg(trace->db), "too many")) {
				set_err(err, errlen, "cannot open '%s': too many traces at once (at most %d)",
					f->path, sqlite3_limit(trace->db, SQLITE_LIMIT_ATTACHED, -1) + 1);
				return -E2BIG;
			}
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
		}
	}
	ret = read_columns(trace, f, err, errlen);
	if (!ret)
		ret = detect_format(f, err, errlen);
	if (!ret)
		ret = check_integrity(trace, f, err, errlen);
	if (!ret)
		ret = read_origin(trace, f, err, errlen);
	return ret;
}

int trace_open(const char *const *paths, size_t npaths, struct trace **out, char *err, size_t errlen)
{
	struct trace *trace;
	int ret;

	*out = NULL;
	if (!npaths) {
		set_err(err, errlen, "no trace file given");
		return -EINVAL;
	}
	trace = xcalloc(1, sizeof(*trace));
	trace->files = xcalloc(npaths, sizeof(*trace->files));
	trace->nfiles = npaths;
	for (size_t i = 0; i < npaths; i++)
		trace->files[i].path = xstrdup(paths[i]);

	for (size_t i = 0; i < npaths; i++) {
		ret = open_file(trace, i, err, errlen);
		if (ret < 0)
			goto out_close;
	}
	set_shifts(trace);
	ret = create_views(trace, err, errlen);
	if (ret < 0)
		goto out_close;
	*out = trace;
	return 0;

out_close:
	trace_close(trace);
	return ret;
}

void trace_close(struct trace *trace)
{
	if (!trace)
		return;
	for (int k = 0; k < TRACE_CACHES; k++) {
		if (trace->caches[k].data && trace->caches[k].free)
			trace->caches[k].free(trace->caches[k].data);
	}
	free(trace->spans);
	free(trace->span_known);
	sqlite3_close(trace->db);
	for (size_t i = 0; i < trace->nfiles; i++) {
		remove_copy(&trace->files[i]);
		free(trace->files[i].open_path);
		free(trace->files[i].path);
		for (int t = 0; t < SRC_COUNT; t++)
			free(trace->files[i].columns[t]);
	}
	free(trace->files);
	free(trace);
}

sqlite3 *trace_db(struct trace *trace)
{
	return trace->db;
}

size_t trace_count(const struct trace *trace)
{
	return trace->nfiles;
}

const char *trace_path(const struct trace *trace, size_t traceId)
{
	return traceId < trace->nfiles ? trace->files[traceId].path : NULL;
}

enum trace_format trace_format(const struct trace *trace, size_t traceId)
{
	return traceId < trace->nfiles ? trace->files[traceId].format : 0;
}
