/*
 * The timeline walk's plumbing (walk.h), below its passes: SQL errors and statements, lanes (a
 * track's nesting stack and its overflow tracks), flow ids, the rows held at one timestamp, the
 * correlation map's words and the events' arguments.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyzer/export/walk.h"

int walk_sql_error(struct timeline *tl, const char *what)
{
	snprintf(tl->err, tl->errlen, "cannot export '%s': %s: %s", trace_path(tl->trace, 0), what,
		 sqlite3_errmsg(tl->db));
	return -EIO;
}

int walk_prepare(struct timeline *tl, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(tl->db, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return walk_sql_error(tl, "query failed");
	}
	return 0;
}

char *walk_format(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

const char *walk_column_text(sqlite3_stmt *st, int col)
{
	return (const char *)sqlite3_column_text(st, col);
}

/* ------------------------------------------------------------------------------------------------ */
/* Lanes: nesting stacks, one per track, and overflow tracks for what does not nest. */

void lane_set_init(struct lane_set *set, enum lane_naming naming, const char *name, int32_t pid,
		   uint64_t parent_uuid, int32_t sort_base)
{
	memset(set, 0, sizeof(*set));
	set->naming = naming;
	set->name = name;
	set->pid = pid;
	set->parent_uuid = parent_uuid;
	set->sort_base = sort_base;
}

/* Lane 0 of a thread or stream is the thread's or stream's own track. */
int lane_set_init_track(struct lane_set *set, const struct timeline_track *track)
{
	lane_set_init(set, LANE_OVERLAP, track->name, track->pid, track->parent_uuid, track->sort_index);
	set->lanes = calloc(1, sizeof(*set->lanes));
	if (!set->lanes)
		return -ENOMEM;
	set->lanes[0].track = *track;
	set->n = 1;
	return 0;
}

void lane_set_release(struct lane_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->lanes[i].name);
		free(set->lanes[i].ends);
	}
	free(set->lanes);
	memset(set, 0, sizeof(*set));
}

static int lane_add(struct timeline *tl, struct lane_set *set)
{
	struct lane *lanes = realloc(set->lanes, (set->n + 1) * sizeof(*lanes));
	struct lane *lane;
	size_t k = set->n;

	if (!lanes)
		return -ENOMEM;
	set->lanes = lanes;
	lane = &lanes[k];
	memset(lane, 0, sizeof(*lane));
	if (set->naming == LANE_OVERLAP)
		lane->name = walk_format("%s (overlap %zu)", set->name, k);
	else
		lane->name = k ? walk_format("%s (%zu)", set->name, k + 1) : strdup(set->name);
	if (!lane->name)
		return -ENOMEM;
	set->n++;
	lane->track.uuid = tl->next_uuid++;
	lane->track.parent_uuid = set->parent_uuid;
	lane->track.kind = TIMELINE_LANE;
	lane->track.pid = set->pid;
	lane->track.tid = tl->next_tid++;
	lane->track.sort_index = set->sort_base + (int32_t)k;
	lane->track.name = lane->name;
	return tl->sink->ops->track(tl->sink, &lane->track);
}

