/*
 * Files a fatal signal must not leave behind: the temporary twin of a trace being converted
 * (analyzer/import/trace-out.c). While a path is registered, SIGINT, SIGTERM and SIGHUP (those the
 * process does not ignore) remove it, then take their previous action: the process dies of the
 * signal as it would have, or the program's own handler runs. A signal that cannot be caught
 * (SIGKILL) leaves the file; trace-out.c removes such leftovers of dead processes later (their
 * names carry the pid). At most CLEANUP_MAX paths at a time; beyond, a path is not registered (and
 * says so by returning -1).
 */
#ifndef GPT_COMMON_CLEANUP_H
#define GPT_COMMON_CLEANUP_H

#define CLEANUP_MAX 16

/* Register path (copied; at most 4095 bytes): 0, or -1 when no slot is free. */
int cleanup_add(const char *path);
/* Forget path (its file is the caller's again). */
void cleanup_remove(const char *path);

#endif
