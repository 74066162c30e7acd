/*
 * The bottleneck report (gpt-trace report): a header saying what ran, where, for how long and how
 * busy the GPU was, then the findings of the rules ranked by the time they would recover. Rendered
 * as text for a terminal (colour optional), Markdown for a PR comment or CI summary, JSON whose
 * schema "gpt-trace-report/2" is documented in docs/report-json.md, or one self-contained HTML page
 * with charts (docs/html-report.md).
 */
#ifndef GPT_REPORT_REPORT_H
#define GPT_REPORT_REPORT_H

#include "analyzer/loader/trace.h"
#include "analyzer/output/format.h"
#include "analyzer/analysis/phases.h"
#include "rules/rule.h"

#include <stdint.h>
#include <stdio.h>

#define REPORT_JSON_SCHEMA "gpt-trace-report/2"

/* One GPU that ran work in the scope. */
struct report_device {
	int64_t trace_id, device;
	char *label;		/* "GPU 0 (NVIDIA H200)" */
	int64_t busy_ns;	/* union of its kernels, copies and sets */
	int64_t operations;
};

struct report_charts;
struct memory_summary;
struct report_fix_order;

/* What ran, where, how long, how busy: read from the canonical views. */
struct report_header {
	char **traces;			/* "path (gpt-trace|nsys)" per trace */
	size_t ntraces;
	char **commands;		/* command lines or process names, one per process */
	size_t ncommands;
	char **notes;			/* warnings about the trace itself (incomplete, dropped records) */
	size_t nnotes;
	char *scope;			/* the scope in words, NULL for the whole trace */
	int64_t origin;			/* the trace's first event: "where" times print from it */
	int64_t start, end;		/* span of GPU operations, syncs and API calls */
	struct report_device *devices;
	size_t ndevices;
	int64_t kernels, copies, api_calls;	/* event counts in the scope */
	struct phases *phases;			/* phases and iterations; NULL when not computed */
	int steady_only;			/* the rules judged only [steady_start, steady_end) */
	int64_t steady_start, steady_end;
	int64_t steady_iterations;		/* steady iterations of every trace (0: none found) */
	struct report_charts *charts;		/* HTML only: report_charts_read(); NULL otherwise */
	struct memory_summary
	    *memory; /* GPU memory (analyzer/analysis/memory-use.h); NULL when not computed */
	struct report_fix_order *fix_order;	/* the steady states replayed (fix-order.h), per trace;
						   freed by report_fix_order_release(), not here */
	size_t nfix_order;
};

/* The devices' busy time added up (saturating at INT64_MAX). */
int64_t report_busy_total(const struct report_header *hdr);
/* What severity and shares are judged against: the steady state when the rules saw only it. */
int64_t report_judged_span(const struct report_header *hdr);

/* Fill hdr (zero-initialised by the caller but for hdr->phases, computed first: its walk gives the
 * devices' busy time); scope may be NULL. Free with report_header_release(). */
int report_header_read(struct trace *trace, const char *scope, struct report_header *hdr, char *err,
		       size_t errlen);
void report_header_release(struct report_header *hdr);

/*
 * For the HTML page: per-stream busy time at pixel scale, top kernels, copies by kind, idle gaps by
 * length (analyzer/report/html/html.h), read over the trace's current scope in bounded memory. Call
 * after phases_compute() and before the scope is narrowed to the steady state; stores the result in
 * hdr->charts, which report_header_release() frees.
 */
int report_charts_read(struct trace *trace, struct report_header *hdr, char *err, size_t errlen);

/*
 * Run rules over the trace and rank their findings. ids: the rule ids to run (NULL: every rule in
 * rule_table). origin: where evidence times count from (0: the first event in the scope). timings: when not NULL, one line per rule with its run time goes there. Returns the
 * number of rules run; a rule that fails stops the report: a negative error with one line in err.
 */
int report_run_rules(struct trace *trace, const struct rule_config *config, const char *const *ids, size_t nids,
		     int64_t origin, const struct phases *steady, struct findings *out, FILE *timings, char *err,
		     size_t errlen);

/*
 * Narrow the trace's scope to the steady state of phases, where the rules judge (one-time costs are
 * the phases' business); *start and *end: its window, both INT64_MAX - 1 when nothing repeats (a
 * window that holds no event). Returns 0 or a negative error with one line in err.
 */
int report_scope_steady(struct trace *trace, const struct phases *phases, int64_t *start, int64_t *end, char *err,
			size_t errlen);


struct report_options {
	enum output_format format;
	int color;		/* text only: ANSI colours */
	size_t nrules;		/* how many rules ran, for the summary line */
};

void report_write(FILE *out, const struct report_header *hdr, const struct findings *findings,
		  const struct report_options *options);

#endif
