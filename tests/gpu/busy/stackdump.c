/*
 * Diagnostic preload for hang hunts (tests/gpu/busy/hang-hunt.sh), not part of gpt-trace: on SIGUSR2
 * the thread that takes it appends its backtrace to $STACKDUMP_DIR/stacks.PID.txt. A thread that
 * blocks SIGUSR2 (CUDA's, CUPTI's and gpt-trace's own threads block every signal) never takes it.
 * Build: cc -O2 -shared -fPIC -o libstackdump.so stackdump.c
 */
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static char path[512];

static void on_usr2(int sig)
{
	void *pcs[64];
	char head[64];
	int n = backtrace(pcs, 64), fd, len;

	(void)sig;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0)
		return;
	len = snprintf(head, sizeof(head), "thread %ld:\n", (long)syscall(SYS_gettid));
	if (write(fd, head, (size_t)len) < 0) {
		close(fd);
		return;
	}
	backtrace_symbols_fd(pcs, n, fd);
	close(fd);
}

__attribute__((constructor)) static void stackdump_init(void)
{
	const char *dir = getenv("STACKDUMP_DIR");
	struct sigaction sa;
	void *pc;

	snprintf(path, sizeof(path), "%s/stacks.%d.txt", dir ? dir : "/tmp", (int)getpid());
	backtrace(&pc, 1); /* loads the unwinder now: its first use dlopens libgcc_s */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
}
