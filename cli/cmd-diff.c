/*
 * gpt-trace diff: NOT IMPLEMENTED YET. Placeholder so the command table links; the owner of this
 * command replaces this file.
 */
#include "cli/commands.h"
#include "common/util.h"

int cmd_diff(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pr_err("'diff' is not implemented yet");
	return GPT_EXIT_USAGE;
}
