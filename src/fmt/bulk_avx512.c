/* AVX-512 kernels (F, BW, VL, DQ, BF16): compiled for those features by
 * function attributes and only called when the CPU reports them. */
#include "fmt/bulk_avx512_parts.h"
#include "fmt/bulk_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

typedef struct {
	__m512i shift, e32_min, rebias, sub_base, max_bits, ov_bits, nan_bits, sign_shift;
	__m512i min_normal, half_rb, keep_shift;   /* encode_fast: a of the min normal, 2^(shift-1) - 1 -
	                                              (rebias << shift) (mod 2^32), 32 - shift */
	__m512 sub_scale;                          /* encode_fast: 2^-m, m = log2 of the min subnormal */
	__m512i k1f, k2, nk2, lane;                /* k1f = k1 ^ (k1 >> 16), nk2 = ~k2 */
	__m512i sign_bit;                          /* encode_fast: the format's sign bit */
	__m128i sign_count;                        /* encode_fast: sign_shift, as a shift count */
	__mmask16 ov_signed;
	uint16_t ov_bits16, nan_bits16;            /* fp16 and fp8 lines: ov_bits and nan_bits */
	int saturate;
	fmt_id fmt;
} vparams;

/* 2^-m for the format's min subnormal 2^m, or 0 when 2^-m is no normal
 * fp32 (bf16, tf32, fp32: encode_fast does not serve them). */
static float sub_scale_of(const bulk_params *p)
{
	int m = (int)p->e32_min - 127 - p->frac_bits;
	if (-m < -126 || -m > 127)
		return 0.0f;
	uint32_t b = (uint32_t)(127 - m) << 23;
	return bulk_u2f(b);
}

T512 static inline __attribute__((always_inline)) vparams vparams_load(const bulk_params *p, rng_key k)
{
	vparams v = {
		.min_normal = _mm512_set1_epi32((int)(p->e32_min << 23)),
		/* fp32 (shift 0) never takes encode_fast; its accumulate still loads these */
		.half_rb = _mm512_set1_epi32(p->shift ? (int)((1u << (p->shift - 1)) - 1u - (p->rebias << p->shift)) : 0),
		.keep_shift = _mm512_set1_epi32((int)(32 - p->shift)),
		.sub_scale = _mm512_set1_ps(sub_scale_of(p)),
		.shift = _mm512_set1_epi32((int)p->shift),
		.e32_min = _mm512_set1_epi32((int)p->e32_min),
		.rebias = _mm512_set1_epi32((int)p->rebias),
		.sub_base = _mm512_set1_epi32((int)p->sub_base),
		.max_bits = _mm512_set1_epi32((int)p->max_bits),
		.ov_bits = _mm512_set1_epi32((int)p->ov_bits),
		.nan_bits = _mm512_set1_epi32((int)p->nan_bits),
		.sign_shift = _mm512_set1_epi32((int)p->sign_shift),
		.k1f = _mm512_set1_epi32((int)(k.k1 ^ (k.k1 >> 16))),
		.k2 = _mm512_set1_epi32((int)k.k2),
		.nk2 = _mm512_set1_epi32((int)~k.k2),
		.sign_bit = _mm512_set1_epi32((int)(0x80000000u >> p->sign_shift)),
		.sign_count = _mm_cvtsi32_si128((int)p->sign_shift),
		.lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
		.ov_signed = p->ov_signed ? 0xffff : 0,
		.ov_bits16 = (uint16_t)p->ov_bits,
		.nan_bits16 = (uint16_t)p->nan_bits,
		.saturate = p->ov_bits == p->max_bits,
		.fmt = p->fmt,
	};
	return v;
}

/* lowbias32 of (idx ^ k1) up to its second multiply (bulk_avx512_mix32_body). */
T512 static inline __attribute__((always_inline)) __m512i mix32_body(const vparams *v, __m512i idx)
{
	return bulk_avx512_mix32_body(idx, v->k1f);
}

/* The indices idx_lo + 0..15. */
T512 static inline __attribute__((always_inline)) __m512i idx16(const vparams *v, uint32_t idx_lo)
{
	return _mm512_add_epi32(_mm512_set1_epi32((int)idx_lo), v->lane);
}

/* Random bits for the lanes' indices idx (rng_bits_keyed in every lane). */
T512 static inline __attribute__((always_inline)) __m512i rand16(const vparams *v, __m512i idx)
{
	return bulk_avx512_rbits(idx, v->k1f, v->k2);
}

/* The complement of rand16's bits, at the same cost (~r = x ^ (x >> 16) ^ ~k2). */
T512 static inline __attribute__((always_inline)) __m512i rand16_not(const vparams *v, __m512i idx)
{
	return bulk_avx512_rbits(idx, v->k1f, v->nk2);
}

/* The complement of rand16's bits in the top 16 bits of each lane (the low
 * 16 bits differ): lowbias32's last step, x ^= x >> 16, only changes the low
 * half, so a kernel that reads only the top half can leave it out. */
T512 static inline __attribute__((always_inline)) __m512i rand16_not_top16(const vparams *v, __m512i idx)
{
	return _mm512_xor_si512(mix32_body(v, idx), v->nk2);
}

/* bulk_encode1 in 16 lanes, for every mode of the kernels (the kinds
 * KIND_GEN_*; r: the lanes' random bits where the mode draws). */
