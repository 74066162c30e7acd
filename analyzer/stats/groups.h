/*
 * What every stats table is made with, private to stats/ (groups.c): rows go through a hash of groups
 * keyed by up to three integers (traceId and nameId, the copy kinds, a stream) that keeps a summary
 * per key; groups that share a label are merged into one row; each row's median comes from its
 * groups' counted durations or from a second pass sorted by duration. And the state the passes share.
 */
#ifndef GPT_STATS_GROUPS_H
#define GPT_STATS_GROUPS_H

#include "analyzer/stats/stats.h"
#include "common/key-index.h"
#include "common/progress.h"
#include "common/strtab.h"
#include "common/value-counts.h"

#include <sqlite3.h>

struct group {
	int64_t key[3];
	struct stats_summary sum;
	int64_t seen;		/* pass two: rows of this group seen so far */
	double lo;		/* pass two: the lower middle value */
	size_t merged;		/* index of the row of the output table this group feeds */
	struct value_counts *values;	/* its distinct durations (counted passes), NULL: none yet */
};

struct group_map {
	struct key_index index;	/* key -> groups[] */
	struct group *groups;	/* dense, in order of first appearance */
	size_t count, cap;
};

/* One computation over a trace: where errors go, and its progress line. */
struct stats_pass {
	struct trace *trace;
	char *err;
	size_t errlen;
	struct progress progress;	/* events read by the passes so far, of all they will read */
};

/* The group of key, created when create is set; NULL when absent. */
struct group *group_map_get(struct group_map *m, const int64_t *key, int create);
void group_map_release(struct group_map *m);

/* The row of table labelled text, created (with a copy of text) when absent; labels holds the
 * table's labels, row i labelled by its string i. */
size_t stats_row_for_label(struct strtab *labels, struct stats_table *table, size_t *cap, const char *text);
void stats_table_push(struct stats_table *t, size_t *cap, const struct stats_row *row);
void stats_table_release(struct stats_table *t);

/* One duration (and its bytes) into a summary; two summaries into one (Chan et al.). */
void stats_summary_add(struct stats_summary *s, int64_t dur, int64_t bytes);
void stats_summary_merge(struct stats_summary *a, const struct stats_summary *b);

/* The median of each row of table from its groups' counted durations; the counts are freed. */
void stats_medians_from_counts(struct group_map *map, struct stats_table *table);
/* The medians' second pass: sql returns (key0, key1, key2, dur) ordered by dur over the rows the
 * groups were made of. 0 or -EIO (p->err set). */
int stats_pass_medians(struct stats_pass *p, const char *what, const char *sql, struct group_map *map,
		       struct stats_table *table);
/* Groups keyed (traceId, nameId) merged into one row per name. */
void stats_merge_by_name(struct stats_pass *p, struct group_map *map, struct stats_table *table);
/* Rows by total time, most first; the groups of map (NULL: none) re-pointed at their rows. */
void stats_sort_rows(struct stats_table *t, struct group_map *map);

/* The rows of a view over every file (for the progress line's total; 0 when unknown). */
int64_t stats_pass_rows(struct stats_pass *p, const char *view);
/* "cannot compute WHAT: <SQLite's message>" into p->err: -EIO. */
int stats_pass_error(struct stats_pass *p, const char *what);
int stats_pass_prepare(struct stats_pass *p, const char *what, const char *sql, sqlite3_stmt **st);
/* Column i as a key: STATS_KEY_NULL for NULL. */
int64_t stats_col_key(sqlite3_stmt *st, int i);

#endif
