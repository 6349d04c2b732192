/* Internal to quant/: the pieces of the bulk kernels that have SIMD twins. */
#ifndef MIXPREC_QUANT_QUANT_IMPL_H
#define MIXPREC_QUANT_QUANT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "quant/quant.h"

/* (a * 2^ea) / (d * 2^ed) rounded once into f (a, d nonzero; a < 2^32, d < 2^40). */
uint32_t quant_div_round(const fmt_info *f, const fmt_round_ctl *ctl, bool neg, uint64_t a, int ea, uint64_t d,
                         int ed);
/* An MX rule in integers. With amax = (1 + f * 2^-23) * 2^L (f the
 * fraction of amax's exact normalised form, also for an fp32 subnormal), the
 * ocp, ceil, even and torchao-ceil rules are k = L - emax + (f > thr):
 * - ocp: thr = 2^23 - 1 (never up);
 * - ceil: thr = mfrac, max_elem = (1 + mfrac * 2^-23) * 2^emax, as amax >
 *   max_elem * 2^(L - emax) is f > mfrac;
 * - even: thr = 2^23 - 2^(22 - mbits) - 1, as the significand rounded to
 *   the element's mbits fraction bits reaches 2 iff f >= 2^23 - 2^(22 - mbits);
 * - torchao-ceil: thr = 0 (up unless amax is a power of two).
 * rceil divides in fp32 (rceil, maxf) instead. */
typedef struct {
	int emax;          /* emax_elem */
	uint32_t thr;      /* k is one up where f > thr */
	bool rceil;        /* QUANT_RULE_RCEIL: k = ceil(log2(fp32(amax / maxf))) */
	float maxf;        /* max_elem (exact in fp32) */
} quant_mx_rule;

quant_mx_rule quant_mx_rule_of(const quant_info *q, quant_rule rule);

/* ceil(log2 d) for the fp32 pattern d > 0, finite, exactly: the exponent
 * (of a subnormal, its top bit), one up unless d is a power of two. */
static inline int quant_ceil_log2_f32(uint32_t d)
{
	uint32_t ex = d >> 23;
	if (ex)
		return (int)ex - 127 + ((d & 0x7fffffu) != 0);
	return 31 - __builtin_clz(d) - 149 + ((d & (d - 1)) != 0);
}

/* nvfp4 sr's integer decision (quant_nv_sr_tab's ig and nvq): the band
 * of d = (rbits >> 2) - trunc(Q) around 0 that takes the exact test, and
 * the Q of a lane never up (d >= 2^20 >= the band). */
#define QUANT_NV_SR_BAND 1024
#define QUANT_NV_SR_NEVER_Q (-0x1p20f)

/* How far ahead (elements) the block kernels' large loops ask for their
 * input, as fmt/bulk_body.h's loops do: a core whose hardware prefetcher
 * keeps few lines in flight (or whose memory is shared with busy
 * neighbours) waits on every line otherwise. A prefetch past an array's
 * end does not fault. */
#define QUANT_PREFETCH 2048

/* Each 64-byte line of the n elements at in + QUANT_PREFETCH. */
static inline void quant_prefetch_ahead(const float *in, size_t n)
{
	for (size_t l = 0; l < 4 * n; l += 64)
		__builtin_prefetch((const char *)(in + QUANT_PREFETCH) + l);
}

/* The MX scale exponent of a block whose largest |x| has the finite fp32
 * pattern amax (mx_scale_exp in quant.c does the same on rationals).
 * floor(log2 amax) = L is the exponent field, or the top bit of a
 * subnormal. */
static inline int quant_mx_exp(const quant_mx_rule *r, uint32_t amax)
{
	if (amax == 0)
		return -127;
	int k;
	if (r->rceil) {
		float a, d;
		uint32_t db;
		__builtin_memcpy(&a, &amax, 4);
		d = a / r->maxf;
		__builtin_memcpy(&db, &d, 4);
		k = db == 0 ? -127 : quant_ceil_log2_f32(db);
	} else {
		uint32_t ex = amax >> 23, f;
		int L;
		if (ex) {
			L = (int)ex - 127;
			f = amax & 0x7fffffu;
		} else {
			int top = 31 - __builtin_clz(amax);
			L = top - 149;
			f = (amax << (23 - top)) & 0x7fffffu;
		}
		k = L - r->emax + (f > r->thr);
	}
	return k < -127 ? -127 : k > 127 ? 127 : k;
}
/* A decision pattern that no finite magnitude passes: the tables' rows of
 * scale code 0 and their unused eighth lane. Below 2^31, so that signed
 * comparisons (the AVX2 and portable kernels') see it as unsigned ones do. */
