/*
 * NCCL collectives of one trace (see collectives.h): one pass over the trace's kernels and copies in
 * time order, per device, with the device's busy time kept as sorted disjoint intervals so that what
 * overlapped a collective, and what filled the window before it, are interval intersections.
 */
#include "analyzer/analysis/collectives.h"

#include "analyzer/loader/events.h"

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

/*
 * The time one kind of operation covers on a device (the union of its intervals), counted as the
 * operations arrive in order of start. Every interval seen so far starts at or before the current
 * time P, so the union past P is exactly [P, frontier): the coverage before any t <= P is
 * total - max(0, frontier - t), final once the walk has reached t. So the coverage before each
 * time a collective needs (its start, its end, the end of the previous one) is taken when the walk
 * passes that time, and no interval is kept.
 */
struct coverage {
	int64_t frontier;	/* the latest end so far */
	int64_t total;		/* covered ns so far, up to frontier */
	int any;
};

static void coverage_add(struct coverage *c, int64_t start, int64_t end)
{
	if (end <= start)
		return;
	if (!c->any || start >= c->frontier) {
		c->total += end - start;
		c->frontier = end;
		c->any = 1;
	} else if (end > c->frontier) {
		c->total += end - c->frontier;
		c->frontier = end;
	}
}

/* Covered ns before t; valid only while the walk has seen every interval starting before t. */
static int64_t coverage_before(const struct coverage *c, int64_t t)
{
	return c->any && c->frontier > t ? c->total - (c->frontier - t) : c->total;
}

enum { COVER_COMPUTE, COVER_COPY, COVER_BUSY, COVER_KINDS };

struct op {
	int64_t start, end, device, stream, name_id;
	int kind;	/* -1 compute kernel, -2 copy or set, else the collective type */
};

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

/* A collective whose end the walk has not reached: its overlap is known only then. */
struct pending {
	size_t item;
	int64_t busy_at_start;
};

/* What the walk keeps of one device: bounded by the collectives in flight, not by the operations. */
struct device_walk {
	int64_t device;
	struct coverage cover[COVER_KINDS];
	int64_t prev_end;			/* the latest end of a collective so far, or the first start */
	int64_t at_prev_end[COVER_KINDS];	/* the coverage before prev_end, once the walk passed it */
	int resolved;
	int64_t longest_ns, longest_name;	/* the longest compute kernel starting at or after prev_end */
	struct pending *pending;
	size_t npending;
};

/* The walk reached time t on the device: take the coverage before the times now passed. */
static void device_advance(struct device_walk *d, struct trace_collectives *out, int64_t t)
{
	if (!d->resolved && d->prev_end <= t) {
		for (int k = 0; k < COVER_KINDS; k++)
			d->at_prev_end[k] = coverage_before(&d->cover[k], d->prev_end);
		d->resolved = 1;
	}
	for (size_t i = 0; i < d->npending;) {
		struct collective *c = &out->items[d->pending[i].item];

		if (c->end > t) {
			i++;
			continue;
		}
		c->overlap_ns = coverage_before(&d->cover[COVER_BUSY], c->end) - d->pending[i].busy_at_start;
		d->pending[i] = d->pending[--d->npending];
	}
}

static struct device_walk *device_walk_get(struct device_walk **devices, size_t *n, int64_t device, int64_t start)
{
	for (size_t i = 0; i < *n; i++)
		if ((*devices)[i].device == device)
			return &(*devices)[i];
	*devices = xrealloc(*devices, (*n + 1) * sizeof(**devices));
	memset(&(*devices)[*n], 0, sizeof(**devices));
	(*devices)[*n].device = device;
	(*devices)[*n].prev_end = start;	/* the first window begins with the device's first operation */
	(*devices)[*n].resolved = 1;
	(*devices)[*n].longest_name = -1;
	return &(*devices)[(*n)++];
}

static void device_op(struct device_walk *d, struct trace_collectives *out, const struct op *o,
		      struct stream_ordinal **streams, size_t *nstreams)
{
	struct collective *c;
	size_t s;

