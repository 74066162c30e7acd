/*
 * Commands to armed processes (see run-control.h): a file written whole and renamed into place, so
 * the library never reads half a command; a process that is gone loses its .armed file here. A
 * process armed but still starting (its .armed file's second line says "starting": CUDA has not
 * started) takes the command too, and does it when CUDA starts (inject/capture.c).
 */
#define _GNU_SOURCE
#include "cli/run-control.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void control_dir(char *dir, size_t len)
{
	const char *env = getenv("GPT_TRACE_CONTROL_DIR");

	if (env && *env)
		snprintf(dir, len, "%s", env);
	else
		snprintf(dir, len, "/tmp/gpt-trace-%u", (unsigned)getuid());
}

/* Whether pid is alive (kill with signal 0 sends nothing: it only checks). */
static int alive(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* One process: 1 sent, 0 not armed (or gone), -1 could not write. */
static int send_one(const char *dir, long pid, const char *command, const char *verb)
{
	char armed[PATH_MAX + 32], tmp[PATH_MAX + 32], cmd[PATH_MAX + 32], line[1024] = "";
	int fd, starting;
	ssize_t n;

	snprintf(armed, sizeof(armed), "%s/%ld.armed", dir, pid);
	fd = open(armed, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	line[n > 0 ? n : 0] = '\0';
	starting = strstr(line, "\nstarting\n") != NULL;
	line[strcspn(line, "\n")] = '\0';
	if (!alive(pid)) {
		unlink(armed);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s/%ld.cmd.tmp", dir, pid);
	snprintf(cmd, sizeof(cmd), "%s/%ld.cmd", dir, pid);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, command, strlen(command)) != (ssize_t)strlen(command) ||
	    close(fd) < 0 || rename(tmp, cmd) < 0) {
		pr_err("cannot %s process %ld: cannot write '%s': %s", verb, pid, cmd, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		return -1;
	}
	printf("gpt-trace: %s sent to process %ld (%s)%s\n", verb, pid, line,
	       starting ? ": still starting, CUDA not initialised yet; it acts when CUDA starts" : "");
	return 1;
}

int control_send(const char *target, const char *command, const char *verb)
{
	char dir[PATH_MAX];
	int sent = 0, failed = 0;
	struct stat st;

	control_dir(dir, sizeof(dir));
	if (lstat(dir, &st) == 0 && (!S_ISDIR(st.st_mode) || st.st_uid != getuid())) {
		pr_err("%s: '%s' is not a folder of this user: refusing to use it", verb, dir);
		return 1;
	}
	if (strcmp(target, "all")) {
		char *end;
		long pid = strtol(target, &end, 10);

		if (*end || pid <= 0) {
			pr_err("%s: invalid process '%s': expected a pid or all", verb, target);
			return GPT_EXIT_USAGE;
		}
		sent = send_one(dir, pid, command, verb);
		if (sent == 0)
			pr_err("%s: process %ld is not armed: run it with 'gpt-trace run --start-later'",
			       verb, pid);
		return sent > 0 ? GPT_EXIT_OK : 1;
	}
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		int rc;

		if (pid <= 0 || strcmp(end, ".armed"))
			continue;
		rc = send_one(dir, pid, command, verb);
		sent += rc > 0;
		failed += rc < 0;
	}
	if (d)
		closedir(d);
	if (!sent && !failed)
		pr_err("%s: no armed process on this host: run one with 'gpt-trace run --start-later'",
		       verb);
	return sent && !failed ? GPT_EXIT_OK : 1;
}
