/*
 * What `gpt-trace run` says once the program has ended: one short line per trace a process
 * finished (its path, kernels, copies, how busy each GPU was), the failures the processes
 * reported, and a loud warning when CUPTI dropped records. Everything goes to stderr, so the
 * program's stdout stays exactly its own.
 */
#ifndef GPT_CLI_RUN_SUMMARY_H
#define GPT_CLI_RUN_SUMMARY_H

#include <stddef.h>

/*
 * lines: the session's traces file (run-session.h). quiet: print only problems (failures,
 * unreadable traces, dropped records). program_status: the program's waitpid() status, to tell
 * "no process used CUDA" from "killed before a trace was finished".
 */
void run_summary_print(char *const *lines, size_t nlines, int quiet, int program_status);

#endif
