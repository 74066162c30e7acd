/*
 * The tally of allocation calls for allocation-churn and host-pinning-in-loop (see alloc-tally.h).
 * A trace calls a handful of distinct allocation functions, so names are kept in a short array and
 * found by a linear search; calls come from the walk's on_call (class API_ALLOC), idle time from the
 * host-wait gaps (all of it per trace, and the parts inside each call for the evidence). The two
 * rules' begin and finish, and the evidence they both list per call name, are here too.
 */
#include "rules/alloc-tally.h"
#include "analyzer/analysis/what-if.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int alloc_call_pins(const char *name)
{
	static const char *const prefixes[] = {
		"cudaHostAlloc", "cudaMallocHost", "cudaFreeHost", "cudaHostRegister", "cudaHostUnregister",
		"cuMemHostAlloc", "cuMemAllocHost", "cuMemFreeHost", "cuMemHostRegister", "cuMemHostUnregister",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static int wanted(const struct alloc_tally *t, const char *name)
{
	return name && api_family(name) == FAMILY_ALLOCATION && alloc_call_pins(name) == t->pinning;
}

static struct alloc_trace *trace_get(struct alloc_tally *t, int64_t trace_id)
{
	for (size_t i = 0; i < t->ntraces; i++)
		if (t->traces[i].trace_id == trace_id)
			return &t->traces[i];
	t->traces = xrealloc(t->traces, (t->ntraces + 1) * sizeof(*t->traces));
	memset(&t->traces[t->ntraces], 0, sizeof(t->traces[0]));
	t->traces[t->ntraces].trace_id = trace_id;
	return &t->traces[t->ntraces++];
}

static struct alloc_name *name_get(struct alloc_tally *t, int64_t trace_id, const char *name)
{
	struct alloc_name *n;

	for (size_t i = 0; i < t->nnames; i++)
		if (t->names[i].trace_id == trace_id && !strcmp(t->names[i].name, name))
			return &t->names[i];
	t->names = xrealloc(t->names, (t->nnames + 1) * sizeof(*t->names));
	n = &t->names[t->nnames++];
	memset(n, 0, sizeof(*n));
	n->trace_id = trace_id;
	n->name = xstrdup(name);
	n->first = INT64_MAX;
	n->last = INT64_MIN;
	return n;
}

void alloc_tally_call(const struct gap_call *call, void *arg)
{
	struct alloc_tally *t = arg;
	struct alloc_trace *tr;
	struct alloc_name *n;
	const char *name = NULL;
	int pins;
	char err[256];

	if (trace_string(t->ctx->an.trace, call->trace_id, call->name_id, &name, err, sizeof(err)) <
	    0) {
		if (!t->error)
			t->error = xstrdup(err);
		return;
	}
	if (!name || api_family(name) != FAMILY_ALLOCATION)
		return;
	pins = alloc_call_pins(name);
	tr = trace_get(t, call->trace_id);
	tr->calls[pins]++;
	if (call->has_end && call->end > call->start) {
		tr->call_ns[pins] += call->end - call->start;
		if (tr->npending == ALLOC_PENDING_MAX)
			memmove(&tr->pending[0], &tr->pending[1], --tr->npending * sizeof(tr->pending[0]));
		tr->pending[tr->npending++] = (struct alloc_pending){ call->end, call->end - call->start, pins };
	}
	if (pins != t->pinning)
		return;
	n = name_get(t, call->trace_id, name);
	{
		size_t k;

		for (k = 0; k < n->nname_ids && n->name_ids[k] != call->name_id; k++)
			;
		if (k == n->nname_ids) {
			n->name_ids = xrealloc(n->name_ids, (k + 1) * sizeof(*n->name_ids));
			n->name_ids[n->nname_ids++] = call->name_id;
		}
	}
	n->calls++;
	if (call->has_end && call->end > call->start)
		n->call_ns += call->end - call->start;
	if (call->start < n->first)
		n->first = call->start;
	if ((call->has_end ? call->end : call->start) > n->last)
		n->last = call->has_end ? call->end : call->start;
}

static struct alloc_device *device_get(struct alloc_tally *t, int64_t trace_id, int64_t device)
{
	return rule_device_get(&t->device_index, trace_id, device, &t->devices, &t->ndevices,
			       sizeof(*t->devices), NULL);
}

/* Match a host-wait gap with the pending time in calls: allocation calls first, then pinning. */
static void claim_gap(struct alloc_tally *t, struct alloc_trace *tr, const struct gap *g)
{
	int64_t left = g->end - g->start;
	size_t kept = 0;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < tr->npending && left > 0; i++) {
			struct alloc_pending *p = &tr->pending[i];
			int64_t c = p->ns < left ? p->ns : left;

			if (p->pins != k || !c)
				continue;
			p->ns -= c;
			tr->claim[k] += c;
			left -= c;
			device_get(t, g->trace_id, g->device)->claim += c;
		}
	for (size_t i = 0; i < tr->npending; i++)
		if (tr->pending[i].ns > 0)
			tr->pending[kept++] = tr->pending[i];
	tr->npending = kept;
}

/* The host was ahead when an operation started at `at`: calls that ended before cost nothing more. */
static void clear_pending(struct alloc_trace *tr, int64_t at)
{
	size_t kept = 0;

	for (size_t i = 0; i < tr->npending; i++)
		if (tr->pending[i].end > at)
			tr->pending[kept++] = tr->pending[i];
	tr->npending = kept;
}

int alloc_tally_gap(const struct gap *g, void *arg)
{
	struct alloc_tally *t = arg;
	struct alloc_trace *tr = NULL;
	int64_t len = g->end - g->start;

	for (size_t i = 0; i < t->ntraces && !tr; i++)
		if (t->traces[i].trace_id == g->trace_id)
			tr = &t->traces[i];
	if (len < t->min_gap || len <= 0) {
		/* the host was ahead: what it spent in calls before cost nothing more */
		if (tr && !g->startup)
			clear_pending(tr, g->next_start);
		return 0;
	}
	if (g->cause != GAP_HOST_WAIT || g->startup)
		return 0;
	if (!tr)
		tr = trace_get(t, g->trace_id);
	tr->host_idle += len - gap_profiler_ns(g);
	claim_gap(t, tr, g);
	for (size_t i = 0; t->pinning >= 0 && i < g->nparts; i++) {
		const struct idle_part *p = &g->parts[i];

		if (p->kind == IDLE_CUDA && wanted(t, p->detail))
			name_get(t, g->trace_id, p->detail)->idle_ns += p->ns;
	}
	return 0;
}

void alloc_tally_visitor(struct alloc_tally *tally, int64_t min_gap, struct gap_visitor *visitor)
{
	tally->min_gap = min_gap < 1 ? 1 : min_gap;
	/* every operation: one that starts without a gap clears the pending time */
	*visitor = (struct gap_visitor){
		.min_gap = 0, .attribute = 1, .fn = alloc_tally_gap, .arg = tally,
		.calls = API_ALLOC, .on_call = alloc_tally_call,
	};
}

static int compare_names(const void *pa, const void *pb)
{
	const struct alloc_name *a = pa, *b = pb;

	if (a->trace_id != b->trace_id)
		return a->trace_id < b->trace_id ? -1 : 1;
	if (a->call_ns != b->call_ns)
		return a->call_ns > b->call_ns ? -1 : 1;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return strcmp(a->name, b->name);
}

const struct alloc_trace *alloc_tally_trace(const struct alloc_tally *tally, int64_t trace_id)
{
	for (size_t i = 0; i < tally->ntraces; i++)
		if (tally->traces[i].trace_id == trace_id)
			return &tally->traces[i];
	return NULL;
}

int64_t alloc_tally_device_claim(const struct alloc_tally *tally, int64_t trace_id, int64_t device)
{
	const struct alloc_device *d = rule_device_find(&tally->device_index, trace_id, device,
							tally->devices, sizeof(*tally->devices));

	return d ? d->claim : 0;
}

void alloc_tally_release(struct alloc_tally *tally)
{
	for (size_t i = 0; i < tally->nnames; i++) {
		free(tally->names[i].name);
		free(tally->names[i].name_ids);
	}
	free(tally->names);
	free(tally->traces);
	key_index_release(&tally->device_index);
	free(tally->devices);
	free(tally->error);
	memset(tally, 0, sizeof(*tally));
}

struct alloc_tally *alloc_tally_new(struct rule_context *ctx, int pinning, int64_t min_gap,
				    struct gap_visitor *visitor)
{
	struct alloc_tally *t = xcalloc(1, sizeof(*t));

	t->ctx = ctx;
	t->pinning = pinning;
	alloc_tally_visitor(t, min_gap, visitor);
	return t;
}

int alloc_tally_report(struct alloc_tally *t, const struct rule *rule, struct rule_context *ctx,
		       const struct gap_walk *walk, alloc_report_fn *report, char *err, size_t errlen)
{
	struct span_clock clock = {0};
	int ret = 0;

	if (!walk || !t->nnames)
		goto out;
	if (t->error) {
		snprintf(err, errlen, "%s: %s", rule->id, t->error);
		ret = -1;
		goto out;
	}
	if (t->nnames > 1)
		qsort(t->names, t->nnames, sizeof(*t->names), compare_names);
	ret = span_clock_init(&clock, &ctx->an, err, errlen);
	for (size_t i = 0; ret >= 0 && i < t->nnames; i++)
		if (i == 0 || t->names[i].trace_id != t->names[i - 1].trace_id)
			ret = report(rule, ctx, t, t->names[i].trace_id, &clock, err, errlen);
out:
	span_clock_release(&clock);
	alloc_tally_release(t);
	free(t);
	return ret;
}

void alloc_tally_evidence(struct finding *f, const struct alloc_tally *t, int64_t trace_id, int64_t iterations)
{
	struct fmt_text t1, t2, t3, t4;
	char per[64] = "";

	for (size_t i = 0; i < t->nnames; i++) {
		const struct alloc_name *n = &t->names[i];

		if (n->trace_id != trace_id)
			continue;
		if (iterations > 0)
			snprintf(per, sizeof(per), " (%.1f per iteration)", (double)n->calls / (double)iterations);
		finding_evidence(f, "%s: %" PRId64 " call%s%s, %s inside (%s each on average), GPU idle %s while inside",
				 fmt_name(&t1, n->name), n->calls, plural(n->calls), per,
				 fmt_duration(&t2, n->call_ns), fmt_duration(&t3, n->calls ? n->call_ns / n->calls : 0),
				 fmt_duration(&t4, n->idle_ns));
		if (!f->end || n->first < f->start)
			f->start = n->first;
		if (!f->end || n->last > f->end)
			f->end = n->last;
	}
}

struct what_if_fix *alloc_tally_fix(const struct alloc_tally *tally, int64_t trace_id)
{
	int64_t *ids = NULL;
	size_t n = 0;
	struct what_if_fix *fix = NULL;

	for (size_t i = 0; i < tally->nnames; i++) {
		const struct alloc_name *name = &tally->names[i];

		if (name->trace_id != trace_id || !name->nname_ids)
			continue;
		ids = xrealloc(ids, (n + name->nname_ids) * sizeof(*ids));
		memcpy(ids + n, name->name_ids, name->nname_ids * sizeof(*ids));
		n += name->nname_ids;
	}
	if (n)
		fix = what_if_fix_new(WHAT_IF_NO_CALL, trace_id, -1, ids, n, 0);
	free(ids);
	return fix;
}
