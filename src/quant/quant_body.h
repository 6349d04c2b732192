/* The block-quantization kernels of quant_impl.h, written once over
 * fmt/vec_body.h's vectors and compiled by quant/quant_simd.c for the AVX2
 * and the portable path. Each gives the bits of quant_bulk.c's portable
 * code (itself checked against quant_run's exact rationals), lane by lane:
 *
 * - MX rne: the scaled value p = x 2^-e is exact unless it falls below
 *   2^-126, where it rounds to 0 all the same (quant_mx_scale_portable);
 *   its code as quant_elem_enc says (a carry above the element's min
 *   normal, one add of a magic constant below it), saturated, signed;
 * - MX sr: a vanished nonzero product kept as the smallest subnormal, then
 *   fmt/round_body.h's stochastic rounding of the element format;
 * - nvfp4 rne: the count of the block's decision patterns below |x|;
 * - nvfp4 sr: the kept code k as the count of quant_nv_sr_tab's h below
 *   |x| = a, up iff rbits < R = (a - vd[k]) / g (quant_impl.h), where
 *   a < vd[k + 1] puts R in [0, 2^32) and R / 4 below 2^30. Its fp32
 *   form Q = a ig + nvq is within E = 577 of R / 4: ig errs by 2^-24
 *   (1 + 2^-29) of itself, times a / (4 g) < 2^32 at most 257; the
 *   product rounded (portable) at most 256 more, as it stays below
 *   2^33; the sum, below 2^30 + 2^10, 64. Truncated to the integer Qi,
 *   it is within E + 1 of R / 4, so with r4 = rbits >> 2 (rbits <= 4 r4
 *   + 3) and d = r4 - Qi: d < -B is up (4 r4 + 3 < R) and d >= B is
 *   not (4 r4 > R) for B = QUANT_NV_SR_BAND = 1024 >= E + 2, and a lane
 *   in between (about one in 10^6) is decided exactly by
 *   quant_nv_sr_exact, as is every lane of a block whose ig would
 *   overflow (slow). Never up: Q = QUANT_NV_SR_NEVER_Q = -2^20, so d >=
 *   2^20 (and no difference leaves 32 bits).
 *
 * Includers define what fmt/vec_body.h asks for. */

#include <math.h>

#include "fmt/round_body.h"
#include "quant/quant_impl.h"

/* The largest |x| pattern of in[0..n) (NaN patterns above inf). */
VB_INLINE uint32_t VB_NAME(amax_n)(const float *in, size_t n)
{
	VB_U m = { 0 };
	size_t i = 0;
	for (; i + VB_W <= n; i += VB_W)
		m = VB_NAME(maxu)(m, VB_NAME(load)(in + i) & 0x7fffffffu);
	uint32_t r = VB_NAME(hmax)(m);
	for (; i < n; i++) {
		uint32_t a;
		memcpy(&a, in + i, 4);
		a &= 0x7fffffffu;
		r = a > r ? a : r;
	}
	return r;
}

/* VB_W codes below 256 as bytes. */
VB_INLINE void VB_NAME(store_bytes)(uint8_t *out, VB_U c)
{
	VB_NAME(store_elems)(out, 1, c);
}

/* 16 codes below 256 (16 / VB_W vectors) as 16 bytes, in one store. */
VB_INLINE void VB_NAME(store16_bytes)(uint8_t *out, const VB_U *y)
{
#if VB_W == 8
	VB_B b = VB_NAME(pack8)(y[0], y[1], y[0], y[1]);
#else
	VB_B b = VB_NAME(pack8)(y[0], y[1], y[2], y[3]);
#endif
	memcpy(out, &b, 16);
}

/* Lane j of the result: the largest lane of m[j] (unsigned), by a tree
 * over the VB_W vectors that interleaves lanes within each 128-bit half
 * (unpack patterns, no lane crossing) until the last step: after the
 * first, lane k of pair (a, b) holds a's lanes (k even) or b's, after the
 * second each half holds the maxima of four vectors over that half, and
 * the halves of the two groups of four meet last (AVX2). m is
 * overwritten. */
VB_INLINE VB_U VB_NAME(hmax_each)(VB_U *m)
{
#if VB_W == 8
#define VB_P1(a, b, lo) (lo ? __builtin_shufflevector(a, b, 0, 8, 1, 9, 4, 12, 5, 13) \
                            : __builtin_shufflevector(a, b, 2, 10, 3, 11, 6, 14, 7, 15))
