/*
 * A progress line for long analyses: "gpt-trace: report: 4.2M of 10.0M operations, 2.1M/s, 3 s left",
 * rewritten in place on stderr. It appears only when stderr is a terminal, the CLI has not turned
 * it off (-q), and the command has run for 2 s (progress_command_start(); GPT_TRACE_PROGRESS_DELAY
 * sets other seconds, for tests); it is erased when the work ends. Ticks are cheap (a counter; the
 * clock is read every 64k events), so a walk can tick once per event.
 */
#ifndef GPT_COMMON_PROGRESS_H
#define GPT_COMMON_PROGRESS_H

#include <stdint.h>

struct progress {
	const char *what;	/* "report: phases", ... */
	const char *unit;	/* "operations" */
	int64_t done, total;	/* total 0: unknown, no ETA */
	double started, next_check;
	double rate_since;	/* when the rate is measured from (the first update: the rows of a
				   sorted query only start after SQLite's sort) */
	int64_t rate_from;
	int shown;
};

/* Whether progress lines may be shown at all (the CLI's -q sets 0); default 1. */
extern int progress_enabled;

/* Whether a line could show now (enabled, stderr a terminal): skip counting totals when not. */
int progress_visible(void);

/* The command starts now: from here on, a progress line may show once the command (not the step
 * that shows it) has run for 2 s. Without it, each step counts its 2 s from its progress_begin(). */
void progress_command_start(void);
void progress_begin(struct progress *p, const char *what, const char *unit, int64_t total);
void progress_update(struct progress *p);	/* the slow path of progress_tick() */
void progress_end(struct progress *p);

static inline void progress_tick(struct progress *p)
{
	if ((++p->done & 0xffff) == 0)
		progress_update(p);
}

#endif
