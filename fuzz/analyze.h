/*
 * Shared by the fuzz harnesses (fuzz-trace.c: the input is the SQLite file; fuzz-sql.c: the input is
 * SQL that builds the trace) and the replay driver that CI runs over the committed corpus.
 */
#ifndef GPT_FUZZ_ANALYZE_H
#define GPT_FUZZ_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

/* Run what report, stats, export, diff, baseline and check do on the trace at path. */
void fuzz_analyze(const char *path, const char *dir, unsigned variant);

/* A folder private to this process for the trace and the outputs (created once, kept). */
const char *fuzz_workdir(void);

/* Remove the folder of fuzz_workdir() and what the harnesses leave in it. */
void fuzz_workdir_remove(void);

/* Write size bytes to path; 0 or -1. */
int fuzz_write_file(const char *path, const uint8_t *data, size_t size);

/* A number derived from the input that picks the variant of fuzz_analyze(). */
unsigned fuzz_variant(const uint8_t *data, size_t size);

/* Remove path and the journal, WAL and shared-memory files SQLite may have left beside it. */
void fuzz_remove_db(const char *path);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
