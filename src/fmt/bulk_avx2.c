/* AVX2 + F16C kernels: the same integer formula as bulk_encode1 in 8 lanes
 * (AVX2's variable shifts follow the same count >= 32 rule), and the F16C
 * conversion instruction for fp16 RNE. */
#include "fmt/bulk_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define T256 __attribute__((target("avx2,f16c,fma")))

typedef struct {
	__m256i shift, e32_min, rebias, sub_base, max_bits, ov_bits, nan_bits, sign_shift;
	__m256i k1, k2, lane, ov_signed;
	int sr, saturate;
	fmt_id fmt;
} vparams;

T256 static inline __attribute__((always_inline)) vparams vparams_load(const bulk_params *p, rng_key k)
{
	vparams v = {
		.shift = _mm256_set1_epi32((int)p->shift),
		.e32_min = _mm256_set1_epi32((int)p->e32_min),
		.rebias = _mm256_set1_epi32((int)p->rebias),
		.sub_base = _mm256_set1_epi32((int)p->sub_base),
		.max_bits = _mm256_set1_epi32((int)p->max_bits),
		.ov_bits = _mm256_set1_epi32((int)p->ov_bits),
		.nan_bits = _mm256_set1_epi32((int)p->nan_bits),
		.sign_shift = _mm256_set1_epi32((int)p->sign_shift),
		.k1 = _mm256_set1_epi32((int)k.k1),
		.k2 = _mm256_set1_epi32((int)k.k2),
		.lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
		.ov_signed = _mm256_set1_epi32(p->ov_signed ? -1 : 0),
		.sr = p->sr,
		.saturate = p->ov_bits == p->max_bits,
		.fmt = p->fmt,
	};
	return v;
}

/* Unsigned a > b, as an all-ones lane mask. */
T256 static inline __attribute__((always_inline)) __m256i gt_u32(__m256i a, __m256i b)
{
	const __m256i bias = _mm256_set1_epi32((int)0x80000000u);
	return _mm256_cmpgt_epi32(_mm256_xor_si256(a, bias), _mm256_xor_si256(b, bias));
}

T256 static inline __attribute__((always_inline)) __m256i mix32(__m256i x)
{
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
	x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
	x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x846ca68bu));
	return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

T256 static inline __attribute__((always_inline)) __m256i rand8(const vparams *v, uint32_t idx_lo)
{
	__m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)idx_lo), v->lane);
	return _mm256_xor_si256(mix32(_mm256_xor_si256(idx, v->k1)), v->k2);
}

T256 static inline __attribute__((always_inline)) __m256i encode_generic(const vparams *v, __m256i x, __m256i r)
{
	const __m256i one = _mm256_set1_epi32(1), c32 = _mm256_set1_epi32(32);
	const __m256i zero = _mm256_setzero_si256();
	__m256i sign = _mm256_srlv_epi32(_mm256_and_si256(x, _mm256_set1_epi32((int)0x80000000u)),
	                                 v->sign_shift);
	__m256i a = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
	__m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
	__m256i e = _mm256_srli_epi32(a, 23);
	__m256i normal = _mm256_cmpeq_epi32(_mm256_max_epu32(e, v->e32_min), e);   /* e >= e32_min */
	__m256i m = _mm256_and_si256(a, _mm256_set1_epi32(0x7fffff));
	__m256i has_e = _mm256_xor_si256(_mm256_cmpeq_epi32(e, zero), _mm256_set1_epi32(-1));
	m = _mm256_or_si256(m, _mm256_and_si256(has_e, _mm256_set1_epi32(0x800000)));
	__m256i val = _mm256_blendv_epi8(m, a, normal);
	__m256i s = _mm256_blendv_epi8(_mm256_sub_epi32(v->sub_base, _mm256_max_epu32(e, one)), v->shift, normal);
	__m256i kept = _mm256_srlv_epi32(val, s);
	__m256i hi = _mm256_or_si256(_mm256_sllv_epi32(val, _mm256_sub_epi32(c32, s)),
	                             _mm256_srlv_epi32(val, _mm256_sub_epi32(s, c32)));
	__m256i up;
	if (v->sr) {
		__m256i below_mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, _mm256_sub_epi32(s, c32)), one);
		__m256i nz = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_and_si256(val, below_mask), zero),
		                              _mm256_set1_epi32(-1));
		__m256i below = _mm256_and_si256(gt_u32(s, c32), nz);
		__m256i t = _mm256_sub_epi32(hi, below);          /* below is -1 where set */
		up = gt_u32(t, r);
	} else {
		__m256i thr = _mm256_sub_epi32(_mm256_set1_epi32((int)0x80000000u), _mm256_and_si256(kept, one));
		up = gt_u32(hi, thr);
	}
	__m256i enc = _mm256_sub_epi32(kept, up);                 /* up is -1 where set */
	enc = _mm256_sub_epi32(enc, _mm256_and_si256(normal, v->rebias));
	__m256i ov = gt_u32(enc, v->max_bits);
	enc = _mm256_blendv_epi8(enc, v->ov_bits, ov);
	__m256i drop_sign = _mm256_or_si256(nan, _mm256_andnot_si256(v->ov_signed, ov));
	enc = _mm256_or_si256(enc, _mm256_andnot_si256(drop_sign, sign));
	return _mm256_blendv_epi8(enc, v->nan_bits, nan);
}

