#include <math.h>
#include <string.h>
#include <strings.h>

#include "fmt/round.h"

static const char *const mode_names[FMT_MODE_COUNT] = {
	[FMT_RNE] = "rne", [FMT_RNA] = "rna", [FMT_RTZ] = "rtz",
	[FMT_UP] = "up", [FMT_DOWN] = "down", [FMT_SR] = "sr",
	[FMT_RTO] = "rto", [FMT_RNZ] = "rnz", [FMT_SR_EQUAL] = "sr-equal",
};

const char *fmt_mode_name(fmt_mode m)
{
	return (unsigned)m < FMT_MODE_COUNT ? mode_names[m] : "?";
}

const char *fmt_mode_known(void)
{
	return "rne, rna, rtz, up, down, sr, rto, rnz, sr-equal";
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

/* An integer format's end of the range on the value's side: 2^(w-1) - 1 or
 * -2^(w-1) (the pattern of the sign bit alone). */
static uint32_t int_limit(const fmt_info *f, bool neg)
{
	return neg ? fmt_sign_mask(f) : fmt_max_bits(f);
}

/* Overflow without inf (fp8-e4m3) gives the NaN with the value's sign:
 * -1000 and -inf give 0xff, +1000 and +inf 0x7f, as PyTorch's
 * fp8e4m3fn_from_fp32_value (c10/util/Float8_e4m3fn.h: result = 0x7f, then
 * result |= sign), ml_dtypes' ConvertImpl (float8.h: -infinity() of e4m3fn is
 * 0xff) and cuda_fp8.hpp's __nv_cvt_double_to_fp8 (res = 0x7F, then
 * res |= sign) do. A NaN input still gives the canonical positive NaN.
 * The result of a finite value too large for f, by mode. */
static uint32_t overflow_result(const fmt_info *f, const fmt_round_ctl *ctl, bool neg)
{
	if (fmt_is_int(f))   /* saturates in every mode, as fp6/fp4 do */
		return int_limit(f, neg);
	if (f->specials == FMT_SPECIALS_NONE)   /* OCP MX fp6/fp4: saturate in every mode */
		return with_sign(f, neg, fmt_max_bits(f));
	bool to_inf;
	switch (ctl->mode) {
	case FMT_RTZ:  to_inf = false; break;
	case FMT_RTO:  to_inf = false; break;   /* truncation first: never past the largest value */
	case FMT_UP:   to_inf = !neg; break;
	case FMT_DOWN: to_inf = neg; break;
	case FMT_SR_EQUAL: to_inf = fmt_sr_equal_round_up(ctl->rbits); break;
	default:       to_inf = true; break;
	}
	if (!to_inf || ctl->saturate)
		return with_sign(f, neg, fmt_max_bits(f));
	if (!fmt_has_inf(f))
		return with_sign(f, neg, fmt_nan_bits(f));
	return with_sign(f, neg, fmt_inf_bits(f));
}

static uint32_t inf_result(const fmt_info *f, const fmt_round_ctl *ctl, bool neg)
{
	if (fmt_is_int(f))
		return int_limit(f, neg);
	if (f->specials == FMT_SPECIALS_NONE)
		return with_sign(f, neg, fmt_max_bits(f));
	if (ctl->saturate)
		return with_sign(f, neg, fmt_max_bits(f));
	if (!fmt_has_inf(f))
		return with_sign(f, neg, fmt_nan_bits(f));
	return with_sign(f, neg, fmt_inf_bits(f));
}

const char *fmt_invalid_reason(const fmt_info *f, bool nan, bool zero, bool neg)
{
	if (nan)
		return fmt_has_nan(f) ? "has a NaN (no error expected)" : "has no NaN (nor inf)";
	if (fmt_has_sign(f))
		return "can hold the value (no error expected)";
	if (zero && f->specials == FMT_SPECIALS_E8M0)
		return "has no zero (its smallest value is 2^-127)";
	return neg ? "is unsigned: it has no negative values" : "can hold the value (no error expected)";
}

/* The result for a value an unsigned format cannot hold (negatives; e8m0's
 * zero): its NaN. */
static uint32_t invalid_result(const fmt_info *f, unsigned *flags)
{
	if (flags)
		*flags = FMT_FLAG_INVALID;
	return fmt_nan_bits(f);
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

/* Whether the magnitude moves up to the next grid point, by the mode: odd
 * says the kept last place is odd, frac_hi32 holds the first 32 discarded
 * bits and below32 whether any lie under them. */
static bool mag_up(const fmt_round_ctl *ctl, bool neg, bool odd, bool kept_odd, uint32_t frac_hi32, bool below32)
{
	bool inexact = frac_hi32 != 0 || below32;
	bool half = (frac_hi32 >> 31) & 1;
	bool rest = (frac_hi32 & 0x7fffffffu) != 0 || below32;
	switch (ctl->mode) {
	case FMT_RNE:  return half && (rest || odd);
	case FMT_RNA:  return half;
	case FMT_RTZ:  return false;
	case FMT_UP:   return inexact && !neg;
	case FMT_DOWN: return inexact && neg;
	case FMT_SR:   return inexact && fmt_sr_round_up(ctl->rbits, frac_hi32, below32);
	/* the kept significand's last bit, the implicit one included: without
	 * fraction bits a normal significand is 1, odd */
	case FMT_RTO:  return inexact && !kept_odd;
	case FMT_RNZ:  return half && rest;
	case FMT_SR_EQUAL: return inexact && fmt_sr_equal_round_up(ctl->rbits);
	default:       return false;
	}
}

/* An integer format: the magnitude rounds on the grid of 1 by the mode (the
 * last place is 2^0, bit 63 - exp2 of sig), then beyond the range on the
 * value's side saturates with FMT_FLAG_OVERFLOW. No underflow: every
 * integer format holds 0 and 1 exactly. */
static uint32_t round_int(const fmt_info *f, const fmt_round_ctl *ctl, bool neg, long exp2, uint64_t sig,
                          bool sticky, unsigned *flags)
{
	uint64_t limit = neg ? fmt_sign_mask(f) : fmt_max_bits(f);   /* the magnitude of either end */
	if (exp2 >= f->width) {   /* |x| >= 2^width: beyond every integer of the format */
		if (flags)
			*flags = FMT_FLAG_OVERFLOW | FMT_FLAG_INEXACT;
		return int_limit(f, neg);
	}
	long d = 63 - exp2;   /* discarded bits: > 0 as exp2 < width <= 32 */
	uint64_t kept = d >= 64 ? 0 : sig >> d;
	uint32_t frac_hi32 = bit_field(sig, d - 32, 32);
	bool below32 = any_below(sig, d - 32) || sticky;
	unsigned fl = frac_hi32 != 0 || below32 ? FMT_FLAG_INEXACT : 0;
	uint64_t m = kept + (mag_up(ctl, neg, kept & 1, kept & 1, frac_hi32, below32) ? 1 : 0);
	if (m > limit) {
		if (flags)
			*flags = FMT_FLAG_OVERFLOW | FMT_FLAG_INEXACT;
		return int_limit(f, neg);
	}
	if (flags)
		*flags = fl;
	return fmt_int_bits(f, neg ? -(int32_t)m : (int32_t)m);
}

uint32_t fmt_round_parts(const fmt_info *f, const fmt_round_ctl *ctl, bool neg, long exp2,
                         uint64_t sig, bool sticky, unsigned *flags)
{
	unsigned fl = 0;
	bool zero = sig == 0 && !sticky;
	if (f->specials == FMT_SPECIALS_E8M0 && (neg || zero))
		return invalid_result(f, flags);
	if (!fmt_has_sign(f) && neg && !zero)   /* P3109 unsigned: no negative values */
		return invalid_result(f, flags);
	if (sig == 0 && !sticky) {
		if (flags)
			*flags = 0;
		return fmt_has_neg_zero(f) ? with_sign(f, neg, 0) : 0;
	}
	if (fmt_is_int(f))
		return round_int(f, ctl, neg, exp2, sig, sticky, flags);
	int fb = f->frac_bits;
	long emin = fmt_emin(f);
	long emax = fmt_emax(f);

	if (exp2 > emax + 1) {
		if (flags)
			*flags = FMT_FLAG_OVERFLOW | FMT_FLAG_INEXACT;
		return overflow_result(f, ctl, neg);
	}
	if (f->specials == FMT_SPECIALS_E8M0 && exp2 < emin) {
		/* no zero: everything below 2^-127 clamps to it, in every mode */
		if (flags)
			*flags = FMT_FLAG_INEXACT | FMT_FLAG_UNDERFLOW;
		return 0;
	}

	/* exponent of the result's last place: the normal grid, or the subnormal one */
	long q = (exp2 > emin ? exp2 : emin) - fb;
	/* sig's bit i is worth 2^(exp2 - 63 + i); the last place is bit d of sig */
	long d = q - (exp2 - 63);            /* number of discarded bits, >= 40 */
	uint64_t kept = d >= 64 ? 0 : sig >> d;
	uint32_t frac_hi32 = bit_field(sig, d - 32, 32);   /* first 32 discarded bits */
	bool below32 = any_below(sig, d - 32) || sticky;   /* anything after them */
	bool inexact = frac_hi32 != 0 || below32;
	/* ties go to the even encoding; without fraction bits (e8m0) its last
	 * bit is the exponent's, not the significand's (always 1) */
	bool odd = fb > 0 || exp2 < emin ? (kept & 1) : ((exp2 + f->bias) & 1);

	uint64_t m = kept + (mag_up(ctl, neg, odd, kept & 1, frac_hi32, below32) ? 1 : 0);

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
	if (enc == 0 && !fmt_has_neg_zero(f))
		return 0;   /* FNUZ: a negative value rounding to zero gives 0x00 */
	return with_sign(f, neg, (uint32_t)enc);
}

uint32_t fmt_round_double(const fmt_info *f, const fmt_round_ctl *ctl, double x, unsigned *flags)
{
	if (flags)
		*flags = 0;
	bool neg = signbit(x) != 0;
	if (isnan(x)) {
		if (!fmt_has_nan(f) && flags)
			*flags = FMT_FLAG_INVALID;
		return fmt_nan_bits(f);
	}
	if (isinf(x)) {
		if (!fmt_has_sign(f) && neg)   /* e8m0, P3109 unsigned */
			return invalid_result(f, flags);
		return inf_result(f, ctl, neg);
	}
	if (x == 0)
		return fmt_round_parts(f, ctl, neg, 0, 0, false, flags);
	int e;
	double m = frexp(fabs(x), &e);   /* m in [0.5, 1) */
	uint64_t sig = (uint64_t)ldexp(m, 64);   /* exact: 53 bits */
	return fmt_round_parts(f, ctl, neg, e - 1, sig, false, flags);
}

uint32_t fmt_overflow_result(const fmt_info *f, const fmt_round_ctl *ctl, bool neg)
{
	return overflow_result(f, ctl, neg);
}

uint32_t fmt_inf_result(const fmt_info *f, const fmt_round_ctl *ctl, bool neg)
{
	return inf_result(f, ctl, neg);
}
