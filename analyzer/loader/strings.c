/*
 * trace_string(): the StringIds texts of a trace, each (file, id) read once with one prepared
 * statement and kept until the trace is closed. Kernel names, API function names and NVTX texts are
 * ids into a file's StringIds; a pass over a million events asks for a few hundred of them again
 * and again. Memory: the distinct strings asked for. Also a device's label, from the gpus view.
 */
#include "analyzer/loader/trace-private.h"
#include "common/key-index.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trace_strings {
	struct key_index index;	/* (file, id) -> values[] */
	char **values;		/* by index: the text, NULL when there is no such string */
	size_t cap;
	sqlite3_stmt *lookup;
	/* the last answer: a pass asks for one kernel's name many times in a row */
	int64_t last_file, last_id;
	const char *last_value;
	int has_last;
};

static void trace_strings_free(void *data);

int trace_string(struct trace *trace, int64_t trace_id, int64_t id, const char **out, char *err, size_t errlen)
{
	struct trace_cache *slot = trace_cache(trace, TRACE_CACHE_STRINGS);
	struct trace_strings *s = slot->data;
	const int64_t key[KEY_INDEX_WORDS] = { trace_id, id };
	const unsigned char *text;
	size_t i;
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
		slot->data = s;
		slot->free = trace_strings_free;
	}
	i = key_index_find(&s->index, key);
	if (i != SIZE_MAX)
		goto found;
	if (!s->lookup && sqlite3_prepare_v2(trace_db(trace), "SELECT value FROM strings WHERE traceId = ?1 AND id = ?2",
					     -1, &s->lookup, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read the trace's strings: %s", sqlite3_errmsg(trace_db(trace)));
		return -EIO;
	}
	sqlite3_reset(s->lookup);
	sqlite3_bind_int64(s->lookup, 1, trace_id);
	sqlite3_bind_int64(s->lookup, 2, id);
	rc = sqlite3_step(s->lookup);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read the trace's strings: %s", sqlite3_errmsg(trace_db(trace)));
		return -EIO;
	}
	if (s->index.count == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->values = xrealloc(s->values, s->cap * sizeof(*s->values));
	}
	text = rc == SQLITE_ROW ? sqlite3_column_text(s->lookup, 0) : NULL;
	i = key_index_get(&s->index, key, NULL);
	s->values[i] = text ? xstrdup((const char *)text) : NULL;
found:
	s->last_file = trace_id;
	s->last_id = id;
	s->last_value = s->values[i];
	s->has_last = 1;
	*out = s->values[i];
	return 0;
}

static void trace_strings_free(void *data)
{
	struct trace_strings *s = data;

	if (!s)
		return;
	for (size_t i = 0; i < s->index.count; i++)
		free(s->values[i]);
	free(s->values);
	key_index_release(&s->index);
	sqlite3_finalize(s->lookup);
	free(s);
}

static char *gpu_name(struct trace *trace, int64_t trace_id, int64_t device)
{
	sqlite3_stmt *q;
	char *s = NULL;

	if (sqlite3_prepare_v2(trace_db(trace), "SELECT name FROM gpus WHERE traceId = ?1 AND id = ?2",
			       -1, &q, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(q, 1, trace_id);
	sqlite3_bind_int64(q, 2, device);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
		s = xstrdup((const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	return s;
}

char *trace_device_label(struct trace *trace, int64_t trace_id, int64_t device)
{
	char *name = device == INT64_MIN ? NULL : gpu_name(trace, trace_id, device);
	char dev[32], *s;

	if (device == INT64_MIN)
		snprintf(dev, sizeof(dev), "GPU ?");
	else
		snprintf(dev, sizeof(dev), "GPU %" PRId64, device);
	if (trace_count(trace) > 1)
		s = name ? xasprintf("trace %" PRId64 " %s (%s)", trace_id, dev, name)
			 : xasprintf("trace %" PRId64 " %s", trace_id, dev);
	else
		s = name ? xasprintf("%s (%s)", dev, name) : xstrdup(dev);
	free(name);
	return s;
}
