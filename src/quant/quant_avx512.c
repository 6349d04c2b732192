/* AVX-512 twins of the bulk block-quantization pieces (quant_impl.h):
 * compiled for AVX-512 F/BW/VL/DQ by function attributes and called only on
 * the avx512 path (fmt_simd_available). Each gives the bits its portable
 * twin in quant_bulk.c gives, lane by lane: with the same integer and fp32
 * steps, or, for sr (quant_mx_sr_avx512, quant_nv_sr16_avx512), with steps
 * whose equivalence quant_impl.h argues. Whole groups of 16 blocks take
 * their scales from one reduction tree. They assume, as fmt's kernels do,
 * that subnormals are not flushed (no FTZ/DAZ). */
#include <string.h>

#include "fmt/bulk_avx512_parts.h"
#include "quant/quant_impl.h"
#include "util/rng.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define Q512 __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512dq")))

static inline __mmask16 tail_mask(size_t left)
{
	return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1u);
}

Q512 uint32_t quant_amax_avx512(const float *in, size_t n)
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff);
	__m512i m = _mm512_setzero_si512();
	for (size_t i = 0; i < n; i += 16) {
		__m512i v = _mm512_maskz_loadu_epi32(tail_mask(n - i), in + i);
		m = _mm512_max_epu32(m, _mm512_and_si512(v, abs));
	}
	return (uint32_t)_mm512_reduce_max_epu32(m);
}

Q512 void quant_mx_scale_avx512(float *out, const float *in, size_t n, int k)
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
	const __m512 m = _mm512_castsi512_ps(_mm512_set1_epi32((int)((uint32_t)(127 - k) << 23)));
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 t = tail_mask(n - i);
		__m512 v = _mm512_maskz_loadu_ps(t, in + i);
		__m512i p = _mm512_castps_si512(_mm512_mul_ps(v, m));
		/* a nonzero input whose product vanished: the smallest subnormal */
		__mmask16 fix = _mm512_test_epi32_mask(_mm512_castps_si512(v), abs) & ~_mm512_test_epi32_mask(p, abs);
		p = _mm512_mask_or_epi32(p, fix, p, one);
		_mm512_mask_storeu_ps(out + i, t, _mm512_castsi512_ps(p));
	}
}

/* One MX block of bs elements (a multiple of 16): the amax by vector max
 * and one reduction, the exponent as quant_mx_exp, the scale byte into
 * *scale and the multiplier 2^-e into *mul. False (nothing written) when
 * the block holds an inf or NaN. */
Q512 static inline bool mx_block_scale(uint8_t *scale, __m512 *mul, const float *in, size_t bs,
                                       const quant_mx_rule *r)
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff);
	__m512i m = _mm512_setzero_si512();
	for (size_t i = 0; i < bs; i += 16)
		m = _mm512_max_epu32(m, _mm512_and_si512(_mm512_loadu_si512(in + i), abs));
	uint32_t amax = (uint32_t)_mm512_reduce_max_epu32(m);
	if (amax >= 0x7f800000u)
		return false;
	int e = quant_mx_exp(r, amax);
	*scale = (uint8_t)(e + 127);
	*mul = _mm512_castsi512_ps(_mm512_set1_epi32((int)((uint32_t)(127 - e) << 23)));
	return true;
}

/* Whole blocks of a multiple of 16 elements in registers: the scale as
 * mx_block_scale, the scaled values as quant_mx_scale_avx512; a short last
 * block and other block sizes take the portable code. */
Q512 size_t quant_mx_blocks_avx512(float *out, uint8_t *scales, const float *in, size_t n, size_t bs,
                                   const quant_mx_rule *r)
{
	if (bs % 16)
		return quant_mx_blocks_portable(out, scales, in, n, bs, r);
	const __m512i abs = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
	size_t full = n / bs * bs, k = 0;
	for (size_t b = 0; b < full; b += bs, k++) {
		__m512 mul;
		if (!mx_block_scale(scales + k, &mul, in + b, bs, r))
			return b;
		for (size_t i = b; i < b + bs; i += 16) {
			__m512 v = _mm512_loadu_ps(in + i);
			__m512i p = _mm512_castps_si512(_mm512_mul_ps(v, mul));
			__mmask16 fix = _mm512_test_epi32_mask(_mm512_castps_si512(v), abs) & ~_mm512_test_epi32_mask(p, abs);
			_mm512_storeu_ps(out + i, _mm512_castsi512_ps(_mm512_mask_or_epi32(p, fix, p, one)));
		}
	}
	if (full == n)
		return n;
	size_t got = quant_mx_blocks_portable(out + full, scales + k, in + full, n - full, bs, r);
	return full + got;
}