T512 static inline __attribute__((always_inline)) __m512i encode_generic(const vparams *v, int mode, __m512i x,
                                                                        __m512i r)
{
	const __m512i one = _mm512_set1_epi32(1), c32 = _mm512_set1_epi32(32);
	__m512i sign = _mm512_srlv_epi32(_mm512_and_si512(x, _mm512_set1_epi32((int)0x80000000u)),
	                                 v->sign_shift);
	__m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
	__mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
	__m512i e = _mm512_srli_epi32(a, 23);
	__mmask16 normal = _mm512_cmpge_epu32_mask(e, v->e32_min);
	__m512i m = _mm512_and_si512(a, _mm512_set1_epi32(0x7fffff));
	m = _mm512_mask_or_epi32(m, _mm512_test_epi32_mask(e, e), m, _mm512_set1_epi32(0x800000));
	__m512i val = _mm512_mask_blend_epi32(normal, m, a);
	__m512i s = _mm512_mask_blend_epi32(normal, _mm512_sub_epi32(v->sub_base, _mm512_max_epu32(e, one)),
	                                    v->shift);
	__m512i kept = _mm512_srlv_epi32(val, s);
	__m512i hi = _mm512_or_si512(_mm512_sllv_epi32(val, _mm512_sub_epi32(c32, s)),
	                             _mm512_srlv_epi32(val, _mm512_sub_epi32(s, c32)));
	__mmask16 up, stay = 0;   /* stay: finite lanes past max that give max (rto, sr-equal down) */
	__mmask16 inexact = _mm512_test_epi32_mask(val, _mm512_sub_epi32(_mm512_sllv_epi32(one, s), one));
	__mmask16 finite = _mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
	if (mode == FMT_SR) {
		__m512i below_mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, _mm512_sub_epi32(s, c32)), one);
		__mmask16 below = _mm512_cmpgt_epu32_mask(s, c32) & _mm512_test_epi32_mask(val, below_mask);
		__m512i t = _mm512_mask_add_epi32(hi, below, hi, one);
		up = _mm512_cmplt_epu32_mask(r, t);
	} else if (mode == FMT_RTO) {
		up = inexact & _mm512_testn_epi32_mask(kept, one);
		stay = finite;
	} else if (mode == FMT_SR_EQUAL) {
		__mmask16 low = _mm512_cmplt_epu32_mask(r, _mm512_set1_epi32((int)0x80000000u));
		up = inexact & low;
		stay = finite & (__mmask16)~low;
	} else if (mode == FMT_RNZ) {
		up = _mm512_cmpgt_epu32_mask(hi, _mm512_set1_epi32((int)0x80000000u));
	} else {
		__m512i thr = _mm512_sub_epi32(_mm512_set1_epi32((int)0x80000000u), _mm512_and_si512(kept, one));
		up = _mm512_cmpgt_epu32_mask(hi, thr);
	}
	__m512i enc = _mm512_mask_add_epi32(kept, up, kept, one);
	enc = _mm512_mask_sub_epi32(enc, normal, enc, v->rebias);
	__mmask16 ov = _mm512_cmpgt_epu32_mask(enc, v->max_bits);
	enc = _mm512_mask_mov_epi32(enc, ov, v->ov_bits);
	enc = _mm512_mask_mov_epi32(enc, ov & stay, v->max_bits);
	__mmask16 keep_sign = (__mmask16)(~nan & ~(ov & ~stay & ~v->ov_signed));
	enc = _mm512_mask_or_epi32(enc, keep_sign, enc, sign);
	return _mm512_mask_mov_epi32(enc, nan, v->nan_bits);
}

/* The magnitude's encoding before overflow: in [0, max_bits] when the result
 * is finite, above max_bits (and below 2^16) on overflow or NaN; *nan gets
 * the NaN lanes. */
