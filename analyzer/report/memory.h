/*
 * The report's memory section (analyzer/analysis/memory-use.h's summary), one writer per format:
 * what each device held at its peak against its capacity and when, the steady state's allocations
 * per iteration, the growth from iteration to iteration, and the largest allocations. Text and
 * Markdown print nothing when no trace has memory records; JSON prints "memory": null.
 */
#ifndef GPT_REPORT_MEMORY_H
#define GPT_REPORT_MEMORY_H

#include <stdio.h>

struct report_header;

void report_memory_text(FILE *out, const struct report_header *hdr);
void report_memory_markdown(FILE *out, const struct report_header *hdr);
void report_memory_json(FILE *out, const struct report_header *hdr);
/* A section with each device's memory in use as a step chart (for under the timeline). */
void report_memory_html(FILE *out, const struct report_header *hdr);

#endif