/* The constants of mx_rne16, in registers. */
typedef struct {
	__m512i half_m1, rebias, min_normal, magic, max_bits, sign_bit;
	__m128i shift, sign_shift;
} mx_enc;

Q512 static inline mx_enc mx_enc_load(const quant_elem_enc *enc)
{
	mx_enc e = {
		.half_m1 = _mm512_set1_epi32((int)enc->half_m1),
		.rebias = _mm512_set1_epi32((int)enc->rebias),
		.min_normal = _mm512_set1_epi32((int)enc->min_normal),
		.magic = _mm512_set1_epi32((int)enc->magic),
		.max_bits = _mm512_set1_epi32((int)enc->max_bits),
		.sign_bit = _mm512_set1_epi32((int)(0x80000000u >> enc->sign_shift)),
		.shift = _mm_cvtsi32_si128((int)enc->shift),
		.sign_shift = _mm_cvtsi32_si128((int)enc->sign_shift),
	};
	return e;
}

/* 16 elements: the patterns v times the scale's inverse mul, rounded as
 * quant_elem_enc says, stored as bytes. */
Q512 static inline void mx_rne16(uint8_t *out, __m512i v, __m512 mul, const mx_enc *e)
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
	__m512i p = _mm512_castps_si512(_mm512_mul_ps(_mm512_castsi512_ps(v), mul));
	__m512i a = _mm512_and_si512(p, abs);
	__m512i lsb = _mm512_and_si512(_mm512_srl_epi32(a, e->shift), one);
	__m512i nrm = _mm512_sub_epi32(_mm512_srl_epi32(_mm512_add_epi32(a, _mm512_add_epi32(e->half_m1, lsb)), e->shift),
	                               e->rebias);
	__m512i sub = _mm512_sub_epi32(
		_mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(e->magic))), e->magic);
	__m512i c = _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(a, e->min_normal), nrm, sub);
	c = _mm512_min_epu32(c, e->max_bits);
	c = _mm512_ternarylogic_epi32(c, _mm512_srl_epi32(p, e->sign_shift), e->sign_bit, 0xf8);   /* | p's sign */
	_mm_storeu_si128((__m128i *)out, _mm512_cvtepi32_epi8(c));
}

Q512 static bool mx_scales512(uint8_t *scales, uint32_t mul[16], const float *in, const quant_mx_rule *r);

Q512 size_t quant_mx_rne_avx512(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                const quant_mx_rule *r, const quant_elem_enc *enc)
{
	const mx_enc e = mx_enc_load(enc);
	size_t full = n / bs * bs, k = 0, b = 0;
	if (bs == 32) {
		/* 16 blocks at a time (taking the next group's scales first, as the
		 * nvfp4 kernels do, is faster in cache but slower from memory) */
		uint32_t mul[16];
		for (; b + 512 <= full && mx_scales512(scales + k, mul, in + b, r); b += 512, k += 16) {
			quant_prefetch_ahead(in + b, 512);
			for (size_t i = 0; i < 16; i++) {
				__m512 mv = _mm512_castsi512_ps(_mm512_set1_epi32((int)mul[i]));
				mx_rne16(elems + b + 32 * i, _mm512_loadu_si512(in + b + 32 * i), mv, &e);
				mx_rne16(elems + b + 32 * i + 16, _mm512_loadu_si512(in + b + 32 * i + 16), mv, &e);
			}
		}
	}
	for (; b < full; b += bs, k++) {
		__m512 mul;
		if (!mx_block_scale(scales + k, &mul, in + b, bs, r))
			return b;
		for (size_t i = b; i < b + bs; i += 16)
			mx_rne16(elems + i, _mm512_loadu_si512(in + i), mul, &e);
	}
	return full;
}

