/*
 * The library's one clock (see clock.h): the source every module reads, and the offset the
 * fallbacks measure. Below inject.c, which picks the source from the configuration, and cupti.c,
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

/* Until the configuration is read: the default, monotonic. */
uint64_t (*gpt_clock_source)(void) = gpt_clock_monotonic;
int64_t gpt_clock_offset;
