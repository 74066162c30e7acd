/*
 * Helpers shared by the rule files (see rule-util.h).
 */
#include "rules/rule-util.h"
#include "analyzer/loader/events.h"
#include "rules/phases.h"

#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rule_prepare(const struct rule *rule, struct rule_context *ctx, const char *sql,
		 sqlite3_stmt **stmt, char *err, size_t errlen)
{
	sqlite3 *db = trace_db(ctx->trace);

	if (sqlite3_prepare_v2(db, sql, -1, stmt, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "rule %s: cannot query the trace: %s", rule->id, sqlite3_errmsg(db));
		*stmt = NULL;
		return -EIO;
	}
	return 0;
}

int rule_step_error(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen)
{
	snprintf(err, errlen, "rule %s: cannot read the trace: %s", rule->id,
		 sqlite3_errmsg(trace_db(ctx->trace)));
	return -EIO;
}

int rule_query(const struct rule *rule, struct rule_context *ctx, const char *sql, rule_row_fn *row,
	       void *arg, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int ret = rule_prepare(rule, ctx, sql, &st, err, errlen);
	int rc;

	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		row(st, arg);
	if (rc != SQLITE_DONE)
		ret = rule_step_error(rule, ctx, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

const char *rule_column_text(sqlite3_stmt *stmt, int col)
{
	const unsigned char *s = sqlite3_column_text(stmt, col);

	return s ? (const char *)s : "";
}

int rule_clock_init(struct rule_clock *clock, const struct rule *rule, struct rule_context *ctx,
		    char *err, size_t errlen)
{
	int ret = 0;

	memset(clock, 0, sizeof(*clock));
	clock->ntraces = trace_count(ctx->trace);
	clock->span_start = xcalloc(clock->ntraces ? clock->ntraces : 1, sizeof(int64_t));
	clock->span_end = xcalloc(clock->ntraces ? clock->ntraces : 1, sizeof(int64_t));
	clock->origin = INT64_MAX;
	for (size_t id = 0; id < clock->ntraces; id++) {
		char why[256];

		/* The loader remembers spans per scope: the rules of one report share one scan. */
		ret = trace_span(ctx->trace, id, &clock->span_start[id], &clock->span_end[id], why, sizeof(why));
		if (ret < 0) {
			snprintf(err, errlen, "rule %s: %s", rule->id, why);
			break;
		}
		if (ret && clock->span_start[id] < clock->origin)
			clock->origin = clock->span_start[id];
		ret = 0;
	}
	if (clock->origin == INT64_MAX)
		clock->origin = 0;
	if (ctx->origin)
		clock->origin = ctx->origin;
	if (ret == 0)
		return 0;
	rule_clock_release(clock);
	return ret;
}

int rule_clock_once(struct rule_clock *clock, const struct rule *rule, struct rule_context *ctx,
		    char *err, size_t errlen)
{
	if (clock->span_start)
		return 0;
	return rule_clock_init(clock, rule, ctx, err, errlen);
}

void rule_clock_release(struct rule_clock *clock)
{
	free(clock->span_start);
	free(clock->span_end);
	memset(clock, 0, sizeof(*clock));
}

int64_t rule_clock_span(const struct rule_clock *clock, int64_t trace_id)
{
	if (trace_id < 0 || (size_t)trace_id >= clock->ntraces)
		return 0;
	return clock->span_end[trace_id] - clock->span_start[trace_id];
}

int64_t rule_clock_total_span(const struct rule_clock *clock)
{
	int64_t span = 0;

	for (size_t t = 0; t < clock->ntraces; t++)
		span += rule_clock_span(clock, (int64_t)t);
	return span;
}

int rule_report_each(const struct rule *rule, struct rule_context *ctx, void *state,
		     const void *records, size_t n, size_t size, rule_wanted_fn *wanted,
		     rule_report_fn *report, char *err, size_t errlen)
{
	struct rule_clock clock = { 0 };
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		const void *record = (const char *)records + i * size;

		if (!wanted(rule, ctx, record))
			continue;
		ret = rule_clock_once(&clock, rule, ctx, err, errlen);
		if (ret < 0)
			break;
		report(rule, ctx, state, record, &clock);
	}
	rule_clock_release(&clock);
	return ret;
}

enum finding_severity rule_severity(int64_t recoverable_ns, int64_t span_ns)
{
	if (span_ns <= 0)
		return SEVERITY_INFO;
	/* compared as shares of the span: recoverable * 20 overflows for saturated totals */
	if (recoverable_ns >= span_ns / 5 + (span_ns % 5 != 0))
		return SEVERITY_CRITICAL;
	if (recoverable_ns >= span_ns / 20 + (span_ns % 20 != 0))
		return SEVERITY_WARNING;
	return SEVERITY_INFO;
}

const char *fmt_duration(struct rule_text *t, int64_t ns)
{
	double v = (double)ns;

	if (ns < 0)
		v = -v;
	if (v < 1e3)
		snprintf(t->s, sizeof(t->s), "%" PRId64 " ns", ns);
	else if (v < 1e6)
		snprintf(t->s, sizeof(t->s), "%.1f us", (double)ns / 1e3);
	else if (v < 1e9)
		snprintf(t->s, sizeof(t->s), "%.2f ms", (double)ns / 1e6);
	else
		snprintf(t->s, sizeof(t->s), "%.3f s", (double)ns / 1e9);
	return t->s;
}

const char *fmt_bytes(struct rule_text *t, double bytes)
{
	/* Decimal units, as bandwidths are quoted in GB/s. */
	if (bytes < 1e3)
		snprintf(t->s, sizeof(t->s), "%.0f B", bytes);
	else if (bytes < 1e6)
		snprintf(t->s, sizeof(t->s), "%.1f KB", bytes / 1e3);
	else if (bytes < 1e9)
		snprintf(t->s, sizeof(t->s), "%.1f MB", bytes / 1e6);
	else
		snprintf(t->s, sizeof(t->s), "%.2f GB", bytes / 1e9);
	return t->s;
}

const char *fmt_at(struct rule_text *t, const struct rule_clock *clock, int64_t ns)
{
	/* An event before the origin (a Kineto trace's first CPU op) reads "-0.265 ms", not "+-0.265". */
	snprintf(t->s, sizeof(t->s), "%s%.3f ms", ns < clock->origin ? "-" : "+",
		 (double)(ns < clock->origin ? clock->origin - ns : ns - clock->origin) / 1e6);
	return t->s;
}

const char *fmt_name(struct rule_text *t, const char *name)
{
	/* Templated kernels differ in the middle or at the end ("...(instance 12)]>(Range1d, T1)"),
	 * so a long name keeps its head and its tail. */
	size_t len = strlen(name), head = RULE_NAME_MAX * 2 / 3, tail = RULE_NAME_MAX - head - 3;

	if (len <= RULE_NAME_MAX)
		snprintf(t->s, sizeof(t->s), "%s", name);
	else
		snprintf(t->s, sizeof(t->s), "%.*s...%s", (int)head, name, name + len - tail);
	return t->s;
}

const char *fmt_percent(struct rule_text *t, double fraction)
{
	snprintf(t->s, sizeof(t->s), "%.1f%%", 100.0 * fraction);
	return t->s;
}

const char *fmt_device(struct rule_text *t, struct rule_context *ctx, int64_t trace_id,
		       int64_t device)
{
	if (trace_count(ctx->trace) > 1)
		snprintf(t->s, sizeof(t->s), "trace %" PRId64 " device %" PRId64, trace_id, device);
	else
		snprintf(t->s, sizeof(t->s), "device %" PRId64, device);
	return t->s;
}

const char *rule_kernel_name(struct rule_text *t, struct rule_context *ctx, int64_t trace_id,
			     int64_t name_id)
{
	/* Rules carry nameIds through their passes and resolve only the few names they print; a
	 * kernel's nameId is the StringIds id of its name. */
	const char *name;
	char err[256];

	snprintf(t->s, sizeof(t->s), "?");
	if (trace_string(ctx->trace, trace_id, name_id, &name, err, sizeof(err)) == 0 && name)
		fmt_name(t, name);
	return t->s;
}

enum kernel_owner rule_kernel_owner(struct rule_context *ctx, int64_t trace_id, int64_t name_id)
{
	const char *name = NULL;
	char err[256];

	if (trace_string(ctx->trace, trace_id, name_id, &name, err, sizeof(err)) < 0)
		name = NULL;
	return kernel_owner(name);
}

void owner_weights_add(struct owner_weights *w, enum kernel_owner owner, double weight)
{
	if ((unsigned)owner < NR_KERNEL_OWNERS) {
		w->weight[owner] += weight;
		w->seen |= 1u << owner;
	}
}

enum kernel_owner owner_weights_top(const struct owner_weights *w)
{
	enum kernel_owner top = OWNER_PROGRAM;

	for (int i = 1; i < NR_KERNEL_OWNERS; i++)
		if (w->weight[i] > w->weight[top])
			top = (enum kernel_owner)i;
	return top;
}

const char *owner_fix(const struct owner_weights *w, enum fix_topic topic, const char *own_fix)
{
	const char *fix = kernel_owner_fix(owner_weights_top(w), topic);

	return fix ? fix : own_fix;
}

void owner_evidence(struct finding *f, const struct owner_weights *w, const char *what)
{
	char line[512];
	double total = 0;
	size_t n = 0;
	int len;

	for (int i = 0; i < NR_KERNEL_OWNERS; i++)
		total += w->weight[i];
	/* Only the program's own kernels: the fix already says so; nothing to add. */
	if (total <= 0 || w->weight[OWNER_PROGRAM] >= 0.995 * total)
		return;
	len = snprintf(line, sizeof(line), "whose kernels (by %s):", what);
	for (int i = 0; i < NR_KERNEL_OWNERS && len > 0 && (size_t)len < sizeof(line); i++) {
		if (w->weight[i] < 0.005 * total)	/* under 0.5%: not worth a word */
			continue;
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%s %s %.0f%%", n++ ? "," : "",
				kernel_owner_name((enum kernel_owner)i), 100.0 * w->weight[i] / total);
	}
	finding_evidence(f, "%s", line);
}


