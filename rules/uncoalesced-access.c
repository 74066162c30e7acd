/*
 * uncoalesced-access: kernels whose global loads or stores touch more 32-byte sectors per request
 * than their access width needs, from hardware counters (the kernel_metrics view, filled by
 * `gpt-trace run --metrics`). A warp reading 32 consecutive floats needs 4 sectors per request; a
 * stride-33 gather needs 32 (Nsight Compute reports exactly these on the H200). Loads and stores
 * are judged separately: a transpose reads coalesced and writes strided.
 *
 * The ideal is the trace's gldSectorsIdeal/gstSectorsIdeal where every measured launch has it, else
 * assumed_sectors sectors per request: 16 by default, what a warp's coalesced 128-bit accesses need,
 * so that without the ideal only what no access width explains is flagged. (A 4, for 32-bit
 * accesses, flagged every vectorized kernel of a PyTorch resnet18 - ATen's float4 element-wise
 * kernels, cuDNN's convolutions, at 16 sectors per request - where the SASS counters that give the
 * ideal are off; the evidence says which ideal was used.)
 * A direction is flagged when its excess sectors reach min_excess_pct of its sectors.
 *
 * Recoverable time: excess share x kernel time, i.e. the kernel's total time (all launches, not only
 * the measured ones) times the flagged excess sectors over all its global sectors - the time the
 * memory system spends on sectors nobody asked for, assuming the kernel is bound by them.
 *
 * Counters describe the kernel, wherever its measured launches ran: `--metrics=first=N` measures a
 * kernel's first launches, which in a training loop fall in the warm-up, outside the steady state
 * the report judges. So the measured launches are read over the whole trace (gpt_all_kernels gives
 * their kernel), and the time they are applied to is the scope's (the kernels view): a kernel
 * measured only outside the scope, and never launched inside it, is not reported.
 *
 * Where a source_metrics view gives per-line counts (kernels built with -lineinfo), the finding names
 * the three source lines with the most excess sectors.
 *
 * Without the view (or with no rows in it) the rule makes no guess: one INFO finding says the check
 * needs `gpt-trace run --metrics`.
 */
#include "rules/rule-util.h"

#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_excess_pct", 20, "%",
	  "flag loads or stores when sectors beyond the ideal reach this share of their sectors" },
	{ "assumed_sectors", 16, "sectors/request",
	  "ideal sectors per request when the trace has no ideal counts (16 = 128-bit accesses, the widest)" },
	{ "max_kernels", 10, "count", "kernels reported at most, largest recoverable time first" },
};

static const char metrics_sql[] =
	"SELECT m.traceId, k.deviceId, k.nameId, COUNT(*),"
	" SUM(m.gldSectors), SUM(m.gldRequests), SUM(m.gldSectorsIdeal), COUNT(m.gldSectorsIdeal),"
	" SUM(m.gstSectors), SUM(m.gstRequests), SUM(m.gstSectorsIdeal), COUNT(m.gstSectorsIdeal)"
	" FROM kernel_metrics AS m JOIN gpt_all_kernels AS k ON k.traceId = m.traceId"
	"  AND k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
	" GROUP BY m.traceId, k.deviceId, k.nameId ORDER BY m.traceId, k.deviceId, k.nameId";
/* Unsorted: each launch is added to its kernel's total here. */
static const char times_sql[] = "SELECT traceId, deviceId, nameId, dur FROM kernels";

enum { LOADS, STORES, NDIRS };

struct access {
	double sectors, requests, ideal;
	int measured_ideal;	/* ideal from the trace, not assumed */
	int flagged;
	double excess;		/* sectors beyond the ideal; 0 if not flagged */
};

struct kernel_access {
	int64_t key[3];		/* traceId, deviceId, nameId */
	int64_t measured;	/* launches with metrics */
	int64_t launches, ns;	/* all launches */
	struct access dir[NDIRS];
	double recoverable;
};

static int compare_recoverable(const void *pa, const void *pb)
{
	const struct kernel_access *a = pa, *b = pb;

	if (a->recoverable != b->recoverable)
		return a->recoverable > b->recoverable ? -1 : 1;
	for (int i = 0; i < 3; i++)
		if (a->key[i] != b->key[i])
			return a->key[i] < b->key[i] ? -1 : 1;
	return 0;
}

