/*
 * Helpers shared by the rule files (see rule-util.h).
 */
#include "rules/rule-util.h"
#include "analyzer/loader/events.h"
#include "analyzer/analysis/phases.h"

#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rule_report_each(const struct rule *rule, struct rule_context *ctx, void *state,
		     const void *records, size_t n, size_t size, rule_wanted_fn *wanted,
		     rule_report_fn *report, char *err, size_t errlen)
{
	struct span_clock clock = {0};
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		const void *record = (const char *)records + i * size;

		if (!wanted(rule, ctx, record))
			continue;
		ret = span_clock_once(&clock, &ctx->an, err, errlen);
		if (ret < 0)
			break;
		report(rule, ctx, state, record, &clock);
	}
	span_clock_release(&clock);
	return ret;
}

void owner_weights_add(struct owner_weights *w, enum kernel_owner owner, double weight)
{
	if ((unsigned)owner < NR_KERNEL_OWNERS) {
		w->weight[owner] += weight;
		w->seen |= 1u << owner;
	}
}

enum kernel_owner owner_weights_top(const struct owner_weights *w)
{
	enum kernel_owner top = OWNER_PROGRAM;

	for (int i = 1; i < NR_KERNEL_OWNERS; i++)
		if (w->weight[i] > w->weight[top])
			top = (enum kernel_owner)i;
	return top;
}

const char *owner_fix(const struct owner_weights *w, enum fix_topic topic, const char *own_fix)
{
	const char *fix = kernel_owner_fix(owner_weights_top(w), topic);

	return fix ? fix : own_fix;
}

void owner_evidence(struct finding *f, const struct owner_weights *w, const char *what)
{
	char line[512];
	double total = 0;
	size_t n = 0;
	int len;

	for (int i = 0; i < NR_KERNEL_OWNERS; i++)
		total += w->weight[i];
	/* Only the program's own kernels: the fix already says so; nothing to add. */
	if (total <= 0 || w->weight[OWNER_PROGRAM] >= 0.995 * total)
		return;
	len = snprintf(line, sizeof(line), "whose kernels (by %s):", what);
	for (int i = 0; i < NR_KERNEL_OWNERS && len > 0 && (size_t)len < sizeof(line); i++) {
		if (w->weight[i] < 0.005 * total)	/* under 0.5%: not worth a word */
			continue;
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%s %s %.0f%%", n++ ? "," : "",
				kernel_owner_name((enum kernel_owner)i), 100.0 * w->weight[i] / total);
	}
	finding_evidence(f, "%s", line);
}

int64_t rule_steady_iterations(const struct rule_context *ctx, int64_t trace_id)
{
	if (!ctx->steady)
		return 0;
	for (size_t i = 0; i < ctx->steady->ntraces; i++) {
		const struct trace_phases *tp = &ctx->steady->traces[i];

		if (tp->trace_id == trace_id)
			return (int64_t)(tp->niterations - tp->first_steady);
	}
	return 0;
}

size_t rule_slot(struct key_index *index, const int64_t *key, void *items, size_t *count, size_t size,
		 int *created)
{
	size_t i = key_index_get(index, key, created);
	char *array;

	if (!*created)
		return i;
	/* items points to the caller's typed pointer: copied, not cast, to stay clear of aliasing */
	memcpy(&array, items, sizeof(array));
	array = xrealloc(array, (i + 1) * size);
	memset(array + i * size, 0, size);
	memcpy(items, &array, sizeof(array));
	*count = i + 1;
	return i;
}

void *rule_device_get(struct key_index *index, int64_t trace_id, int64_t device, void *items,
		      size_t *count, size_t size, int *created)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, device };
	int added;
	size_t i = rule_slot(index, key, items, count, size, &added);
	char *array;
	struct rule_device *d;

	memcpy(&array, items, sizeof(array));
	d = (struct rule_device *)(array + i * size);
	if (added)
		*d = (struct rule_device){ trace_id, device };
	if (created)
		*created = added;
	return d;
}

void *rule_device_find(const struct key_index *index, int64_t trace_id, int64_t device,
		       const void *items, size_t size)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, device };
	size_t i = key_index_find(index, key);

	return i == SIZE_MAX ? NULL : (char *)items + i * size;
}

struct kernels_fix {
	rule_kernel_factor_fn *factor;
	void *arg;
	int64_t *ids;
	double *factors;
	size_t n;
};

static void kernels_fix_row(sqlite3_stmt *st, void *arg)
{
	struct kernels_fix *k = arg;
	double f = k->factor(analysis_column_text(st, 1), k->arg);

	if (f < 0)
		return;
	k->ids = xrealloc(k->ids, (k->n + 1) * sizeof(*k->ids));
	k->factors = xrealloc(k->factors, (k->n + 1) * sizeof(*k->factors));
	k->ids[k->n] = sqlite3_column_int64(st, 0);
	k->factors[k->n++] = f;
}

int rule_kernels_fix(struct rule_context *ctx, int64_t trace_id, rule_kernel_factor_fn *factor, void *arg,
		     struct what_if_fix **out, char *err, size_t errlen)
{
	struct kernels_fix k = { .factor = factor, .arg = arg };
	char sql[160];
	int ret;

	*out = NULL;
	snprintf(sql, sizeof(sql), "SELECT nameId, name FROM kernels WHERE traceId = %" PRId64 " GROUP BY nameId",
		 trace_id);
	ret = analysis_query(&ctx->an, sql, kernels_fix_row, &k, err, errlen);
	if (!ret && k.n)
		*out = what_if_fix_new_each(trace_id, -1, k.ids, k.factors, k.n);
	free(k.ids);
	free(k.factors);
	return ret;
}
