/* Pieces of fmt's AVX-512 rounding kernels (fmt/bulk_avx512.c) that the
 * block quantizers (quant/quant_avx512.c) use too, so that both give the
 * same bits from one body. For code compiled for AVX-512 F and DQ (function
 * attributes) on x86-64, called only where the CPU reports them. */
#ifndef MIXPREC_FMT_BULK_AVX512_PARTS_H
#define MIXPREC_FMT_BULK_AVX512_PARTS_H

#if defined(__x86_64__)
#include <immintrin.h>

#define BULK_AVX512_PART static inline __attribute__((target("avx512f,avx512dq"), always_inline))

/* lowbias32 of (idx ^ k1) (util/rng.h rng_mix32) up to its second
 * multiply, k1's first step folded into k1f = k1 ^ (k1 >> 16): shifts
 * distribute over xor, so (idx ^ k1) ^ ((idx ^ k1) >> 16) = idx ^ (idx >>
 * 16) ^ k1f, one three-way xor. rng_bits_keyed is then x ^ (x >> 16) ^ k2. */
BULK_AVX512_PART __m512i bulk_avx512_mix32_body(__m512i idx, __m512i k1f)
{
	__m512i x = _mm512_ternarylogic_epi32(idx, _mm512_srli_epi32(idx, 16), k1f, 0x96);
	x = _mm512_mullo_epi32(x, _mm512_set1_epi32(0x7feb352d));
	x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 15));
	return _mm512_mullo_epi32(x, _mm512_set1_epi32((int)0x846ca68bu));
}

/* rng_bits_keyed in every lane for the indices idx under (k1f, k2); with
 * ~k2 for k2, the complement of those bits at the same cost. */
BULK_AVX512_PART __m512i bulk_avx512_rbits(__m512i idx, __m512i k1f, __m512i k2)
{
	__m512i x = bulk_avx512_mix32_body(idx, k1f);
	return _mm512_ternarylogic_epi32(x, _mm512_srli_epi32(x, 16), k2, 0x96);
}

/* Stochastic rounding onto a fixed grid (a format's subnormals), in the
 * lanes sub of enc: y, the value in units of the grid, exact in fp32; the
 * code floor(y), up iff r < ceil(frac(y) 2^32) (bulk_encode1's rule), with
 * nr = ~r: frac(y) by one VREDUCEPS (exact), c = ceil(frac(y) 2^32), and
 * r < c iff c + nr carries out of 32 bits (c = 0 never does). */
BULK_AVX512_PART __m512i bulk_avx512_sr_grid(__m512i enc, __mmask16 sub, __m512 y, __m512i nr)
{
	__m512 f32 = _mm512_mul_ps(_mm512_reduce_ps(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC),
	                           _mm512_set1_ps(0x1p32f));
	__m512i c = _mm512_cvt_roundps_epu32(f32, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
	__mmask16 up = _mm512_mask_cmplt_epu32_mask(sub, _mm512_add_epi32(c, nr), nr);
	enc = _mm512_mask_cvt_roundps_epi32(enc, sub, y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
	return _mm512_mask_add_epi32(enc, up, enc, _mm512_set1_epi32(1));
}

#endif
#endif
