/*
 * The library's one clock (see clock.h): the source every module reads, and the offset the
 * fallbacks measure; and the deadlines of its timed waits. Below inject.c, which picks the source from the configuration, and cupti.c,
 * which may switch it to CUPTI's.
 */
#include "inject/clock.h"

uint64_t gpt_clock_realtime(void)
{
	return gpt_clock_read(CLOCK_REALTIME);
}

uint64_t gpt_clock_monotonic(void)
{
	return gpt_clock_read(CLOCK_MONOTONIC);
}

struct timespec gpt_clock_deadline(unsigned timeout_ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000l;
	until.tv_sec += until.tv_nsec / 1000000000l;
	until.tv_nsec %= 1000000000l;
	return until;
}

/* Until the configuration is read: the default, monotonic. */
uint64_t (*gpt_clock_source)(void) = gpt_clock_monotonic;
int64_t gpt_clock_offset;
