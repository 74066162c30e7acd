/*
 * excessive-sync: synchronizations (cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize and their driver-API twins) that leave the GPU idle. A synchronization drains
 * a device when the host thread was blocked in it at the moment the device ran out of work: the host
 * could not queue anything ahead, so the device then idles until the host issues the next operation.
 * That idle time (sync-wait gaps of at least min_gap_us blamed on synchronize calls), but no more
 * than the time the host spent blocked in those calls, is the recoverable time (see report_drains);
 * it is the time idle-gaps shows as sync-wait, seen from the calls that caused it, except that the
 * threshold is lower (1 us against 5): a drain is a drain however fast the host relaunches, and on a
 * fast host the gap after a sync is only the launch latency.
 *
 * Without CUDA API records nobody can tell which call the host was in; the rule then only reports
 * the CUPTI synchronization records, as information, with nothing recoverable claimed.
 */
#include "analyzer/analysis/gaps.h"
#include "analyzer/analysis/what-if.h"
#include "rules/rule-util.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_gap_us", 1, "us",
	  "idle gaps shorter than this after a synchronization are not counted (any drain leaves a "
	  "gap of a few us: launch latency is part of its cost)" },
	{ "min_syncs", 10, "count", "report a device drained by at least this many synchronizations" },
};

static const char records_sql[] =
	"SELECT traceId, deviceId, syncType, COUNT(*), SUM(dur) FROM syncs"
	" GROUP BY traceId, deviceId, syncType ORDER BY traceId, deviceId, syncType";

/* Drains of one device by one synchronize call name. */
struct drain {
	int64_t trace_id, device;
	char *name;
	int64_t count, idle;
	int64_t longest, longest_start, longest_end;
};

struct sync_records;

/* Synchronize calls of one name in one trace (counted as the walk passes them). */
struct sync_calls {
	int64_t trace_id, name_id;
	const char *name;	/* owned by the api_names */
	int64_t count, blocked;
};

struct sync_state {
	struct api_names names;
	int walked;			/* enough syncs for drains: the drains count */
	struct drain *drains;
	size_t n;
	struct sync_calls *calls;
	size_t ncalls;
	struct sync_records *records;
	size_t nrecords;
};

static int on_gap(const struct gap *g, void *arg)
{
	struct sync_state *s = arg;
	int64_t len = g->end - g->start;
	struct drain *d = NULL;

	if (g->cause != GAP_SYNC_WAIT || !(api_class_of(g->blocker) & API_SYNC))
		return 0;
	for (size_t i = 0; i < s->n && !d; i++)
		if (s->drains[i].trace_id == g->trace_id && s->drains[i].device == g->device &&
		    !strcmp(s->drains[i].name, g->blocker))
			d = &s->drains[i];
	if (!d) {
		s->drains = xrealloc(s->drains, (s->n + 1) * sizeof(*s->drains));
		d = &s->drains[s->n++];
		memset(d, 0, sizeof(*d));
		d->trace_id = g->trace_id;
		d->device = g->device;
		d->name = xstrdup(g->blocker);
	}
	d->count++;
	d->idle += len;
	if (len > d->longest) {
		d->longest = len;
		d->longest_start = g->start;
		d->longest_end = g->end;
	}
	return 0;
}

static const char *sync_type_name(int type)
{
	switch (type) {
	case 1:
		return "event sync";
	case 2:
		return "stream wait event";
	case 3:
		return "stream sync";
	case 4:
		return "context sync";
	}
	return "unknown";
}

/* CUPTI synchronization records of one (trace, device, syncType): a handful of rows. */
struct sync_records {
	int64_t trace_id, device;
	int type;
	int64_t count, ns;
};

/* One row of records_sql. */
static void records_row(sqlite3_stmt *row, void *arg)
{
	struct sync_state *s = arg;
	struct sync_records *r;

	s->records = xrealloc(s->records, (s->nrecords + 1) * sizeof(*s->records));
	r = &s->records[s->nrecords++];
	r->trace_id = sqlite3_column_int64(row, 0);
	r->device = sqlite3_column_int64(row, 1);
	r->type = sqlite3_column_int(row, 2);
	r->count = sqlite3_column_int64(row, 3);
	r->ns = sqlite3_column_int64(row, 4);
}

/* Evidence lines from the synchronization records of one device (f may be NULL); their count. */
static int64_t add_records(const struct sync_state *s, struct finding *f, int64_t trace_id,
			   int64_t device)
{
	struct fmt_text t1;
	int64_t total = 0;

	for (size_t i = 0; i < s->nrecords; i++) {
		const struct sync_records *r = &s->records[i];

		if (r->trace_id != trace_id || r->device != device)
			continue;
		total += r->count;
		if (f)
			finding_evidence(f, "CUPTI records: %" PRId64 " %s on this device, %s in total",
					 r->count, sync_type_name(r->type), fmt_duration(&t1, r->ns));
	}
	return total;
}

