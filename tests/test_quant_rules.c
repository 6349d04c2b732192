/* The MX scale rules (quant.h) against torchao's definitions, re-derived
 * here on fp32 bit fields and exact integers, independently of quant/.
 *
 * Read: pytorch/ao, torchao/prototype/mx_formats/mx_tensor.py at commit
 * b88afaf4156aeddde1971c000a0cf11a52ce03d5 (to_mx and _to_mx_rceil), its
 * ScaleCalculationMode (FLOOR, RCEIL, CEIL, EVEN) in config.py and
 * constants.py (F8E4M3_MAX_POW2 = 8, F8E5M2_MAX_POW2 = 15,
 * F6_E2M3_MAX_POW2 = 2, F6_E3M2_MAX_POW2 = 4, F4_E2M1_MAX_POW2 = 2;
 * MBITS 3, 2, 3, 2, 1). The lines re-implemented:
 *
 *   EVEN:   val_to_add = 1 << (hp_mbits - mbits - 1)
 *           mask = ((1 << (hp_ebits + SBITS)) - 1) << hp_mbits
 *           max_abs = (max_abs + val_to_add) & mask
 *   all:    extracted_pow2 = ((max_abs_int32 >> hp_mbits) & 0b11111111) - hp_exp_bias
 *   FLOOR, EVEN: scale_e8m0_unbiased = extracted_pow2 - target_max_pow2
 *   CEIL:   mantissa_gt_one = (max_abs_int32 & 0x7FFFFF) > 0
 *           extracted_pow2 += mantissa_gt_one
 *           scale_e8m0_unbiased = extracted_pow2 - target_max_pow2
 *           scale_e8m0_unbiased = torch.clamp(scale_e8m0_unbiased,
 *               min=-E8M0_EXPONENT_BIAS, max=E8M0_EXPONENT_BIAS + 1)
 *   RCEIL:  descale = max_abs / max_pos
 *           exponent = torch.clamp(torch.ceil(torch.log2(descale)),
 *               min=-E8M0_EXPONENT_BIAS, max=E8M0_EXPONENT_BIAS) + E8M0_EXPONENT_BIAS
 *
 * RCEIL's ceil(log2 d) is taken exactly here (the least k with 2^k >= d,
 * by comparisons): what cuBLAS's round-up conversion to ue8m0 computes;
 * torch.log2 in fp32 cannot hold k + 2^-23 / ln 2 for |k| >= 4 and may
 * round it down to k. The upper clamp 128 of FLOOR, CEIL and EVEN (e8m0
 * 0xff, NaN) is never reached by a finite fp32 amax of these formats
 * (extracted_pow2 <= 128 and target_max_pow2 >= 2): the test checks it.
 *
 * Patterns: every fp32 exponent field (0, the subnormals, to 254) with
 * fractions 0 (powers of two), 1 (just above), 0x7fffff (just below the
 * next), EVEN's carry threshold 2^23 - 2^(22 - mbits) and its neighbours,
 * the element max's fraction and its neighbours (amax at max_elem * 2^j
 * and a hair off), and for subnormals the same fractions as raw fields;
 * and amax 0. Each block of 32 puts its amax at a varying lane among
 * smaller values. The e8m0 bytes of quant_run (exact) and of quant_bulk
 * on every SIMD path must equal the re-derived ones, and the elements of
 * every path the portable path's. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "quant/quant.h"
#include "testutil.h"
#include "util/rng.h"

enum { BS = 32, MAXPAT = 8192 };

typedef struct {
	quant_id id;
	int pow2, mbits;     /* torchao's target_max_pow2 and mbits */
	double max_pos;      /* torchao's max_pos */
} tao_fmt;

static const tao_fmt tao[] = {
	{ QUANT_MXFP8_E4M3, 8, 3, 448.0 },  { QUANT_MXFP8_E5M2, 15, 2, 57344.0 }, { QUANT_MXFP6_E2M3, 2, 3, 7.5 },
	{ QUANT_MXFP6_E3M2, 4, 2, 28.0 },   { QUANT_MXFP4, 2, 1, 6.0 },
};

static uint32_t pats[MAXPAT];
static size_t npat;
static float data[MAXPAT * BS];
static fmt_num xs[MAXPAT];
static uint8_t sc_exact[MAXPAT], sc[MAXPAT], el[MAXPAT * BS], el_ref[MAXPAT * BS];

static int clampi(int k, int lo, int hi)
{
	return k < lo ? lo : k > hi ? hi : k;
}