T512 static inline __attribute__((always_inline)) __m512i encode_fast_mag(const vparams *v, bool sr, __m512i x,
                                                                         __m512i nr, __mmask16 *nan)
{
	const __m512i one = _mm512_set1_epi32(1);
	__m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
	*nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
	__mmask16 sub = _mm512_cmplt_epu32_mask(a, v->min_normal);
	/* SR: nr = ~r, so ~r >> (32 - shift) costs one shift. RNE: the rebias is
	 * folded into the constant, (a - (rebias << shift) + half + lsb) >> shift,
	 * which on normal lanes (a >= min_normal > rebias << shift) is the same */
	__m512i enc;
	if (sr)
		enc = _mm512_sub_epi32(_mm512_srlv_epi32(_mm512_add_epi32(a, _mm512_srlv_epi32(nr, v->keep_shift)),
		                                         v->shift),
		                       v->rebias);
	else
		enc = _mm512_srlv_epi32(_mm512_add_epi32(_mm512_add_epi32(a, v->half_rb),
		                                         _mm512_and_si512(_mm512_srlv_epi32(a, v->shift), one)),
		                        v->shift);
	{
		/* subnormal lanes: the conversions write straight into enc */
		__m512 y = _mm512_mul_ps(_mm512_castsi512_ps(a), v->sub_scale);
		if (sr) {
			enc = bulk_avx512_sr_grid(enc, sub, y, nr);
		} else {
			enc = _mm512_mask_cvt_roundps_epi32(enc, sub, y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		}
	}
	return enc;
}

/* bulk_encode1 in 16 lanes for the formats whose min subnormal 2^m has 2^-m
 * in fp32's normal range (fp16 and the fp8 formats), in fewer operations:
 * - a result in the normal range drops the same number of bits (shift) in
 *   every binade, so the rounding is a carry into the kept bits: a + add,
 *   add = 2^(shift-1) - 1 + lsb (RNE) or ~r >> (32 - shift) (SR: a carry out
 *   of the discarded bits d iff d > r >> (32 - shift), that is r < d 2^(32-shift),
 *   bulk_encode1's rule when nothing lies below the 32 bits);
 * - a subnormal result lies on the fixed grid 2^m: y = |x| 2^-m is exact in
 *   fp32, RNE is the nearest-even integer of y, and SR rounds floor(y) up iff
 *   r < ceil(frac(y) 2^32), which is bulk_encode1's r < hi + below (frac(y)
 *   and its scaling by 2^32 are exact).
 * Overflow, sign and NaN as in encode_generic, for formats whose overflow
 * result takes the sign (ov_signed). */
T512 static inline __attribute__((always_inline)) __m512i encode_fast(const vparams *v, bool sr, __m512i x, __m512i nr)
{
	__mmask16 nan;
	__m512i enc = encode_fast_mag(v, sr, x, nr, &nan);
	__mmask16 ov = _mm512_cmpgt_epu32_mask(enc, v->max_bits);
	enc = _mm512_mask_mov_epi32(enc, ov, v->ov_bits);
	/* the sign on every lane (the fast kinds take overflow's sign, kind_for),
	 * enc | ((x >> sign_shift) & sign_bit) in one ternary op; NaN lanes last */
	enc = _mm512_ternarylogic_epi32(enc, _mm512_srl_epi32(x, v->sign_count), v->sign_bit, 0xf8);
	return _mm512_mask_mov_epi32(enc, nan, v->nan_bits);
}

/* Kernel variants. Each is compiled into loops of its own (the kind is a
 * compile-time constant there), so nothing but the rounding runs per vector. */
typedef enum {
	KIND_BF16_RNE,   /* integer RNE on the pattern */
	KIND_BF16_SR,    /* carry trick: the SR rule for 16 discarded bits */
	KIND_FP16_RNE,   /* vcvtps2ph, NaNs made canonical */
	KIND_FP32,       /* fp32 itself: only NaNs change (to the canonical NaN) */
	KIND_FAST_RNE,   /* encode_fast: fp16 (saturating) and the fp8 formats */
	KIND_FAST_SR,    /* encode_fast: fp16 and the fp8 formats */
	KIND_GEN_RNE,    /* encode_generic, any format */
	KIND_GEN_SR,
	KIND_GEN_RTO,    /* encode_generic in the other modes, any format */
	KIND_GEN_RNZ,
	KIND_GEN_SRE,    /* sr-equal */
} kernel_kind;

/* The mode of a generic kind. */
T512 static inline __attribute__((always_inline)) int gen_mode(kernel_kind kind)
{
	return kind == KIND_GEN_SR ? FMT_SR : kind == KIND_GEN_RTO ? FMT_RTO : kind == KIND_GEN_RNZ ? FMT_RNZ
	       : kind == KIND_GEN_SRE ? FMT_SR_EQUAL : FMT_RNE;
}

static kernel_kind kind_for(const bulk_params *p)
{
	bool saturate = p->ov_bits == p->max_bits;
	if (p->mode == FMT_RTO || p->mode == FMT_RNZ || p->mode == FMT_SR_EQUAL)
		return p->mode == FMT_RTO ? KIND_GEN_RTO : p->mode == FMT_RNZ ? KIND_GEN_RNZ : KIND_GEN_SRE;
	if (p->fmt == FMT_BF16 && !saturate)
		return p->sr ? KIND_BF16_SR : KIND_BF16_RNE;
	if (p->fmt == FMT_FP16 && !p->sr && !saturate)
		return KIND_FP16_RNE;
	if (p->fmt == FMT_FP32 && !saturate)
		return KIND_FP32;
	/* fp16 and fp8 lines take overflow as min(element, ov_bits) and then add
	 * the sign: ov_bits must be max_bits (saturate) or max_bits + 1 (e4m3's
	 * NaN, fp16's and e5m2's inf), as it is for all three, and below the sign
	 * bit (not so for a NaN 0x80, as FNUZ formats have) */
	bool ov_next = (p->ov_bits == p->max_bits || p->ov_bits == p->max_bits + 1) &&
	               (p->ov_bits >> (31 - p->sign_shift)) == 0;
	if ((p->fmt == FMT_FP16 || p->fmt == FMT_E4M3 || p->fmt == FMT_E5M2) && ov_next && p->ov_signed)
		return p->sr ? KIND_FAST_SR : KIND_FAST_RNE;
	return p->sr ? KIND_GEN_SR : KIND_GEN_RNE;
}

/* bf16 without saturation, in the high half of each lane: x + 0x7fff + lsb
 * (RNE) or x + ((~r) >> 16) (SR: a carry out of the low 16 bits iff
 * low16 > r >> 16), NaN lanes set to the canonical NaN. The carry can reach
 * the exponent (and inf past max) but never the sign bit. Exact for subnormal
 * inputs, which vcvtneps2bf16 would flush. */
T512 static inline __attribute__((always_inline)) __m512i bf16_high_v(const vparams *v, kernel_kind kind,
                                                                     __m512i x, __m512i idx)
{
	__m512i add;
	if (kind == KIND_BF16_RNE)
		add = _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
		                       _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1)));
	else
		add = _mm512_srli_epi32(rand16_not_top16(v, idx), 16);
	__mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
	                                        _mm512_set1_epi32(0x7f800000));
	return _mm512_mask_mov_epi32(_mm512_add_epi32(x, add), nan, _mm512_set1_epi32(0x7fc00000));
}

T512 static inline __attribute__((always_inline)) __m512i bf16_high(const vparams *v, kernel_kind kind,
                                                                   __m512i x, uint32_t idx_lo)
{
	return bf16_high_v(v, kind, x, kind == KIND_BF16_SR ? idx16(v, idx_lo) : _mm512_setzero_si512());
}

/* fp32 patterns -> 16 encodings (in 32-bit lanes); idx: the lanes' SR indices. */
T512 static inline __attribute__((always_inline)) __m512i encode16_v(const vparams *v, kernel_kind kind,
                                                                    __m512i x, __m512i idx)
{
	const __m512i absmask = _mm512_set1_epi32(0x7fffffff);
	switch (kind) {
	case KIND_BF16_RNE:
	case KIND_BF16_SR:
		return _mm512_srli_epi32(bf16_high_v(v, kind, x, idx), 16);
	case KIND_FP16_RNE: {
		/* vcvtps2ph with the rounding in the immediate: MXCSR is not consulted */
		__m256i h = _mm512_cvtps_ph(_mm512_castsi512_ps(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__m512i y = _mm512_cvtepu16_epi32(h);
		__mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, absmask), _mm512_set1_epi32(0x7f800000));
		return _mm512_mask_mov_epi32(y, nan, v->nan_bits);
	}
	case KIND_FP32: {
		__mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, absmask), _mm512_set1_epi32(0x7f800000));
		return _mm512_mask_mov_epi32(x, nan, _mm512_set1_epi32(0x7fc00000));
	}
	case KIND_FAST_RNE:
		return encode_fast(v, false, x, _mm512_setzero_si512());
	case KIND_FAST_SR:
		return encode_fast(v, true, x, rand16_not(v, idx));
	case KIND_GEN_SR:
	case KIND_GEN_SRE:
		return encode_generic(v, gen_mode(kind), x, rand16(v, idx));
	default:
		return encode_generic(v, gen_mode(kind), x, _mm512_setzero_si512());
	}
}