T256 static inline __attribute__((always_inline)) __m256i encode8(const vparams *v, __m256i x, uint32_t idx_lo)
{
	if (v->fmt == FMT_FP16 && !v->sr && !v->saturate) {
		__m128i h = _mm256_cvtps_ph(_mm256_castsi256_ps(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__m256i y = _mm256_cvtepu16_epi32(h);
		__m256 xf = _mm256_castsi256_ps(x);
		__m256i nan = _mm256_castps_si256(_mm256_cmp_ps(xf, xf, _CMP_UNORD_Q));
		return _mm256_blendv_epi8(y, v->nan_bits, nan);
	}
	__m256i r = v->sr ? rand8(v, idx_lo) : _mm256_setzero_si256();
	if (v->fmt == FMT_BF16 && !v->saturate) {
		/* as in the AVX-512 kernel: RNE adds 0x7fff + lsb, SR adds (~r) >> 16
		 * (a carry iff low16 > r >> 16); the carry never reaches the sign */
		__m256i add = v->sr ? _mm256_srli_epi32(_mm256_andnot_si256(r, _mm256_set1_epi32(-1)), 16)
		                    : _mm256_add_epi32(_mm256_set1_epi32(0x7fff),
		                                       _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1)));
		__m256i y = _mm256_srli_epi32(_mm256_add_epi32(x, add), 16);
		__m256i a = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
		__m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
		return _mm256_blendv_epi8(y, v->nan_bits, nan);
	}
	return encode_generic(v, x, r);
}

T256 static inline __attribute__((always_inline)) __m256 canonical_nan(__m256 y)
{
	__m256 nan = _mm256_cmp_ps(y, y, _CMP_UNORD_Q);
	return _mm256_blendv_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)), nan);
}

/* Narrow 8 lanes of 32-bit values (each < 2^16) to 16 bits. */
T256 static inline __attribute__((always_inline)) __m128i narrow16(__m256i y)
{
	__m256i p = _mm256_packus_epi32(y, y);
	p = _mm256_permute4x64_epi64(p, 0x08);
	return _mm256_castsi256_si128(p);
}

T256 static inline __attribute__((always_inline)) __m256 decode8(fmt_id fmt, __m256i b)
{
	switch (fmt) {
	case FMT_BF16: return canonical_nan(_mm256_castsi256_ps(_mm256_slli_epi32(b, 16)));
	case FMT_TF32: return canonical_nan(_mm256_castsi256_ps(_mm256_slli_epi32(b, 13)));
	case FMT_FP16: return canonical_nan(_mm256_cvtph_ps(narrow16(b)));
	case FMT_E4M3: return _mm256_i32gather_ps(bulk_e4m3_table, b, 4);
	case FMT_E5M2: return _mm256_i32gather_ps(bulk_e5m2_table, b, 4);
	default:       return canonical_nan(_mm256_castsi256_ps(b));
	}
}

T256 static inline __attribute__((always_inline)) void store8(size_t size, void *out, size_t i, __m256i y)
{
	if (size == 4) {
		_mm256_storeu_si256((__m256i *)((uint32_t *)out + i), y);
	} else if (size == 2) {
		_mm_storeu_si128((__m128i *)((uint16_t *)out + i), narrow16(y));
	} else {
		__m128i h = narrow16(y);
		h = _mm_packus_epi16(h, h);
		_mm_storel_epi64((__m128i *)((uint8_t *)out + i), h);
	}
}

T256 static inline __attribute__((always_inline)) __m256i load8(size_t size, const void *in, size_t i)
{
	if (size == 4)
		return _mm256_loadu_si256((const __m256i *)((const uint32_t *)in + i));
	if (size == 2)
		return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)in + i)));
	return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)((const uint8_t *)in + i)));
}

/* Large 16-bit outputs: non-temporal 32-byte stores in one sequential
 * stream, as in the AVX-512 kernel (see there why). Measured on the machine
 * of issue 17 (MIXPREC_SIMD=avx2, 2 threads, 512 MiB, same-run ratio to
 * memcpy): bf16 rne 0.60-0.88 -> 1.21-1.27, fp16 rne 0.65-0.96 -> 1.24-1.27
 * against four 4 KiB blocks at once. */
#define STREAM_MIN_ELEMS (1u << 20)

T256 static inline __attribute__((always_inline)) void encode16_stream(const vparams *v, void *out,
                                                                      const float *in, size_t i, uint32_t idx_lo)
{
	__m128i lo = narrow16(encode8(v, _mm256_loadu_si256((const __m256i *)(in + i)), idx_lo + (uint32_t)i));
	__m128i hi = narrow16(encode8(v, _mm256_loadu_si256((const __m256i *)(in + i + 8)), idx_lo + (uint32_t)i + 8));
	_mm256_stream_si256((__m256i *)((uint16_t *)out + i), _mm256_set_m128i(hi, lo));
}

