/*
 * The canonical views (see trace.h), built by introspection. Nothing here knows nsys versions: each
 * view column is described once, with the source columns it needs; a column whose source is missing
 * in a file reads NULL there, and a table missing from a file contributes a typed, empty SELECT. That
 * is how lazily created nsys tables, old schemas (no NVTX_EVENTS, EXPORT_META_DATA) and our own
 * writer all read the same.
 *
 * Every view exists twice: gpt_all_<view> over the whole trace (private to the analyzer) and
 * <view>, the same rows restricted to the scope of trace_set_scope(). Views are plain SQL, so memory
 * stays with SQLite's page cache however large the trace is. The event reader (events.c) reads one
 * file's table with the same column expressions (trace_event_sql).
 */
#include "analyzer/loader/trace-private.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The profiler's own time on the program's threads (nsys's, ours under --metrics: docs/schema.md). */
static const struct view_col overhead_cols[] = {
	{ "traceId", COL_TRACE_ID, 0, NULL, NULL, NULL }, { "start", COL_TIME, 0, "start", NULL, NULL },
	{ "end", COL_TIME, 0, "end", NULL, NULL }, PLAIN("globalTid"),
	{ "tid", COL_TID, 0, "globalTid", NULL, NULL },
	{ "name", COL_STRING, 1, "nameId", NULL, NULL },
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

/* The first non-NULL of the id columns (COL_FIRST_ID) or their strings (COL_FIRST_STRING): 0 when the
   file has none of them. */
static int append_first(sqlite3_str *s, const struct trace_file *f, enum source_table src, const struct view_col *c)
{
	const char *ids[3] = { c->src, c->src2, c->src3 };
	int n = 0;

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
		return 0;
	/* coalesce() needs two arguments */
	sqlite3_str_appendall(s, n == 1 ? ", NULL)" : ")");
	return 1;
}

/* The traced process from GPT_META, else the process of the kernel with that id: 0 when neither is there. */
static int append_meta_globalpid(sqlite3_str *s, const struct trace_file *f)
{
	int meta = has_column(f, SRC_GPT_META, "name") && has_column(f, SRC_GPT_META, "value");
	int kernel = has_column(f, SRC_KERNEL, "globalPid") && has_column(f, SRC_KERNEL, "correlationId");

	if (!meta && !kernel)
		return 0;
	sqlite3_str_appendall(s, "coalesce(");
	if (meta)
		sqlite3_str_appendf(s, "CAST((SELECT value FROM \"%w\".GPT_META WHERE name = 'pid')"
				    " AS INTEGER) << 24, ", f->schema);
	if (kernel)
		sqlite3_str_appendf(s, "(SELECT k.globalPid FROM \"%w\".CUPTI_ACTIVITY_KIND_KERNEL AS k"
				    " WHERE k.correlationId = e.correlationId LIMIT 1), ", f->schema);
	sqlite3_str_appendall(s, "NULL)");
	return 1;
}

/* e.<src> (inline text), else the StringIds value of <src2>: 0 when the file has neither. */
static int append_inline_or_string(sqlite3_str *s, const struct trace_file *f, enum source_table src,
				   const struct view_col *c)
{
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
		return 0;
	}
	return 1;
}

/* Column c's expression in a file's SELECT: 0, having written nothing, when the file lacks its sources. */
static int append_expr(sqlite3_str *s, const struct trace_file *f, size_t trace_id, enum source_table src,
		       const struct view_col *c)
{
	switch (c->kind) {
	case COL_TRACE_ID:
		sqlite3_str_appendf(s, "%lld", (long long)trace_id);
		return 1;
	case COL_PLAIN:
		if (!has_column(f, src, c->src))
			return 0;
		sqlite3_str_appendf(s, "e.\"%w\"", c->src);
		return 1;
	case COL_TIME:
		if (!has_column(f, src, c->src))
			return 0;
		if (f->shift)
			sqlite3_str_appendf(s, "(e.\"%w\" + %lld)", c->src, (long long)f->shift);
		else
			sqlite3_str_appendf(s, "e.\"%w\"", c->src);
		return 1;
	case COL_DUR:
		if (!has_column(f, src, "start") || !has_column(f, src, "end"))
			return 0;
		sqlite3_str_appendall(s, "(e.\"end\" - e.start)");
		return 1;
	case COL_PID:
		if (!has_column(f, src, c->src))
			return 0;
		sqlite3_str_appendf(s, "((e.\"%w\" >> 24) & 16777215)", c->src);
		return 1;
	case COL_TID:
		if (!has_column(f, src, c->src))
			return 0;
		sqlite3_str_appendf(s, "(e.\"%w\" & 16777215)", c->src);
		return 1;
	case COL_STRING:
		if (!can_lookup(f, src, c->src))
			return 0;
		append_string_lookup(s, f, c->src);
		return 1;
	case COL_FIRST_ID:
	case COL_FIRST_STRING:
		return append_first(s, f, src, c);
	case COL_META_GLOBALPID:
		return append_meta_globalpid(s, f);
	case COL_INLINE_OR_STRING:
		return append_inline_or_string(s, f, src, c);
	}
	return 1;
}

/* Column c of a file's SELECT, named as the view names it (alias set) or bare (a function's argument);
   a typed NULL where the file lacks its sources. */
static void append_col(sqlite3_str *s, const struct trace_file *f, size_t trace_id, enum source_table src,
		       const struct view_col *c, int alias)
{
	if (!append_expr(s, f, trace_id, src, c))
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
		sqlite3_str_appendf(s, " FROM \"%w\".\"%w\" AS e", f->schema, trace_source_names[src]);
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
				    n++ ? " OR " : "", f->schema, trace_source_names[process_owners[i]]);
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
				    f->schema, trace_source_names[owners[i]]);
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

int trace_views_create(struct trace *trace, char *err, size_t errlen)
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
		ret = create_base_view(trace, "profiler_overhead", SRC_PROFILER_OVERHEAD, overhead_cols,
				       NCOLS(overhead_cols), 0, err, errlen);
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
						      "CREATE TEMP VIEW memory AS SELECT * FROM gpt_all_memory;"
						      "CREATE TEMP VIEW profiler_overhead AS SELECT * FROM "
						      "gpt_all_profiler_overhead"), err, errlen);
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
	ret = trace_query_int(trace, sql, &n);
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
	sqlite3_str_appendf(s, " FROM \"%w\".\"%w\" AS e", f->schema, trace_source_names[v->source]);
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
		const char *table = trace_source_names[event_views[i].source];
		char *sql;
		int ok;

		if (strcmp(event_views[i].name, view) || !has_table(f, event_views[i].source))
			continue;
		/* one look-up each: min() and max() in one SELECT make SQLite scan the table */
		sql = sqlite3_mprintf("SELECT min(rowid) FROM \"%w\".\"%w\"", f->schema, table);
		ok = sql && trace_query_int(trace, sql, first) == SQLITE_OK;
		sqlite3_free(sql);
		sql = sqlite3_mprintf("SELECT max(rowid) FROM \"%w\".\"%w\"", f->schema, table);
		ok = ok && sql && trace_query_int(trace, sql, last) == SQLITE_OK;
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

