/*
 * GPU idle gaps and their causes (see gaps.h for the definitions).
 *
 * Two queries sorted by (traceId, start) are merged: every GPU operation joined to the API call that
 * issued it, and every blocking API call. The blocking calls are kept per host thread in a short
 * ring of the most recent ones; an operation's gap is classified by asking its issuing thread's ring
 * whether a blocking call other than its own was running when the device went idle. Calls on one
 * thread do not overlap, so only calls made while the device idled can push the one that matters out
 * of the ring; RECENT_CALLS of them in one gap would have to happen first.
 */
#include "rules/gaps.h"

#include "common/util.h"
#include "rules/rule-util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECENT_CALLS 16

struct blocking_call {
	int64_t start, end;
	const char *name;	/* interned in struct walker.names */
};

struct host_thread {
	int64_t trace_id, tid;
	int used;
	unsigned next;		/* ring position of the next call */
	struct blocking_call recent[RECENT_CALLS];
};

struct walker {
	struct host_thread *threads;	/* open addressing, cap a power of two */
	size_t nthreads, cap;
	char **names;
	size_t nnames;
	size_t last_device;		/* index of the device of the previous operation */
};

static const char ops_sql[] =
	"SELECT o.traceId, o.deviceId, o.streamId, o.start, o.end, o.kind, o.nameId, o.graphNodeId,"
	" a.start, a.end, a.globalTid FROM ("
	" SELECT traceId, deviceId, streamId, start, end, correlationId, pid, 0 AS kind, nameId,"
	"  graphNodeId FROM kernels"
	" UNION ALL SELECT traceId, deviceId, streamId, start, end, correlationId, pid, 1, NULL,"
	"  graphNodeId FROM copies"
	" UNION ALL SELECT traceId, deviceId, streamId, start, end, correlationId, pid, 2, NULL,"
	"  graphNodeId FROM sets) AS o"
	" LEFT JOIN api_calls AS a ON a.traceId = o.traceId AND a.pid = o.pid"
	"  AND a.correlationId = o.correlationId"
	" ORDER BY o.traceId, o.start, o.end, o.deviceId, o.streamId";

static const char blocking_sql[] =
	"SELECT traceId, globalTid, start, end, name FROM api_calls"
	" WHERE globalTid IS NOT NULL AND (" SQL_SYNC_API " OR " SQL_SYNC_COPY_API ")"
	" ORDER BY traceId, start";

const char *gap_cause_name(enum gap_cause cause)
{
	switch (cause) {
	case GAP_HOST_WAIT:
		return "host-wait";
	case GAP_SYNC_WAIT:
		return "sync-wait";
	case GAP_OTHER:
		break;
	}
	return "other";
}

static size_t thread_hash(int64_t trace_id, int64_t tid, size_t cap)
{
	uint64_t h = (uint64_t)tid * 0x9e3779b97f4a7c15ull ^ (uint64_t)trace_id * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h >> 17) & (cap - 1);
}

static struct host_thread *thread_find(struct walker *w, int64_t trace_id, int64_t tid, int create)
{
	size_t i;

	if (create && (w->nthreads + 1) * 2 > w->cap) {
		struct host_thread *old = w->threads;
		size_t oldcap = w->cap;

		w->cap = w->cap ? 2 * w->cap : 64;
		w->threads = xcalloc(w->cap, sizeof(*w->threads));
		for (size_t j = 0; j < oldcap; j++) {
			if (!old[j].used)
				continue;
			i = thread_hash(old[j].trace_id, old[j].tid, w->cap);
			while (w->threads[i].used)
				i = (i + 1) & (w->cap - 1);
			w->threads[i] = old[j];
		}
		free(old);
	}
	if (!w->cap)
		return NULL;
	for (i = thread_hash(trace_id, tid, w->cap); w->threads[i].used; i = (i + 1) & (w->cap - 1))
		if (w->threads[i].trace_id == trace_id && w->threads[i].tid == tid)
			return &w->threads[i];
	if (!create)
		return NULL;
	w->threads[i].used = 1;
	w->threads[i].trace_id = trace_id;
	w->threads[i].tid = tid;
	w->nthreads++;
	return &w->threads[i];
}

static const char *intern(struct walker *w, const char *name)
{
	for (size_t i = 0; i < w->nnames; i++)
		if (!strcmp(w->names[i], name))
			return w->names[i];
	w->names = xrealloc(w->names, (w->nnames + 1) * sizeof(char *));
	w->names[w->nnames] = xstrdup(name);
	return w->names[w->nnames++];
}

static void add_blocking(struct walker *w, sqlite3_stmt *st)
{
	struct host_thread *t = thread_find(w, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), 1);
	struct blocking_call *c = &t->recent[t->next++ % RECENT_CALLS];

	c->start = sqlite3_column_int64(st, 2);
	c->end = sqlite3_column_int64(st, 3);
	c->name = intern(w, rule_column_text(st, 4));
}

static struct gap_device *device_find(struct gap_walk *walk, struct walker *w, int64_t trace_id,
				      int64_t device)
{
	struct gap_device *d;

	if (w->last_device < walk->ndevices) {
		d = &walk->devices[w->last_device];
		if (d->trace_id == trace_id && d->device == device)
			return d;
	}
	for (size_t i = 0; i < walk->ndevices; i++) {
		if (walk->devices[i].trace_id == trace_id && walk->devices[i].device == device) {
			w->last_device = i;
			return &walk->devices[i];
		}
	}
	walk->devices = xrealloc(walk->devices, (walk->ndevices + 1) * sizeof(*walk->devices));
	d = &walk->devices[walk->ndevices];
	memset(d, 0, sizeof(*d));
	d->trace_id = trace_id;
	d->device = device;
	w->last_device = walk->ndevices++;
	return d;
}