#define QUANT_NV_NEVER 0x7fffffffu

/* The 7 e2m1 decision patterns of quotients by D (see quant_bulk.c). */
void quant_nv_thresholds(uint32_t g[7], double D);

/* The largest |x| pattern of in[0..n) (NaN patterns above inf). */
typedef uint32_t (*quant_amax_fn)(const float *in /* (n) */, size_t n);
/* out[i] = in[i] * 2^-k, with a vanished nonzero product kept as the smallest subnormal. */
typedef void (*quant_scale_fn)(float *out /* (n) */, const float *in /* (n) */, size_t n, int k);
/* nvfp4 rne elements from the thresholds g (7 decision patterns; g[7], unused,
 * pads the row to one vector of 8). */
typedef void (*quant_nv_fn)(uint8_t *out /* (n) */, const float *in /* (n) */, size_t n, const uint32_t g[8]);

/* The e8m0 bytes (scales[k]) and the scaled values (out) of the blocks of
 * in[0..n), bs elements each (the last may be shorter). Returns n, or the
 * start of the first block that holds an inf or NaN (written up to there). */
typedef size_t (*quant_mx_blocks_fn)(float *out /* (n) */, uint8_t *scales, const float *in /* (n) */, size_t n,
                                     size_t bs, const quant_mx_rule *r);
size_t quant_mx_blocks_portable(float *out, uint8_t *scales, const float *in, size_t n, size_t bs,
                                const quant_mx_rule *r);
size_t quant_mx_blocks_avx512(float *out, uint8_t *scales, const float *in, size_t n, size_t bs,
                              const quant_mx_rule *r);

/* Rounding a scaled MX value p (finite, |p| < 2^(emax_elem + 1)) to
 * nearest even into the element format, in integers and one fp32 add:
 * at or above the element's min normal, (a + half_m1 + lsb) >> shift -
 * rebias on the pattern a = |p| (a carry bumps the exponent); below it, the
 * add of magic = 2^(emin - frac_bits + 23) rounds |p| once to the
 * subnormal grid and the code is bits(|p| + magic) - bits(magic); then the
 * saturation min(code, max_bits) and the sign. */
typedef struct {
	uint32_t shift;        /* 23 - frac_bits */
	uint32_t half_m1;      /* 2^(shift - 1) - 1 */
	uint32_t rebias;       /* (127 - bias) << frac_bits */
	uint32_t min_normal;   /* fp32 pattern of the element's min normal */
	uint32_t magic;        /* fp32 pattern of 2^(emin - frac_bits + 23) */
	uint32_t max_bits;     /* the element's largest finite magnitude */
	uint32_t sign_shift;   /* 32 - width: bit 31 to the element's sign */
	uint32_t sub_base;     /* emin - frac_bits + 150: the shift of a subnormal result is sub_base - max(e32, 1) */
} quant_elem_enc;

quant_elem_enc quant_elem_enc_of(fmt_id elem);

/* MX rne in one pass over whole blocks of bs elements (bs a multiple of
 * 16): e8m0 bytes into scales, elements into elems. Returns the number of
 * elements done (whole blocks), or fewer: the start of the first block that
 * holds an inf or NaN. */
size_t quant_mx_rne_avx512(uint8_t *elems /* (n) */, uint8_t *scales, const float *in /* (n) */, size_t n, size_t bs,
                           const quant_mx_rule *r, const quant_elem_enc *enc);

/* MX sr in one pass, as quant_mx_rne_avx512: element i draws
 * rng_bits(seed, index0 + i); index0 .. index0 + n - 1 must share their
 * top 32 bits (one key). The rounding is bulk_encode1's (fmt/bulk_impl.h)
 * on the scaled pattern, by the steps of fmt's encode_fast (a carry into
 * the kept bits above the element's min normal, the exact fraction of the
 * subnormal grid below it), for every element format. */
size_t quant_mx_sr_avx512(uint8_t *elems /* (n) */, uint8_t *scales, const float *in /* (n) */, size_t n, size_t bs,
                          const quant_mx_rule *r, const quant_elem_enc *enc, uint64_t seed, uint64_t index0);

/* 2^e as a binary64, for a normal result (-1022 <= e <= 1023). */
static inline double quant_pow2(int e)
{
	uint64_t b = (uint64_t)(e + 1023) << 52;
	double d;
	__builtin_memcpy(&d, &b, 8);
	return d;
}

