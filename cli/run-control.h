/*
 * The control folder of processes run with `gpt-trace run --start-later` (inject/capture.c): each
 * armed process keeps <dir>/<pid>.armed (its command line, then "starting" until CUDA starts) and
 * reads <dir>/<pid>.cmd at its next tick (or when CUDA starts); dir is $GPT_TRACE_CONTROL_DIR, else /tmp/gpt-trace-<uid>. Used by `gpt-trace start/stop`.
 */
#ifndef GPT_CLI_RUN_CONTROL_H
#define GPT_CLI_RUN_CONTROL_H

#include <stdint.h>

/*
 * Commands take effect at an instant CONTROL_LEAD_NS after they are sent, on CLOCK_MONOTONIC (one
 * clock for every process of the host): each process reads its command at its own tick, up to
 * half its commit interval (0.5 s by default) later, and without a common instant the ranks of a
 * job opened their windows up to that far apart (22 steps apart on a 2-rank DDP job, H200,
 * 2026-11-27), so their windows held different steps.
 */
#define CONTROL_LEAD_NS 1000000000ull

/* CLOCK_MONOTONIC now, in ns. */
uint64_t monotonic_ns(void);

/*
 * Send command ("start DURATION_NS AT_NS" or "stop AT_NS", AT_NS on CLOCK_MONOTONIC) to the armed
 * process target (a pid in text, or "all" for every armed process of this user on this host),
 * printing one line per process reached (verb: "start", "stop"). Returns GPT_EXIT_OK, or 1 when no
 * process was reached (after printing why).
 */
int control_send(const char *target, const char *command, const char *verb);

#endif