Q512 void quant_nv_rne_avx512(uint8_t *out, const float *in, size_t n, const uint32_t g[8])
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
	__m512i gv[7];
	for (int j = 0; j < 7; j++)
		gv[j] = _mm512_set1_epi32((int)g[j]);
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 t = tail_mask(n - i);
		__m512i v = _mm512_maskz_loadu_epi32(t, in + i);
		__m512i a = _mm512_and_si512(v, abs), c = _mm512_setzero_si512();
		for (int j = 0; j < 7; j++)
			c = _mm512_mask_add_epi32(c, _mm512_cmpgt_epu32_mask(a, gv[j]), c, one);
		c = _mm512_or_si512(c, _mm512_slli_epi32(_mm512_srli_epi32(v, 31), 3));
		_mm_mask_storeu_epi8(out + i, t, _mm512_cvtepi32_epi8(c));
	}
}

/* The count of the decision patterns t[0..6] (non-decreasing) below each
 * lane of the magnitudes a, by a binary search of three comparisons per
 * lane: against t3, then t1 or t5, then t0, t2, t4 or t6. */
Q512 static inline __m512i nv_count7(__m512i a, const uint32_t *t)
{
	const __m512i tv = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)t));
	__mmask16 b2 = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32((int)t[3]));
	__m512i idx = _mm512_maskz_mov_epi32(b2, _mm512_set1_epi32(4));
	__m512i t1 = _mm512_mask_blend_epi32(b2, _mm512_set1_epi32((int)t[1]), _mm512_set1_epi32((int)t[5]));
	__mmask16 b1 = _mm512_cmpgt_epu32_mask(a, t1);
	idx = _mm512_mask_add_epi32(idx, b1, idx, _mm512_set1_epi32(2));
	__mmask16 b0 = _mm512_cmpgt_epu32_mask(a, _mm512_permutexvar_epi32(idx, tv));
	return _mm512_mask_add_epi32(idx, b0, idx, _mm512_set1_epi32(1));
}

/* The e2m1 codes of one block of 16 (patterns v, magnitudes a) against
 * its scale's decision patterns t: the count below |v| and the sign. */
Q512 static inline void nv_elems16(uint8_t *out, __m512i v, __m512i a, const uint32_t *t)
{
	__m512i k = nv_count7(a, t);
	k = _mm512_ternarylogic_epi32(k, _mm512_srli_epi32(v, 28), _mm512_set1_epi32(8), 0xf8);   /* k | (v >> 28 & 8) */
	_mm_storeu_si128((__m128i *)out, _mm512_cvtepi32_epi8(k));
}

/* quant_e4m3_code on 8 binary64 lanes (q >= 0, finite). */
Q512 static inline __m512i e4m3_code8(__m512d q)
{
	const __m512d big = _mm512_set1_pd(0x1p43);
	__m512i sub = _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_sub_pd(_mm512_add_pd(q, big), big), _mm512_set1_pd(0x1p9)));
	__m512i b = _mm512_castpd_si512(q);
	b = _mm512_add_epi64(b, _mm512_add_epi64(_mm512_set1_epi64((1ll << 48) - 1),
	                                         _mm512_and_si512(_mm512_srli_epi64(b, 49), _mm512_set1_epi64(1))));
	__m512i c = _mm512_sub_epi64(_mm512_srli_epi64(b, 49), _mm512_set1_epi64((1023 - 7) << 3));
	c = _mm512_min_epu64(c, _mm512_set1_epi64(0x7e));
	return _mm512_mask_blend_epi64(_mm512_cmp_pd_mask(q, _mm512_set1_pd(0x1p-6), _CMP_LT_OQ), c, sub);
}

/* max of a and b lane by lane after the lane permutations ia and ib of (a, b). */
Q512 static inline __m512i max2(__m512i a, __m512i b, __m512i ia, __m512i ib)
{
	return _mm512_max_epu32(_mm512_permutex2var_epi32(a, ia, b), _mm512_permutex2var_epi32(a, ib, b));
}

/* The amax patterns of 16 blocks of 16 (lane k: block k), by a reduction
 * tree over the 16 vectors of magnitudes: 128-bit halves, then quarters,
 * then pairs and single lanes. */
