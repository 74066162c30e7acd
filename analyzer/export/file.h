/*
 * The exporter's output file (file.c): buffered, optionally gzipped, written under a temporary name
 * and renamed into place by export_file_commit(). It knows bytes only: the writers (perfetto.c,
 * chrome.c, ranks-export.c) write to it; export.c picks the writer.
 */
#ifndef GPT_EXPORT_FILE_H
#define GPT_EXPORT_FILE_H

#include <stddef.h>

struct export_file;

int export_file_open(struct export_file **out, const char *path, int gzip, char *err, size_t errlen);
/* Returns 0 or a negative errno; the first error sticks and is reported again by commit. */
int export_file_write(struct export_file *file, const void *buf, size_t len);
int export_file_commit(struct export_file *file, char *err, size_t errlen);
/* Removes the temporary file and frees; accepts NULL. */
void export_file_abort(struct export_file *file);

#endif
