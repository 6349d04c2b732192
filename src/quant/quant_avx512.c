/* AVX-512 twins of the bulk block-quantization pieces (quant_impl.h):
 * compiled for AVX-512 F/BW/VL by function attributes and called only on
 * the avx512 path (fmt_simd_available). Each does what its portable twin in
 * quant_bulk.c does, lane by lane, with the same integer and fp32 steps. */
#include <string.h>

#include "quant/quant_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define Q512 __attribute__((target("avx2,avx512f,avx512bw,avx512vl")))

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

Q512 void quant_nv_rne_avx512(uint8_t *out, const float *in, size_t n, const uint32_t g[7])
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

#else

uint32_t quant_amax_avx512(const float *in, size_t n)
{
	return quant_amax_portable(in, n);
}

void quant_mx_scale_avx512(float *out, const float *in, size_t n, int k)
{
	quant_mx_scale_portable(out, in, n, k);
}

void quant_nv_rne_avx512(uint8_t *out, const float *in, size_t n, const uint32_t g[7])
{
	quant_nv_rne_portable(out, in, n, g);
}

#endif