#define VB_P2(a, b, lo) (lo ? __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13) \
                            : __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15))
	#pragma GCC unroll 4
	for (int i = 0; i < 4; i++)
		m[i] = VB_NAME(maxu)(VB_P1(m[2 * i], m[2 * i + 1], 1), VB_P1(m[2 * i], m[2 * i + 1], 0));
	#pragma GCC unroll 2
	for (int i = 0; i < 2; i++)
		m[i] = VB_NAME(maxu)(VB_P2(m[2 * i], m[2 * i + 1], 1), VB_P2(m[2 * i], m[2 * i + 1], 0));
	return VB_NAME(maxu)(__builtin_shufflevector(m[0], m[1], 0, 1, 2, 3, 8, 9, 10, 11),
	                     __builtin_shufflevector(m[0], m[1], 4, 5, 6, 7, 12, 13, 14, 15));
#undef VB_P1
#undef VB_P2
#else
	#pragma GCC unroll 2
	for (int i = 0; i < 2; i++)
		m[i] = VB_NAME(maxu)(__builtin_shufflevector(m[2 * i], m[2 * i + 1], 0, 4, 1, 5),
		                     __builtin_shufflevector(m[2 * i], m[2 * i + 1], 2, 6, 3, 7));
	return VB_NAME(maxu)(__builtin_shufflevector(m[0], m[1], 0, 1, 4, 5),
	                     __builtin_shufflevector(m[0], m[1], 2, 3, 6, 7));
#endif
}

/* quant_mx_exp in every lane of the finite amax patterns m: the exponent
 * field, or a subnormal's top bit from its exact conversion to fp32. */
VB_INLINE VB_U VB_NAME(mx_exp_v)(VB_U m, const quant_mx_rule *r)
{
	if (r->rceil) {   /* a division per block: lane by lane, as quant_mx_exp */
		VB_U k;
		for (int i = 0; i < VB_W; i++)
			k[i] = (uint32_t)quant_mx_exp(r, m[i]);
		return k;
	}
	VB_U ex = m >> 23, sub = (VB_U)(ex == 0u);
	VB_U top = ((VB_U)VB_NAME(u2f)(m & 0x7fffffu) >> 23) - 127u;
	VB_U L = VB_NAME(sel)(sub, top - 149u, ex - 127u);
	VB_U f = VB_NAME(sel)(sub, VB_NAME(sllv)(m, 23u - top), m) & 0x7fffffu;
	VB_I k = (VB_I)L - r->emax;
	k -= (VB_I)f > (int32_t)r->thr;
	k = (VB_I)VB_NAME(sel)((VB_U)(k < -127), VB_NAME(splat)((uint32_t)-127), (VB_U)k);
	k = (VB_I)VB_NAME(sel)((VB_U)(k > 127), VB_NAME(splat)(127), (VB_U)k);
	return VB_NAME(sel)((VB_U)(m == 0u), VB_NAME(splat)((uint32_t)-127), (VB_U)k);
}

/* The scales of VB_W whole MX blocks of bs at in (bs a multiple of VB_W):
 * e8m0 bytes into scales, the fp32 patterns of the inverses 2^-k into mul,
 * and (amax not NULL) the patterns of the blocks' largest |x| into amax.
 * False (nothing written) when a block holds an inf or NaN. */
VB_INLINE bool VB_NAME(mx_scales)(uint8_t *scales, uint32_t *mul, float *amax, const float *in, size_t bs,
                                   const quant_mx_rule *r)
{
	VB_U m[VB_W];
	#pragma GCC unroll 16
	for (int b = 0; b < VB_W; b++) {
		const float *x = in + (size_t)b * bs;
		m[b] = VB_NAME(load)(x) & 0x7fffffffu;
		for (size_t i = VB_W; i < bs; i += VB_W)
			m[b] = VB_NAME(maxu)(m[b], VB_NAME(load)(x + i) & 0x7fffffffu);
	}
	VB_U a = VB_NAME(hmax_each)(m);
	if (VB_NAME(any)((VB_U)((VB_I)a >= 0x7f800000)))
		return false;
	VB_U k = VB_NAME(mx_exp_v)(a, r);
	VB_NAME(store_elems)(scales, 1, k + 127u);
	VB_NAME(store)(mul, (127u - k) << 23);
	if (amax)
		VB_NAME(store)(amax, a);
	return true;
}

/* quant_elem_enc in registers (held in locals: the byte stores of the
 * codes could alias the struct, and the compiler would read it again
 * after each). */
typedef struct {
	VB_U half_rb;          /* half_m1 - (rebias << shift): the rebias folded into the carry */
	VB_U magic, min_normal, max_bits, sign_bit;
	VB_U half_m1, kept, max_val;   /* mx_rne_q: the carry, the kept bits' mask, the largest value's pattern */
	uint32_t shift, sign_shift;
} VB_NAME(menc);

