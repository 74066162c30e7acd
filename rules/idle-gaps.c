/*
 * idle-gaps: the GPU idles between pieces of work. For each device, the time between the end of all
 * earlier work and the start of the next operation is split into host-wait, sync-wait and other (see
 * gaps.h for the exact definitions), per device and per stream, with the largest gaps listed. The
 * time it would recover is the host-wait idle time in gaps of at least min_gap_us: with work queued
 * ahead, such a gap shrinks to the launch latency, which the threshold excludes. Sync-wait gaps are
 * shown but claimed by excessive-sync and sync-memcpy, and host-wait spent in allocation calls by
 * allocation-churn, so that no idle ns is counted twice. The headline and the fix follow the family
 * of causes (gaps.h: enum idle_family) that holds the most host-wait time. The profiler's own work
 * (kernel replay under --metrics, PROFILER_OVERHEAD) is idle time too, but no cause's: it is given
 * apart and never recoverable.
 */
#include "rules/alloc-tally.h"
#include "analyzer/analysis/gaps.h"
#include "rules/rule-util.h"

#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_gap_us", 5, "us", "gaps shorter than this are launch latency and are not counted" },
	{ "min_idle_pct", 5, "%",
	  "report a device when its host-wait and sync-wait idle time reaches this share of the time "
	  "from its first to its last operation" },
	{ "max_gaps", 5, "count", "largest gaps listed as evidence per device" },
};

struct cause_total {
	int64_t count, ns;
};

struct stream_idle {
	int64_t trace_id, device, stream;
	struct cause_total cause[GAP_NCAUSES];
};

struct blocker_idle {
	int64_t trace_id, device;
	char *name;
	struct cause_total total;
};

struct device_idle {
	struct rule_device key;
	struct cause_total cause[GAP_NCAUSES];	/* the profiler's own work left out */
	struct cause_total profiler;		/* idle time in the profiler's own work */
	int64_t family_ns[IDLE_NFAMILIES];	/* host-wait idle time by family */
	int64_t claimed_ns;			/* host-wait that allocation-churn and
						   host-pinning-in-loop claim (alloc-tally.h) */
	struct gap *largest;		/* max_gaps largest, largest first */
	size_t nlargest;
	char **largest_blocker;		/* copies of largest[i].blocker */
};

/* Host-wait idle time of one device by what the issuing thread did (gaps.h: idle_part). */
struct host_cause {
	int64_t trace_id, device;
	enum idle_kind kind;
	char *detail;		/* a copy; NULL for host code, launch... */
	int64_t ns;
};

struct idle_state {
	struct alloc_tally tally;	/* what allocation-churn and host-pinning-in-loop claim */
	int64_t min_gap;
	struct host_cause *causes;
	size_t ncauses;
	size_t max_gaps;
	struct key_index device_index;	/* (trace, device) -> devices[] */
	struct device_idle *devices;
	size_t ndevices;
	struct stream_idle *streams;
	size_t nstreams;
	struct blocker_idle *blockers;
	size_t nblockers;
};

static struct device_idle *device_get(struct idle_state *s, int64_t trace_id, int64_t device)
{
	int created;
	struct device_idle *d = rule_device_get(&s->device_index, trace_id, device, &s->devices,
						&s->ndevices, sizeof(*s->devices), &created);

	if (!created)
		return d;
	d->largest = xcalloc(s->max_gaps ? s->max_gaps : 1, sizeof(*d->largest));
	d->largest_blocker = xcalloc(s->max_gaps ? s->max_gaps : 1, sizeof(char *));
	return d;
}

static struct stream_idle *stream_get(struct idle_state *s, const struct gap *g)
{
	struct stream_idle *st;

	for (size_t i = 0; i < s->nstreams; i++) {
		st = &s->streams[i];
		if (st->trace_id == g->trace_id && st->device == g->device && st->stream == g->stream)
			return st;
	}
	s->streams = xrealloc(s->streams, (s->nstreams + 1) * sizeof(*s->streams));
	st = &s->streams[s->nstreams++];
	memset(st, 0, sizeof(*st));
	st->trace_id = g->trace_id;
	st->device = g->device;
	st->stream = g->stream;
	return st;
}