T512 static inline __attribute__((always_inline)) bool kind_is_sr(kernel_kind kind)
{
	return kind == KIND_BF16_SR || kind == KIND_FAST_SR || kind == KIND_GEN_SR || kind == KIND_GEN_SRE;
}

/* encode16_v for the lanes idx_lo + 0..15. */
T512 static inline __attribute__((always_inline)) __m512i encode16(const vparams *v, kernel_kind kind,
                                                                  __m512i x, uint32_t idx_lo)
{
	return encode16_v(v, kind, x, kind_is_sr(kind) ? idx16(v, idx_lo) : _mm512_setzero_si512());
}

T512 static inline __attribute__((always_inline)) __m512 canonical_nan(__m512 y)
{
	__mmask16 nan = _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q);
	return _mm512_mask_mov_ps(y, nan, _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
}

/* 16 encodings (32-bit lanes) -> fp32. */
T512 static inline __attribute__((always_inline)) __m512 decode16(fmt_id fmt, __m512i b)
{
	switch (fmt) {
	case FMT_BF16: return canonical_nan(_mm512_castsi512_ps(_mm512_slli_epi32(b, 16)));
	case FMT_TF32: return canonical_nan(_mm512_castsi512_ps(_mm512_slli_epi32(b, 13)));
	case FMT_FP16: return canonical_nan(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(b)));
	case FMT_E4M3: return _mm512_i32gather_ps(b, bulk_decode_table[FMT_E4M3], 4);
	case FMT_E5M2: return _mm512_i32gather_ps(b, bulk_decode_table[FMT_E5M2], 4);
	default:       return canonical_nan(_mm512_castsi512_ps(b));
	}
}

T512 static inline __attribute__((always_inline)) void store16(size_t size, void *out, size_t i, __mmask16 m, __m512i y)
{
	if (size == 2)
		_mm512_mask_cvtepi32_storeu_epi16((uint16_t *)out + i, m, y);
	else if (size == 1)
		_mm512_mask_cvtepi32_storeu_epi8((uint8_t *)out + i, m, y);
	else
		_mm512_mask_storeu_epi32((uint32_t *)out + i, m, y);
}

T512 static inline __attribute__((always_inline)) __m512i load16(size_t size, const void *in, size_t i, __mmask16 m)
{
	if (size == 2)
		return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)in + i));
	if (size == 1)
		return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, (const uint8_t *)in + i));
	return _mm512_maskz_loadu_epi32(m, (const uint32_t *)in + i);
}

/* Large arrays: the output is written with non-temporal stores (it does not
 * fit the caches anyway, and streaming saves the read-for-ownership of every
 * output line, as memcpy does). Encoding walks the array in one sequential
 * stream: on an AVX-512 machine (1 thread, 256 MiB, ratio to
 * memcpy's traffic rate in the same run) bf16 rne gave 0.93-1.00 so against
 * 0.70-0.84 walking four page-sized blocks at once, e5m2 sr 0.52-0.58 against
 * 0.32-0.35; software prefetching 1 KiB ahead changed nothing. In-place
 * quantize and decode still walk four blocks at once. */
#define STREAM_MIN_ELEMS (1u << 20)
#define STREAM_BLOCK 1024u   /* elements per block: 4 KiB of fp32 */

/* The 32 fp16 encodings of in[0..31] (encode_fast's kinds; iv: the SR
 * indices of in[0..15]): the magnitudes packed to words first (qword q of the
 * pack holds elements 4 (q / 2) + 16 (q % 2) ..+3), then overflow, sign and
 * NaN once per 32 words. Overflow is min(word, ov_bits), as ov_bits is
 * max_bits or max_bits + 1 (kind_for). */
T512 static inline __attribute__((always_inline)) __m512i line_fast16(const vparams *v, bool sr, const float *in,
                                                                     __m512i iv)
{
	const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
	__m512i iv1 = _mm512_add_epi32(iv, _mm512_set1_epi32(16));
	__m512i x0 = _mm512_loadu_si512(in), x1 = _mm512_loadu_si512(in + 16);
	__mmask16 n0, n1;
	__m512i y0 = encode_fast_mag(v, sr, x0, sr ? rand16_not(v, iv) : iv, &n0);
	__m512i y1 = encode_fast_mag(v, sr, x1, sr ? rand16_not(v, iv1) : iv1, &n1);
	__m512i line = _mm512_permutexvar_epi64(order, _mm512_packus_epi32(y0, y1));
	line = _mm512_min_epu16(line, _mm512_set1_epi16((short)v->ov_bits16));
	__mmask32 neg = _kunpackw_mask32(_mm512_movepi32_mask(x1), _mm512_movepi32_mask(x0));
	line = _mm512_mask_add_epi16(line, neg, line, _mm512_set1_epi16((short)0x8000));
	return _mm512_mask_mov_epi16(line, _kunpackw_mask32(n1, n0), _mm512_set1_epi16((short)v->nan_bits16));
}

/* The 64 fp8 encodings of in[0..63], as line_fast16: two saturating packs
 * (unsigned saturation keeps every overflowing magnitude above max_bits) put
 * dword j of 128-bit lane l at elements 16 j + 4 l ..+3, one dword permute
 * puts them in order, then overflow, sign and NaN once per 64 bytes. */
