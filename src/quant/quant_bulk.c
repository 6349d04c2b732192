/* Block-scaled quantization of fp32 arrays: the same bits as quant_run
 * (quant.c, exact rationals), by integer and fp32 arithmetic whose
 * exactness is argued at each step. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/round.h"
#include "quant/quant.h"
#include "quant/quant_impl.h"
#include "util/rng.h"

/* --- exact quotients --- */

/* Rounds (a * 2^ea) / (d * 2^ed) into f, once: a and d nonzero, a < 2^32,
 * d < 2^40. The quotient's first 64 bits and the remainder come from one
 * 128-bit integer division, so fmt_round_parts sees the exact value (its
 * significand and a sticky bit), as fmt_round_num does for a rational. */
uint32_t quant_div_round(const fmt_info *f, const fmt_round_ctl *ctl, bool neg, uint64_t a, int ea, uint64_t d,
                         int ed)
{
	int la = 64 - __builtin_clzll(a), ld = 64 - __builtin_clzll(d);
	/* a << s is in [2^(63+ld), 2^(64+ld)) and d in [2^(ld-1), 2^ld): the
	 * quotient is in (2^63, 2^65); s <= 103, so a << s < 2^104 fits */
	int s = 64 - la + ld;
	unsigned __int128 num = (unsigned __int128)a << s;
	unsigned __int128 q = num / d;
	bool sticky = num % d != 0;
	long exp2 = (long)ea - ed - s + 63;
	if (q >> 64) {
		sticky |= (q & 1) != 0;
		q >>= 1;
		exp2++;
	}
	return fmt_round_parts(f, ctl, neg, exp2, (uint64_t)q, sticky, NULL);
}

/* |x| of an fp32 pattern as sig * 2^e (sig < 2^24; 0 for zero). */
static void f32_split(uint32_t bits, uint64_t *sig, int *e)
{
	uint32_t ex = (bits >> 23) & 0xffu, fr = bits & 0x7fffffu;
	*sig = ex ? fr | 0x800000u : fr;
	*e = ex ? (int)ex - 150 : -149;
}

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

uint32_t quant_amax_portable(const float *in, size_t n)
{
	uint32_t m = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t a = f2u(in[i]) & 0x7fffffffu;
		m = a > m ? a : m;
	}
	return m;
}

/* The AVX-512 twins of the pieces that have no width-generic body. */
static bool use_avx512(fmt_simd path)
{
#if defined(__x86_64__)
	return path == FMT_SIMD_AVX512;
#else
	(void)path;
	return false;
#endif
}

/* The largest |x| pattern of in[0..n) (NaN patterns are the largest);
 * *bad gets the index of the first inf or NaN when the result is one. */
static uint32_t amax_bits(const float *in, size_t n, size_t *bad)
{
	uint32_t m = quant_kernels_of(fmt_simd_best())->amax(in, n);
	if (m >= 0x7f800000u && bad) {
		for (size_t i = 0; i < n; i++) {
			if ((f2u(in[i]) & 0x7fffffffu) >= 0x7f800000u) {
				*bad = i;
				break;
			}
		}
	}
	return m;
}

mp_status quant_bulk_tensor_scale(float *s_t, const float *in, size_t n, size_t *bad)
{
	uint32_t m = amax_bits(in, n, bad);
	if (m >= 0x7f800000u)
		return MP_EINVAL;
	*s_t = 0;
	if (m == 0)
		return MP_OK;
	uint64_t sig;
	int e;
	f32_split(m, &sig, &e);
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	/* 448 * 6 = 21 * 2^7 */
	*s_t = u2f(quant_div_round(fmt_get(FMT_FP32), &ctl, false, sig, e, 21, 7));
	return MP_OK;
}

/* --- MX --- */

quant_elem_enc quant_elem_enc_of(fmt_id elem)
{
	const fmt_info *f = fmt_get(elem);
	int emin = fmt_emin(f);
	quant_elem_enc e = {
		.shift = (uint32_t)(23 - f->frac_bits),
		.half_m1 = (1u << (22 - f->frac_bits)) - 1u,
		.rebias = (uint32_t)(127 - f->bias) << f->frac_bits,
		.min_normal = (uint32_t)(127 + emin) << 23,
		.magic = (uint32_t)(127 + emin - f->frac_bits + 23) << 23,
		.max_bits = fmt_max_bits(f),
		.sign_shift = (uint32_t)(32 - f->width),
		.sub_base = (uint32_t)(emin - f->frac_bits + 150),
	};
	return e;
}

