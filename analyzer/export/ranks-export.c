/*
 * The multi-rank timeline (see ranks-export.h). Chrome JSON rather than Perfetto protobuf: flows
 * between ranks are plain "s"/"f" events bound to the enclosing kernel slice, and the file is
 * written rank after rank without interning state shared between them.
 *
 * A flow joins the kernels of one collective on two neighbouring ranks; its id is the collective's
 * matching key (analyzer/analysis/collectives.h) and the pair's index, so ids are unique without a
 * table. Only collectives that every rank has get arrows: a truncated rank would leave an arrow
 * without its end.
 */
#include "analyzer/export/ranks-export.h"
#include "analyzer/export/timeline.h"

#include "common/util.h"
#include "analyzer/loader/trace.h"
#include "analyzer/analysis/collectives.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out {
	struct export_file *file;
	int first;
};

static void emit(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct out *o, const char *fmt, ...)
{
	char stack[1024], *buf = stack;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(stack, sizeof(stack), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(stack)) {
		buf = xmalloc((size_t)n + 1);
		va_start(ap, fmt);
		vsnprintf(buf, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	if (!o->first)
		export_file_write(o->file, ",\n", 2);
	o->first = 0;
	export_file_write(o->file, buf, (size_t)n);
	if (buf != stack)
		free(buf);
}

/* s as a JSON string body (no quotes) into buf, cut at len. */
static const char *json_text(char *buf, size_t len, const char *s)
{
	size_t k = 0;

	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && k + 7 < len; p++) {
		if (*p == '"' || *p == '\\') {
			buf[k++] = '\\';
			buf[k++] = (char)*p;
		} else if (*p < 0x20) {
			k += (size_t)snprintf(buf + k, len - k, "\\u%04x", *p);
		} else {
			buf[k++] = (char)*p;
		}
	}
	buf[k] = '\0';
	return buf;
}

static double us(int64_t ns)
{
	return (double)ns / 1000.0;
}

/* Per (stream ordinal, type): how many collectives every rank has. */
struct common_count {
	int64_t key;
	int64_t min;	/* INT64_MAX until a rank counted */
};

struct counts {
	struct common_count *items;
	size_t n;
	int64_t *mine;		/* this rank's count per item */
};

static int64_t ordinal_type(const struct rank_collective *c)
{
	return (int64_t)c->ordinal * COLLECTIVE_TYPES + c->type;
}

static int count_rank(const struct rank_collective *c, void *arg)
{
	struct counts *k = arg;
	size_t i;

	for (i = 0; i < k->n && k->items[i].key != ordinal_type(c); i++)
		;
	if (i == k->n) {
		k->items = xrealloc(k->items, (k->n + 1) * sizeof(*k->items));
		k->mine = xrealloc(k->mine, (k->n + 1) * sizeof(*k->mine));
		k->items[i] = (struct common_count){ ordinal_type(c), INT64_MAX };
		k->mine[i] = 0;
		k->n++;
	}
	k->mine[i]++;
	return 0;
}

struct flows {
	struct out *o;
	const struct counts *common;
	size_t index, nranks;
	int64_t shift, pid;
	int64_t *stream_of_ordinal;	/* the rank's stream id for each NCCL stream ordinal */
	size_t nordinals;
};

static uint64_t flow_id(const struct rank_collective *c, size_t pair)
{
	uint64_t key = (uint64_t)c->type << 60 | ((uint64_t)c->ordinal & 0xfff) << 48 | ((uint64_t)c->seq & 0xffffffffffffull);

	return (key * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)pair << 1 | 1);
}

static int emit_flows(const struct rank_collective *c, void *arg)
{
	struct flows *f = arg;
	int64_t tid, everyone = 0;

	for (size_t i = 0; i < f->common->n; i++)
		if (f->common->items[i].key == ordinal_type(c))
			everyone = f->common->items[i].min;
	if (c->type == COLLECTIVE_SENDRECV || c->seq >= everyone ||
	    (size_t)c->ordinal >= f->nordinals)
		return 0;
	tid = f->stream_of_ordinal[c->ordinal];
	/* Bound to the slice that encloses ts (the collective's own kernel). The trace processor reads
	   flows in time order, so an arrow must start no later than it ends: it leaves a ns after the
	   kernel's start and arrives a ns before the next rank's kernel ends, which holds whenever no
	   rank leaves a collective before every rank arrived. */
	if (f->index + 1 < f->nranks)
		emit(f->o, "{\"ph\":\"s\",\"id\":\"0x%" PRIx64 "\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
		     ",\"ts\":%.3f,\"cat\":\"collective\",\"name\":\"%s\"}",
		     flow_id(c, f->index), f->pid, tid, us(c->start + f->shift + 1), collective_type_name(c->type));
	if (f->index > 0)
		emit(f->o, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":\"0x%" PRIx64 "\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
		     ",\"ts\":%.3f,\"cat\":\"collective\",\"name\":\"%s\"}",
		     flow_id(c, f->index - 1), f->pid, tid, us(c->end + f->shift - 1), collective_type_name(c->type));
	return 0;
}

