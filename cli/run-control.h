/*
 * The control folder of processes run with `gpt-trace run --start-later` (inject/capture.c): each
 * armed process keeps <dir>/<pid>.armed (its command line) and reads <dir>/<pid>.cmd at its next
 * tick; dir is $GPT_TRACE_CONTROL_DIR, else /tmp/gpt-trace-<uid>. Used by `gpt-trace start/stop`.
 */
#ifndef GPT_CLI_RUN_CONTROL_H
#define GPT_CLI_RUN_CONTROL_H

/*
 * Send command ("start [NS]" or "stop") to the armed process target (a pid in text, or "all" for
 * every armed process of this user on this host), printing one line per process reached (verb:
 * "start", "stop"). Returns GPT_EXIT_OK, or 1 when no process was reached (after printing why).
 */
int control_send(const char *target, const char *command, const char *verb);

#endif
