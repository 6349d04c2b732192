/* Printing numbers as text: exact decimals and short round-trip forms. */
#ifndef MIXPREC_UTIL_NUMTEXT_H
#define MIXPREC_UTIL_NUMTEXT_H

#include <stddef.h>

/* The exact decimal value of v (every binary64 has a finite one), positional
 * for moderate exponents and scientific otherwise; "inf", "-inf", "nan" for
 * specials. Returns buf. n >= 1100 always suffices. */
char *numtext_exact(char *buf, size_t n, double v);

/* The shortest %g text that reads back as exactly v. Returns buf. */
char *numtext_short(char *buf, size_t n, double v);

/* numtext_short, but positional (700, not 7e+02) for magnitudes from 1e-4
 * to 1e15, as a spreadsheet shows them. Returns buf. */
char *numtext_plain(char *buf, size_t n, double v);

/* A byte count: an integer when it is one (exactly), else numtext_plain.
 * Returns buf. */
char *numtext_bytes(char *buf, size_t n, double v);

/* Counts significant digits of an exact text from numtext_exact. */
size_t numtext_sig_digits(const char *text);

#endif
