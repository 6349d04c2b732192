/* Shared by the Check test programs: run a suite with TAP output (the
 * harness sets CK_TAP_LOG_FILE_NAME=-) and turn the result into the exit status. */
#ifndef MIXPREC_TESTS_TESTUTIL_H
#define MIXPREC_TESTS_TESTUTIL_H

#include <check.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/blas.h"

/* For test programs that use OpenBLAS: restart once with the core type the
 * CPU supports when OpenBLAS fell back to a slow generic one (as the program
 * itself does), so the suite does not run at a fifth of the speed. */
static inline void testutil_fast_blas(char **argv)
{
	const char *core = getenv("MIXPREC_BLAS_CHECKED") ? NULL : blas_better_coretype();
	if (core) {
		setenv("OPENBLAS_CORETYPE", core, 1);
		setenv("MIXPREC_BLAS_CHECKED", "1", 1);
		execv("/proc/self/exe", argv);
	}
}

/* The source tree whose lessons, exercises and data the tests read:
 * $MIXPREC_SRCDIR, which make check sets (AM_TESTS_ENVIRONMENT), else ".". */
static inline const char *testutil_srcdir(void)
{
	const char *d = getenv("MIXPREC_SRCDIR");
	return d && *d ? d : ".";
}

static inline int testutil_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
