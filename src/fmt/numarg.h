/* Numbers given as option values, in the full syntax of fmt_parse_number
 * (0.1, -6.5e-5, 0x1.8p-3, 1/3, 2^-14, 3*2^-10; inf only where the range
 * allows, never nan), checked against a range. Every number a front end
 * takes goes through these. A bad one gives MP_EINVAL with a message that
 * starts with opt ("--steps: 1.5 is not a whole number"); nothing is
 * printed. */
#ifndef MIXPREC_FMT_NUMARG_H
#define MIXPREC_FMT_NUMARG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/status.h"

/* A whole number 0..2^64-1 (decimal, 0x hex, or any syntax whose value is
 * whole: 2^20, 3*2^10). */
mp_status numarg_u64(const char *opt, const char *text, unsigned long long *v, char *err, size_t errlen);

/* A whole number in lo..hi, "opt: N is out of range (lo..hi)" outside. */
mp_status numarg_count(const char *opt, const char *text, unsigned long long lo, unsigned long long hi,
                       unsigned long long *v, char *err, size_t errlen);

/* A real number in lo..hi (inclusive; with lo_open, greater than lo), to
 * the nearest binary64. */
mp_status numarg_real(const char *opt, const char *text, double lo, bool lo_open, double hi, double *v, char *err,
                      size_t errlen);

/* Whether a command-line word is a value and not an option: it does not
 * start with '-', is a lone "-", or is a negative number as typed there
 * ("-" followed by a digit, a point, or inf/nan). */
bool numarg_is_value(const char *arg);

#endif
