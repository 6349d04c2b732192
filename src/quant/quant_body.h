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
 * - nvfp4 sr: the kept code as the count of quant_nv_sr_tab's h below |x|,
 *   up iff |x| > T = vd + rbits g (quant_impl.h). T is computed in fp32 to
 *   nearest: tv and tg are within an ulp of vd and g, rbits within half
 *   an ulp, the product and the sum each within half an ulp, so the
 *   computed T_c is within 5 2^-24 of T relatively and 2^-116 absolutely
 *   (g may be subnormal: its error 2^-149 times rbits < 2^32). Then
 *   U = T_c (1 + 2^-20) + 2^-115 and L = T_c (1 - 2^-20) - 2^-115, each
 *   rounded to nearest, still lie above and below T: |x| > U is up, |x| <= L
 *   is not, and a lane between them (about one in 10^5) is decided exactly
 *   by quant_nv_sr_exact. T_c is inf only for code 7 (never up) or where
 *   vd exceeds every fp32 (so does T: not up either).
 *
 * Includers define what fmt/vec_body.h asks for. */

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

/* MX rne of VB_W lanes x with the scale's inverse mul. */
VB_INLINE VB_U VB_NAME(mx_rne_v)(VB_U x, VB_F mul, const quant_elem_enc *e)
{
	VB_U p = (VB_U)((VB_F)x * mul), a = p & 0x7fffffffu;
	VB_U nrm = ((a + e->half_m1 + ((a >> e->shift) & 1u)) >> e->shift) - e->rebias;
	VB_U sub = (VB_U)((VB_F)a + (VB_F)VB_NAME(splat)(e->magic)) - e->magic;
	VB_U c = VB_NAME(sel)((VB_U)((VB_I)a < (int32_t)e->min_normal), sub, nrm);
	c = VB_NAME(minu)(c, VB_NAME(splat)(e->max_bits));
	return c | ((p >> e->sign_shift) & (0x80000000u >> e->sign_shift));
}

/* The scale of one MX block of bs elements (a multiple of VB_W): false
 * when it holds an inf or NaN, else its e8m0 byte and the inverse 2^-e. */
VB_INLINE bool VB_NAME(mx_scale)(uint8_t *scale, VB_F *mul, const float *in, size_t bs, const quant_mx_rule *r)
{
	VB_U m = { 0 };
	for (size_t i = 0; i < bs; i += VB_W)
		m = VB_NAME(maxu)(m, VB_NAME(load)(in + i) & 0x7fffffffu);
	uint32_t amax = VB_NAME(hmax)(m);
	if (amax >= 0x7f800000u)
		return false;
	int e = quant_mx_exp(r, amax);
	*scale = (uint8_t)(e + 127);
	*mul = (VB_F)VB_NAME(splat)((uint32_t)(127 - e) << 23);
	return true;
}

VB_INLINE size_t VB_NAME(mx_rne_n)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                    const quant_mx_rule *r, const quant_elem_enc *e)
{
	size_t full = n / bs * bs, k = 0;
	for (size_t b = 0; b < full; b += bs, k++) {
		VB_F mul;
		if (!VB_NAME(mx_scale)(scales + k, &mul, in + b, bs, r))
			return b;
		size_t i = b;
		for (; i + 4 * VB_W <= b + bs; i += 4 * VB_W) {   /* a register of bytes at a time */
			VB_B y = VB_NAME(pack8)(VB_NAME(mx_rne_v)(VB_NAME(load)(in + i), mul, e),
			                        VB_NAME(mx_rne_v)(VB_NAME(load)(in + i + VB_W), mul, e),
			                        VB_NAME(mx_rne_v)(VB_NAME(load)(in + i + 2 * VB_W), mul, e),
			                        VB_NAME(mx_rne_v)(VB_NAME(load)(in + i + 3 * VB_W), mul, e));
			memcpy(elems + i, &y, sizeof y);
		}
		for (; i < b + bs; i += VB_W)
			VB_NAME(store_bytes)(elems + i, VB_NAME(mx_rne_v)(VB_NAME(load)(in + i), mul, e));
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
		.far_common = true,
		.shift_v = VB_NAME(splat)(e->shift),
		.rebias = VB_NAME(splat)(e->rebias),
		.max_bits = VB_NAME(splat)(e->max_bits),
		.min_normal = VB_NAME(splat)(e->min_normal),
		.sub_base = VB_NAME(splat)(e->sub_base),
		.far_normal = VB_NAME(splat)((e->sub_base - 31) << 23),
		.k1f = VB_NAME(splat)(key.k1 ^ (key.k1 >> 16)),
		.nk2 = VB_NAME(splat)(~key.k2),
	};
	return v;
}

