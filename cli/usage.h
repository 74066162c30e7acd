/*
 * The usage error of an option that getopt_long() refused, said alike by every command (private to
 * cli/): "gpt-trace: unknown option '--bogus'; see 'gpt-trace report --help'", or "option '-o'
 * needs a value". Commands whose every message names them (run, doctor) say "gpt-trace: run: ...".
 * The option is named as the user wrote it: a long one without its "=VALUE", a short one alone, not
 * the cluster it came in ("-x" of "-qx").
 */
#ifndef GPT_CLI_USAGE_H
#define GPT_CLI_USAGE_H

#include <stddef.h>

enum usage_prefix {
	USAGE_PLAIN,	/* "gpt-trace: unknown option ..." */
	USAGE_NAMED,	/* "gpt-trace: COMMAND: unknown option ..." */
};

/* After getopt_long() returned c, ':' (no value) or '?' (unknown): say so, return GPT_EXIT_USAGE. */
int usage_option_error(const char *command, enum usage_prefix prefix, int c, char **argv);

/* The option getopt_long() just refused (returned ':' or '?'), as the user wrote it, into word. */
void usage_option_word(char *word, size_t len, char **argv);

#endif
