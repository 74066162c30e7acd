/*
 * What every command says alike about its command line (private to cli/): the getopt_long() loop
 * of the commands that take options, with -h/--help printing the command's help text and each
 * refused option a usage error, so that a command file holds only its own options and their
 * meaning; and the usage errors themselves (a refused option, a count that is not one, the wrong
 * arguments). A refused option reads "gpt-trace: unknown option '--bogus'; see 'gpt-trace report
 * --help'", or "option '-o' needs a value"; commands whose every message names them (run, doctor)
 * say "gpt-trace: run: ...". The option is named as the user wrote it: a long one without its
 * "=VALUE", a short one alone, not the cluster it came in ("-x" of "-qx").
 */
#ifndef GPT_CLI_USAGE_H
#define GPT_CLI_USAGE_H

#include <getopt.h>
#include <stddef.h>

enum usage_prefix {
	USAGE_PLAIN,	/* "gpt-trace: unknown option ..." */
	USAGE_NAMED,	/* "gpt-trace: COMMAND: unknown option ..." */
};

/* How a command's arguments follow its options. */
enum usage_args {
	USAGE_ARGS_ANY,		/* whatever follows the options; the command judges it */
	USAGE_ARGS_TRACE,	/* at least one: "no trace given; " and the help's first line */
	USAGE_ARGS_IN_ORDER,	/* the first argument ends the options (run's PROGRAM follows) */
};

/* A command's command line: the command's own options and its parser of one. */
struct usage_command {
	const char *name;		/* "report", as the usage errors name it */
	enum usage_prefix prefix;
	enum usage_args args;
	const char *help;		/* -h/--help prints it; its first line is the synopsis */
	const char *shortopts;		/* as getopt's, without ':' and 'h' ("f:o:q") */
	const struct option *longopts;	/* ends with a NULL name; without "help" */
	/* One option getopt_long() returned, with its value (optarg): 0, or nonzero once said.
	 * NULL for a command with no option of its own (shortopts "", longopts empty). */
	int (*option)(void *cmd, int c, const char *arg);
};

/*
 * argv's options into cmd through uc->option: 0 to go on (the arguments from argv[optind]), 1 after
 * printing the help text, -1 after saying the usage error.
 */
int usage_parse(const struct usage_command *uc, void *cmd, int argc, char **argv);

/* The exit status of a parse that stops the command (usage_parse() or alike returned 1 or -1). */
int usage_status(int parsed);

/* The option getopt_long() just refused (returned ':' or '?'), as the user wrote it, into word. */
void usage_option_word(char *word, size_t len, char **argv);

/* A positive number ("--jobs 4") into *n: 0, or -1 after saying that arg is not one. */
int usage_positive(const char *option, const char *arg, int *n);

/* Say the error, then the help text's first line on its own line; returns GPT_EXIT_USAGE. */
int usage_error_synopsis(const char *help, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
