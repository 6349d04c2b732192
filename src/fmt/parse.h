/* Parsing typed numbers into their exact real value (a GMP rational). */
#ifndef MIXPREC_FMT_PARSE_H
#define MIXPREC_FMT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <gmp.h>

#include "util/status.h"

typedef enum {
	NUM_FINITE,
	NUM_INF,
	NUM_NAN,
} num_kind;

/* An exact number: sign and magnitude kept apart so that -0 survives. */
typedef struct fmt_num {
	num_kind kind;
	bool neg;
	mpq_t mag;   /* |value| when kind == NUM_FINITE, else 0 */
} fmt_num;

/* Longest text accepted as one number. */
#define FMT_PARSE_MAX_LEN 4096

void fmt_num_init(fmt_num *x);
void fmt_num_clear(fmt_num *x);
void fmt_num_set_double(fmt_num *x, double d);

/* Parses decimal (0.1, -6.5e-5), inf, -inf, nan, C99 hex float (0x1.99999ap-4),
 * a fraction (1/3), a power (2^-14) or a multiple (3*2^-10) into its exact
 * value, ignoring surrounding blanks. On failure returns MP_EPARSE and writes a
 * message naming what is wrong into err (when err is not NULL). */
mp_status fmt_parse_number(fmt_num *out, const char *text, char *err, size_t errlen);

#endif
