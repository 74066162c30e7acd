/*
 * One file of a trace (see trace-private.h): checked before SQLite sees it (a PyTorch profiler JSON
 * trace is imported first, into a cache; a trace left with a hot journal is read from a recovered
 * copy), opened read-only as the first or ATTACHed to it, then introspected: which source tables and
 * columns it has, ours or an nsys export, its structure checked, its clock's origin.
 */
#include "analyzer/loader/trace-private.h"
#include "common/util.h"
#include "analyzer/import/kineto.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

const char *const trace_source_names[SRC_COUNT] = {
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
	[SRC_PROFILER_OVERHEAD] = "PROFILER_OVERHEAD",
};

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
			if (name && !strcmp(name, trace_source_names[t]) && !f->columns[t])
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
		sqlite3_bind_text(st, 1, trace_source_names[t], -1, SQLITE_STATIC);
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
int trace_query_int(struct trace *trace, const char *sql, int64_t *out)
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
		rc = trace_query_int(trace, sql, &f->origin);
		sqlite3_free(sql);
	}
	if (rc == SQLITE_OK && has_table(f, SRC_PROCESSES)) {
		sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".PROCESSES", f->schema);
		rc = trace_query_int(trace, sql, &f->nprocess_rows);
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
		int64_t dummy = 0, without_rowid = 0;

		if (!has_table(f, t))
			continue;
		/* Our GPU_METRICS has no rowid (schema.sql, the one such table): its first and last rows
		 * by its key instead. */
		sql = sqlite3_mprintf("SELECT count(*) FROM pragma_table_list WHERE schema = %Q AND name = %Q "
				      "AND wr", f->schema, trace_source_names[t]);
		rc = trace_query_int(trace, sql, &without_rowid);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			without_rowid = 0;
		if (without_rowid)
			sql = sqlite3_mprintf("SELECT (SELECT typeId FROM \"%w\".\"%w\" LIMIT 1) + (SELECT typeId "
					      "FROM \"%w\".\"%w\" ORDER BY typeId DESC, timestamp DESC, metricId DESC "
					      "LIMIT 1)", f->schema, trace_source_names[t], f->schema, trace_source_names[t]);
		else
			sql = sqlite3_mprintf("SELECT (SELECT max(rowid) FROM \"%w\".\"%w\") + "
					      "(SELECT rowid FROM \"%w\".\"%w\" LIMIT 1)",
					      f->schema, trace_source_names[t], f->schema, trace_source_names[t]);
		rc = trace_query_int(trace, sql, &dummy);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
	}
	return 0;
}

/* ---- connections ---- */

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
int trace_file_connect(const struct trace_file *f, sqlite3 **db)
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
int trace_file_attach(sqlite3 *db, const struct trace_file *f)
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

/* ---- a killed writer's trace, an imported one ---- */

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
 * beside it (analyzer/import/kineto.h); a cache made in a temporary folder goes with the trace's
 * close.
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

/* ---- open/release ---- */

int trace_file_open(struct trace *trace, size_t i, char *err, size_t errlen)
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
		rc = trace_file_connect(f, &trace->db);
		if (rc != SQLITE_OK)
			return sqlite_failure(trace->db, rc, f->path, err, errlen);
		set_sort_threads(trace->db);
	} else {
		snprintf(f->schema, sizeof(f->schema), "t%zu", i);
		rc = trace_file_attach(trace->db, f);
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


void trace_file_release(struct trace_file *f)
{
	remove_copy(f);
	free(f->open_path);
	free(f->path);
	for (int t = 0; t < SRC_COUNT; t++)
		free(f->columns[t]);
}