Q512 static inline __m512i amax16x16(const __m512i a[16])
{
	__m512i w[8], z[4], u[2];
	for (int i = 0; i < 8; i++)
		w[i] = _mm512_max_epu32(_mm512_shuffle_i32x4(a[2 * i], a[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
		                        _mm512_shuffle_i32x4(a[2 * i], a[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
	for (int i = 0; i < 4; i++)
		z[i] = _mm512_max_epu32(_mm512_shuffle_i32x4(w[2 * i], w[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
		                        _mm512_shuffle_i32x4(w[2 * i], w[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
	const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
	u[0] = max2(z[0], z[1], even, odd);
	u[1] = max2(z[2], z[3], even, odd);
	return max2(u[0], u[1], even, odd);
}

/* quant_mx_exp on 16 lanes of amax patterns (finite). A subnormal's top
 * bit comes from its exact conversion to fp32. */
Q512 static inline __m512i mx_exp16(__m512i m, const quant_mx_rule *r)
{
	if (r->rceil) {   /* a division per block: lane by lane, as quant_mx_exp */
		uint32_t a[16];
		int32_t k[16];
		_mm512_storeu_si512(a, m);
		for (int i = 0; i < 16; i++)
			k[i] = quant_mx_exp(r, a[i]);
		return _mm512_loadu_si512(k);
	}
	__m512i ex = _mm512_srli_epi32(m, 23);
	__mmask16 sub = _mm512_cmpeq_epi32_mask(ex, _mm512_setzero_si512());
	__m512i top = _mm512_sub_epi32(_mm512_srli_epi32(_mm512_castps_si512(_mm512_cvtepi32_ps(m)), 23),
	                               _mm512_set1_epi32(127));
	__m512i L = _mm512_mask_blend_epi32(sub, _mm512_sub_epi32(ex, _mm512_set1_epi32(127)),
	                                    _mm512_sub_epi32(top, _mm512_set1_epi32(149)));
	__m512i f = _mm512_mask_blend_epi32(sub, m, _mm512_sllv_epi32(m, _mm512_sub_epi32(_mm512_set1_epi32(23), top)));
	f = _mm512_and_si512(f, _mm512_set1_epi32(0x7fffff));
	__m512i k = _mm512_sub_epi32(L, _mm512_set1_epi32(r->emax));
	k = _mm512_mask_add_epi32(k, _mm512_cmpgt_epu32_mask(f, _mm512_set1_epi32((int)r->thr)), k,
	                          _mm512_set1_epi32(1));
	k = _mm512_min_epi32(_mm512_max_epi32(k, _mm512_set1_epi32(-127)), _mm512_set1_epi32(127));
	return _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask(m, _mm512_setzero_si512()), k, _mm512_set1_epi32(-127));
}

/* The scales of 16 whole MX blocks of 32 at in: the amaxes by the
 * reduction tree, the 16 exponents at once, e8m0 bytes into scales and the
 * fp32 patterns of 2^-k into mul. False (nothing written) when a block
 * holds an inf or NaN. */
Q512 static bool mx_scales512(uint8_t *scales, uint32_t mul[16], const float *in, const quant_mx_rule *r)
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff);
	__m512i a[16];
	for (int i = 0; i < 16; i++)
		a[i] = _mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512(in + 32 * i), abs),
		                        _mm512_and_si512(_mm512_loadu_si512(in + 32 * i + 16), abs));
	__m512i m = amax16x16(a);
	if (_mm512_cmpge_epu32_mask(m, _mm512_set1_epi32(0x7f800000)))
		return false;
	__m512i k = mx_exp16(m, r);
	_mm_storeu_si128((__m128i *)scales, _mm512_cvtepi32_epi8(_mm512_add_epi32(k, _mm512_set1_epi32(127))));
	_mm512_storeu_si512(mul, _mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(127), k), 23));
	return true;
}

/* --- MX sr --- */

/* The constants of mx_sr16, in registers. */
typedef struct {
	__m512i keep, shift, rebias, min_normal, max_bits, sign_shift, sign_bit, k1f, nk2;
	__m512 sub_scale;
} mx_sr_enc;

Q512 static inline mx_sr_enc mx_sr_enc_load(const quant_elem_enc *enc, rng_key key)
{
	mx_sr_enc e = {
		.keep = _mm512_set1_epi32(32 - (int)enc->shift),
		.shift = _mm512_set1_epi32((int)enc->shift),
		.rebias = _mm512_set1_epi32((int)enc->rebias),
		.min_normal = _mm512_set1_epi32((int)enc->min_normal),
		.max_bits = _mm512_set1_epi32((int)enc->max_bits),
		.sign_shift = _mm512_set1_epi32((int)enc->sign_shift),
		.sign_bit = _mm512_set1_epi32((int)(0x80000000u >> enc->sign_shift)),
		.k1f = _mm512_set1_epi32((int)(key.k1 ^ (key.k1 >> 16))),
		.nk2 = _mm512_set1_epi32((int)~key.k2),
		/* 2^-m, m = emin - frac_bits = sub_base - 150: the element's smallest subnormal 2^m */
		.sub_scale = _mm512_castsi512_ps(_mm512_set1_epi32((int)((277 - enc->sub_base) << 23))),
	};
	return e;
}

/* 16 element codes by sr of the patterns v times the scale's inverse mul
 * (a vanished nonzero product kept as the smallest subnormal, as
 * quant_mx_scale_portable does), indices idx: bulk_encode1's rule
 * (fmt/bulk_impl.h) by fmt's encode_fast (fmt/bulk_avx512.c), with nr = ~rbits:
 * - at or above the element's min normal the same number of bits drops in
 *   every binade, and the rounding is a carry into the kept bits,
 *   (a + (nr >> (32 - shift))) >> shift - rebias (a carry out of the
 *   discarded bits d iff r < d 2^(32 - shift));
 * - below it, y = a 2^-m is exact in fp32 and the code is floor(y), up iff
 *   r < ceil(frac(y) 2^32), that is iff c + nr carries out of 32 bits;
 * then min(code, max_bits) (|p| < 2^(emax + 1): no NaN, no inf) and the sign. */
Q512 static inline __m512i mx_sr16(__m512i v, __m512 mul, __m512i idx, const mx_sr_enc *e)
{
	const __m512i one = _mm512_set1_epi32(1);
	__m512i nr = bulk_avx512_rbits(idx, e->k1f, e->nk2);
	__m512i av = _mm512_and_si512(v, _mm512_set1_epi32(0x7fffffff));
	__m512i a = _mm512_castps_si512(_mm512_mul_ps(_mm512_castsi512_ps(av), mul));
	a = _mm512_max_epu32(a, _mm512_min_epu32(av, one));
	__m512i enc = _mm512_sub_epi32(
		_mm512_srlv_epi32(_mm512_add_epi32(a, _mm512_srlv_epi32(nr, e->keep)), e->shift), e->rebias);
	__mmask16 sub = _mm512_cmplt_epu32_mask(a, e->min_normal);
	if (sub)
		enc = bulk_avx512_sr_grid(enc, sub, _mm512_mul_ps(_mm512_castsi512_ps(a), e->sub_scale), nr);
	enc = _mm512_min_epu32(enc, e->max_bits);
	/* enc | (v >> sign_shift & sign_bit) */
	return _mm512_ternarylogic_epi32(enc, _mm512_srlv_epi32(v, e->sign_shift), e->sign_bit, 0xf8);
}

/* 64 codes (four vectors of 16) into out[0..63]: two saturating packs
 * (no-ops below 256) put dword j of 128-bit lane l at bytes 16 j + 4 l ..+3,
 * one dword permute puts them in order. */
Q512 static inline void store64(uint8_t *out, __m512i y0, __m512i y1, __m512i y2, __m512i y3)
{
	const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
	__m512i line = _mm512_packus_epi16(_mm512_packus_epi32(y0, y1), _mm512_packus_epi32(y2, y3));
	_mm512_storeu_si512(out, _mm512_permutexvar_epi32(order, line));
}

/* The elements of 16 whole MX blocks of 32 by sr (mul: their scales'
 * inverses; idx: the indices of in[0..15]), 64 to a store. */
Q512 static void mx_sr_elems512(uint8_t *elems, const float *in, const uint32_t mul[16], const mx_sr_enc *e,
                                __m512i idx)
{
	const __m512i c16 = _mm512_set1_epi32(16);
	for (int i = 0; i < 16; i += 2) {
		__m512 m0 = _mm512_castsi512_ps(_mm512_set1_epi32((int)mul[i]));
		__m512 m1 = _mm512_castsi512_ps(_mm512_set1_epi32((int)mul[i + 1]));
		const float *x = in + 32 * i;
		__m512i i1 = _mm512_add_epi32(idx, c16), i2 = _mm512_add_epi32(i1, c16), i3 = _mm512_add_epi32(i2, c16);
		store64(elems + 32 * i, mx_sr16(_mm512_loadu_si512(x), m0, idx, e),
		        mx_sr16(_mm512_loadu_si512(x + 16), m0, i1, e), mx_sr16(_mm512_loadu_si512(x + 32), m1, i2, e),
		        mx_sr16(_mm512_loadu_si512(x + 48), m1, i3, e));
		idx = _mm512_add_epi32(i3, c16);
	}
}

Q512 size_t quant_mx_sr_avx512(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                               const quant_mx_rule *r, const quant_elem_enc *enc, uint64_t seed, uint64_t index0)
{
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const mx_sr_enc e = mx_sr_enc_load(enc, rng_key_for(seed, index0));
	size_t full = n / bs * bs, k = 0, b = 0;
	if (bs == 32) {
		/* 16 blocks at a time, as quant_mx_rne_avx512 */
		uint32_t mul[16];
		for (; b + 512 <= full && mx_scales512(scales + k, mul, in + b, r); b += 512, k += 16) {
			quant_prefetch_ahead(in + b, 512);
			__m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)(index0 + b)), lane);
			mx_sr_elems512(elems + b, in + b, mul, &e, idx);
		}
	}
	for (; b < full; b += bs, k++) {
		__m512 mul;
		if (!mx_block_scale(scales + k, &mul, in + b, bs, r))
			return b;
		for (size_t i = b; i < b + bs; i += 16) {
			__m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)(index0 + i)), lane);
			__m512i c = mx_sr16(_mm512_loadu_si512(in + i), mul, idx, &e);
			_mm_storeu_si128((__m128i *)(elems + i), _mm512_cvtepi32_epi8(c));
		}
	}
	return full;
}

