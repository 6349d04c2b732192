/* fmt's rounding of fp32 lanes, written once over fmt/vec_body.h's vectors
 * for the AVX2 and the portable path (fmt/bulk_body.h's loops, and the MX
 * block kernels of quant/quant_body.h). Each gives bulk_encode1's bits
 * (fmt/bulk_impl.h) lane by lane:
 *
 * - bf16 without saturation: RNE adds 0x7fff + lsb to the pattern, SR adds
 *   (~r) >> 16 (a carry out of the low 16 bits iff they exceed r >> 16); the
 *   carry can reach the exponent, and inf past the largest value, never the
 *   sign. Exact for subnormal inputs too;
 * - fp16 RNE without saturation (AVX2): the F16C conversion;
 * - every other kernel format (kind FAST): a result in the normal range
 *   drops the same number of bits (shift) in every binade, so its rounding
 *   is a carry into the kept bits, a + add with add = 2^(shift-1) - 1 + lsb
 *   (RNE) or ~r >> (32 - shift) (SR: a carry iff the discarded bits d
 *   exceed r >> (32 - shift), that is r < d 2^(32 - shift)); a subnormal
 *   result of fp16 or an fp8 format lies on the fixed grid 2^m, where y =
 *   |x| 2^-m is exact in fp32: RNE by one add of 2^(m + 23)
 *   (VB_NAME(fast_mag)), SR by the carry with the lane's own count of
 *   discarded bits (VB_NAME(fast_sr)); these are kinds BB_SUB_*. bf16
 *   (saturating) and tf32 span fp32's exponents: the carry serves their
 *   subnormal results too. Overflow is min(code,
 *   ov_bits), as ov_bits is max_bits or max_bits + 1 for every format here
 *   (bulk_params_init), then the sign, then NaN;
 * - rto, rnz and sr-equal, every kernel format (kinds BB_GEN_*): bulk_encode1's
 *   formula lane by lane (VB_NAME(gen)), with the lane's own count of
 *   discarded bits.
 *
 * Includers define what fmt/vec_body.h asks for. */

#include "fmt/bulk_impl.h"
#include "fmt/vec_body.h"

#ifndef MIXPREC_FMT_BULK_BODY_KINDS
#define MIXPREC_FMT_BULK_BODY_KINDS
typedef enum {
	BB_BF16_RNE,
	BB_BF16_SR,
	BB_FP16_F16C,   /* AVX2 only */
	BB_FAST_RNE,    /* kind FAST without a subnormal grid (bf16 saturating, tf32) */
	BB_FAST_SR,
	BB_SUB_RNE,     /* kind FAST with one (fp16, fp8, fp6, fp4): a kind of its own, so */
	BB_SUB_SR,      /* that the loops hold no test of the format's */
	BB_FP32,        /* fp32 itself: NaNs made canonical, inf to max when saturating */
	BB_GEN_RTO,     /* VB_NAME(gen): bulk_encode1's rules lane by lane, any kernel format */
	BB_GEN_RNZ,
	BB_GEN_SRE,     /* sr-equal */
} bb_kind;
#endif

/* bulk_params as the kernels use them: shift counts as scalars, the rest
 * as vectors (which the compiler keeps in memory operands rather than
 * broadcasting again where registers run short). */
typedef struct {
	uint32_t shift, keep, sign_shift;
	bool has_sub;          /* fp16, fp8: results below the min normal on a fixed grid */
	bool ov_nan;           /* the overflow result is a NaN (e4m3 without saturation) */
	VB_U shift_v, rebias, half_rb, max_bits, ov_bits, nan_bits, sign_bit;
	VB_U min_normal;       /* fp32 pattern of the format's min normal */
	VB_U sub_base;         /* a subnormal result drops sub_base - max(e, 1) bits */
	VB_U sb1, rb_sh;       /* sub_base - 1, rebias << shift (VB_NAME(fast_sr)) */
	VB_U exp_mask, minus_e1, nr_far;   /* fast_sr's constants, read from memory: 0x7f800000,
	                                    * -2^23, -2^24 - 1 */
	VB_U far_normal;       /* patterns below this drop more than 31 bits */
	VB_F sub_magic;        /* 2^(m + 23) for the min subnormal 2^m */
	VB_F sub_unit;         /* 2^m */
	VB_U ov_f32;           /* the fp32 pattern of ov_bits' value (quantize) */
	VB_U k1f, nk2;         /* the SR key, k1 folded as VB_NAME(keyed) wants it, ~k2 */
	VB_U e32_min, g_sub_base;      /* VB_NAME(gen): bulk_params' e32_min and sub_base */
	VB_U ov_sign, zero_unsigned;   /* VB_NAME(gen): all ones where ov_signed, zero_unsigned */
	fmt_id fmt;
} VB_NAME(par);

