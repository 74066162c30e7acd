/*
 * The progress line (see progress.h).
 */
#include "common/progress.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int progress_enabled = 1;
static double command_started;	/* progress_command_start(); 0: each progress counts from its begin */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int progress_visible(void)
{
	return progress_enabled && isatty(STDERR_FILENO);
}

/* Seconds before a line may show: 2, or GPT_TRACE_PROGRESS_DELAY (the tests set 0). */
static double delay(void)
{
	const char *e = getenv("GPT_TRACE_PROGRESS_DELAY");
	char *end;
	double d = e ? strtod(e, &end) : 2.0;

	return e && end != e && d >= 0 ? d : 2.0;
}

void progress_command_start(void)
{
	command_started = now();
}

void progress_begin(struct progress *p, const char *what, const char *unit, int64_t total)
{
	p->what = what;
	p->unit = unit;
	p->done = 0;
	p->total = total;
	p->started = now();
	/* 2 s into the command: a command of many short steps shows each step past that point */
	p->next_check = (command_started ? command_started : p->started) + delay();
	p->rate_since = 0;
	p->rate_from = 0;
	p->shown = 0;
}

static void count(char *buf, size_t len, double n)
{
	if (n >= 1e6)
		snprintf(buf, len, "%.1fM", n / 1e6);
	else if (n >= 1e3)
		snprintf(buf, len, "%.0fk", n / 1e3);
	else
		snprintf(buf, len, "%.0f", n);
}

void progress_update(struct progress *p)
{
	double t = now(), rate;
	char done[32], total[32], per[32];

	if (!p->what)		/* never begun: a walk without a progress line */
		return;
	if (!p->rate_since) {
		p->rate_since = t;
		p->rate_from = p->done;
	}
	if (t < p->next_check || t <= p->rate_since || !progress_enabled || !isatty(STDERR_FILENO))
		return;
	p->next_check = t + 0.5;
	rate = (double)(p->done - p->rate_from) / (t - p->rate_since);
	count(done, sizeof(done), (double)p->done);
	count(per, sizeof(per), rate);
	if (p->total > p->done && rate > 0) {
		count(total, sizeof(total), (double)p->total);
		fprintf(stderr, "\r" GPT_PREFIX "%s: %s of %s %s, %s/s, %.0f s left   ", p->what, done, total, p->unit,
			per, (double)(p->total - p->done) / rate);
	} else {
		fprintf(stderr, "\r" GPT_PREFIX "%s: %s %s, %s/s   ", p->what, done, p->unit, per);
	}
	p->shown = 1;
}

void progress_end(struct progress *p)
{
	/* Erase the line, so that what follows starts clean. */
	if (p->shown)
		fprintf(stderr, "\r\033[K");
	p->shown = 0;
}