/* torchao's FLOOR, CEIL, EVEN on the pattern a (lines quoted above). */
static int tao_bits_rule(quant_rule rule, const tao_fmt *t, uint32_t a)
{
	if (rule == QUANT_RULE_EVEN)
		a = (a + (1u << (23 - t->mbits - 1))) & (((1u << 9) - 1) << 23);
	int extracted = (int)((a >> 23) & 0xffu) - 127;
	if (rule == QUANT_RULE_TCEIL)
		extracted += (a & 0x7fffffu) > 0;
	int k = clampi(extracted - t->pow2, -127, 128);
	ck_assert_msg(k != 128, "a finite amax reached torchao's NaN clamp");
	return k;
}

/* The least k with 2^k >= d (d > 0 finite): ceil(log2 d), exactly. */
static int ceil_log2_exact(double d)
{
	int k = -160;   /* below every fp32 */
	while (ldexp(1.0, k) < d)
		k++;
	return k;
}

/* The expected exponent of rule for the fp32 amax pattern a. */
static int expected(quant_rule rule, const tao_fmt *t, uint32_t a)
{
	double amax = (double)u2f(a);
	switch (rule) {
	case QUANT_RULE_RCEIL: {
		float descale = u2f(a) / (float)t->max_pos;   /* torchao's fp32 division */
		return descale == 0 ? -127 : clampi(ceil_log2_exact(descale), -127, 127);
	}
	case QUANT_RULE_CEIL:   /* Transformer Engine's: ceil(log2(amax / max_elem)), exactly */
		if (a == 0)
			return -127;
		{
			int k = -400;
			while (ldexp(t->max_pos, k) < amax)   /* exact products and comparisons in binary64 */
				k++;
			return clampi(k, -127, 127);
		}
	default:
		return tao_bits_rule(rule, t, a);
	}
}

/* The fractions tried at every exponent field. */
static size_t fractions(const tao_fmt *t, uint32_t *fr)
{
	uint32_t thr = (1u << 23) - (1u << (22 - t->mbits));
	uint32_t mf = f2u((float)t->max_pos) & 0x7fffffu;
	uint32_t list[] = { 0, 1, 2, 0x7fffffu, 0x7ffffeu, 0x400000u, thr, thr - 1, thr + 1, mf, mf + 1, mf - 1 };
	size_t n = 0;
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
		fr[n++] = list[i] & 0x7fffffu;
	return n;
}

static void build(const tao_fmt *t)
{
	uint32_t fr[16];
	size_t nf = fractions(t, fr);
	npat = 0;
	pats[npat++] = 0;
	for (uint32_t ex = 0; ex <= 254; ex++)
		for (size_t j = 0; j < nf; j++)
			if (ex || fr[j])
				pats[npat++] = ex << 23 | fr[j];
	pats[npat++] = 0x7f7fffffu;   /* FLT_MAX */
	ck_assert(npat <= MAXPAT);
	for (size_t b = 0; b < npat; b++) {
		size_t at = rng_bits(3, b) % BS;
		for (size_t i = 0; i < BS; i++) {
			uint32_t r = rng_bits(4, b * BS + i);
			uint32_t v = i == at ? pats[b] : pats[b] ? (uint32_t)(((uint64_t)pats[b] * (r >> 8)) >> 24) : 0;
			data[b * BS + i] = u2f(v | (r & 1u) << 31);
		}
		fmt_num_set_double(&xs[b], (double)u2f(pats[b]));
	}
}

START_TEST(rules_match_torchao)
{
	for (size_t f = 0; f < sizeof tao / sizeof tao[0]; f++) {
		const tao_fmt *t = &tao[f];
		const quant_info *q = quant_get(t->id);
		ck_assert(q->emax_elem == t->pow2 && q->mbits == t->mbits && fmt_max(fmt_get(q->elem)) == t->max_pos);
		build(t);
		for (int rule = 0; rule < QUANT_RULE_COUNT; rule++) {
			/* exact: one element per block, the amax itself */
			quant_opts o = { .fmt = t->id, .rule = (quant_rule)rule, .mode = FMT_RNE, .block = 1 };
			quant_result r;
			ck_assert(quant_run(&o, xs, npat, &r, NULL, 0) == MP_OK);
			for (size_t b = 0; b < npat; b++)
				sc_exact[b] = (uint8_t)r.blocks[b].scale_bits;
			quant_result_free(&r);
			o.block = BS;
			for (int p = 0; p < FMT_SIMD_COUNT; p++) {
				if (!fmt_simd_available((fmt_simd)p))
					continue;
				ck_assert(quant_bulk((fmt_simd)p, &o, 0, 0, el, sc, data, npat * BS, NULL) == MP_OK);
				for (size_t b = 0; b < npat; b++) {
					int want = expected((quant_rule)rule, t, pats[b]) + 127;
					ck_assert_msg(sc_exact[b] == want, "%s %s amax 0x%08x (%a): exact 0x%02x, torchao 0x%02x",
					              q->name, quant_rule_name((quant_rule)rule), pats[b], (double)u2f(pats[b]),
					              sc_exact[b], want);
					ck_assert_msg(sc[b] == want, "%s %s %s amax 0x%08x: bulk 0x%02x, torchao 0x%02x", q->name,
					              quant_rule_name((quant_rule)rule), fmt_simd_name((fmt_simd)p), pats[b], sc[b],
					              want);
				}
				if (p == FMT_SIMD_PORTABLE)
					memcpy(el_ref, el, npat * BS);
				else
					ck_assert_msg(memcmp(el, el_ref, npat * BS) == 0, "%s %s: %s elements differ from portable",
					              q->name, quant_rule_name((quant_rule)rule), fmt_simd_name((fmt_simd)p));
			}
		}
	}
}
END_TEST

