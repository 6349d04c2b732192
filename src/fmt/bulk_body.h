/* fmt's bulk loops over fmt/round_body.h's rounding, compiled by
 * fmt/bulk_simd.c for the AVX2 and the portable path. Includers define
 * what fmt/vec_body.h asks for. */

#include "fmt/round_body.h"

/* Large arrays: outputs written with non-temporal stores, a register at a
 * time in one sequential stream (the output does not fit the caches anyway,
 * and streaming saves reading every output line for ownership, as memcpy
 * does). */
#define BB_STREAM_MIN (1u << 20)

/* How far ahead (elements of the input) the large-array loops ask for
 * their input: a core whose hardware prefetcher keeps few lines in flight
 * (an Intel server core in a virtual machine read 9-10 GB/s alone and 13
 * with this, fp32->bf16 rne) waits on every line otherwise. Never read
 * past the array: a prefetch does not fault. */
#define BB_PREFETCH 2048

/* The codes of the VB_LINE / size elements that fill one register at in;
 * t: the SR indices' keyed counters (VB_NAME(ctr_step) done for the
 * line). */
VB_INLINE VB_U VB_NAME(encode_line)(const VB_NAME(par) *v, bb_kind kind, size_t size, const float *in,
                                      const VB_NAME(ctr) *t)
{
	const uint32_t w = VB_W;
	VB_U y0 = VB_NAME(encode)(v, kind, VB_NAME(load)(in), VB_NAME(ctr_h1)(t, 0));
	if (size == 4)
		return y0;
	VB_U y1 = VB_NAME(encode)(v, kind, VB_NAME(load)(in + w), VB_NAME(ctr_h1)(t, 1));
	if (size == 2)
		return (VB_U)VB_NAME(pack16)(y0, y1);
	VB_U y2 = VB_NAME(encode)(v, kind, VB_NAME(load)(in + 2 * w), VB_NAME(ctr_h1)(t, 2));
	VB_U y3 = VB_NAME(encode)(v, kind, VB_NAME(load)(in + 3 * w), VB_NAME(ctr_h1)(t, 3));
	return (VB_U)VB_NAME(pack8)(y0, y1, y2, y3);
}

static inline bool VB_NAME(kind_sr)(bb_kind kind)
{
	return kind == BB_BF16_SR || kind == BB_FAST_SR || kind == BB_SUB_SR || kind == BB_GEN_SRE;
}

/* cf: the format of a loop of its own, or FMT_COUNT (VB_NAME(par_for)). */
VB_INLINE void VB_NAME(encode_all)(const bulk_params *p, bb_kind kind, size_t size, fmt_id cf, rng_key k,
                                     uint32_t idx_lo, void *out, const float *in, size_t n)
{
	const VB_NAME(par) v = VB_NAME(par_for)(p, k, cf);
	const VB_U lanes = VB_NAME(lanes)();
	const bool sr = VB_NAME(kind_sr)(kind);
	VB_NAME(ctr) t = VB_NAME(ctr_of)(v.k1f);
	size_t i = 0;
	if (n >= BB_STREAM_MIN && (uintptr_t)out % size == 0) {
		/* head: single elements until the output is aligned to a register */
		size_t head = ((VB_LINE - ((uintptr_t)out & (VB_LINE - 1))) & (VB_LINE - 1)) / size;
		for (; i < head; i++) {
			uint32_t r = bulk_draws(p) ? rng_bits_keyed(k, idx_lo + (uint32_t)i) : 0;
			bulk_store_elem(out, i, size, bulk_encode1(p, bulk_f2u(in[i]), r));
		}
		size_t per = VB_LINE / size;
		VB_U idx = lanes + (idx_lo + (uint32_t)i);
		for (; i + per <= n; i += per, idx += (uint32_t)per) {
			/* every 64-byte line of the input the step reads (two for
			 * byte codes, which read 4 VB_LINE bytes) */
			for (size_t l = 0; l < 4 * per; l += 64)
				__builtin_prefetch((const char *)(in + i + BB_PREFETCH) + l);
			if (sr)
				VB_NAME(ctr_step)(&t, idx_lo + (uint32_t)i, idx, (int)(4 / size));
			VB_NAME(stream)((char *)out + i * size, VB_NAME(encode_line)(&v, kind, size, in + i, &t));
		}
		VB_NAME(stream_end)();
	}
	VB_U idx = lanes + (idx_lo + (uint32_t)i);
	/* two vectors a step: one counter product for both (VB_NAME(ctr)) */
	for (; i + 2 * VB_W <= n; i += 2 * VB_W, idx += 2 * VB_W) {
		if (sr)
			VB_NAME(ctr_step)(&t, idx_lo + (uint32_t)i, idx, 2);
		VB_U y0 = VB_NAME(encode)(&v, kind, VB_NAME(load)(in + i), VB_NAME(ctr_h1)(&t, 0));
		VB_U y1 = VB_NAME(encode)(&v, kind, VB_NAME(load)(in + i + VB_W), VB_NAME(ctr_h1)(&t, 1));
		VB_NAME(store_elems)((char *)out + i * size, size, y0);
		VB_NAME(store_elems)((char *)out + (i + VB_W) * size, size, y1);
	}
	for (; i + VB_W <= n; i += VB_W, idx += VB_W) {
		if (sr)
			VB_NAME(ctr_step)(&t, idx_lo + (uint32_t)i, idx, 1);
		VB_U y = VB_NAME(encode)(&v, kind, VB_NAME(load)(in + i), VB_NAME(ctr_h1)(&t, 0));
		VB_NAME(store_elems)((char *)out + i * size, size, y);
	}
	if (i < n) {
		uint32_t tl[VB_W] = { 0 };
		memcpy(tl, in + i, (n - i) * 4);
		VB_U y = VB_NAME(encode)(&v, kind, VB_NAME(load)(tl), VB_NAME(keyed1)(idx, v.k1f));
		VB_NAME(store_part)((char *)out + i * size, size, y, n - i);
	}
}