/* The e4m3 code of a positive binary64 q rounded to nearest even, saturating
 * at 448 (0x7e). Below the min normal 2^-6, adding 2^43 (whose ulp is
 * 2^-9, the subnormal spacing) rounds q once to the subnormal grid; above
 * it, the rounding is done on the pattern (a carry bumps the exponent) and
 * the code is the pattern's top bits rebiased. */
static inline uint32_t quant_e4m3_code(double q)
{
	if (q < 0x1p-6)
		return (uint32_t)(((q + 0x1p43) - 0x1p43) * 0x1p9);
	uint64_t b;
	__builtin_memcpy(&b, &q, 8);
	b += (1ull << 48) - 1 + ((b >> 49) & 1);
	uint64_t c = (b >> 49) - ((uint64_t)(1023 - 7) << 3);
	return c > 0x7e ? 0x7e : (uint32_t)c;
}

/* nvfp4 rne over whole blocks of 16 (n a multiple of 16): the scale
 * byte of each block from its amax and six_st = 6 s_t as nv_block_scale
 * (quant_bulk.c), then the elements against g[scale] as
 * quant_nv_rne_portable. Returns n, or the start of the first block that
 * holds an inf or NaN. */
size_t quant_nv_rne16_avx512(uint8_t *elems /* (n) */, uint8_t *scales, const float *in /* (n) */, size_t n,
                             double six_st, const uint32_t g[127][8]);

/* nvfp4 sr, per block scale code c (D = e4m3(c) s_t = dm 2^ed, dm odd):
 * h: the patterns of the truncation (|V| >= v_j D iff a > h[j-1], v_j the
 * e2m1 magnitudes 0.5 .. 6); vd[k] = v_k D; sc[k] = 2^(32 - p_k - ed) for
 * code k's gap 2^p_k. With kept = the truncated code, R = |V| - vd[kept]
 * is exact (Sterbenz: vd[kept] <= |V| < 2 vd[kept]), the fraction of the
 * gap is f = R / (2^p D), and fmt's sr rule (up iff rbits < floor(f 2^32)
 * + sticky) is up iff rbits < f 2^32 = X / dm with X = R sc[kept], that is
 * iff X > rbits dm: compared as floor(X) > rbits dm, or equal with X not
 * whole (X < 2^60, rbits dm < 2^60: exact in 64-bit integers). */
typedef struct {
	uint32_t h[127][8];
	double vd[127][8];
	double sc[127][8];
	uint64_t dm[127];
	/* The same decision in fp32, without the binary64 steps: up iff
	 * a > T = vd[kept] + rbits g, g = 2^(p - 32) D. tg[c] holds g and
	 * tv[c] vd, both rounded up (g = 0, vd = inf for code 7, never up, and
	 * in row 0, scale code 0). With rbits rounded up too and the fma
	 * rounded up, T_hi >= T: a > T_hi is up. An upward rounding errs by at
	 * most 2^-23 of its result or, in the subnormals, 2^-149: with
	 * rbits < 2^32 multiplying g's error,
	 * T_hi <= T (1 + 2^-23)^3 + 2^-117 (1 + 2^-22) + 2^-147 < T (1 + 2^-21)
	 * + 2^-116. So a (1 + 2^-21) + 2^-116, rounded up, below T_hi means
	 * a < T: not up. Only a lane between the two needs the exact test. */
	float tg[127][8];
	float tv[127][8];
	/* The decision in 32-bit integers (quant/quant_body.h's AVX2 and
	 * portable kernels): up iff rbits < R = (a - vd[kept]) / g, R in
	 * [0, 2^32), through Q = a ig + nvq in fp32, ig = 1 / (4 g) rounded
	 * to nearest and nvq = -vd / (4 g) = -v_k 2^(30 - p_k) exactly;
	 * ig 0 and nvq -2^20 where never up (code 7, row 0). slow[c]: ig
	 * would overflow fp32 (D below about 2^-97): every lane of such a
	 * block is decided exactly (its row holds 0 and -2^20 too). */
	float ig[127][8];
	float nvq[127][8];   /* QUANT_NV_SR_NEVER_Q where never up */
	uint8_t slow[127];
} quant_nv_sr_tab;

/* nvfp4 sr over whole blocks of 16 (n a multiple of 16), scale codes as
 * quant_nv_rne16_avx512; element i draws rng_bits(seed, index0 + i), the
 * indices sharing their top 32 bits. Returns n, or the start of the first
 * block that holds an inf or NaN. */
