/*
 * The groups every stats table is made of (see groups.h): a small hash of groups keyed by up to three
 * integers, each with its count, sum, extremes and running variance, merged into a table's rows by
 * label; the rows' exact medians; and the plumbing the passes share (SQL errors, progress, rows).
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyzer/stats/groups.h"
#include "common/util.h"
#include "analyzer/loader/events.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEY_NULL STATS_KEY_NULL

/* ---- a hash of groups keyed by three integers ---- */

/* The group of key, created when create is set; NULL when absent. */
struct group *group_map_get(struct group_map *m, const int64_t *key, int create)
{
	const int64_t k[KEY_INDEX_WORDS] = { key[0], key[1], key[2] };
	int created;
	size_t i;

	if (!create) {
		i = key_index_find(&m->index, k);
		return i == SIZE_MAX ? NULL : &m->groups[i];
	}
	i = key_index_get(&m->index, k, &created);
	if (created) {
		if (m->count == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 64;
			m->groups = xrealloc(m->groups, m->cap * sizeof(*m->groups));
		}
		memset(&m->groups[i], 0, sizeof(struct group));
		memcpy(m->groups[i].key, key, sizeof(m->groups[i].key));
		m->count++;
	}
	return &m->groups[i];
}

void group_map_release(struct group_map *m)
{
	for (size_t i = 0; i < m->count; i++)
		value_counts_free(m->groups[i].values);
	free(m->groups);
	key_index_release(&m->index);
	memset(m, 0, sizeof(*m));
}

/* The row of table labelled text, created (with a copy of text) when absent; labels holds the
 * table's labels, row i labelled by its string i. */
size_t stats_row_for_label(struct strtab *labels, struct stats_table *table, size_t *cap, const char *text)
{
	int created;
	size_t row = strtab_get(labels, text, &created);

	if (!created)
		return row;
	if (table->count == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		table->rows = xrealloc(table->rows, *cap * sizeof(*table->rows));
	}
	memset(&table->rows[table->count], 0, sizeof(table->rows[0]));
	table->rows[table->count].label = xstrdup(text);
	table->rows[table->count].key[0] = table->rows[table->count].key[1] = -1;
	table->rows[table->count].key[2] = -1;
	return table->count++;
}

/* ---- summaries ---- */

void stats_summary_add(struct stats_summary *s, int64_t dur, int64_t bytes)
{
	double delta;

	if (!s->count || dur < s->min)
		s->min = dur;
	if (!s->count || dur > s->max)
		s->max = dur;
	s->count++;
	s->total = sat_add64(s->total, dur);
	s->bytes = sat_add64(s->bytes, bytes);
	delta = (double)dur - s->mean;
	s->mean += delta / (double)s->count;
	s->m2 += delta * ((double)dur - s->mean);
}

/* Chan et al.'s pairwise combination of two running variances. */
void stats_summary_merge(struct stats_summary *a, const struct stats_summary *b)
{
	double n, delta;

	if (!b->count)
		return;
	if (!a->count) {
		*a = *b;
		return;
	}
	n = (double)(a->count + b->count);
	delta = b->mean - a->mean;
	a->m2 += b->m2 + delta * delta * (double)a->count * (double)b->count / n;
	a->mean += delta * (double)b->count / n;
	a->min = b->min < a->min ? b->min : a->min;
	a->max = b->max > a->max ? b->max : a->max;
	a->count += b->count;
	a->total = sat_add64(a->total, b->total);
	a->bytes = sat_add64(a->bytes, b->bytes);
}

double stats_mean(const struct stats_summary *s)
{
	return s->count ? (double)s->total / (double)s->count : 0.0;
}

double stats_stddev(const struct stats_summary *s)
{
	return s->count > 1 ? sqrt(s->m2 / (double)(s->count - 1)) : 0.0;
}

/* ---- exact medians from counted durations (value-counts.h) ---- */

/* The median of each row of table from its groups' counted durations; the counts are freed. */
void stats_medians_from_counts(struct group_map *map, struct stats_table *table)
{
	size_t *first = xmalloc((table->count + 1) * sizeof(*first)), *order, n = map->count;
	struct value_counts **sets = xmalloc((n ? n : 1) * sizeof(*sets));

	/* the groups by row (a counting sort): row r's are sets[first[r] .. first[r + 1]) */
	memset(first, 0, (table->count + 1) * sizeof(*first));
	for (size_t g = 0; g < n; g++)
		first[map->groups[g].merged + 1]++;
	for (size_t r = 0; r < table->count; r++)
		first[r + 1] += first[r];
	order = xmalloc((table->count + 1) * sizeof(*order));
	memcpy(order, first, (table->count + 1) * sizeof(*order));
	for (size_t g = 0; g < n; g++)
		sets[order[map->groups[g].merged]++] = map->groups[g].values;
	for (size_t r = 0; r < table->count; r++)
		table->rows[r].sum.median = value_counts_median(sets + first[r], first[r + 1] - first[r],
								 table->rows[r].sum.count);
	for (size_t g = 0; g < n; g++) {
		value_counts_free(map->groups[g].values);
		map->groups[g].values = NULL;
	}
	free(order);
	free(first);
	free(sets);
}

/* ---- SQL plumbing ---- */

/*
 * The progress line counts the rows each pass reads, a tick per row (SQLite's progress handler keeps
 * it fresh inside a query that sorts). Totals come from the loader's summaries, and only when the
 * line can show.
 */