static inline bb_kind VB_NAME(kind_of)(const bulk_params *p)
{
	bool saturate = p->ov_bits == p->max_bits;
	if (p->fmt == FMT_FP32)
		return BB_FP32;   /* exact in every mode */
	if (p->mode == FMT_RTO || p->mode == FMT_RNZ || p->mode == FMT_SR_EQUAL)
		return p->mode == FMT_RTO ? BB_GEN_RTO : p->mode == FMT_RNZ ? BB_GEN_RNZ : BB_GEN_SRE;
	if (p->fmt == FMT_BF16 && !saturate)
		return p->sr ? BB_BF16_SR : BB_BF16_RNE;
#if VB_AVX2
	if (p->fmt == FMT_FP16 && !p->sr && !saturate)
		return BB_FP16_F16C;
#endif
	if (p->e32_min > 1)
		return p->sr ? BB_SUB_SR : BB_SUB_RNE;
	return p->sr ? BB_FAST_SR : BB_FAST_RNE;
}

static inline bool VB_NAME(kind_sub)(bb_kind kind)
{
	return kind == BB_SUB_RNE || kind == BB_SUB_SR;
}

static inline bool VB_NAME(kind_fast_sr)(bb_kind kind)
{
	return kind == BB_FAST_SR || kind == BB_SUB_SR;
}

VB_INLINE VB_NAME(par) VB_NAME(par_of)(const bulk_params *p, rng_key k)
{
	uint32_t ov_f32 = bulk_decode1(p->fmt, p->ov_bits);
	VB_NAME(par) v = {
		.shift = p->shift,
		.keep = 32 - p->shift,
		.sign_shift = p->sign_shift,
		.has_sub = p->e32_min > 1,
		.ov_nan = (ov_f32 & 0x7fffffffu) > 0x7f800000u,
		.shift_v = VB_NAME(splat)(p->shift),
		.rebias = VB_NAME(splat)(p->rebias),
		.half_rb = VB_NAME(splat)(p->shift ? (1u << (p->shift - 1)) - 1u - (p->rebias << p->shift) : 0),
		.max_bits = VB_NAME(splat)(p->max_bits),
		.ov_bits = VB_NAME(splat)(p->ov_bits),
		.nan_bits = VB_NAME(splat)(p->nan_bits),
		.sign_bit = VB_NAME(splat)(0x80000000u >> p->sign_shift),
		.ov_f32 = VB_NAME(splat)(ov_f32),
		.k1f = VB_NAME(splat)(k.k1 ^ (k.k1 >> 16)),
		.nk2 = VB_NAME(splat)(~k.k2),
		.e32_min = VB_NAME(splat)(p->e32_min),
		.g_sub_base = VB_NAME(splat)(p->sub_base),
		.ov_sign = VB_NAME(splat)(p->ov_signed ? ~0u : 0u),
		.zero_unsigned = VB_NAME(splat)(p->zero_unsigned ? ~0u : 0u),
		.fmt = p->fmt,
	};
	if (v.has_sub) {
		int m = (int)p->e32_min - 127 - p->frac_bits;   /* the min subnormal 2^m */
		v.min_normal = VB_NAME(splat)(p->e32_min << 23);
		v.sub_base = VB_NAME(splat)(p->sub_base);
		v.sb1 = VB_NAME(splat)(p->sub_base - 1);
		v.rb_sh = VB_NAME(splat)(p->rebias << p->shift);
		v.exp_mask = VB_NAME(splat)(0x7f800000u);
		v.minus_e1 = VB_NAME(splat)(0xff800000u);
		v.nr_far = VB_NAME(splat)(0xfeffffffu);
		v.far_normal = VB_NAME(splat)((p->sub_base - 31) << 23);
		v.sub_magic = (VB_F)VB_NAME(splat)((uint32_t)(127 + m + 23) << 23);
		v.sub_unit = (VB_F)VB_NAME(splat)((uint32_t)(127 + m) << 23);
	}
	return v;
}