VB_INLINE void VB_NAME(quantize_all)(const bulk_params *p, bb_kind kind, fmt_id cf, rng_key k, uint32_t idx_lo,
                                       float *x, size_t n)
{
	const VB_NAME(par) v = VB_NAME(par_for)(p, k, cf);
	VB_NAME(ctr) t = VB_NAME(ctr_of)(v.k1f);
	VB_U idx = VB_NAME(lanes)() + idx_lo;
	size_t i = 0;
	for (; i + 2 * VB_W <= n; i += 2 * VB_W, idx += 2 * VB_W) {
		if (n >= BB_STREAM_MIN)
			__builtin_prefetch(x + i + BB_PREFETCH);
		if (VB_NAME(kind_sr)(kind))
			VB_NAME(ctr_step)(&t, idx_lo + (uint32_t)i, idx, 2);
		VB_NAME(store)(x + i, VB_NAME(quantize)(&v, kind, VB_NAME(load)(x + i), VB_NAME(ctr_h1)(&t, 0)));
		VB_NAME(store)(x + i + VB_W,
		               VB_NAME(quantize)(&v, kind, VB_NAME(load)(x + i + VB_W), VB_NAME(ctr_h1)(&t, 1)));
	}
	for (; i + VB_W <= n; i += VB_W, idx += VB_W) {
		if (VB_NAME(kind_sr)(kind))
			VB_NAME(ctr_step)(&t, idx_lo + (uint32_t)i, idx, 1);
		VB_NAME(store)(x + i, VB_NAME(quantize)(&v, kind, VB_NAME(load)(x + i), VB_NAME(ctr_h1)(&t, 0)));
	}
	if (i < n) {
		uint32_t tl[VB_W] = { 0 };
		memcpy(tl, x + i, (n - i) * 4);
		VB_NAME(store)(tl, VB_NAME(quantize)(&v, kind, VB_NAME(load)(tl), VB_NAME(keyed1)(idx, v.k1f)));
		memcpy(x + i, tl, (n - i) * 4);
	}
}

/* x = q(x + u), or Kahan's compensated form with comp (fmt_bulk_accumulate);
 * the compensation is always rounded to nearest (kind kr, parameters vr).
 * Returns the number of elements whose x did not change. */