/* The replay's fix: the trace's synchronize calls no longer wait. */
static struct what_if_fix *no_wait_fix(const struct sync_state *s, int64_t trace_id)
{
	int64_t *ids = xcalloc(s->ncalls ? s->ncalls : 1, sizeof(*ids));
	size_t n = 0;
	struct what_if_fix *fix;

	for (size_t c = 0; c < s->ncalls; c++)
		if (s->calls[c].trace_id == trace_id)
			ids[n++] = s->calls[c].name_id;
	fix = n ? what_if_fix_new(WHAT_IF_NO_WAIT, trace_id, -1, ids, n, 0) : NULL;
	free(ids);
	return fix;
}

static void report_drains(const struct rule *rule, struct rule_context *ctx, struct sync_state *s,
			  const struct gap_device *dev, const struct span_clock *clock,
			  double min_syncs)
{
	int64_t count = 0, idle = 0, blocked = 0, recoverable;
	struct fmt_text t1, t2, t3, t4;
	const struct drain *longest = NULL;
	struct finding *f;

	for (size_t i = 0; i < s->n; i++) {
		const struct drain *d = &s->drains[i];

		if (d->trace_id != dev->trace_id || d->device != dev->device)
			continue;
		count += d->count;
		idle += d->idle;
		if (!longest || d->longest > longest->longest)
			longest = d;
	}
	if (!count || (double)count < min_syncs)
		return;
	for (size_t c = 0; c < s->ncalls; c++)
		if (s->calls[c].trace_id == dev->trace_id)
			blocked += s->calls[c].blocked;
	/*
	 * With the syncs, an iteration takes host time H plus the time B the host is blocked; without
	 * them, max(H, G) for GPU time G. The saving H + B - max(H, G) is min(B, idle time): never more
	 * than the host spent blocked, nor more than the device idled after the drains.
	 */
	recoverable = blocked > 0 && blocked < idle ? blocked : idle;
	f = findings_add(
	    ctx->out, rule, rule_severity(recoverable, span_clock_span(clock, dev->trace_id)),
	    recoverable,
	    "Synchronize only where the host needs a result: drop per-iteration "
	    "cudaDeviceSynchronize/cudaStreamSynchronize calls, order GPU work with events and "
	    "cudaStreamWaitEvent, poll with cudaEventQuery, and in PyTorch avoid .item(), .cpu() "
	    "and printing tensors inside the loop.",
	    "%s: %" PRId64 " synchronizations left it idle, %s in total until the next work",
	    fmt_device(&t1, ctx->an.trace, dev->trace_id, dev->device), count,
	    fmt_duration(&t2, idle));
	f->device = (int32_t)dev->device;
	finding_what_if(f, no_wait_fix(s, dev->trace_id));
	/* Per call name: how often the process called it, how long it blocked, how often it drained. */
	for (size_t c = 0; c < s->ncalls; c++) {
		const struct sync_calls *calls = &s->calls[c];
		const struct drain *d = NULL;

		if (calls->trace_id != dev->trace_id)
			continue;
		for (size_t i = 0; i < s->n && !d; i++)
			if (s->drains[i].trace_id == dev->trace_id && s->drains[i].device == dev->device &&
			    !strcmp(s->drains[i].name, calls->name))
				d = &s->drains[i];
		finding_evidence(f, "%s: %" PRId64 " call%s blocked the host %s; %" PRId64
				 " drained the device, which then idled %s",
				 fmt_name(&t1, calls->name), calls->count, plural(calls->count),
				 fmt_duration(&t2, calls->blocked), d ? d->count : 0,
				 fmt_duration(&t3, d ? d->idle : 0));
	}
	if (recoverable < idle)
		finding_evidence(f, "recoverable: at most the %s the host spent blocked in these calls (less than "
				 "the idle time after them)", fmt_duration(&t1, recoverable));
	add_records(s, f, dev->trace_id, dev->device);
	if (longest) {
		finding_evidence(f, "longest: %s idle from %s to %s after %s", fmt_duration(&t1, longest->longest),
				 fmt_at(&t2, clock, longest->longest_start),
				 fmt_at(&t3, clock, longest->longest_end), fmt_name(&t4, longest->name));
		f->start = longest->longest_start;
		f->end = longest->longest_end;
	}
}

/* Without API records: state the synchronization records of each device, claim nothing. */
static void report_unattributed(const struct rule *rule, struct rule_context *ctx,
				const struct sync_state *s, int64_t trace_id, double min_syncs)
{
	for (size_t i = 0; i < s->nrecords; i++) {
		const struct sync_records *r = &s->records[i];
		struct fmt_text t1;
		struct finding *f;
		int64_t total;

		/* Once per device: at its first row. */
		if (r->trace_id != trace_id || (i && s->records[i - 1].trace_id == trace_id &&
						s->records[i - 1].device == r->device))
			continue;
		total = add_records(s, NULL, trace_id, r->device);
		if (!total || (double)total < min_syncs)
			continue;
		f = findings_add(
		    ctx->out, rule, SEVERITY_INFO, 0,
		    "Record CUDA API calls too (gpt-trace records them by default; nsys: -t cuda) "
		    "to see which synchronizations stall the GPU.",
		    "%s: %" PRId64 " synchronizations recorded, but without CUDA API records it "
		    "cannot tell whether they left the GPU idle",
		    fmt_device(&t1, ctx->an.trace, trace_id, r->device), total);
		f->device = (int32_t)r->device;
		add_records(s, f, trace_id, r->device);
	}
}

