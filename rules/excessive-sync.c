/*
 * excessive-sync: synchronizations (cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize and their driver-API twins) that leave the GPU idle. A synchronization drains
 * a device when the host thread was blocked in it at the moment the device ran out of work: the host
 * could not queue anything ahead, so the device then idles until the host issues the next operation.
 * That idle time (the sync-wait gaps of idle-gaps, of at least min_gap_us, blamed on synchronize
 * calls) is the recoverable time; it is the same time idle-gaps counts as sync-wait, seen from the
 * calls that caused it.
 *
 * Without CUDA API records nobody can tell which call the host was in; the rule then only reports
 * the CUPTI synchronization records, as information, with nothing recoverable claimed.
 */
#include "rules/gaps.h"
#include "rules/rule-util.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_gap_us", 5, "us", "idle gaps shorter than this after a synchronization are not counted" },
	{ "min_syncs", 10, "count", "report a device drained by at least this many synchronizations" },
};

static const char calls_sql[] =
	"SELECT traceId, name, COUNT(*), SUM(dur) FROM api_calls WHERE " SQL_SYNC_API
	" GROUP BY traceId, name";
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

struct sync_state {
	struct drain *drains;
	size_t n;
};

static int is_copy_call(const char *name)
{
	return !strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8);
}

static int on_gap(const struct gap *g, void *arg)
{
	struct sync_state *s = arg;
	int64_t len = g->end - g->start;
	struct drain *d = NULL;

	if (g->cause != GAP_SYNC_WAIT || is_copy_call(g->blocker))
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

/* Evidence lines from the CUPTI synchronization records of one device; returns how many there are. */
static int64_t add_records(const struct rule *rule, struct rule_context *ctx, struct finding *f,
			   int64_t trace_id, int64_t device, char *err, size_t errlen, int *ret)
{
	sqlite3_stmt *st;
	int64_t total = 0;
	struct rule_text t1;
	int rc;

	*ret = rule_prepare(rule, ctx, records_sql, &st, err, errlen);
	if (*ret < 0)
		return 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 0) != trace_id || sqlite3_column_int64(st, 1) != device)
			continue;
		total += sqlite3_column_int64(st, 3);
		if (f)
			finding_evidence(f, "CUPTI records: %" PRId64 " %s on this device, %s in total",
					 (int64_t)sqlite3_column_int64(st, 3), sync_type_name(sqlite3_column_int(st, 2)),
					 fmt_duration(&t1, sqlite3_column_int64(st, 4)));
	}
	if (rc != SQLITE_DONE)
		*ret = rule_step_error(rule, ctx, err, errlen);
	sqlite3_finalize(st);
	return total;
}

static int report_drains(const struct rule *rule, struct rule_context *ctx, struct sync_state *s,
			 const struct gap_device *dev, const struct rule_clock *clock,
			 double min_syncs, char *err, size_t errlen)
{
	int64_t count = 0, idle = 0;
	struct rule_text t1, t2, t3, t4;
	const struct drain *longest = NULL;
	struct finding *f;
	sqlite3_stmt *st;
	int ret = 0, rc;

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
		return 0;
	f = findings_add(ctx->out, rule, rule_severity(idle, rule_clock_span(clock, dev->trace_id)), idle,
			 "Synchronize only where the host needs a result: drop per-iteration "
			 "cudaDeviceSynchronize/cudaStreamSynchronize calls, order GPU work with events and "
			 "cudaStreamWaitEvent, poll with cudaEventQuery, and in PyTorch avoid .item(), .cpu() "
			 "and printing tensors inside the loop.",
			 "%s: %" PRId64 " synchronizations left it idle, %s in total until the next work",
			 fmt_device(&t1, ctx, dev->trace_id, dev->device), count, fmt_duration(&t2, idle));
	f->device = (int32_t)dev->device;
	ret = rule_prepare(rule, ctx, calls_sql, &st, err, errlen);
	if (ret < 0)
		return ret;
	/* Per call name: how often the process called it, how long it blocked, how often it drained. */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = rule_column_text(st, 1);
		const struct drain *d = NULL;

		if (sqlite3_column_int64(st, 0) != dev->trace_id)
			continue;
		for (size_t i = 0; i < s->n && !d; i++)
			if (s->drains[i].trace_id == dev->trace_id && s->drains[i].device == dev->device &&
			    !strcmp(s->drains[i].name, name))
				d = &s->drains[i];
		finding_evidence(f, "%s: %" PRId64 " call%s blocked the host %s; %" PRId64
				 " drained the device, which then idled %s",
				 fmt_name(&t1, name), (int64_t)sqlite3_column_int64(st, 2),
				 plural(sqlite3_column_int64(st, 2)),
				 fmt_duration(&t2, sqlite3_column_int64(st, 3)), d ? d->count : 0,
				 fmt_duration(&t3, d ? d->idle : 0));
	}
	if (rc != SQLITE_DONE)
		ret = rule_step_error(rule, ctx, err, errlen);
	sqlite3_finalize(st);
	if (ret < 0)
		return ret;
	add_records(rule, ctx, f, dev->trace_id, dev->device, err, errlen, &ret);
	if (ret < 0)
		return ret;
	if (longest) {
		finding_evidence(f, "longest: %s idle from %s to %s after %s", fmt_duration(&t1, longest->longest),
				 fmt_at(&t2, clock, longest->longest_start),
				 fmt_at(&t3, clock, longest->longest_end), fmt_name(&t4, longest->name));
		f->start = longest->longest_start;
		f->end = longest->longest_end;
	}
	return 0;
}