VB_INLINE VB_U VB_NAME(mx_sr_v)(const VB_NAME(par) *v, VB_U x, VB_F mul, VB_U idx)
{
	VB_U av = x & 0x7fffffffu;
	VB_U a = (VB_U)((VB_F)av * mul);
	a = VB_NAME(maxu)(a, VB_NAME(minu)(av, VB_NAME(splat)(1)));   /* vanished: the smallest subnormal */
	VB_U c = VB_NAME(fast_sr)(v, a, VB_NAME(rbits_not)(idx, v->k1f, v->nk2));
	c = VB_NAME(minu)(c, v->max_bits);
	return c | ((x >> v->sign_shift) & (0x80000000u >> v->sign_shift));
}

VB_INLINE size_t VB_NAME(mx_sr_n)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                   const quant_mx_rule *r, const quant_elem_enc *e, uint64_t seed, uint64_t index0)
{
	const VB_NAME(par) v = VB_NAME(mx_par)(e, rng_key_for(seed, index0));
	const VB_U lanes = VB_NAME(lanes)();
	size_t full = n / bs * bs, k = 0;
	for (size_t b = 0; b < full; b += bs, k++) {
		VB_F mul;
		if (!VB_NAME(mx_scale)(scales + k, &mul, in + b, bs, r))
			return b;
		size_t i = b;
		for (; i + 4 * VB_W <= b + bs; i += 4 * VB_W) {
			VB_U idx = lanes + (uint32_t)(index0 + i);
			VB_B y = VB_NAME(pack8)(VB_NAME(mx_sr_v)(&v, VB_NAME(load)(in + i), mul, idx),
			                        VB_NAME(mx_sr_v)(&v, VB_NAME(load)(in + i + VB_W), mul, idx + VB_W),
			                        VB_NAME(mx_sr_v)(&v, VB_NAME(load)(in + i + 2 * VB_W), mul, idx + 2 * VB_W),
			                        VB_NAME(mx_sr_v)(&v, VB_NAME(load)(in + i + 3 * VB_W), mul, idx + 3 * VB_W));
			memcpy(elems + i, &y, sizeof y);
		}
		for (; i < b + bs; i += VB_W) {
			VB_U idx = lanes + (uint32_t)(index0 + i);
			VB_NAME(store_bytes)(elems + i, VB_NAME(mx_sr_v)(&v, VB_NAME(load)(in + i), mul, idx));
		}
	}
	return full;
}

/* The count of t[0..6] (non-decreasing patterns) below each lane of the
 * magnitudes a; t at or above 2^31 is above every finite magnitude. */
VB_INLINE VB_U VB_NAME(count7)(VB_U a, const uint32_t *t)
{
	VB_U k = { 0 };
	for (int j = 0; j < 7; j++) {
		int32_t tj = t[j] > 0x7fffffffu ? 0x7fffffff : (int32_t)t[j];
		k -= (VB_U)((VB_I)a > tj);
	}
	return k;
}

/* One nvfp4 block of 16 at in: its amax (false for an inf or NaN) and
 * scale code, as quant_bulk.c's nv_block_scale. */
VB_INLINE bool VB_NAME(nv_scale)(uint32_t *code, const float *in, double six_st)
{
	VB_U m = { 0 };
	for (int i = 0; i < 16; i += VB_W)
		m = VB_NAME(maxu)(m, VB_NAME(load)(in + i) & 0x7fffffffu);
	uint32_t amax = VB_NAME(hmax)(m);
	if (amax >= 0x7f800000u)
		return false;
	float fa;
	memcpy(&fa, &amax, 4);
	*code = quant_e4m3_code((double)fa / six_st);
	return true;
}