/* Close (announce the end of) every slice on lane that ended by ts. */
int lane_settle(struct timeline *tl, struct lane *lane, int64_t ts)
{
	while (lane->depth && lane->ends[lane->depth - 1] <= ts) {
		int ret = tl->sink->ops->slice_end(tl->sink, &lane->track, lane->ends[--lane->depth]);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Find the first lane where [start, end] nests, open it there, and return that lane's track. */
int lane_place(struct timeline *tl, struct lane_set *set, int64_t start, int64_t end,
	       const struct timeline_track **track)
{
	for (size_t k = 0;; k++) {
		struct lane *lane;
		int ret;

		if (k == set->n && (ret = lane_add(tl, set)) < 0)
			return ret;
		lane = &set->lanes[k];
		ret = lane_settle(tl, lane, start);
		if (ret < 0)
			return ret;
		if (lane->depth && lane->ends[lane->depth - 1] < end)
			continue;
		if (lane->depth == lane->cap) {
			size_t cap = lane->cap ? lane->cap * 2 : 16;
			int64_t *ends = realloc(lane->ends, cap * sizeof(*ends));

			if (!ends)
				return -ENOMEM;
			lane->ends = ends;
			lane->cap = cap;
		}
		lane->ends[lane->depth++] = end;
		*track = &lane->track;
		return 0;
	}
}

int lane_set_flush(struct timeline *tl, struct lane_set *set)
{
	for (size_t k = 0; k < set->n; k++) {
		int ret = lane_settle(tl, &set->lanes[k], INT64_MAX);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------------ */
/* Flow ids. */

/*
 * (trace, correlation id, rank of the GPU item) in 8 + 32 + 13 bits: below 2^53, so JSON readers
 * (doubles) keep them exact. A graph launch with more than 8191 nodes reuses ids within itself.
 */
uint64_t flow_id(int64_t trace_id, int64_t correlation_id, int64_t rank)
{
	return ((uint64_t)trace_id & 0xff) << 45 | ((uint64_t)correlation_id & 0xffffffffu) << 13 |
	       ((uint64_t)rank & 0x1fff);
}
/* ------------------------------------------------------------------------------------------------ */
/* Strings and held rows. */

/* The string of the StringIds id in column col of r in *out (NULL when NULL or absent): 0 or a negative error. */
int walk_string_of(struct timeline *tl, const struct event_row *r, size_t col, const char **out)
{
	*out = NULL;
	return event_null(r, col) ? 0 : trace_string(tl->trace, r->trace_id, r->v[col], out, tl->err, tl->errlen);
}

/* A row's end as the timeline draws it: NULL or before the start is an instant. */
static int64_t row_end(const struct event_row *r)
{
	return event_null(r, 0) || r->v[0] < r->start ? r->start : r->v[0];
}

/* A copy of r (and its text, if its view has one) at the end of the held rows; NULL when out of memory. */
struct held_row *walk_hold(struct held_rows *h, const struct event_row *r, int kind, int has_text)
{
	struct held_row *e;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 16;
		struct held_row *items = realloc(h->items, cap * sizeof(*items));

		if (!items)
			return NULL;
		h->items = items;
		h->cap = cap;
	}
	e = &h->items[h->n];
	e->row = *r;
	e->end = row_end(r);
	e->kind = kind;
	e->tid = 0;
	e->row.text = NULL;
	if (has_text && r->text && !(e->row.text = strdup(r->text)))
		return NULL;
	h->n++;
	return e;
}

void held_clear(struct held_rows *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->items[i].row.text);
	h->n = 0;
}

/* Rows of one timestamp in the order a track needs them: the longest first, then by kind. */
int held_compare_host(const void *pa, const void *pb)
{
	const struct held_row *a = pa, *b = pb;
	int64_t ea = a->end, eb = b->end;

	if (ea != eb)
		return ea > eb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->row.seq < b->row.seq ? -1 : a->row.seq > b->row.seq;
}

/* The GPU's: by device, then as above, then by stream and file. */
int held_compare_gpu(const void *pa, const void *pb)
{
	const struct held_row *a = pa, *b = pb;
	int64_t da = event_int(&a->row, G_DEVICE, 0), db = event_int(&b->row, G_DEVICE, 0);
	int64_t ea = a->end, eb = b->end;
	int64_t sa = event_int(&a->row, G_STREAM, 0), sb = event_int(&b->row, G_STREAM, 0);

	if (da != db)
		return da < db ? -1 : 1;
	if (ea != eb)
		return ea > eb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (a->row.trace_id != b->row.trace_id)
		return a->row.trace_id < b->row.trace_id ? -1 : 1;
	return a->row.seq < b->row.seq ? -1 : a->row.seq > b->row.seq;
}

/* The word of the row's correlation id in column col, or NULL: no id, or none CUPTI makes. */
uint64_t *corr_word(struct timeline *tl, const struct event_row *r, size_t col)
{
	if (event_null(r, col) || r->v[col] <= 0 || r->v[col] > (int64_t)UINT32_MAX)
		return NULL;
	return corr_map_at(tl->corr, (size_t)r->trace_id, r->v[col]);
}
void walk_arg_int(struct timeline_arg *args, size_t *n, const char *name, int64_t v)
{
	args[(*n)++] = (struct timeline_arg){ .name = name, .type = TIMELINE_ARG_INT, .i = v };
}

void walk_arg_double(struct timeline_arg *args, size_t *n, const char *name, double v)
{
	args[(*n)++] = (struct timeline_arg){ .name = name, .type = TIMELINE_ARG_DOUBLE, .d = v };
}

void walk_arg_string(struct timeline_arg *args, size_t *n, const char *name, const char *v)
{
	args[(*n)++] = (struct timeline_arg){ .name = name, .type = TIMELINE_ARG_STRING, .s = v };
}

int walk_missing(struct timeline *tl, const char *what)
{
	/* Impossible unless the views changed under us: the index came from them. */
	snprintf(tl->err, tl->errlen, "cannot export '%s': a %s is missing from the index", trace_path(tl->trace, 0),
		 what);
	return -EIO;
}

/* The flows an API call starts: one per GPU item of its id, if it is the id's first call. */
/* The lowest (trace, start) among the streams' current rows, or -1 when all are done. */
int walk_first_row(const struct event_row *const *cur, size_t n, int by_trace)
{
	int best = -1;

	for (size_t k = 0; k < n; k++) {
		if (!cur[k])
			continue;
		if (best < 0 || (by_trace && cur[k]->trace_id != cur[best]->trace_id
					 ? cur[k]->trace_id < cur[best]->trace_id
					 : cur[k]->start < cur[best]->start))
			best = (int)k;
	}
	return best;
}
