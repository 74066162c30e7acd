/*
 * Strings to dense indexes 0, 1, 2... in order of first appearance: a hash table over copies of the
 * strings. What the analyzer keys by text (kernel names across files, labels of a stats table,
 * the Perfetto writer's interned strings) goes through it. Memory: the distinct strings.
 */
#ifndef GPT_COMMON_STRTAB_H
#define GPT_COMMON_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
	char **strs;		/* by index: the copies */
	uint64_t *hashes;
	size_t count, cap;
	size_t *slots;		/* open addressing: index + 1, 0 = empty */
	size_t nslots;		/* a power of two, at least twice count */
};

/* The index of s, or SIZE_MAX when absent. */
size_t strtab_find(const struct strtab *t, const char *s);
/* The index of s, adding a copy when absent (then *created is set; created may be NULL). */
size_t strtab_get(struct strtab *t, const char *s, int *created);
/* The string of index i (i < t->count). */
static inline const char *strtab_at(const struct strtab *t, size_t i)
{
	return t->strs[i];
}
void strtab_release(struct strtab *t);

#endif