quant_mx_rule quant_mx_rule_of(const quant_info *q, quant_rule rule)
{
	float m = (float)quant_elem_max(q);
	quant_mx_rule r = { .emax = q->emax_elem, .thr = 0x7fffffu, .rceil = rule == QUANT_RULE_RCEIL, .maxf = m };
	if (rule == QUANT_RULE_CEIL)
		r.thr = f2u(m) & 0x7fffffu;
	else if (rule == QUANT_RULE_EVEN)
		r.thr = (1u << 23) - (1u << (22 - q->mbits)) - 1u;
	else if (rule == QUANT_RULE_TCEIL)
		r.thr = 0;
	return r;
}

/* tmp[i] = in[i] * 2^-k. For fp32 input k is in [-127, 126] (k <= 127 -
 * emax_elem + 1), so 2^-k is a normal fp32 and the product is exact unless
 * it falls below 2^-126. Such a product is below a hundredth of half the
 * smallest subnormal of every element format: rne gives +-0 from the exact
 * value and from the rounded product alike, and sr rounds up iff rbits == 0
 * (the first 32 bits of the fraction are 0, the rest is not) for any nonzero
 * value that small. Only a product that vanished entirely would differ: it
 * is replaced by the smallest subnormal of its sign. */
void quant_mx_scale_portable(float *tmp, const float *in, size_t n, int k)
{
	float m = u2f((uint32_t)(127 - k) << 23);
	for (size_t i = 0; i < n; i++) {
		uint32_t v = f2u(in[i]), p = f2u(in[i] * m);
		if ((p << 1) == 0 && (v << 1) != 0)
			p |= 1;
		tmp[i] = u2f(p);
	}
}

/* Elements of one run of scaled values, through the bulk encoder (saturating). */
static mp_status mx_flush(fmt_simd path, const quant_opts *o, fmt_id elem, uint64_t index, uint8_t *out,
                          const float *tmp, size_t n)
{
	fmt_bulk_opts bo = { .fmt = elem, .mode = o->mode, .saturate = true, .seed = o->seed, .index0 = index };
	return fmt_bulk_encode(path, &bo, out, tmp, n);
}

size_t quant_mx_blocks_portable(float *out, uint8_t *scales, const float *in, size_t n, size_t bs,
                                const quant_mx_rule *r)
{
	for (size_t b = 0, k = 0; b < n; b += bs, k++) {
		size_t cnt = n - b < bs ? n - b : bs;
		uint32_t m = quant_amax_portable(in + b, cnt);
		if (m >= 0x7f800000u)
			return b;
		int e = quant_mx_exp(r, m);
		scales[k] = (uint8_t)(e + 127);
		quant_mx_scale_portable(out + b, in + b, cnt, e);
	}
	return n;
}

#define QUANT_CHUNK 4096

/* The index of the first inf or NaN of in[0..n) (there is one). */
static size_t first_nonfinite(const float *in, size_t n)
{
	size_t where = 0;
	amax_bits(in, n, &where);
	return where;
}

/* A block larger than the chunk: its amax first, then its scaled values
 * chunk by chunk. */
static mp_status mx_big_block(fmt_simd path, const quant_opts *o, const quant_mx_rule *rr, uint64_t index,
                              uint8_t *elems, uint8_t *scale, const float *in, size_t cnt, size_t *bad)
{
	bool v = use_avx512(path);
	uint32_t m = quant_kernels_of(path)->amax(in, cnt);
	if (m >= 0x7f800000u) {
		if (bad)
			*bad = first_nonfinite(in, cnt);
		return MP_EINVAL;
	}
	int e = quant_mx_exp(rr, m);
	*scale = (uint8_t)(e + 127);
	float tmp[QUANT_CHUNK];
	for (size_t i = 0; i < cnt; i += QUANT_CHUNK) {
		size_t take = cnt - i < QUANT_CHUNK ? cnt - i : QUANT_CHUNK;
		(v ? quant_mx_scale_avx512 : quant_mx_scale_portable)(tmp, in + i, take, e);
		mp_status st = mx_flush(path, o, quant_get(o->fmt)->elem, index + i, elems + i, tmp, take);
		if (st != MP_OK)
			return st;
	}
	return MP_OK;
}

