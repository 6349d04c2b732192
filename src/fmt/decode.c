#include <math.h>

#include "fmt/decode.h"

const char *fmt_class_name(fmt_class c)
{
	switch (c) {
	case FMT_CLASS_ZERO:      return "zero";
	case FMT_CLASS_SUBNORMAL: return "subnormal";
	case FMT_CLASS_NORMAL:    return "normal";
	case FMT_CLASS_INF:       return "inf";
	case FMT_CLASS_NAN:       return "nan";
	}
	return "?";
}

/* An integer pattern: its two's complement value, on the grid of 1. */
static void decode_int(const fmt_info *f, uint32_t bits, fmt_decoded *out)
{
	int32_t v = fmt_int_value(f, bits);
	out->neg = v < 0;
	out->exp_field = 0;
	out->frac_field = bits & (fmt_sign_mask(f) - 1u);   /* the bits below the sign */
	out->cls = v == 0 ? FMT_CLASS_ZERO : FMT_CLASS_NORMAL;
	out->exponent = 0;
	out->value = (double)v;
	out->ulp = 1.0;
}

void fmt_decode(const fmt_info *f, uint32_t bits, fmt_decoded *out)
{
	bits &= fmt_all_mask(f);
	if (fmt_is_int(f)) {
		decode_int(f, bits, out);
		return;
	}
	uint32_t top = (1u << f->exp_bits) - 1u;
	out->neg = (bits & fmt_sign_mask(f)) != 0;
	out->exp_field = (bits >> f->frac_bits) & top;
	out->frac_field = bits & fmt_frac_mask(f);
	uint32_t mag = bits & ~fmt_sign_mask(f) & fmt_all_mask(f);

	if (fmt_is_p3109(f) && (bits == fmt_nan_bits(f) || (fmt_has_inf(f) && mag == fmt_inf_bits(f)))) {
		/* P3109: one NaN; the infinities follow the largest magnitude */
		out->cls = bits == fmt_nan_bits(f) ? FMT_CLASS_NAN : FMT_CLASS_INF;
	} else if (out->exp_field == top && f->specials == FMT_SPECIALS_IEEE) {
		out->cls = out->frac_field ? FMT_CLASS_NAN : FMT_CLASS_INF;
	} else if (f->specials == FMT_SPECIALS_FN && mag == fmt_nan_bits(f)) {
		out->cls = FMT_CLASS_NAN;
	} else if (f->specials == FMT_SPECIALS_FNUZ && bits == fmt_nan_bits(f)) {
		out->cls = FMT_CLASS_NAN;
	} else if (f->specials == FMT_SPECIALS_E8M0) {
		out->cls = bits == fmt_nan_bits(f) ? FMT_CLASS_NAN : FMT_CLASS_NORMAL;
	} else if (out->exp_field == 0) {
		out->cls = out->frac_field ? FMT_CLASS_SUBNORMAL : FMT_CLASS_ZERO;
	} else {
		out->cls = FMT_CLASS_NORMAL;
	}

	switch (out->cls) {
	case FMT_CLASS_NAN:
		out->exponent = 0;
		out->value = NAN;
		out->ulp = NAN;
		return;
	case FMT_CLASS_INF:
		out->exponent = 0;
		out->value = out->neg ? -INFINITY : INFINITY;
		out->ulp = NAN;
		return;
	case FMT_CLASS_ZERO:
	case FMT_CLASS_SUBNORMAL:
		out->exponent = fmt_emin(f);
		out->value = ldexp((double)out->frac_field, fmt_emin(f) - f->frac_bits);
		break;
	case FMT_CLASS_NORMAL:
		/* e8m0: exp_field 0 is 2^-127, a normal number (there is no zero) */
		out->exponent = (int)out->exp_field - f->bias;
		out->value = ldexp((double)(out->frac_field | (1u << f->frac_bits)),
		                   out->exponent - f->frac_bits);
		break;
	}
	out->ulp = ldexp(1.0, out->exponent - f->frac_bits);
	if (out->neg)
		out->value = -out->value;
}

double fmt_to_double(const fmt_info *f, uint32_t bits)
{
	fmt_decoded d;
	fmt_decode(f, bits, &d);
	return d.value;
}

/* Next larger magnitude of a non-negative pattern, or false past the end. */
static bool mag_up(const fmt_info *f, uint32_t mag, uint32_t *out)
{
	if (mag >= fmt_max_bits(f)) {
		if (mag == fmt_max_bits(f) && fmt_has_inf(f)) {
			*out = fmt_inf_bits(f);
			return true;
		}
		return false;
	}
	*out = mag + 1;
	return true;
}

/* An integer's neighbour v + step, false past either end of the range. */
static bool int_step(const fmt_info *f, uint32_t bits, int step, uint32_t *out)
{
	int32_t v = fmt_int_value(f, bits) + step;
	int32_t hi = (int32_t)fmt_max_bits(f);
	if (v > hi || v < -hi - 1)
		return false;
	*out = fmt_int_bits(f, v);
	return true;
}

bool fmt_next_up(const fmt_info *f, uint32_t bits, uint32_t *out)
{
	if (fmt_is_int(f))
		return int_step(f, bits, 1, out);
	fmt_decoded d;
	fmt_decode(f, bits, &d);
	if (d.cls == FMT_CLASS_NAN)
		return false;
	uint32_t mag = bits & fmt_all_mask(f) & ~fmt_sign_mask(f);
	if (!d.neg)
		return mag_up(f, mag, out);
	if (mag == 1 && !fmt_has_neg_zero(f)) {   /* FNUZ: -min subnormal steps to 0, not to NaN */
		*out = 0;
		return true;
	}
	if (d.cls == FMT_CLASS_ZERO) {       /* -0 -> smallest positive subnormal */
		*out = 1;
		return true;
	}
	if (d.cls == FMT_CLASS_INF) {
		*out = fmt_sign_mask(f) | fmt_max_bits(f);
		return true;
	}
	*out = fmt_sign_mask(f) | (mag - 1);   /* -min subnormal steps to -0 */
	return true;
}

bool fmt_next_down(const fmt_info *f, uint32_t bits, uint32_t *out)
{
	if (fmt_is_int(f))
		return int_step(f, bits, -1, out);
	/* next_down(x) = -next_up(-x) */
	uint32_t neg = (bits ^ fmt_sign_mask(f)) & fmt_all_mask(f);
	fmt_decoded d;
	fmt_decode(f, bits, &d);
	if (d.cls == FMT_CLASS_NAN)
		return false;
	if (!fmt_has_sign(f)) {   /* e8m0, P3109 unsigned: one step down the patterns */
		if ((bits & fmt_all_mask(f)) == 0)
			return false;
		*out = (bits & fmt_all_mask(f)) - 1;
		return true;
	}
	if (d.cls == FMT_CLASS_ZERO && !fmt_has_neg_zero(f)) {   /* FNUZ: 0 -> -min subnormal */
		*out = fmt_sign_mask(f) | 1u;
		return true;
	}
	uint32_t r;
	if (!fmt_next_up(f, neg, &r))
		return false;
	*out = r == 0 && !fmt_has_neg_zero(f) ? 0 : (r ^ fmt_sign_mask(f)) & fmt_all_mask(f);
	return true;
}
