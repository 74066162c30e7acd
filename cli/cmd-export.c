/*
 * gpt-trace export: NOT IMPLEMENTED YET. Placeholder so the command table links; the owner of this
 * command replaces this file.
 */
#include "cli/commands.h"
#include "common/util.h"

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pr_err("'export' is not implemented yet");
	return GPT_EXIT_USAGE;
}