/* MX blocks of integer elements (mxint8), scalar on every path: the scale
 * as quant_mx_exp gives it, then element i = fmt_round_double(V_i *
 * 2^-(k + elem_shift)) with saturation (the product is exact in binary64),
 * rne or sr with rng_bits(seed, index0 + i): quant_run's rounding of the
 * same quotient. */
static mp_status bulk_mx_int(const quant_opts *o, const quant_mx_rule *rr, uint64_t index0, uint8_t *elems,
                             uint8_t *scales, const float *in, size_t n, size_t bs, size_t *bad)
{
	const quant_info *q = quant_get(o->fmt);
	const fmt_info *f = fmt_get(q->elem);
	for (size_t b = 0; b < n; b += bs) {
		size_t cnt = n - b < bs ? n - b : bs;
		uint32_t m = quant_amax_portable(in + b, cnt);
		if (m >= 0x7f800000u) {
			if (bad)
				*bad = b + first_nonfinite(in + b, cnt);
			return MP_EINVAL;
		}
		int k = quant_mx_exp(rr, m);
		scales[b / bs] = (uint8_t)(k + 127);
		for (size_t i = b; i < b + cnt; i++) {
			fmt_round_ctl ctl = { .mode = o->mode, .saturate = true,
				              .rbits = rng_bits(o->seed, index0 + i) };   /* read by sr and sr-equal only */
			uint32_t c = fmt_round_double(f, &ctl, ldexp((double)in[i], -(k + q->elem_shift)), NULL);
			elems[i] = (uint8_t)(c == fmt_sign_mask(f) ? c | 1 : c);   /* symmetric, as quant_run */
		}
	}
	return MP_OK;
}

static mp_status bulk_mx(fmt_simd path, const quant_opts *o, uint64_t index0, uint8_t *elems, uint8_t *scales,
                         const float *in, size_t n, size_t *bad)
{
	const quant_info *q = quant_get(o->fmt);
	size_t bs = o->block ? o->block : (size_t)q->block;
	quant_mx_rule rr = quant_mx_rule_of(q, o->rule);
	if (fmt_is_int(fmt_get(q->elem)))
		return bulk_mx_int(o, &rr, index0, elems, scales, in, n, bs, bad);
	if (bs > QUANT_CHUNK) {
		for (size_t b = 0; b < n; b += bs) {
			size_t cnt = n - b < bs ? n - b : bs, at = 0;
			mp_status st = mx_big_block(path, o, &rr, index0 + b, elems + b, scales + b / bs, in + b, cnt, &at);
			if (st != MP_OK) {
				if (bad)
					*bad = b + at;
				return st;
			}
		}
		return MP_OK;
	}
	bool fused_sr = o->mode == FMT_SR && (n == 0 || (index0 >> 32) == ((index0 + n - 1) >> 32));
	const quant_kernels *K = quant_kernels_of(path);
	if (bs % (size_t)K->lanes == 0 && (o->mode == FMT_RNE || fused_sr)) {
		/* whole blocks in one pass; a short last block below */
		quant_elem_enc enc = quant_elem_enc_of(q->elem);
		size_t done = o->mode == FMT_RNE ? K->mx_rne(elems, scales, in, n, bs, &rr, &enc)
		                                 : K->mx_sr(elems, scales, in, n, bs, &rr, &enc, o->seed, index0);
		if (done < n / bs * bs) {
			if (bad)
				*bad = done + first_nonfinite(in + done, bs);
			return MP_EINVAL;
		}
		index0 += done;
		elems += done;
		scales += done / bs;
		in += done;
		n -= done;
	}
	/* whole blocks per chunk: scales and scaled values, then one encoder call */
	quant_mx_blocks_fn blocks = use_avx512(path) ? quant_mx_blocks_avx512 : quant_mx_blocks_portable;
	float tmp[QUANT_CHUNK];
	size_t per = QUANT_CHUNK / bs * bs;
	for (size_t b = 0; b < n; b += per) {
		size_t cnt = n - b < per ? n - b : per;
		size_t got = blocks(tmp, scales + b / bs, in + b, cnt, bs, &rr);
		if (got < cnt) {
			if (bad)
				*bad = b + got + first_nonfinite(in + b + got, cnt - got < bs ? cnt - got : bs);
			return MP_EINVAL;
		}
		mp_status st = mx_flush(path, o, q->elem, index0 + b, elems + b, tmp, cnt);
		if (st != MP_OK)
			return st;
	}
	return MP_OK;
}

