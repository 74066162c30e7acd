/*
 * Recovering a trace whose process never finished it (SIGKILL, the OOM killer, a raw exit_group,
 * a finalization that timed out): the launcher outlives the program, so it opens the file
 * read-write, which makes SQLite roll back a hot journal (or checkpoint a WAL), and adds to GPT_META
 * what it knows: how the process ended and when, and that the launcher recovered the trace.
 */
#ifndef GPT_CLI_RUN_RECOVER_H
#define GPT_CLI_RUN_RECOVER_H

#include <stddef.h>
#include <sys/types.h>

struct run_recovery {
	int journal;	/* a hot journal or a WAL was found beside the file (rolled back now) */
	int annotated;	/* the GPT_META rows were written */
};

/*
 * Recover path, a trace of process pid. status: the program's waitpid() status when pid is the
 * program itself, -1 when it is another process (its end is unknown). Returns 0, or -1 with one
 * line in err (the file could not be opened or written: it may still be readable as it is).
 */
int run_recover(const char *path, pid_t pid, int status, struct run_recovery *out, char *err,
		size_t errlen);

#endif
