/*
 * A test program for the `gpt-trace run` tests: it shows what a traced program received (argv,
 * environment), ends in chosen ways (exit status, signal), catches signals, and drives the
 * launcher from outside (wait status, signals sent once the program is ready, Ctrl-C typed on a
 * pseudo-terminal). Waiting for "ready" is a bounded poll on a file, never a timed assertion.
 *
 *   run-probe args [ARG...]          print each argument, bytes outside printable ASCII as \xNN
 *   run-probe env                    print the environment, one variable per line, sorted
 *   run-probe exit N                 exit with status N
 *   run-probe raise SIG              die of signal SIG
 *   run-probe trap SIG READY         catch SIG, create READY; once SIG comes print "caught SIG"
 *                                    (its short name, e.g. TERM) and exit 42
 *   run-probe wait READY             create READY and wait to be killed
 *   run-probe status CMD...          run CMD, print "exit N" or "signal N"
 *   run-probe broken-stderr CMD...   the same, with CMD's stderr a pipe nobody reads any more
 *   run-probe kill-when-ready SIG READY CMD...
 *                                    run CMD, send it SIG once READY exists, print its status
 *   run-probe ctrl-c READY CMD...    run CMD on a new pseudo-terminal as its foreground process
 *                                    group, type Ctrl-C once READY exists, print its status
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

static int cmp_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_status(int status)
{
	if (WIFEXITED(status))
		printf("exit %d\n", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("signal %d\n", WTERMSIG(status));
	else
		printf("status 0x%x\n", status);
}

static void create_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		perror(path);
		exit(99);
	}
	close(fd);
}

/*
 * Wait until READY exists (the program is set up), up to a minute: long enough for a loaded CI
 * machine, short enough not to hang the suite. If the launcher ends first (it refused to run the
 * program), say how and return -1 with it reaped.
 */
static int wait_ready(const char *path, pid_t pid)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int status;

	for (int i = 0; i < 6000; i++) {
		if (!access(path, F_OK))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			printf("ended before the program was ready: ");
			print_status(status);
			return -1;
		}
		nanosleep(&tick, NULL);
	}
	printf("'%s' never appeared: killed\n", path);
	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* The programs the probe starts get default signal handling, whatever ctest gave the probe. */
static void reset_signals(void)
{
	sigset_t none;

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* own_group: a process group of its own, so that a hung launcher and its program both go. */
static pid_t spawn(char **argv, int own_group)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (own_group)
			setpgid(0, 0);
		reset_signals();
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	return pid;
}

static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("waitpid");
			exit(99);
		}
	}
	return status;
}

/*
 * For a launcher that was sent a signal: a broken one may never end (a signal not forwarded), and
 * the suite must say so instead of hanging. Its process group goes, program included.
 */
static void print_bounded_status(pid_t pid)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int status;

	for (int i = 0; i < 6000; i++) {
		pid_t done = waitpid(pid, &status, WNOHANG);

		if (done == pid) {
			print_status(status);
			return;
		}
		if (done < 0 && errno != EINTR) {
			perror("waitpid");
			exit(99);
		}
		nanosleep(&tick, NULL);
	}
	kill(-pid, SIGKILL);
	wait_child(pid);
	printf("still running a minute after the signal: killed\n");
}

static int cmd_ctrl_c(const char *ready, char **argv)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	char buf[256];
	pid_t pid;

	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) {
		perror("posix_openpt");
		return 99;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int slave;

		/* A new session controlled by the pty: its process group is the foreground one. */
		setsid();
		slave = open(ptsname(master), O_RDWR);
		if (slave < 0 || ioctl(slave, TIOCSCTTY, 0) < 0) {
			perror("pty");
			_exit(99);
		}
		dup2(slave, STDIN_FILENO);
		close(slave);
		close(master);
		reset_signals();
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (wait_ready(ready, pid) < 0)
		return 0;
	/* ^C, the terminal's VINTR: the kernel signals the whole foreground process group. */
	if (write(master, "\003", 1) != 1) {
		perror("write pty");
		return 99;
	}
	print_bounded_status(pid);
	/* Drain the echo so nothing blocks; then the pty goes away with us. */
	fcntl(master, F_SETFL, O_NONBLOCK);
	while (read(master, buf, sizeof(buf)) > 0)
		;
	close(master);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "args")) {
		printf("%d arguments\n", argc - 2);
		for (int i = 2; i < argc; i++) {
			putchar('<');
			for (const unsigned char *p = (const unsigned char *)argv[i]; *p; p++) {
				if (*p >= 0x20 && *p < 0x7f && *p != '\\')
					putchar(*p);
				else
					printf("\\x%02x", *p);
			}
			puts(">");
		}
		return 0;
	}
	if (!strcmp(cmd, "env")) {
		size_t n = 0;

		while (environ[n])
			n++;
		qsort(environ, n, sizeof(char *), cmp_strings);
		for (size_t i = 0; i < n; i++)
			puts(environ[i]);
		return 0;
	}
	if (!strcmp(cmd, "exit") && argc == 3)
		return atoi(argv[2]);
	if (!strcmp(cmd, "raise") && argc == 3) {
		int sig = atoi(argv[2]);

		signal(sig, SIG_DFL);
		raise(sig);
		return 98;
	}
	if (!strcmp(cmd, "trap") && argc == 4) {
		int sig = atoi(argv[2]);
		struct sigaction action;
		sigset_t block, old;

		memset(&action, 0, sizeof(action));
		action.sa_handler = on_signal;
		sigaction(sig, &action, NULL);
		sigemptyset(&block);
		sigaddset(&block, sig);
		sigprocmask(SIG_BLOCK, &block, &old);
		sigdelset(&old, sig);
		create_file(argv[3]);
		while (!caught)
			sigsuspend(&old);
		printf("caught %s\n", sigabbrev_np(caught));
		return 42;
	}
	if (!strcmp(cmd, "wait") && argc == 3) {
		create_file(argv[2]);
		for (;;)
			pause();
	}
	if (!strcmp(cmd, "status") && argc >= 3) {
		print_status(wait_child(spawn(argv + 2, 0)));
		return 0;
	}
	if (!strcmp(cmd, "broken-stderr") && argc >= 3) {
		int fds[2];
		pid_t pid;

		if (pipe(fds) < 0) {
			perror("pipe");
			return 99;
		}
		close(fds[0]);
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			dup2(fds[1], STDERR_FILENO);
			reset_signals();
			signal(SIGPIPE, SIG_DFL);
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		close(fds[1]);
		print_status(wait_child(pid));
		return 0;
	}
	if (!strcmp(cmd, "kill-when-ready") && argc >= 5) {
		pid_t pid = spawn(argv + 4, 1);

		setpgid(pid, pid);
		if (wait_ready(argv[3], pid) < 0)
			return 0;
		kill(pid, atoi(argv[2]));
		print_bounded_status(pid);
		return 0;
	}
	if (!strcmp(cmd, "ctrl-c") && argc >= 4)
		return cmd_ctrl_c(argv[2], argv + 3);

	fprintf(stderr, "run-probe: bad arguments (see the comment at the top of run-probe.c)\n");
	return 99;
}
