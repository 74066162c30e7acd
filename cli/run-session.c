/*
 * The session directory shared by the launcher and the traced processes (see run-session.h).
 */
#include "cli/run-session.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACES_FILE "traces"

static char *make_session_dir(const char *parent)
{
	size_t len = strlen(parent) + sizeof("/gpt-trace-session-XXXXXX");
	char *template = xmalloc(len);
	char *dir;

	snprintf(template, len, "%s/gpt-trace-session-XXXXXX", parent);
	if (!mkdtemp(template)) {
		free(template);
		return NULL;
	}
	/* Traced programs may chdir; the path they append to must not depend on their cwd. */
	dir = realpath(template, NULL);
	if (!dir) {
		int saved_errno = errno;

		rmdir(template);
		errno = saved_errno;
	}
	free(template);
	return dir;
}

int run_session_create(struct run_session *session)
{
	const char *tmpdir = getenv("TMPDIR");

	session->dir = NULL;
	if (tmpdir && *tmpdir) {
		session->dir = make_session_dir(tmpdir);
		if (session->dir)
			return 0;
		pr_warn("cannot create a session directory in TMPDIR '%s': %s; trying /tmp", tmpdir,
			strerror(errno));
	}
	session->dir = make_session_dir("/tmp");
	if (session->dir)
		return 0;
	pr_err("cannot create a session directory in '/tmp': %s", strerror(errno));
	return -1;
}

static int read_whole_file(int fd, char **out, size_t *out_len)
{
	size_t cap = 4096, len = 0;
	char *buf = xmalloc(cap);

	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved_errno = errno;

			free(buf);
			return -saved_errno;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

int run_session_read(const struct run_session *session, char ***lines, size_t *nlines)
{
	size_t len = strlen(session->dir) + sizeof("/" TRACES_FILE);
	char *path = xmalloc(len);
	char *text = NULL, *line, *next;
	size_t text_len = 0, n = 0;
	char **result;
	int fd, ret;

	*lines = NULL;
	*nlines = 0;
	snprintf(path, len, "%s/" TRACES_FILE, session->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = errno == ENOENT ? 0 : -errno;
		if (ret < 0)
			pr_err("cannot read '%s': %s", path, strerror(-ret));
		else
			*lines = xcalloc(1, sizeof(char *));
		free(path);
		return ret;
	}
	ret = read_whole_file(fd, &text, &text_len);
	close(fd);
	if (ret < 0) {
		pr_err("cannot read '%s': %s", path, strerror(-ret));
		free(path);
		return ret;
	}
	free(path);

	/* At most one line per '\n', plus a last line a killed writer left without one. */
	result = xcalloc(text_len / 2 + 2, sizeof(char *));
	for (line = text; line < text + text_len; line = next) {
		char *end = memchr(line, '\n', text + text_len - line);

		if (!end)
			end = text + text_len;
		next = end + 1;
		*end = '\0';
		if (*line)
			result[n++] = xstrdup(line);
	}
	free(text);
	*lines = result;
	*nlines = n;
	return 0;
}

void run_session_free_lines(char **lines)
{
	if (!lines)
		return;
	for (char **line = lines; *line; line++)
		free(*line);
	free(lines);
}

void run_session_remove(struct run_session *session)
{
	DIR *dir;
	struct dirent *entry;

	if (!session->dir)
		return;
	/* Flat by contract: the processes write files, never subdirectories. */
	dir = opendir(session->dir);
	if (dir) {
		while ((entry = readdir(dir)) != NULL) {
			if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
				continue;
			unlinkat(dirfd(dir), entry->d_name, 0);
		}
		closedir(dir);
	}
	if (rmdir(session->dir) < 0)
		pr_warn("cannot remove the session directory '%s': %s", session->dir,
			strerror(errno));
	free(session->dir);
	session->dir = NULL;
}