/* VB_NAME(par_of) for a loop of the format cf's own (FMT_COUNT: a loop
 * for any format; else the caller has p->fmt == cf): the shift counts as
 * constants, which the shifts then take as immediates (a count held in a
 * register costs Intel's cores a second micro-op per shift). They are
 * bulk_params_init's, 23 - frac_bits and 32 - width. */
VB_INLINE VB_NAME(par) VB_NAME(par_for)(const bulk_params *p, rng_key k, fmt_id cf)
{
	VB_NAME(par) v = VB_NAME(par_of)(p, k);
	int frac = cf == FMT_FP16 ? 10 : cf == FMT_E4M3 ? 3 : cf == FMT_E5M2 ? 2 : -1;
	if (frac >= 0) {
		v.shift = (uint32_t)(23 - frac);
		v.keep = 32 - v.shift;
		v.sign_shift = cf == FMT_FP16 ? 16 : 24;
		v.shift_v = VB_NAME(splat)(v.shift);
	}
	return v;
}

/* Stochastic rounding of the fp16 and fp8 formats in one formula for
 * every lane, nr = ~r: the carry trick of the normal range with the lane's
 * own count of discarded bits cnt, on the pattern less the rebias in
 * normal lanes (a carry bumps the exponent) and on the significand, the
 * implicit bit included, in subnormal ones: (val + (nr >> (32 - cnt))) >>
 * cnt, as val + 2^cnt < 2^32 for cnt <= 31. Both come from one subtrahend,
 * D = min((e - 1) 2^23, (e32_min - 1) 2^23) (signed; e the lane's fp32
 * exponent field): val = a - D is the significand of a subnormal result's
 * lane and a - rebias 2^shift of a normal one (rebias 2^shift is
 * (e32_min - 1) 2^23), and cnt = sub_base - 1 - D / 2^23 is shift or
 * sub_base - e. Lanes that drop 32 bits or more (fp32 subnormals among
 * them, where D is negative and val meaningless) get 0 from the formula
 * (both shifts give 0 for a count of 32 or more), and round up to the
 * smallest subnormal iff r < hi + below, hi the first 32 discarded bits
 * and below whether any lie under them (bulk_encode1's rule): hi + below
 * <= val < 2^24, so only a lane with r < 2^24 (one in 256) can go up, and
 * only then is the rule evaluated (VB_NAME(fast_sr_far)). */
static __attribute__((noinline, cold)) VB_TARGET VB_U VB_NAME(fast_sr_far)(const VB_NAME(par) *v, VB_U a, VB_U nr,
                                                                           VB_U far, VB_U code)
{
	VB_U emu = VB_NAME(maxu)(a >> 23, VB_NAME(splat)(1));
	VB_U sub = (VB_U)((VB_I)a < (VB_I)v->min_normal);
	VB_U c = VB_NAME(minu)(VB_NAME(maxs)(v->sub_base - emu, v->shift_v), VB_NAME(splat)(63));
	VB_U val = a - (sub & ((emu - 1u) << 23));
	VB_U hi = VB_NAME(srlv)(val, c - 32u);
	VB_U hb = hi + 1u + (VB_U)(VB_NAME(sllv)(val, 64u - c) == 0u);   /* hi + below */
	return VB_NAME(sel)(far, 1u + VB_NAME(ge)(~nr, hb), code);
}

/* av, where not NULL: the lanes' magnitudes before a scaling that gave
 * a (quant's MX sr); a lane whose product vanished (a = 0 < av) rounds as
 * the smallest fp32 subnormal, which only the far lanes' rule tells from
 * 0 (both are far lanes, and the formula gives both 0). */
