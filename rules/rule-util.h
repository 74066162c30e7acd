/*
 * Helpers shared by the rule files (private to rules/): preparing SQL on the trace with errors that
 * name the rule, the trace's clock for evidence text and severity, and human-readable quantities.
 */
#ifndef GPT_RULES_RULE_UTIL_H
#define GPT_RULES_RULE_UTIL_H

#include "rules/owner.h"
#include "rules/rule.h"
#include "common/key-index.h"

#include <sqlite3.h>

/* Longest kernel or API name printed in an evidence line; longer ones lose their middle. */
#define RULE_NAME_MAX 96

int rule_prepare(const struct rule *rule, struct rule_context *ctx, const char *sql,
		 sqlite3_stmt **stmt, char *err, size_t errlen);
/* After sqlite3_step() returned neither SQLITE_ROW nor SQLITE_DONE: fill err, return -EIO. */
int rule_step_error(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen);
/* Run sql on the trace and hand each row to row(); 0, or a negative error with one line in err. */
typedef void rule_row_fn(sqlite3_stmt *row, void *arg);
int rule_query(const struct rule *rule, struct rule_context *ctx, const char *sql, rule_row_fn *row,
	       void *arg, char *err, size_t errlen);
/* sqlite3_column_text() that never returns NULL. */
const char *rule_column_text(sqlite3_stmt *stmt, int col);

/*
 * Durations in a log-linear histogram: exact below 256 ns, then 128 buckets per power of two
 * (0.8% wide), each keeping its count, sum, smallest and largest value. A median read from it is
 * interpolated inside the median's bucket: exact when the values there are equal, within 0.8%
 * otherwise. Memory grows with the
 * number of occupied buckets (a few dozen for one kernel's durations), not with the values.
 */
struct dur_bucket;
#define DUR_HIST_RECENT 4096	/* slots of the recent-bucket table (made past DUR_HIST_UNSORTED buckets) */
#define DUR_HIST_UNSORTED 64	/* new buckets kept unsorted at the end, at most */
struct dur_hist {
	struct dur_bucket *buckets;	/* occupied ones: [0, sorted) by bucket, then newer ones */
	size_t n, cap, sorted;
	uint32_t *recent;		/* DUR_HIST_RECENT slots: the position + 1 of a bucket whose id
					   falls in the slot (0: none), cleared when positions move;
					   NULL while there are few buckets */
	int64_t count;
	double sum;
};
void dur_hist_add(struct dur_hist *hist, int64_t ns);
double dur_hist_median(struct dur_hist *hist);
/* The smallest value added (exact: each bucket keeps its own); 0 when there is none. */
int64_t dur_hist_min(const struct dur_hist *hist);
/* The sum of min(value, cap) over the values (per bucket, from its mean where it straddles cap). */
double dur_hist_sum_capped(struct dur_hist *hist, double cap);
void dur_hist_release(struct dur_hist *hist);

/*
 * Where the trace lies on its clock: the origin (earliest event of all traces, so that evidence
 * prints "+12.345 ms" rather than raw CUPTI timestamps) and each trace's span (first to last GPU
 * operation or API call), against which severity is judged.
 */
struct rule_clock {
	int64_t origin;
	size_t ntraces;
	int64_t *span_start, *span_end;	/* indexed by traceId */
};
int rule_clock_init(struct rule_clock *clock, const struct rule *rule, struct rule_context *ctx,
		    char *err, size_t errlen);
/* rule_clock_init() on the first call (clock zero-initialised), nothing after: for a rule that needs
 * the clock only once a finding qualifies. */
int rule_clock_once(struct rule_clock *clock, const struct rule *rule, struct rule_context *ctx,
		    char *err, size_t errlen);
void rule_clock_release(struct rule_clock *clock);
int64_t rule_clock_span(const struct rule_clock *clock, int64_t trace_id);
/* The sum of every trace's span: for a finding about all traces together. */
int64_t rule_clock_total_span(const struct rule_clock *clock);

/*
 * A rule's findings per record (its devices, say: n of them, size bytes apart): report() for each
 * one that wanted() accepts, with the clock read at the first (rule_clock_once) and released after;
 * state is the rule's, for report(). Returns 0, or a negative error with one line in err.
 */
