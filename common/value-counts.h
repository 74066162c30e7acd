/*
 * Exact medians without sorting the rows: the durations of one group (a kernel name, an API call
 * name), each distinct value once with how often it came. A kernel's durations take few distinct
 * values (its jitter, in ns: the GPT-2 training trace of bench/analyzer has 13,399 distinct (kernel,
 * duration) pairs over 1.05M launches), so counting them in the pass that sums the rows costs a
 * hash update a row, and a median is read from the counts in order. A budget shared by the groups
 * of one table caps the values held (VALUE_COUNTS_MAX); past it, counting stops and the caller
 * finds its medians as before, from a pass sorted by duration.
 */
#ifndef GPT_COMMON_VALUE_COUNTS_H
#define GPT_COMMON_VALUE_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#define VALUE_COUNTS_MAX (1u << 21)

struct value_counts;

struct value_budget {
	size_t used;			/* distinct values held, over all the groups that share it */
	int over;			/* VALUE_COUNTS_MAX reached: counting stopped */
};

/* Count value into *counts (made on first use), unless the budget is spent. */
void value_counts_add(struct value_counts **counts, struct value_budget *budget, int64_t value);
void value_counts_free(struct value_counts *counts);

/*
 * The median of the values of sets[0..nsets) together, n of them in all (NULL sets hold none): the
 * mean of the values at ranks (n - 1) / 2 and n / 2 in order, as a pass sorted by duration finds
 * it. 0 when n is 0.
 */
double value_counts_median(struct value_counts *const *sets, size_t nsets, int64_t n);

#endif
