/*
 * sync-memcpy: copies issued with a blocking API (cudaMemcpy, cudaMemcpy2D, cuMemcpyHtoD... any copy
 * call without "Async") between host and device. The host thread waits for each copy, so it cannot
 * queue the next kernels meanwhile, and the copy cannot overlap computation. Device-to-device and
 * peer copies are left out: the runtime does not block the host for them.
 *
 * Recoverable time: the GPU idle time that follows blocking copies which drained the device (the
 * host was still inside the copy call when the device ran out of work, then issued the next
 * operation late), in gaps of at least min_gap_us. This is measured, and conservative: with
 * cudaMemcpyAsync the copy itself could also overlap kernels, which is not counted.
 */
#include "rules/gaps.h"
#include "rules/rule-util.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_gap_us", 5, "us", "idle gaps shorter than this after a copy are not counted" },
	{ "min_copies", 10, "count", "report a device with at least this many blocking copies" },
};

/* Blocking copy calls, with the copy each one issued where the trace has it (device -1 if not). */
static const char copies_sql[] =
	"SELECT a.traceId, COALESCE(c.deviceId, -1), a.name, COALESCE(c.copyKind, 0), COUNT(*),"
	" SUM(a.dur), SUM(c.dur), SUM(c.bytes), MIN(a.start), MAX(a.end)"
	" FROM (SELECT * FROM api_calls WHERE " SQL_SYNC_COPY_API ") AS a"
	" LEFT JOIN copies AS c ON c.traceId = a.traceId AND c.pid = a.pid"
	"  AND c.correlationId = a.correlationId"
	" WHERE COALESCE(c.copyKind, 0) NOT IN (8, 10, 13)"
	" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4";

struct copy_group {
	int64_t trace_id, device;
	char *name;
	int kind;
	int64_t count, host_ns, gpu_ns;
	double bytes;
	int64_t first, last;
};

struct device_drains {
	int64_t trace_id, device;
	int64_t count, idle;
};

struct memcpy_state {
	struct device_drains *drains;
	size_t n;
};

static int on_gap(const struct gap *g, void *arg)
{
	struct memcpy_state *s = arg;
	struct device_drains *d = NULL;

	if (g->cause != GAP_SYNC_WAIT ||
	    (strncmp(g->blocker, "cudaMemcpy", 10) && strncmp(g->blocker, "cuMemcpy", 8)))
		return 0;
	for (size_t i = 0; i < s->n && !d; i++)
		if (s->drains[i].trace_id == g->trace_id && s->drains[i].device == g->device)
			d = &s->drains[i];
	if (!d) {
		s->drains = xrealloc(s->drains, (s->n + 1) * sizeof(*s->drains));
		d = &s->drains[s->n++];
		memset(d, 0, sizeof(*d));
		d->trace_id = g->trace_id;
		d->device = g->device;
	}
	d->count++;
	d->idle += g->end - g->start;
	return 0;
}

static const char *kind_name(int kind)
{
	switch (kind) {
	case 1:
		return "HtoD";
	case 2:
		return "DtoH";
	case 3:
		return "HtoA";
	case 4:
		return "AtoH";
	case 9:
		return "HtoH";
	case 11:
		return "UVM HtoD";
	case 12:
		return "UVM DtoH";
	}
	return "kind unknown";
}