static int compare_key(const void *pa, const void *pb)
{
	const int64_t *a = pa;
	const struct kernel_access *b = pb;

	for (int i = 0; i < 3; i++)
		if (a[i] != b->key[i])
			return a[i] < b->key[i] ? -1 : 1;
	return 0;
}

static void no_metrics(const struct rule *rule, struct rule_context *ctx, const char *why)
{
	struct finding *f;

	f = findings_add(ctx->out, rule, SEVERITY_INFO, 0,
			 "Record with `gpt-trace run --metrics -- PROGRAM` to collect global load and store "
			 "sectors and requests per kernel; this check reads them.",
			 "uncoalesced global access not checked: no hardware metrics to read (needs "
			 "gpt-trace run --metrics)");
	finding_evidence(f, "%s", why);
}

/*
 * Only to word the INFO finding right: whether the first file holds the raw table that the
 * kernel_metrics view would read. Everything else goes through the views.
 */
static int has_metrics_table(sqlite3 *db)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table'"
			       " AND name = 'GPT_KERNEL_METRICS'", -1, &st, NULL) != SQLITE_OK)
		return 0;
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static void judge(struct access *a, double min_excess, double assumed)
{
	if (!a->measured_ideal) {
		a->ideal = assumed * a->requests;
		if (a->ideal > a->sectors)	/* narrower accesses than assumed: nothing wasted */
			a->ideal = a->sectors;
	}
	a->flagged = a->sectors > 0 && a->sectors - a->ideal >= min_excess * a->sectors;
	a->excess = a->flagged ? a->sectors - a->ideal : 0;
}

static void access_evidence(struct finding *f, const char *what, const struct access *a,
			    double min_excess_pct)
{
	if (a->requests <= 0) {
		finding_evidence(f, "%s: no global %s measured", what, what);
		return;
	}
	finding_evidence(f, "%s: %.0f sectors / %.0f requests = %.2f sectors per request; ideal %.2f (%s); "
			 "excess %.1f%% of the sectors (%s at %.0f%%)",
			 what, a->sectors, a->requests, a->sectors / a->requests, a->ideal / a->requests,
			 a->measured_ideal ? "from the trace" : "assumed: the trace has no ideal counts",
			 a->sectors > a->ideal ? 100.0 * (a->sectors - a->ideal) / a->sectors : 0.0,
			 a->flagged ? "flagged" : "not flagged", min_excess_pct);
}

/*
 * Source lines with the most excess sectors, where the trace has them: the source_metrics view
 * (traceId plus the columns of GPT_SOURCE_METRICS, filled from the SASS Metrics API for kernels
 * built with -lineinfo), matched on the kernel's short name. Without the view, nothing is added.
 */
static void add_source_lines(struct rule_context *ctx, struct finding *f, const struct kernel_access *k)
{
	static const char sql[] =
		"SELECT file, line, SUM(COALESCE(gldSectors - gldSectorsIdeal, 0)) AS ld,"
		" SUM(COALESCE(gstSectors - gstSectorsIdeal, 0)) AS st FROM source_metrics"
		" WHERE traceId = ?1 AND file IS NOT NULL AND shortName ="
		"  (SELECT shortName FROM kernels WHERE traceId = ?1 AND nameId = ?2 LIMIT 1)"
		" GROUP BY file, line HAVING ld + st > 0 ORDER BY ld + st DESC, file, line LIMIT 3";
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(trace_db(ctx->an.trace), sql, -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, k->key[0]);
	sqlite3_bind_int64(st, 2, k->key[2]);
	while (sqlite3_step(st) == SQLITE_ROW)
		finding_evidence(
		    f, "source %s:%d: %lld excess load sectors, %lld excess store sectors",
		    analysis_column_text(st, 0), sqlite3_column_int(st, 1),
		    (long long)sqlite3_column_int64(st, 2), (long long)sqlite3_column_int64(st, 3));
	sqlite3_finalize(st);
}

