#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fmt/parse.h"

/* Exponents beyond these bounds are far outside every format and would only
 * cost time and memory in GMP. */
#define EXP_LIMIT 100000L
#define POW_BITS_LIMIT 400000UL

void fmt_num_init(fmt_num *x)
{
	x->kind = NUM_FINITE;
	x->neg = false;
	mpq_init(x->mag);
}

void fmt_num_clear(fmt_num *x)
{
	mpq_clear(x->mag);
}

void fmt_num_set_double(fmt_num *x, double d)
{
	x->neg = signbit(d) != 0;
	if (isnan(d)) {
		x->kind = NUM_NAN;
		mpq_set_ui(x->mag, 0, 1);
	} else if (isinf(d)) {
		x->kind = NUM_INF;
		mpq_set_ui(x->mag, 0, 1);
	} else {
		x->kind = NUM_FINITE;
		mpq_set_d(x->mag, d < 0 ? -d : d);
	}
}

/* --- scanning helpers --- */

typedef struct {
	const char *start;   /* whole text, for positions in messages */
	const char *p;
	char *err;
	size_t errlen;
} scanner;

static mp_status fail(scanner *s, const char *fmt, ...)
{
	if (s->err && s->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->err, s->errlen, fmt, ap);
		va_end(ap);
	}
	return MP_EPARSE;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Reads an optionally signed decimal exponent into *e; bounds it. */
static mp_status scan_exponent(scanner *s, long *e, const char *what)
{
	bool neg = false;
	if (*s->p == '+' || *s->p == '-')
		neg = *s->p++ == '-';
	if (!isdigit((unsigned char)*s->p))
		return fail(s, "%s has no digits", what);
	long v = 0;
	while (isdigit((unsigned char)*s->p)) {
		if (v <= EXP_LIMIT)
			v = v * 10 + (*s->p - '0');
		s->p++;
	}
	if (v > EXP_LIMIT)
		return fail(s, "%s is out of range (at most %ld in magnitude)", what, EXP_LIMIT);
	*e = neg ? -v : v;
	return MP_OK;
}

/* q *= base^e exactly. */
static void mul_pow(mpq_t q, unsigned long base, long e)
{
	if (e == 0)
		return;
	mpz_t p;
	mpz_init(p);
	mpz_ui_pow_ui(p, base, (unsigned long)(e < 0 ? -e : e));
	if (e > 0)
		mpz_mul(mpq_numref(q), mpq_numref(q), p);
	else
		mpz_mul(mpq_denref(q), mpq_denref(q), p);
	mpq_canonicalize(q);
	mpz_clear(p);
}

/* The digits of a mantissa at s->p, hex or decimal with at most one point,
 * read as one integer into num; how many stood after the point into *frac.
 * Returns how many digits there were (0: none, num untouched), -1 without
 * memory. */
static long scan_mantissa(scanner *s, bool hex, mpz_t num, long *frac)
{
	char *digits = malloc(strlen(s->p) + 1);
	if (!digits)
		return -1;
	size_t nd = 0;
	bool point = false;
	*frac = 0;
	for (;; s->p++) {
		unsigned char c = (unsigned char)*s->p;
		if (hex ? hexval(c) >= 0 : isdigit(c) != 0) {
			digits[nd++] = *s->p;
			if (point)
				(*frac)++;
		} else if (*s->p == '.' && !point) {
			point = true;
		} else {
			break;
		}
	}
	digits[nd] = '\0';
	if (nd)
		mpz_set_str(num, digits, hex ? 16 : 10);
	free(digits);
	return (long)nd;
}

/* Unsigned decimal or hex literal (no sign) into q. */
static mp_status scan_literal(scanner *s, mpq_t q)
{
	const char *lit = s->p;
	if (s->p[0] == '0' && (s->p[1] == 'x' || s->p[1] == 'X')) {
		s->p += 2;
		long frac_digits;
		long nd = scan_mantissa(s, true, mpq_numref(q), &frac_digits);
		if (nd < 0)
			return MP_ENOMEM;
		if (nd == 0)
			return fail(s, "'%.*s': hex number has no digits", (int)(s->p - lit), lit);
		mpz_set_ui(mpq_denref(q), 1);
		long e = 0;
		if (*s->p == 'p' || *s->p == 'P') {
			s->p++;
			mp_status st = scan_exponent(s, &e, "binary exponent after 'p'");
			if (st != MP_OK)
				return st;
		}
		long shift = e - 4 * frac_digits;
		if (shift > 0)
			mpz_mul_2exp(mpq_numref(q), mpq_numref(q), (mp_bitcnt_t)shift);
		else if (shift < 0)
			mpz_mul_2exp(mpq_denref(q), mpq_denref(q), (mp_bitcnt_t)-shift);
		mpq_canonicalize(q);
		return MP_OK;
	}

	long frac_digits;
	long nd = scan_mantissa(s, false, mpq_numref(q), &frac_digits);
	if (nd < 0)
		return MP_ENOMEM;
	if (nd == 0) {
		if (*s->p == '\0')
			return fail(s, "'%s': not a number", s->start);
		return fail(s, "'%s': not a number (expected a decimal such as 0.1, a hex float such as "
		            "0x1.8p-3, a/b, 2^k, m*2^k, inf or nan)", s->start);
	}
	mpz_set_ui(mpq_denref(q), 1);
	long e = 0;
	if (*s->p == 'e' || *s->p == 'E') {
		s->p++;
		mp_status st = scan_exponent(s, &e, "exponent");
		if (st != MP_OK) {
			/* name the number as the user typed it */
			if (s->err && s->errlen) {
				char tmp[256];
				snprintf(tmp, sizeof tmp, "%s", s->err);
				snprintf(s->err, s->errlen, "'%.64s': %s", s->start, tmp);
			}
			return st;
		}
	}
	mul_pow(q, 10, e - frac_digits);
	return MP_OK;
}