VB_INLINE VB_NAME(menc) VB_NAME(menc_of)(const quant_elem_enc *e)
{
	VB_NAME(menc) m = {
		.half_rb = VB_NAME(splat)(e->half_m1 - (e->rebias << e->shift)),
		.magic = VB_NAME(splat)(e->magic),
		.min_normal = VB_NAME(splat)(e->min_normal),
		.max_bits = VB_NAME(splat)(e->max_bits),
		.sign_bit = VB_NAME(splat)(0x80000000u >> e->sign_shift),
		.half_m1 = VB_NAME(splat)(e->half_m1),
		.kept = VB_NAME(splat)(~0u << e->shift),
		.max_val = VB_NAME(splat)((e->max_bits + e->rebias) << e->shift),
		.shift = e->shift,
		.sign_shift = e->sign_shift,
	};
	return m;
}

/* MX rne of VB_W lanes x with the scale's inverse mul. A lane at or above
 * the min normal has a >= rebias << shift (a multiple of 2^shift), so
 * subtracting that before the shift takes the rebias off the code. */
VB_INLINE VB_U VB_NAME(mx_rne_v)(VB_U x, VB_F mul, const VB_NAME(menc) *e)
{
	VB_U p = (VB_U)((VB_F)x * mul), a = p & 0x7fffffffu;
	VB_U nrm = (a + e->half_rb + ((a >> e->shift) & 1u)) >> e->shift;
	VB_U sub = (VB_U)((VB_F)a + (VB_F)e->magic) - e->magic;
	VB_U c = VB_NAME(sel)((VB_U)((VB_I)a < (VB_I)e->min_normal), sub, nrm);
	c = VB_NAME(minu)(c, e->max_bits);
	return c | ((p >> e->sign_shift) & e->sign_bit);
}

/* The scale of one MX block of bs elements (a multiple of VB_W): false
 * when it holds an inf or NaN, else its e8m0 byte, the inverse 2^-e and
 * (amax not NULL) the pattern of its largest |x|. */
VB_INLINE bool VB_NAME(mx_scale)(uint8_t *scale, VB_F *mul, float *amax, const float *in, size_t bs,
                                  const quant_mx_rule *r)
{
	VB_U m = { 0 };
	for (size_t i = 0; i < bs; i += VB_W)
		m = VB_NAME(maxu)(m, VB_NAME(load)(in + i) & 0x7fffffffu);
	uint32_t amax_b = VB_NAME(hmax)(m);
	if (amax_b >= 0x7f800000u)
		return false;
	int e = quant_mx_exp(r, amax_b);
	*scale = (uint8_t)(e + 127);
	*mul = (VB_F)VB_NAME(splat)((uint32_t)(127 - e) << 23);
	if (amax)
		memcpy(amax, &amax_b, 4);
	return true;
}

/* The rne codes of one MX block of bs at in, inverse scale mul. */
VB_INLINE void VB_NAME(mx_rne_block)(uint8_t *elems, const float *in, size_t bs, VB_F mul, const VB_NAME(menc) *e)
{
	size_t i = 0;
	for (; i + 4 * VB_W <= bs; i += 4 * VB_W) {   /* a register of bytes at a time */
		VB_B y = VB_NAME(pack8)(VB_NAME(mx_rne_v)(VB_NAME(load)(in + i), mul, e),
		                        VB_NAME(mx_rne_v)(VB_NAME(load)(in + i + VB_W), mul, e),
		                        VB_NAME(mx_rne_v)(VB_NAME(load)(in + i + 2 * VB_W), mul, e),
		                        VB_NAME(mx_rne_v)(VB_NAME(load)(in + i + 3 * VB_W), mul, e));
		memcpy(elems + i, &y, sizeof y);
	}
	for (; i < bs; i += VB_W)
		VB_NAME(store_bytes)(elems + i, VB_NAME(mx_rne_v)(VB_NAME(load)(in + i), mul, e));
}