static void report_kernel(const struct rule *rule, struct rule_context *ctx,
			  const struct kernel_access *k, int64_t gpu_ns, double min_excess_pct)
{
	const struct access *ld = &k->dir[LOADS], *st = &k->dir[STORES];
	struct fmt_text t1, t2, t3;
	struct finding *f;
	const char *which = ld->flagged && st->flagged ? "loads and stores" : ld->flagged ? "loads" : "stores";
	const struct access *worst = ld->flagged ? ld : st;

	if (ld->flagged && st->flagged && st->sectors * ld->ideal > ld->sectors * st->ideal)
		worst = st;
	enum kernel_owner owner = kernel_owner_of(ctx->an.trace, k->key[0], k->key[2]);
	const char *fix = kernel_owner_fix(owner, FIX_ACCESS);

	f = findings_add(
	    ctx->out, rule, rule_severity((int64_t)k->recoverable, gpu_ns), (int64_t)k->recoverable,
	    fix ? fix
		: "Make each warp touch contiguous addresses: put threadIdx.x on the "
		  "fastest-moving index, use structures of arrays instead of arrays of structures, "
		  "or "
		  "stage strided accesses through shared memory (tiling, as in a transpose).",
	    "%s (%s): uncoalesced global %s, %.1f sectors per request where %.1f would do",
	    fmt_kernel_name(&t1, ctx->an.trace, k->key[0], k->key[2]), kernel_owner_name(owner),
	    which, worst->requests > 0 ? worst->sectors / worst->requests : 0.0,
	    worst->requests > 0 ? worst->ideal / worst->requests : 0.0);
	f->device = (int32_t)k->key[1];
	f->owner = owner;
	/* replayed (docs/what-if.md): the kernel without the time its excess sectors take */
	finding_what_if(f, what_if_fix_new(WHAT_IF_KERNELS, k->key[0], k->key[1], &k->key[2], 1,
					   k->ns > 0 ? 1.0 - k->recoverable / (double)k->ns : 1.0));
	access_evidence(f, "loads", ld, min_excess_pct);
	access_evidence(f, "stores", st, min_excess_pct);
	finding_evidence(
	    f,
	    "%s, %" PRId64 " launch%s (%s in total); counters from %" PRId64 " measured launch%s "
	    "(--metrics measures a kernel's first launches, often in the warm-up)",
	    fmt_device(&t2, ctx->an.trace, k->key[0], k->key[1]), k->launches,
	    plural_es(k->launches), fmt_duration(&t3, k->ns), k->measured, plural_es(k->measured));
	finding_evidence(f, "severity against the trace's kernel time, %s (kernel replay stretches the "
			 "wall clock, so the span would understate it)", fmt_duration(&t2, gpu_ns));
	add_source_lines(ctx, f, k);
}

/*
 * The measured kernels, by (traceId, deviceId, nameId), each direction judged, into *out (*n of
 * them). Without the view, or without rows in it, one INFO finding says so and *n is 0. Returns 0
 * or a negative error.
 */
static int read_kernels(const struct rule *rule, struct rule_context *ctx, double min_excess_pct, double assumed,
			struct kernel_access **out, size_t *n, char *err, size_t errlen)
{
	struct kernel_access *kernels = NULL;
	size_t cap = 0;
	sqlite3 *db = trace_db(ctx->an.trace);
	sqlite3_stmt *st = NULL;
	int ret = 0, rc;

	*n = 0;
	if (sqlite3_prepare_v2(db, metrics_sql, -1, &st, NULL) != SQLITE_OK) {
		/* The view belongs to the metrics feature; a trace recorded without it lacks it. */
		if (strstr(sqlite3_errmsg(db), "no such table")) {
			no_metrics(rule, ctx, has_metrics_table(db) ?
				   "the trace has a GPT_KERNEL_METRICS table, but no kernel_metrics view "
				   "reads it (this gpt-trace build does not load metrics)" :
				   "the trace has no kernel_metrics view: it was recorded without --metrics");
			return 0;
		}
		snprintf(err, errlen, "rule %s: cannot query the trace: %s", rule->id, sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -EIO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct kernel_access *k;

		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			kernels = xrealloc(kernels, cap * sizeof(*kernels));
		}
		k = &kernels[(*n)++];
		memset(k, 0, sizeof(*k));
		for (int i = 0; i < 3; i++)
			k->key[i] = sqlite3_column_int64(st, i);
		k->measured = sqlite3_column_int64(st, 3);
		for (int d = 0; d < NDIRS; d++) {
			struct access *a = &k->dir[d];

			a->sectors = sqlite3_column_double(st, 4 + 4 * d);
			a->requests = sqlite3_column_double(st, 5 + 4 * d);
			a->measured_ideal = sqlite3_column_int64(st, 7 + 4 * d) == k->measured;
			a->ideal = sqlite3_column_double(st, 6 + 4 * d);
			judge(a, min_excess_pct / 100.0, assumed);
		}
	}
	if (rc != SQLITE_DONE)
		ret = analysis_step_error(&ctx->an, err, errlen);
	sqlite3_finalize(st);
	*out = kernels;
	if (!ret && !*n)
		no_metrics(rule, ctx, "the trace's kernel_metrics view has no rows for its kernels");
	return ret;
}