int64_t stats_pass_rows(struct stats_pass *p, const char *view)
{
	int64_t n = 0;

	for (size_t t = 0; t < trace_count(p->trace); t++) {
		struct event_summary m;

		if (event_summary_get(p->trace, view, t, &m, p->err, p->errlen) < 0)
			return 0;
		n += m.rows;
	}
	return n;
}

int stats_pass_error(struct stats_pass *p, const char *what)
{
	snprintf(p->err, p->errlen, "cannot compute %s: %s", what, sqlite3_errmsg(trace_db(p->trace)));
	return -EIO;
}

int stats_pass_prepare(struct stats_pass *p, const char *what, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(trace_db(p->trace), sql, -1, st, NULL) != SQLITE_OK)
		return stats_pass_error(p, what);
	return 0;
}

int64_t stats_col_key(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? KEY_NULL : sqlite3_column_int64(st, i);
}

void stats_table_push(struct stats_table *t, size_t *cap, const struct stats_row *row)
{
	if (t->count == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		t->rows = xrealloc(t->rows, *cap * sizeof(*t->rows));
	}
	t->rows[t->count++] = *row;
}

void stats_table_release(struct stats_table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->rows[i].label);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/*
 * The medians' second pass: sql returns (key0, key1, key2, dur) ordered by dur over the rows the
 * groups were made of; the median of each output row (merged groups) is the middle of its values in
 * that order.
 */
int stats_pass_medians(struct stats_pass *p, const char *what, const char *sql, struct group_map *map,
			struct stats_table *table)
{
	struct group_map counters = { 0 };
	sqlite3_stmt *st;
	int rc, ret;

	/* one counter per output row, keyed by its index */
	for (size_t i = 0; i < table->count; i++) {
		int64_t key[3] = { (int64_t)i, 0, 0 };

		group_map_get(&counters, key, 1);
	}
	ret = stats_pass_prepare(p, what, sql, &st);
	if (ret < 0) {
		group_map_release(&counters);
		return ret;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[3] = { stats_col_key(st, 0), stats_col_key(st, 1), stats_col_key(st, 2) };
		struct group *g = group_map_get(map, key, 0), *c;
		struct stats_row *row;
		int64_t n, dur = sqlite3_column_int64(st, 3);

		if (!g || sqlite3_column_type(st, 3) == SQLITE_NULL)
			continue;
		row = &table->rows[g->merged];
		c = &counters.groups[g->merged];
		n = row->sum.count;
		if (c->seen == (n - 1) / 2)
			c->lo = (double)dur;
		if (c->seen == n / 2)
			row->sum.median = (c->lo + (double)dur) / 2;
		c->seen++;
	}
	sqlite3_finalize(st);
	group_map_release(&counters);
	return rc == SQLITE_DONE ? 0 : stats_pass_error(p, what);
}

/*
 * Merge groups keyed (traceId, nameId) into one row per name, so that a kernel seen in several
 * per-process traces is one row.
 */
void stats_merge_by_name(struct stats_pass *p, struct group_map *map, struct stats_table *table)
{
	struct strtab names = { 0 };
	size_t cap = 0;

	for (size_t i = 0; i < map->count; i++) {
		struct group *g = &map->groups[i];
		const char *name = NULL;
		char *label;
		size_t row;

		/* a name that cannot be read is shown by its id, as one that is absent */
		if (g->key[1] != KEY_NULL && trace_string(p->trace, g->key[0], g->key[1], &name, p->err, p->errlen) < 0)
			name = NULL;
		if (name)
			label = xstrdup(name);
		else
			label = g->key[1] == KEY_NULL ? xstrdup("(unnamed)")
						      : xasprintf("(name id %" PRId64 ")", g->key[1]);
		row = stats_row_for_label(&names, table, &cap, label);
		free(label);
		stats_summary_merge(&table->rows[row].sum, &g->sum);
		g->merged = row;
	}
	strtab_release(&names);
}

static int compare_total_desc(const void *pa, const void *pb)
{
	const struct stats_row *a = pa, *b = pb;

	if (a->sum.total != b->sum.total)
		return a->sum.total > b->sum.total ? -1 : 1;
	return strcmp(a->label, b->label);
}

static int compare_index_total_desc(const void *pa, const void *pb, void *arg)
{
	const struct stats_row *rows = arg;

	return compare_total_desc(&rows[*(const size_t *)pa], &rows[*(const size_t *)pb]);
}

/* Sort rows by total time, most first, and re-point the groups of map at their rows. */
void stats_sort_rows(struct stats_table *t, struct group_map *map)
{
	size_t n = t->count ? t->count : 1;
	size_t *order = xmalloc(n * sizeof(*order)), *where = xmalloc(n * sizeof(*where));
	struct stats_row *sorted = xmalloc(n * sizeof(*sorted));

	for (size_t i = 0; i < t->count; i++)
		order[i] = i;
	qsort_r(order, t->count, sizeof(*order), compare_index_total_desc, t->rows);
	for (size_t i = 0; i < t->count; i++) {
		sorted[i] = t->rows[order[i]];
		where[order[i]] = i;
	}
	if (t->count)
		memcpy(t->rows, sorted, t->count * sizeof(*sorted));
	for (size_t g = 0; map && g < map->count; g++)
		map->groups[g].merged = where[map->groups[g].merged];
	free(sorted);
	free(where);
	free(order);
}