static void add_blocker(struct idle_state *s, const struct gap *g)
{
	struct blocker_idle *b;

	for (size_t i = 0; i < s->nblockers; i++) {
		b = &s->blockers[i];
		if (b->trace_id == g->trace_id && b->device == g->device && !strcmp(b->name, g->blocker)) {
			b->total.count++;
			b->total.ns += g->end - g->start;
			return;
		}
	}
	s->blockers = xrealloc(s->blockers, (s->nblockers + 1) * sizeof(*s->blockers));
	b = &s->blockers[s->nblockers++];
	b->trace_id = g->trace_id;
	b->device = g->device;
	b->name = xstrdup(g->blocker);
	b->total.count = 1;
	b->total.ns = g->end - g->start;
}

/* Keep the max_gaps largest gaps of a device, largest first (ties: earlier first). */
static void keep_largest(struct idle_state *s, struct device_idle *d, const struct gap *g)
{
	int64_t len = g->end - g->start;
	size_t pos = d->nlargest;

	while (pos > 0 && d->largest[pos - 1].end - d->largest[pos - 1].start < len)
		pos--;
	if (pos >= s->max_gaps)
		return;
	if (d->nlargest == s->max_gaps) {
		free(d->largest_blocker[d->nlargest - 1]);
		d->nlargest--;
	}
	memmove(&d->largest[pos + 1], &d->largest[pos], (d->nlargest - pos) * sizeof(*d->largest));
	memmove(&d->largest_blocker[pos + 1], &d->largest_blocker[pos],
		(d->nlargest - pos) * sizeof(char *));
	d->largest[pos] = *g;
	d->largest[pos].blocker = NULL;
	d->largest[pos].parts = NULL;	/* valid only during the walk */
	d->largest[pos].nparts = 0;
	d->largest_blocker[pos] = g->blocker ? xstrdup(g->blocker) : NULL;
	d->nlargest++;
}

static void add_host_cause(struct idle_state *s, const struct gap *g, const struct idle_part *p)
{
	struct host_cause *c;

	for (size_t i = 0; i < s->ncauses; i++) {
		c = &s->causes[i];
		if (c->trace_id == g->trace_id && c->device == g->device && c->kind == p->kind &&
		    (c->detail == p->detail || (c->detail && p->detail && !strcmp(c->detail, p->detail)))) {
			c->ns += p->ns;
			return;
		}
	}
	s->causes = xrealloc(s->causes, (s->ncauses + 1) * sizeof(*s->causes));
	s->causes[s->ncauses++] = (struct host_cause){
		.trace_id = g->trace_id, .device = g->device, .kind = p->kind,
		.detail = p->detail ? xstrdup(p->detail) : NULL, .ns = p->ns,
	};
}

static int compare_causes(const void *pa, const void *pb)
{
	const struct host_cause *a = pa, *b = pb;

	return (a->ns < b->ns) - (a->ns > b->ns);
}

/* A cause in a few words: "in cudaFree_v3020 (allocation)", "host code in NVTX range 'data'". */
static const char *cause_text(struct fmt_text *t, const struct host_cause *c)
{
	struct fmt_text name;
	const char *category;

	switch (c->kind) {
	case IDLE_SYNC:
		snprintf(t->s, sizeof(t->s), "blocked in %s", fmt_name(&name, c->detail ? c->detail : "?"));
		break;
	case IDLE_CUDA:
		category = api_category(c->detail);
		snprintf(t->s, sizeof(t->s), "in %s%s%s%s", fmt_name(&name, c->detail ? c->detail : "?"),
			 category ? " (" : "", category ? category : "", category ? ")" : "");
		break;
	case IDLE_RANGE:
		snprintf(t->s, sizeof(t->s), "host code in NVTX range '%s'", fmt_name(&name, c->detail ? c->detail : ""));
		break;
	case IDLE_HOST:
		snprintf(t->s, sizeof(t->s), "host code outside NVTX ranges");
		break;
	case IDLE_LAUNCH:
		snprintf(t->s, sizeof(t->s), "the launch call and launch latency");
		break;
	default:
		snprintf(t->s, sizeof(t->s), "%s", idle_kind_name(c->kind));
	}
	return t->s;
}

