/*
 * Small helpers shared by every part of gpt-trace: messages and process-wide constants.
 *
 * pr_err() and pr_warn() print one line to stderr, prefixed with "gpt-trace: ", and return.
 * die() prints the same way and exits with status 2; only the CLI layer (cli/) may call it.
 * Messages are lowercase, without a trailing period, and name the thing and the reason:
 *   pr_err("cannot open '%s': %s", path, strerror(errno));
 */
#ifndef GPT_COMMON_UTIL_H
#define GPT_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define GPT_PREFIX "gpt-trace: "

/* Exit codes of the CLI: 0 success (no regression), 1 regression or findings gate, 2 usage/input error. */
enum gpt_exit {
	GPT_EXIT_OK = 0,
	GPT_EXIT_REGRESSION = 1,
	GPT_EXIT_USAGE = 2,
};

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* One line into err (errlen bytes; nothing when err is NULL or errlen 0): how the layers that
 * return errors upward word them. */
void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * a + b, held at INT64_MIN or INT64_MAX instead of overflowing: for sums of times and sizes read
 * from a trace, which a corrupt or hand-made file can make as large as it likes.
 */
static inline int64_t sat_add64(int64_t a, int64_t b)
{
	int64_t sum;

	if (__builtin_add_overflow(a, b, &sum))
		return a < 0 ? INT64_MIN : INT64_MAX;
	return sum;
}

/* Allocation that dies on failure: for the CLI and analyzer only, never for inject/. */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
/* A printf-formatted string in fresh memory. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
