/* Internal to fmt/bulk*.c: the integer rounding kernel shared by every path.
 *
 * An fp32 pattern is rounded by working on its bits: normal results keep the
 * exponent field in the integer (a carry out of the fraction bumps the
 * exponent, and past the largest exponent lands on inf), subnormal results use
 * the significand with a per-element shift. Shifts follow the x86 variable
 * shift rule (a count of 32 or more gives 0), which the portable helpers below
 * reproduce, so one formula serves every path. */
#ifndef MIXPREC_FMT_BULK_IMPL_H
#define MIXPREC_FMT_BULK_IMPL_H

#include <stdint.h>

#include "fmt/bulk.h"
#include "util/hd.h"
#include "util/rng.h"

typedef struct {
	fmt_id fmt;
	int frac_bits;
	uint32_t shift;         /* 23 - frac_bits: discarded bits of a normal result */
	uint32_t e32_min;       /* biased fp32 exponent of the target's min normal */
	uint32_t rebias;        /* (127 - bias) << frac_bits */
	uint32_t sub_base;      /* subnormal shift = sub_base - max(e32, 1) */
	uint32_t max_bits;
	uint32_t ov_bits;       /* magnitude (or NaN) returned on overflow */
	uint32_t ov_signed;     /* 1 when ov_bits takes the input's sign */
	uint32_t nan_bits;      /* a NaN input's result (fp6/fp4, which have no NaN: +0) */
	uint32_t sign_shift;    /* 32 - width */
	uint32_t zero_unsigned; /* 1 where -0 does not exist (FNUZ): a zero result drops the sign */
	int sr;
	int mode;               /* the fmt_mode: rne and sr, or rto, rnz, sr-equal (sr is 0 for these) */
	int saturate;           /* the caller's saturate flag (e8m0's scalar core) */
	int by_core;            /* e8m0: every element through fmt_round_double (bulk.c) */
} bulk_params;

/* Fills p for an encode of o->fmt, for every format and special-value rule
 * (bulk_encode1 serves all but e8m0, whose elements go through the scalar
 * core, and fp32, whose encoding is bulk_fp32_one's copy). */
void bulk_params_init(bulk_params *p, const fmt_bulk_opts *o);

#if defined(__CUDA_ARCH__)
/* the clamping funnel shifts give 0 for counts of 32 or more: one instruction */
static inline MP_HD uint32_t bulk_shl(uint32_t v, uint32_t n) { return __funnelshift_lc(0u, v, n); }
static inline MP_HD uint32_t bulk_shr(uint32_t v, uint32_t n) { return __funnelshift_rc(v, 0u, n); }
#else
static inline MP_HD uint32_t bulk_shl(uint32_t v, uint32_t n) { return n >= 32 ? 0 : v << n; }
static inline MP_HD uint32_t bulk_shr(uint32_t v, uint32_t n) { return n >= 32 ? 0 : v >> n; }
#endif

/* Whether the mode reads an element's random bits (sr, sr-equal). */
static inline MP_HD int bulk_draws(const bulk_params *p)
{
	return p->sr || p->mode == FMT_SR_EQUAL;
}

/* One element: fp32 pattern x and random bits r (ignored unless
 * bulk_draws). Every mode of fmt/round.h's rules but rtz, up and down:
 * rto sets the kept bits' last bit when inexact, rnz goes up only above
 * the midpoint, sr-equal goes up iff r < 2^31 (fmt_sr_equal_round_up);
 * past max a finite value gives max under rto, and under sr-equal when the
 * draw stays down. */
