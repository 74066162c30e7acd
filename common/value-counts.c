/*
 * Exact medians from counted distinct values (see value-counts.h).
 */
#include "common/value-counts.h"
#include "common/util.h"

#include <stdlib.h>

struct value_counts {
	int64_t *values, *counts;	/* open addressing on the value; counts 0: empty slot */
	size_t n, cap;
};

void value_counts_free(struct value_counts *v)
{
	if (!v)
		return;
	free(v->values);
	free(v->counts);
	free(v);
}

static size_t value_slot(const struct value_counts *v, int64_t value)
{
	size_t i = (size_t)(((uint64_t)value * 0x9e3779b97f4a7c15ULL) >> 20) & (v->cap - 1);

	while (v->counts[i] && v->values[i] != value)
		i = (i + 1) & (v->cap - 1);
	return i;
}

void value_counts_add(struct value_counts **counts, struct value_budget *b, int64_t value)
{
	struct value_counts *v = *counts;
	size_t i;

	if (b->over)
		return;
	if (!v)
		v = *counts = xcalloc(1, sizeof(*v));
	if ((v->n + 1) * 2 > v->cap) {
		struct value_counts old = *v;

		v->cap = old.cap ? old.cap * 2 : 16;
		v->values = xmalloc(v->cap * sizeof(*v->values));
		v->counts = xcalloc(v->cap, sizeof(*v->counts));
		for (size_t k = 0; k < old.cap; k++)
			if (old.counts[k]) {
				size_t j = value_slot(v, old.values[k]);

				v->values[j] = old.values[k];
				v->counts[j] = old.counts[k];
			}
		free(old.values);
		free(old.counts);
	}
	i = value_slot(v, value);
	if (!v->counts[i]) {
		if (++b->used > VALUE_COUNTS_MAX) {
			b->over = 1;
			return;
		}
		v->values[i] = value;
		v->n++;
	}
	v->counts[i]++;
}

static int compare_pairs(const void *pa, const void *pb)
{
	const int64_t *a = pa, *b = pb;

	return (a[0] > b[0]) - (a[0] < b[0]);
}

double value_counts_median(struct value_counts *const *sets, size_t nsets, int64_t n)
{
	int64_t (*pairs)[2] = NULL, seen = 0;
	size_t npairs = 0, cap = 0;
	double lo = 0, median = 0;

	for (size_t s = 0; s < nsets; s++) {
		const struct value_counts *v = sets[s];

		for (size_t k = 0; v && k < v->cap; k++)
			if (v->counts[k]) {
				if (npairs == cap) {
					cap = cap ? cap * 2 : 64;
					pairs = xrealloc(pairs, cap * sizeof(*pairs));
				}
				pairs[npairs][0] = v->values[k];
				pairs[npairs++][1] = v->counts[k];
			}
	}
	if (npairs)
		qsort(pairs, npairs, sizeof(*pairs), compare_pairs);
	for (size_t k = 0; k < npairs; k++) {
		int64_t from = seen, to = seen + pairs[k][1];	/* the ranks of this value: [from, to) */

		if ((n - 1) / 2 >= from && (n - 1) / 2 < to)
			lo = (double)pairs[k][0];
		if (n / 2 >= from && n / 2 < to) {
			median = (lo + (double)pairs[k][0]) / 2;
			break;
		}
		seen = to;
	}
	free(pairs);
	return median;
}
