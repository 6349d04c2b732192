/* mixprec: the program is its CLI front end; see src/cli/cli.c. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