size_t quant_nv_sr16_avx512(uint8_t *elems /* (n) */, uint8_t *scales, const float *in /* (n) */, size_t n,
                            double six_st, const quant_nv_sr_tab *tab, uint64_t seed, uint64_t index0);

/* The nvfp4 sr code (sign included) of the fp32 pattern v with random bits
 * rbits in a block of scale D = e4m3(c) s_t, exactly (fmt_round_parts on
 * the quotient). */
uint8_t quant_nv_sr_exact(uint32_t v, uint32_t rbits, double D);

/* What the fused nvfp4 cast (quant_nv_rows) takes besides its input: per
 * scale code c, rne's decision patterns g[c] (as quant_nv_rne16_avx512)
 * or sr's tables (sr, NULL for rne), the fp32 values of the 8 element
 * magnitudes mag[c][e] = e2m1(e) e4m3(c) s_t rounded once, and the
 * patterns over[c] that quant_decode_stats counts |x| against; sr's
 * stream (element i draws rng_bits(seed, index0 + i), the indices sharing
 * their top 32 bits). */
typedef struct {
	const uint32_t (*g)[8];
	const quant_nv_sr_tab *sr;
	const float (*mag)[8];
	const uint32_t *over;
	uint64_t seed, index0;
} quant_nv_cast;

/* One SIMD path's kernels: MX blocks must be a multiple of lanes long;
 * the sr kernels take indices that share their top 32 bits. */
typedef struct {
	int lanes;
	uint32_t (*amax)(const float *in, size_t n);
	size_t (*mx_rne)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs, const quant_mx_rule *r,
	                 const quant_elem_enc *enc);
	size_t (*mx_sr)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, size_t bs, const quant_mx_rule *r,
	                const quant_elem_enc *enc, uint64_t seed, uint64_t index0);
	size_t (*nv_rne16)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
	                   const uint32_t g[127][8]);
	size_t (*nv_sr16)(uint8_t *elems, uint8_t *scales, const float *in, size_t n, double six_st,
	                  const quant_nv_sr_tab *tab, uint64_t seed, uint64_t index0);
	size_t (*decode)(float *v, const uint8_t *elems, size_t n, size_t bs, const float *tab, size_t stride,
	                 size_t nvals, const uint8_t *rows, const float *mul, quant_decode_stats *ds);
	/* quant_mx_rne_cols (cols a multiple of 8): false, nothing written,
	 * when a column holds an inf or NaN */
	bool (*mx_rne_cols)(float *out, const float *in, size_t h, size_t cols, size_t ld, const quant_mx_rule *r,
	                    const quant_elem_enc *enc, const quant_mx_tabs *t, quant_fused_stats *cs);
	/* quant_mx_rne_rows (bs a multiple of 8): the elements done */
	size_t (*mx_rne_rows)(float *out, const float *in, size_t n, size_t bs, const quant_mx_rule *r,
	                      const quant_elem_enc *enc, const quant_mx_tabs *t, quant_fused_stats *cs);
	/* nvfp4 rne elements of one block of any length (g: 8 patterns, the
	 * last unused) */
	void (*nv_rne)(uint8_t *out, const float *in, size_t n, const uint32_t g[8]);
	/* quant_nv_rows (n a multiple of 16; six_st = 6 s_t): the elements done */
	size_t (*nv_rows)(float *out, const float *in, size_t n, double six_st, const quant_nv_cast *t,
	                  quant_fused_stats *cs);
} quant_kernels;

/* quant_nv_rows on the given path (one the CPU has: quant_kernels_of). */
mp_status quant_nv_rows_on(fmt_simd path, float *out, const float *in, size_t n, const quant_opts *o, float s_t,
                           uint64_t index0, const uint32_t over[256], quant_fused_stats *cs, size_t *done);

/* The kernels of a path the CPU has (quant/quant_simd.c). */
const quant_kernels *quant_kernels_of(fmt_simd path);

uint32_t quant_amax_portable(const float *in, size_t n);
void quant_mx_scale_portable(float *out, const float *in, size_t n, int k);
void quant_nv_rne_portable(uint8_t *out, const float *in, size_t n, const uint32_t g[8]);
uint32_t quant_amax_avx512(const float *in, size_t n);
void quant_mx_scale_avx512(float *out, const float *in, size_t n, int k);
void quant_nv_rne_avx512(uint8_t *out, const float *in, size_t n, const uint32_t g[8]);

#endif
