/* Integer keys to dense indexes (key-index.h). */
#include "common/key-index.h"
#include "common/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct key_index_slot {
	int64_t key[KEY_INDEX_WORDS];
	size_t value;
	int used;
};

/* The words multiplied apart (no chain of multiplications to wait for), then mixed down, so that keys
 * of small integers (ids) spread over the table. */
_Static_assert(KEY_INDEX_WORDS == 4, "key_hash() reads four words");

static size_t key_hash(const int64_t *key, size_t cap)
{
	uint64_t h = (uint64_t)key[0] * 0x9e3779b97f4a7c15ull ^ (uint64_t)key[1] * 0xc2b2ae3d27d4eb4full ^
		     (uint64_t)key[2] * 0x165667b19e3779f9ull ^ (uint64_t)key[3] * 0xd6e8feb86659fd93ull;

	h ^= h >> 32;
	h *= 0x94d049bb133111ebull;
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static struct key_index_slot *slot_of(const struct key_index *index, const int64_t *key)
{
	size_t i = key_hash(key, index->cap);

	while (index->slots[i].used &&
	       memcmp(index->slots[i].key, key, sizeof(index->slots[i].key)))
		i = (i + 1) & (index->cap - 1);
	return &index->slots[i];
}

size_t key_index_get(struct key_index *index, const int64_t *key, int *created)
{
	struct key_index_slot *slot;

	if (index->count && !memcmp(index->last_key, key, sizeof(index->last_key))) {
		if (created)
			*created = 0;
		return index->last;
	}
	if ((index->count + 1) * 2 > index->cap) {
		struct key_index_slot *old = index->slots;
		size_t oldcap = index->cap;

		index->cap = index->cap ? 2 * index->cap : 64;
		index->slots = xcalloc(index->cap, sizeof(*index->slots));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].used)
				*slot_of(index, old[i].key) = old[i];
		free(old);
	}
	slot = slot_of(index, key);
	if (created)
		*created = !slot->used;
	if (!slot->used) {
		slot->used = 1;
		memcpy(slot->key, key, sizeof(slot->key));
		slot->value = index->count++;
	}
	memcpy(index->last_key, key, sizeof(index->last_key));
	index->last = slot->value;
	return slot->value;
}

size_t key_index_find(const struct key_index *index, const int64_t *key)
{
	const struct key_index_slot *slot;

	if (!index->cap)
		return SIZE_MAX;
	if (!memcmp(index->last_key, key, sizeof(index->last_key)))
		return index->last;
	slot = slot_of(index, key);
	return slot->used ? slot->value : SIZE_MAX;
}

void key_index_release(struct key_index *index)
{
	free(index->slots);
	memset(index, 0, sizeof(*index));
}
