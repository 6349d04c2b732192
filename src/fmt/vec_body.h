/* Vector pieces shared by the width-generic rounding bodies (fmt/bulk_body.h,
 * quant/quant_body.h): 32-bit lanes in GCC vector extensions, VB_W of them
 * (8 for AVX2, 4 for the portable path: SSE2 on x86-64, NEON on ARM, plain
 * code elsewhere). Every helper is an exact integer or IEEE operation, so
 * an instance's width changes its speed, never a bit.
 *
 * Includers define VB_NAME(x) (the instance's name for x), VB_W (4 or 8),
 * VB_TARGET (function attributes: a target, or nothing) and VB_AVX2 (1 when
 * the instance may use AVX2 and F16C intrinsics for packing, streaming,
 * gathers and fp16 conversions; 0 for the portable instance). The packing
 * below reads the low half of a lane as its first 16 bits: little-endian
 * targets only (x86-64, AArch64). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/rng.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "fmt/vec_body.h packs lanes as on little-endian targets"
#endif

#if VB_AVX2 || (defined(__x86_64__) && VB_W == 4)
#include <immintrin.h>
#endif

#define VB_U VB_NAME(vu)
#define VB_I VB_NAME(vi)
#define VB_F VB_NAME(vf)
#define VB_H VB_NAME(vh)
#define VB_B VB_NAME(vb)
typedef uint32_t VB_U __attribute__((vector_size(4 * VB_W)));
typedef int32_t VB_I __attribute__((vector_size(4 * VB_W)));
typedef float VB_F __attribute__((vector_size(4 * VB_W)));
typedef uint16_t VB_H __attribute__((vector_size(4 * VB_W)));   /* 2 VB_W lanes: one register */
typedef uint8_t VB_B __attribute__((vector_size(4 * VB_W)));    /* 4 VB_W lanes */
#define VB_LINE (4 * VB_W)   /* bytes of one register, the unit of a streamed store */

#define VB_INLINE static inline __attribute__((always_inline)) VB_TARGET

/* Shuffles use __builtin_shufflevector (constant lane numbers), which GCC
 * (12 and later) and clang both have; a shuffle by lane numbers computed
 * at run time is an intrinsic (AVX2) or a loop over the lanes. */

VB_INLINE VB_U VB_NAME(load)(const void *p)
{
	VB_U v;
	memcpy(&v, p, sizeof v);
	return v;
}

VB_INLINE void VB_NAME(store)(void *p, VB_U v)
{
	memcpy(p, &v, sizeof v);
}

/* m ? a : b lane by lane, for masks of all ones or zeros. */
VB_INLINE VB_U VB_NAME(sel)(VB_U m, VB_U a, VB_U b)
{
#if VB_AVX2
	return (VB_U)_mm256_blendv_epi8((__m256i)b, (__m256i)a, (__m256i)m);
#else
	return (a & m) | (b & ~m);
#endif
}

/* Unsigned comparisons as lane masks, and unsigned min and max. */
VB_INLINE VB_U VB_NAME(gt)(VB_U a, VB_U b)
{
	return (VB_U)(a > b);
}

VB_INLINE VB_U VB_NAME(minu)(VB_U a, VB_U b)
{
#if VB_AVX2
	return (VB_U)_mm256_min_epu32((__m256i)a, (__m256i)b);
#else
	return VB_NAME(sel)(VB_NAME(gt)(a, b), b, a);
#endif
}

VB_INLINE VB_U VB_NAME(maxu)(VB_U a, VB_U b)
{
#if VB_AVX2
	return (VB_U)_mm256_max_epu32((__m256i)a, (__m256i)b);
#else
	return VB_NAME(sel)(VB_NAME(gt)(a, b), a, b);
#endif
}

/* Signed max (lanes below 2^31 in magnitude). */
VB_INLINE VB_U VB_NAME(maxs)(VB_U a, VB_U b)
{
#if VB_AVX2
	return (VB_U)_mm256_max_epi32((__m256i)a, (__m256i)b);
#else
	return VB_NAME(sel)((VB_U)((VB_I)a > (VB_I)b), a, b);
#endif
}

/* Shifts by a count in every lane, 0 for a count of 32 or more (as x86's
 * variable shifts give; the portable form masks the count, which C needs
 * below 32, and zeroes those lanes). */
VB_INLINE VB_U VB_NAME(srlv)(VB_U v, VB_U n)
{
#if VB_AVX2
	return (VB_U)_mm256_srlv_epi32((__m256i)v, (__m256i)n);
#else
	return (v >> (n & 31u)) & (VB_U)(n < 32u);
#endif
}