/* The scale codes of 16 blocks of amax patterns m (finite), as bytes into
 * scales and words into code: two binary64 divisions of 8 lanes by six_st
 * and e4m3_code8. */
Q512 static inline void nv_codes16(uint8_t *scales, uint32_t code[16], __m512i m, __m512d six_st)
{
	__m512 mf = _mm512_castsi512_ps(m);
	__m512i c_lo = e4m3_code8(_mm512_div_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(mf)), six_st));
	__m512i c_hi = e4m3_code8(_mm512_div_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(
		_mm512_castps_pd(mf), 1))), six_st));
	__m512i c = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(c_lo)), _mm512_cvtepi64_epi32(c_hi), 1);
	_mm_storeu_si128((__m128i *)scales, _mm512_cvtepi32_epi8(c));
	_mm512_storeu_si512(code, c);
}

/* The scale codes of the 16 blocks of 16 at in (bytes into scales, words
 * into code) from two binary64 divisions of 8 lanes: false (nothing
 * written) when one holds an inf or NaN. */
Q512 static bool nv_codes256(uint8_t *scales, uint32_t code[16], const float *in, __m512d six_st)
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff);
	__m512i a[16];
	for (int i = 0; i < 16; i++)
		a[i] = _mm512_and_si512(_mm512_loadu_si512(in + 16 * i), abs);
	__m512i m = amax16x16(a);
	if (_mm512_cmpge_epu32_mask(m, _mm512_set1_epi32(0x7f800000)))
		return false;
	nv_codes16(scales, code, m, six_st);
	return true;
}