/* Kernel time over all launches, metrics or not: each measured kernel's launches and time, and each
   trace's kernel time (gpu_ns, by traceId). */
static int add_kernel_times(struct rule_context *ctx, struct kernel_access *kernels, size_t n,
			    int64_t *gpu_ns, size_t ntraces, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int ret, rc;

	ret = analysis_prepare(&ctx->an, times_sql, &st, err, errlen);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[3] = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
				   sqlite3_column_int64(st, 2) };
		struct kernel_access *k = bsearch(key, kernels, n, sizeof(*kernels), compare_key);

		if (key[0] >= 0 && (size_t)key[0] < ntraces)
			gpu_ns[key[0]] += sqlite3_column_int64(st, 3);
		if (!k)
			continue;
		k->launches++;
		k->ns += sqlite3_column_int64(st, 3);
	}
	if (rc != SQLITE_DONE)
		ret = analysis_step_error(&ctx->an, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

/* Each kernel's recoverable time (its share of excess sectors), then a finding for each flagged
   kernel, most recoverable first, max_kernels at most. */
static void report_kernels(const struct rule *rule, struct rule_context *ctx, struct kernel_access *kernels,
			   size_t n, const int64_t *gpu_ns, size_t ntraces, double min_excess_pct, size_t max_kernels)
{
	size_t reported = 0;

	for (size_t i = 0; i < n; i++) {
		struct kernel_access *k = &kernels[i];
		double total = k->dir[LOADS].sectors + k->dir[STORES].sectors;

		if (total > 0)
			k->recoverable = (double)k->ns * (k->dir[LOADS].excess + k->dir[STORES].excess) / total;
	}
	qsort(kernels, n, sizeof(*kernels), compare_recoverable);
	for (size_t i = 0; i < n && reported < max_kernels; i++) {
		if (!kernels[i].dir[LOADS].flagged && !kernels[i].dir[STORES].flagged)
			continue;
		if (!kernels[i].launches)	/* measured, but not launched in the scope */
			continue;
		report_kernel(rule, ctx, &kernels[i],
			      (size_t)kernels[i].key[0] < ntraces ? gpu_ns[kernels[i].key[0]] : 0, min_excess_pct);
		reported++;
	}
}

static int uncoalesced_access_run(const struct rule *rule, struct rule_context *ctx, char *err,
				  size_t errlen)
{
	double min_excess_pct = rule_param(ctx, rule, "min_excess_pct");
	double assumed = rule_param(ctx, rule, "assumed_sectors");
	size_t max_kernels = (size_t)rule_param(ctx, rule, "max_kernels");
	struct kernel_access *kernels = NULL;
	size_t n = 0, ntraces = trace_count(ctx->an.trace);
	int64_t *gpu_ns = xcalloc(ntraces + 1, sizeof(*gpu_ns));	/* kernel time by traceId */
	int ret;

	ret = read_kernels(rule, ctx, min_excess_pct, assumed, &kernels, &n, err, errlen);
	if (!ret && n)
		ret = add_kernel_times(ctx, kernels, n, gpu_ns, ntraces, err, errlen);
	if (!ret && n)
		report_kernels(rule, ctx, kernels, n, gpu_ns, ntraces, min_excess_pct, max_kernels);
	free(gpu_ns);
	free(kernels);
	return ret;
}

const struct rule rule_uncoalesced_access = {
	.id = "uncoalesced-access",
	.title = "Uncoalesced global memory access",
	.measures = "global load and store sectors per request against the ideal for the access "
		    "width, from hardware counters (needs gpt-trace run --metrics)",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = uncoalesced_access_run,
};
