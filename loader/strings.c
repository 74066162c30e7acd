/*
 * trace_string(): the StringIds texts of a trace, each (file, id) read once with one prepared
 * statement and kept until the trace is closed. Kernel names, API function names and NVTX texts are
 * ids into a file's StringIds; a pass over a million events asks for a few hundred of them again
 * and again. Memory: the distinct strings asked for.
 */
#include "loader/trace-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct string_slot {
	int64_t file, id;
	char *value;		/* NULL: no such string */
	int used;
};

struct trace_strings {
	struct string_slot *slots;
	size_t cap, count;	/* cap: a power of two */
	sqlite3_stmt *lookup;
	/* the last answer: a pass asks for one kernel's name many times in a row */
	int64_t last_file, last_id;
	const char *last_value;
	int has_last;
};

static size_t slot_hash(int64_t file, int64_t id, size_t cap)
{
	uint64_t h = ((uint64_t)id * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)file * 0xc2b2ae3d27d4eb4full);

	return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static struct string_slot *slot_find(struct string_slot *slots, size_t cap, int64_t file, int64_t id)
{
	size_t i = slot_hash(file, id, cap);

	while (slots[i].used && (slots[i].file != file || slots[i].id != id))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int strings_grow(struct trace_strings *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	struct string_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i].used)
			*slot_find(slots, cap, s->slots[i].file, s->slots[i].id) = s->slots[i];
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int trace_string(struct trace *trace, int64_t trace_id, int64_t id, const char **out, char *err, size_t errlen)
{
	struct trace_strings **sp = trace_strings_cache(trace), *s = *sp;
	struct string_slot *slot;
	const unsigned char *text;
	int rc;

	*out = NULL;
	if (s && s->has_last && s->last_file == trace_id && s->last_id == id) {
		*out = s->last_value;
		return 0;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		*sp = s;
	}
	if (s->cap) {
		slot = slot_find(s->slots, s->cap, trace_id, id);
		if (slot->used)
			goto found;
	}
	if (!s->lookup && sqlite3_prepare_v2(trace_db(trace), "SELECT value FROM strings WHERE traceId = ?1 AND id = ?2",
					     -1, &s->lookup, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read the trace's strings: %s", sqlite3_errmsg(trace_db(trace)));
		return -EIO;
	}
	if ((s->count + 1) * 2 > s->cap && strings_grow(s) < 0)
		return -ENOMEM;
	slot = slot_find(s->slots, s->cap, trace_id, id);
	sqlite3_reset(s->lookup);
	sqlite3_bind_int64(s->lookup, 1, trace_id);
	sqlite3_bind_int64(s->lookup, 2, id);
	rc = sqlite3_step(s->lookup);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read the trace's strings: %s", sqlite3_errmsg(trace_db(trace)));
		return -EIO;
	}
	text = rc == SQLITE_ROW ? sqlite3_column_text(s->lookup, 0) : NULL;
	slot->value = text ? strdup((const char *)text) : NULL;
	if (text && !slot->value)
		return -ENOMEM;
	slot->file = trace_id;
	slot->id = id;
	slot->used = 1;
	s->count++;
found:
	s->last_file = trace_id;
	s->last_id = id;
	s->last_value = slot->value;
	s->has_last = 1;
	*out = slot->value;
	return 0;
}

void trace_strings_free(struct trace_strings *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i].value);
	free(s->slots);
	sqlite3_finalize(s->lookup);
	free(s);
}
