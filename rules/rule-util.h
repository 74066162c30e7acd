/*
 * Helpers shared by the rule files (private to rules/; what analyses share too is in
 * analyzer/analysis/analysis.h): a rule's analysis context, findings per record, records per key,
 * severity from the span, and whose kernels a finding is about.
 */
#ifndef GPT_RULES_RULE_UTIL_H
#define GPT_RULES_RULE_UTIL_H

#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/owner.h"
#include "analyzer/analysis/what-if.h"
#include "rules/rule.h"
#include "common/key-index.h"

#include <sqlite3.h>

/*
 * A rule's findings per record (its devices, say: n of them, size bytes apart): report() for each
 * one that wanted() accepts, with the clock read at the first (rule_clock_once) and released after;
 * state is the rule's, for report(). Returns 0, or a negative error with one line in err.
 */
typedef int rule_wanted_fn(const struct rule *rule, struct rule_context *ctx, const void *record);
typedef void rule_report_fn(const struct rule *rule, struct rule_context *ctx, void *state,
			    const void *record, const struct span_clock *clock);
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

/* The what-if replay's fix (WHAT_IF_KERNELS) of trace trace_id's kernels in the rule's scope, each
 * by the factor factor() gives its name (negative: not the fix's kernel). *out NULL when no kernel
 * is the fix's. Returns 0, or a negative error with one line in err. */
typedef double rule_kernel_factor_fn(const char *name, void *arg);
int rule_kernels_fix(struct rule_context *ctx, int64_t trace_id, rule_kernel_factor_fn *factor, void *arg,
		     struct what_if_fix **out, char *err, size_t errlen);

/* Steady iterations of trace trace_id when the scope is the steady state; 0 when unknown. */
int64_t rule_steady_iterations(const struct rule_context *ctx, int64_t trace_id);

#endif
