/* Shared by the Check test programs: run a suite with TAP output (the
 * harness sets CK_TAP_LOG_FILE_NAME=-) and turn the result into the exit status. */
#ifndef MIXPREC_TESTS_TESTUTIL_H
#define MIXPREC_TESTS_TESTUTIL_H

#include <check.h>
#include <stdlib.h>

static inline int testutil_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