/* The family holding the most host-wait time of a device (ties: the earlier family). */
static enum idle_family top_family(const struct device_idle *d)
{
	enum idle_family top = FAMILY_HOST;

	for (int f = 0; f < IDLE_NFAMILIES; f++)
		if (d->family_ns[f] > d->family_ns[top] || (d->family_ns[f] == d->family_ns[top] && (int)top > f))
			top = (enum idle_family)f;
	return top;
}

/* A cause as a member of its family, in a word or two: "cudaFree_v3020", "NVTX range 'step'". */
static const char *member_text(struct fmt_text *t, const struct host_cause *c)
{
	struct fmt_text name;

	switch (c->kind) {
	case IDLE_SYNC:
	case IDLE_CUDA:
		return fmt_name(t, c->detail ? c->detail : "?");
	case IDLE_RANGE:
		snprintf(t->s, sizeof(t->s), "NVTX range '%s'", fmt_name(&name, c->detail ? c->detail : ""));
		return t->s;
	case IDLE_HOST:
		return "outside NVTX ranges";
	case IDLE_LAUNCH:
		return "launch calls and latency";
	default:
		return idle_kind_name(c->kind);
	}
}

/* " (90.8% of host-wait: cudaFree_v3020, cudaMalloc_v3020)": the family's share and largest members. */
static const char *family_text(char *buf, size_t buflen, const struct idle_state *s,
			       const struct device_idle *d, enum idle_family family)
{
	int64_t host = d->cause[GAP_HOST_WAIT].ns;
	struct fmt_text pct, m;
	size_t len, shown = 0;

	snprintf(buf, buflen, "%s (%s of host-wait", idle_family_name(family),
		 fmt_percent(&pct, host > 0 ? (double)d->family_ns[family] / (double)host : 0.0));
	for (size_t i = 0; i < s->ncauses && shown < 2; i++) {
		const struct host_cause *c = &s->causes[i];

		if (c->trace_id != d->key.trace_id || c->device != d->key.device || idle_family_of(c->kind, c->detail) != family)
			continue;
		len = strlen(buf);
		snprintf(buf + len, buflen - len, "%s%s", shown ? ", " : ": ", member_text(&m, c));
		shown++;
	}
	len = strlen(buf);
	snprintf(buf + len, buflen - len, ")");
	return buf;
}

/* The largest host cause of a device inside a family, or NULL. */
static const struct host_cause *top_member(const struct idle_state *s, const struct device_idle *d,
					   enum idle_family family)
{
	for (size_t i = 0; i < s->ncauses; i++)
		if (s->causes[i].trace_id == d->key.trace_id && s->causes[i].device == d->key.device &&
		    idle_family_of(s->causes[i].kind, s->causes[i].detail) == family)
			return &s->causes[i];
	return NULL;
}

/* "allocation 33.38 ms (90.8%), launch 2.78 ms (7.6%)": the families of host-wait, largest first. */
static void families_text(char *buf, size_t len, const struct device_idle *d)
{
	int order[IDLE_NFAMILIES], n = 0;
	int64_t host = d->cause[GAP_HOST_WAIT].ns;
	struct fmt_text t1, t2;
	size_t used = 0;

	for (int f = 0; f < IDLE_NFAMILIES; f++) {
		int pos = n++;

		if (d->family_ns[f] <= 0) {
			n--;
			continue;
		}
		while (pos > 0 && d->family_ns[order[pos - 1]] < d->family_ns[f]) {
			order[pos] = order[pos - 1];
			pos--;
		}
		order[pos] = f;
	}
	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++) {
		snprintf(buf + used, len - used, "%s%s %s (%s)", i ? ", " : "",
			 idle_family_name((enum idle_family)order[i]), fmt_duration(&t1, d->family_ns[order[i]]),
			 fmt_percent(&t2, (double)d->family_ns[order[i]] / (double)host));
		used = strlen(buf);
	}
}

