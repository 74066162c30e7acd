/*
 * sync-memcpy: copies issued with a blocking API (cudaMemcpy, cudaMemcpy2D, cuMemcpyHtoD... any copy
 * call without "Async") between host and device. The host thread waits for each copy, so it cannot
 * queue the next kernels meanwhile, and the copy cannot overlap computation. Device-to-device and
 * peer copies are left out: the runtime does not block the host for them.
 *
 * The copies are found in the same gap walk that measures the idle time: each copy operation comes
 * with the API call that issued it, so no join of calls and copies is needed. A blocking call
 * without a copy record (a copy of nothing, or a trace that lost the record) is not counted.
 *
 * Recoverable time: the GPU idle time that follows blocking copies which drained the device (the
 * host was still inside the copy call when the device ran out of work, then issued the next
 * operation late), in gaps of at least min_gap_us. This is measured, and conservative: with
 * cudaMemcpyAsync the copy itself could also overlap kernels, which is not counted.
 */
#include "analyzer/analysis/gaps.h"
#include "analyzer/analysis/what-if.h"
#include "rules/rule-util.h"

#include "common/key-index.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const struct rule_param params[] = {
	{ "min_gap_us", 1, "us", "idle gaps shorter than this after a copy are not counted" },
	{ "min_copies", 10, "count", "report a device with at least this many blocking copies" },
};

/* Blocking copy calls per trace, filtered by nameId (api_names_sql): the cheap test first. */
static const char calls_sql[] =
	"SELECT traceId, COUNT(*) FROM api_calls WHERE %s GROUP BY traceId";

/* Blocking copies of one device, API name and direction. */
struct copy_group {
	int64_t trace_id, device, name_id;
	int kind;
	const char *name;		/* owned by the api_names */
	int64_t count, host_ns, gpu_ns;
	double bytes;
	int64_t first, last;
};

struct device_drains {
	struct rule_device key;
	int64_t count, idle;
};

struct memcpy_state {
	const struct api_names *names;	/* own_names */
	struct api_names own_names;
	int walked;			/* enough blocking copies: the rule reads the walk */
	int64_t min_gap;
	struct key_index group_index;	/* (trace, device, nameId, copyKind) -> groups[] */
	struct copy_group *groups;
	size_t ngroups;
	struct key_index drain_index;	/* (trace, device) -> drains[] */
	struct device_drains *drains;
	size_t n;
};

static int on_op(const struct gap *g, void *arg)
{
	struct memcpy_state *s = arg;
	struct device_drains *d;

	/* A blocking copy (device-to-device and peer copies do not block the host). */
	if (g->next_op == GPU_OP_COPY && (g->api_class & API_BLOCKING_COPY) && g->copy_kind != 8 &&
	    g->copy_kind != 10 && g->copy_kind != 13) {
		int64_t key[KEY_INDEX_WORDS] = { g->trace_id, g->device, g->api_name_id, g->copy_kind };
		int created;
		size_t i = rule_slot(&s->group_index, key, &s->groups, &s->ngroups, sizeof(*s->groups), &created);
		struct copy_group *c = &s->groups[i];

		if (created) {
			c->trace_id = g->trace_id;
			c->device = g->device;
			c->name_id = g->api_name_id;
			c->kind = g->copy_kind;
			c->name = api_names_name(s->names, g->trace_id, g->api_name_id);
			c->first = g->api_start;
		}
		c->count++;
		c->host_ns += g->api_end - g->api_start;
		c->gpu_ns += g->next_end - g->next_start;
		c->bytes += g->bytes > 0 ? (double)g->bytes : 0;
		if (g->api_start < c->first)
			c->first = g->api_start;
		if (g->api_end > c->last)
			c->last = g->api_end;
	}
	if (g->cause != GAP_SYNC_WAIT || g->end - g->start < s->min_gap ||
	    !(api_class_of(g->blocker) & API_BLOCKING_COPY))
		return 0;
	d = rule_device_get(&s->drain_index, g->trace_id, g->device, &s->drains, &s->n, sizeof(*s->drains),
			    NULL);
	d->count++;
	d->idle += g->end - g->start;
	return 0;
}

static int compare_groups(const void *pa, const void *pb)
{
	const struct copy_group *a = pa, *b = pb;

	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->name_id != b->name_id)
		return a->name_id < b->name_id ? -1 : 1;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