VB_INLINE VB_U VB_NAME(fast_sr_of)(const VB_NAME(par) *v, VB_U a, VB_U nr, const VB_U *av)
{
	VB_U d = (VB_U)VB_NAME(mins)((VB_U)((a & v->exp_mask) + v->minus_e1), v->rb_sh);
	VB_U cnt = v->sb1 - (VB_U)((VB_I)d >> 23);
	VB_U code = VB_NAME(srlv)(a - d + VB_NAME(srlv)(nr, 32u - cnt), cnt);
	/* far lanes with r < 2^24, tested as a - far_normal < 0 (both below
	 * 2^31) and nr's top byte all ones (the byte compare sets that byte's
	 * top bit, the lane's sign); then as nr in [-2^24, 0) as a signed
	 * number. The fix is out of line: its constants and temporaries would
	 * otherwise take registers (AVX2 has 16) from the loop around it. */
	VB_U far_sign = (VB_U)((VB_B)nr == (VB_B){ 0 } - 1);
	if (__builtin_expect_with_probability(VB_NAME(any_neg)(a - v->far_normal, far_sign), 0, 0.001)) {
		VB_U far = (VB_U)((VB_I)a < (VB_I)v->far_normal) & (VB_U)((VB_I)nr > (VB_I)v->nr_far);
		VB_U af = av ? VB_NAME(maxu)(a, VB_NAME(minu)(*av, VB_NAME(splat)(1))) : a;
		code = VB_NAME(fast_sr_far)(v, af, nr, far & (VB_U)((VB_I)nr >> 31), code);
	}
	return code;
}

VB_INLINE VB_U VB_NAME(fast_sr)(const VB_NAME(par) *v, VB_U a, VB_U nr)
{
	return VB_NAME(fast_sr_of)(v, a, nr, NULL);
}

/* The magnitude's code before overflow (above max_bits on overflow); sub
 * gets the lanes rounded on the subnormal grid 2^m (has_sub: the format
 * has one). RNE rounds those lanes by one add of 2^(m + 23): |x| < 2^(m +
 * 23) lies below the sum's binade, whose ulp is 2^m, so the sum is 2^(m +
 * 23) + k 2^m with k = |x| / 2^m rounded to nearest even (2^(m + 23) is an
 * even multiple of 2^m), and its pattern less that of 2^(m + 23) is k, the
 * code (the min normal's code 2^frac_bits where |x| rounds up to it). */
VB_INLINE VB_U VB_NAME(fast_mag)(const VB_NAME(par) *v, bool sr, bool has_sub, VB_U a, VB_U h1, VB_U *sub)
{
	*sub = (VB_U){ 0 };
	if (has_sub)
		*sub = (VB_U)((VB_I)a < (VB_I)v->min_normal);   /* a < 2^31: signed */
	if (sr && has_sub)
		return VB_NAME(fast_sr)(v, a, VB_NAME(rbits_not)(h1, v->nk2));
	VB_U enc;
	if (sr) {
		/* lowbias32's last step leaves the top half alone, and nr >> keep (keep >= 16) reads none of the rest */
		VB_U nr = VB_NAME(mix_body)(h1) ^ v->nk2;
		enc = ((a + (nr >> v->keep)) >> v->shift) - v->rebias;
	} else {
		/* the rebias folded into half_rb: normal lanes have a >= its shifted value */
		enc = (a + v->half_rb + ((a >> v->shift) & 1u)) >> v->shift;
	}
	if (has_sub)
		enc = VB_NAME(sel)(*sub, (VB_U)((VB_F)a + v->sub_magic) - (VB_U)v->sub_magic, enc);
	return enc;
}

VB_INLINE VB_U VB_NAME(nan_mask)(VB_U x)
{
	return (VB_U)((VB_I)(x & 0x7fffffffu) > 0x7f800000);
}

/* bf16 in the high half of each lane (x + add), NaN lanes the canonical NaN. */
VB_INLINE VB_U VB_NAME(bf16_high)(const VB_NAME(par) *v, bool sr, VB_U x, VB_U h1)
{
	/* SR: lowbias32's last step, x ^= x >> 16, leaves the top half alone */
	VB_U add = sr ? (VB_NAME(mix_body)(h1) ^ v->nk2) >> 16 : 0x7fffu + ((x >> 16) & 1u);
	return VB_NAME(sel)(VB_NAME(nan_mask)(x), VB_NAME(splat)(0x7fc00000u), x + add);
}

/* bulk_encode1 lane by lane for rto, rnz and sr-equal (kinds BB_GEN_*):
 * val and s are the significand and the count of discarded bits of a
 * normal or a subnormal result, kept = val >> s; inexact when any
 * discarded bit is set (a count of 32 or more discards all). rto sets an
 * even kept's last bit, rnz carries when the first 32 discarded bits
 * exceed 2^31 (nothing lies below them when they are exactly 2^31: ties
 * keep kept), sr-equal carries when r < 2^31, that is when the top bit of
 * nr = ~r is set (VB_NAME(mix_body) of h1, as VB_NAME(encode) takes it). Past max a
 * finite lane gives +-max under rto, and under sr-equal when the draw
 * stays down; the overflow result (with the sign where ov_signed)
 * otherwise. */
