/*
 * A rule's kernels grouped by name (see kernel-groups.h).
 */
#include "rules/kernel-groups.h"
#include "analyzer/analysis/what-if.h"

#include "common/util.h"

#include <stdlib.h>
#include <string.h>

void kernel_groups_init(struct kernel_groups *groups, size_t size)
{
	groups->size = size;
}

void *kernel_groups_get(struct kernel_groups *groups, int64_t trace_id, int64_t device,
			int64_t name_id, int *created)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, device, name_id };
	int added;
	size_t i = rule_slot(&groups->index, key, &groups->items, &groups->count, groups->size,
			     &added);
	struct kernel_group *k = kernel_groups_at(groups, i);

	if (added) {
		k->trace_id = trace_id;
		k->device = device;
		k->name_id = name_id;
	}
	if (created)
		*created = added;
	return k;
}

void *kernel_groups_at(const struct kernel_groups *groups, size_t i)
{
	return groups->items + i * groups->size;
}

void kernel_groups_keep(struct kernel_groups *groups, int (*keep)(const void *record))
{
	size_t kept = 0;

	for (size_t i = 0; i < groups->count; i++) {
		if (!keep(kernel_groups_at(groups, i)))
			continue;
		if (kept != i)
			memcpy(kernel_groups_at(groups, kept), kernel_groups_at(groups, i),
			       groups->size);
		kept++;
	}
	groups->count = kept;
}

static int compare_weight(const void *pa, const void *pb)
{
	const struct kernel_group *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return a->name_id < b->name_id ? -1 : a->name_id > b->name_id;
}

void kernel_groups_rank(struct kernel_groups *groups)
{
	if (groups->count > 1)
		qsort(groups->items, groups->count, groups->size, compare_weight);
}

void kernel_groups_release(struct kernel_groups *groups)
{
	key_index_release(&groups->index);
	free(groups->items);
	groups->items = NULL;
	groups->count = 0;
}

size_t kernel_groups_owners(const struct kernel_groups *groups, struct rule_context *ctx,
			    int64_t trace_id, int64_t device, struct owner_weights *owners)
{
	size_t n = 0;

	for (size_t i = 0; i < groups->count; i++) {
		const struct kernel_group *k = kernel_groups_at(groups, i);

		if (k->trace_id != trace_id || k->device != device)
			continue;
		owner_weights_add(owners, kernel_owner_of(ctx->an.trace, trace_id, k->name_id),
				  k->weight);
		n++;
	}
	return n;
}

void kernel_groups_evidence(const struct kernel_groups *groups, struct finding *f,
			    struct rule_context *ctx, int64_t trace_id, int64_t device, kernel_line_fn *line,
			    const char *what)
{
	size_t names = 0;

	for (size_t i = 0; i < groups->count; i++) {
		const struct kernel_group *k = kernel_groups_at(groups, i);

		if (k->trace_id != trace_id || k->device != device)
			continue;
		if (names++ < KERNEL_GROUPS_SHOWN)
			line(f, ctx, k);
	}
	if (names > KERNEL_GROUPS_SHOWN)
		finding_evidence(f, "... and %zu more %s%s", names - KERNEL_GROUPS_SHOWN, what,
				 plural((int64_t)(names - KERNEL_GROUPS_SHOWN)));
}

/* The fix of one device's kernels: factor for all, or each record's own when each is set. */
static struct what_if_fix *groups_fix(const struct kernel_groups *groups, enum what_if_kind kind, int64_t trace_id,
				      int64_t device, double factor, kernel_factor_fn *each)
{
	int64_t *ids = xcalloc(groups->count ? groups->count : 1, sizeof(*ids));
	double *factors = xcalloc(groups->count ? groups->count : 1, sizeof(*factors));
	size_t n = 0;
	struct what_if_fix *fix = NULL;

	for (size_t i = 0; i < groups->count; i++) {
		const struct kernel_group *k = kernel_groups_at(groups, i);

		if (k->trace_id != trace_id || k->device != device)
			continue;
		factors[n] = each ? each(k) : factor;
		ids[n++] = k->name_id;
	}
	if (n)
		fix = each ? what_if_fix_new_each(trace_id, device, ids, factors, n)
			   : what_if_fix_new(kind, trace_id, device, ids, n, factor);
	free(ids);
	free(factors);
	return fix;
}

struct what_if_fix *kernel_groups_fix(const struct kernel_groups *groups, enum what_if_kind kind, int64_t trace_id,
				      int64_t device, double factor)
{
	return groups_fix(groups, kind, trace_id, device, factor, NULL);
}

struct what_if_fix *kernel_groups_fix_each(const struct kernel_groups *groups, int64_t trace_id, int64_t device,
					   kernel_factor_fn *each)
{
	return groups_fix(groups, WHAT_IF_KERNELS, trace_id, device, 1, each);
}