/* Without API records: state the synchronization records, claim nothing. */
static int report_unattributed(const struct rule *rule, struct rule_context *ctx,
			       const struct gap_device *dev, double min_syncs, char *err, size_t errlen)
{
	struct rule_text t1;
	struct finding *f;
	int64_t total;
	int ret = 0;

	total = add_records(rule, ctx, NULL, dev->trace_id, dev->device, err, errlen, &ret);
	if (ret < 0 || !total || (double)total < min_syncs)
		return ret;
	f = findings_add(ctx->out, rule, SEVERITY_INFO, 0,
			 "Record CUDA API calls too (gpt-trace records them by default; nsys: -t cuda) to "
			 "see which synchronizations stall the GPU.",
			 "%s: %" PRId64 " synchronizations recorded, but without CUDA API records it cannot "
			 "tell whether they left the GPU idle",
			 fmt_device(&t1, ctx, dev->trace_id, dev->device), total);
	f->device = (int32_t)dev->device;
	add_records(rule, ctx, f, dev->trace_id, dev->device, err, errlen, &ret);
	return ret;
}

static int has_api_calls(const struct rule *rule, struct rule_context *ctx, int64_t trace_id,
			 int *yes, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int ret, rc;

	*yes = 0;
	ret = rule_prepare(rule, ctx, "SELECT 1 FROM api_calls WHERE traceId = ?1 LIMIT 1", &st, err,
			   errlen);
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, trace_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*yes = 1;
	else if (rc != SQLITE_DONE)
		ret = rule_step_error(rule, ctx, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

static int excessive_sync_run(const struct rule *rule, struct rule_context *ctx, char *err,
			      size_t errlen)
{
	double min_syncs = rule_param(ctx, rule, "min_syncs");
	struct sync_state s = { 0 };
	struct gap_walk walk = { .fn = on_gap, .arg = &s };
	struct rule_clock clock = { 0 };
	int ret;

	walk.min_gap = (int64_t)(rule_param(ctx, rule, "min_gap_us") * 1e3);
	if (walk.min_gap < 1)
		walk.min_gap = 1;
	ret = rule_clock_init(&clock, rule, ctx, err, errlen);
	if (ret < 0)
		goto out;
	ret = gap_walk(rule, ctx, &walk, err, errlen);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < walk.ndevices && ret == 0; i++) {
		const struct gap_device *dev = &walk.devices[i];
		int api;

		ret = has_api_calls(rule, ctx, dev->trace_id, &api, err, errlen);
		if (ret < 0)
			break;
		if (api)
			ret = report_drains(rule, ctx, &s, dev, &clock, min_syncs, err, errlen);
		else
			ret = report_unattributed(rule, ctx, dev, min_syncs, err, errlen);
	}
out:
	gap_walk_release(&walk);
	rule_clock_release(&clock);
	for (size_t i = 0; i < s.n; i++)
		free(s.drains[i].name);
	free(s.drains);
	return ret;
}

const struct rule rule_excessive_sync = {
	.id = "excessive-sync",
	.title = "Synchronizations that idle the GPU",
	.measures = "device, stream, event and context synchronizations that drain the GPU: how many, "
		    "how long they block the host, and how long the GPU then idles",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = excessive_sync_run,
};