T512 static inline __attribute__((always_inline)) __m512i line_fast8(const vparams *v, bool sr, const float *in,
                                                                    __m512i iv)
{
	const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
	const __m512i c16 = _mm512_set1_epi32(16);
	__m512i iv1 = _mm512_add_epi32(iv, c16), iv2 = _mm512_add_epi32(iv1, c16);
	__m512i iv3 = _mm512_add_epi32(iv2, c16);
	__m512i x0 = _mm512_loadu_si512(in), x1 = _mm512_loadu_si512(in + 16);
	__m512i x2 = _mm512_loadu_si512(in + 32), x3 = _mm512_loadu_si512(in + 48);
	__mmask16 n0, n1, n2, n3;
	__m512i y0 = encode_fast_mag(v, sr, x0, sr ? rand16_not(v, iv) : iv, &n0);
	__m512i y1 = encode_fast_mag(v, sr, x1, sr ? rand16_not(v, iv1) : iv1, &n1);
	__m512i y2 = encode_fast_mag(v, sr, x2, sr ? rand16_not(v, iv2) : iv2, &n2);
	__m512i y3 = encode_fast_mag(v, sr, x3, sr ? rand16_not(v, iv3) : iv3, &n3);
	__m512i line = _mm512_packus_epi16(_mm512_packus_epi32(y0, y1), _mm512_packus_epi32(y2, y3));
	line = _mm512_permutexvar_epi32(order, line);
	line = _mm512_min_epu8(line, _mm512_set1_epi8((char)v->ov_bits16));
	__mmask64 neg = _kunpackd_mask64(_kunpackw_mask32(_mm512_movepi32_mask(x3), _mm512_movepi32_mask(x2)),
	                                 _kunpackw_mask32(_mm512_movepi32_mask(x1), _mm512_movepi32_mask(x0)));
	__mmask64 nan = _kunpackd_mask64(_kunpackw_mask32(n3, n2), _kunpackw_mask32(n1, n0));
	line = _mm512_mask_add_epi8(line, neg, line, _mm512_set1_epi8((char)0x80));
	return _mm512_mask_mov_epi8(line, nan, _mm512_set1_epi8((char)v->nan_bits16));
}

/* Encodes the 64 / size elements that fill one 64-byte output line; iv
 * holds the SR indices of its first 16 elements. */
T512 static inline __attribute__((always_inline)) void encode_line(const vparams *v, kernel_kind kind, size_t size,
                                                                  void *out, const float *in, size_t i, __m512i iv)
{
	const __m512i c16 = _mm512_set1_epi32(16);
	__m512i line;
	if (size == 2 && kind == KIND_FP16_RNE) {
		__m512i x0 = _mm512_loadu_si512(in + i), x1 = _mm512_loadu_si512(in + i + 16);
		const __m512i absmask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
		__m256i h0 = _mm512_cvtps_ph(_mm512_castsi512_ps(x0), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__m256i h1 = _mm512_cvtps_ph(_mm512_castsi512_ps(x1), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__mmask16 n0 = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x0, absmask), inf);
		__mmask16 n1 = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x1, absmask), inf);
		line = _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1);
		line = _mm512_mask_mov_epi16(line, (__mmask32)n0 | ((__mmask32)n1 << 16), _mm512_set1_epi16(0x7e00));
	} else if (size == 2 && (kind == KIND_FAST_RNE || kind == KIND_FAST_SR)) {
		line = line_fast16(v, kind == KIND_FAST_SR, in + i, iv);
	} else if (size == 2) {
		/* two vectors of codes in 32-bit lanes make the line: their low words,
		 * or bf16's high words (the low words' indices plus one) */
		bool bf16 = kind == KIND_BF16_RNE || kind == KIND_BF16_SR;
		const __m512i even = _mm512_setr_epi32(0x00020000, 0x00060004, 0x000a0008, 0x000e000c, 0x00120010,
		                                       0x00160014, 0x001a0018, 0x001e001c, 0x00220020, 0x00260024,
		                                       0x002a0028, 0x002e002c, 0x00320030, 0x00360034, 0x003a0038,
		                                       0x003e003c);
		__m512i x0 = _mm512_loadu_si512(in + i), x1 = _mm512_loadu_si512(in + i + 16);
		__m512i iv1 = _mm512_add_epi32(iv, c16);
		__m512i y0 = bf16 ? bf16_high_v(v, kind, x0, iv) : encode16_v(v, kind, x0, iv);
		__m512i y1 = bf16 ? bf16_high_v(v, kind, x1, iv1) : encode16_v(v, kind, x1, iv1);
		__m512i idx = bf16 ? _mm512_add_epi16(even, _mm512_set1_epi16(1)) : even;
		line = _mm512_permutex2var_epi16(y0, idx, y1);
	} else if (size == 1 && (kind == KIND_FAST_RNE || kind == KIND_FAST_SR)) {
		line = line_fast8(v, kind == KIND_FAST_SR, in + i, iv);
	} else if (size == 1) {
		/* four vectors of bytes in 32-bit lanes: two saturating packs (no-ops
		 * on values below 256) put dword j of 128-bit lane l of the result at
		 * elements 16 j + 4 l ..+3, and one dword permute puts them in order */
		const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
		__m512i iv1 = _mm512_add_epi32(iv, c16), iv2 = _mm512_add_epi32(iv1, c16);
		__m512i y0 = encode16_v(v, kind, _mm512_loadu_si512(in + i), iv);
		__m512i y1 = encode16_v(v, kind, _mm512_loadu_si512(in + i + 16), iv1);
		__m512i y2 = encode16_v(v, kind, _mm512_loadu_si512(in + i + 32), iv2);
		__m512i y3 = encode16_v(v, kind, _mm512_loadu_si512(in + i + 48), _mm512_add_epi32(iv2, c16));
		line = _mm512_packus_epi16(_mm512_packus_epi32(y0, y1), _mm512_packus_epi32(y2, y3));
		line = _mm512_permutexvar_epi32(order, line);
	} else {
		line = encode16_v(v, kind, _mm512_loadu_si512(in + i), iv);
	}
	_mm512_stream_si512((void *)((char *)out + i * size), line);
}

