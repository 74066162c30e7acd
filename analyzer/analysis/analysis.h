/*
 * The analysis layer's own context and what every analysis and rule reads and writes with.
 *
 * The analyses (this folder: the time-ordered walk of gaps.h, phases and iterations, memory in use,
 * collectives, kernel owners and efficiency) sit between the loader and the rules: every output
 * family reads them, and a rule is one consumer among others. An analysis runs in an analysis
 * context: the trace in its scope, where evidence times count from, and who asked, which starts
 * each error line ("rule small-kernels: cannot query the trace: ...", "phases: ...").
 */
#ifndef GPT_ANALYSIS_ANALYSIS_H
#define GPT_ANALYSIS_ANALYSIS_H

#include "analyzer/loader/trace.h"
#include "common/units.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct analysis_context {
	struct trace *trace;
	int64_t origin; /* where evidence times count from; 0: the first event in the scope */
	const char
	    *who; /* starts each error line: "rule small-kernels", "phases"; NULL: "analysis" */
};

int analysis_prepare(const struct analysis_context *a, const char *sql, sqlite3_stmt **stmt,
		     char *err, size_t errlen);
/* After sqlite3_step() returned neither SQLITE_ROW nor SQLITE_DONE: fill err, return -EIO. */
int analysis_step_error(const struct analysis_context *a, char *err, size_t errlen);
/* Run sql on the trace and hand each row to row(); 0, or a negative error with one line in err. */
typedef void analysis_row_fn(sqlite3_stmt *row, void *arg);
int analysis_query(const struct analysis_context *a, const char *sql, analysis_row_fn *row,
		   void *arg, char *err, size_t errlen);
/* sqlite3_column_text() that never returns NULL. */
const char *analysis_column_text(sqlite3_stmt *stmt, int col);

/*
 * Where the trace lies on its clock: the origin (earliest event of all traces, or the context's
 * origin, so that evidence prints "+12.345 ms" rather than raw CUPTI timestamps) and each trace's
 * span (first to last GPU operation or API call), against which severity is judged.
 */
struct span_clock {
	int64_t origin;
	size_t ntraces;
	int64_t *span_start, *span_end; /* indexed by traceId */
};
int span_clock_init(struct span_clock *clock, const struct analysis_context *a, char *err,
		    size_t errlen);
/* span_clock_init() on the first call (clock zero-initialised), nothing after: for a rule that
 * needs the clock only once a finding qualifies. */
int span_clock_once(struct span_clock *clock, const struct analysis_context *a, char *err,
		    size_t errlen);
void span_clock_release(struct span_clock *clock);
int64_t span_clock_span(const struct span_clock *clock, int64_t trace_id);
/* The sum of every trace's span: for a finding about all traces together. */
int64_t span_clock_total_span(const struct span_clock *clock);

/* Longest kernel or API name printed in an evidence line; longer ones lose their middle. */
#define FMT_NAME_MAX 96

/* Evidence text, formatted into a caller's buffer (returned for use inside printf arguments). */
struct fmt_text {
	char s[FMT_NAME_MAX + 8];
};
/* "850 ns", "12.3 us", "4.56 ms" (common/units.h, brief) */
static inline const char *fmt_duration(struct fmt_text *t, int64_t ns)
{
	return units_duration(t->s, sizeof(t->s), ns, UNITS_BRIEF);
}
/* "512 B", "2.0 KB", "225.1 MB" (common/units.h, brief) */
static inline const char *fmt_bytes(struct fmt_text *t, double bytes)
{
	return units_bytes(t->s, sizeof(t->s), bytes, UNITS_BRIEF);
}
const char *fmt_at(struct fmt_text *t, const struct span_clock *clock,
		   int64_t ns);				      /* "+1.234 ms" */
const char *fmt_name(struct fmt_text *t, const char *name);   /* at most FMT_NAME_MAX */
const char *fmt_percent(struct fmt_text *t, double fraction); /* "12.3%" */
/* "device 0", or "trace 1 device 0" when several traces are open. */
const char *fmt_device(struct fmt_text *t, struct trace *trace, int64_t trace_id, int64_t device);
/* The (cut) name of kernel name_id of a trace; "?" if the trace has no such kernel. */
const char *fmt_kernel_name(struct fmt_text *t, struct trace *trace, int64_t trace_id,
			    int64_t name_id);

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

#endif
