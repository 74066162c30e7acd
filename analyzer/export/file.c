/*
 * The exporter's output file (file.h). An export never leaves a half-written file under
 * the name the user asked for: bytes go to "<path>.tmp.XXXXXX" in the same directory (so the final
 * rename stays within one file system and is atomic), which is flushed, fsync'ed and renamed over
 * the destination only after the writer finished without error; any failure removes it. A symbolic
 * link is followed: the file it names is replaced, the link stays. A destination that is not a
 * regular file (a pipe, /dev/stdout, a terminal, /dev/null) is written in place: renaming over it
 * would replace the device or pipe with a file, and for root under /dev that breaks the system.
 */
#include "analyzer/export/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define EXPORT_BUFFER_SIZE (256 * 1024)

struct export_file {
	int fd;
	gzFile gz;		/* NULL: plain output */
	char *path;		/* the destination */
	char *tmp_path;		/* NULL: written in place (not a regular file) */
	int error;		/* first write error (negative errno), sticky */
	size_t len;
	unsigned char buf[EXPORT_BUFFER_SIZE];
};

/* open(O_EXCL) with a random suffix instead of mkstemp(), so the file gets the usual 0666 & ~umask. */
static int open_temp(const char *path, char **tmp_out)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t n = strlen(path) + sizeof(".tmp.XXXXXX");
	char *tmp = malloc(n);
	struct timespec now;
	uint64_t seed;

	if (!tmp)
		return -ENOMEM;
	clock_gettime(CLOCK_REALTIME, &now);
	seed = (uint64_t)now.tv_nsec * 6364136223846793005ULL ^ (uint64_t)getpid() << 32 ^ (uint64_t)now.tv_sec;
	for (int attempt = 0; attempt < 100; attempt++) {
		char suffix[7];
		int fd;

		for (int i = 0; i < 6; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			suffix[i] = letters[(seed >> 33) % (sizeof(letters) - 1)];
		}
		suffix[6] = '\0';
		snprintf(tmp, n, "%s.tmp.%s", path, suffix);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			*tmp_out = tmp;
			return fd;
		}
		if (errno != EEXIST) {
			int e = errno;

			free(tmp);
			return -e;
		}
	}
	free(tmp);
	return -EEXIST;
}

int export_file_open(struct export_file **out, const char *path, int gzip, char *err, size_t errlen)
{
	struct export_file *file;
	struct stat st;
	int fd;

	*out = NULL;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(EISDIR));
		return -EISDIR;
	}
	file = calloc(1, sizeof(*file));
	if (!file) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	file->fd = -1;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		file->path = strdup(path);
		fd = !file->path ? -ENOMEM : open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && fd != -ENOMEM)
			fd = -errno;
	} else {
		/* through a symbolic link: the temporary goes beside the file it names */
		char *real = !lstat(path, &st) && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;

		file->path = real ? real : strdup(path);
		fd = !file->path ? -ENOMEM : open_temp(file->path, &file->tmp_path);
	}
	if (fd < 0)
		goto out_free;
	file->fd = fd;
	if (gzip) {
		int gzfd = dup(fd);

		/* gzclose() closes its descriptor; keep ours for fsync. */
		file->gz = gzfd < 0 ? NULL : gzdopen(gzfd, "wb6");
		if (!file->gz) {
			if (gzfd >= 0)
				close(gzfd);
			fd = -ENOMEM;
			goto out_abort;
		}
		gzbuffer(file->gz, EXPORT_BUFFER_SIZE);
	}
	*out = file;
	return 0;

out_abort:
	snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-fd));
	export_file_abort(file);
	return fd;
out_free:
	snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-fd));
	free(file->path);
	free(file);
	return fd;
}

static int flush_buffer(struct export_file *file)
{
	size_t done = 0;

	if (file->error)
		return file->error;
	if (file->gz) {
		if (file->len && gzwrite(file->gz, file->buf, (unsigned)file->len) != (int)file->len) {
			int zerr;

			gzerror(file->gz, &zerr);
			file->error = zerr == Z_ERRNO && errno ? -errno : -EIO;
			return file->error;
		}
		file->len = 0;
		return 0;
	}
	while (done < file->len) {
		ssize_t n = write(file->fd, file->buf + done, file->len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			file->error = -errno;
			return file->error;
		}
		done += (size_t)n;
	}
	file->len = 0;
	return 0;
}

int export_file_write(struct export_file *file, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (file->error)
		return file->error;
	while (len) {
		size_t room = sizeof(file->buf) - file->len;
		size_t n = len < room ? len : room;

		memcpy(file->buf + file->len, p, n);
		file->len += n;
		p += n;
		len -= n;
		if (file->len == sizeof(file->buf) && flush_buffer(file) < 0)
			return file->error;
	}
	return 0;
}

/* A rename is durable only once the directory holding the new name is synced too. */
static void sync_parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int export_file_commit(struct export_file *file, char *err, size_t errlen)
{
	int ret = flush_buffer(file);

	if (!ret && file->gz) {
		int zret = gzclose(file->gz);

		file->gz = NULL;
		if (zret != Z_OK)
			ret = zret == Z_ERRNO && errno ? -errno : -EIO;
	}
	if (!ret && file->tmp_path && fsync(file->fd) < 0)
		ret = -errno;
	if (!ret) {
		ret = close(file->fd) < 0 ? -errno : 0;
		file->fd = -1;
	}
	if (!ret && file->tmp_path && rename(file->tmp_path, file->path) < 0)
		ret = -errno;
	if (ret < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", file->path, strerror(-ret));
		export_file_abort(file);
		return ret;
	}
	if (file->tmp_path)
		sync_parent_dir(file->path);
	free(file->tmp_path);
	free(file->path);
	free(file);
	return 0;
}

void export_file_abort(struct export_file *file)
{
	if (!file)
		return;
	if (file->gz)
		gzclose(file->gz);
	if (file->fd >= 0)
		close(file->fd);
	if (file->tmp_path)
		unlink(file->tmp_path);
	free(file->tmp_path);
	free(file->path);
	free(file);
}
