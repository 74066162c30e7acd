/*
 * Starting, signalling and waiting for the traced program (see run-child.h), in the manner of
 * `timeout --foreground`: no new process group, and signals from other processes passed on.
 */
#define _GNU_SOURCE /* pipe2 */
#include "cli/run-child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define NR_FORWARDED (sizeof(forwarded_signals) / sizeof(forwarded_signals[0]))

/* The dispositions the launcher inherited, given back to the child before exec and to us after. */
static struct sigaction inherited_actions[NR_FORWARDED];
static int handler_installed[NR_FORWARDED];

/* 0 while there is no child to forward to (before fork, after waitpid). */
static volatile sig_atomic_t forward_pid;

static void forward_signal(int sig, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	pid_t pid = forward_pid;

	(void)ucontext;
	/*
	 * Only signals another process sent to the launcher alone. The terminal's (SI_KERNEL)
	 * went to the whole foreground process group, child included; sending them again would
	 * deliver Ctrl-C twice. What the child sends us is not echoed back to it.
	 */
	if (pid <= 0 || info->si_pid == pid)
		goto out;
	if (info->si_code == SI_QUEUE)
		sigqueue(pid, sig, info->si_value);
	else if (info->si_code == SI_USER || info->si_code == SI_TKILL)
		kill(pid, sig);
out:
	errno = saved_errno;
}

static void restore_inherited_actions(void)
{
	for (size_t i = 0; i < NR_FORWARDED; i++) {
		if (handler_installed[i])
			sigaction(forwarded_signals[i], &inherited_actions[i], NULL);
		handler_installed[i] = 0;
	}
}

/*
 * A catching handler, not SIG_IGN, even for SIGINT and SIGQUIT that we only want to survive: exec
 * resets caught signals to SIG_DFL but keeps ignored ones ignored, and the program must start with
 * the dispositions it would have had without us.
 */
static int install_forwarding(void)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_sigaction = forward_signal;
	action.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&action.sa_mask);

	for (size_t i = 0; i < NR_FORWARDED; i++) {
		if (sigaction(forwarded_signals[i], NULL, &inherited_actions[i]) < 0)
			goto out_restore;
		/* Inherited as ignored (nohup, background jobs of scripts): the program's too. */
		if (inherited_actions[i].sa_handler == SIG_IGN)
			continue;
		if (sigaction(forwarded_signals[i], &action, NULL) < 0)
			goto out_restore;
		handler_installed[i] = 1;
	}
	return 0;

out_restore:
	restore_inherited_actions();
	return -errno;
}

int run_child_start(struct run_child *child, char *const argv[], int *exec_failed)
{
	sigset_t forwarded, saved_mask;
	int exec_pipe[2];
	int exec_errno = 0;
	ssize_t n;
	int ret;

	*exec_failed = 0;
	child->pid = -1;
	child->status = 0;

	/* The child reports a failed execvp() here; a successful one closes it (O_CLOEXEC). */
	if (pipe2(exec_pipe, O_CLOEXEC) < 0)
		return -errno;

	/* Blocked until forward_pid is set, so that none arrives with nobody to forward it to. */
	sigemptyset(&forwarded);
	for (size_t i = 0; i < NR_FORWARDED; i++)
		sigaddset(&forwarded, forwarded_signals[i]);
	sigprocmask(SIG_BLOCK, &forwarded, &saved_mask);

	ret = install_forwarding();
	if (ret < 0)
		goto out_unblock;

	fflush(NULL);
	child->pid = fork();
	if (child->pid == 0) {
		restore_inherited_actions();
		sigprocmask(SIG_SETMASK, &saved_mask, NULL);
		close(exec_pipe[0]);
		execvp(argv[0], argv);
		exec_errno = errno;
		/* If even this write fails, the parent reads end-of-file and sees status 127. */
		n = write(exec_pipe[1], &exec_errno, sizeof(exec_errno));
		(void)n;
		_exit(127);
	}
	if (child->pid < 0) {
		ret = -errno;
		restore_inherited_actions();
		goto out_unblock;
	}
	forward_pid = child->pid;
	ret = 0;

out_unblock:
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
	close(exec_pipe[1]);
	if (ret < 0) {
		close(exec_pipe[0]);
		return ret;
	}

	do
		n = read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(exec_pipe[0]);
	if (n == (ssize_t)sizeof(exec_errno)) {
		run_child_wait(child);
		*exec_failed = 1;
		return -exec_errno;
	}
	return 0;
}

int run_child_wait(struct run_child *child)
{
	int ret = 0;

	while (waitpid(child->pid, &child->status, 0) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			break;
		}
	}
	forward_pid = 0;
	/* From here on, Ctrl-C interrupts the launcher itself (it only prints the summary). */
	restore_inherited_actions();
	return ret;
}

void run_exit_like(int status)
{
	struct rlimit no_core = { 0, 0 };
	struct sigaction action;
	sigset_t mask;
	int sig;

	fflush(NULL);
	if (WIFEXITED(status))
		exit(WEXITSTATUS(status));
	if (!WIFSIGNALED(status))
		exit(EXIT_FAILURE);

	sig = WTERMSIG(status);
	/* The program already dumped core if it was going to; a second dump would overwrite it. */
	setrlimit(RLIMIT_CORE, &no_core);
	memset(&action, 0, sizeof(action));
	action.sa_handler = SIG_DFL;
	sigemptyset(&action.sa_mask);
	sigaction(sig, &action, NULL);
	sigemptyset(&mask);
	sigaddset(&mask, sig);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	raise(sig);

	/* Only for a signal whose default action is not to terminate: a dead child had none. */
	exit(128 + sig);
}
