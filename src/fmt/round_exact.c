/* The exact half of fmt/round: rounding and errors of typed numbers (GMP
 * rationals, MPFR). The integer core in round.c needs neither, so that the
 * bulk kernels and the GPU code build without GMP. */
#include <math.h>
#include <stdio.h>
#include <mpfr.h>

#include "fmt/parse.h"
#include "fmt/round.h"

uint32_t fmt_round_num(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_num *x, unsigned *flags)
{
	if (flags)
		*flags = 0;
	if (x->kind == NUM_NAN)
		return fmt_round_double(f, ctl, NAN, flags);
	if (x->kind == NUM_INF)
		return fmt_round_double(f, ctl, x->neg ? -INFINITY : INFINITY, flags);
	if (mpq_sgn(x->mag) == 0)
		return fmt_round_parts(f, ctl, x->neg, 0, 0, false, flags);

	/* exp2 = floor(log2 |x|): start from the bit lengths, correct by one */
	const mpz_srcptr num = mpq_numref(x->mag), den = mpq_denref(x->mag);
	long exp2 = (long)mpz_sizeinbase(num, 2) - (long)mpz_sizeinbase(den, 2);
	mpz_t a, b, r;
	mpz_inits(a, b, r, NULL);
	/* compare num with den * 2^exp2 */
	if (exp2 >= 0) {
		mpz_mul_2exp(b, den, (mp_bitcnt_t)exp2);
		mpz_set(a, num);
	} else {
		mpz_mul_2exp(a, num, (mp_bitcnt_t)-exp2);
		mpz_set(b, den);
	}
	if (mpz_cmp(a, b) < 0)
		exp2--;
	/* sig = floor(|x| * 2^(63 - exp2)), sticky = remainder != 0 */
	long sh = 63 - exp2;
	if (sh >= 0) {
		mpz_mul_2exp(a, num, (mp_bitcnt_t)sh);
		mpz_set(b, den);
	} else {
		mpz_set(a, num);
		mpz_mul_2exp(b, den, (mp_bitcnt_t)-sh);
	}
	mpz_tdiv_qr(a, r, a, b);
	uint64_t sig = 0;
	mpz_export(&sig, NULL, -1, sizeof sig, 0, 0, a);
	bool sticky = mpz_sgn(r) != 0;
	mpz_clears(a, b, r, NULL);
	return fmt_round_parts(f, ctl, x->neg, exp2, sig, sticky, flags);
}

double fmt_num_to_double(const fmt_num *x)
{
	if (x->kind == NUM_NAN)
		return NAN;
	if (x->kind == NUM_INF)
		return x->neg ? -INFINITY : INFINITY;
	/* binary64's exponent range and subnormals, then round to nearest */
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_set_emin(-1073);
	mpfr_set_emax(1024);
	mpfr_t m;
	mpfr_init2(m, 53);
	int t = mpfr_set_q(m, x->mag, MPFR_RNDN);
	t = mpfr_check_range(m, t, MPFR_RNDN);
	mpfr_subnormalize(m, t, MPFR_RNDN);
	double d = mpfr_get_d(m, MPFR_RNDN);
	mpfr_clear(m);
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	return x->neg ? -d : d;
}

/* |result - x| and that over |x| as exact rationals; false for NaN/inf cases
 * (then *special is the text for both). */
static bool error_exact(const fmt_num *x, double result, mpq_t abs_err, mpq_t rel_err, bool *rel_inf,
                        const char **special)
{
	if (x->kind == NUM_NAN || isnan(result)) {
		*special = "nan";   /* no meaningful distance to or from a NaN */
		return false;
	}
	if (x->kind == NUM_INF || isinf(result)) {
		bool same = x->kind == NUM_INF && isinf(result) && (x->neg == (result < 0));
		*special = same ? "0" : "inf";
		return false;
	}
	mpq_t xv;
	mpq_init(xv);
	mpq_set(xv, x->mag);
	if (x->neg)
		mpq_neg(xv, xv);
	mpq_set_d(abs_err, result);
	mpq_sub(abs_err, abs_err, xv);
	mpq_abs(abs_err, abs_err);
	*rel_inf = false;
	if (mpq_sgn(xv) == 0) {
		*rel_inf = mpq_sgn(abs_err) != 0;
		mpq_set_ui(rel_err, 0, 1);
	} else {
		mpq_div(rel_err, abs_err, x->mag);
	}
	mpq_clear(xv);
	return true;
}

void fmt_error_of(const fmt_num *x, double result, double *abs_err, double *rel_err)
{
	mpq_t a, r;
	mpq_inits(a, r, NULL);
	bool rel_inf;
	const char *special;
	if (!error_exact(x, result, a, r, &rel_inf, &special)) {
		*abs_err = *rel_err = special[0] == 'n' ? NAN : special[0] == 'i' ? INFINITY : 0.0;
	} else {
		fmt_num q;
		fmt_num_init(&q);
		mpq_set(q.mag, a);
		*abs_err = fmt_num_to_double(&q);
		mpq_set(q.mag, r);
		*rel_err = rel_inf ? INFINITY : fmt_num_to_double(&q);
		fmt_num_clear(&q);
	}
	mpq_clears(a, r, NULL);
}

void fmt_error_text(const fmt_num *x, double result, int digits, char *abs_text, char *rel_text, size_t n)
{
	mpq_t a, r;
	mpq_inits(a, r, NULL);
	bool rel_inf;
	const char *special;
	if (!error_exact(x, result, a, r, &rel_inf, &special)) {
		snprintf(abs_text, n, "%s", special);
		snprintf(rel_text, n, "%s", special);
	} else {
		/* MPFR's exponent range is far wider than binary64's: no underflow */
		mpfr_t m;
		mpfr_init2(m, 64);
		mpfr_set_q(m, a, MPFR_RNDN);
		if (mpfr_zero_p(m))
			snprintf(abs_text, n, "0");
		else
			mpfr_snprintf(abs_text, n, "%.*Rg", digits, m);
		if (rel_inf) {
			snprintf(rel_text, n, "inf");
		} else {
			mpfr_set_q(m, r, MPFR_RNDN);
			if (mpfr_zero_p(m))
				snprintf(rel_text, n, "0");
			else
				mpfr_snprintf(rel_text, n, "%.*Rg", digits, m);
		}
		mpfr_clear(m);
	}
	mpq_clears(a, r, NULL);
}
