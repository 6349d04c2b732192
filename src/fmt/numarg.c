#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/numarg.h"
#include "fmt/parse.h"
#include "fmt/round.h"

/* The exact value of text; MP_EINVAL (err set) when it is no number or nan. */
static mp_status parse_exact(const char *opt, const char *text, fmt_num *x, char *err, size_t errlen)
{
	char why[300];
	if (fmt_parse_number(x, text, why, sizeof why) != MP_OK) {
		snprintf(err, errlen, "%s: %s", opt, why);
		return MP_EINVAL;
	}
	if (x->kind == NUM_NAN) {
		snprintf(err, errlen, "%s: '%s' is not a number (nan)", opt, text);
		return MP_EINVAL;
	}
	return MP_OK;
}

mp_status numarg_u64(const char *opt, const char *text, unsigned long long *v, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	/* plain decimal digits first (no sign, no blanks: strtoull would accept
	 * them; base 10, so that 010 is ten, not octal eight; 0x.. goes below) */
	if (*text >= '0' && *text <= '9' && !(text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))) {
		*v = strtoull(text, &end, 10);
		if (!errno && !*end)
			return MP_OK;
	}
	fmt_num x;
	fmt_num_init(&x);
	mp_status st = MP_OK;
	if (fmt_parse_number(&x, text, NULL, 0) != MP_OK || x.kind == NUM_NAN) {
		/* the real-number parser's examples (hex floats, fractions) are no
		 * help for a whole number: name the forms that give one */
		snprintf(err, errlen, "%s: '%.64s%s' is not a whole number (expected digits such as 42, hex such as "
		         "0x2a, or a power such as 2^20 or 3*2^10)", opt, text, strlen(text) > 64 ? "..." : "");
		st = MP_EINVAL;
	}
	if (st == MP_OK && (x.kind == NUM_INF || (x.neg && mpq_sgn(x.mag) != 0))) {
		snprintf(err, errlen, "%s: %s is out of range (0 to 2^64-1)", opt, text);
		st = MP_EINVAL;
	} else if (st == MP_OK && mpz_cmp_ui(mpq_denref(x.mag), 1) != 0) {
		snprintf(err, errlen, "%s: %s is not a whole number", opt, text);
		st = MP_EINVAL;
	} else if (st == MP_OK && mpz_sizeinbase(mpq_numref(x.mag), 2) > 64) {
		snprintf(err, errlen, "%s: %s is out of range (0 to 2^64-1)", opt, text);
		st = MP_EINVAL;
	} else if (st == MP_OK) {
		unsigned long long r = 0;
		size_t n = 0;
		mpz_export(&r, &n, -1, sizeof r, 0, 0, mpq_numref(x.mag));
		*v = n ? r : 0;
	}
	fmt_num_clear(&x);
	return st;
}

mp_status numarg_count(const char *opt, const char *text, unsigned long long lo, unsigned long long hi,
                       unsigned long long *v, char *err, size_t errlen)
{
	unsigned long long x;
	mp_status st = numarg_u64(opt, text, &x, err, errlen);
	if (st != MP_OK)
		return st;
	if (x < lo || x > hi) {
		snprintf(err, errlen, "%s: %llu is out of range (%llu..%llu)", opt, x, lo, hi);
		return MP_EINVAL;
	}
	*v = x;
	return MP_OK;
}

mp_status numarg_real(const char *opt, const char *text, double lo, bool lo_open, double hi, double *v, char *err,
                      size_t errlen)
{
	fmt_num x;
	fmt_num_init(&x);
	mp_status st = parse_exact(opt, text, &x, err, errlen);
	if (st == MP_OK) {
		*v = fmt_num_to_double(&x);
		if ((lo_open ? !(*v > lo) : !(*v >= lo)) || !(*v <= hi)) {
			char l[40], h[40];
			snprintf(l, sizeof l, "%g", lo);
			snprintf(h, sizeof h, "%g", hi);
			if (lo_open && !(*v > lo) && *v <= hi)
				snprintf(err, errlen, "%s: %s is out of range (it must be greater than %s)", opt, text, l);
			else
				snprintf(err, errlen, "%s: %s is out of range (%s%s to %s)", opt, text, lo_open ? "above " : "",
				         l, h);
			st = MP_EINVAL;
		}
	}
	fmt_num_clear(&x);
	return st;
}
