/*
 * The list of findings that rules append to and reports render: adding a finding with its evidence,
 * ranking by recoverable time, releasing. Every string in a finding is owned by the list (deep
 * copies), except rule_id, which points at the rule descriptor's static id.
 */
#include "rules/rule.h"
#include "analyzer/analysis/what-if.h"

#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *vformat(const char *fmt, va_list ap)
{
	va_list copy;
	int n;
	char *s;

	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		return xstrdup("");
	s = xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

struct finding *findings_add(struct findings *list, const struct rule *rule, enum finding_severity severity,
			     int64_t recoverable_ns, const char *fix, const char *fmt, ...)
{
	struct finding *f;
	va_list ap;

	if (list->count == list->cap) {
		list->cap = list->cap ? 2 * list->cap : 8;
		list->items = xrealloc(list->items, list->cap * sizeof(*list->items));
	}
	f = &list->items[list->count++];
	memset(f, 0, sizeof(*f));
	f->rule_id = rule->id;
	f->severity = severity;
	f->recoverable_ns = recoverable_ns > 0 ? recoverable_ns : 0;
	f->fix = xstrdup(fix ? fix : "");
	va_start(ap, fmt);
	f->message = vformat(fmt, ap);
	va_end(ap);
	f->device = -1;
	f->stream = -1;
	f->owner = -1;
	return f;
}

void finding_evidence(struct finding *finding, const char *fmt, ...)
{
	va_list ap;

	/* Evidence lists are short (a handful of lines), so growing one slot at a time is fine. */
	finding->evidence = xrealloc(finding->evidence, (finding->nevidence + 1) * sizeof(char *));
	va_start(ap, fmt);
	finding->evidence[finding->nevidence++] = vformat(fmt, ap);
	va_end(ap);
}

static int compare_findings(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;
	int c;

	if (a->recoverable_ns != b->recoverable_ns)
		return a->recoverable_ns > b->recoverable_ns ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	c = strcmp(a->rule_id, b->rule_id);
	if (c)
		return c;
	/* The rest only makes the order deterministic, so that reports and tests are stable. */
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return strcmp(a->message, b->message);
}

void findings_rank(struct findings *list)
{
	if (list->count > 1)
		qsort(list->items, list->count, sizeof(*list->items), compare_findings);
}

void findings_release(struct findings *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->count; i++) {
		struct finding *f = &list->items[i];

		free(f->message);
		free(f->fix);
		for (size_t j = 0; j < f->nevidence; j++)
			free(f->evidence[j]);
		free(f->evidence);
		what_if_fix_free(f->what_if);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
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

void finding_what_if(struct finding *finding, struct what_if_fix *fix)
{
	what_if_fix_free(finding->what_if);
	finding->what_if = fix;
}