/* The fix for host-wait idle time, chosen by the family that holds the most of it. */
static const char *host_fix(enum idle_family family, const struct host_cause *top)
{
	switch (family) {
	case FAMILY_ALLOCATION:
		return "Allocate once, before the loop, and reuse the memory (or let a caching allocator such as "
		       "PyTorch's keep it): cudaMalloc and cudaFree inside the loop hold the host, and cudaFree "
		       "waits for the device. allocation-churn has the calls per iteration and the framework's fix.";
	case FAMILY_MODULE:
		return "Load and compile modules once, before the loop: warm every kernel up front "
		       "(CUDA_MODULE_LOADING=EAGER loads them at start-up) and cache JIT results.";
	case FAMILY_COPY:
		return "Issue copies asynchronously from pinned memory (cudaMemcpyAsync, PyTorch's "
		       "pin_memory=True with non_blocking=True) and prepare the next batch's copy while the GPU "
		       "runs this step.";
	default:
		break;
	}
	if (top && top->kind == IDLE_RANGE)
		return "The host spends the gaps in the NVTX range named above: move that work off the launch "
		       "path (do it for the next step while the GPU runs this one, or in worker threads), or "
		       "make it cheaper.";
	return "The host issues work too late: take CPU work off the launch path (data loading in worker "
	       "threads, precomputation), launch GPU work before doing CPU work, and batch launches with "
	       "CUDA graphs.";
}

/*
 * One gap: its idle time by cause, less the profiler's own work (counted apart, never recoverable),
 * and host-wait by cause and family.
 */
static int on_gap(const struct gap *g, void *arg)
{
	struct idle_state *s = arg;
	struct device_idle *d;
	struct stream_idle *st;
	int64_t len = g->end - g->start, profiler;

	alloc_tally_gap(g, &s->tally);
	if (len <= 0 || len < s->min_gap)
		return 0;
	d = device_get(s, g->trace_id, g->device);
	profiler = gap_profiler_ns(g);
	if (profiler > 0) {
		d->profiler.count++;
		d->profiler.ns += profiler;
		len -= profiler;
	}
	if (len > 0) {
		d->cause[g->cause].count++;
		d->cause[g->cause].ns += len;
		st = stream_get(s, g);
		st->cause[g->cause].count++;
		st->cause[g->cause].ns += len;
	}
	if (g->cause == GAP_SYNC_WAIT)
		add_blocker(s, g);
	else if (g->cause == GAP_HOST_WAIT) {
		for (size_t i = 0; i < g->nparts; i++) {
			if (g->parts[i].kind == IDLE_PROFILER)
				continue;
			add_host_cause(s, g, &g->parts[i]);
			d->family_ns[idle_family_of(g->parts[i].kind, g->parts[i].detail)] += g->parts[i].ns;
		}
	}
	keep_largest(s, d, g);
	return 0;
}

static void on_alloc_call(const struct gap_call *call, void *arg)
{
	struct idle_state *s = arg;

	alloc_tally_call(call, &s->tally);
}