	device_advance(d, out, o->start);
	if (o->kind < 0) {
		coverage_add(&d->cover[o->kind == -1 ? COVER_COMPUTE : COVER_COPY], o->start, o->end);
		coverage_add(&d->cover[COVER_BUSY], o->start, o->end);
		if (o->kind == -1 && o->start >= d->prev_end && o->end - o->start > d->longest_ns) {
			d->longest_ns = o->end - o->start;
			d->longest_name = o->name_id;
		}
		return;
	}
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
	c->longest_name = -1;
	if (d->prev_end < o->start) {
		int64_t busy = coverage_before(&d->cover[COVER_BUSY], o->start) - d->at_prev_end[COVER_BUSY];

		c->window_start = d->prev_end;
		c->compute_ns = coverage_before(&d->cover[COVER_COMPUTE], o->start) - d->at_prev_end[COVER_COMPUTE];
		c->copy_ns = coverage_before(&d->cover[COVER_COPY], o->start) - d->at_prev_end[COVER_COPY];
		c->idle_ns = (o->start - c->window_start) - busy;
		c->longest_ns = d->longest_ns;
		c->longest_name = d->longest_name;
	} else {
		c->window_start = o->start;
	}
	d->pending = xrealloc(d->pending, (d->npending + 1) * sizeof(*d->pending));
	d->pending[d->npending++] = (struct pending){ out->count - 1,
						      coverage_before(&d->cover[COVER_BUSY], o->start) };
	if (o->end > d->prev_end) {
		d->prev_end = o->end;
		d->resolved = 0;
		d->longest_ns = 0;
		d->longest_name = -1;
	}
}

/* The next operation of three streams (kernels, copies, sets) in order of (start, end). */
struct op_source {
	struct event_stream *s;
	const struct event_row *row;
	int kind;		/* 0 kernels, 1 copies or sets */
};

static int source_next(struct op_source *src, int64_t trace_id, char *err, size_t errlen)
{
	int ret;

	do {
		ret = event_stream_next(src->s, &src->row, err, errlen);
		if (ret <= 0) {
			src->row = NULL;
			return ret;
		}
	} while (src->row->trace_id != trace_id || event_int(src->row, 0, INT64_MIN) <= src->row->start);
	return 1;
}

/* Order the collectives by device and start (then end, then as the walk found them), as the merge
   reads them, and number each rank's NCCL streams by first use on the devices in turn. */
struct found_collective {
	struct collective c;
	size_t at;		/* its place in the walk's order */
};

static int collective_order(const void *pa, const void *pb)
{
	const struct found_collective *a = pa, *b = pb;

	if (a->c.device != b->c.device)
		return a->c.device < b->c.device ? -1 : 1;
	if (a->c.start != b->c.start)
		return a->c.start < b->c.start ? -1 : 1;
	if (a->c.end != b->c.end)
		return a->c.end < b->c.end ? -1 : 1;
	return (a->at > b->at) - (a->at < b->at);
}

static void order_collectives(struct trace_collectives *out, size_t nstreams)
{
	struct found_collective *found = xmalloc((out->count ? out->count : 1) * sizeof(*found));
	int *ordinal = xmalloc((nstreams ? nstreams : 1) * sizeof(*ordinal));
	int next = 0;

	for (size_t i = 0; i < out->count; i++)
		found[i] = (struct found_collective){ out->items[i], i };
	qsort(found, out->count, sizeof(*found), collective_order);
	for (size_t i = 0; i < nstreams; i++)
		ordinal[i] = -1;
	for (size_t i = 0; i < out->count; i++) {
		struct collective *c = &out->items[i];

		*c = found[i].c;
		if (ordinal[c->stream_ordinal] < 0)
			ordinal[c->stream_ordinal] = next++;
		c->stream_ordinal = ordinal[c->stream_ordinal];
	}
	free(found);
	free(ordinal);
}

static int remember_name(struct trace_collectives *out, int64_t id, const char *text)
{
	out->names = xrealloc(out->names, (out->nnames + 1) * sizeof(*out->names));
	out->names[out->nnames].id = id;
	out->names[out->nnames].text = xstrdup(text ? text : "");
	out->nnames++;
	return 0;
}