static inline MP_HD uint32_t bulk_encode1(const bulk_params *p, uint32_t x, uint32_t r)
{
	uint32_t sign = (x >> 31) << (31 - p->sign_shift);
	uint32_t a = x & 0x7fffffffu;
	if (a > 0x7f800000u)
		return p->nan_bits;
	uint32_t e = a >> 23;
	int normal = e >= p->e32_min;
	uint32_t v, s;
	if (normal) {
		v = a;
		s = p->shift;
	} else {
		v = (a & 0x7fffffu) | (e ? 0x800000u : 0);
		s = p->sub_base - (e ? e : 1);
	}
	uint32_t kept = bulk_shr(v, s);
	uint32_t hi = bulk_shl(v, 32 - s) | bulk_shr(v, s - 32);  /* first 32 discarded bits */
	uint32_t up;
	if (p->sr) {
		uint32_t below = s > 32 && (v & (bulk_shl(1, s - 32) - 1u)) != 0;
		up = r < hi + below;
	} else if (p->mode == FMT_RTO || p->mode == FMT_SR_EQUAL) {
		/* a count of 32 or more makes the mask all ones: every bit discarded */
		uint32_t inexact = (v & (bulk_shl(1, s) - 1u)) != 0;
		up = inexact && (p->mode == FMT_RTO ? !(kept & 1u) : r < 0x80000000u);
	} else if (p->mode == FMT_RNZ) {
		up = hi > 0x80000000u;
	} else {
		up = hi > 0x80000000u - (kept & 1u);
	}
	uint32_t enc = kept + up - (normal ? p->rebias : 0);
	if (enc > p->max_bits) {
		if (a < 0x7f800000u && (p->mode == FMT_RTO || (p->mode == FMT_SR_EQUAL && r >= 0x80000000u)))
			return p->max_bits | sign;
		return p->ov_signed ? (p->ov_bits | sign) : p->ov_bits;
	}
	if (enc == 0 && p->zero_unsigned)
		return 0;   /* FNUZ: the sign alone is the NaN */
	return enc | sign;
}

/* Quantize one fp32 value (encode then decode); r ignored unless p->sr. */
static inline MP_HD float bulk_quantize1(const bulk_params *p, float x, uint32_t r);

/* The decoding table of every format of at most 8 bits, indexed by the
 * pattern's low 8 bits (NaN patterns give fp32's canonical quiet NaN); the
 * rows of the wider formats stay 0. Filled by bulk_tables_init. */
extern float bulk_decode_table[FMT_COUNT][256];
void bulk_tables_init(void);

/* Element i of an encoded array, which need not be aligned for its type (a
 * caller may pass any byte address; memcpy compiles to one plain move). */
static inline uint32_t bulk_load_elem(const void *in, size_t i, size_t size)
{
	uint8_t b8;
	uint16_t b16;
	uint32_t b32;
	switch (size) {
	case 1: __builtin_memcpy(&b8, (const char *)in + i, 1); return b8;
	case 2: __builtin_memcpy(&b16, (const char *)in + 2 * i, 2); return b16;
	default: __builtin_memcpy(&b32, (const char *)in + 4 * i, 4); return b32;
	}
}

static inline void bulk_store_elem(void *out, size_t i, size_t size, uint32_t v)
{
	uint8_t b8 = (uint8_t)v;
	uint16_t b16 = (uint16_t)v;
	switch (size) {
	case 1: __builtin_memcpy((char *)out + i, &b8, 1); break;
	case 2: __builtin_memcpy((char *)out + 2 * i, &b16, 2); break;
	default: __builtin_memcpy((char *)out + 4 * i, &v, 4); break;
	}
}