T512 static inline __attribute__((always_inline)) void encode_all(const bulk_params *p, kernel_kind kind, size_t size, rng_key k,
                                                                 uint32_t idx_lo, void *out, const float *in, size_t n)
{
	vparams v = vparams_load(p, k);
	size_t i = 0;
	/* streaming needs the output lines aligned, so the elements must be */
	if (n >= STREAM_MIN_ELEMS && (uintptr_t)out % size == 0) {
		/* head: single elements until the output is 64-byte aligned */
		size_t head = ((64 - ((uintptr_t)out & 63)) & 63) / size;
		for (; i < head; i++) {
			uint32_t r = bulk_draws(p) ? rng_bits_keyed(k, idx_lo + (uint32_t)i) : 0;
			bulk_store_elem(out, i, size, bulk_encode1(p, bulk_f2u(in[i]), r));
		}
		size_t per_line = 64 / size;
		/* the SR indices: one vector carried along, one add per line */
		__m512i iv = idx16(&v, idx_lo + (uint32_t)i);
		const __m512i step = _mm512_set1_epi32((int)per_line);
		for (; i + per_line <= n; i += per_line) {
			encode_line(&v, kind, size, out, in, i, iv);
			iv = _mm512_add_epi32(iv, step);
		}
		_mm_sfence();
	}
	for (; i + 16 <= n; i += 16) {
		__m512i x = _mm512_loadu_si512(in + i);
		store16(size, out, i, 0xffff, encode16(&v, kind, x, idx_lo + (uint32_t)i));
	}
	if (i < n) {
		__mmask16 m = (__mmask16)((1u << (n - i)) - 1);
		__m512i x = _mm512_maskz_loadu_epi32(m, in + i);
		store16(size, out, i, m, encode16(&v, kind, x, idx_lo + (uint32_t)i));
	}
}

#define ENCODE_VARIANT(name, KIND, SIZE)                                                           \
	T512 static void name(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, \
	                      size_t n)                                                                    \
	{                                                                                                  \
		encode_all(p, KIND, SIZE, k, idx_lo, out, in, n);                                          \
	}
ENCODE_VARIANT(encode_bf16_rne, KIND_BF16_RNE, 2)
ENCODE_VARIANT(encode_bf16_sr, KIND_BF16_SR, 2)
ENCODE_VARIANT(encode_fp16_rne, KIND_FP16_RNE, 2)
ENCODE_VARIANT(encode_gen_rne_1, KIND_GEN_RNE, 1)
ENCODE_VARIANT(encode_gen_rne_2, KIND_GEN_RNE, 2)
ENCODE_VARIANT(encode_gen_rne_4, KIND_GEN_RNE, 4)
ENCODE_VARIANT(encode_gen_sr_1, KIND_GEN_SR, 1)
ENCODE_VARIANT(encode_gen_sr_2, KIND_GEN_SR, 2)
ENCODE_VARIANT(encode_gen_sr_4, KIND_GEN_SR, 4)
ENCODE_VARIANT(encode_fast_rne_1, KIND_FAST_RNE, 1)
ENCODE_VARIANT(encode_fast_rne_2, KIND_FAST_RNE, 2)
ENCODE_VARIANT(encode_fast_sr_1, KIND_FAST_SR, 1)
ENCODE_VARIANT(encode_fast_sr_2, KIND_FAST_SR, 2)
ENCODE_VARIANT(encode_gen_rto_1, KIND_GEN_RTO, 1)
ENCODE_VARIANT(encode_gen_rto_2, KIND_GEN_RTO, 2)
ENCODE_VARIANT(encode_gen_rto_4, KIND_GEN_RTO, 4)
ENCODE_VARIANT(encode_gen_rnz_1, KIND_GEN_RNZ, 1)
ENCODE_VARIANT(encode_gen_rnz_2, KIND_GEN_RNZ, 2)
ENCODE_VARIANT(encode_gen_rnz_4, KIND_GEN_RNZ, 4)
ENCODE_VARIANT(encode_gen_sre_1, KIND_GEN_SRE, 1)
ENCODE_VARIANT(encode_gen_sre_2, KIND_GEN_SRE, 2)
ENCODE_VARIANT(encode_gen_sre_4, KIND_GEN_SRE, 4)

void bulk_avx512_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n)
{
	size_t size = fmt_bulk_elem_size(p->fmt);
	switch (kind_for(p)) {
	case KIND_BF16_RNE: encode_bf16_rne(p, k, idx_lo, out, in, n); break;
	case KIND_BF16_SR:  encode_bf16_sr(p, k, idx_lo, out, in, n); break;
	case KIND_FP16_RNE: encode_fp16_rne(p, k, idx_lo, out, in, n); break;
	case KIND_FP32:     /* the generic formula copies fp32 exactly */
	case KIND_GEN_RNE:
		(size == 1 ? encode_gen_rne_1 : size == 2 ? encode_gen_rne_2 : encode_gen_rne_4)(p, k, idx_lo, out, in, n);
		break;
	case KIND_GEN_SR:
		(size == 1 ? encode_gen_sr_1 : size == 2 ? encode_gen_sr_2 : encode_gen_sr_4)(p, k, idx_lo, out, in, n);
		break;
	case KIND_FAST_RNE:   /* fp16 and fp8: 2 or 1 bytes */
		(size == 1 ? encode_fast_rne_1 : encode_fast_rne_2)(p, k, idx_lo, out, in, n);
		break;
	case KIND_FAST_SR:
		(size == 1 ? encode_fast_sr_1 : encode_fast_sr_2)(p, k, idx_lo, out, in, n);
		break;
	case KIND_GEN_RTO:
		(size == 1 ? encode_gen_rto_1 : size == 2 ? encode_gen_rto_2 : encode_gen_rto_4)(p, k, idx_lo, out, in, n);
		break;
	case KIND_GEN_RNZ:
		(size == 1 ? encode_gen_rnz_1 : size == 2 ? encode_gen_rnz_2 : encode_gen_rnz_4)(p, k, idx_lo, out, in, n);
		break;
	case KIND_GEN_SRE:
		(size == 1 ? encode_gen_sre_1 : size == 2 ? encode_gen_sre_2 : encode_gen_sre_4)(p, k, idx_lo, out, in, n);
		break;
	}
}