VB_INLINE size_t VB_NAME(accumulate_all)(const bulk_params *p, bb_kind kind, rng_key k, uint32_t idx_lo,
                                           float *x, float *comp, const float *u, size_t n)
{
	const VB_NAME(par) v = VB_NAME(par_of)(p, k);
	bulk_params prne = *p;
	prne.sr = 0;
	prne.mode = FMT_RNE;
	const VB_NAME(par) vr = VB_NAME(par_of)(&prne, k);
	const bb_kind kr = VB_NAME(kind_of)(&prne);
	const VB_U lanes = VB_NAME(lanes)();
	size_t unchanged = 0;
	for (size_t i = 0; i < n; i += VB_W) {
		size_t m = n - i < VB_W ? n - i : VB_W;
		float xo[VB_W] = { 0 }, uu[VB_W] = { 0 }, cc[VB_W] = { 0 };
		memcpy(xo, x + i, m * 4);
		memcpy(uu, u + i, m * 4);
		VB_F vx, vu, vt;
		memcpy(&vx, xo, sizeof vx);
		memcpy(&vu, uu, sizeof vu);
		VB_U h1 = VB_NAME(keyed1)(lanes + (idx_lo + (uint32_t)i), v.k1f);
		if (comp) {
			memcpy(cc, comp + i, m * 4);
			VB_F c;
			memcpy(&c, cc, sizeof c);
			VB_F y = vu - c;
			vt = (VB_F)VB_NAME(quantize)(&v, kind, (VB_U)(vx + y), h1);
			c = (VB_F)VB_NAME(quantize)(&vr, kr, (VB_U)((vt - vx) - y), h1);
			memcpy(comp + i, &c, m * 4);
		} else {
			vt = (VB_F)VB_NAME(quantize)(&v, kind, (VB_U)(vx + vu), h1);
		}
		int32_t eq[VB_W];
		VB_I e = vt == vx;
		memcpy(eq, &e, sizeof eq);
		for (size_t j = 0; j < m; j++)
			unchanged += eq[j] != 0;
		memcpy(x + i, &vt, m * 4);
	}
	return unchanged;
}

VB_INLINE void VB_NAME(decode_all)(fmt_id fmt, float *out, const void *in, size_t n)
{
	size_t size = fmt_bulk_elem_size(fmt), i = 0;
	if (n >= BB_STREAM_MIN && (uintptr_t)out % 4 == 0) {
		/* as encode_all: single elements up to a register's alignment,
		 * then streamed (no read for ownership of the wider output) */
		for (; ((uintptr_t)(out + i) & (VB_LINE - 1)) != 0; i++)
			out[i] = bulk_u2f(bulk_decode1(fmt, bulk_load_elem(in, i, size)));
		for (; i + VB_W <= n; i += VB_W) {
			__builtin_prefetch((const char *)in + (i + BB_PREFETCH) * size);
			VB_NAME(stream)(out + i, VB_NAME(code_decode)(fmt, VB_NAME(load_elems)((const char *)in + i * size,
			                                                                        size)));
		}
		VB_NAME(stream_end)();
	}
	for (; i + VB_W <= n; i += VB_W)
		VB_NAME(store)(out + i, VB_NAME(code_decode)(fmt, VB_NAME(load_elems)((const char *)in + i * size, size)));
	for (; i < n; i++)
		out[i] = bulk_u2f(bulk_decode1(fmt, bulk_load_elem(in, i, size)));
}

/* The entry points: one loop per kind and element size, so that the kind is
 * a constant inside each, and for fp16 and the fp8 formats loops of their
 * own (VB_NAME(par_for)). */
#define BB_ENCODE_F(KIND, SIZE, CF, NAME)                                                               \
	static VB_TARGET void VB_NAME(NAME)(const bulk_params *p, rng_key k, uint32_t lo, void *out, const float *in, \
	                                     size_t n)                                                    \
	{                                                                                              \
		VB_NAME(encode_all)(p, KIND, SIZE, CF, k, lo, out, in, n);                              \
	}