VB_INLINE VB_U VB_NAME(gen)(const VB_NAME(par) *v, bb_kind kind, VB_U x, VB_U h1)
{
	const VB_U one = VB_NAME(splat)(1), c32 = VB_NAME(splat)(32), zero = { 0 };
	VB_U a = x & 0x7fffffffu, e = a >> 23;
	VB_U normal = VB_NAME(ge)(e, v->e32_min);
	VB_U m = (a & 0x7fffffu) | ((VB_U)(e != 0u) & 0x800000u);
	VB_U val = VB_NAME(sel)(normal, a, m);
	VB_U s = VB_NAME(sel)(normal, v->shift_v, v->g_sub_base - VB_NAME(maxu)(e, one));
	VB_U kept = VB_NAME(srlv)(val, s);
	VB_U inexact = (VB_U)((val & (VB_NAME(sllv)(one, s) - one)) != 0u);
	VB_U up, stay = zero;   /* stay: lanes that keep a finite value at max */
	VB_U finite = (VB_U)((VB_I)a < (VB_I)VB_NAME(splat)(0x7f800000u));
	if (kind == BB_GEN_RNZ) {
		VB_U hi = VB_NAME(sllv)(val, c32 - s) | VB_NAME(srlv)(val, s - c32);
		up = VB_NAME(gt)(hi, VB_NAME(splat)(0x80000000u));
	} else if (kind == BB_GEN_RTO) {
		up = inexact & (VB_U)((kept & one) == 0u);
		stay = finite;
	} else {
		VB_U nr = VB_NAME(mix_body)(h1) ^ v->nk2;
		up = inexact & (VB_U)((VB_I)nr < 0);
		stay = finite & (VB_U)((VB_I)nr >= 0);
	}
	VB_U enc = kept + (up & one) - (normal & v->rebias);
	VB_U sign = (x >> v->sign_shift) & v->sign_bit;
	VB_U ovr = VB_NAME(sel)(stay, v->max_bits | sign, v->ov_bits | (sign & v->ov_sign));
	VB_U fin = VB_NAME(sel)((VB_U)(enc == 0u) & v->zero_unsigned, zero, enc | sign);
	enc = VB_NAME(sel)(VB_NAME(gt)(enc, v->max_bits), ovr, fin);
	return VB_NAME(sel)(VB_NAME(nan_mask)(x), v->nan_bits, enc);
}

/* fp32 patterns x -> codes (32-bit lanes); h1: the keyed counters of the
 * lanes' SR indices times lowbias32's first factor (fmt/vec_body.h's
 * VB_NAME(keyed1) under v->k1f). */
VB_INLINE VB_U VB_NAME(encode)(const VB_NAME(par) *v, bb_kind kind, VB_U x, VB_U h1)
{
	switch (kind) {
	case BB_BF16_RNE:
	case BB_BF16_SR:
		return VB_NAME(bf16_high)(v, kind == BB_BF16_SR, x, h1) >> 16;
#if VB_AVX2
	case BB_FP16_F16C:
		return VB_NAME(sel)(VB_NAME(nan_mask)(x), v->nan_bits, VB_NAME(f16c_encode)(x));
#endif
	case BB_FP32: {
		VB_U y = VB_NAME(minu)(x & 0x7fffffffu, v->ov_bits) | (x & 0x80000000u);
		return VB_NAME(sel)(VB_NAME(nan_mask)(x), VB_NAME(splat)(0x7fc00000u), y);
	}
	case BB_GEN_RTO:
	case BB_GEN_RNZ:
	case BB_GEN_SRE:
		return VB_NAME(gen)(v, kind, x, h1);
	default: {
		VB_U sub, a = x & 0x7fffffffu;
		VB_U enc = VB_NAME(fast_mag)(v, VB_NAME(kind_fast_sr)(kind), VB_NAME(kind_sub)(kind), a, h1, &sub);
		enc = VB_NAME(minu)(enc, v->ov_bits);
		enc |= (x >> v->sign_shift) & v->sign_bit;
		return VB_NAME(sel)(VB_NAME(nan_mask)(x), v->nan_bits, enc);
	}
	}
}

/* codes -> fp32 patterns (bulk_decode1). The fp8 formats by their tables
 * (AVX2: one gather), fp16 by F16C or by its parts. */