Q512 size_t quant_nv_rne16_avx512(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                                  const uint32_t g[127][8])
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff);
	const __m512d six = _mm512_set1_pd(six_st);
	/* 16 blocks at a time, the next group's codes (a long chain through the
	 * divisions) before this group's elements: faster in cache and from
	 * memory (the MX kernels, without divisions, only in cache) */
	uint32_t code[2][16];
	size_t b = 0;
	bool ok = n >= 256 && nv_codes256(scales, code[0], in, six);
	for (int cur = 0; ok; b += 256, cur ^= 1) {
		ok = b + 512 <= n && nv_codes256(scales + b / 16 + 16, code[cur ^ 1], in + b + 256, six);
		quant_prefetch_ahead(in + b, 256);
		for (size_t i = 0; i < 16; i++) {
			__m512i v = _mm512_loadu_si512(in + b + 16 * i);
			nv_elems16(elems + b + 16 * i, v, _mm512_and_si512(v, abs), g[code[cur][i]]);
		}
	}
	for (; b < n; b += 16) {
		__m512i v = _mm512_loadu_si512(in + b);
		__m512i a = _mm512_and_si512(v, abs);
		uint32_t amax = (uint32_t)_mm512_reduce_max_epu32(a);
		if (amax >= 0x7f800000u)
			return b;
		float fa;
		memcpy(&fa, &amax, 4);
		uint32_t c = quant_e4m3_code((double)fa / six_st);
		scales[b / 16] = (uint8_t)c;
		nv_elems16(elems + b, v, a, g[c]);
	}
	return n;
}

