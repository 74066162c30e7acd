/*
 * NCCL collectives of one trace (see collectives.h): one pass over the trace's kernels and copies in
 * time order, per device, with the device's busy time kept as sorted disjoint intervals so that what
 * overlapped a collective, and what filled the window before it, are interval intersections.
 */
#include "rules/collectives.h"

#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct collective_name {
	int64_t id;
	char *text;
};

static const char *const type_names[COLLECTIVE_TYPES] = {
	"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "AllToAll", "SendRecv", "Other",
};

const char *collective_type_name(int type)
{
	return type >= 0 && type < COLLECTIVE_TYPES ? type_names[type] : NULL;
}

int collective_type_of(const char *name)
{
	static const struct {
		const char *word;
		int type;
	} words[] = {
		{ "AllReduce", COLLECTIVE_ALLREDUCE }, { "AllGather", COLLECTIVE_ALLGATHER },
		{ "ReduceScatter", COLLECTIVE_REDUCESCATTER }, { "Broadcast", COLLECTIVE_BROADCAST },
		{ "Reduce", COLLECTIVE_REDUCE }, { "AllToAll", COLLECTIVE_ALLTOALL },
		{ "SendRecv", COLLECTIVE_SENDRECV }, { "Send", COLLECTIVE_SENDRECV },
		{ "Recv", COLLECTIVE_SENDRECV },
	};
	const char *op;
	size_t len;

	if (!name || strncmp(name, "nccl", 4))
		return -1;
	/* "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" (NCCL 2.19+), "ncclKernel_AllReduce_RING_LL_Sum_float"
	   (older): the collective is the word after the first '_' */
	op = strchr(name, '_');
	if (!op)
		return COLLECTIVE_OTHER;
	op++;
	len = strcspn(op, "_(<");
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].word) == len && !strncmp(op, words[i].word, len))
			return words[i].type;
	return COLLECTIVE_OTHER;
}

