/*
 * The library's one clock for the host timestamps it takes itself (NVTX events, the trace origin),
 * which must be the clock of CUPTI's records. Two ways to get there (GPT_TRACE_CLOCK):
 *
 *   monotonic  (default) CLOCK_MONOTONIC, registered with CUPTI as its timestamp source
 *              (cuptiActivityRegisterTimestampCallback), so that CUPTI's records use it too.
 *              Readable before CUPTI is loaded, immune to wall-clock steps, shared by all
 *              processes of a host (traces of one job align). On the H200 box clock_gettime
 *              costs 23 ns; 200,000 launches ran 140-210 ns per launch faster with it than with
 *              CUPTI's own clock in one run, equally fast (within noise) in another.
 *   cupti      CUPTI's own clock (CLOCK_REALTIME on Linux): read through cuptiGetTimestamp once
 *              CUPTI is loaded; before that (NVTX events of a process that has not initialised
 *              CUDA yet) CLOCK_REALTIME, shifted by the difference measured when CUPTI loads.
 *
 * gpt_clock_offset is 0 except in the fallbacks that measure a difference between clocks.
 */
#ifndef GPT_INJECT_CLOCK_H
#define GPT_INJECT_CLOCK_H

#include <stdint.h>
#include <time.h>

extern uint64_t (*gpt_clock_source)(void);
extern int64_t gpt_clock_offset;

static inline uint64_t gpt_clock_read(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* clock.c: the two sources the configuration picks from */
uint64_t gpt_clock_realtime(void);
uint64_t gpt_clock_monotonic(void);
/* The CLOCK_REALTIME time timeout_ms from now, as pthread's timed waits and locks take it. */
struct timespec gpt_clock_deadline(unsigned timeout_ms);

static inline uint64_t gpt_clock_now(void)
{
	return gpt_clock_source() + (uint64_t)gpt_clock_offset;
}

#endif