#if defined(__CUDA_ARCH__)
static inline MP_HD uint32_t bulk_f2u(float f) { return __float_as_uint(f); }
static inline MP_HD float bulk_u2f(uint32_t u) { return __uint_as_float(u); }
#else
static inline MP_HD uint32_t bulk_f2u(float f) { uint32_t u; __builtin_memcpy(&u, &f, 4); return u; }
static inline MP_HD float bulk_u2f(uint32_t u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
#endif

/* An fp8 pattern back to fp32 by arithmetic (e4m3: frac_bits 3, bias 7, OCP
 * "fn" specials; e5m2: 2, 15, IEEE specials). The CPU paths read
 * bulk_decode_table instead; device code, which cannot, uses this, and
 * test_bulk_quantize checks the two agree on all 256 patterns of both formats. */
static inline MP_HD uint32_t bulk_decode_fp8(uint32_t b, int frac_bits, int bias, int fn)
{
	uint32_t sign = (b & 0x80u) << 24;
	uint32_t e = (b & 0x7fu) >> frac_bits, m = b & ((1u << frac_bits) - 1u);
	uint32_t etop = (0x7fu >> frac_bits);
	if (fn ? (b & 0x7fu) == 0x7fu : e == etop)
		return fn || m ? 0x7fc00000u : sign | 0x7f800000u;
	if (e)
		return sign | ((e + 127u - (uint32_t)bias) << 23) | (m << (23 - frac_bits));
	/* subnormal: m * 2^(1 - bias - frac_bits), exact in fp32 */
	return sign | bulk_f2u((float)m * bulk_u2f((uint32_t)(127 + 1 - bias - frac_bits) << 23));
}

/* One element back to fp32 (exact; NaN -> 0x7fc00000). Device code knows
 * the kernel formats only (fmt_is_kernel). */
static inline MP_HD uint32_t bulk_decode1(fmt_id fmt, uint32_t b)
{
	switch (fmt) {
	case FMT_FP32:
		return (b & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : b;
	case FMT_TF32:
		b <<= 13;
		return (b & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : b;
	case FMT_BF16:
		b <<= 16;
		return (b & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : b;
	case FMT_FP16: {
		uint32_t sign = (b & 0x8000u) << 16, e = (b >> 10) & 0x1f, m = b & 0x3ff;
		if (e == 0x1f)
			return m ? 0x7fc00000u : sign | 0x7f800000u;
		if (e)
			return sign | ((e + 112) << 23) | (m << 13);
		return sign | bulk_f2u((float)m * 0x1p-24f);
	}
#if defined(__CUDA_ARCH__)
	case FMT_E4M3:
		return bulk_decode_fp8(b & 0xffu, 3, 7, 1);
	case FMT_E5M2:
		return bulk_decode_fp8(b & 0xffu, 2, 15, 0);
	default:
		return 0x7fc00000u;
#else
	default:   /* every format of at most 8 bits */
		return bulk_f2u(bulk_decode_table[fmt][b & 0xff]);
#endif
	}
}

/* fp32 "encoding" is a copy with NaNs made canonical and, with saturate,
 * infinities replaced by the largest finite value. */
static inline MP_HD uint32_t bulk_fp32_one(float v, int saturate)
{
	uint32_t b = bulk_decode1(FMT_FP32, bulk_f2u(v));
	if (saturate && (b & 0x7fffffffu) == 0x7f800000u)
		b -= 1;   /* +-inf -> +-max */
	return b;
}

static inline MP_HD float bulk_quantize1(const bulk_params *p, float x, uint32_t r)
{
	return bulk_u2f(bulk_decode1(p->fmt, bulk_encode1(p, bulk_f2u(x), r)));
}

/* Per-path kernels: n elements, SR index of element 0 within the key's block
 * is idx_lo (blocks never cross a multiple of 2^32). The portable and AVX2
 * ones are fmt/bulk_body.h's (fmt/bulk_simd.c). */
void bulk_portable_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n);
void bulk_portable_decode(fmt_id fmt, float *out, const void *in, size_t n);
void bulk_portable_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n);
size_t bulk_portable_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                                const float *u, size_t n);
void bulk_avx2_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n);
void bulk_avx2_decode(fmt_id fmt, float *out, const void *in, size_t n);
void bulk_avx2_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n);
size_t bulk_avx2_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                            const float *u, size_t n);
void bulk_avx512_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n);
void bulk_avx512_decode(fmt_id fmt, float *out, const void *in, size_t n);
void bulk_avx512_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n);
size_t bulk_avx512_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                              const float *u, size_t n);

#endif
