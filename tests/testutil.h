/* Shared by the Check test programs: run a suite with TAP output (the
 * harness sets CK_TAP_LOG_FILE_NAME=-) and turn the result into the exit status. */
#ifndef MIXPREC_TESTS_TESTUTIL_H
#define MIXPREC_TESTS_TESTUTIL_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/blas.h"

/* A passing assertion calls nothing: Check's own ck_assert_msg records the
 * location of every passing check with a write to its message file, which
 * made tests that check millions of values spend most of their time in
 * the kernel. A failure is reported as before; a crash is then located at
 * its test, not at the last passing check. Every ck_assert_* goes through
 * this macro. */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...) \
	((expr) ? (void)0 : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", ##__VA_ARGS__))

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

/* An fp32's bit pattern and back (memcpy: no aliasing question). */
static inline uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static inline float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
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