/* Blame one gap; g->start, g->api_* and the thread are filled in. */
static void classify(struct walker *w, struct gap *g, int64_t trace_id, int have_tid, int64_t tid)
{
	struct host_thread *t;

	g->cause = GAP_OTHER;
	if (g->api_start < 0 || g->api_end <= g->start)
		return;
	g->cause = GAP_HOST_WAIT;
	t = have_tid ? thread_find(w, trace_id, tid, 0) : NULL;
	if (!t)
		return;
	for (unsigned i = 1; i <= RECENT_CALLS; i++) {
		struct blocking_call *c = &t->recent[(t->next - i) % RECENT_CALLS];

		if (!c->name)
			break;
		/* The operation's own blocking copy does not count: it is what the host is issuing. */
		if (c->start <= g->start && c->end >= g->start && c->start != g->api_start) {
			g->cause = GAP_SYNC_WAIT;
			g->blocker = c->name;
			g->blocker_start = c->start;
			g->blocker_end = c->end;
			return;
		}
	}
}

int gap_walk(const struct rule *rule, struct rule_context *ctx, struct gap_walk *walk, char *err,
	     size_t errlen)
{
	struct walker w = { 0 };
	sqlite3_stmt *ops = NULL, *blocking = NULL;
	int ret, rc, brc;
	int64_t prev_key[6] = { -1, -1, -1, -1, -1, -1 };

	walk->devices = NULL;
	walk->ndevices = 0;
	ret = rule_prepare(rule, ctx, ops_sql, &ops, err, errlen);
	if (ret < 0)
		goto out;
	ret = rule_prepare(rule, ctx, blocking_sql, &blocking, err, errlen);
	if (ret < 0)
		goto out;
	brc = sqlite3_step(blocking);
	while ((rc = sqlite3_step(ops)) == SQLITE_ROW) {
		int64_t trace_id = sqlite3_column_int64(ops, 0);
		int64_t start = sqlite3_column_int64(ops, 3);
		int64_t end = sqlite3_column_int64(ops, 4);
		int64_t key[6] = { trace_id, sqlite3_column_int64(ops, 1), sqlite3_column_int64(ops, 2),
				   start, end, sqlite3_column_int64(ops, 5) };
		struct gap_device *d;
		struct gap g;

		/* An operation joined to two API rows (a runtime and a driver call sharing one
		 * correlation id) comes out twice, side by side; count it once. */
		if (!memcmp(key, prev_key, sizeof(key)))
			continue;
		memcpy(prev_key, key, sizeof(key));

		while (brc == SQLITE_ROW && (sqlite3_column_int64(blocking, 0) < trace_id ||
					     (sqlite3_column_int64(blocking, 0) == trace_id &&
					      sqlite3_column_int64(blocking, 2) <= start))) {
			add_blocking(&w, blocking);
			brc = sqlite3_step(blocking);
		}
		if (brc != SQLITE_ROW && brc != SQLITE_DONE) {
			ret = rule_step_error(rule, ctx, err, errlen);
			goto out;
		}

		d = device_find(walk, &w, trace_id, key[1]);
		if (end < start)
			end = start;
		memset(&g, 0, sizeof(g));
		if (!d->ops++) {
			/* Idle time before a device's first operation is not a gap. */
			d->first = start;
			d->last = start;
		}
		g.trace_id = trace_id;
		g.device = key[1];
		g.stream = key[2];
		g.start = d->last;
		g.end = start > d->last ? start : d->last;
		g.next_op = (enum gpu_op)key[5];
		g.next_name_id = sqlite3_column_type(ops, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(ops, 6);
		g.next_end = end;
		g.next_graph_node = sqlite3_column_int64(ops, 7);
		g.api_start = sqlite3_column_type(ops, 8) == SQLITE_NULL ? -1 : sqlite3_column_int64(ops, 8);
		g.api_end = sqlite3_column_type(ops, 9) == SQLITE_NULL ? -1 : sqlite3_column_int64(ops, 9);
		if (end > d->last) {
			d->busy += end - (start > d->last ? start : d->last);
			d->last = end;
		}
		if (g.end - g.start < walk->min_gap)
			continue;
		if (g.end > g.start)
			classify(&w, &g, trace_id, sqlite3_column_type(ops, 10) != SQLITE_NULL,
				 sqlite3_column_int64(ops, 10));
		else
			g.cause = GAP_OTHER;
		ret = walk->fn(&g, walk->arg);
		if (ret < 0) {
			snprintf(err, errlen, "rule %s: cannot process an idle gap", rule->id);
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		ret = rule_step_error(rule, ctx, err, errlen);
out:
	sqlite3_finalize(ops);
	sqlite3_finalize(blocking);
	free(w.threads);
	for (size_t i = 0; i < w.nnames; i++)
		free(w.names[i]);
	free(w.names);
	if (ret < 0)
		gap_walk_release(walk);
	return ret;
}

void gap_walk_release(struct gap_walk *walk)
{
	free(walk->devices);
	walk->devices = NULL;
	walk->ndevices = 0;
}