VB_INLINE size_t VB_NAME(mx_rne_n)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                    const quant_mx_rule *rule, const quant_elem_enc *enc)
{
	const VB_NAME(menc) em = VB_NAME(menc_of)(enc), *e = &em;
	const quant_mx_rule rl = *rule, *r = &rl;
	size_t full = n / bs * bs, k = 0, b = 0;
	uint32_t mul[VB_W];
	/* VB_W blocks' scales at once, then their elements */
	for (; b + VB_W * bs <= full && VB_NAME(mx_scales)(scales + k, mul, NULL, in + b, bs, r); b += VB_W * bs, k += VB_W) {
		quant_prefetch_ahead(in + b, VB_W * bs);
		for (int j = 0; j < VB_W; j++)
			VB_NAME(mx_rne_block)(elems + b + j * bs, in + b + j * bs, bs, (VB_F)VB_NAME(splat)(mul[j]), e);
	}
	for (; b < full; b += bs, k++) {
		VB_F m;
		if (!VB_NAME(mx_scale)(scales + k, &m, NULL, in + b, bs, r))
			return b;
		VB_NAME(mx_rne_block)(elems + b, in + b, bs, m, e);
	}
	return full;
}

/* fmt/round_body.h's parameters for an MX element format (saturating;
 * scaled values are finite and below 2^(emax_elem + 1)). */
VB_INLINE VB_NAME(par) VB_NAME(mx_par)(const quant_elem_enc *e, rng_key key)
{
	VB_NAME(par) v = {
		.shift = e->shift,
		.keep = 32 - e->shift,
		.sign_shift = e->sign_shift,
		.has_sub = true,
		.shift_v = VB_NAME(splat)(e->shift),
		.rebias = VB_NAME(splat)(e->rebias),
		.max_bits = VB_NAME(splat)(e->max_bits),
		.min_normal = VB_NAME(splat)(e->min_normal),
		.sub_base = VB_NAME(splat)(e->sub_base),
		.sb1 = VB_NAME(splat)(e->sub_base - 1),
		.rb_sh = VB_NAME(splat)(e->rebias << e->shift),
		.exp_mask = VB_NAME(splat)(0x7f800000u),
		.minus_e1 = VB_NAME(splat)(0xff800000u),
		.nr_far = VB_NAME(splat)(0xfeffffffu),
		.far_normal = VB_NAME(splat)((e->sub_base - 31) << 23),
		.k1f = VB_NAME(splat)(key.k1 ^ (key.k1 >> 16)),
		.nk2 = VB_NAME(splat)(~key.k2),
	};
	return v;
}

VB_INLINE VB_U VB_NAME(mx_sr_v)(const VB_NAME(par) *v, VB_U x, VB_F mul, VB_U h1)
{
	VB_U av = x & 0x7fffffffu;
	VB_U a = (VB_U)((VB_F)av * mul);   /* vanished: the smallest subnormal (VB_NAME(fast_sr_of)) */
	VB_U c = VB_NAME(fast_sr_of)(v, a, VB_NAME(rbits_not)(h1, v->nk2), &av);
	c = VB_NAME(minu)(c, v->max_bits);
	return c | ((x >> v->sign_shift) & (0x80000000u >> v->sign_shift));
}

/* The sr codes of one MX block of bs at in, inverse scale mul; b and idx:
 * the index of in[0] and those of in[0..VB_W), t the keyed counters'
 * state (fmt/vec_body.h). */
VB_INLINE void VB_NAME(mx_sr_block)(uint8_t *elems, const float *in, size_t bs, VB_F mul, uint32_t b, VB_U idx,
                                     VB_NAME(ctr) *t, const VB_NAME(par) *v)
{
	size_t i = 0;
	for (; i + 4 * VB_W <= bs; i += 4 * VB_W, idx += 4 * VB_W) {
		VB_NAME(ctr_step)(t, b + (uint32_t)i, idx, 4);
		VB_B y = VB_NAME(pack8)(VB_NAME(mx_sr_v)(v, VB_NAME(load)(in + i), mul, VB_NAME(ctr_h1)(t, 0)),
		                        VB_NAME(mx_sr_v)(v, VB_NAME(load)(in + i + VB_W), mul, VB_NAME(ctr_h1)(t, 1)),
		                        VB_NAME(mx_sr_v)(v, VB_NAME(load)(in + i + 2 * VB_W), mul, VB_NAME(ctr_h1)(t, 2)),
		                        VB_NAME(mx_sr_v)(v, VB_NAME(load)(in + i + 3 * VB_W), mul, VB_NAME(ctr_h1)(t, 3)));
		memcpy(elems + i, &y, sizeof y);
	}
	for (; i < bs; i += VB_W, idx += VB_W) {
		VB_NAME(ctr_step)(t, b + (uint32_t)i, idx, 1);
		VB_NAME(store_bytes)(elems + i, VB_NAME(mx_sr_v)(v, VB_NAME(load)(in + i), mul, VB_NAME(ctr_h1)(t, 0)));
	}
}