/* --- nvfp4 --- */

/* The pattern of the largest fp32 not above t > 0 (FLT_MAX above it): the
 * nearest one, or the one below it (a pattern step down) when that is above
 * t or inf. *exact: whether it is t. */
static uint32_t f32_below(double t, bool *exact)
{
	float f = (float)t;
	uint32_t b = f2u(f);
	bool over = b == 0x7f800000u || (double)f > t;
	*exact = !over && (double)f == t;
	return over ? b - 1 : b;
}

/* Rounding-to-nearest-even into e2m1 of |V| / D, for fp32 V, as 7
 * comparisons of patterns. The midpoints between the e2m1 magnitudes (codes
 * 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6) are mid_j * D, exact in binary64
 * (mid_j has at most 3 significant bits, D = s_b * s_t at most 28). For an
 * fp32 a, a > t iff a > rd32(t), the largest fp32 not above t; a == t only
 * when t is an fp32. A tie goes to the even code: up (a >= t, that is a >
 * the fp32 below t) when j is odd. Above the last midpoint is code 7 (6):
 * the saturation. */
void quant_nv_thresholds(uint32_t g[7], double D)
{
	static const double mid[7] = { 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0 };
	for (int j = 0; j < 7; j++) {
		bool exact;
		uint32_t b = f32_below(mid[j] * D, &exact);
		g[j] = (j & 1) && exact ? b - 1 : b;
	}
}

/* The pattern b with a > b iff a >= t, for every fp32 pattern a >= 0 (t > 0). */
static uint32_t pattern_ge(double t)
{
	bool exact;
	uint32_t b = f32_below(t, &exact);
	return exact ? b - 1 : b;
}

/* One nvfp4 block's scale byte s_b = e4m3(amax / (6 s_t)), 0 when s_t or
 * amax is 0 (quant_nv_rne_avx512 computes it the same way). The quotient
 * is taken in binary64 and rounded once more into e4m3, which is the
 * once-rounded result: amax = a 2^ea (a < 2^24) and
 * 6 s_t = b 2^eb (b < 2^26) are exact, an e4m3 midpoint is m = M 2^em with
 * M < 2^5, and a quotient that is not m differs from it by |a 2^ea - M b
 * 2^(em+eb)| / (b 2^eb), a nonzero multiple of 2^min(ea, em+eb) over the
 * divisor: at least 2^-32 of m relatively (2^-31 over M b, or 2^-26 when
 * ea is the smaller, the quotient being near m). Binary64's division errs
 * by at most 2^-53 relatively, so it lands on the same side of every
 * midpoint as the exact quotient, and on m exactly when that is m. */
static uint32_t nv_block_scale(float s_t, uint32_t amax)
{
	if (s_t == 0 || amax == 0)
		return 0;
	return quant_e4m3_code((double)u2f(amax) / (6.0 * (double)s_t));
}

/* |V| / D for fp32 V and D = s_b * s_t as fmt_round_parts wants it:
 * the quotient truncated to 53 bits and a sticky bit, exactly. q = V / D
 * rounded to binary64 and the residual r = V - q D, which fma gives
 * exactly (the residual of a correctly rounded quotient is a binary64; no
 * underflow: |r| is a multiple of ulp(q) ulp(D) >= 2^-506), say on which
 * side of q the exact quotient lies; it is within half an ulp of q. So the
 * truncation is q's significand M when r >= 0 (sticky when r > 0), else M -
 * 1, or 2^53 - 1 one binade down when q is a power of two, with sticky. */
static void nv_quotient(double a, double D, long *exp2, uint64_t *sig, bool *sticky)
{
	double q = a / D, r = fma(-q, D, a);
	uint64_t b;
	memcpy(&b, &q, 8);   /* q is normal: 2^-506 < q < 2^400 */
	uint64_t m = (b & ((1ull << 52) - 1)) | 1ull << 52;   /* q = m 2^(E - 1075) */
	*exp2 = (long)(b >> 52) - 1023;
	*sticky = r != 0;
	if (r < 0) {
		if (m == 1ull << 52) {
			m = (1ull << 53) - 1;
			(*exp2)--;
		} else {
			m--;
		}
	}
	*sig = m << 11;
}

