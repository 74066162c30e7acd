/*
 * Trace file names: expansion of the GPT_TRACE_OUTPUT pattern and creation without overwriting.
 *
 * The pattern's %p is the pid, %h the short host name, %r the process's rank in a parallel job
 * (rank.h; the pid when it was not launched as a rank), %% a '%'; any other character is copied.
 * trace_path_create() reserves the name with O_CREAT|O_EXCL, so that two processes given the same
 * name (a pattern without %p) never write into one file: the second gets "trace.1.sqlite", then
 * "trace.2.sqlite"... (the number goes before the extension).
 */
#ifndef GPT_COLLECTOR_TRACE_PATH_H
#define GPT_COLLECTOR_TRACE_PATH_H

#include <stddef.h>
#include <sys/types.h>

#define TRACE_PATH_DEFAULT "gpt-trace-%h-%p.sqlite"

/* Expand pattern into out. Returns 0, or -ENAMETOOLONG when out is too small. */
int trace_path_expand(const char *pattern, pid_t pid, const char *host, long rank, char *out, size_t outlen);

/*
 * Create the trace file for path (or, unless force, the first free uniquified name) as an empty
 * file, and write the name used into actual. force truncates an existing file. Returns 0, or a
 * negative errno (the file's directory is missing or not writable, ...).
 */
int trace_path_create(const char *path, int force, char *actual, size_t actual_len);

#endif