/* sr up-masks of 8 lanes (64-bit), exactly: magnitudes a8 (fp32, widened),
 * kept codes k8, random bits r8 (widened), against the row tables. r8 and
 * dm are below 2^32, so one unsigned 32x32 multiply gives rbits dm. */
Q512 static inline __mmask8 nv_sr_up8(__m256 a8, __m512i k8, __m512i r8, const double *vd, const double *sc,
                                      uint64_t dm)
{
	__m512d R = _mm512_sub_pd(_mm512_cvtps_pd(a8), _mm512_permutexvar_pd(k8, _mm512_loadu_pd(vd)));
	__m512d X = _mm512_mul_pd(R, _mm512_permutexvar_pd(k8, _mm512_loadu_pd(sc)));
	__m512d fX = _mm512_roundscale_pd(X, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
	__mmask8 frac = _mm512_cmp_pd_mask(X, fX, _CMP_NEQ_UQ);
	__m512i xi = _mm512_cvttpd_epu64(fX);
	__m512i y = _mm512_mul_epu32(r8, _mm512_set1_epi64((long long)dm));
	return _mm512_cmpgt_epu64_mask(xi, y) | (_mm512_cmpeq_epu64_mask(xi, y) & frac);
}

/* The exact sr up-mask of 16 lanes (nv_sr_up8 on each half). */
Q512 static inline __mmask16 nv_sr_exact16(__m512i a, __m512i k, __m512i r, const quant_nv_sr_tab *tab, uint32_t c)
{
	__m512 af = _mm512_castsi512_ps(a);
	__mmask8 lo = nv_sr_up8(_mm512_castps512_ps256(af), _mm512_cvtepu32_epi64(_mm512_castsi512_si256(k)),
	                        _mm512_cvtepu32_epi64(_mm512_castsi512_si256(r)), tab->vd[c], tab->sc[c], tab->dm[c]);
	__mmask8 hi = nv_sr_up8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(af), 1)),
	                        _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(k, 1)),
	                        _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(r, 1)), tab->vd[c], tab->sc[c], tab->dm[c]);
	return (__mmask16)(lo | (unsigned)hi << 8);
}

/* The e2m1 codes (no sign) of one block of 16 magnitudes a by sr with scale
 * code c and random bits r: the kept codes, then quant_nv_sr_tab's
 * fp32 test, and the exact test for the lanes it leaves open (code 7,
 * never up, is left open only for a near FLT_MAX). */
Q512 static inline __m512i nv_sr16(__m512i a, __m512i r, const quant_nv_sr_tab *tab, uint32_t c)
{
	enum { up_rd = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC };   /* a constant expression, as clang requires */
	__m512i k = nv_count7(a, tab->h[c]);
	__m512 tg = _mm512_castps256_ps512(_mm256_loadu_ps(tab->tg[c]));
	__m512 tv = _mm512_castps256_ps512(_mm256_loadu_ps(tab->tv[c]));
	__m512 hi = _mm512_fmadd_round_ps(_mm512_cvt_roundepu32_ps(r, up_rd), _mm512_permutexvar_ps(k, tg),
	                                  _mm512_permutexvar_ps(k, tv), up_rd);
	__m512 af = _mm512_castsi512_ps(a);
	__m512 as = _mm512_fmadd_round_ps(af, _mm512_set1_ps(1 + 0x1p-21f), _mm512_set1_ps(0x1p-116f), up_rd);
	__mmask16 up = _mm512_cmp_ps_mask(af, hi, _CMP_GT_OQ);
	__mmask16 below = _mm512_cmp_ps_mask(as, hi, _CMP_LT_OQ);
	if (__builtin_expect(_kortestc_mask16_u8(up, below), 1))
		return _mm512_mask_add_epi32(k, up, k, _mm512_set1_epi32(1));
	__mmask16 open = (__mmask16)~(up | below) & _mm512_cmplt_epu32_mask(k, _mm512_set1_epi32(7));
	up |= open & nv_sr_exact16(a, k, r, tab, c);
	return _mm512_mask_add_epi32(k, up, k, _mm512_set1_epi32(1));
}

/* One block of 16 by sr (patterns v, scale code c, indices idx): the codes
 * with their signs. Code 0's rows give 0 without a branch. */