#define BB_ENCODE(KIND, SIZE) BB_ENCODE_F(KIND, SIZE, FMT_COUNT, enc_##KIND##_##SIZE)
BB_ENCODE(BB_BF16_RNE, 2)
BB_ENCODE(BB_BF16_SR, 2)
BB_ENCODE(BB_FAST_RNE, 1)
BB_ENCODE(BB_FAST_RNE, 2)
BB_ENCODE(BB_FAST_RNE, 4)
BB_ENCODE(BB_FAST_SR, 1)
BB_ENCODE(BB_FAST_SR, 2)
BB_ENCODE(BB_FAST_SR, 4)
BB_ENCODE(BB_SUB_RNE, 1)
BB_ENCODE(BB_SUB_RNE, 2)
BB_ENCODE(BB_SUB_RNE, 4)
BB_ENCODE(BB_SUB_SR, 1)
BB_ENCODE(BB_SUB_SR, 2)
BB_ENCODE(BB_SUB_SR, 4)
BB_ENCODE_F(BB_SUB_RNE, 2, FMT_FP16, enc_sub_rne_fp16)
BB_ENCODE_F(BB_SUB_SR, 2, FMT_FP16, enc_sub_sr_fp16)
BB_ENCODE_F(BB_SUB_RNE, 1, FMT_E4M3, enc_sub_rne_e4m3)
BB_ENCODE_F(BB_SUB_SR, 1, FMT_E4M3, enc_sub_sr_e4m3)
BB_ENCODE_F(BB_SUB_RNE, 1, FMT_E5M2, enc_sub_rne_e5m2)
BB_ENCODE_F(BB_SUB_SR, 1, FMT_E5M2, enc_sub_sr_e5m2)
BB_ENCODE(BB_FP32, 4)
BB_ENCODE(BB_GEN_RTO, 1)
BB_ENCODE(BB_GEN_RTO, 2)
BB_ENCODE(BB_GEN_RTO, 4)
BB_ENCODE(BB_GEN_RNZ, 1)
BB_ENCODE(BB_GEN_RNZ, 2)
BB_ENCODE(BB_GEN_RNZ, 4)
BB_ENCODE(BB_GEN_SRE, 1)
BB_ENCODE(BB_GEN_SRE, 2)
BB_ENCODE(BB_GEN_SRE, 4)
#if VB_AVX2
BB_ENCODE(BB_FP16_F16C, 2)
#endif
#undef BB_ENCODE
#undef BB_ENCODE_F

typedef void (*VB_NAME(enc_fn))(const bulk_params *p, rng_key k, uint32_t lo, void *out, const float *in, size_t n);

/* The loop of a kind BB_SUB_* for p's format: its own, or the one of its
 * element size. */
static VB_NAME(enc_fn) VB_NAME(enc_sub)(const bulk_params *p, bool sr, size_t size)
{
	switch (p->fmt) {
	case FMT_FP16: return sr ? VB_NAME(enc_sub_sr_fp16) : VB_NAME(enc_sub_rne_fp16);
	case FMT_E4M3: return sr ? VB_NAME(enc_sub_sr_e4m3) : VB_NAME(enc_sub_rne_e4m3);
	case FMT_E5M2: return sr ? VB_NAME(enc_sub_sr_e5m2) : VB_NAME(enc_sub_rne_e5m2);
	default: break;
	}
	if (sr)
		return size == 1 ? VB_NAME(enc_BB_SUB_SR_1) : size == 2 ? VB_NAME(enc_BB_SUB_SR_2) : VB_NAME(enc_BB_SUB_SR_4);
	return size == 1 ? VB_NAME(enc_BB_SUB_RNE_1) : size == 2 ? VB_NAME(enc_BB_SUB_RNE_2) : VB_NAME(enc_BB_SUB_RNE_4);
}

