/* TAP output for the plain-C GPU test programs (no test framework: they
 * build on a GPU machine that has only the CUDA toolkit). */
#ifndef MIXPREC_TESTS_GPU_TAP_H
#define MIXPREC_TESTS_GPU_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int ntests, nfailed;

/* "ok N - ..." or "not ok N - ...", counted. */
static void report(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%sok %d - ", ok ? "" : "not ", ++ntests);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	if (!ok)
		nfailed++;
}

#endif