VB_INLINE VB_U VB_NAME(code_decode)(fmt_id fmt, VB_U b)
{
	const VB_U qnan = VB_NAME(splat)(0x7fc00000u);
	switch (fmt) {
	case FMT_BF16:
	case FMT_TF32: {
		VB_U y = b << (fmt == FMT_BF16 ? 16 : 13);
		return VB_NAME(sel)(VB_NAME(nan_mask)(y), qnan, y);
	}
	case FMT_FP16: {
#if VB_AVX2
		VB_U y = (VB_U)_mm256_cvtph_ps(_mm256_castsi256_si128((__m256i)VB_NAME(pack16)(b, b)));
#else
		VB_U e = (b >> 10) & 0x1fu, m = b & 0x3ffu, sign = (b & 0x8000u) << 16;
		VB_U y = ((e + 112u) << 23) | (m << 13);
		y = VB_NAME(sel)((VB_U)(e == 0u), (VB_U)(VB_NAME(u2f)(m) * 0x1p-24f), y);
		y = VB_NAME(sel)((VB_U)(e == 0x1fu), 0x7f800000u | ((VB_U)(m != 0u) & 0x400000u), y);
		y |= sign;
#endif
		return VB_NAME(sel)(VB_NAME(nan_mask)(y), qnan, y);
	}
	case FMT_E4M3:
	case FMT_E5M2: {
		const float *tab = bulk_decode_table[fmt];
#if VB_AVX2
		return (VB_U)_mm256_i32gather_ps(tab, (__m256i)b, 4);
#else
		uint32_t t[VB_W], o[VB_W];
		memcpy(t, &b, sizeof t);
		for (int j = 0; j < VB_W; j++)
			memcpy(&o[j], &tab[t[j] & 0xffu], 4);
		return VB_NAME(load)(o);
#endif
	}
	default:
		return VB_NAME(sel)(VB_NAME(nan_mask)(b), qnan, b);
	}
}

/* fp32 patterns x -> the fp32 patterns of their rounded values (h1 as for
 * VB_NAME(encode)): bulk_decode1
 * of the code, built from the code's parts (a normal code's pattern is
 * (code + rebias) << shift, a subnormal one is code 2^m, exact in fp32). */
VB_INLINE VB_U VB_NAME(quantize)(const VB_NAME(par) *v, bb_kind kind, VB_U x, VB_U h1)
{
	const VB_U qnan = VB_NAME(splat)(0x7fc00000u);
	switch (kind) {
	case BB_BF16_RNE:
	case BB_BF16_SR:
		/* NaN lanes already hold fp32's canonical NaN */
		return VB_NAME(bf16_high)(v, kind == BB_BF16_SR, x, h1) & 0xffff0000u;
#if VB_AVX2
	case BB_FP16_F16C: {
		__m128i h = _mm256_cvtps_ph((__m256)x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		return VB_NAME(sel)(VB_NAME(nan_mask)(x), qnan, (VB_U)_mm256_cvtph_ps(h));
	}
#endif
	case BB_FP32:
		return VB_NAME(encode)(v, kind, x, h1);
	case BB_GEN_RTO:
	case BB_GEN_RNZ:
	case BB_GEN_SRE:
		return VB_NAME(code_decode)(v->fmt, VB_NAME(gen)(v, kind, x, h1));
	default: {
		VB_U sub, a = x & 0x7fffffffu;
		VB_U enc = VB_NAME(fast_mag)(v, VB_NAME(kind_fast_sr)(kind), VB_NAME(kind_sub)(kind), a, h1, &sub);
		VB_U ov = VB_NAME(gt)(enc, v->max_bits);
		VB_U mag = (enc + v->rebias) << v->shift;
		if (VB_NAME(kind_sub)(kind))
			mag = VB_NAME(sel)(sub, (VB_U)(VB_NAME(u2f)(enc) * v->sub_unit), mag);
		mag = VB_NAME(sel)(ov, v->ov_f32, mag);
		/* a NaN from overflow (e4m3) takes no sign, as bulk_decode1 gives none */
		VB_U keep_sign = v->ov_nan ? ~ov : VB_NAME(splat)(~0u);
		mag |= x & 0x80000000u & keep_sign;
		return VB_NAME(sel)(VB_NAME(nan_mask)(x), qnan, mag);
	}
	}
}

