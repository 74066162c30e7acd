/*
 * The correlation map (corr-map.h): one 8-byte word per correlation id of each file.
 *
 * CUPTI numbers correlation ids from 1 up, one per API call, so a file's ids are dense and a word per
 * id costs 8 bytes per API call. The words live in an unlinked temporary file in $TMPDIR, mapped
 * shared: every pass meets the ids nearly in increasing order (they follow time), so the map gives
 * back the pages below the lowest id of its last block of look-ups, and the resident size stays
 * flat however long the trace (a page given back and touched again is read back from the file).
 * The space is reserved (posix_fallocate) before use, so a full disk is a clean fallback and never
 * a SIGBUS. Small maps, sparse ones (a few ids spread over a huge range, as in a damaged file) and
 * maps whose file cannot be made are anonymous memory instead, reserved lazily.
 */
#include "common/corr-map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#define CORR_ANON_MAX (1u << 20)	/* words kept in anonymous memory regardless */
#define CORR_BLOCK 65536		/* look-ups between two give-backs */

struct corr_region {
	int64_t lo;			/* the first id */
	uint64_t n;			/* ids lo .. lo + n - 1 */
	uint64_t *words;
	uint64_t block_low, last_low;	/* lowest index looked up in this block, in the last one */
};

struct corr_map {
	struct corr_region *regions;
	size_t nregions;
	void *map;
	size_t size;
	int shared;			/* file-backed: pages can be given back */
	uint64_t lookups;
	size_t page;
};

static int temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof(path), "%s/gpt-trace-corr-XXXXXX", dir) >= sizeof(path))
		return -1;
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

int corr_map_new(struct corr_map **out, const int64_t *lo, const int64_t *hi, const uint64_t *ids, size_t n)
{
	struct corr_map *m = calloc(1, sizeof(*m));
	uint64_t words = 0, used = 0;
	uint64_t *base;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->regions = calloc(n ? n : 1, sizeof(*m->regions));
	if (!m->regions) {
		free(m);
		return -ENOMEM;
	}
	m->nregions = n;
	m->page = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < n; i++) {
		if (hi[i] < lo[i])
			continue;
		m->regions[i].lo = lo[i];
		m->regions[i].n = (uint64_t)(hi[i] - lo[i]) + 1;
		words += m->regions[i].n;
		used += ids[i];
	}
	m->size = (size_t)(words ? words : 1) * sizeof(uint64_t);
	/* Dense and large: a file we can give pages back to. */
	if (words > CORR_ANON_MAX && words / 4 <= used) {
		int fd = temp_file();

		if (fd >= 0 && posix_fallocate(fd, 0, (off_t)m->size) == 0) {
			m->map = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m->map == MAP_FAILED)
				m->map = NULL;
			else
				m->shared = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	if (!m->map) {
		m->map = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			      -1, 0);
		if (m->map == MAP_FAILED) {
			free(m->regions);
			free(m);
			return -ENOMEM;
		}
	}
	base = m->map;
	for (size_t i = 0; i < n; i++) {
		m->regions[i].words = base;
		m->regions[i].block_low = m->regions[i].last_low = UINT64_MAX;
		base += m->regions[i].n;
	}
	*out = m;
	return 0;
}

/* Give back the pages below each region's lowest index of the block before. */
static void give_back(struct corr_map *m)
{
	for (size_t i = 0; i < m->nregions; i++) {
		struct corr_region *r = &m->regions[i];
		uintptr_t from = (uintptr_t)r->words, to;

		/* not the pages this block used: a new pass starts again from the lowest ids */
		uint64_t low = r->last_low < r->block_low ? r->last_low : r->block_low;

		if (low != UINT64_MAX && low) {
			from = (from + m->page - 1) & ~(uintptr_t)(m->page - 1);
			to = (uintptr_t)(r->words + low) & ~(uintptr_t)(m->page - 1);
			if (to > from)
				madvise((void *)from, to - from, MADV_DONTNEED);
		}
		r->last_low = r->block_low;
		r->block_low = UINT64_MAX;
	}
}

uint64_t *corr_map_at(struct corr_map *m, size_t trace, int64_t corr)
{
	struct corr_region *r;
	uint64_t i;

	if (trace >= m->nregions)
		return NULL;
	r = &m->regions[trace];
	if (corr < r->lo || (i = (uint64_t)(corr - r->lo)) >= r->n)
		return NULL;
	if (m->shared) {
		if (i < r->block_low)
			r->block_low = i;
		if (++m->lookups % CORR_BLOCK == 0)
			give_back(m);
	}
	return &r->words[i];
}

void corr_map_free(struct corr_map *m)
{
	if (!m)
		return;
	munmap(m->map, m->size);
	free(m->regions);
	free(m);
}