T512 static inline __attribute__((always_inline)) void quantize_vec(const vparams *v, kernel_kind kind, fmt_id fmt, float *x,
                                                                   size_t i, uint32_t idx_lo)
{
	if (kind == KIND_BF16_RNE || kind == KIND_BF16_SR) {
		/* the bf16 value is the high half; NaN lanes already hold fp32's canonical NaN */
		__m512i y = bf16_high(v, kind, _mm512_loadu_si512(x + i), idx_lo + (uint32_t)i);
		_mm512_storeu_si512(x + i, _mm512_and_si512(y, _mm512_set1_epi32((int)0xffff0000u)));
		return;
	}
	__m512i b = encode16(v, kind, _mm512_loadu_si512(x + i), idx_lo + (uint32_t)i);
	_mm512_storeu_ps(x + i, decode16(fmt, b));
}

T512 static inline __attribute__((always_inline)) void quantize_all(const bulk_params *p, kernel_kind kind, rng_key k,
                                                                   uint32_t idx_lo, float *x, size_t n)
{
	vparams v = vparams_load(p, k);
	size_t i = 0;
	if (n >= STREAM_MIN_ELEMS) {
		/* in place: the lines are read anyway, so plain stores; four blocks at once */
		for (; i + 4 * STREAM_BLOCK <= n; i += 4 * STREAM_BLOCK) {
			for (size_t j = 0; j < STREAM_BLOCK; j += 16) {
				quantize_vec(&v, kind, p->fmt, x, i + j, idx_lo);
				quantize_vec(&v, kind, p->fmt, x, i + STREAM_BLOCK + j, idx_lo);
				quantize_vec(&v, kind, p->fmt, x, i + 2 * STREAM_BLOCK + j, idx_lo);
				quantize_vec(&v, kind, p->fmt, x, i + 3 * STREAM_BLOCK + j, idx_lo);
			}
		}
	}
	for (; i + 16 <= n; i += 16)
		quantize_vec(&v, kind, p->fmt, x, i, idx_lo);
	if (i < n) {
		__mmask16 m = (__mmask16)((1u << (n - i)) - 1);
		__m512i b = encode16(&v, kind, _mm512_maskz_loadu_epi32(m, x + i), idx_lo + (uint32_t)i);
		_mm512_mask_storeu_ps(x + i, m, decode16(p->fmt, _mm512_maskz_mov_epi32(m, b)));
	}
}

#define QUANTIZE_VARIANT(name, KIND)                                                                \
	T512 static void name(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n) \
	{                                                                                           \
		quantize_all(p, KIND, k, idx_lo, x, n);                                             \
	}
QUANTIZE_VARIANT(quantize_bf16_rne, KIND_BF16_RNE)
QUANTIZE_VARIANT(quantize_bf16_sr, KIND_BF16_SR)
QUANTIZE_VARIANT(quantize_fp16_rne, KIND_FP16_RNE)
QUANTIZE_VARIANT(quantize_gen_rne, KIND_GEN_RNE)
QUANTIZE_VARIANT(quantize_gen_sr, KIND_GEN_SR)
QUANTIZE_VARIANT(quantize_fast_rne, KIND_FAST_RNE)
QUANTIZE_VARIANT(quantize_fast_sr, KIND_FAST_SR)
QUANTIZE_VARIANT(quantize_gen_rto, KIND_GEN_RTO)
QUANTIZE_VARIANT(quantize_gen_rnz, KIND_GEN_RNZ)
QUANTIZE_VARIANT(quantize_gen_sre, KIND_GEN_SRE)

void bulk_avx512_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n)
{
	switch (kind_for(p)) {
	case KIND_BF16_RNE: quantize_bf16_rne(p, k, idx_lo, x, n); break;
	case KIND_BF16_SR:  quantize_bf16_sr(p, k, idx_lo, x, n); break;
	case KIND_FP16_RNE: quantize_fp16_rne(p, k, idx_lo, x, n); break;
	case KIND_FP32:     /* the generic formula copies fp32 exactly */
	case KIND_GEN_RNE:  quantize_gen_rne(p, k, idx_lo, x, n); break;
	case KIND_GEN_SR:   quantize_gen_sr(p, k, idx_lo, x, n); break;
	case KIND_FAST_RNE: quantize_fast_rne(p, k, idx_lo, x, n); break;
	case KIND_FAST_SR:  quantize_fast_sr(p, k, idx_lo, x, n); break;
	case KIND_GEN_RTO:  quantize_gen_rto(p, k, idx_lo, x, n); break;
	case KIND_GEN_RNZ:  quantize_gen_rnz(p, k, idx_lo, x, n); break;
	case KIND_GEN_SRE:  quantize_gen_sre(p, k, idx_lo, x, n); break;
	}
}

/* 16 fp32 values rounded to the format (as fp32 values). */
T512 static inline __attribute__((always_inline)) __m512 quantize16(const vparams *v, kernel_kind kind, __m512 x,
                                                                   uint32_t idx_lo)
{
	if (kind == KIND_BF16_RNE || kind == KIND_BF16_SR)
		return _mm512_castsi512_ps(_mm512_and_si512(bf16_high(v, kind, _mm512_castps_si512(x), idx_lo),
		                                             _mm512_set1_epi32((int)0xffff0000u)));
	return decode16(v->fmt, encode16(v, kind, _mm512_castps_si512(x), idx_lo));
}

