/* mixprec: the program is its CLI front end (src/cli/cli.c). */
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/blas.h"

int main(int argc, char **argv)
{
	/* OpenBLAS reads OPENBLAS_CORETYPE once, when it loads: when it picked a
	 * slow generic core on a CPU it does not know, start again with the
	 * right one (once; MIXPREC_BLAS_CHECKED stops a loop). */
	const char *core = getenv("MIXPREC_BLAS_CHECKED") ? NULL : blas_better_coretype();
	if (core) {
		setenv("OPENBLAS_CORETYPE", core, 1);
		setenv("MIXPREC_BLAS_CHECKED", "1", 1);
		execv("/proc/self/exe", argv);
		/* not fatal: carry on with the slow kernels */
	}
	return cli_main(argc, argv);
}
