/*
 * The session directory of one `gpt-trace run`: a private directory (mkdtemp under $TMPDIR, else
 * /tmp) whose path reaches every traced process as GPT_TRACE_SESSION. Each process appends one line
 * to its `traces` file when its trace is finalized: the absolute trace path, or `!<pid> <reason>`
 * if its trace failed (docs/launcher-env.md). The launcher reads the lines once the program has
 * ended, then removes the directory.
 */
#ifndef GPT_CLI_RUN_SESSION_H
#define GPT_CLI_RUN_SESSION_H

#include <stddef.h>

struct run_session {
	char *dir;	/* absolute; owned, freed by run_session_remove() */
};

/* Create the directory. Returns 0, or -1 after printing why. */
int run_session_create(struct run_session *session);

/*
 * The lines of the traces file, without their '\n', in the order they were written; empty lines
 * are skipped. *lines is NULL-terminated and freed with run_session_free_lines(). A missing file
 * means no process finished a trace: 0 lines.
 */
int run_session_read(const struct run_session *session, char ***lines, size_t *nlines);
void run_session_free_lines(char **lines);

/* Remove the directory and everything in it; accepts a session that was never created. */
void run_session_remove(struct run_session *session);

#endif