static void VB_NAME(bulk_encode)(const bulk_params *p, rng_key k, uint32_t lo, void *out, const float *in, size_t n)
{
	size_t size = fmt_bulk_elem_size(p->fmt);
	bb_kind kind = VB_NAME(kind_of)(p);
	switch (kind) {
	case BB_BF16_RNE: VB_NAME(enc_BB_BF16_RNE_2)(p, k, lo, out, in, n); break;
	case BB_BF16_SR:  VB_NAME(enc_BB_BF16_SR_2)(p, k, lo, out, in, n); break;
#if VB_AVX2
	case BB_FP16_F16C: VB_NAME(enc_BB_FP16_F16C_2)(p, k, lo, out, in, n); break;
#endif
	case BB_FP32:     VB_NAME(enc_BB_FP32_4)(p, k, lo, out, in, n); break;
	case BB_FAST_SR:
		(size == 1 ? VB_NAME(enc_BB_FAST_SR_1) : size == 2 ? VB_NAME(enc_BB_FAST_SR_2)
		                                                   : VB_NAME(enc_BB_FAST_SR_4))(p, k, lo, out, in, n);
		break;
	case BB_SUB_RNE:
	case BB_SUB_SR:
		VB_NAME(enc_sub)(p, kind == BB_SUB_SR, size)(p, k, lo, out, in, n);
		break;
	case BB_GEN_RTO:
		(size == 1 ? VB_NAME(enc_BB_GEN_RTO_1) : size == 2 ? VB_NAME(enc_BB_GEN_RTO_2)
		                                                   : VB_NAME(enc_BB_GEN_RTO_4))(p, k, lo, out, in, n);
		break;
	case BB_GEN_RNZ:
		(size == 1 ? VB_NAME(enc_BB_GEN_RNZ_1) : size == 2 ? VB_NAME(enc_BB_GEN_RNZ_2)
		                                                   : VB_NAME(enc_BB_GEN_RNZ_4))(p, k, lo, out, in, n);
		break;
	case BB_GEN_SRE:
		(size == 1 ? VB_NAME(enc_BB_GEN_SRE_1) : size == 2 ? VB_NAME(enc_BB_GEN_SRE_2)
		                                                   : VB_NAME(enc_BB_GEN_SRE_4))(p, k, lo, out, in, n);
		break;
	default:
		(size == 1 ? VB_NAME(enc_BB_FAST_RNE_1) : size == 2 ? VB_NAME(enc_BB_FAST_RNE_2)
		                                                    : VB_NAME(enc_BB_FAST_RNE_4))(p, k, lo, out, in, n);
		break;
	}
}

#define BB_QUANTIZE_F(KIND, CF, NAME)                                                                   \
	static VB_TARGET void VB_NAME(NAME)(const bulk_params *p, rng_key k, uint32_t lo, float *x, size_t n) \
	{                                                                                              \
		VB_NAME(quantize_all)(p, KIND, CF, k, lo, x, n);                                        \
	}