VB_INLINE VB_U VB_NAME(sllv)(VB_U v, VB_U n)
{
#if VB_AVX2
	return (VB_U)_mm256_sllv_epi32((__m256i)v, (__m256i)n);
#else
	return (v << (n & 31u)) & (VB_U)(n < 32u);
#endif
}

/* a >= b (unsigned): on AVX2 by max(a, b) == a, two instructions. */
VB_INLINE VB_U VB_NAME(ge)(VB_U a, VB_U b)
{
#if VB_AVX2
	return (VB_U)(VB_NAME(maxu)(a, b) == a);
#else
	return (VB_U)(a >= b);
#endif
}

/* Whether any lane of the mask m is set. */
VB_INLINE bool VB_NAME(any)(VB_U m)
{
#if VB_AVX2
	return !_mm256_testz_si256((__m256i)m, (__m256i)m);
#else
	uint64_t w[VB_W / 2], o = 0;
	memcpy(w, &m, sizeof w);
	for (int j = 0; j < VB_W / 2; j++)
		o |= w[j];
	return o != 0;
#endif
}

/* Whether any lane is set in the mask m and negative in s (sign bit set). */
VB_INLINE bool VB_NAME(any_neg)(VB_U m, VB_U s)
{
#if VB_AVX2
	return !_mm256_testz_ps((__m256)m, (__m256)s);
#else
	return VB_NAME(any)(m & (VB_U)((VB_I)s >> 31));
#endif
}

/* Whether any lane is set in the mask m and clear in the mask n. */
VB_INLINE bool VB_NAME(any_andnot)(VB_U m, VB_U n)
{
#if VB_AVX2
	return !_mm256_testc_si256((__m256i)n, (__m256i)m);
#else
	return VB_NAME(any)(m & ~n);
#endif
}

/* Signed min (lanes below 2^31 in magnitude). */
VB_INLINE VB_U VB_NAME(mins)(VB_U a, VB_U b)
{
#if VB_AVX2
	return (VB_U)_mm256_min_epi32((__m256i)a, (__m256i)b);
#else
	return VB_NAME(sel)((VB_U)((VB_I)a < (VB_I)b), a, b);
#endif
}

/* The largest lane (unsigned), by a tree of lane swaps. */
VB_INLINE uint32_t VB_NAME(hmax)(VB_U m)
{
#if VB_W == 8
	m = VB_NAME(maxu)(m, __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3));
	m = VB_NAME(maxu)(m, __builtin_shufflevector(m, m, 2, 3, 0, 1, 6, 7, 4, 5));
	m = VB_NAME(maxu)(m, __builtin_shufflevector(m, m, 1, 0, 3, 2, 5, 4, 7, 6));
#else
	m = VB_NAME(maxu)(m, __builtin_shufflevector(m, m, 2, 3, 0, 1));
	m = VB_NAME(maxu)(m, __builtin_shufflevector(m, m, 1, 0, 3, 2));
#endif
	return m[0];
}

VB_INLINE VB_U VB_NAME(splat)(uint32_t x)
{
	return (VB_U){ 0 } + x;
}

/* The lane numbers 0 .. VB_W - 1. */
VB_INLINE VB_U VB_NAME(lanes)(void)
{
#if VB_W == 8
	return (VB_U){ 0, 1, 2, 3, 4, 5, 6, 7 };
#else
	return (VB_U){ 0, 1, 2, 3 };
#endif
}

/* Exact conversions between lanes and fp32 for values below 2^24 (and
 * truncation toward 0 of fp32 values in (-2^31, 2^31)). */
/* a b + c, rounded once where the instance has FMA (AVX2), else the
 * product and the sum each rounded: for a caller to whom either serves
 * (the product exact, or a bound that holds for both). The build does not
 * contract a b + c written out (-ffp-contract=off). */
VB_INLINE VB_F VB_NAME(madd)(VB_F a, VB_F b, VB_F c)
{
#if VB_AVX2
	return _mm256_fmadd_ps(a, b, c);
#else
	return a * b + c;
#endif
}

VB_INLINE VB_F VB_NAME(u2f)(VB_U v)
{
	return __builtin_convertvector((VB_I)v, VB_F);
}

VB_INLINE VB_U VB_NAME(f2u_trunc)(VB_F f)
{
	return (VB_U)__builtin_convertvector(f, VB_I);
}

