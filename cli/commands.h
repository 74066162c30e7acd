/*
 * The gpt-trace subcommands. Each lives in its own cmd-<name>.c and is registered once, in the
 * command table of gpt-trace.c, which also produces the usage text. A command returns the process
 * exit status (enum gpt_exit in common/util.h).
 */
#ifndef GPT_CLI_COMMANDS_H
#define GPT_CLI_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);

#endif