static void report_device(const struct rule *rule, struct rule_context *ctx,
			  const struct copy_group *groups, size_t n, const struct memcpy_state *s,
			  const struct rule_clock *clock)
{
	int64_t trace_id = groups[0].trace_id, device = groups[0].device;
	int64_t count = 0, host = 0, first = INT64_MAX, last = 0;
	const struct device_drains *drains = NULL;
	struct rule_text t1, t2, t3, t4;
	int64_t idle;
	struct finding *f;

	for (size_t i = 0; i < n; i++) {
		count += groups[i].count;
		host += groups[i].host_ns;
		if (groups[i].first < first)
			first = groups[i].first;
		if (groups[i].last > last)
			last = groups[i].last;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->drains[i].trace_id == trace_id && s->drains[i].device == device)
			drains = &s->drains[i];
	idle = drains ? drains->idle : 0;
	if (device >= 0)
		fmt_device(&t1, ctx, trace_id, device);
	else
		snprintf(t1.s, sizeof(t1.s), "no copy records");
	f = findings_add(ctx->out, rule, rule_severity(idle, rule_clock_span(clock, trace_id)), idle,
			 "Use cudaMemcpyAsync from pinned host memory on a non-default stream and "
			 "synchronize once, where the result is needed, so copies overlap kernels and the "
			 "host keeps queuing work.",
			 "%s: %" PRId64 " blocking copies held the host for %s", t1.s, count,
			 fmt_duration(&t2, host));
	f->device = device >= 0 ? (int32_t)device : -1;
	f->start = first;
	f->end = last;
	for (size_t i = 0; i < n; i++)
		finding_evidence(f, "%s %s: %" PRId64 " call%s, %s, host blocked %s, GPU copy time %s",
				 fmt_name(&t1, groups[i].name), kind_name(groups[i].kind), groups[i].count,
				 plural(groups[i].count),
				 fmt_bytes(&t2, groups[i].bytes), fmt_duration(&t3, groups[i].host_ns),
				 fmt_duration(&t4, groups[i].gpu_ns));
	finding_evidence(f, "%" PRId64 " of them drained the device, which then idled %s until the next work",
			 drains ? drains->count : 0, fmt_duration(&t1, idle));
	finding_evidence(f, "first at %s, last ending at %s", fmt_at(&t1, clock, first),
			 fmt_at(&t2, clock, last));
}

static int sync_memcpy_run(const struct rule *rule, struct rule_context *ctx, char *err,
			   size_t errlen)
{
	double min_copies = rule_param(ctx, rule, "min_copies");
	struct memcpy_state s = { 0 };
	struct gap_walk walk = { .fn = on_gap, .arg = &s };
	struct rule_clock clock = { 0 };
	struct copy_group *groups = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int ret, rc, any = 0;

	ret = rule_prepare(rule, ctx, copies_sql, &st, err, errlen);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct copy_group *g;

		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			groups = xrealloc(groups, cap * sizeof(*groups));
		}
		g = &groups[n++];
		g->trace_id = sqlite3_column_int64(st, 0);
		g->device = sqlite3_column_int64(st, 1);
		g->name = xstrdup(rule_column_text(st, 2));
		g->kind = sqlite3_column_int(st, 3);
		g->count = sqlite3_column_int64(st, 4);
		g->host_ns = sqlite3_column_int64(st, 5);
		g->gpu_ns = sqlite3_column_int64(st, 6);
		g->bytes = sqlite3_column_double(st, 7);
		g->first = sqlite3_column_int64(st, 8);
		g->last = sqlite3_column_int64(st, 9);
	}
	if (rc != SQLITE_DONE) {
		ret = rule_step_error(rule, ctx, err, errlen);
		goto out;
	}
	/* Groups come ordered by trace and device: total each device's run of groups. */
	for (size_t i = 0, j; i < n; i = j) {
		int64_t count = 0;

		for (j = i; j < n && groups[j].trace_id == groups[i].trace_id &&
			    groups[j].device == groups[i].device; j++)
			count += groups[j].count;
		if ((double)count >= min_copies && count > 0)
			any = 1;
	}
	if (!any)
		goto out;

	walk.min_gap = (int64_t)(rule_param(ctx, rule, "min_gap_us") * 1e3);
	if (walk.min_gap < 1)
		walk.min_gap = 1;
	ret = rule_clock_init(&clock, rule, ctx, err, errlen);
	if (ret < 0)
		goto out;
	ret = gap_walk(rule, ctx, &walk, err, errlen);
	if (ret < 0)
		goto out;
	for (size_t i = 0, j; i < n; i = j) {
		int64_t count = 0;

		for (j = i; j < n && groups[j].trace_id == groups[i].trace_id &&
			    groups[j].device == groups[i].device; j++)
			count += groups[j].count;
		if ((double)count >= min_copies && count > 0)
			report_device(rule, ctx, &groups[i], j - i, &s, &clock);
	}
out:
	sqlite3_finalize(st);
	gap_walk_release(&walk);
	rule_clock_release(&clock);
	for (size_t i = 0; i < n; i++)
		free(groups[i].name);
	free(groups);
	free(s.drains);
	return ret;
}

const struct rule rule_sync_memcpy = {
	.id = "sync-memcpy",
	.title = "Blocking copies",
	.measures = "host<->device copies issued with a blocking call (cudaMemcpy rather than "
		    "cudaMemcpyAsync), which stop the host from queuing work while they run",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = sync_memcpy_run,
};