struct dur_bucket {
	int64_t id;
	int64_t count;
	double sum;
	int64_t min, max;
};

static int64_t bucket_of(int64_t ns)
{
	int e;

	if (ns < 256)
		return ns < 0 ? 0 : ns;
	e = 63 - __builtin_clzll((unsigned long long)ns);
	return 256 + (int64_t)(e - 8) * 128 + ((ns >> (e - 7)) & 127);
}

static int compare_buckets(const void *pa, const void *pb)
{
	const struct dur_bucket *a = pa, *b = pb;

	return (a->id > b->id) - (a->id < b->id);
}

/* Sort the buckets added since the last time into place (queries read them in order). */
static void dur_hist_settle(struct dur_hist *hist)
{
	if (hist->sorted == hist->n)
		return;
	qsort(hist->buckets, hist->n, sizeof(*hist->buckets), compare_buckets);
	hist->sorted = hist->n;
	if (hist->recent)
		memset(hist->recent, 0, DUR_HIST_RECENT * sizeof(*hist->recent));	/* positions moved */
}

void dur_hist_add(struct dur_hist *hist, int64_t ns)
{
	int64_t id = bucket_of(ns);
	size_t lo = 0, hi = hist->sorted, slot = (size_t)id & (DUR_HIST_RECENT - 1), at = SIZE_MAX;

	/* many buckets (a call's durations spread wide): remember where each id was found; a few (one
	 * kernel's jitter): the search is short enough */
	if (!hist->recent && hist->n >= DUR_HIST_UNSORTED)
		hist->recent = xcalloc(DUR_HIST_RECENT, sizeof(*hist->recent));
	if (hist->recent && hist->recent[slot] && hist->buckets[hist->recent[slot] - 1].id == id)
		at = hist->recent[slot] - 1;
	/* else the sorted buckets, then the few added since they were sorted */
	while (at == SIZE_MAX && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hist->buckets[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at == SIZE_MAX && lo < hist->sorted && hist->buckets[lo].id == id)
		at = lo;
	for (size_t i = hist->sorted; at == SIZE_MAX && i < hist->n; i++)
		if (hist->buckets[i].id == id)
			at = i;
	if (at == SIZE_MAX) {
		/* a new bucket goes at the end (no shifting the others); sorted DUR_HIST_UNSORTED at a time */
		if (hist->n - hist->sorted >= DUR_HIST_UNSORTED)
			dur_hist_settle(hist);
		if (hist->n == hist->cap) {
			hist->cap = hist->cap ? 2 * hist->cap : 8;
			hist->buckets = xrealloc(hist->buckets, hist->cap * sizeof(*hist->buckets));
		}
		at = hist->n++;
		hist->buckets[at] = (struct dur_bucket){ id, 0, 0, ns, ns };
	}
	if (ns < hist->buckets[at].min)
		hist->buckets[at].min = ns;
	if (ns > hist->buckets[at].max)
		hist->buckets[at].max = ns;
	hist->buckets[at].count++;
	hist->buckets[at].sum += (double)ns;
	hist->count++;
	hist->sum += (double)ns;
	if (hist->recent)
		hist->recent[slot] = (uint32_t)at + 1;
}

/*
 * The (estimated) value at rank pos, 0-based, in sorted order: within its bucket, interpolated
 * between the bucket's smallest and largest value - exact when they are equal, and close for the
 * evenly spread values of one kernel's jitter.
 */
static double value_at(const struct dur_hist *hist, int64_t pos)
{
	for (size_t i = 0; i < hist->n; i++) {
		const struct dur_bucket *b = &hist->buckets[i];

		if (pos < b->count)
			return b->count == 1 ? (double)b->min :
			       (double)b->min + (double)(b->max - b->min) * (double)pos /
							(double)(b->count - 1);
		pos -= b->count;
	}
	return 0;
}

int64_t dur_hist_min(const struct dur_hist *hist)
{
	int64_t min = 0;

	for (size_t i = 0; i < hist->n; i++)
		if (!i || hist->buckets[i].min < min)
			min = hist->buckets[i].min;
	return min;
}

double dur_hist_median(struct dur_hist *hist)
{
	dur_hist_settle(hist);
	if (!hist->count)
		return 0;
	if (hist->count % 2)
		return value_at(hist, hist->count / 2);
	return (value_at(hist, hist->count / 2 - 1) + value_at(hist, hist->count / 2)) / 2;
}

double dur_hist_sum_capped(struct dur_hist *hist, double cap)
{
	double total = 0;

	dur_hist_settle(hist);
	for (size_t i = 0; i < hist->n; i++) {
		double mean = hist->buckets[i].sum / (double)hist->buckets[i].count;

		total += mean < cap ? hist->buckets[i].sum : cap * (double)hist->buckets[i].count;
	}
	return total;
}

void dur_hist_release(struct dur_hist *hist)
{
	free(hist->buckets);
	free(hist->recent);
	memset(hist, 0, sizeof(*hist));
}

const char *copy_kind_name(int kind)
{
	static const char *const names[] = {
		[1] = "HtoD", [2] = "DtoH", [3] = "HtoA", [4] = "AtoH", [5] = "AtoA", [6] = "AtoD",
		[7] = "DtoA", [8] = "DtoD", [9] = "HtoH", [10] = "PtoP", [11] = "UVM HtoD",
		[12] = "UVM DtoH", [13] = "UVM DtoD",
	};

	if (kind > 0 && (size_t)kind < sizeof(names) / sizeof(names[0]))
		return names[kind];
	return "copy";
}

int64_t rule_steady_iterations(const struct rule_context *ctx, int64_t trace_id)
{
	if (!ctx->steady)
		return 0;
	for (size_t i = 0; i < ctx->steady->ntraces; i++) {
		const struct trace_phases *tp = &ctx->steady->traces[i];

		if (tp->trace_id == trace_id)
			return (int64_t)(tp->niterations - tp->first_steady);
	}
	return 0;
}

size_t rule_slot(struct key_index *index, const int64_t *key, void *items, size_t *count, size_t size,
		 int *created)
{
	size_t i = key_index_get(index, key, created);
	char *array;

	if (!*created)
		return i;
	/* items points to the caller's typed pointer: copied, not cast, to stay clear of aliasing */
	memcpy(&array, items, sizeof(array));
	array = xrealloc(array, (i + 1) * size);
	memset(array + i * size, 0, size);
	memcpy(items, &array, sizeof(array));
	*count = i + 1;
	return i;
}

void *rule_device_get(struct key_index *index, int64_t trace_id, int64_t device, void *items,
		      size_t *count, size_t size, int *created)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, device };
	int added;
	size_t i = rule_slot(index, key, items, count, size, &added);
	char *array;
	struct rule_device *d;

	memcpy(&array, items, sizeof(array));
	d = (struct rule_device *)(array + i * size);
	if (added)
		*d = (struct rule_device){ trace_id, device };
	if (created)
		*created = added;
	return d;
}

void *rule_device_find(const struct key_index *index, int64_t trace_id, int64_t device,
		       const void *items, size_t size)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, device };
	size_t i = key_index_find(index, key);

	return i == SIZE_MAX ? NULL : (char *)items + i * size;
}
