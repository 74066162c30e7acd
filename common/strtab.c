/*
 * The string table of strtab.h: a hash over 8 bytes at a time (kernel names run to hundreds of
 * characters; FNV-1a over bytes cost 170 ns on a 200-character name, this 45), linear probing.
 */
#include "common/strtab.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_of(const char *s)
{
	size_t n = strlen(s);
	uint64_t h = n * 0x9e3779b97f4a7c15ull, w;

	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

/* The slot of s (hash h): where it is, or the empty slot where it would go. */
static size_t *slot_of(const struct strtab *t, const char *s, uint64_t h)
{
	size_t mask = t->nslots - 1, i = (size_t)(h ^ (h >> 32)) & mask;

	while (t->slots[i] && (t->hashes[t->slots[i] - 1] != h || strcmp(t->strs[t->slots[i] - 1], s)))
		i = (i + 1) & mask;
	return &t->slots[i];
}

size_t strtab_find(const struct strtab *t, const char *s)
{
	size_t *slot;

	if (!t->nslots)
		return SIZE_MAX;
	slot = slot_of(t, s, hash_of(s));
	return *slot ? *slot - 1 : SIZE_MAX;
}

size_t strtab_get(struct strtab *t, const char *s, int *created)
{
	uint64_t h = hash_of(s);
	size_t *slot;

	if (created)
		*created = 0;
	if ((t->count + 1) * 2 > t->nslots) {
		size_t n = t->nslots ? t->nslots * 2 : 64;

		free(t->slots);
		t->slots = xcalloc(n, sizeof(*t->slots));
		t->nslots = n;
		for (size_t i = 0; i < t->count; i++)
			*slot_of(t, t->strs[i], t->hashes[i]) = i + 1;
	}
	slot = slot_of(t, s, h);
	if (*slot)
		return *slot - 1;
	if (t->count == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->strs = xrealloc(t->strs, t->cap * sizeof(*t->strs));
		t->hashes = xrealloc(t->hashes, t->cap * sizeof(*t->hashes));
	}
	t->strs[t->count] = xstrdup(s);
	t->hashes[t->count] = h;
	*slot = ++t->count;
	if (created)
		*created = 1;
	return t->count - 1;
}

void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->hashes);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
