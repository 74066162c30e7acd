/*
 * The report's "what to shorten first" section: each trace's steady state replayed by the what-if
 * replay (analyzer/analysis/what-if.h), as recorded (its critical path: what bounds the step), with
 * each finding's fix alone, and with the fixes applied one after another in the order that shortens
 * the step most at each turn; the last is every fix together, so savings never count one nanosecond
 * twice. One writer per format; text and Markdown print nothing without a steady state, JSON
 * "what_if": [].
 */
#ifndef GPT_REPORT_FIX_ORDER_H
#define GPT_REPORT_FIX_ORDER_H

#include "analyzer/analysis/what-if.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct report_header;
struct findings;
struct trace;

/* One fix in the order: the steady window replayed with it alone, and with it and those before. */
struct report_fix {
	size_t finding;		/* index in the report's findings */
	int64_t alone_ns, after_ns;
	int64_t estimate_ns;	/* the rule's own estimate over the steady state, before the replay's
				   saving replaced it (report_fix_order_apply) */
};

/* One trace's replayed steady state. */
struct report_fix_order {
	int64_t trace_id;
	size_t iterations;		/* replayed (the graph's bound may leave the last ones out) */
	size_t steady_iterations;	/* of the trace: savings over the steady state scale to them */
	int64_t measured_ns;		/* the steady window as recorded */
	struct what_if_result recorded;	/* replayed as recorded, with its critical path */
	struct what_if_result all;	/* with every fix */
	struct report_fix *fixes;	/* in the order that shortens it most */
	size_t nfixes;
	struct what_if_segment *path;	/* the recorded critical path, for the page's timeline (with_path) */
	size_t npath;
};

/* Replay every trace's steady state with the findings' fixes: hdr->fix_order (none without steady
 * iterations), with the critical path's stretches when with_path. Call with the scope on the steady
 * state. 0, or a negative error with one line in err. */
int report_fix_order_compute(struct trace *trace, struct report_header *hdr, const struct findings *findings,
			     int with_path, char *err, size_t errlen);
/* Each replayed finding's recoverable time becomes its fix's replayed saving alone (the rule's
 * estimate kept as an evidence line), its severity judged from that, and the findings are ranked
 * again (the fixes' indices follow). */
void report_fix_order_apply(struct report_header *hdr, struct findings *findings);
/* What the findings recover together: the replay of all the modelled fixes of each trace (savings
 * that overlap count once), plus the other findings' own estimates, at most what the replay left of
 * the judged span. */
int64_t report_recoverable_total(const struct report_header *hdr, const struct findings *findings);
void report_fix_order_release(struct report_header *hdr);

void report_fix_order_text(FILE *out, const struct report_header *hdr, const struct findings *findings,
			   const char *bold, const char *reset);
void report_fix_order_markdown(FILE *out, const struct report_header *hdr, const struct findings *findings);
void report_fix_order_json(FILE *out, const struct report_header *hdr, const struct findings *findings);
/* A section of the HTML page: the same as the text, a table per trace. */
void report_fix_order_html(FILE *out, const struct report_header *hdr, const struct findings *findings);

#endif
