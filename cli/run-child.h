/*
 * The traced program as a child of `gpt-trace run`: start it, forward signals to it, wait for it,
 * and finally leave the launcher the way the program left (its exit status, or death by the same
 * signal), so that a shell, a job scheduler or `make` cannot tell the launcher from the program.
 *
 * The child stays in the launcher's process group, so it remains in the terminal's foreground
 * group: Ctrl-C, Ctrl-\ and terminal hang-ups reach it directly from the kernel, and interactive
 * programs can read the terminal. While it runs, the launcher forwards SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1 and SIGUSR2 that another process sent with kill()/sigqueue(), but not the ones
 * the terminal generated (the child already got those); a signal the launcher inherited as ignored
 * stays ignored for both, as it would be for the program run directly.
 */
#ifndef GPT_CLI_RUN_CHILD_H
#define GPT_CLI_RUN_CHILD_H

#include <sys/types.h>

struct run_child {
	pid_t pid;
	int status;	/* waitpid() status once run_child_wait() returned 0 */
};

/*
 * Fork and execvp(argv[0], argv) with the launcher's environment, descriptors and working
 * directory, and start forwarding signals. Returns 0 once the program is executing; -errno of
 * fork() (with *exec_failed = 0) or of execvp() (with *exec_failed = 1; the child is already
 * reaped) otherwise.
 */
int run_child_start(struct run_child *child, char *const argv[], int *exec_failed);

/* Wait for the child to end, then stop forwarding signals. Returns 0 or -errno of waitpid(). */
int run_child_wait(struct run_child *child);

/*
 * End the launcher as a waitpid() status says the program ended: exit with its exit status, or
 * re-raise its fatal signal on ourselves (without a second core dump). Does not return.
 */
void run_exit_like(int status) __attribute__((noreturn));

#endif
