/*
 * The command-line loop and usage errors every command shares (see usage.h). getopt_long() leaves
 * the refused option in optopt for a short one and in argv[optind - 1] for a long one; a short one
 * that is not the last of its cluster ("-xq") does not advance optind, so there argv[optind - 1] is
 * the word before it.
 */
#include "cli/usage.h"

#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The refused option: its first *len characters at the returned address (short: two in buf). */
static const char *refused(char **argv, char buf[3], int *len)
{
	const char *arg = argv[optind - 1];

	if (strncmp(arg, "--", 2) && optopt > 0 && optopt < 128) {
		buf[0] = '-';
		buf[1] = (char)optopt;
		buf[2] = '\0';
		*len = 2;
		return buf;
	}
	*len = (int)strcspn(arg, "=");
	return arg;
}

void usage_option_word(char *word, size_t len, char **argv)
{
	char buf[3];
	int n;
	const char *at = refused(argv, buf, &n);

	snprintf(word, len, "%.*s", n, at);
}

/* After getopt_long() returned c, ':' (no value) or '?' (unknown): say so. */
static void option_error(const char *command, enum usage_prefix prefix, int c, char **argv)
{
	char buf[3];
	int n;
	const char *at = refused(argv, buf, &n);

	pr_err("%s%s%s '%.*s'%s; see 'gpt-trace %s --help'", prefix == USAGE_NAMED ? command : "",
	       prefix == USAGE_NAMED ? ": " : "", c == ':' ? "option" : "unknown option", n, at,
	       c == ':' ? " needs a value" : "", command);
}

int usage_error_synopsis(const char *help, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pr_err("%s", line);
	fprintf(stderr, "%.*s\n", (int)strcspn(help, "\n"), help);
	return GPT_EXIT_USAGE;
}

int usage_positive(const char *option, const char *arg, int *n)
{
	*n = atoi(arg);
	if (*n < 1) {
		pr_err("invalid %s '%s': want a positive number", option, arg);
		return -1;
	}
	return 0;
}

int usage_status(int parsed)
{
	return parsed > 0 ? GPT_EXIT_OK : GPT_EXIT_USAGE;
}

/* The command's options and --help, as getopt_long() takes them (free both). */
static void usage_options(const struct usage_command *uc, char **shortopts,
			  struct option **longopts)
{
	static const struct option help = { "help", no_argument, NULL, 'h' };
	size_t n = 0;

	/* ':' first: a missing value is told from an unknown option; '+': stop at the program */
	*shortopts = xasprintf("%s:%sh", uc->args == USAGE_ARGS_IN_ORDER ? "+" : "", uc->shortopts);
	while (uc->longopts[n].name)
		n++;
	*longopts = xcalloc(n + 2, sizeof(**longopts));
	memcpy(*longopts, uc->longopts, n * sizeof(**longopts));
	(*longopts)[n] = help;
}

int usage_parse(const struct usage_command *uc, void *cmd, int argc, char **argv)
{
	struct option *longopts;
	char *shortopts;
	int c, ret = 0;

	usage_options(uc, &shortopts, &longopts);
	optind = 1;
	opterr = 0;	/* one message of our own, not getopt's plus the usage */
	while (!ret && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(uc->help, stdout);
			ret = 1;
		} else if (c == ':' || c == '?') {
			option_error(uc->name, uc->prefix, c, argv);
			ret = -1;
		} else {
			ret = uc->option(cmd, c, optarg) ? -1 : 0;
		}
	}
	free(shortopts);
	free(longopts);
	if (!ret && uc->args == USAGE_ARGS_TRACE && optind >= argc) {
		pr_err("no trace given; %.*s", (int)strcspn(uc->help, "\n"), uc->help);
		ret = -1;
	}
	return ret;
}