Q512 static inline __m512i nv_sr_codes(__m512i v, uint32_t c, __m512i idx, __m512i k1f, __m512i k2,
                                       const quant_nv_sr_tab *tab)
{
	__m512i a = _mm512_and_si512(v, _mm512_set1_epi32(0x7fffffff));
	__m512i k = nv_sr16(a, bulk_avx512_rbits(idx, k1f, k2), tab, c);
	return _mm512_ternarylogic_epi32(k, _mm512_srli_epi32(v, 28), _mm512_set1_epi32(8), 0xf8);   /* k | (v >> 28 & 8) */
}

Q512 size_t quant_nv_sr16_avx512(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                                 const quant_nv_sr_tab *tab, uint64_t seed, uint64_t index0)
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff);
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512d six = _mm512_set1_pd(six_st);
	rng_key key = rng_key_for(seed, index0);
	const __m512i k1f = _mm512_set1_epi32((int)(key.k1 ^ (key.k1 >> 16))), k2 = _mm512_set1_epi32((int)key.k2);
	/* 16 blocks at a time, as quant_nv_rne16_avx512 */
	uint32_t code[2][16];
	size_t b = 0;
	bool ok = n >= 256 && nv_codes256(scales, code[0], in, six);
	for (int cur = 0; ok; b += 256, cur ^= 1) {
		ok = b + 512 <= n && nv_codes256(scales + b / 16 + 16, code[cur ^ 1], in + b + 256, six);
		quant_prefetch_ahead(in + b, 256);
		__m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)(index0 + b)), lane);
		for (size_t i = 0; i < 16; i++) {
			__m512i c = nv_sr_codes(_mm512_loadu_si512(in + b + 16 * i), code[cur][i], idx, k1f, k2, tab);
			_mm_storeu_si128((__m128i *)(elems + b + 16 * i), _mm512_cvtepi32_epi8(c));
			idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16));
		}
	}
	for (; b < n; b += 16) {
		__m512i v = _mm512_loadu_si512(in + b);
		uint32_t amax = (uint32_t)_mm512_reduce_max_epu32(_mm512_and_si512(v, abs));
		if (amax >= 0x7f800000u)
			return b;
		float fa;
		memcpy(&fa, &amax, 4);
		uint32_t c = quant_e4m3_code((double)fa / six_st);
		scales[b / 16] = (uint8_t)c;
		__m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)(index0 + b)), lane);
		_mm_storeu_si128((__m128i *)(elems + b), _mm512_cvtepi32_epi8(nv_sr_codes(v, c, idx, k1f, k2, tab)));
	}
	return n;
}

#else

uint32_t quant_amax_avx512(const float *in, size_t n)
{
	return quant_amax_portable(in, n);
}

void quant_mx_scale_avx512(float *out, const float *in, size_t n, int k)
{
	quant_mx_scale_portable(out, in, n, k);
}

void quant_nv_rne_avx512(uint8_t *out, const float *in, size_t n, const uint32_t g[8])
{
	quant_nv_rne_portable(out, in, n, g);
}

size_t quant_mx_blocks_avx512(float *out, uint8_t *scales, const float *in, size_t n, size_t bs,
                              const quant_mx_rule *r)
{
	return quant_mx_blocks_portable(out, scales, in, n, bs, r);
}

size_t quant_mx_rne_avx512(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                           const quant_mx_rule *r, const quant_elem_enc *enc)
{
	(void)elems, (void)scales, (void)in, (void)n, (void)bs, (void)r, (void)enc;
	return 0;   /* never called: use_avx512 is false off x86-64 */
}

size_t quant_mx_sr_avx512(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                          const quant_mx_rule *r, const quant_elem_enc *enc, uint64_t seed, uint64_t index0)
{
	(void)elems, (void)scales, (void)in, (void)n, (void)bs, (void)r, (void)enc, (void)seed, (void)index0;
	return 0;
}

size_t quant_nv_rne16_avx512(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                             const uint32_t g[127][8])
{
	(void)elems, (void)scales, (void)in, (void)n, (void)six_st, (void)g;
	return 0;
}

size_t quant_nv_sr16_avx512(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                            const quant_nv_sr_tab *tab, uint64_t seed, uint64_t index0)
{
	(void)elems, (void)scales, (void)in, (void)n, (void)six_st, (void)tab, (void)seed, (void)index0;
	return 0;
}

#endif
