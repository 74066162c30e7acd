/*
 * gpt-trace baseline: NOT IMPLEMENTED YET. Placeholder so the command table links; the owner of this
 * command replaces this file.
 */
#include "cli/commands.h"
#include "common/util.h"

int cmd_baseline(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pr_err("'baseline' is not implemented yet");
	return GPT_EXIT_USAGE;
}
