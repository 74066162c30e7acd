/*
 * Capture windows: the spans of time a trace records (gpt-trace run --delay, --duration,
 * --capture-range, --max-size; docs/run.md), kept by the writer, stored in GPT_CAPTURE_WINDOWS
 * (docs/schema.md).
 *
 * The gate is here, on the writer thread, by timestamp: a row is kept when its start lies in a
 * window, so a kernel launched before cudaProfilerStop and running after it is kept, and one that
 * started before cudaProfilerStart is not ("keep what started inside"). Why here and not by turning
 * CUPTI's activity kinds off outside the windows: (1) it is exact, the window edge is the call's
 * own time, where toggling kinds acts on the launches after the toggle and CUPTI flushes between;
 * (2) the library's control events (cudaProfilerStart from an API callback, a timer) are queued
 * ahead of every buffer holding later records, so a window is known before any record it gates
 * reaches the writer; (3) it is testable without a GPU. The cost: outside a window the program pays
 * for tracing as before (about 1 us per launch), but nothing reaches the disk. Turning CUPTI off
 * between windows is a later optimisation on top of this gate (docs/run.md says what is left).
 *
 * Times are absolute ns on the records' clock. All functions run on the writer thread.
 */
#ifndef GPT_COLLECTOR_CAPTURE_WINDOWS_H
#define GPT_COLLECTOR_CAPTURE_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

#define WINDOW_OPEN_END UINT64_MAX
#define WINDOW_WHY_LEN 32

struct capture_window {
	uint64_t start, end;		/* end WINDOW_OPEN_END: not closed yet */
	char opened[WINDOW_WHY_LEN];	/* "delay", "start", "cudaProfilerStart", ... */
	char closed[WINDOW_WHY_LEN];	/* "duration", "cudaProfilerStop", "max-size", "exit", ... */
};

struct capture_windows {
	int gated;			/* 0: no capture options, every row is kept */
	int full;			/* --max-size reached: nothing more is kept */
	struct capture_window *list;	/* in order of opening */
	size_t count, capacity;
	uint64_t dropped;		/* rows not kept */
	int changed;			/* since the table was last written */
};

/* From now on only rows inside a window are kept (before the first window opens: none). */
void windows_gate(struct capture_windows *windows);
/*
 * Open a window at `at` (may lie in the future: --delay), unless the last one is still open then.
 * Returns 0, or -1 when out of memory (the window is lost; rows go on being gated).
 */
int windows_open(struct capture_windows *windows, uint64_t at, const char *why);
/*
 * Close the last window at `at` (may lie in the future: --duration), or earlier than a future end it
 * had; a window closed at or before its start recorded nothing and is forgotten.
 */
void windows_close(struct capture_windows *windows, uint64_t at, const char *why);
/* The trace ends at `at`: windows not yet begun are forgotten, an open one is closed with why. */
void windows_end(struct capture_windows *windows, uint64_t at, const char *why);
/* --max-size reached at `at`: close the open window there ("max-size"); keep nothing more. */
void windows_fill(struct capture_windows *windows, uint64_t at);
/* Whether a row that starts at t is kept; counts the ones that are not. */
int windows_keep(struct capture_windows *windows, uint64_t t);
void windows_release(struct capture_windows *windows);

#endif