VB_INLINE size_t VB_NAME(mx_sr_n)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                   const quant_mx_rule *rule, const quant_elem_enc *e, uint64_t seed, uint64_t index0)
{
	const VB_NAME(par) v = VB_NAME(mx_par)(e, rng_key_for(seed, index0));
	const quant_mx_rule rl = *rule, *r = &rl;
	const VB_U lanes = VB_NAME(lanes)();
	VB_NAME(ctr) t = VB_NAME(ctr_of)(v.k1f);
	size_t full = n / bs * bs, k = 0, b = 0;
	uint32_t mul[VB_W];
	for (; b + VB_W * bs <= full && VB_NAME(mx_scales)(scales + k, mul, NULL, in + b, bs, r); b += VB_W * bs, k += VB_W) {
		quant_prefetch_ahead(in + b, VB_W * bs);
		#pragma GCC unroll 1
		for (int j = 0; j < VB_W; j++) {
			size_t o = b + j * bs;
			uint32_t io = (uint32_t)(index0 + o);
			VB_NAME(mx_sr_block)(elems + o, in + o, bs, (VB_F)VB_NAME(splat)(mul[j]), io, lanes + io, &t, &v);
		}
	}
	for (; b < full; b += bs, k++) {
		VB_F m;
		if (!VB_NAME(mx_scale)(scales + k, &m, NULL, in + b, bs, r))
			return b;
		uint32_t io = (uint32_t)(index0 + b);
		VB_NAME(mx_sr_block)(elems + b, in + b, bs, m, io, lanes + io, &t, &v);
	}
	return full;
}

/* The count of t[0..6] (non-decreasing patterns below 2^31, QUANT_NV_NEVER
 * above every finite magnitude) below each lane of the magnitudes a. */
VB_INLINE VB_U VB_NAME(count7)(VB_U a, const uint32_t *t)
{
	VB_U k = { 0 };
	for (int j = 0; j < 7; j++)
		k -= (VB_U)((VB_I)a > (int32_t)t[j]);
	return k;
}

/* One nvfp4 block of 16 at in: its amax (false for an inf or NaN; its
 * pattern into *am where am is not NULL) and scale code, as quant_bulk.c's
 * nv_block_scale. */
VB_INLINE bool VB_NAME(nv_scale)(uint32_t *code, uint32_t *am, const float *in, double six_st)
{
	VB_U m = { 0 };
	#pragma GCC unroll 16
	for (int i = 0; i < 16; i += VB_W)
		m = VB_NAME(maxu)(m, VB_NAME(load)(in + i) & 0x7fffffffu);
	uint32_t amax = VB_NAME(hmax)(m);
	if (amax >= 0x7f800000u)
		return false;
	if (am)
		*am = amax;
	float fa;
	memcpy(&fa, &amax, 4);
	*code = quant_e4m3_code((double)fa / six_st);
	return true;
}

typedef double VB_NAME(vd) __attribute__((vector_size(32)));
typedef int64_t VB_NAME(vl) __attribute__((vector_size(32)));
typedef float VB_NAME(vf4) __attribute__((vector_size(16)));
typedef int32_t VB_NAME(vi4) __attribute__((vector_size(16)));

/* quant_e4m3_code on 4 binary64 lanes (q >= 0, finite): below 2^-6 the
 * add of 2^43 rounds q once to the subnormal grid (the code, at most 8,
 * read back through 2^52); above it the rounding on the pattern. */
VB_INLINE VB_NAME(vi4) VB_NAME(e4m3_code4)(VB_NAME(vd) q)
{
	typedef VB_NAME(vd) vd;
	typedef VB_NAME(vl) vl;
	vd t = ((q + 0x1p43) - 0x1p43) * 0x1p9 + 0x1p52;
	vl sub = (vl)t - (vl)((vd){ 0 } + 0x1p52);
	vl b = (vl)q;
	b += ((int64_t)1 << 48) - 1 + ((b >> 49) & 1);
	vl c = (b >> 49) - ((1023 - 7) << 3);
	vl big = c > 0x7e;
	c = (c & ~big) | (0x7e & big);
	vl small = (vl)(q < 0x1p-6);
	c = (sub & small) | (c & ~small);
	return __builtin_convertvector(c, VB_NAME(vi4));
}

/* The scale codes of VB_W nvfp4 blocks of 16 at in: their amaxes by a
 * tree (lane j of the result: block j; their patterns into am where am
 * is not NULL), the quotients in binary64, four at a time. False (nothing
 * written) when a block holds an inf or NaN. */