/* An element of value v / D in the mode, exactly (nv_quotient), rounded
 * once by fmt_round_parts (saturating). */
static uint8_t nv_exact(fmt_mode mode, uint32_t v, uint32_t rbits, double D)
{
	bool neg = v >> 31;
	if ((v & 0x7fffffffu) == 0)
		return neg ? 0x8 : 0;
	long exp2;
	uint64_t sig;
	bool sticky;
	nv_quotient(fabs((double)u2f(v)), D, &exp2, &sig, &sticky);
	fmt_round_ctl ctl = { .mode = mode, .saturate = true, .rbits = rbits };
	return (uint8_t)fmt_round_parts(fmt_get(quant_get(QUANT_NVFP4)->elem), &ctl, neg, exp2, sig, sticky, NULL);
}

uint8_t quant_nv_sr_exact(uint32_t v, uint32_t rbits, double D)
{
	return nv_exact(FMT_SR, v, rbits, D);
}

/* Elements in a mode other than rne (sr, rto, rnz, sr-equal), each
 * quotient exact and rounded once; the random bits of element i are the
 * stream's index + i. */
static void nv_elems(const quant_opts *o, uint64_t index, uint8_t *out, const float *in, size_t n, double D)
{
	rng_key key = rng_key_for(o->seed, index);
	for (size_t i = 0; i < n; i++) {
		if ((uint32_t)(index + i) == 0)
			key = rng_key_for(o->seed, index + i);   /* a new 2^32 stretch of the stream */
		out[i] = nv_exact(o->mode, f2u(in[i]), rng_bits_keyed(key, (uint32_t)(index + i)), D);
	}
}

void quant_nv_rne_portable(uint8_t *out, const float *in, size_t n, const uint32_t g[8])
{
	for (size_t i = 0; i < n; i++) {
		uint32_t v = f2u(in[i]), a = v & 0x7fffffffu, c = 0;
		for (int j = 0; j < 7; j++)
			c += a > g[j];
		out[i] = (uint8_t)(c | (v >> 31) << 3);
	}
}

/* The least fp32 f >= t, for a binary64 t >= 0 (inf above FLT_MAX): the
 * nearest one, or a pattern step up. */
static float f32_up(double t)
{
	float f = (float)t;
	return (double)f < t ? u2f(f2u(f) + 1) : f;
}

/* The e2m1 magnitudes, codes 0..7. */
static const double e2m1_val[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };

/* The tables of quant_nv_sr16_avx512 for s_t > 0. */
static void nv_sr_tables(quant_nv_sr_tab *t, float s_t)
{
	const double *val = e2m1_val;
	static const int gap[8] = { -1, -1, -1, -1, 0, 0, 1, 0 };
	/* scale code 0: elements 0, never up (h above every pattern, T = inf) */
	t->dm[0] = 1;
	for (int k = 0; k < 8; k++) {
		t->h[0][k] = QUANT_NV_NEVER;
		t->vd[0][k] = t->sc[0][k] = 0;
		t->tg[0][k] = 0;
		t->tv[0][k] = INFINITY;
		t->ig[0][k] = 0;
		t->nvq[0][k] = QUANT_NV_SR_NEVER_Q;
	}
	t->slow[0] = 0;
	for (uint32_t c = 1; c < 127; c++) {
		/* D = m 2^(E - 1075), a normal binary64 (2^-158 <= D < 2^128) */
		double D = quant_e4m3_value(c) * (double)s_t;
		uint64_t b;
		memcpy(&b, &D, 8);
		uint64_t m = (b & ((1ull << 52) - 1)) | 1ull << 52;
		int tz = __builtin_ctzll(m);
		t->dm[c] = m >> tz;
		int ed = (int)(b >> 52) - 1075 + tz;
		t->slow[c] = 0;
		for (int k = 0; k < 8; k++) {
			t->h[c][k] = k < 7 ? pattern_ge(val[k + 1] * D) : QUANT_NV_NEVER;
			t->vd[c][k] = val[k] * D;
			t->sc[c][k] = quant_pow2(32 - gap[k] - ed);
			/* g = 2^(p - 32) D and vd exact in binary64 (D has at most 28 bits) */
			double g = k < 7 ? D * quant_pow2(gap[k] - 32) : 0, vd = k < 7 ? val[k] * D : INFINITY;
			t->tg[c][k] = f32_up(g);
			t->tv[c][k] = f32_up(vd);
			/* 1 / (4 g) = 2^(30 - p) / D, rounded twice (binary64, then
			 * fp32): within 2^-24 (1 + 2^-29) of it */
			double ig = k < 7 ? quant_pow2(30 - gap[k]) / D : 0;
			t->ig[c][k] = (float)ig;
			t->nvq[c][k] = k < 7 ? (float)(-val[k] * quant_pow2(30 - gap[k])) : QUANT_NV_SR_NEVER_Q;
			if (!(ig <= FLT_MAX))
				t->slow[c] = 1;
		}
		/* a slow row's lanes all take the exact test; its ig and nvq only
		 * keep Q finite (never up), so that Q converts to an integer */
		for (int k = 0; k < 8 && t->slow[c]; k++) {
			t->ig[c][k] = 0;
			t->nvq[c][k] = QUANT_NV_SR_NEVER_Q;
		}
	}
}

