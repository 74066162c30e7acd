/*
 * The library's one clock for host timestamps. It is registered with CUPTI as its timestamp source
 * (cuptiActivityRegisterTimestampCallback), so that CUPTI's API records and GPU records (converted by
 * CUPTI) and our own NVTX timestamps are on the same clock, and so that NVTX events that happen
 * before CUDA (and CUPTI) are initialised can already be timestamped. CLOCK_MONOTONIC: read through
 * the vDSO (tens of ns), immune to wall-clock steps, and shared by all processes of a host, which is
 * what lets the traces of a multi-process job be aligned (GPT_META time_origin_ns).
 *
 * clock_offset is 0, except with a CUPTI that cannot take our clock: then it is the difference
 * between CUPTI's clock and ours, measured once, and added to every reading.
 */
#ifndef GPT_INJECT_CLOCK_H
#define GPT_INJECT_CLOCK_H

#include <stdint.h>
#include <time.h>

extern int64_t gpt_clock_offset;

static inline uint64_t gpt_clock_raw(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t gpt_clock_now(void)
{
	return gpt_clock_raw() + (uint64_t)gpt_clock_offset;
}

#endif