/* rng_bits_keyed (util/rng.h) in every lane starts from the keyed counter
 * hk = idx ^ (idx >> 16) ^ k1f: lowbias32's first step over idx ^ k1,
 * with k1's share folded into k1f = k1 ^ (k1 >> 16), as shifts distribute
 * over xor. The kernels take it times lowbias32's first factor, h1 = hk
 * RNG_MIX32_M1 (mod 2^32), which VB_NAME(ctr) makes with one vector add. */
VB_INLINE VB_U VB_NAME(keyed)(VB_U idx, VB_U k1f)
{
	return idx ^ (idx >> 16) ^ k1f;
}

/* h1 of the indices idx, lane by lane. */
VB_INLINE VB_U VB_NAME(keyed1)(VB_U idx, VB_U k1f)
{
	return VB_NAME(keyed)(idx, k1f) * RNG_MIX32_M1;
}

/* The rest of lowbias32 from h1 up to its second multiply; the bits are
 * then x ^ (x >> 16) ^ k2. */
VB_INLINE VB_U VB_NAME(mix_body)(VB_U h1)
{
	VB_U x = h1 ^ (h1 >> 15);
	return x * RNG_MIX32_M2;
}

/* rng_bits_keyed's bits: x ^ (x >> 16) ^ k2. */
VB_INLINE VB_U VB_NAME(rbits)(VB_U h1, VB_U k2)
{
	VB_U x = VB_NAME(mix_body)(h1);
	return x ^ (x >> 16) ^ k2;
}

/* The complement of rng_bits_keyed's bits, nk2 = ~k2: ~r = x ^ (x >> 16) ^ ~k2. */
VB_INLINE VB_U VB_NAME(rbits_not)(VB_U h1, VB_U nk2)
{
	VB_U x = VB_NAME(mix_body)(h1);
	return x ^ (x >> 16) ^ nk2;
}

/* h1 for a loop that steps forward through the indices, nvec vectors (1,
 * 2 or 4) a step. idx >> 16 is one value for 2^16 indices in a row, so
 * while a step lies in one such run, hk = j ^ C for each of its indices
 * j, with C = (j >> 16) ^ k1f. Where the step's first index b is a
 * multiple of its length n = nvec VB_W (a power of 2), its indices are
 * b + o for the offsets o < n, and as b has no bits below n, hk = (b ^
 * (C & -n)) + (o ^ (C mod n)): h1 = P + L_o, the product P = (b ^ (C &
 * -n)) M1 once per step, broadcast, and L_o = (o ^ (C mod n)) M1 made
 * once per run (M1 = RNG_MIX32_M1; multiplication mod 2^32 distributes
 * over the sum). One vector add per vector takes the place of an add,
 * an xor and a multiply. A step across a run's end, or from a b that is
 * not a multiple of n, gets each lane's h1 whole (p = 0). */
typedef struct {
	VB_U v[4];       /* vector s: L for its offsets s VB_W + lane, or its whole h1 where p is 0 */
	VB_U k1f;
	uint32_t p;      /* P */
	uint32_t chi;    /* C & -n for the run hi */
	uint32_t hi;     /* the run of the step before, where it began at a multiple of n; else ~0u */
	int nvec;        /* n / VB_W for v[] */
} VB_NAME(ctr);

VB_INLINE VB_NAME(ctr) VB_NAME(ctr_of)(VB_U k1f)
{
	VB_NAME(ctr) t = { .k1f = k1f, .hi = ~0u };
	return t;
}

/* Before a step over the nvec VB_W indices b, b + 1, ... (lanes of idx,
 * idx + VB_W, ...; b no smaller than any index of an earlier step). */
VB_INLINE void VB_NAME(ctr_step)(VB_NAME(ctr) *t, uint32_t b, VB_U idx, int nvec)
{
	uint32_t n = (uint32_t)(nvec * VB_W), last = b + n - 1;
	if (__builtin_expect(last >> 16 != t->hi || b % n != 0 || nvec != t->nvec, 0)) {
		if (b >> 16 != last >> 16 || b % n != 0) {
			t->hi = ~0u;
			t->p = 0;
			for (int s = 0; s < nvec; s++)
				t->v[s] = VB_NAME(keyed1)(idx + (uint32_t)(s * VB_W), t->k1f);
			return;
		}
		t->hi = b >> 16;
		t->nvec = nvec;
		uint32_t c = t->hi ^ t->k1f[0];
		t->chi = c & ~(n - 1);
		for (int s = 0; s < nvec; s++)
			t->v[s] = ((VB_NAME(lanes)() + (uint32_t)(s * VB_W)) ^ (c & (n - 1))) * RNG_MIX32_M1;
	}
	t->p = (b ^ t->chi) * RNG_MIX32_M1;
}