T256 void bulk_avx2_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n)
{
	vparams v = vparams_load(p, k);
	size_t size = fmt_bulk_elem_size(p->fmt);
	size_t i = 0;
	if (size == 2 && n >= STREAM_MIN_ELEMS && (uintptr_t)out % 2 == 0) {
		/* head: single elements until the output is 32-byte aligned */
		size_t head = ((32 - ((uintptr_t)out & 31)) & 31) / 2;
		for (; i < head; i++) {
			uint32_t r = p->sr ? rng_bits_keyed(k, idx_lo + (uint32_t)i) : 0;
			bulk_store_elem(out, i, 2, bulk_encode1(p, bulk_f2u(in[i]), r));
		}
		for (; i + 16 <= n; i += 16)
			encode16_stream(&v, out, in, i, idx_lo);
		_mm_sfence();
	}
	for (; i + 8 <= n; i += 8)
		store8(size, out, i, encode8(&v, _mm256_loadu_si256((const __m256i *)(in + i)), idx_lo + (uint32_t)i));
	if (i < n) {
		uint32_t tmp_in[8] = { 0 }, tmp_out[8];
		__builtin_memcpy(tmp_in, in + i, (n - i) * 4);
		_mm256_storeu_si256((__m256i *)tmp_out,
		                    encode8(&v, _mm256_loadu_si256((const __m256i *)tmp_in), idx_lo + (uint32_t)i));
		for (size_t j = 0; i + j < n; j++)
			bulk_store_elem(out, i + j, size, tmp_out[j]);
	}
}

T256 void bulk_avx2_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n)
{
	vparams v = vparams_load(p, k);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256i b = encode8(&v, _mm256_loadu_si256((const __m256i *)(x + i)), idx_lo + (uint32_t)i);
		_mm256_storeu_ps(x + i, decode8(p->fmt, b));
	}
	if (i < n) {
		float tmp[8] = { 0 };
		__builtin_memcpy(tmp, x + i, (n - i) * 4);
		__m256i b = encode8(&v, _mm256_loadu_si256((const __m256i *)tmp), idx_lo + (uint32_t)i);
		_mm256_storeu_ps(tmp, decode8(p->fmt, b));
		__builtin_memcpy(x + i, tmp, (n - i) * 4);
	}
}

T256 size_t bulk_avx2_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                                 const float *u, size_t n)
{
	vparams v = vparams_load(p, k);
	bulk_params prne = *p;
	prne.sr = 0;
	vparams vr = vparams_load(&prne, k);
	size_t unchanged = 0;
	for (size_t i = 0; i < n; i += 8) {
		size_t m = n - i < 8 ? n - i : 8;
		float xo[8] = { 0 }, uu[8] = { 0 }, cc[8] = { 0 }, t[8];
		__builtin_memcpy(xo, x + i, m * 4);
		__builtin_memcpy(uu, u + i, m * 4);
		__m256 vx = _mm256_loadu_ps(xo), vu = _mm256_loadu_ps(uu), vt;
		if (comp) {
			__builtin_memcpy(cc, comp + i, m * 4);
			__m256 y = _mm256_sub_ps(vu, _mm256_loadu_ps(cc));
			vt = decode8(p->fmt, encode8(&v, _mm256_castps_si256(_mm256_add_ps(vx, y)), idx_lo + (uint32_t)i));
			__m256 c = _mm256_sub_ps(_mm256_sub_ps(vt, vx), y);
			_mm256_storeu_ps(cc, decode8(p->fmt, encode8(&vr, _mm256_castps_si256(c), idx_lo + (uint32_t)i)));
			__builtin_memcpy(comp + i, cc, m * 4);
		} else {
			vt = decode8(p->fmt, encode8(&v, _mm256_castps_si256(_mm256_add_ps(vx, vu)), idx_lo + (uint32_t)i));
		}
		_mm256_storeu_ps(t, vt);
		unsigned eq = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(vt, vx, _CMP_EQ_OQ)) & ((1u << m) - 1);
		unchanged += (size_t)__builtin_popcount(eq);
		__builtin_memcpy(x + i, t, m * 4);
	}
	return unchanged;
}

T256 void bulk_avx2_decode(fmt_id fmt, float *out, const void *in, size_t n)
{
	size_t size = fmt_bulk_elem_size(fmt);
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(out + i, decode8(fmt, load8(size, in, i)));
	for (; i < n; i++) {
		out[i] = bulk_u2f(bulk_decode1(fmt, bulk_load_elem(in, i, size)));
	}
}

#else

void bulk_avx2_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n)
{
	(void)p; (void)k; (void)idx_lo; (void)out; (void)in; (void)n;
}
void bulk_avx2_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n)
{
	(void)p; (void)k; (void)idx_lo; (void)x; (void)n;
}
void bulk_avx2_decode(fmt_id fmt, float *out, const void *in, size_t n)
{
	(void)fmt; (void)out; (void)in; (void)n;
}
size_t bulk_avx2_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                            const float *u, size_t n)
{
	(void)p; (void)k; (void)idx_lo; (void)x; (void)comp; (void)u; (void)n;
	return 0;
}
#endif
