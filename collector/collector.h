/*
 * The collector: turns completed CUPTI activity buffers and host-side events into rows of one SQLite
 * trace file (schema in collector/schema.sql, documented in docs/schema.md).
 *
 * Threading: collector_submit_buffer() and collector_add_*() are called from the program's threads
 * and from CUPTI's buffer-completed callback; they only enqueue and never touch SQLite. One writer
 * thread, owned by the collector, decodes buffers into rows, interns strings, inserts with prepared
 * statements in large transactions and commits at least every commit_interval_ms, so a killed program
 * loses at most about that much data. collector_stop() drains the queue, writes metadata (GPT_META,
 * TARGET_INFO_GPU, PROCESSES) and indexes, closes the file and joins the thread.
 *
 * The trace file is created lazily, on the first event, so that a process that never uses CUDA
 * leaves no file behind. Errors (bad directory, disk full) are reported once through the error line
 * of collector_stop()/collector_error() and never stop the traced program.
 */
#ifndef GPT_COLLECTOR_COLLECTOR_H
#define GPT_COLLECTOR_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

struct collector;

struct collector_options {
	const char *path;		/* trace file to create; must not exist yet */
	unsigned commit_interval_ms;	/* default 1000 */
};

int collector_start(const struct collector_options *options, struct collector **out);

/* Hand over a CUPTI activity buffer (valid bytes of size); the collector frees it with free(). */
void collector_submit_buffer(struct collector *collector, uint8_t *buffer, size_t size, size_t valid);

/* Facts written to GPT_META at the end (name/value strings, copied). */
void collector_set_meta(struct collector *collector, const char *name, const char *value);

/*
 * Drain, finalize and close. dropped is CUPTI's dropped-record count, written to GPT_META and
 * returned through the summary line. Returns 0, or a negative error with one line in err.
 */
int collector_stop(struct collector *collector, uint64_t dropped, char *err, size_t errlen);

#endif