/*
 * One pass over the kernels, copies and memsets of the trace in order of (start, end), through the
 * loader's event streams: each device's coverage is counted as the operations go by, and each
 * collective takes what it needs when the walk passes its times (device_walk). Memory: the
 * collectives found, and per device the ones in flight.
 */
static int read_operations(struct trace *trace, int64_t trace_id, struct trace_collectives *out,
			   const struct name_kind *kinds, size_t nkinds, const struct typed_launch *typed, size_t ntyped,
			   char *err, size_t errlen)
{
	static const char *const kernel_cols[] = { "end", "deviceId", "streamId", "nameId" };
	static const char *const copy_cols[] = { "end", "deviceId", "streamId" };
	static const char *const views[] = { "kernels", "copies", "sets" };
	struct op_source src[3] = { { 0 } };
	struct device_walk *devices = NULL;
	struct stream_ordinal *streams = NULL;
	size_t ndevices = 0, nstreams = 0;
	int ret = 0;

	for (int i = 0; i < 3 && !ret; i++) {
		src[i].kind = i ? 1 : 0;
		ret = event_stream_open(trace, views[i], i ? copy_cols : kernel_cols, i ? 3 : 4, 3, -1, &src[i].s, err,
					errlen);
		if (!ret)
			ret = source_next(&src[i], trace_id, err, errlen) < 0 ? -EIO : 0;
	}
	while (!ret) {
		struct op_source *next = NULL;
		const struct event_row *r;
		struct op o;

		for (int i = 0; i < 3; i++) {
			const struct event_row *a = src[i].row, *b = next ? next->row : NULL;

			if (a && (!b || a->start < b->start ||
				  (a->start == b->start && event_int(a, 0, 0) < event_int(b, 0, 0))))
				next = &src[i];
		}
		if (!next)
			break;
		r = next->row;
		o.start = r->start;
		o.end = event_int(r, 0, 0);
		o.device = event_int(r, 1, -1);
		o.stream = event_int(r, 2, -1);
		o.name_id = next->kind ? -1 : event_int(r, 3, -1);
		if (next->kind) {
			o.kind = -2;
		} else {
			o.kind = kind_of(kinds, nkinds, o.name_id);
			if (o.kind == COLLECTIVE_OTHER && ntyped) {
				struct typed_launch key = { o.device, o.stream, o.start, 0 };
				const struct typed_launch *t = bsearch(&key, typed, ntyped, sizeof(*typed), typed_by_key);

				if (t)
					o.kind = t->type;
			}
		}
		device_op(device_walk_get(&devices, &ndevices, o.device, o.start), out, &o, &streams, &nstreams);
		if (source_next(next, trace_id, err, errlen) < 0)
			ret = -EIO;
	}
	for (size_t i = 0; i < ndevices; i++) {
		device_advance(&devices[i], out, INT64_MAX);
		free(devices[i].pending);
	}
	if (!ret)
		order_collectives(out, nstreams);
	for (int i = 0; i < 3; i++)
		event_stream_close(src[i].s);
	free(devices);
	free(streams);
	return ret;
}

int collectives_read(struct trace *trace, int64_t trace_id, struct trace_collectives *out, char *err, size_t errlen)
{
	/* The kernels' distinct nameIds, then their texts from StringIds: a name looked up per kernel
	 * row, then grouped, cost over a second per million kernels. */
	static const char names_sql[] = "SELECT id, value FROM strings WHERE traceId = ?1 AND id IN "
					"(SELECT nameId FROM kernels WHERE traceId = ?1) ORDER BY id";
	static const char any_nccl_sql[] = "SELECT 1 FROM strings WHERE traceId = ?1 AND value LIKE 'nccl%' LIMIT 1";
	sqlite3 *db = trace_db(trace);
	sqlite3_stmt *st = NULL;
	struct name_kind *kinds = NULL;
	struct typed_launch *typed = NULL;
	int64_t *generic = NULL;
	size_t nkinds = 0, ngeneric = 0, ntyped = 0, nccl;
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
	ret = read_operations(trace, trace_id, out, kinds, nkinds, typed, ntyped, err, errlen);
out:
	sqlite3_finalize(st);
	free(kinds);
	free(generic);
	free(typed);
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