static int sql_error(struct trace *trace, const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot read '%s': %s", path, sqlite3_errmsg(trace_db(trace)));
	return -EIO;
}

/* The rank's process: its name and its place among the others. */
static void write_process(struct out *o, const struct job_rank *r, int64_t pid)
{
	char host[128];

	emit(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRId64 ",\"args\":{\"name\":\"rank %" PRId64
	     " (%s, pid %" PRId64 ")\"}}", pid, r->rank, json_text(host, sizeof(host), *r->host ? r->host : "-"), r->pid);
	emit(o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRId64 ",\"args\":{\"sort_index\":%" PRId64 "}}",
	     pid, r->rank);
}

/* The kernels, copies and sets, a track per stream: 0 or -EIO. */
static int write_gpu_work(struct out *o, struct trace *trace, const struct job_rank *r, int64_t pid,
			  int64_t shift, char *err, size_t errlen)
{
	static const char work_sql[] =
		"SELECT streamId, start, end, name, 'kernel' FROM kernels WHERE end > start "
		"UNION ALL SELECT streamId, start, end, CASE copyKind WHEN 1 THEN 'Memcpy HtoD' WHEN 2 THEN "
		"'Memcpy DtoH' WHEN 8 THEN 'Memcpy DtoD' WHEN 10 THEN 'Memcpy PtoP' ELSE 'Memcpy' END, 'copy' "
		"FROM copies WHERE end > start "
		"UNION ALL SELECT streamId, start, end, 'Memset', 'set' FROM sets WHERE end > start "
		"ORDER BY 1, 2, 3 DESC";
	int64_t stream = INT64_MIN, last_end = 0;
	sqlite3_stmt *st = NULL;
	char name[512];
	int rc, ret = 0;

	if (sqlite3_prepare_v2(trace_db(trace), work_sql, -1, &st, NULL) != SQLITE_OK)
		return sql_error(trace, r->trace, err, errlen);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t sid = sqlite3_column_int64(st, 0), start = sqlite3_column_int64(st, 1);
		int64_t end = sqlite3_column_int64(st, 2);

		if (sid != stream) {
			stream = sid;
			last_end = INT64_MIN;
			emit(o, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
			     ",\"args\":{\"name\":\"GPU stream %" PRId64 "\"}}", pid, sid + 1, sid);
		}
		/* one track per stream: work that overlaps the previous one (a clock quirk) is cut */
		if (start < last_end)
			start = last_end;
		if (end <= start)
			continue;
		last_end = end;
		emit(o, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\","
		     "\"name\":\"%s\"}", pid, sid + 1, us(start + shift), us(end - start),
		     (const char *)sqlite3_column_text(st, 4),
		     json_text(name, sizeof(name), (const char *)sqlite3_column_text(st, 3)));
	}
	if (rc != SQLITE_DONE)
		ret = sql_error(trace, r->trace, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

/* NVTX push/pop ranges nest per thread; host tracks get tids above any stream's. */
static void write_nvtx(struct out *o, struct trace *trace, int64_t pid, int64_t shift)
{
	static const char nvtx_sql[] = "SELECT tid, start, end, text FROM nvtx WHERE eventType = 59 AND end >= start "
				       "ORDER BY tid, start, end DESC";
	int64_t thread = INT64_MIN;
	sqlite3_stmt *st = NULL;
	char name[512];

	if (sqlite3_prepare_v2(trace_db(trace), nvtx_sql, -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t tid = sqlite3_column_int64(st, 0);

			if (tid != thread) {
				thread = tid;
				emit(o, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
				     ",\"args\":{\"name\":\"host thread %" PRId64 " (NVTX)\"}}", pid, (int64_t)1 << 32 | tid,
				     tid);
			}
			emit(o, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":%.3f,\"dur\":%.3f,\"cat\":"
			     "\"nvtx\",\"name\":\"%s\"}", pid, (int64_t)1 << 32 | tid,
			     us(sqlite3_column_int64(st, 1) + shift),
			     us(sqlite3_column_int64(st, 2) - sqlite3_column_int64(st, 1)),
			     json_text(name, sizeof(name), (const char *)sqlite3_column_text(st, 3)));
		}
	}
	sqlite3_finalize(st);
}

/* Flows from the rank's summary: NCCL stream ordinals are in order of first use, as
   analyzer/analysis/collectives.c numbers them. Without a readable summary, none. */
static void write_flows(struct trace *trace, const char *summary, struct flows *f, char *err, size_t errlen)
{
	static const char first_sql[] = "SELECT streamId, MIN(start) FROM kernels WHERE name LIKE 'nccl%' "
					"GROUP BY streamId ORDER BY 2";
	struct rank_summary s = { 0 };
	sqlite3_stmt *q;

	if (summary && rank_summary_load(summary, &s, err, errlen) == 0) {
		if (sqlite3_prepare_v2(trace_db(trace), first_sql, -1, &q, NULL) == SQLITE_OK) {
			while (sqlite3_step(q) == SQLITE_ROW) {
				f->stream_of_ordinal = xrealloc(f->stream_of_ordinal, (f->nordinals + 1) * sizeof(int64_t));
				f->stream_of_ordinal[f->nordinals++] = sqlite3_column_int64(q, 0) + 1;
			}
			sqlite3_finalize(q);
		}
		rank_summary_collectives(&s, emit_flows, f, err, errlen);
	}
	rank_summary_release(&s);
}

/* One rank: its process, its streams' GPU work, its NVTX ranges, its flows. */
static int write_rank(struct out *o, const struct job_report *job, size_t index, const char *summary,
		      const struct counts *common, char *err, size_t errlen)
{
	const struct job_rank *r = &job->ranks[index];
	const char *paths[1] = { r->trace };
	int64_t pid = r->rank + 1, shift = r->clock_anchor_ns + r->clock_refine_ns;
	struct flows f = { .o = o, .common = common, .index = index, .nranks = job->nranks, .shift = shift,
			   .pid = pid };
	struct trace *trace = NULL;
	int ret;

	ret = trace_open(paths, 1, &trace, err, errlen);
	if (ret < 0)
		return ret;
	write_process(o, r, pid);
	ret = write_gpu_work(o, trace, r, pid, shift, err, errlen);
	if (ret == 0) {
		write_nvtx(o, trace, pid, shift);
		write_flows(trace, summary, &f, err, errlen);
	}
	free(f.stream_of_ordinal);
	trace_close(trace);
	return ret;
}

/* The job's critical path across ranks (analyzer/ranks/job-path.h) as a process of its own, first:
   one slice per stretch, named by the rank and what held it up there, or the collective's own time. */
static void write_critical_path(struct out *o, const struct job_path *p)
{
	const int64_t pid = 0;

	if (!p->nstretches)
		return;
	emit(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRId64 ",\"args\":{\"name\":"
	     "\"gpt-trace critical path across ranks\"}}", pid);
	emit(o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRId64 ",\"args\":{\"sort_index\":-1}}",
	     pid);
	emit(o, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64 ",\"tid\":1,\"args\":{\"name\":"
	     "\"what bounds the step\"}}", pid);
	for (size_t i = 0; i < p->nstretches; i++) {
		const struct job_path_stretch *x = &p->stretches[i];

		if (x->rank < 0)
			emit(o, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,\"cat\":"
			     "\"gpt-trace.critical-path\",\"name\":\"communication\"}", pid, us(x->start), us(x->end - x->start));
		else
			emit(o, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,\"cat\":"
			     "\"gpt-trace.critical-path\",\"name\":\"rank %" PRId64 ": %s\",\"args\":{\"rank\":%" PRId64 "}}",
			     pid, us(x->start), us(x->end - x->start), x->rank,
			     x->part < WHAT_IF_PARTS ? what_if_part_name(x->part) : "not on its replayed path", x->rank);
	}
}

int export_ranks_write(const struct job_report *job, const char *const *summaries, const char *path, int gzip,
		       char *err, size_t errlen)
{
	struct counts common = { 0 };
	struct out o = { .first = 1 };
	int ret;

	/* the collectives every rank has, per stream ordinal and type */
	for (size_t i = 0; i < job->nranks; i++) {
		struct rank_summary s;
		struct counts mine = { 0 };

		if (rank_summary_load(summaries[i], &s, err, errlen) < 0)
			continue;
		rank_summary_collectives(&s, count_rank, &mine, err, errlen);
		rank_summary_release(&s);
		for (size_t k = 0; k < mine.n; k++) {
			size_t c;

			for (c = 0; c < common.n && common.items[c].key != mine.items[k].key; c++)
				;
			if (c == common.n) {
				if (i) /* a stream/type the earlier ranks lack: no rank-to-rank arrows for it */
					continue;
				common.items = xrealloc(common.items, (common.n + 1) * sizeof(*common.items));
				common.items[c] = (struct common_count){ mine.items[k].key, INT64_MAX };
				common.n++;
			}
			if (mine.mine[k] < common.items[c].min)
				common.items[c].min = mine.mine[k];
		}
		for (size_t c = 0; c < common.n; c++) {
			size_t k;

			for (k = 0; k < mine.n && mine.items[k].key != common.items[c].key; k++)
				;
			if (k == mine.n)
				common.items[c].min = 0;
		}
		free(mine.items);
		free(mine.mine);
	}
	ret = export_file_open(&o.file, path, gzip, err, errlen);
	if (ret < 0)
		goto out;
	{
		static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";

		export_file_write(o.file, head, sizeof(head) - 1);
	}
	write_critical_path(&o, &job->path);
	for (size_t i = 0; i < job->nranks; i++) {
		ret = write_rank(&o, job, i, summaries[i], &common, err, errlen);
		if (ret < 0) {
			export_file_abort(o.file);
			goto out;
		}
	}
	export_file_write(o.file, "\n]}\n", 4);
	ret = export_file_commit(o.file, err, errlen);
out:
	free(common.items);
	return ret;
}
