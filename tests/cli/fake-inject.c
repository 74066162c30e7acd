/*
 * A stand-in for libgpt_inject.so in the launcher tests (given through GPT_TRACE_INJECT_LIB), so
 * that they run without CUDA and without the real library. It acts out the library's side of
 * docs/launcher-env.md in every process it is loaded into:
 *   FAKE_INJECT_LOG=file    append "<pid>\n" (shows LD_PRELOAD reached the process)
 *   FAKE_INJECT_LINES=file  append the content of file to $GPT_TRACE_SESSION/traces in one write
 *                           (what processes report when their trace is finished or failed)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void append(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	if (write(fd, buf, len) < 0)
		perror(path);
	close(fd);
}

__attribute__((constructor)) static void fake_inject_init(void)
{
	const char *log = getenv("FAKE_INJECT_LOG");
	const char *lines = getenv("FAKE_INJECT_LINES");
	const char *session = getenv("GPT_TRACE_SESSION");
	char buf[4096], path[4096];
	ssize_t n;
	int fd;

	if (log) {
		n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
		append(log, buf, n);
	}
	if (lines && session) {
		fd = open(lines, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		snprintf(path, sizeof(path), "%s/traces", session);
		if (n > 0)
			append(path, buf, n);
	}
}
