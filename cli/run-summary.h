/*
 * What `gpt-trace run` says once the program has ended: one short line per trace a process
 * finished (its path, kernels, copies, how busy each GPU was), the failures the processes
 * reported, and a loud warning when CUPTI dropped records. Everything goes to stderr, so the
 * program's stdout stays exactly its own.
 */
#ifndef GPT_CLI_RUN_SUMMARY_H
#define GPT_CLI_RUN_SUMMARY_H

#include <stddef.h>
#include <sys/types.h>

/*
 * lines: the session's traces file (run-session.h): `+pid path` when a process created a trace,
 * `path` when it finished it, `!pid reason` when it failed. A trace created but not finished is
 * recovered (run-recover.h) and listed as recovered or partial. quiet: print only problems
 * (failures, recovered or unreadable traces, dropped records). program_pid, program_status: the
 * program's pid and waitpid() status, to say how its trace ended and to tell "no process used
 * CUDA" from "killed before any trace was created".
 */
void run_summary_print(char *const *lines, size_t nlines, int quiet, pid_t program_pid,
		       int program_status);

#endif