VB_INLINE bool VB_NAME(nv_codes)(uint32_t code[VB_W], uint32_t *am, const float *in, double six_st)
{
	VB_U m[VB_W];
	#pragma GCC unroll 16
	for (int b = 0; b < VB_W; b++) {
		m[b] = VB_NAME(load)(in + 16 * b) & 0x7fffffffu;
		#pragma GCC unroll 16
		for (int i = VB_W; i < 16; i += VB_W)
			m[b] = VB_NAME(maxu)(m[b], VB_NAME(load)(in + 16 * b + i) & 0x7fffffffu);
	}
	VB_U a = VB_NAME(hmax_each)(m);
	if (VB_NAME(any)((VB_U)((VB_I)a >= 0x7f800000)))
		return false;
	if (am)
		VB_NAME(store)(am, a);
	VB_F f = (VB_F)a;
	#pragma GCC unroll 16
	for (int h = 0; h < VB_W; h += 4) {
		VB_NAME(vf4) f4;
		memcpy(&f4, (const float *)&f + h, sizeof f4);
		VB_NAME(vd) q = __builtin_convertvector(f4, VB_NAME(vd)) / six_st;
		VB_NAME(vi4) c = VB_NAME(e4m3_code4)(q);
		memcpy(code + h, &c, sizeof c);
	}
	return true;
}

/* The count of a row's first 7 patterns t (as count7; t[7] is
 * QUANT_NV_NEVER) below each lane of a: on AVX2 a binary search of three
 * comparisons against the row in one register (t3, broadcast from memory,
 * then t1 or t5, then t0, t2, t4 or t6; the second from the row moved
 * down a lane, row1[k] = row[k + 1], made once per row where the row
 * serves several vectors, and the last adds its mask's -1 as 1). */
VB_INLINE VB_U VB_NAME(count_row)(VB_U a, const uint32_t *t)
{
#if VB_AVX2
	__m256i row = _mm256_loadu_si256((const __m256i *)t);
	__m256i row1 = _mm256_permutevar8x32_epi32(row, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7));
	VB_I ai = (VB_I)a;
	VB_U k = (VB_U)(ai > (VB_I)_mm256_set1_epi32((int)t[3])) & 4u;
	k += (VB_U)(ai > (VB_I)_mm256_permutevar8x32_epi32(row1, (__m256i)k)) & 2u;
	return k - (VB_U)(ai > (VB_I)_mm256_permutevar8x32_epi32(row, (__m256i)k));
#else
	return VB_NAME(count7)(a, t);
#endif
}

/* The rne codes of one nvfp4 block of 16 at in against its decision patterns g. */
VB_INLINE void VB_NAME(nv_rne_block)(uint8_t *elems, const float *in, const uint32_t *g)
{
	VB_U y[16 / VB_W];
	#pragma GCC unroll 16
	for (int i = 0; i < 16 / VB_W; i++) {
		VB_U x = VB_NAME(load)(in + VB_W * i);
		y[i] = VB_NAME(count_row)(x & 0x7fffffffu, g) | ((x >> 28) & 8u);
	}
	VB_NAME(store16_bytes)(elems, y);
}

VB_INLINE size_t VB_NAME(nv_rne_n)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                                    const uint32_t g[127][8])
{
	uint32_t code[2][VB_W];
	size_t b = 0;
	const size_t grp = 16 * VB_W;
	/* a group's scale codes are worked out while the group before is
	 * quantized: their chain (amax, division, rounding, the row's load) is
	 * long, and the element work of one group fills the reorder window */
	bool ok = grp <= n && VB_NAME(nv_codes)(code[0], NULL, in, six_st);
	for (int cur = 0; ok; b += grp, cur ^= 1) {
		ok = b + 2 * grp <= n && VB_NAME(nv_codes)(code[cur ^ 1], NULL, in + b + grp, six_st);
		quant_prefetch_ahead(in + b, grp);
		#pragma GCC unroll 16
		for (int j = 0; j < VB_W; j++) {
			size_t o = b + 16 * (size_t)j;
			scales[o / 16] = (uint8_t)code[cur][j];
			VB_NAME(nv_rne_block)(elems + o, in + o, g[code[cur][j]]);
		}
	}
	for (; b < n; b += 16) {
		uint32_t c;
		if (!VB_NAME(nv_scale)(&c, NULL, in + b, six_st))
			return b;
		scales[b / 16] = (uint8_t)c;
		VB_NAME(nv_rne_block)(elems + b, in + b, g[c]);
	}
	return n;
}

/* tab[c] in every lane (c < 256). */
VB_INLINE VB_F VB_NAME(gather)(const float *tab, VB_U c)
{
#if VB_AVX2
	return _mm256_i32gather_ps(tab, (__m256i)c, 4);
#else
	uint32_t t[VB_W];
	float o[VB_W];
	memcpy(t, &c, sizeof t);
	for (int j = 0; j < VB_W; j++)
		o[j] = tab[t[j]];
	VB_F f;
	memcpy(&f, o, sizeof f);
	return f;
#endif
}