/* rne's decision patterns for each block scale; scale 0 (elements 0)
 * never passes one, nor does any scale where s_t is 0 (not used). */
static void nv_rne_tables(uint32_t g[127][8], float s_t)
{
	for (int j = 0; j < 8; j++)
		g[0][j] = QUANT_NV_NEVER;
	for (uint32_t c = 1; c < 127 && s_t > 0; c++) {
		quant_nv_thresholds(g[c], quant_e4m3_value(c) * (double)s_t);
		g[c][7] = QUANT_NV_NEVER;   /* unused: the rows are loaded 8 at a time */
	}
}

static mp_status bulk_nv(fmt_simd path, const quant_opts *o, float s_t, uint64_t index0, uint8_t *elems,
                         uint8_t *scales, const float *in, size_t n, size_t *bad)
{
	size_t bs = o->block ? o->block : (size_t)quant_get(QUANT_NVFP4)->block;
	const quant_kernels *K = quant_kernels_of(path);
	quant_nv_fn rne = K->nv_rne;
	quant_amax_fn amax = K->amax;
	uint32_t g[127][8];
	nv_rne_tables(g, o->mode == FMT_RNE ? s_t : 0);
	bool one_key = n == 0 || (index0 >> 32) == ((index0 + n - 1) >> 32);
	if (bs == 16 && s_t > 0 && (o->mode == FMT_RNE || (o->mode == FMT_SR && one_key))) {
		size_t done;
		if (o->mode == FMT_RNE) {
			done = K->nv_rne16(elems, scales, in, n / 16 * 16, 6.0 * (double)s_t, g);
		} else {
			quant_nv_sr_tab *tab = malloc(sizeof *tab);
			if (!tab)
				return MP_ENOMEM;
			nv_sr_tables(tab, s_t);
			done = K->nv_sr16(elems, scales, in, n / 16 * 16, 6.0 * (double)s_t, tab, o->seed, index0);
			free(tab);
		}
		if (done < n / 16 * 16) {
			if (bad)
				*bad = done + first_nonfinite(in + done, 16);
			return MP_EINVAL;
		}
		elems += done;
		scales += done / 16;
		in += done;
		n -= done;
		index0 += done;
	}
	for (size_t b = 0, k = 0; b < n; b += bs, k++) {
		size_t cnt = n - b < bs ? n - b : bs, where = 0;
		uint32_t m = amax(in + b, cnt);
		if (m >= 0x7f800000u) {
			amax_bits(in + b, cnt, &where);
			if (bad)
				*bad = b + where;
			return MP_EINVAL;
		}
		uint32_t c = nv_block_scale(s_t, m);
		scales[k] = (uint8_t)c;
		if (c == 0) {
			for (size_t i = 0; i < cnt; i++)
				elems[b + i] = (uint8_t)((f2u(in[b + i]) >> 31) << 3);
		} else if (o->mode != FMT_RNE) {
			nv_elems(o, index0 + b, elems + b, in + b, cnt, quant_e4m3_value(c) * (double)s_t);
		} else {
			rne(elems + b, in + b, cnt, g[c]);
		}
	}
	return MP_OK;
}

mp_status quant_bulk(fmt_simd path, const quant_opts *o, float s_t, uint64_t index0, uint8_t *elems,
                     uint8_t *scales, const float *in, size_t n, size_t *bad)
{
	if (quant_opts_check(o, NULL, 0) != MP_OK)
		return MP_EINVAL;
	if (path == FMT_SIMD_AUTO)
		path = fmt_simd_best();
	if (!fmt_simd_available(path))
		return MP_EUNSUPPORTED;
	if (quant_get(o->fmt)->nvfp4)
		return bulk_nv(path, o, s_t, index0, elems, scales, in, n, bad);
	return bulk_mx(path, o, index0, elems, scales, in, n, bad);
}

