#include "cli/cli.h"

int cmd_bench(int argc, char **argv)
{
	(void)argc; (void)argv;
	cli_error("bench", "not built yet");
	return CLI_USAGE;
}