/* t[k] in every lane (k < 8). */
VB_INLINE VB_F VB_NAME(lookup8)(const float *t, VB_U k)
{
#if VB_AVX2
	return (VB_F)_mm256_permutevar8x32_ps(_mm256_loadu_ps(t), (__m256i)k);
#else
	return VB_NAME(gather)(t, k);
#endif
}

/* code with its lanes open decided exactly (out of line and cold: rare). */
static __attribute__((noinline, cold)) VB_TARGET VB_U VB_NAME(nv_sr_fix)(VB_U code, VB_U open, VB_U x, VB_U r,
                                                                        double D)
{
	uint32_t o[VB_W], cd[VB_W], xs[VB_W], rs[VB_W];
	memcpy(o, &open, sizeof o);
	memcpy(cd, &code, sizeof cd);
	memcpy(xs, &x, sizeof xs);
	memcpy(rs, &r, sizeof rs);
	for (int j = 0; j < VB_W; j++)
		if (o[j])
			cd[j] = quant_nv_sr_exact(xs[j], rs[j], D);
	return VB_NAME(load)(cd);
}

/* VB_W nvfp4 sr codes of one block's lanes x under scale code c (the
 * decision in integers at the top of this file). The product and the sum
 * may be fused (VB_NAME(madd)): E allows for two roundings. */
VB_INLINE VB_U VB_NAME(nv_sr_v)(VB_U x, VB_U h1, uint32_t c, const quant_nv_sr_tab *tab, VB_U k2)
{
	VB_U a = x & 0x7fffffffu, k = VB_NAME(count_row)(a, tab->h[c]);
	VB_U r = VB_NAME(rbits)(h1, k2);
	VB_F q = VB_NAME(madd)((VB_F)a, VB_NAME(lookup8)(tab->ig[c], k), VB_NAME(lookup8)(tab->nvq[c], k));
	VB_I d = (VB_I)(r >> 2) - (VB_I)VB_NAME(f2u_trunc)(q);
	VB_U up = (VB_U)(d < -QUANT_NV_SR_BAND), near = (VB_U)(d < QUANT_NV_SR_BAND);
	VB_U code = (k - up) | ((x >> 28) & 8u);
	bool slow = tab->slow[c];
	if (__builtin_expect_with_probability(slow || VB_NAME(any_andnot)(near, up), 0, 0.001))
		code = VB_NAME(nv_sr_fix)(code, slow ? VB_NAME(splat)(~0u) : near & ~up, x, r, 2 * tab->vd[c][1]);
	return code;
}

/* The sr codes of one nvfp4 block of 16 at in, scale code c; b and idx:
 * the index of in[0] and those of in[0..VB_W), t the keyed counters'
 * state (fmt/vec_body.h). */
VB_INLINE void VB_NAME(nv_sr_block)(uint8_t *elems, const float *in, uint32_t c, uint32_t b, VB_U idx,
                                     VB_NAME(ctr) *t, const quant_nv_sr_tab *tab, VB_U k2)
{
	VB_U y[16 / VB_W];
	VB_NAME(ctr_step)(t, b, idx, 16 / VB_W);
	#pragma GCC unroll 16
	for (int i = 0; i < 16 / VB_W; i++)
		y[i] = VB_NAME(nv_sr_v)(VB_NAME(load)(in + VB_W * i), VB_NAME(ctr_h1)(t, i), c, tab, k2);
	VB_NAME(store16_bytes)(elems, y);
}

VB_INLINE size_t VB_NAME(nv_sr_n)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                                   const quant_nv_sr_tab *tab, uint64_t seed, uint64_t index0)
{
	rng_key key = rng_key_for(seed, index0);
	const VB_U k1f = VB_NAME(splat)(key.k1 ^ (key.k1 >> 16)), k2 = VB_NAME(splat)(key.k2);
	const VB_U lanes = VB_NAME(lanes)();
	VB_NAME(ctr) t = VB_NAME(ctr_of)(k1f);
	uint32_t code[2][VB_W];
	size_t b = 0;
	const size_t grp = 16 * VB_W;
	/* the next group's scale codes while this one is quantized (nv_rne_n) */
	bool ok = grp <= n && VB_NAME(nv_codes)(code[0], NULL, in, six_st);
	for (int cur = 0; ok; b += grp, cur ^= 1) {
		ok = b + 2 * grp <= n && VB_NAME(nv_codes)(code[cur ^ 1], NULL, in + b + grp, six_st);
		quant_prefetch_ahead(in + b, grp);
		#pragma GCC unroll 16
		for (int j = 0; j < VB_W; j++) {
			size_t o = b + 16 * (size_t)j;
			scales[o / 16] = (uint8_t)code[cur][j];
			uint32_t io = (uint32_t)(index0 + o);
			VB_NAME(nv_sr_block)(elems + o, in + o, code[cur][j], io, lanes + io, &t, tab, k2);
		}
	}
	for (; b < n; b += 16) {
		uint32_t c;
		if (!VB_NAME(nv_scale)(&c, NULL, in + b, six_st))
			return b;
		scales[b / 16] = (uint8_t)c;
		uint32_t io = (uint32_t)(index0 + b);
		VB_NAME(nv_sr_block)(elems + b, in + b, c, io, lanes + io, &t, tab, k2);
	}
	return n;
}

