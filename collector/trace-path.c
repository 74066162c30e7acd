/*
 * Trace file names (see trace-path.h).
 */
#include "collector/trace-path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int trace_path_expand(const char *pattern, pid_t pid, const char *host, long rank, char *out, size_t outlen)
{
	size_t n = 0;

	for (const char *p = pattern; *p; p++) {
		char num[24];
		const char *piece = NULL;
		size_t len;

		if (p[0] == '%' && p[1] == 'p') {
			snprintf(num, sizeof(num), "%ld", (long)pid);
			piece = num;
			p++;
		} else if (p[0] == '%' && p[1] == 'r') {
			snprintf(num, sizeof(num), "%ld", rank >= 0 ? rank : (long)pid);
			piece = num;
			p++;
		} else if (p[0] == '%' && p[1] == 'h') {
			piece = host;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			piece = "%";
			p++;
		}
		if (piece) {
			len = strlen(piece);
			if (n + len >= outlen)
				return -ENAMETOOLONG;
			memcpy(out + n, piece, len);
			n += len;
		} else {
			if (n + 1 >= outlen)
				return -ENAMETOOLONG;
			out[n++] = *p;
		}
	}
	if (n >= outlen)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

/* "dir/trace.sqlite" + 2 -> "dir/trace.2.sqlite"; "dir/trace" + 2 -> "dir/trace.2". */
static int numbered_name(const char *path, unsigned number, char *out, size_t outlen)
{
	const char *base = strrchr(path, '/');
	const char *dot;
	int n;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		n = snprintf(out, outlen, "%s.%u", path, number);
	else
		n = snprintf(out, outlen, "%.*s.%u%s", (int)(dot - path), path, number, dot);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int trace_path_create(const char *path, int force, char *actual, size_t actual_len)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);

	if (strlen(path) >= actual_len)
		return -ENAMETOOLONG;
	strcpy(actual, path);
	for (unsigned number = 1; number < 10000; number++) {
		int fd = open(actual, flags, 0644);

		if (fd >= 0) {
			char journal[4096];

			close(fd);
			/* A journal left by an earlier file of this name would be replayed into ours. */
			if (snprintf(journal, sizeof(journal), "%s-journal", actual) < (int)sizeof(journal))
				unlink(journal);
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
		if (numbered_name(path, number, actual, actual_len) < 0)
			return -ENAMETOOLONG;
	}
	return -EEXIST;
}