int collective_type_of_range(const char *text)
{
	static const struct {
		const char *name;
		int type;
	} ranges[] = {
		{ "ncclAllReduce", COLLECTIVE_ALLREDUCE }, { "ncclAllGather", COLLECTIVE_ALLGATHER },
		{ "ncclReduceScatter", COLLECTIVE_REDUCESCATTER }, { "ncclBroadcast", COLLECTIVE_BROADCAST },
		{ "ncclBcast", COLLECTIVE_BROADCAST }, { "ncclReduce", COLLECTIVE_REDUCE },
		{ "ncclAlltoAll", COLLECTIVE_ALLTOALL }, { "ncclAllToAll", COLLECTIVE_ALLTOALL },
		{ "ncclSend", COLLECTIVE_SENDRECV }, { "ncclRecv", COLLECTIVE_SENDRECV },
	};

	for (size_t i = 0; text && i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (!strcmp(text, ranges[i].name))
			return ranges[i].type;
	return -1;
}

struct span {
	int64_t start, end;
};

/* Sorted disjoint intervals: the union of what was added in order of start. */
struct span_union {
	struct span *items;
	size_t count, cap;
};

static void union_add(struct span_union *u, int64_t start, int64_t end)
{
	if (end <= start)
		return;
	if (u->count && start <= u->items[u->count - 1].end) {
		if (end > u->items[u->count - 1].end)
			u->items[u->count - 1].end = end;
		return;
	}
	if (u->count == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 256;
		u->items = xrealloc(u->items, u->cap * sizeof(*u->items));
	}
	u->items[u->count++] = (struct span){ start, end };
}

/* How much of [start, end) the union covers. */
static int64_t union_cover(const struct span_union *u, int64_t start, int64_t end)
{
	size_t lo = 0, hi = u->count;
	int64_t ns = 0;

	if (end <= start)
		return 0;
	while (lo < hi) {	/* the first interval that ends after start */
		size_t mid = lo + (hi - lo) / 2;

		if (u->items[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < u->count && u->items[i].start < end; i++) {
		int64_t a = u->items[i].start > start ? u->items[i].start : start;
		int64_t b = u->items[i].end < end ? u->items[i].end : end;

		ns += b - a;
	}
	return ns;
}

struct op {
	int64_t start, end, device, stream, name_id;
	int kind;	/* -1 compute kernel, -2 copy or set, else the collective type */
};

static int op_by_device_start(const void *pa, const void *pb)
{
	const struct op *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

struct name_kind {
	int64_t id;
	int kind;
};

static int kind_of(const struct name_kind *kinds, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (kinds[mid].id == id)
			return kinds[mid].kind;
		if (kinds[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* A generic kernel's collective, from the NVTX range around its launch. */
struct typed_launch {
	int64_t device, stream, start;
	int type;
};

static int typed_by_key(const void *pa, const void *pb)
{
	const struct typed_launch *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

struct nccl_range {
	int64_t tid, start, end;
	int type;
};

/*
 * Name the collectives of generic kernels (name ids in generic[]) by NCCL's NVTX ranges: the
 * innermost "nccl*" push/pop range of the launching thread that holds the launch call. Both lists
 * are small (a range and a launch per collective), so they are read whole and matched in memory.
 */
static void type_generic_launches(struct trace *trace, int64_t trace_id, const int64_t *generic, size_t ngeneric,
				  struct typed_launch **out, size_t *nout)
{
	static const char ranges_sql[] = "SELECT tid, start, end, text FROM nvtx WHERE traceId = ?1 AND eventType = 59 "
					 "AND end >= start AND text LIKE 'nccl%' ORDER BY tid, start";
	static const char launches_sql[] =
		"SELECT k.deviceId, k.streamId, k.start, a.tid, a.start FROM kernels k JOIN api_calls a "
		"ON a.traceId = k.traceId AND a.correlationId = k.correlationId WHERE k.traceId = ?1 AND k.nameId = ?2";
	struct nccl_range *ranges = NULL;
	size_t nranges = 0;
	sqlite3_stmt *st;

	*out = NULL;
	*nout = 0;
	if (sqlite3_prepare_v2(trace_db(trace), ranges_sql, -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, trace_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int type = collective_type_of_range((const char *)sqlite3_column_text(st, 3));

		if (type < 0)
			continue;
		ranges = xrealloc(ranges, (nranges + 1) * sizeof(*ranges));
		ranges[nranges++] = (struct nccl_range){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
							 sqlite3_column_int64(st, 2), type };
	}
	sqlite3_finalize(st);
	if (!nranges || sqlite3_prepare_v2(trace_db(trace), launches_sql, -1, &st, NULL) != SQLITE_OK) {
		free(ranges);
		return;
	}
	for (size_t g = 0; g < ngeneric; g++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, trace_id);
		sqlite3_bind_int64(st, 2, generic[g]);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t tid = sqlite3_column_int64(st, 3), at = sqlite3_column_int64(st, 4);
			size_t lo = 0, hi = nranges;
			int type = -1;

			while (lo < hi) {	/* the first range of the thread starting after the call */
				size_t mid = lo + (hi - lo) / 2;

				if (ranges[mid].tid < tid || (ranges[mid].tid == tid && ranges[mid].start <= at))
					lo = mid + 1;
				else
					hi = mid;
			}
			/* the innermost holding range starts last: walk back over the thread's earlier ones */
			for (size_t i = lo; i-- > 0 && ranges[i].tid == tid;) {
				if (ranges[i].end >= at) {
					type = ranges[i].type;
					break;
				}
				if (at - ranges[i].end > 1000000000)	/* ranges do not last a second */
					break;
			}
			if (type < 0)
				continue;
			*out = xrealloc(*out, (*nout + 1) * sizeof(**out));
			(*out)[(*nout)++] = (struct typed_launch){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
								   sqlite3_column_int64(st, 2), type };
		}
	}
	sqlite3_finalize(st);
	free(ranges);
	if (*nout)
		qsort(*out, *nout, sizeof(**out), typed_by_key);
}

static int sql_failed(struct trace *trace, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot read the %s of '%s': %s", what, trace_path(trace, 0),
		 sqlite3_errmsg(trace_db(trace)));
	return -EIO;
}

/* Streams are numbered per rank in order of first use: stream ids differ between ranks (they are
   handed out in creation order), the order in which a rank's communicators first run does not. */
struct stream_ordinal {
	int64_t device, stream;
	int64_t seq[COLLECTIVE_TYPES];
};

static void per_device(struct trace_collectives *out, const struct op *ops, size_t n, struct stream_ordinal **streams,
		       size_t *nstreams)
{
	struct span_union compute = { 0 }, copy = { 0 }, busy = { 0 };
	int64_t prev_end;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (ops[i].kind == -1)
			union_add(&compute, ops[i].start, ops[i].end);
		else if (ops[i].kind == -2)
			union_add(&copy, ops[i].start, ops[i].end);
		if (ops[i].kind < 0)
			union_add(&busy, ops[i].start, ops[i].end);
	}
	prev_end = n ? ops[0].start : 0;
	for (size_t i = 0; i < n; i++) {
		const struct op *o = &ops[i];
		struct collective *c;
		size_t s;

		if (o->kind < 0)
			continue;
		for (s = 0; s < *nstreams; s++)
			if ((*streams)[s].device == o->device && (*streams)[s].stream == o->stream)
				break;
		if (s == *nstreams) {
			*streams = xrealloc(*streams, (*nstreams + 1) * sizeof(**streams));
			memset(&(*streams)[s], 0, sizeof(**streams));
			(*streams)[s].device = o->device;
			(*streams)[s].stream = o->stream;
			(*nstreams)++;
		}
		out->items = xrealloc(out->items, (out->count + 1) * sizeof(*out->items));
		c = &out->items[out->count++];
		memset(c, 0, sizeof(*c));
		c->type = o->kind;
		c->stream_ordinal = (int)s;
		c->seq = (*streams)[s].seq[o->kind]++;
		c->device = o->device;
		c->start = o->start;
		c->end = o->end;
		c->overlap_ns = union_cover(&busy, o->start, o->end);
		c->window_start = prev_end < o->start ? prev_end : o->start;
		c->compute_ns = union_cover(&compute, c->window_start, o->start);
		c->copy_ns = union_cover(&copy, c->window_start, o->start);
		c->idle_ns = (o->start - c->window_start) - union_cover(&busy, c->window_start, o->start);
		c->longest_name = -1;
		/* compute kernels that started in the window: ops are in order of start */
		while (k < i && ops[k].start < c->window_start)
			k++;
		for (size_t j = k; j < i; j++) {
			if (ops[j].kind == -1 && ops[j].end - ops[j].start > c->longest_ns) {
				c->longest_ns = ops[j].end - ops[j].start;
				c->longest_name = ops[j].name_id;
			}
		}
		if (o->end > prev_end)
			prev_end = o->end;
	}
	free(compute.items);
	free(copy.items);
	free(busy.items);
}

static int remember_name(struct trace_collectives *out, int64_t id, const char *text)
{
	out->names = xrealloc(out->names, (out->nnames + 1) * sizeof(*out->names));
	out->names[out->nnames].id = id;
	out->names[out->nnames].text = xstrdup(text ? text : "");
	out->nnames++;
	return 0;
}

int collectives_read(struct trace *trace, int64_t trace_id, struct trace_collectives *out, char *err, size_t errlen)
{
	/* The kernels' distinct nameIds, then their texts from StringIds: a name looked up per kernel
	 * row, then grouped, cost over a second per million kernels. */
	static const char names_sql[] = "SELECT id, value FROM strings WHERE traceId = ?1 AND id IN "
					"(SELECT nameId FROM kernels WHERE traceId = ?1) ORDER BY id";
	static const char any_nccl_sql[] = "SELECT 1 FROM strings WHERE traceId = ?1 AND value LIKE 'nccl%' LIMIT 1";
	static const char ops_sql[] =
		"SELECT start, end, deviceId, streamId, nameId, 0 FROM kernels WHERE traceId = ?1 AND end > start "
		"UNION ALL SELECT start, end, deviceId, streamId, -1, 1 FROM copies WHERE traceId = ?1 AND end > start "
		"UNION ALL SELECT start, end, deviceId, streamId, -1, 1 FROM sets WHERE traceId = ?1 AND end > start";
	sqlite3 *db = trace_db(trace);
	sqlite3_stmt *st = NULL;
	struct name_kind *kinds = NULL;
	struct stream_ordinal *streams = NULL;
	struct typed_launch *typed = NULL;
	int64_t *generic = NULL;
	struct op *ops = NULL;
	size_t nkinds = 0, nops = 0, capops = 0, nstreams = 0, ngeneric = 0, ntyped = 0, nccl;
	int rc, ret = 0;

	memset(out, 0, sizeof(*out));
	/* No string of the trace begins with "nccl": no NCCL kernel, nothing to read (single-GPU
	 * traces; the strings are few, the kernels may be millions). */
	if (sqlite3_prepare_v2(db, any_nccl_sql, -1, &st, NULL) != SQLITE_OK)
		return sql_failed(trace, "strings", err, errlen);
	sqlite3_bind_int64(st, 1, trace_id);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	st = NULL;
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return sql_failed(trace, "strings", err, errlen);
	if (sqlite3_prepare_v2(db, names_sql, -1, &st, NULL) != SQLITE_OK)
		return sql_failed(trace, "kernel names", err, errlen);
	sqlite3_bind_int64(st, 1, trace_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		kinds = xrealloc(kinds, (nkinds + 1) * sizeof(*kinds));
		kinds[nkinds].id = sqlite3_column_int64(st, 0);
		kinds[nkinds].kind = collective_type_of((const char *)sqlite3_column_text(st, 1));
		if (kinds[nkinds].kind == COLLECTIVE_OTHER) {
			generic = xrealloc(generic, (ngeneric + 1) * sizeof(*generic));
			generic[ngeneric++] = kinds[nkinds].id;
		}
		nkinds++;
		/* keep every compute kernel's name: a window's longest kernel points to one */
		remember_name(out, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE) {
		ret = sql_failed(trace, "kernel names", err, errlen);
		goto out;
	}
	for (nccl = 0; nccl < nkinds && kinds[nccl].kind < 0; nccl++)
		;
	if (nccl == nkinds)	/* no NCCL kernel: nothing more to read (most single-GPU traces) */
		goto out;
	if (ngeneric)
		type_generic_launches(trace, trace_id, generic, ngeneric, &typed, &ntyped);
	if (sqlite3_prepare_v2(db, ops_sql, -1, &st, NULL) != SQLITE_OK) {
		ret = sql_failed(trace, "kernels", err, errlen);
		goto out;
	}
	sqlite3_bind_int64(st, 1, trace_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct op *o;

		if (nops == capops) {
			capops = capops ? 2 * capops : 4096;
			ops = xrealloc(ops, capops * sizeof(*ops));
		}
		o = &ops[nops++];
		o->start = sqlite3_column_int64(st, 0);
		o->end = sqlite3_column_int64(st, 1);
		o->device = sqlite3_column_int64(st, 2);
		o->stream = sqlite3_column_int64(st, 3);
		o->name_id = sqlite3_column_int64(st, 4);
		if (sqlite3_column_int(st, 5)) {
			o->kind = -2;
		} else {
			o->kind = kind_of(kinds, nkinds, o->name_id);
			if (o->kind == COLLECTIVE_OTHER && ntyped) {
				struct typed_launch key = { o->device, o->stream, o->start, 0 };
				const struct typed_launch *t = bsearch(&key, typed, ntyped, sizeof(*typed), typed_by_key);

				if (t)
					o->kind = t->type;
			}
		}
	}
	if (rc != SQLITE_DONE) {
		ret = sql_failed(trace, "kernels", err, errlen);
		goto out;
	}
	if (nops)
		qsort(ops, nops, sizeof(*ops), op_by_device_start);
	for (size_t i = 0, j; i < nops; i = j) {
		for (j = i; j < nops && ops[j].device == ops[i].device; j++)
			;
		per_device(out, ops + i, j - i, &streams, &nstreams);
	}
out:
	sqlite3_finalize(st);
	free(kinds);
	free(streams);
	free(generic);
	free(typed);
	free(ops);
	if (ret < 0)
		collectives_release(out);
	return ret;
}

void collectives_release(struct trace_collectives *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->nnames; i++)
		free(list->names[i].text);
	free(list->names);
	free(list->items);
	memset(list, 0, sizeof(*list));
}

const char *collectives_kernel_name(const struct trace_collectives *list, int64_t name_id)
{
	size_t lo = 0, hi = list->nnames;

	while (lo < hi) {	/* read in order of nameId */
		size_t mid = lo + (hi - lo) / 2;

		if (list->names[mid].id == name_id)
			return list->names[mid].text;
		if (list->names[mid].id < name_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return "";
}