/* nvfp4 rne of n elements (any n) against one block's decision patterns g
 * (quant_nv_rne_portable's bits). */
VB_INLINE void VB_NAME(nv_rne_elems_n)(uint8_t *out, const float *in, size_t n, const uint32_t *g)
{
	size_t i = 0;
	for (; i + VB_W <= n; i += VB_W) {
		VB_U x = VB_NAME(load)(in + i);
		VB_NAME(store_bytes)(out + i, VB_NAME(count_row)(x & 0x7fffffffu, g) | ((x >> 28) & 8u));
	}
	if (i < n)
		quant_nv_rne_portable(out + i, in + i, n - i, g);
}

/* STMT with ec a copy of the element encoding *e whose shift counts are
 * constants where they are those of OCP's MX elements (e4m3, e5m2, e2m1):
 * the kernels' shifts then take immediates (a count held in a register
 * is a second micro-op per shift on Intel's cores). */
#define VB_ELEM_CONST(e, ec, STMT)                                                        \
	do {                                                                              \
		quant_elem_enc ec = *(e);                                                 \
		if (ec.shift == 20 && ec.sign_shift == 24) {                              \
			ec.shift = 20;                                                    \
			ec.sign_shift = 24;                                               \
			STMT;                                                             \
		} else if (ec.shift == 21 && ec.sign_shift == 24) {                       \
			ec.shift = 21;                                                    \
			ec.sign_shift = 24;                                               \
			STMT;                                                             \
		} else if (ec.shift == 22 && ec.sign_shift == 28) {                       \
			ec.shift = 22;                                                    \
			ec.sign_shift = 28;                                               \
			STMT;                                                             \
		} else {                                                                  \
			STMT;                                                             \
		}                                                                         \
	} while (0)

/* The entry points (quant_impl.h's signatures). */
static VB_TARGET uint32_t VB_NAME(amax)(const float *in, size_t n)
{
	return VB_NAME(amax_n)(in, n);
}

static VB_TARGET size_t VB_NAME(mx_rne)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                        const quant_mx_rule *r, const quant_elem_enc *e)
{
	/* OCP's block of 32 as a constant: the scale pass's loops unrolled */
	if (bs == 32)
		VB_ELEM_CONST(e, ec, return VB_NAME(mx_rne_n)(elems, scales, in, n, 32, r, &ec));
	return VB_NAME(mx_rne_n)(elems, scales, in, n, bs, r, e);
}

static VB_TARGET size_t VB_NAME(mx_sr)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                       const quant_mx_rule *r, const quant_elem_enc *e, uint64_t seed,
                                       uint64_t index0)
{
	if (bs == 32)   /* as mx_rne */
		VB_ELEM_CONST(e, ec, return VB_NAME(mx_sr_n)(elems, scales, in, n, 32, r, &ec, seed, index0));
	return VB_NAME(mx_sr_n)(elems, scales, in, n, bs, r, e, seed, index0);
}

static VB_TARGET size_t VB_NAME(nv_rne16)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                                          const uint32_t g[127][8])
{
	return VB_NAME(nv_rne_n)(elems, scales, in, n, six_st, g);
}

static VB_TARGET size_t VB_NAME(nv_sr16)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                                         const quant_nv_sr_tab *tab, uint64_t seed, uint64_t index0)
{
	return VB_NAME(nv_sr_n)(elems, scales, in, n, six_st, tab, seed, index0);
}

static VB_TARGET void VB_NAME(nv_rne_elems)(uint8_t *out, const float *in, size_t n, const uint32_t g[8])
{
	VB_NAME(nv_rne_elems_n)(out, in, n, g);
}

#include "quant/quant_decode_body.h"
#include "quant/quant_nvcast_body.h"