/* h1 of vector s of the step. */
VB_INLINE VB_U VB_NAME(ctr_h1)(const VB_NAME(ctr) *t, int s)
{
	return VB_NAME(splat)(t->p) + t->v[s];
}

/* fp32 -> fp16 and back by the F16C instructions (round to nearest even,
 * from the immediate: MXCSR is not consulted). */
#if VB_AVX2
VB_INLINE VB_U VB_NAME(f16c_encode)(VB_U x)
{
	__m128i h = _mm256_cvtps_ph((__m256)x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	return (VB_U)_mm256_cvtepu16_epi32(h);
}
#endif

/* Two vectors of codes below 2^16 as one register of 16-bit codes, in
 * order; four below 2^8 as one of bytes. */
VB_INLINE VB_H VB_NAME(pack16)(VB_U a, VB_U b)
{
#if VB_AVX2
	__m256i p = _mm256_packus_epi32((__m256i)a, (__m256i)b);
	return (VB_H)_mm256_permute4x64_epi64(p, 0xd8);
#elif VB_W == 4
	return __builtin_shufflevector((VB_H)a, (VB_H)b, 0, 2, 4, 6, 8, 10, 12, 14);
#endif
}

VB_INLINE VB_B VB_NAME(pack8)(VB_U a, VB_U b, VB_U c, VB_U d)
{
#if VB_AVX2
	__m256i p = _mm256_packus_epi16(_mm256_packus_epi32((__m256i)a, (__m256i)b),
	                                _mm256_packus_epi32((__m256i)c, (__m256i)d));
	return (VB_B)_mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
#elif VB_W == 4
	VB_H lo = VB_NAME(pack16)(a, b), hi = VB_NAME(pack16)(c, d);
	return __builtin_shufflevector((VB_B)lo, (VB_B)hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
#endif
}

/* One register to memory, bypassing the caches where the target can (p
 * aligned to VB_LINE). */
VB_INLINE void VB_NAME(stream)(void *p, VB_U v)
{
#if VB_AVX2
	_mm256_stream_si256((__m256i *)p, (__m256i)v);
#elif defined(__x86_64__)
	_mm_stream_si128((__m128i *)p, (__m128i)v);
#else
	memcpy(p, &v, sizeof v);
#endif
}

VB_INLINE void VB_NAME(stream_end)(void)
{
#if VB_AVX2 || defined(__x86_64__)
	_mm_sfence();
#endif
}

/* The first n lanes (n < VB_W) of v as elements of size bytes. */
VB_INLINE void VB_NAME(store_part)(void *out, size_t size, VB_U v, size_t n)
{
	uint32_t t[VB_W];
	memcpy(t, &v, sizeof t);
	for (size_t j = 0; j < n; j++) {
		uint8_t b8 = (uint8_t)t[j];
		uint16_t b16 = (uint16_t)t[j];
		if (size == 1)
			memcpy((char *)out + j, &b8, 1);
		else if (size == 2)
			memcpy((char *)out + 2 * j, &b16, 2);
		else
			memcpy((char *)out + 4 * j, &t[j], 4);
	}
}

/* VB_W elements of size bytes as lanes (zero-extended). */
VB_INLINE VB_U VB_NAME(load_elems)(const void *in, size_t size)
{
	if (size == 4)
		return VB_NAME(load)(in);
#if VB_AVX2
	if (size == 2)
		return (VB_U)_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)in));
	return (VB_U)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)in));
#else
	typedef uint16_t h4 __attribute__((vector_size(2 * VB_W)));
	typedef uint8_t b4 __attribute__((vector_size(VB_W)));
	if (size == 2) {
		h4 h;
		memcpy(&h, in, sizeof h);
		return __builtin_convertvector(h, VB_U);
	}
	b4 b;
	memcpy(&b, in, sizeof b);
	return __builtin_convertvector(b, VB_U);
#endif
}

/* VB_W elements of size bytes from lanes. */
VB_INLINE void VB_NAME(store_elems)(void *out, size_t size, VB_U v)
{
	if (size == 4) {
		VB_NAME(store)(out, v);
	} else if (size == 2) {
		VB_H h = VB_NAME(pack16)(v, v);
		memcpy(out, &h, 2 * VB_W);
	} else {
		VB_B b = VB_NAME(pack8)(v, v, v, v);
		memcpy(out, &b, VB_W);
	}
}