/* Blocks of 16, 24, 40 and 64 (and a short last block) on every path and
 * rule, against an element-by-element reference built here: the block's
 * amax from the fp32 values, its exponent k from the re-derived rule
 * (expected), and element i = fmt_round_double(V_i * 2^-k) with
 * saturation, rne or sr with rng_bits(seed, i) (quant.h's definition of
 * the SR draws). */
START_TEST(blocks_any_size)
{
	enum { NB = 64 * 24 + 7 };
	static float v[NB];
	static uint8_t e[NB], s[NB];
	for (size_t i = 0; i < NB; i++) {
		uint32_t r = rng_bits(5, i), w = rng_bits(6, i / 8);
		uint32_t ex = 1 + (w % 200) + (r >> 23) % 12;
		v[i] = u2f((r & 0x807fffffu) | ex << 23);
		if (r % 53 == 0)
			v[i] = u2f(r & 0x800fffffu);   /* subnormals and zeros among them */
	}
	static const size_t sizes[] = { 16, 24, 40, 64 };
	for (size_t f = 0; f < sizeof tao / sizeof tao[0]; f++) {
		const tao_fmt *t = &tao[f];
		const fmt_info *ef = fmt_get(quant_get(t->id)->elem);
		for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
			for (int rule = 0; rule < QUANT_RULE_COUNT; rule++)
				for (int mode = 0; mode < 2; mode++) {
					size_t bs = sizes[z];
					quant_opts o = { .fmt = t->id, .rule = (quant_rule)rule, .mode = mode ? FMT_SR : FMT_RNE,
						         .seed = 7, .block = bs };
					for (int p = 0; p < FMT_SIMD_COUNT; p++) {
						if (!fmt_simd_available((fmt_simd)p))
							continue;
						ck_assert(quant_bulk((fmt_simd)p, &o, 0, 0, e, s, v, NB, NULL) == MP_OK);
						for (size_t b = 0; b * bs < NB; b++) {
							size_t cnt = NB - b * bs < bs ? NB - b * bs : bs;
							uint32_t amax = 0;
							for (size_t i = 0; i < cnt; i++) {
								uint32_t a = f2u(v[b * bs + i]) & 0x7fffffffu;
								amax = a > amax ? a : amax;
							}
							int k = expected((quant_rule)rule, t, amax);
							ck_assert_msg(s[b] == k + 127, "%s %s bs %zu %s block %zu: 0x%02x, want 0x%02x",
							              quant_get(t->id)->name, quant_rule_name((quant_rule)rule), bs,
							              fmt_simd_name((fmt_simd)p), b, s[b], k + 127);
							for (size_t i = b * bs; i < b * bs + cnt; i++) {
								fmt_round_ctl ctl = { .mode = o.mode, .saturate = true, .rbits = rng_bits(7, i) };
								uint32_t want = fmt_round_double(ef, &ctl, ldexp((double)v[i], -k), NULL);
								ck_assert_msg(e[i] == want, "%s %s bs %zu %s %s element %zu (%a): 0x%02x, want "
								              "0x%02x", quant_get(t->id)->name, quant_rule_name((quant_rule)rule),
								              bs, fmt_mode_name(o.mode), fmt_simd_name((fmt_simd)p), i,
								              (double)v[i], e[i], want);
							}
						}
					}
				}
	}
}
END_TEST

static int exact_exp(quant_id id, quant_rule rule, const char *text)
{
	fmt_num x;
	fmt_num_init(&x);
	ck_assert(fmt_parse_number(&x, text, NULL, 0) == MP_OK);
	quant_opts o = { .fmt = id, .rule = rule, .mode = FMT_RNE };
	quant_result r;
	ck_assert(quant_run(&o, &x, 1, &r, NULL, 0) == MP_OK);
	int k = r.blocks[0].scale_exp;
	quant_result_free(&r);
	fmt_num_clear(&x);
	return k;
}