static void report_device(const struct rule *rule, struct rule_context *ctx,
			  const struct copy_group *groups, size_t n, const struct memcpy_state *s,
			  const struct span_clock *clock)
{
	int64_t trace_id = groups[0].trace_id, device = groups[0].device;
	int64_t count = 0, host = 0, first = INT64_MAX, last = 0;
	const struct device_drains *drains = rule_device_find(&s->drain_index, trace_id, device,
							     s->drains, sizeof(*s->drains));
	struct fmt_text t1, t2, t3, t4;
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
	idle = drains ? drains->idle : 0;
	f = findings_add(
	    ctx->out, rule, rule_severity(idle, span_clock_span(clock, trace_id)), idle,
	    "Use cudaMemcpyAsync from pinned host memory on a non-default stream and "
	    "synchronize once, where the result is needed, so copies overlap kernels and the "
	    "host keeps queuing work.",
	    "%s: %" PRId64 " blocking copies held the host for %s",
	    fmt_device(&t1, ctx->an.trace, trace_id, device), count, fmt_duration(&t2, host));
	f->device = (int32_t)device;
	f->start = first;
	f->end = last;
	{
		/* the replay's fix: the copy calls return without waiting for their copies */
		int64_t *ids = xcalloc(n ? n : 1, sizeof(*ids));

		for (size_t i = 0; i < n; i++)
			ids[i] = groups[i].name_id;
		finding_what_if(f, n ? what_if_fix_new(WHAT_IF_NO_WAIT, trace_id, -1, ids, n, 0) : NULL);
		free(ids);
	}
	for (size_t i = 0; i < n; i++)
		finding_evidence(f, "%s %s: %" PRId64 " call%s, %s, host blocked %s, GPU copy time %s",
				 fmt_name(&t1, groups[i].name), copy_kind_name(groups[i].kind), groups[i].count,
				 plural(groups[i].count), fmt_bytes(&t2, groups[i].bytes),
				 fmt_duration(&t3, groups[i].host_ns), fmt_duration(&t4, groups[i].gpu_ns));
	finding_evidence(f, "%" PRId64 " of them drained the device, which then idled %s until the next work",
			 drains ? drains->count : 0, fmt_duration(&t1, idle));
	finding_evidence(f, "first at %s, last ending at %s", fmt_at(&t1, clock, first),
			 fmt_at(&t2, clock, last));
}

static void memcpy_state_free(struct memcpy_state *s)
{
	key_index_release(&s->group_index);
	free(s->groups);
	key_index_release(&s->drain_index);
	free(s->drains);
	api_names_release(&s->own_names);
	free(s);
}

/* Whether a trace of calls_sql has min_copies blocking copies. */
struct enough_copies {
	double min_copies;
	int any;
};

static void calls_row(sqlite3_stmt *row, void *arg)
{
	struct enough_copies *e = arg;

	if ((double)sqlite3_column_int64(row, 1) >= e->min_copies)
		e->any = 1;
}

static int sync_memcpy_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
			     void **state, char *err, size_t errlen)
{
	struct enough_copies enough = { rule_param(ctx, rule, "min_copies"), 0 };
	struct memcpy_state *s = xcalloc(1, sizeof(*s));
	char *filter, *sql;
	int ret;

	s->names = &s->own_names;
	ret = api_names_load(&ctx->an, &s->own_names, err, errlen);
	if (ret < 0)
		goto out;
	filter = api_names_sql(s->names, API_BLOCKING_COPY);
	sql = sqlite3_mprintf(calls_sql, filter);
	sqlite3_free(filter);
	ret = analysis_query(&ctx->an, sql, calls_row, &enough, err, errlen);
	sqlite3_free(sql);
	if (ret < 0 || !enough.any)
		goto out;
	/* Every operation, for the copies; drains are gaps of at least min_gap_us. */
	s->min_gap = (int64_t)(rule_param(ctx, rule, "min_gap_us") * 1e3);
	if (s->min_gap < 1)
		s->min_gap = 1;
	*visitor = (struct gap_visitor){ .min_gap = 0, .fn = on_op, .arg = s };
	s->walked = 1;
out:
	if (ret < 0) {
		memcpy_state_free(s);
		s = NULL;
	}
	*state = s;
	return ret;
}

static int sync_memcpy_finish(const struct rule *rule, struct rule_context *ctx, void *state,
			      const struct gap_walk *walk, char *err, size_t errlen)
{
	double min_copies = rule_param(ctx, rule, "min_copies");
	struct memcpy_state *s = state;
	struct span_clock clock = {0};
	int ret = 0;

	if (!walk || !s->walked)
		goto out;
	if (s->ngroups > 1)
		qsort(s->groups, s->ngroups, sizeof(*s->groups), compare_groups);
	/* Groups are ordered by trace and device: total each device's run of groups. */
	for (size_t i = 0, j; i < s->ngroups; i = j) {
		int64_t count = 0;

		for (j = i; j < s->ngroups && s->groups[j].trace_id == s->groups[i].trace_id &&
			    s->groups[j].device == s->groups[i].device; j++)
			count += s->groups[j].count;
		if ((double)count < min_copies || !count)
			continue;
		ret = span_clock_once(&clock, &ctx->an, err, errlen);
		if (ret < 0)
			goto out;
		report_device(rule, ctx, &s->groups[i], j - i, s, &clock);
	}
out:
	span_clock_release(&clock);
	memcpy_state_free(s);
	return ret;
}

const struct rule rule_sync_memcpy = {
	.id = "sync-memcpy",
	.title = "Blocking copies",
	.measures = "host<->device copies issued with a blocking call (cudaMemcpy rather than "
		    "cudaMemcpyAsync), which stop the host from queuing work while they run",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = sync_memcpy_begin,
	.finish = sync_memcpy_finish,
};
