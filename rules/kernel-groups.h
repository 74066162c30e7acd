/*
 * A rule's kernels grouped by name (private to rules/): one record per kernel name on one device,
 * for the rules that show a device's worst kernels (small-kernels, small-grid, precision, fusion).
 * Each record starts with a struct kernel_group; what the rule keeps of its own follows it. After
 * the walk the records are ranked by the rule's weight, and a finding gets the owners of one
 * device's kernels and an evidence line for each of the first few.
 */
#ifndef GPT_RULES_KERNEL_GROUPS_H
#define GPT_RULES_KERNEL_GROUPS_H

#include "analyzer/analysis/what-if.h"
#include "rules/rule-util.h"
#include "common/key-index.h"

/* Evidence lines for one device's kernels, at most; the rest are counted in one line. */
#define KERNEL_GROUPS_SHOWN 5

struct kernel_group {
	int64_t trace_id, device, name_id;
	int64_t launches, ns;
	double weight;		/* what the rule ranks them by: time, idle SM time, launches */
};

struct kernel_groups {
	struct key_index index;	/* (trace, device, nameId) -> records */
	char *items;
	size_t count;
	size_t size;		/* one record's bytes, struct kernel_group first */
};

/* Zero-initialise, then set size. */
void kernel_groups_init(struct kernel_groups *groups, size_t size);
/* A kernel's record, added zeroed but for its key on first sight (with *created set; created may be
 * NULL). Not after kernel_groups_rank() or kernel_groups_keep(). */
void *kernel_groups_get(struct kernel_groups *groups, int64_t trace_id, int64_t device,
			int64_t name_id, int *created);
void *kernel_groups_at(const struct kernel_groups *groups, size_t i);
/* Keep only the records keep() accepts, in their order. */
void kernel_groups_keep(struct kernel_groups *groups, int (*keep)(const void *record));
/* Order by weight, largest first (ties: name id). */
void kernel_groups_rank(struct kernel_groups *groups);
void kernel_groups_release(struct kernel_groups *groups);

/* Add the owners of one device's kernels, each by its weight, to owners; returns their count. */
size_t kernel_groups_owners(const struct kernel_groups *groups, struct rule_context *ctx,
			    int64_t trace_id, int64_t device, struct owner_weights *owners);

/* The what-if replay's fix of kind for one device's kernels (WHAT_IF_KERNELS: each runs factor
 * times as long; WHAT_IF_GRAPH: they are captured in a CUDA graph). NULL when the device has none. */
struct what_if_fix *kernel_groups_fix(const struct kernel_groups *groups, enum what_if_kind kind, int64_t trace_id,
				      int64_t device, double factor);

/* The WHAT_IF_KERNELS fix for one device's kernels, each at the factor each() gives its record. NULL
 * when the device has none. */
typedef double kernel_factor_fn(const void *record);
struct what_if_fix *kernel_groups_fix_each(const struct kernel_groups *groups, int64_t trace_id, int64_t device,
					   kernel_factor_fn *each);

/* One evidence line for a kernel's record. */
typedef void kernel_line_fn(struct finding *f, struct rule_context *ctx, const void *record);
/*
 * Evidence for one device's kernels: line() for each of the first KERNEL_GROUPS_SHOWN in rank
 * order, then "... and N more <what>s" for the rest.
 */
void kernel_groups_evidence(const struct kernel_groups *groups, struct finding *f,
			    struct rule_context *ctx, int64_t trace_id, int64_t device, kernel_line_fn *line,
			    const char *what);

#endif