static mp_status scan_unsigned_integer(scanner *s, unsigned long *v, const char *what)
{
	if (!isdigit((unsigned char)*s->p))
		return fail(s, "%s has no digits", what);
	unsigned long x = 0;
	while (isdigit((unsigned char)*s->p)) {
		if (x < 100000000ul)
			x = x * 10 + (unsigned long)(*s->p - '0');
		s->p++;
	}
	if (x >= 100000000ul)
		return fail(s, "%s is too large", what);
	*v = x;
	return MP_OK;
}

/* base^k after the literal `base` has been read as an integer. */
static mp_status scan_power(scanner *s, mpq_t q, unsigned long base)
{
	long k;
	mp_status st = scan_exponent(s, &k, "power after '^'");
	if (st != MP_OK)
		return st;
	if (base == 0 && k < 0)
		return fail(s, "'%s': division by zero", s->start);
	unsigned long bits = 0;
	for (unsigned long b = base; b > 1; b >>= 1)
		bits++;
	if ((unsigned long)(k < 0 ? -k : k) * (bits + 1) > POW_BITS_LIMIT)
		return fail(s, "'%s': power is out of range", s->start);
	mpq_set_ui(q, 1, 1);
	if (base == 0) {
		mpq_set_ui(q, k == 0 ? 1 : 0, 1);
		return MP_OK;
	}
	mul_pow(q, base, k);
	return MP_OK;
}

/* term := [sign] (literal | int '^' exp) [ '*' int '^' exp ] ; sets *neg. */
static mp_status scan_term(scanner *s, mpq_t q, bool *neg)
{
	*neg = false;
	while (*s->p == '+' || *s->p == '-') {
		if (*s->p == '-')
			*neg = !*neg;
		s->p++;
		if (*s->p == '+' || *s->p == '-')
			return fail(s, "'%s': more than one sign", s->start);
	}
	const char *lit = s->p;
	mp_status st = scan_literal(s, q);
	if (st != MP_OK)
		return st;
	if (*s->p == '^') {
		/* the literal was the base of a power: it must be a plain integer */
		for (const char *c = lit; c < s->p; c++)
			if (!isdigit((unsigned char)*c))
				return fail(s, "'%s': the base of '^' must be a whole number", s->start);
		if (mpz_cmp_ui(mpq_numref(q), 1u << 16) > 0)
			return fail(s, "'%s': the base of '^' is too large", s->start);
		unsigned long base = mpz_get_ui(mpq_numref(q));
		s->p++;
		return scan_power(s, q, base);
	}
	if (*s->p == '*') {
		s->p++;
		unsigned long base = 0;
		st = scan_unsigned_integer(s, &base, "power after '*'");
		if (st != MP_OK)
			return st;
		if (*s->p != '^')
			return fail(s, "'%s': expected '^' after '*%lu' (the form is m*2^k)", s->start, base);
		if (base > (1u << 16))
			return fail(s, "'%s': the base of '^' is too large", s->start);
		s->p++;
		mpq_t p;
		mpq_init(p);
		st = scan_power(s, p, base);
		if (st == MP_OK)
			mpq_mul(q, q, p);
		mpq_clear(p);
		return st;
	}
	return MP_OK;
}

static bool match_word(const char *p, const char *word, const char **end)
{
	size_t n = strlen(word);
	if (strncasecmp(p, word, n) != 0)
		return false;
	*end = p + n;
	return true;
}

mp_status fmt_parse_number(fmt_num *out, const char *text, char *err, size_t errlen)
{
	scanner s = { .start = text, .p = text, .err = err, .errlen = errlen };
	if (err && errlen)
		err[0] = '\0';
	out->kind = NUM_FINITE;
	out->neg = false;
	mpq_set_ui(out->mag, 0, 1);

	if (strlen(text) > FMT_PARSE_MAX_LEN)
		return fail(&s, "number is longer than %d characters", FMT_PARSE_MAX_LEN);
	while (isspace((unsigned char)*s.p))
		s.p++;
	if (*s.p == '\0')
		return fail(&s, "empty value");

	/* inf / nan, with an optional sign */
	const char *q = s.p;
	bool neg = false;
	if (*q == '+' || *q == '-')
		neg = *q++ == '-';
	const char *end;
	if (match_word(q, "infinity", &end) || match_word(q, "inf", &end) || match_word(q, "nan", &end)) {
		while (isspace((unsigned char)*end))
			end++;
		if (*end == '\0') {
			out->kind = tolower((unsigned char)*q) == 'n' ? NUM_NAN : NUM_INF;
			out->neg = neg;
			return MP_OK;
		}
	}

	bool nneg;
	mp_status st = scan_term(&s, out->mag, &nneg);
	if (st != MP_OK)
		return st;
	if (*s.p == '/') {
		s.p++;
		mpq_t d;
		mpq_init(d);
		bool dneg;
		st = scan_term(&s, d, &dneg);
		if (st == MP_OK && mpq_sgn(d) == 0)
			st = fail(&s, "'%s': division by zero", text);
		if (st == MP_OK) {
			mpq_div(out->mag, out->mag, d);
			nneg ^= dneg;
		}
		mpq_clear(d);
		if (st != MP_OK)
			return st;
	}
	while (isspace((unsigned char)*s.p))
		s.p++;
	if (*s.p != '\0')
		return fail(&s, "'%s': unexpected '%c' at position %d", text, *s.p, (int)(s.p - text) + 1);
	out->neg = nneg;
	return MP_OK;
}
