/*
 * The correlation map (corr-map.c): one 64-bit word per correlation id of each file, indexed
 * directly by the id, for passes that join API calls and the GPU work they caused without a SQL
 * join: the exporter's flows, the NVTX ranges' kernel time in stats. What a word holds is the
 * caller's. CUPTI numbers correlation ids densely from 1, and passes meet them nearly in increasing
 * order (they follow time), so a large map lives in a temporary file whose pages are given back
 * behind the look-ups: resident memory stays flat however long the trace.
 */
#ifndef GPT_COMMON_CORR_MAP_H
#define GPT_COMMON_CORR_MAP_H

#include <stddef.h>
#include <stdint.h>

struct corr_map;

/* A map for ids lo[i] to hi[i] of file i (none when hi < lo), ids[i] of them in use; zeroed.
 * Returns 0 or -ENOMEM. */
int corr_map_new(struct corr_map **out, const int64_t *lo, const int64_t *hi, const uint64_t *ids, size_t n);
/* The word of (file, id), or NULL when the id is outside the file's range. */
uint64_t *corr_map_at(struct corr_map *m, size_t trace, int64_t corr);
void corr_map_free(struct corr_map *m);

#endif