/* Where the rules part, derived by hand:
 * - e4m3, amax 300: ceil(log2(300 / 448)) = 0 (ceil); ceil(log2 300) - 8 =
 *   9 - 8 = 1 (torchao-ceil): torchao's CEIL is not TE's rule. floor: 8 - 8
 *   = 0. even: 300 = 1.171875 * 2^8, below (2 - 2^-4) * 2^8 = 496: 0.
 * - e4m3, amax 496 = (2 - 2^-4) * 2^8: even carries to 2^9: 1; 495.99... not.
 * - e4m3, amax 448 (1 + 2^-40) = 0x1.c0000000001cp+8 (not an fp32): above 448, so ceil
 *   gives 1; rceil's fp32 quotient rounds to 1.0, log2 0: rceil gives 0.
 * - e4m3, amax 1.75 * 2^-119 + 2^-142 = 0x1.c00002p-119 (an fp32,
 *   max_elem * 2^-127 plus one ulp): amax / 448 = 2^-127 (1 + 2^-23 / 1.75), whose fp32 rounding on
 *   the subnormal grid (2^-149) is 2^-127: rceil -127; ceil -126. */
START_TEST(rules_part_by_hand)
{
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_CEIL, "300"), 0);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_TCEIL, "300"), 1);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, "300"), 0);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_EVEN, "300"), 0);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_EVEN, "496"), 1);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_EVEN, "495.999"), 0);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_CEIL, "0x1.c0000000001cp+8"), 1);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_RCEIL, "0x1.c0000000001cp+8"), 0);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_CEIL, "0x1.c00002p-119"), -126);
	ck_assert_int_eq(exact_exp(QUANT_MXFP8_E4M3, QUANT_RULE_RCEIL, "0x1.c00002p-119"), -127);
	/* the same fp32 amax on every bulk path */
	float v[BS] = { 0x1.c00002p-119f };
	quant_opts o = { .fmt = QUANT_MXFP8_E4M3, .rule = QUANT_RULE_RCEIL, .mode = FMT_RNE };
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!fmt_simd_available((fmt_simd)p))
			continue;
		uint8_t e[BS], s;
		o.rule = QUANT_RULE_RCEIL;
		ck_assert(quant_bulk((fmt_simd)p, &o, 0, 0, e, &s, v, BS, NULL) == MP_OK);
		ck_assert_int_eq(s, 0);
		o.rule = QUANT_RULE_CEIL;
		ck_assert(quant_bulk((fmt_simd)p, &o, 0, 0, e, &s, v, BS, NULL) == MP_OK);
		ck_assert_int_eq(s, 1);
	}
	/* every rule refuses inf and NaN; an all-zero block is 2^-127 */
	for (int rule = 0; rule < QUANT_RULE_COUNT; rule++) {
		o.rule = (quant_rule)rule;
		float z[BS] = { 0 }, bad[BS] = { 1, INFINITY };
		uint8_t e[BS], s = 0xaa;
		ck_assert(quant_bulk(FMT_SIMD_PORTABLE, &o, 0, 0, e, &s, z, BS, NULL) == MP_OK && s == 0);
		ck_assert(quant_bulk(FMT_SIMD_PORTABLE, &o, 0, 0, e, &s, bad, BS, NULL) == MP_EINVAL);
		bad[1] = NAN;
		ck_assert(quant_bulk(FMT_SIMD_PORTABLE, &o, 0, 0, e, &s, bad, BS, NULL) == MP_EINVAL);
	}
}
END_TEST

START_TEST(rule_names)
{
	quant_rule r;
	static const char *const names[] = { "ocp", "ceil", "even", "rceil", "torchao-ceil" };
	for (int i = 0; i < QUANT_RULE_COUNT; i++) {
		ck_assert(quant_rule_parse(names[i], &r) == MP_OK && (int)r == i);
		ck_assert_str_eq(quant_rule_name(r), names[i]);
	}
	ck_assert(quant_rule_parse("FLOOR", &r) == MP_OK && r == QUANT_RULE_OCP);
	ck_assert(quant_rule_parse("round", &r) == MP_EINVAL);
}
END_TEST

int main(void)
{
	for (size_t i = 0; i < MAXPAT; i++)
		fmt_num_init(&xs[i]);
	Suite *s = suite_create("quant_rules");
	TCase *tc = tcase_create("quant_rules");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, rules_match_torchao);
	tcase_add_test(tc, rules_part_by_hand);
	tcase_add_test(tc, blocks_any_size);
	tcase_add_test(tc, rule_names);
	suite_add_tcase(s, tc);
	int rc = testutil_run(s);
	for (size_t i = 0; i < MAXPAT; i++)
		fmt_num_clear(&xs[i]);
	return rc;
}
