/*
 * Two small open-addressing hash maps for the writer thread: strings to 64-bit values (string
 * interning, kernel name cache) and 64-bit keys to 64-bit values (NVTX ranges, thread ids).
 * Single-threaded, grow by doubling, never shrink. Functions returning int give 0 or -ENOMEM.
 */
#ifndef GPT_COLLECTOR_HASH_H
#define GPT_COLLECTOR_HASH_H

#include <stddef.h>
#include <stdint.h>

struct strmap_slot;

struct strmap {
	struct strmap_slot *slots;
	size_t count, mask;
};

/* The value of key (len bytes), or -1 when absent. */
int64_t strmap_get(const struct strmap *map, const char *key, size_t len);
/* Insert a copy of key with value (key must be absent). */
int strmap_put(struct strmap *map, const char *key, size_t len, int64_t value);
void strmap_release(struct strmap *map);

struct u64map_slot;

struct u64map {
	struct u64map_slot *slots;
	size_t count, mask;
};

/* Pointer to the value of key, or NULL when absent. */
uint64_t *u64map_get(const struct u64map *map, uint64_t key);
/* Set key to value (insert or replace). */
int u64map_put(struct u64map *map, uint64_t key, uint64_t value);
/* Remove key if present. */
void u64map_remove(struct u64map *map, uint64_t key);
/* Iterate: i from 0 while < capacity; returns 1 and fills key/value for used slots. */
size_t u64map_capacity(const struct u64map *map);
int u64map_at(const struct u64map *map, size_t i, uint64_t *key, uint64_t *value);
void u64map_release(struct u64map *map);

#endif