/* What the fused MX rne casts need of o. */
typedef struct {
	size_t bs;
	quant_mx_rule rule;
	quant_elem_enc enc;
} fused_setup;

/* Whether the fused casts take o, and then their setup. */
static bool fused_of(fused_setup *f, const quant_opts *o)
{
	if (quant_opts_check(o, NULL, 0) != MP_OK)
		return false;
	const quant_info *q = quant_get(o->fmt);
	const fmt_info *ef = fmt_get(q->elem);
	if (q->nvfp4 || fmt_is_int(ef) || o->mode != FMT_RNE)
		return false;
	f->bs = o->block ? o->block : (size_t)q->block;
	f->rule = quant_mx_rule_of(q, o->rule);
	f->enc = quant_elem_enc_of(q->elem);
	return true;
}

mp_status quant_mx_rne_cols(float *out, const float *in, size_t h, size_t cols, size_t ld, const quant_opts *o,
                            const quant_mx_tabs *t, quant_fused_stats *cs)
{
	fused_setup f;
	if (!fused_of(&f, o) || cols % 8 || h == 0 || h > f.bs || ld < cols)
		return MP_EUNSUPPORTED;
	bool ok = quant_kernels_of(fmt_simd_best())->mx_rne_cols(out, in, h, cols, ld, &f.rule, &f.enc, t, cs);
	return ok ? MP_OK : MP_EINVAL;
}

mp_status quant_mx_rne_rows(float *out, const float *in, size_t n, const quant_opts *o, const quant_mx_tabs *t,
                            quant_fused_stats *cs, size_t *done)
{
	fused_setup f;
	*done = 0;
	if (!fused_of(&f, o) || f.bs % 8 || n % f.bs)
		return MP_EUNSUPPORTED;
	*done = quant_kernels_of(fmt_simd_best())->mx_rne_rows(out, in, n, f.bs, &f.rule, &f.enc, t, cs);
	return *done == n ? MP_OK : MP_EINVAL;
}

mp_status quant_nv_rows_on(fmt_simd path, float *out, const float *in, size_t n, const quant_opts *o, float s_t,
                           uint64_t index0, const uint32_t over[256], quant_fused_stats *cs, size_t *done)
{
	*done = 0;
	bool sr = o->mode == FMT_SR;
	if (quant_opts_check(o, NULL, 0) != MP_OK || o->fmt != QUANT_NVFP4 || (o->block && o->block != 16) ||
	    (o->mode != FMT_RNE && !sr) || n % 16 || !(s_t > 0) ||
	    (sr && n && (index0 >> 32) != ((index0 + n - 1) >> 32)))
		return MP_EUNSUPPORTED;
	float mag[127][8];
	uint32_t g[127][8];
	for (uint32_t c = 0; c < 127; c++) {
		double D = quant_e4m3_value(c) * (double)s_t;   /* exact: 4 bits times 24 */
		for (int e = 0; e < 8; e++)
			mag[c][e] = (float)(e2m1_val[e] * D);
	}
	quant_nv_sr_tab *tab = NULL;
	if (sr) {
		if (!(tab = malloc(sizeof *tab)))
			return MP_ENOMEM;
		nv_sr_tables(tab, s_t);
	} else {
		nv_rne_tables(g, s_t);
	}
	const quant_nv_cast t = { .g = sr ? NULL : (const uint32_t (*)[8])g, .sr = tab,
	                          .mag = (const float (*)[8])mag, .over = over, .seed = o->seed, .index0 = index0 };
	*done = quant_kernels_of(path)->nv_rows(out, in, n, 6.0 * (double)s_t, &t, cs);
	free(tab);
	return *done == n ? MP_OK : MP_EINVAL;
}

mp_status quant_nv_rows(float *out, const float *in, size_t n, const quant_opts *o, float s_t, uint64_t index0,
                        const uint32_t over[256], quant_fused_stats *cs, size_t *done)
{
	return quant_nv_rows_on(fmt_simd_best(), out, in, n, o, s_t, index0, over, cs, done);
}