#define BB_QUANTIZE(KIND)                                                                               \
	BB_QUANTIZE_F(KIND, FMT_COUNT, q_##KIND)                                                       \
	static VB_TARGET size_t VB_NAME(a_##KIND)(const bulk_params *p, rng_key k, uint32_t lo, float *x, float *comp, \
	                                          const float *u, size_t n)                              \
	{                                                                                              \
		return VB_NAME(accumulate_all)(p, KIND, k, lo, x, comp, u, n);                          \
	}
BB_QUANTIZE(BB_BF16_RNE)
BB_QUANTIZE(BB_BF16_SR)
BB_QUANTIZE(BB_FAST_RNE)
BB_QUANTIZE(BB_FAST_SR)
BB_QUANTIZE(BB_SUB_RNE)
BB_QUANTIZE(BB_SUB_SR)
BB_QUANTIZE(BB_FP32)
BB_QUANTIZE(BB_GEN_RTO)
BB_QUANTIZE(BB_GEN_RNZ)
BB_QUANTIZE(BB_GEN_SRE)
#if VB_AVX2
BB_QUANTIZE(BB_FP16_F16C)
#endif
BB_QUANTIZE_F(BB_SUB_RNE, FMT_FP16, q_sub_rne_fp16)
BB_QUANTIZE_F(BB_SUB_SR, FMT_FP16, q_sub_sr_fp16)
BB_QUANTIZE_F(BB_SUB_RNE, FMT_E4M3, q_sub_rne_e4m3)
BB_QUANTIZE_F(BB_SUB_SR, FMT_E4M3, q_sub_sr_e4m3)
BB_QUANTIZE_F(BB_SUB_RNE, FMT_E5M2, q_sub_rne_e5m2)
BB_QUANTIZE_F(BB_SUB_SR, FMT_E5M2, q_sub_sr_e5m2)
#undef BB_QUANTIZE
#undef BB_QUANTIZE_F

/* The quantize loop of a kind BB_SUB_* for p's format (as VB_NAME(enc_sub)). */
static void VB_NAME(q_sub)(const bulk_params *p, bool sr, rng_key k, uint32_t lo, float *x, size_t n)
{
	switch (p->fmt) {
	case FMT_FP16: (sr ? VB_NAME(q_sub_sr_fp16) : VB_NAME(q_sub_rne_fp16))(p, k, lo, x, n); return;
	case FMT_E4M3: (sr ? VB_NAME(q_sub_sr_e4m3) : VB_NAME(q_sub_rne_e4m3))(p, k, lo, x, n); return;
	case FMT_E5M2: (sr ? VB_NAME(q_sub_sr_e5m2) : VB_NAME(q_sub_rne_e5m2))(p, k, lo, x, n); return;
	default: (sr ? VB_NAME(q_BB_SUB_SR) : VB_NAME(q_BB_SUB_RNE))(p, k, lo, x, n); return;
	}
}

static void VB_NAME(bulk_quantize)(const bulk_params *p, rng_key k, uint32_t lo, float *x, size_t n)
{
	switch (VB_NAME(kind_of)(p)) {
	case BB_BF16_RNE: VB_NAME(q_BB_BF16_RNE)(p, k, lo, x, n); break;
	case BB_BF16_SR:  VB_NAME(q_BB_BF16_SR)(p, k, lo, x, n); break;
#if VB_AVX2
	case BB_FP16_F16C: VB_NAME(q_BB_FP16_F16C)(p, k, lo, x, n); break;
#endif
	case BB_FAST_SR:  VB_NAME(q_BB_FAST_SR)(p, k, lo, x, n); break;
	case BB_SUB_RNE:  VB_NAME(q_sub)(p, false, k, lo, x, n); break;
	case BB_SUB_SR:   VB_NAME(q_sub)(p, true, k, lo, x, n); break;
	case BB_FP32:     VB_NAME(q_BB_FP32)(p, k, lo, x, n); break;
	case BB_GEN_RTO:  VB_NAME(q_BB_GEN_RTO)(p, k, lo, x, n); break;
	case BB_GEN_RNZ:  VB_NAME(q_BB_GEN_RNZ)(p, k, lo, x, n); break;
	case BB_GEN_SRE:  VB_NAME(q_BB_GEN_SRE)(p, k, lo, x, n); break;
	default:          VB_NAME(q_BB_FAST_RNE)(p, k, lo, x, n); break;
	}
}

static size_t VB_NAME(bulk_accumulate)(const bulk_params *p, rng_key k, uint32_t lo, float *x, float *comp,
                                       const float *u, size_t n)
{
	switch (VB_NAME(kind_of)(p)) {
	case BB_BF16_RNE: return VB_NAME(a_BB_BF16_RNE)(p, k, lo, x, comp, u, n);
	case BB_BF16_SR:  return VB_NAME(a_BB_BF16_SR)(p, k, lo, x, comp, u, n);
#if VB_AVX2
	case BB_FP16_F16C: return VB_NAME(a_BB_FP16_F16C)(p, k, lo, x, comp, u, n);
#endif
	case BB_FAST_SR:  return VB_NAME(a_BB_FAST_SR)(p, k, lo, x, comp, u, n);
	case BB_SUB_RNE:  return VB_NAME(a_BB_SUB_RNE)(p, k, lo, x, comp, u, n);
	case BB_SUB_SR:   return VB_NAME(a_BB_SUB_SR)(p, k, lo, x, comp, u, n);
	case BB_FP32:     return VB_NAME(a_BB_FP32)(p, k, lo, x, comp, u, n);
	case BB_GEN_RTO:  return VB_NAME(a_BB_GEN_RTO)(p, k, lo, x, comp, u, n);
	case BB_GEN_RNZ:  return VB_NAME(a_BB_GEN_RNZ)(p, k, lo, x, comp, u, n);
	case BB_GEN_SRE:  return VB_NAME(a_BB_GEN_SRE)(p, k, lo, x, comp, u, n);
	default:          return VB_NAME(a_BB_FAST_RNE)(p, k, lo, x, comp, u, n);
	}
}

static VB_TARGET void VB_NAME(bulk_decode)(fmt_id fmt, float *out, const void *in, size_t n)
{
	VB_NAME(decode_all)(fmt, out, in, n);
}
