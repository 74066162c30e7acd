/*
 * Helpers shared by the rule files (see rule-util.h).
 */
#include "rules/rule-util.h"

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

const char *rule_column_text(sqlite3_stmt *stmt, int col)
{
	const unsigned char *s = sqlite3_column_text(stmt, col);

	return s ? (const char *)s : "";
}

int rule_clock_init(struct rule_clock *clock, const struct rule *rule, struct rule_context *ctx,
		    char *err, size_t errlen)
{
	static const char sql[] =
		"SELECT traceId, MIN(s), MAX(e) FROM ("
		" SELECT traceId, MIN(start) AS s, MAX(end) AS e FROM kernels GROUP BY traceId"
		" UNION ALL SELECT traceId, MIN(start), MAX(end) FROM copies GROUP BY traceId"
		" UNION ALL SELECT traceId, MIN(start), MAX(end) FROM sets GROUP BY traceId"
		" UNION ALL SELECT traceId, MIN(start), MAX(end) FROM api_calls GROUP BY traceId)"
		" WHERE s IS NOT NULL GROUP BY traceId";
	sqlite3_stmt *st;
	int ret, rc;

	memset(clock, 0, sizeof(*clock));
	clock->ntraces = trace_count(ctx->trace);
	clock->span_start = xcalloc(clock->ntraces ? clock->ntraces : 1, sizeof(int64_t));
	clock->span_end = xcalloc(clock->ntraces ? clock->ntraces : 1, sizeof(int64_t));
	clock->origin = INT64_MAX;
	ret = rule_prepare(rule, ctx, sql, &st, err, errlen);
	if (ret < 0)
		goto out_release;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id < 0 || (size_t)id >= clock->ntraces)
			continue;
		clock->span_start[id] = sqlite3_column_int64(st, 1);
		clock->span_end[id] = sqlite3_column_int64(st, 2);
		if (clock->span_start[id] < clock->origin)
			clock->origin = clock->span_start[id];
	}
	if (rc != SQLITE_DONE)
		ret = rule_step_error(rule, ctx, err, errlen);
	sqlite3_finalize(st);
	if (clock->origin == INT64_MAX)
		clock->origin = 0;
	if (ret == 0)
		return 0;
out_release:
	rule_clock_release(clock);
	return ret;
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

enum finding_severity rule_severity(int64_t recoverable_ns, int64_t span_ns)
{
	if (span_ns <= 0)
		return SEVERITY_INFO;
	if (recoverable_ns * 5 >= span_ns)
		return SEVERITY_CRITICAL;
	if (recoverable_ns * 20 >= span_ns)
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
	snprintf(t->s, sizeof(t->s), "+%.3f ms", (double)(ns - clock->origin) / 1e6);
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
	/* Rules carry nameIds through their passes and resolve only the few names they print. */
	static const char sql[] = "SELECT name FROM kernels WHERE traceId = ?1 AND nameId = ?2 LIMIT 1";
	sqlite3_stmt *st;

	snprintf(t->s, sizeof(t->s), "?");
	if (sqlite3_prepare_v2(trace_db(ctx->trace), sql, -1, &st, NULL) != SQLITE_OK)
		return t->s;
	sqlite3_bind_int64(st, 1, trace_id);
	sqlite3_bind_int64(st, 2, name_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		fmt_name(t, rule_column_text(st, 0));
	sqlite3_finalize(st);
	return t->s;
}

static int compare_keys(const int64_t *a, const int64_t *b, int nkeys)
{
	for (int i = 0; i < nkeys; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

int rule_medians(const struct rule *rule, struct rule_context *ctx, const char *count_sql,
		 const char *values_sql, int nkeys, struct rule_median **out, size_t *nout, char *err,
		 size_t errlen)
{
	struct rule_median *groups = NULL;
	size_t n = 0, cap = 0, g = 0;
	sqlite3_stmt *st = NULL;
	int64_t pos = 0;
	int ret, rc;

	*out = NULL;
	*nout = 0;
	ret = rule_prepare(rule, ctx, count_sql, &st, err, errlen);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			groups = xrealloc(groups, cap * sizeof(*groups));
		}
		memset(&groups[n], 0, sizeof(groups[n]));
		for (int k = 0; k < nkeys; k++)
			groups[n].key[k] = sqlite3_column_int64(st, k);
		groups[n].count = sqlite3_column_int64(st, nkeys);
		n++;
	}
	if (rc != SQLITE_DONE) {
		ret = rule_step_error(rule, ctx, err, errlen);
		goto out_free;
	}
	sqlite3_finalize(st);
	ret = rule_prepare(rule, ctx, values_sql, &st, err, errlen);
	if (ret < 0)
		goto out_free;
	/* Both queries are ordered by the keys: walk the groups alongside the values. */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[RULE_MAX_KEYS] = { 0 };
		double v = sqlite3_column_double(st, nkeys);
		struct rule_median *m;

		for (int k = 0; k < nkeys; k++)
			key[k] = sqlite3_column_int64(st, k);
		while (g < n && compare_keys(groups[g].key, key, nkeys) < 0) {
			g++;
			pos = 0;
		}
		if (g == n || compare_keys(groups[g].key, key, nkeys))
			continue;
		m = &groups[g];
		m->sum += v;
		if (pos == (m->count - 1) / 2)
			m->median = v;
		if (pos == m->count / 2 && m->count % 2 == 0)
			m->median = (m->median + v) / 2;
		pos++;
	}
	if (rc != SQLITE_DONE) {
		ret = rule_step_error(rule, ctx, err, errlen);
		goto out_free;
	}
	sqlite3_finalize(st);
	*out = groups;
	*nout = n;
	return 0;
out_free:
	sqlite3_finalize(st);
	free(groups);
	return ret;
}

const struct rule_median *rule_median_find(const struct rule_median *groups, size_t n, int nkeys,
					   const int64_t *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = compare_keys(groups[mid].key, key, nkeys);

		if (!c)
			return &groups[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