VB_INLINE size_t VB_NAME(nv_rne_n)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                                    const uint32_t g[127][8])
{
	for (size_t b = 0; b < n; b += 16) {
		uint32_t c;
		if (!VB_NAME(nv_scale)(&c, in + b, six_st))
			return b;
		scales[b / 16] = (uint8_t)c;
		for (int i = 0; i < 16; i += VB_W) {
			VB_U x = VB_NAME(load)(in + b + i);
			VB_U k = VB_NAME(count7)(x & 0x7fffffffu, g[c]);
			VB_NAME(store_bytes)(elems + b + i, k | ((x >> 28) & 8u));
		}
	}
	return n;
}

/* t[k] in every lane (k < 8). */
VB_INLINE VB_F VB_NAME(lookup8)(const float *t, VB_U k)
{
#if VB_AVX2
	return (VB_F)_mm256_permutevar8x32_ps(_mm256_loadu_ps(t), (__m256i)k);
#else
	VB_F lo, hi;
	memcpy(&lo, t, sizeof lo);
	memcpy(&hi, t + 4, sizeof hi);
	return __builtin_shuffle(lo, hi, (VB_I)k);
#endif
}

/* VB_W nvfp4 sr codes of one block's lanes x under scale code c. */
VB_INLINE VB_U VB_NAME(nv_sr_v)(VB_U x, VB_U idx, uint32_t c, const quant_nv_sr_tab *tab, VB_U k1f, VB_U nk2)
{
	VB_U a = x & 0x7fffffffu, k = VB_NAME(count7)(a, tab->h[c]);
	VB_U r = ~VB_NAME(rbits_not)(idx, k1f, nk2);
	VB_F rf = VB_NAME(u2f)(r >> 8) * 256.0f + VB_NAME(u2f)(r & 255u);   /* one rounding */
	VB_F t = VB_NAME(lookup8)(tab->tv[c], k) + rf * VB_NAME(lookup8)(tab->tg[c], k);
	VB_F hi = t * (1 + 0x1p-20f) + 0x1p-115f, lo = t * (1 - 0x1p-20f) - 0x1p-115f;
	VB_F af = (VB_F)a;
	VB_U up = (VB_U)(af > hi), open = ~(up | (VB_U)(af <= lo)) & (VB_U)((VB_I)k < 7);
	VB_U code = (k - up) | ((x >> 28) & 8u);
	if (VB_NAME(any)(open)) {
		uint32_t o[VB_W], cd[VB_W], xs[VB_W], rs[VB_W];
		memcpy(o, &open, sizeof o);
		memcpy(cd, &code, sizeof cd);
		memcpy(xs, &x, sizeof xs);
		memcpy(rs, &r, sizeof rs);
		for (int j = 0; j < VB_W; j++)
			if (o[j])
				cd[j] = quant_nv_sr_exact(xs[j], rs[j], 2 * tab->vd[c][1]);
		memcpy(&code, cd, sizeof code);
	}
	return code;
}

VB_INLINE size_t VB_NAME(nv_sr_n)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
                                   const quant_nv_sr_tab *tab, uint64_t seed, uint64_t index0)
{
	rng_key key = rng_key_for(seed, index0);
	const VB_U k1f = VB_NAME(splat)(key.k1 ^ (key.k1 >> 16)), nk2 = VB_NAME(splat)(~key.k2);
	const VB_U lanes = VB_NAME(lanes)();
	for (size_t b = 0; b < n; b += 16) {
		uint32_t c;
		if (!VB_NAME(nv_scale)(&c, in + b, six_st))
			return b;
		scales[b / 16] = (uint8_t)c;
		for (int i = 0; i < 16; i += VB_W) {
			VB_U idx = lanes + (uint32_t)(index0 + b + (size_t)i);
			VB_NAME(store_bytes)(elems + b + i, VB_NAME(nv_sr_v)(VB_NAME(load)(in + b + i), idx, c, tab, k1f, nk2));
		}
	}
	return n;
}

/* The entry points (quant_impl.h's signatures). */
static VB_TARGET uint32_t VB_NAME(amax)(const float *in, size_t n)
{
	return VB_NAME(amax_n)(in, n);
}

static VB_TARGET size_t VB_NAME(mx_rne)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                        const quant_mx_rule *r, const quant_elem_enc *e)
{
	return VB_NAME(mx_rne_n)(elems, scales, in, n, bs, r, e);
}

static VB_TARGET size_t VB_NAME(mx_sr)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs,
                                       const quant_mx_rule *r, const quant_elem_enc *e, uint64_t seed,
                                       uint64_t index0)
{
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
