/*
 * The rule table: every bottleneck rule, one line each, in the order `gpt-trace rules` lists them
 * and reports run them. A new rule is a new file in rules/ defining `const struct rule rule_<id>`
 * and one line here.
 */
#include "rules/rule.h"

#include <string.h>

extern const struct rule rule_uncoalesced_access;
extern const struct rule rule_small_kernels;
extern const struct rule rule_idle_gaps;
extern const struct rule rule_allocation_churn;
extern const struct rule rule_host_pinning_in_loop;
extern const struct rule rule_memory_growth;
extern const struct rule rule_near_oom;
extern const struct rule rule_pageable_memcpy;
extern const struct rule rule_excessive_sync;
extern const struct rule rule_sync_memcpy;
extern const struct rule rule_small_grid;
extern const struct rule rule_precision;
extern const struct rule rule_fusion;
extern const struct rule rule_tensor_idle;
extern const struct rule rule_layout_conversion;
extern const struct rule rule_exposed_communication;
extern const struct rule rule_straggler;

const struct rule *const rule_table[] = {
	&rule_uncoalesced_access,
	&rule_small_kernels,
	&rule_idle_gaps,
	&rule_allocation_churn,
	&rule_host_pinning_in_loop,
	&rule_memory_growth,
	&rule_near_oom,
	&rule_pageable_memcpy,
	&rule_excessive_sync,
	&rule_sync_memcpy,
	&rule_small_grid,
	&rule_precision,
	&rule_fusion,
	&rule_tensor_idle,
	&rule_layout_conversion,
	&rule_exposed_communication,
	&rule_straggler,
	NULL,
};

const struct rule *rule_find(const char *id)
{
	for (size_t i = 0; rule_table[i]; i++)
		if (!strcmp(rule_table[i]->id, id))
			return rule_table[i];
	return NULL;
}
