/*
 * Open-addressing hash maps (see hash.h). Linear probing; u64map deletes with backward shift so
 * that no tombstones accumulate over a long run of NVTX start/end ranges.
 */
#include "collector/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct strmap_slot {
	char *key;	/* NULL: empty */
	size_t len;
	uint64_t hash;
	int64_t value;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

int64_t strmap_get(const struct strmap *map, const char *key, size_t len)
{
	uint64_t h;

	if (!map->slots)
		return -1;
	h = hash_bytes(key, len);
	for (size_t i = h & map->mask;; i = (i + 1) & map->mask) {
		const struct strmap_slot *slot = &map->slots[i];

		if (!slot->key)
			return -1;
		if (slot->hash == h && slot->len == len && memcmp(slot->key, key, len) == 0)
			return slot->value;
	}
}

static void strmap_insert_slot(struct strmap_slot *slots, size_t mask, const struct strmap_slot *s)
{
	size_t i = s->hash & mask;

	while (slots[i].key)
		i = (i + 1) & mask;
	slots[i] = *s;
}

static int strmap_grow(struct strmap *map)
{
	size_t capacity = map->slots ? (map->mask + 1) * 2 : 256;
	struct strmap_slot *slots = calloc(capacity, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	if (map->slots) {
		for (size_t i = 0; i <= map->mask; i++)
			if (map->slots[i].key)
				strmap_insert_slot(slots, capacity - 1, &map->slots[i]);
		free(map->slots);
	}
	map->slots = slots;
	map->mask = capacity - 1;
	return 0;
}

int strmap_put(struct strmap *map, const char *key, size_t len, int64_t value)
{
	struct strmap_slot slot;

	if ((!map->slots || (map->count + 1) * 4 > (map->mask + 1) * 3) && strmap_grow(map) < 0)
		return -ENOMEM;
	slot.key = malloc(len + 1);
	if (!slot.key)
		return -ENOMEM;
	memcpy(slot.key, key, len);
	slot.key[len] = '\0';
	slot.len = len;
	slot.hash = hash_bytes(key, len);
	slot.value = value;
	strmap_insert_slot(map->slots, map->mask, &slot);
	map->count++;
	return 0;
}

void strmap_release(struct strmap *map)
{
	if (map->slots)
		for (size_t i = 0; i <= map->mask; i++)
			free(map->slots[i].key);
	free(map->slots);
	memset(map, 0, sizeof(*map));
}

struct u64map_slot {
	uint64_t key;
	uint64_t value;
	int used;
};

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

uint64_t *u64map_get(const struct u64map *map, uint64_t key)
{
	if (!map->slots)
		return NULL;
	for (size_t i = hash_u64(key) & map->mask;; i = (i + 1) & map->mask) {
		struct u64map_slot *slot = &map->slots[i];

		if (!slot->used)
			return NULL;
		if (slot->key == key)
			return &slot->value;
	}
}

static void u64map_insert_slot(struct u64map_slot *slots, size_t mask, uint64_t key, uint64_t value)
{
	size_t i = hash_u64(key) & mask;

	while (slots[i].used)
		i = (i + 1) & mask;
	slots[i].key = key;
	slots[i].value = value;
	slots[i].used = 1;
}

static int u64map_grow(struct u64map *map)
{
	size_t capacity = map->slots ? (map->mask + 1) * 2 : 64;
	struct u64map_slot *slots = calloc(capacity, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	if (map->slots) {
		for (size_t i = 0; i <= map->mask; i++)
			if (map->slots[i].used)
				u64map_insert_slot(slots, capacity - 1, map->slots[i].key,
						   map->slots[i].value);
		free(map->slots);
	}
	map->slots = slots;
	map->mask = capacity - 1;
	return 0;
}

int u64map_put(struct u64map *map, uint64_t key, uint64_t value)
{
	uint64_t *existing = u64map_get(map, key);

	if (existing) {
		*existing = value;
		return 0;
	}
	if ((!map->slots || (map->count + 1) * 4 > (map->mask + 1) * 3) && u64map_grow(map) < 0)
		return -ENOMEM;
	u64map_insert_slot(map->slots, map->mask, key, value);
	map->count++;
	return 0;
}

void u64map_remove(struct u64map *map, uint64_t key)
{
	size_t i, j;

	if (!map->slots)
		return;
	for (i = hash_u64(key) & map->mask;; i = (i + 1) & map->mask) {
		if (!map->slots[i].used)
			return;
		if (map->slots[i].key == key)
			break;
	}
	/* Backward-shift deletion: move later members of the probe run into the hole. */
	map->slots[i].used = 0;
	map->count--;
	for (j = (i + 1) & map->mask; map->slots[j].used; j = (j + 1) & map->mask) {
		size_t home = hash_u64(map->slots[j].key) & map->mask;

		/* Leave slot j where it is if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		map->slots[i] = map->slots[j];
		map->slots[j].used = 0;
		i = j;
	}
}

size_t u64map_capacity(const struct u64map *map)
{
	return map->slots ? map->mask + 1 : 0;
}

int u64map_at(const struct u64map *map, size_t i, uint64_t *key, uint64_t *value)
{
	if (!map->slots[i].used)
		return 0;
	*key = map->slots[i].key;
	*value = map->slots[i].value;
	return 1;
}

void u64map_release(struct u64map *map)
{
	free(map->slots);
	memset(map, 0, sizeof(*map));
}