static int compare_streams(const void *pa, const void *pb)
{
	const struct stream_idle *a = pa, *b = pb;
	int64_t ta = a->cause[0].ns + a->cause[1].ns + a->cause[2].ns;
	int64_t tb = b->cause[0].ns + b->cause[1].ns + b->cause[2].ns;

	if (ta != tb)
		return ta > tb ? -1 : 1;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

static int compare_blockers(const void *pa, const void *pb)
{
	const struct blocker_idle *a = pa, *b = pb;

	if (a->total.ns != b->total.ns)
		return a->total.ns > b->total.ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

static const char *op_text(struct fmt_text *t, struct rule_context *ctx, const struct gap *g)
{
	struct fmt_text name;

	switch (g->next_op) {
	case GPU_OP_KERNEL:
		snprintf(t->s, sizeof(t->s), "kernel %s",
			 fmt_kernel_name(&name, ctx->an.trace, g->trace_id, g->next_name_id));
		break;
	case GPU_OP_COPY:
		snprintf(t->s, sizeof(t->s), "a copy (%s, %s)", copy_kind_name(g->copy_kind),
			 fmt_bytes(&name, g->bytes > 0 ? (double)g->bytes : 0));
		break;
	case GPU_OP_SET:
		snprintf(t->s, sizeof(t->s), "a memset (%s)",
			 fmt_bytes(&name, g->bytes > 0 ? (double)g->bytes : 0));
		break;
	}
	return t->s;
}

/* Whether a device's host-wait and sync-wait idle time reaches min_idle_pct of its active time. */
static int qualifies(const struct device_idle *d, const struct gap_device *dev, double min_idle_pct)
{
	int64_t active = gap_device_active(dev);
	int64_t blamed = d->cause[GAP_HOST_WAIT].ns + d->cause[GAP_SYNC_WAIT].ns;

	return active > 0 && blamed > 0 && (double)blamed * 100.0 >= min_idle_pct * (double)active;
}

/* The device's finding: its idle time by cause, the family most host-wait is in, and the fix. */
static struct finding *device_finding(const struct rule *rule, struct rule_context *ctx,
				      struct idle_state *s, const struct device_idle *d,
				      const struct gap_device *dev, const struct span_clock *clock)
{
	int64_t active = gap_device_active(dev);
	int64_t host = d->cause[GAP_HOST_WAIT].ns, sync = d->cause[GAP_SYNC_WAIT].ns;
	int64_t idle = host + sync + d->cause[GAP_OTHER].ns + d->profiler.ns;
	struct fmt_text t1, t2, t3, t4, t5, t6, t7;
	const char *fix;
	struct finding *f;
	enum idle_family family = top_family(d);
	int64_t claimed = d->claimed_ns;
	int have_family = host > 0 && d->family_ns[family] > 0;
	char headline[FMT_NAME_MAX * 3];

	if (sync >= host)
		fix = "Let the host queue work ahead: remove synchronizations between launches "
		      "(cudaDeviceSynchronize, cudaStreamSynchronize, blocking cudaMemcpy) or move them "
		      "out of the loop, and express dependencies with events and cudaStreamWaitEvent.";
	else
		fix = host_fix(family, top_member(s, d, family));
	/* Sync-wait gaps are drains, claimed by excessive-sync and sync-memcpy; host-wait in allocation
	 * calls is allocation-churn's: each idle ns counts once. */
	f = findings_add(
	    ctx->out, rule, rule_severity(host - claimed, span_clock_span(clock, d->key.trace_id)),
	    host - claimed, fix,
	    "%s idle %s between work (%s of its %s active time): %s sync-wait, %s "
	    "host-wait%s%s%s%s",
	    fmt_device(&t1, ctx->an.trace, d->key.trace_id, d->key.device), fmt_duration(&t2, idle),
	    fmt_percent(&t3, (double)idle / (double)active), fmt_duration(&t4, active),
	    fmt_duration(&t5, sync), fmt_duration(&t6, host), have_family ? ", mostly " : "",
	    have_family ? family_text(headline, sizeof(headline), s, d, family) : "",
	    d->profiler.ns > 0 ? "; the profiler's own work " : "",
	    d->profiler.ns > 0 ? fmt_duration(&t7, d->profiler.ns) : "");
	f->device = (int32_t)d->key.device;
	return f;
}

/* The gaps by cause, the device's active span, host-wait by family and the allocation calls' share. */
static void evidence_totals(struct finding *f, const struct device_idle *d,
			    const struct gap_device *dev, const struct span_clock *clock,
			    double min_gap_us)
{
	int64_t host = d->cause[GAP_HOST_WAIT].ns, sync = d->cause[GAP_SYNC_WAIT].ns;
	int64_t other = d->cause[GAP_OTHER].ns;
	int64_t count = d->cause[0].count + d->cause[1].count + d->cause[2].count;
	char families[FMT_NAME_MAX * 4] = "";
	struct fmt_text t1, t2, t3;

	finding_evidence(f, "%" PRId64 " gap%s of at least %.1f us: host-wait %" PRId64 " (%s), sync-wait %" PRId64
			 " (%s), other %" PRId64 " (%s)",
			 count, plural(count), min_gap_us, d->cause[GAP_HOST_WAIT].count, fmt_duration(&t1, host),
			 d->cause[GAP_SYNC_WAIT].count, fmt_duration(&t2, sync), d->cause[GAP_OTHER].count,
			 fmt_duration(&t3, other));
	finding_evidence(f, "active from %s to %s, busy %s", fmt_at(&t1, clock, dev->first),
			 fmt_at(&t2, clock, dev->last), fmt_duration(&t3, dev->busy));
	if (host > 0)
		families_text(families, sizeof(families), d);
	if (families[0])
		finding_evidence(f, "host-wait by family: %s", families);
	if (d->claimed_ns > 0)
		finding_evidence(f, "%s of the host-wait is the allocation calls' (counted by allocation-churn and "
				 "host-pinning-in-loop, not here)", fmt_duration(&t1, d->claimed_ns));
	if (d->profiler.ns > 0)
		finding_evidence(f, "the profiler's own work: %s in %" PRId64 " gap%s (kernel replay and its setup "
				 "under --metrics, the profiler's overhead records), left out of the causes and "
				 "of the recoverable time", fmt_duration(&t1, d->profiler.ns), d->profiler.count,
				 plural(d->profiler.count));
}

/* The device's largest host-wait causes (4), streams (4) and blocking calls (3). */
static void evidence_tops(struct finding *f, const struct idle_state *s, const struct device_idle *d)
{
	int64_t host = d->cause[GAP_HOST_WAIT].ns;
	struct fmt_text t1, t2, t3;
	size_t shown = 0;

	for (size_t i = 0; i < s->ncauses && shown < 4; i++) {
		const struct host_cause *c = &s->causes[i];

		if (c->trace_id != d->key.trace_id || c->device != d->key.device)
			continue;
		finding_evidence(f, "host-wait: %s %s (%s)", cause_text(&t1, c), fmt_duration(&t2, c->ns),
				 fmt_percent(&t3, host > 0 ? (double)c->ns / (double)host : 0.0));
		shown++;
	}
	shown = 0;
	for (size_t i = 0; i < s->nstreams && shown < 4; i++) {
		const struct stream_idle *st = &s->streams[i];

		if (st->trace_id != d->key.trace_id || st->device != d->key.device)
			continue;
		finding_evidence(f,
				 "stream %" PRId64 ": %" PRId64 " gap%s before its work, host-wait %s, sync-wait %s, other %s",
				 st->stream, st->cause[0].count + st->cause[1].count + st->cause[2].count,
				 plural(st->cause[0].count + st->cause[1].count + st->cause[2].count),
				 fmt_duration(&t1, st->cause[GAP_HOST_WAIT].ns),
				 fmt_duration(&t2, st->cause[GAP_SYNC_WAIT].ns),
				 fmt_duration(&t3, st->cause[GAP_OTHER].ns));
		shown++;
	}
	shown = 0;
	for (size_t i = 0; i < s->nblockers && shown < 3; i++) {
		const struct blocker_idle *b = &s->blockers[i];

		if (b->trace_id != d->key.trace_id || b->device != d->key.device)
			continue;
		finding_evidence(f, "sync-wait after %s: %" PRId64 " gap%s, %s", fmt_name(&t1, b->name),
				 b->total.count, plural(b->total.count), fmt_duration(&t2, b->total.ns));
		shown++;
	}
}

/* The device's largest gaps, the first one the finding's time range. */
static void evidence_largest(struct finding *f, struct rule_context *ctx,
			     const struct device_idle *d, const struct span_clock *clock)
{
	struct fmt_text t1, t2, t3, t4, t5;

	for (size_t i = 0; i < d->nlargest; i++) {
		const struct gap *g = &d->largest[i];

		if (i == 0) {
			f->start = g->start;
			f->end = g->end;
		}
		if (g->cause == GAP_SYNC_WAIT)
			finding_evidence(f, "gap of %s from %s to %s before %s on stream %" PRId64
					 ", sync-wait in %s",
					 fmt_duration(&t1, g->end - g->start), fmt_at(&t2, clock, g->start),
					 fmt_at(&t3, clock, g->end), op_text(&t4, ctx, g), g->stream,
					 fmt_name(&t5, d->largest_blocker[i]));
		else
			finding_evidence(f, "gap of %s from %s to %s before %s on stream %" PRId64 ", %s",
					 fmt_duration(&t1, g->end - g->start), fmt_at(&t2, clock, g->start),
					 fmt_at(&t3, clock, g->end), op_text(&t4, ctx, g), g->stream,
					 (g->api_class & API_REPLAYED) ? "its launch replayed for --metrics"
								       : gap_cause_name(g->cause));
	}
}

static void report_device(const struct rule *rule, struct rule_context *ctx, struct idle_state *s,
			  const struct device_idle *d, const struct gap_device *dev,
			  const struct span_clock *clock, double min_gap_us)
{
	struct finding *f = device_finding(rule, ctx, s, d, dev, clock);

	evidence_totals(f, d, dev, clock, min_gap_us);
	evidence_tops(f, s, d);
	evidence_largest(f, ctx, d, clock);
}

static int idle_gaps_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
			   void **state, char *err, size_t errlen)
{
	struct idle_state *s = xcalloc(1, sizeof(*s));

	s->tally.ctx = ctx;
	s->tally.pinning = -1;
	(void)err;
	(void)errlen;
	s->max_gaps = (size_t)rule_param(ctx, rule, "max_gaps");
	*visitor = (struct gap_visitor){
		.min_gap = (int64_t)(rule_param(ctx, rule, "min_gap_us") * 1e3), .attribute = 1, .fn = on_gap, .arg = s,
		.calls = API_ALLOC, .on_call = on_alloc_call,
	};
	/* A zero-length gap is not idle time; every operation still goes to the tally (alloc-tally.h). */
	s->min_gap = visitor->min_gap < 1 ? 1 : visitor->min_gap;
	s->tally.min_gap = s->min_gap;
	visitor->min_gap = 0;
	*state = s;
	return 0;
}

static int idle_gaps_finish(const struct rule *rule, struct rule_context *ctx, void *state,
			    const struct gap_walk *walk, char *err, size_t errlen)
{
	double min_gap_us = rule_param(ctx, rule, "min_gap_us");
	double min_idle_pct = rule_param(ctx, rule, "min_idle_pct");
	struct idle_state *s = state;
	struct span_clock clock = {0};
	int ret = 0;

	if (!walk)
		goto out;
	if (s->nstreams > 1)
		qsort(s->streams, s->nstreams, sizeof(*s->streams), compare_streams);
	if (s->nblockers > 1)
		qsort(s->blockers, s->nblockers, sizeof(*s->blockers), compare_blockers);
	if (s->ncauses > 1)
		qsort(s->causes, s->ncauses, sizeof(*s->causes), compare_causes);
	for (size_t i = 0; i < s->ndevices; i++)
		s->devices[i].claimed_ns = alloc_tally_device_claim(&s->tally, s->devices[i].key.trace_id,
								    s->devices[i].key.device);
	for (size_t i = 0; i < walk->ndevices; i++) {
		const struct gap_device *dev = &walk->devices[i];
		const struct device_idle *d = rule_device_find(&s->device_index, dev->trace_id,
							       dev->device, s->devices, sizeof(*s->devices));

		if (!d || !qualifies(d, dev, min_idle_pct))
			continue;
		ret = span_clock_once(&clock, &ctx->an, err, errlen);
		if (ret < 0)
			goto out;
		report_device(rule, ctx, s, d, dev, &clock, min_gap_us);
	}
out:
	span_clock_release(&clock);
	for (size_t i = 0; i < s->ndevices; i++) {
		for (size_t j = 0; j < s->devices[i].nlargest; j++)
			free(s->devices[i].largest_blocker[j]);
		free(s->devices[i].largest_blocker);
		free(s->devices[i].largest);
	}
	key_index_release(&s->device_index);
	free(s->devices);
	free(s->streams);
	for (size_t i = 0; i < s->nblockers; i++)
		free(s->blockers[i].name);
	free(s->blockers);
	for (size_t i = 0; i < s->ncauses; i++)
		free(s->causes[i].detail);
	free(s->causes);
	alloc_tally_release(&s->tally);
	free(s);
	return ret;
}

const struct rule rule_idle_gaps = {
	.id = "idle-gaps",
	.title = "GPU idle between work",
	.measures = "time each device sits idle between operations, split into host-wait (the host "
		    "issued the next operation late), sync-wait (the host was blocked in a synchronizing "
		    "call when the device ran dry) and other",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = idle_gaps_begin,
	.finish = idle_gaps_finish,
};
