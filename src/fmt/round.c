#include <math.h>
#include <stdio.h>
#include <mpfr.h>
#include <string.h>
#include <strings.h>

#include "fmt/round.h"

static const char *const mode_names[FMT_MODE_COUNT] = {
	[FMT_RNE] = "rne", [FMT_RNA] = "rna", [FMT_RTZ] = "rtz",
	[FMT_UP] = "up", [FMT_DOWN] = "down", [FMT_SR] = "sr",
};

const char *fmt_mode_name(fmt_mode m)
{
	return (unsigned)m < FMT_MODE_COUNT ? mode_names[m] : "?";
}

const char *fmt_mode_known(void)
{
	return "rne, rna, rtz, up, down, sr";
}

mp_status fmt_mode_parse(const char *name, fmt_mode *m)
{
	for (int i = 0; i < FMT_MODE_COUNT; i++) {
		if (strcasecmp(name, mode_names[i]) == 0) {
			*m = (fmt_mode)i;
			return MP_OK;
		}
	}
	return MP_EMODE;
}

/* --- overflow and specials --- */

static uint32_t with_sign(const fmt_info *f, bool neg, uint32_t mag)
{
	return neg ? mag | fmt_sign_mask(f) : mag;
}

/* The result of a finite value too large for f, by mode. */
static uint32_t overflow_result(const fmt_info *f, const fmt_round_ctl *ctl, bool neg)
{
	bool to_inf;
	switch (ctl->mode) {
	case FMT_RTZ:  to_inf = false; break;
	case FMT_UP:   to_inf = !neg; break;
	case FMT_DOWN: to_inf = neg; break;
	default:       to_inf = true; break;
	}
	if (!to_inf || ctl->saturate)
		return with_sign(f, neg, fmt_max_bits(f));
	if (!fmt_has_inf(f))
		return fmt_nan_bits(f);
	return with_sign(f, neg, fmt_inf_bits(f));
}

static uint32_t inf_result(const fmt_info *f, const fmt_round_ctl *ctl, bool neg)
{
	if (ctl->saturate)
		return with_sign(f, neg, fmt_max_bits(f));
	if (!fmt_has_inf(f))
		return fmt_nan_bits(f);
	return with_sign(f, neg, fmt_inf_bits(f));
}

/* --- the core --- */

/* Bits [lo, lo+n) of a value whose only set bits are in sig (bit i of sig is
 * bit i of the value); positions may lie outside 0..63. n <= 32. */
static uint32_t bit_field(uint64_t sig, long lo, int n)
{
	if (lo >= 64 || lo + n <= 0)
		return 0;
	uint64_t v = lo >= 0 ? sig >> lo : sig << -lo;
	return (uint32_t)(v & ((n == 32) ? 0xffffffffull : ((1ull << n) - 1)));
}

/* True when any bit of sig below position `pos` is set. */
static bool any_below(uint64_t sig, long pos)
{
	if (pos <= 0)
		return false;
	if (pos >= 64)
		return sig != 0;
	return (sig & ((1ull << pos) - 1)) != 0;
}

uint32_t fmt_round_parts(const fmt_info *f, const fmt_round_ctl *ctl, bool neg, long exp2,
                         uint64_t sig, bool sticky, unsigned *flags)
{
	unsigned fl = 0;
	if (sig == 0 && !sticky) {
		if (flags)
			*flags = 0;
		return with_sign(f, neg, 0);
	}
	int fb = f->frac_bits;
	long emin = fmt_emin(f);
	long emax = fmt_emax(f);

	if (exp2 > emax + 1) {
		if (flags)
			*flags = FMT_FLAG_OVERFLOW | FMT_FLAG_INEXACT;
		return overflow_result(f, ctl, neg);
	}

	/* exponent of the result's last place: the normal grid, or the subnormal one */
	long q = (exp2 > emin ? exp2 : emin) - fb;
	/* sig's bit i is worth 2^(exp2 - 63 + i); the last place is bit d of sig */
	long d = q - (exp2 - 63);            /* number of discarded bits, >= 40 */
	uint64_t kept = d >= 64 ? 0 : sig >> d;
	uint32_t frac_hi32 = bit_field(sig, d - 32, 32);   /* first 32 discarded bits */
	bool below32 = any_below(sig, d - 32) || sticky;   /* anything after them */
	bool inexact = frac_hi32 != 0 || below32;
	bool half = (frac_hi32 >> 31) & 1;
	bool rest = (frac_hi32 & 0x7fffffffu) != 0 || below32;

	bool up;
	switch (ctl->mode) {
	case FMT_RNE:  up = half && (rest || (kept & 1)); break;
	case FMT_RNA:  up = half; break;
	case FMT_RTZ:  up = false; break;
	case FMT_UP:   up = inexact && !neg; break;
	case FMT_DOWN: up = inexact && neg; break;
	case FMT_SR:   up = inexact && fmt_sr_round_up(ctl->rbits, frac_hi32, below32); break;
	default:       up = false; break;
	}
	uint64_t m = kept + (up ? 1 : 0);

	if (inexact) {
		fl |= FMT_FLAG_INEXACT;
		if (exp2 < emin)
			fl |= FMT_FLAG_UNDERFLOW;
	}

	uint64_t enc;
	if (exp2 < emin)
		enc = m;   /* subnormal grid; a carry to 2^fb is exactly the min normal's pattern */
	else
		enc = ((uint64_t)(exp2 + f->bias) << fb) + (m - (1ull << fb));

	if (enc > fmt_max_bits(f)) {
		if (flags)
			*flags = fl | FMT_FLAG_OVERFLOW | FMT_FLAG_INEXACT;
		return overflow_result(f, ctl, neg);
	}
	if (flags)
		*flags = fl;
	return with_sign(f, neg, (uint32_t)enc);
}

uint32_t fmt_round_num(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_num *x, unsigned *flags)
{
	if (flags)
		*flags = 0;
	if (x->kind == NUM_NAN)
		return fmt_nan_bits(f);
	if (x->kind == NUM_INF)
		return inf_result(f, ctl, x->neg);
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

uint32_t fmt_round_double(const fmt_info *f, const fmt_round_ctl *ctl, double x, unsigned *flags)
{
	if (flags)
		*flags = 0;
	bool neg = signbit(x) != 0;
	if (isnan(x))
		return fmt_nan_bits(f);
	if (isinf(x))
		return inf_result(f, ctl, neg);
	if (x == 0)
		return fmt_round_parts(f, ctl, neg, 0, 0, false, flags);
	int e;
	double m = frexp(fabs(x), &e);   /* m in [0.5, 1) */
	uint64_t sig = (uint64_t)ldexp(m, 64);   /* exact: 53 bits */
	return fmt_round_parts(f, ctl, neg, e - 1, sig, false, flags);
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
