/*
 * The usage errors of refused options (see usage.h). getopt_long() leaves the refused option in
 * optopt for a short one and in argv[optind - 1] for a long one; a short one that is not the last of
 * its cluster ("-xq") does not advance optind, so there argv[optind - 1] is the word before it.
 */
#include "cli/usage.h"

#include "common/util.h"

#include <getopt.h>
#include <stdio.h>
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

int usage_option_error(const char *command, enum usage_prefix prefix, int c, char **argv)
{
	char buf[3];
	int n;
	const char *at = refused(argv, buf, &n);

	pr_err("%s%s%s '%.*s'%s; see 'gpt-trace %s --help'", prefix == USAGE_NAMED ? command : "",
	       prefix == USAGE_NAMED ? ": " : "", c == ':' ? "option" : "unknown option", n, at,
	       c == ':' ? " needs a value" : "", command);
	return GPT_EXIT_USAGE;
}