T512 static inline __attribute__((always_inline)) size_t accumulate_all(const bulk_params *p, kernel_kind kind,
                                                                       rng_key k, uint32_t idx_lo, float *x,
                                                                       float *comp, const float *u, size_t n)
{
	vparams v = vparams_load(p, k);
	/* Kahan's compensation is always rounded to nearest */
	bulk_params prne = *p;
	prne.sr = 0;
	prne.mode = FMT_RNE;
	vparams vr = vparams_load(&prne, k);
	kernel_kind kr = kind == KIND_GEN_RTO || kind == KIND_GEN_RNZ || kind == KIND_GEN_SRE ? kind_for(&prne)
	                 : kind == KIND_BF16_SR ? KIND_BF16_RNE
	                 : kind == KIND_GEN_SR  ? KIND_GEN_RNE
	                 : kind == KIND_FAST_SR ? (p->fmt == FMT_FP16 && p->ov_bits != p->max_bits ? KIND_FP16_RNE
	                                                                                         : KIND_FAST_RNE)
	                                        : kind;
	size_t unchanged = 0;
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
		__m512 xo = _mm512_maskz_loadu_ps(m, x + i);
		__m512 uu = _mm512_maskz_loadu_ps(m, u + i);
		__m512 t;
		if (comp) {
			__m512 c = _mm512_maskz_loadu_ps(m, comp + i);
			__m512 y = _mm512_sub_ps(uu, c);
			t = quantize16(&v, kind, _mm512_add_ps(xo, y), idx_lo + (uint32_t)i);
			c = quantize16(&vr, kr, _mm512_sub_ps(_mm512_sub_ps(t, xo), y), idx_lo + (uint32_t)i);
			_mm512_mask_storeu_ps(comp + i, m, c);
		} else {
			t = quantize16(&v, kind, _mm512_add_ps(xo, uu), idx_lo + (uint32_t)i);
		}
		unchanged += (size_t)__builtin_popcount(_mm512_mask_cmp_ps_mask(m, t, xo, _CMP_EQ_OQ));
		_mm512_mask_storeu_ps(x + i, m, t);
	}
	return unchanged;
}

#define ACCUMULATE_VARIANT(name, KIND)                                                              \
	T512 static size_t name(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp, \
	                        const float *u, size_t n)                                                \
	{                                                                                                \
		return accumulate_all(p, KIND, k, idx_lo, x, comp, u, n);                                \
	}
ACCUMULATE_VARIANT(accumulate_bf16_rne, KIND_BF16_RNE)
ACCUMULATE_VARIANT(accumulate_bf16_sr, KIND_BF16_SR)
ACCUMULATE_VARIANT(accumulate_fp16_rne, KIND_FP16_RNE)
ACCUMULATE_VARIANT(accumulate_fp32, KIND_FP32)
ACCUMULATE_VARIANT(accumulate_gen_rne, KIND_GEN_RNE)
ACCUMULATE_VARIANT(accumulate_gen_sr, KIND_GEN_SR)
ACCUMULATE_VARIANT(accumulate_fast_rne, KIND_FAST_RNE)
ACCUMULATE_VARIANT(accumulate_fast_sr, KIND_FAST_SR)
ACCUMULATE_VARIANT(accumulate_gen_rto, KIND_GEN_RTO)
ACCUMULATE_VARIANT(accumulate_gen_rnz, KIND_GEN_RNZ)
ACCUMULATE_VARIANT(accumulate_gen_sre, KIND_GEN_SRE)

size_t bulk_avx512_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                              const float *u, size_t n)
{
	switch (kind_for(p)) {
	case KIND_BF16_RNE: return accumulate_bf16_rne(p, k, idx_lo, x, comp, u, n);
	case KIND_BF16_SR:  return accumulate_bf16_sr(p, k, idx_lo, x, comp, u, n);
	case KIND_FP16_RNE: return accumulate_fp16_rne(p, k, idx_lo, x, comp, u, n);
	case KIND_FP32:     return accumulate_fp32(p, k, idx_lo, x, comp, u, n);
	case KIND_GEN_RNE:  return accumulate_gen_rne(p, k, idx_lo, x, comp, u, n);
	case KIND_FAST_RNE: return accumulate_fast_rne(p, k, idx_lo, x, comp, u, n);
	case KIND_FAST_SR:  return accumulate_fast_sr(p, k, idx_lo, x, comp, u, n);
	case KIND_GEN_RTO:  return accumulate_gen_rto(p, k, idx_lo, x, comp, u, n);
	case KIND_GEN_RNZ:  return accumulate_gen_rnz(p, k, idx_lo, x, comp, u, n);
	case KIND_GEN_SRE:  return accumulate_gen_sre(p, k, idx_lo, x, comp, u, n);
	default:            return accumulate_gen_sr(p, k, idx_lo, x, comp, u, n);
	}
}

T512 void bulk_avx512_decode(fmt_id fmt, float *out, const void *in, size_t n)
{
	size_t size = fmt_bulk_elem_size(fmt);
	size_t i = 0;
	if (n >= STREAM_MIN_ELEMS) {
		for (; i < n && ((uintptr_t)(out + i) & 63); i++)
			out[i] = bulk_u2f(bulk_decode1(fmt, bulk_load_elem(in, i, size)));
		for (; i + 4 * STREAM_BLOCK <= n; i += 4 * STREAM_BLOCK) {
			for (size_t j = 0; j < STREAM_BLOCK; j += 16) {
				for (size_t s = 0; s < 4; s++) {
					size_t e = i + s * STREAM_BLOCK + j;
					_mm512_stream_ps(out + e, decode16(fmt, load16(size, in, e, 0xffff)));
				}
			}
		}
		_mm_sfence();
	}
	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(out + i, decode16(fmt, load16(size, in, i, 0xffff)));
	if (i < n) {
		__mmask16 m = (__mmask16)((1u << (n - i)) - 1);
		_mm512_mask_storeu_ps(out + i, m, decode16(fmt, load16(size, in, i, m)));
	}
}

#else  /* not x86-64: never selected */

void bulk_avx512_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n)
{
	(void)p; (void)k; (void)idx_lo; (void)out; (void)in; (void)n;
}
void bulk_avx512_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n)
{
	(void)p; (void)k; (void)idx_lo; (void)x; (void)n;
}
void bulk_avx512_decode(fmt_id fmt, float *out, const void *in, size_t n)
{
	(void)fmt; (void)out; (void)in; (void)n;
}
size_t bulk_avx512_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                              const float *u, size_t n)
{
	(void)p; (void)k; (void)idx_lo; (void)x; (void)comp; (void)u; (void)n;
	return 0;
}
#endif
