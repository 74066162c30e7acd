/*
 * Integer keys (up to KEY_INDEX_WORDS words; unused words 0) to dense indexes 0, 1, 2... in order of
 * first appearance, in an open-addressing table. The caller keeps what it counts per key in arrays
 * indexed by it: how the rules aggregate per kernel, device or stream in one unsorted pass, how
 * stats groups its rows and the loader caches strings, so that memory grows with the number of
 * distinct keys and SQLite never sorts the events.
 */
#ifndef GPT_COMMON_KEY_INDEX_H
#define GPT_COMMON_KEY_INDEX_H

#include <stddef.h>
#include <stdint.h>

#define KEY_INDEX_WORDS 4
struct key_index_slot;
struct key_index {
	struct key_index_slot *slots;
	size_t cap, count;
	int64_t last_key[KEY_INDEX_WORDS];	/* the key key_index_get() saw last, and its index (both */
	size_t last;				/* look there first): events come in runs of one kernel, thread */
};
/* The key's index; a key not seen before gets the next one and sets *created (may be NULL). */
size_t key_index_get(struct key_index *index, const int64_t *key, int *created);
/* The key's index, or SIZE_MAX. */
size_t key_index_find(const struct key_index *index, const int64_t *key);
void key_index_release(struct key_index *index);

#endif