static int has_api_calls(struct rule_context *ctx, int64_t trace_id, int *yes, char *err,
			 size_t errlen)
{
	sqlite3_stmt *st;
	int ret, rc;

	*yes = 0;
	ret = analysis_prepare(&ctx->an, "SELECT 1 FROM api_calls WHERE traceId = ?1 LIMIT 1", &st,
			       err, errlen);
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, trace_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*yes = 1;
	else if (rc != SQLITE_DONE)
		ret = analysis_step_error(&ctx->an, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

static void on_call(const struct gap_call *call, void *arg)
{
	struct sync_state *s = arg;
	struct sync_calls *c = NULL;

	for (size_t i = 0; i < s->ncalls && !c; i++)
		if (s->calls[i].trace_id == call->trace_id && s->calls[i].name_id == call->name_id)
			c = &s->calls[i];
	if (!c) {
		s->calls = xrealloc(s->calls, (s->ncalls + 1) * sizeof(*s->calls));
		c = &s->calls[s->ncalls++];
		*c = (struct sync_calls){ .trace_id = call->trace_id, .name_id = call->name_id,
					  .name = api_names_name(&s->names, call->trace_id, call->name_id) };
	}
	c->count++;
	if (call->has_end)
		c->blocked += call->end - call->start;
}

static int compare_calls(const void *pa, const void *pb)
{
	const struct sync_calls *a = pa, *b = pb;

	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	return (a->name_id > b->name_id) - (a->name_id < b->name_id);
}

static void sync_state_free(struct sync_state *s)
{
	api_names_release(&s->names);
	for (size_t i = 0; i < s->n; i++)
		free(s->drains[i].name);
	free(s->drains);
	free(s->calls);
	free(s->records);
	free(s);
}

static int excessive_sync_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
				void **state, char *err, size_t errlen)
{
	struct sync_state *s = xcalloc(1, sizeof(*s));
	int ret;

	*state = NULL;
	ret = api_names_load(&ctx->an, &s->names, err, errlen);
	if (!ret)
		ret = analysis_query(&ctx->an, records_sql, records_row, s, err, errlen);
	if (ret < 0) {
		sync_state_free(s);
		return ret;
	}
	/* The drains from the gaps; the synchronize calls, blocked time included, from the walk too. */
	*visitor = (struct gap_visitor){ .min_gap = (int64_t)(rule_param(ctx, rule, "min_gap_us") * 1e3),
					 .fn = on_gap, .arg = s, .calls = API_SYNC, .on_call = on_call };
	if (visitor->min_gap < 1)
		visitor->min_gap = 1;
	*state = s;
	return 0;
}

static int excessive_sync_finish(const struct rule *rule, struct rule_context *ctx, void *state,
				 const struct gap_walk *walk, char *err, size_t errlen)
{
	double min_syncs = rule_param(ctx, rule, "min_syncs");
	struct sync_state *s = state;
	struct span_clock clock = {0};
	int ret = 0;

	if (!walk)
		goto out;
	if (s->ncalls > 1)
		qsort(s->calls, s->ncalls, sizeof(*s->calls), compare_calls);
	/* A trace with fewer synchronize calls than min_syncs cannot have that many drains. */
	for (size_t i = 0; i < s->ncalls && !s->walked; i++) {
		int64_t total = 0;

		for (size_t j = 0; j < s->ncalls; j++)
			if (s->calls[j].trace_id == s->calls[i].trace_id)
				total += s->calls[j].count;
		if ((double)total >= min_syncs && total > 0)
			s->walked = 1;
	}
	if (s->walked && s->n) {
		ret = span_clock_init(&clock, &ctx->an, err, errlen);
		if (ret < 0)
			goto out;
		for (size_t i = 0; i < walk->ndevices; i++)
			report_drains(rule, ctx, s, &walk->devices[i], &clock, min_syncs);
	}
	/* Traces without API records: the synchronization records alone, claiming nothing. */
	for (size_t id = 0; s->nrecords && id < trace_count(ctx->an.trace) && ret == 0; id++) {
		int api;

		ret = has_api_calls(ctx, (int64_t)id, &api, err, errlen);
		if (ret == 0 && !api)
			report_unattributed(rule, ctx, s, (int64_t)id, min_syncs);
	}
out:
	span_clock_release(&clock);
	sync_state_free(s);
	return ret;
}

const struct rule rule_excessive_sync = {
	.id = "excessive-sync",
	.title = "Synchronizations that idle the GPU",
	.measures = "device, stream, event and context synchronizations that drain the GPU: how many, "
		    "how long they block the host, and how long the GPU then idles",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = excessive_sync_begin,
	.finish = excessive_sync_finish,
};