typedef int rule_wanted_fn(const struct rule *rule, struct rule_context *ctx, const void *record);
typedef void rule_report_fn(const struct rule *rule, struct rule_context *ctx, void *state,
			    const void *record, const struct rule_clock *clock);
int rule_report_each(const struct rule *rule, struct rule_context *ctx, void *state,
		     const void *records, size_t n, size_t size, rule_wanted_fn *wanted,
		     rule_report_fn *report, char *err, size_t errlen);

/*
 * Records kept per key in one growing array (a rule's devices, kernels, streams), dense in the
 * key_index's order of first appearance: the index of key's record. items is the address of the
 * array's pointer, *count its records, size one record's bytes; a new key's record is added zeroed,
 * with *created set.
 */
size_t rule_slot(struct key_index *index, const int64_t *key, void *items, size_t *count, size_t size,
		 int *created);

/*
 * A rule's per-device records, in rule_slot()'s array: each starts with a struct rule_device, and
 * rule_device_get() returns the record of (trace_id, device), a new one zeroed but for its key
 * (with *created set; created may be NULL).
 */
struct rule_device {
	int64_t trace_id, device;
};
void *rule_device_get(struct key_index *index, int64_t trace_id, int64_t device, void *items,
		      size_t *count, size_t size, int *created);
/* The record of (trace_id, device) in items (the array itself), or NULL when it has none. */
void *rule_device_find(const struct key_index *index, int64_t trace_id, int64_t device,
		       const void *items, size_t size);

/* Critical from 20% of the span, warning from 5%, info below. */
enum finding_severity rule_severity(int64_t recoverable_ns, int64_t span_ns);

/* Formatting into a caller's buffer (returned for use inside printf arguments). */
struct rule_text {
	char s[RULE_NAME_MAX + 8];
};
const char *fmt_duration(struct rule_text *t, int64_t ns);	  /* "850 ns", "12.3 us", "4.56 ms" */
const char *fmt_bytes(struct rule_text *t, double bytes);	  /* "512 B", "2.0 KB", "225.1 MB" */
const char *fmt_at(struct rule_text *t, const struct rule_clock *clock, int64_t ns); /* "+1.234 ms" */
const char *fmt_name(struct rule_text *t, const char *name);	  /* at most RULE_NAME_MAX */
const char *fmt_percent(struct rule_text *t, double fraction);	  /* "12.3%" */

/* The (cut) name of kernel name_id of a trace; "?" if the trace has no such kernel. */
const char *rule_kernel_name(struct rule_text *t, struct rule_context *ctx, int64_t trace_id,
			     int64_t name_id);

/* The owner of kernel name_id of a trace (rules/owner.h). */
enum kernel_owner rule_kernel_owner(struct rule_context *ctx, int64_t trace_id, int64_t name_id);

/*
 * Whose kernels a finding is about, weighted by what the rule measures (time, waste): the owner
 * with the most weight picks the fix (owner_fix: the owner's lever, or own_fix for the program's
 * own kernels), and owner_evidence() lists the shares. Zero-initialise.
 */
struct owner_weights {
	double weight[NR_KERNEL_OWNERS];
	unsigned seen;		/* bit per owner added, whatever its weight */
};
void owner_weights_add(struct owner_weights *w, enum kernel_owner owner, double weight);
enum kernel_owner owner_weights_top(const struct owner_weights *w);
const char *owner_fix(const struct owner_weights *w, enum fix_topic topic, const char *own_fix);
void owner_evidence(struct finding *f, const struct owner_weights *w, const char *what);

/* "HtoD", "DtoH"... for an ENUM_CUDA_MEMCPY_OPER value; "copy" for unknown ones. */
const char *copy_kind_name(int kind);

/* Plural endings: "%" PRId64 " launch%s", n, plural_es(n) reads right for any count. */
static inline const char *plural(int64_t n)
{
	return n == 1 ? "" : "s";
}
static inline const char *plural_es(int64_t n)
{
	return n == 1 ? "" : "es";
}

/* Steady iterations of trace trace_id when the scope is the steady state; 0 when unknown. */
int64_t rule_steady_iterations(const struct rule_context *ctx, int64_t trace_id);

/* "device 0", or "trace 1 device 0" when several traces are open. */
const char *fmt_device(struct rule_text *t, struct rule_context *ctx, int64_t trace_id,
		       int64_t device);

#endif
