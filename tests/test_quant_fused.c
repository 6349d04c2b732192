/* The fused MX rne casts (quant_mx_rne_rows, quant_mx_rne_cols and every
 * path's kernels) against the two passes they replace, worked out here:
 * quant_bulk on the portable path for the codes and scales, each code's
 * value from the element format's decoder times 2^(scale - 127) rounded
 * once to fp32 (both factors exact), and the counts by their definitions
 * (a nonzero input decoded to 0; |x|'s pattern above the block's over).
 * Blocks down the columns are laid out transposed, with a row stride past
 * the last column. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "quant/quant.h"
#include "quant/quant_impl.h"
#include "testutil.h"
#include "util/rng.h"

#define BS 32
#define NB 40            /* blocks: five groups of 8 */
#define NE (NB * BS)
#define LD (NB + 8)      /* the column layout's row stride */

static float in[NE], want[NE], out[NE], cin[BS * LD], cout[BS * LD];
static float val[256], sval[256], amax_want[NB], amax[NB];
static uint32_t over[256];
static uint8_t scales_want[NB], scales[NB];
static size_t under_want, count_want;

/* Magnitudes over many binades per block (its own range), zeros, values
 * that vanish below the scale, and one all-zero block. */
static void fill(uint64_t seed)
{
	for (size_t i = 0; i < NE; i++) {
		uint32_t r = rng_bits(seed, i), b = (uint32_t)(i / BS);
		float v = ldexpf((float)(r >> 9) * 0x1p-23f + 1.0f, (int)(b * 7 % 60) - 30 - (int)(r % 24));
		in[i] = b == 3 || r % 9 == 0 ? 0.0f : r & 1 ? -v : v;
	}
}

/* The reference: codes and scales from quant_bulk (portable), values and
 * counts by their definitions. */
static void reference(const quant_opts *o)
{
	const quant_info *q = quant_get(o->fmt);
	const fmt_info *ef = fmt_get(q->elem);
	uint8_t codes[NE];
	size_t bad;
	ck_assert_int_eq(quant_bulk(FMT_SIMD_PORTABLE, o, 1.0f, 0, codes, scales_want, in, NE, &bad), MP_OK);
	size_t nvals = (size_t)1 << ef->width;
	for (size_t c = 0; c < nvals; c++)
		val[c] = (float)fmt_to_double(ef, (uint32_t)c);
	for (uint32_t k = 0; k < 256; k++) {
		sval[k] = k == 255 ? NAN : ldexpf(1.0f, (int)k - 127);
		over[k] = k << 23 | 0x400000u;   /* 1.5 x 2^(k - 127): a fair share of each block counts */
	}
	/* and an element of each block exactly at its block's (not above) */
	for (size_t b = 0; b < NB; b++)
		if (in[b * BS + b % BS] != 0)
			over[scales_want[b]] = f2u(in[b * BS + b % BS]) & 0x7fffffffu;
	under_want = count_want = 0;
	for (size_t b = 0; b < NB; b++) {
		uint32_t am = 0;
		for (size_t i = b * BS; i < (b + 1) * BS; i++) {
			double v = fmt_to_double(ef, codes[i]) * ldexp(1.0, scales_want[b] - 127);
			want[i] = (float)v;
			uint32_t a = f2u(in[i]) & 0x7fffffffu;
			under_want += in[i] != 0 && want[i] == 0;
			count_want += a > over[scales_want[b]];
			am = a > am ? a : am;
		}
		amax_want[b] = u2f(am);
	}
}

static void check_rows(const char *what, size_t done, const quant_fused_stats *fs)
{
	ck_assert_msg(done == NE, "%s: %zu done", what, done);
	for (size_t i = 0; i < NE; i++)
		ck_assert_msg(f2u(out[i]) == f2u(want[i]), "%s: element %zu: %08x, want %08x", what, i, f2u(out[i]),
		              f2u(want[i]));
	ck_assert_msg(memcmp(scales, scales_want, NB) == 0, "%s: scales", what);
	ck_assert_msg(memcmp(amax, amax_want, sizeof amax) == 0, "%s: amax", what);
	ck_assert_msg(fs->under == under_want && fs->count == count_want, "%s: under %zu count %zu, want %zu %zu", what,
	              fs->under, fs->count, under_want, count_want);
}

/* Block j of in as column j of cin (BS rows, stride LD); the columns past
 * NB hold a marker that must stay. */
static void to_columns(void)
{
	for (size_t i = 0; i < BS * LD; i++)
		cin[i] = cout[i] = -7.0f;
	for (size_t j = 0; j < NB; j++)
		for (size_t i = 0; i < BS; i++)
			cin[i * LD + j] = in[j * BS + i];
}

static void check_cols(const char *what, size_t h, const quant_fused_stats *fs)
{
	for (size_t i = 0; i < BS; i++)
		for (size_t j = 0; j < LD; j++) {
			uint32_t g = f2u(cout[i * LD + j]);
			uint32_t w = j >= NB || i >= h ? f2u(-7.0f) : f2u(want[j * BS + i]);
			ck_assert_msg(g == w, "%s: row %zu column %zu: %08x, want %08x", what, i, j, g, w);
		}
	ck_assert_msg(memcmp(scales, scales_want, NB) == 0, "%s: scales", what);
	ck_assert_msg(memcmp(amax, amax_want, sizeof amax) == 0, "%s: amax", what);
	ck_assert_msg(fs->under == under_want && fs->count == count_want, "%s: under %zu count %zu, want %zu %zu", what,
	              fs->under, fs->count, under_want, count_want);
}

static const quant_id ids[] = { QUANT_MXFP8_E4M3, QUANT_MXFP8_E5M2, QUANT_MXFP6_E3M2, QUANT_MXFP4 };
static const quant_rule rules[] = { QUANT_RULE_OCP, QUANT_RULE_CEIL, QUANT_RULE_EVEN };

/* Every format, rule and path, rows and columns, from in apart and in place. */
START_TEST(fused_as_two_passes)
{
	quant_id id = ids[_i % 4];
	quant_rule rule = rules[_i / 4];
	const quant_info *q = quant_get(id);
	quant_opts o = { .fmt = id, .rule = rule, .mode = FMT_RNE, .block = BS };
	fill(100 + (uint64_t)_i);
	reference(&o);
	quant_mx_rule rr = quant_mx_rule_of(q, rule);
	quant_elem_enc enc = quant_elem_enc_of(q->elem);
	const quant_mx_tabs t = { .sval = sval, .over = over };
	uint32_t work[3 * NB];
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!fmt_simd_available((fmt_simd)p))
			continue;
		const quant_kernels *K = quant_kernels_of((fmt_simd)p);
		char what[96];
		snprintf(what, sizeof what, "%s %s rows, path %s", q->name, quant_rule_name(rule), fmt_simd_name((fmt_simd)p));
		quant_fused_stats fs = { .scales = scales, .amax = amax };
		check_rows(what, K->mx_rne_rows(out, in, NE, BS, &rr, &enc, &t, &fs), &fs);
		memcpy(out, in, sizeof out);
		fs = (quant_fused_stats){ .scales = scales, .amax = amax };
		check_rows(what, K->mx_rne_rows(out, out, NE, BS, &rr, &enc, &t, &fs), &fs);
		snprintf(what, sizeof what, "%s %s columns, path %s", q->name, quant_rule_name(rule),
		         fmt_simd_name((fmt_simd)p));
		to_columns();
		fs = (quant_fused_stats){ .scales = scales, .amax = amax, .work = work };
		ck_assert(K->mx_rne_cols(cout, cin, BS, NB, LD, &rr, &enc, &t, &fs));
		check_cols(what, BS, &fs);
		memcpy(cout, cin, sizeof cout);
		fs = (quant_fused_stats){ .scales = scales, .amax = amax, .work = work };
		ck_assert(K->mx_rne_cols(cout, cout, BS, NB, LD, &rr, &enc, &t, &fs));
		check_cols(what, BS, &fs);
	}
	/* the public entries, on the best path */
	quant_fused_stats fs = { .scales = scales, .amax = amax };
	size_t done;
	ck_assert_int_eq(quant_mx_rne_rows(out, in, NE, &o, &t, &fs, &done), MP_OK);
	check_rows("quant_mx_rne_rows", done, &fs);
	to_columns();
	fs = (quant_fused_stats){ .scales = scales, .amax = amax, .work = work };
	ck_assert_int_eq(quant_mx_rne_cols(cout, cin, BS, NB, LD, &o, &t, &fs), MP_OK);
	check_cols("quant_mx_rne_cols", BS, &fs);
}
END_TEST

/* A strip shorter than the block: its missing rows count as zeros, which
 * is the reference's block with those elements 0. */
START_TEST(short_strip)
{
	quant_opts o = { .fmt = QUANT_MXFP8_E4M3, .rule = QUANT_RULE_CEIL, .mode = FMT_RNE, .block = BS };
	fill(7);
	for (size_t i = 0; i < NE; i++)
		if (i % BS >= 21)
			in[i] = 0.0f;
	reference(&o);
	to_columns();
	uint32_t work[3 * NB];
	const quant_mx_tabs t = { .sval = sval, .over = over };
	quant_fused_stats fs = { .scales = scales, .amax = amax, .work = work };
	ck_assert_int_eq(quant_mx_rne_cols(cout, cin, 21, NB, LD, &o, &t, &fs), MP_OK);
	check_cols("21 rows of 32", 21, &fs);
}
END_TEST

/* An inf or NaN: rows stop at its block (those before done, the rest
 * unwritten); columns write nothing. */
START_TEST(nonfinite)
{
	quant_opts o = { .fmt = QUANT_MXFP8_E4M3, .rule = QUANT_RULE_OCP, .mode = FMT_RNE, .block = BS };
	fill(8);
	reference(&o);
	const quant_mx_tabs t = { .sval = sval, .over = over };
	for (int k = 0; k < 2; k++) {
		/* in the third group of 8; in the last, after five of its blocks
		 * (done one by one once the group is refused) */
		size_t at = k ? 17 * BS + 5 : 37 * BS + 31;
		float keep = in[at];
		in[at] = k ? NAN : -INFINITY;
		for (size_t i = 0; i < NE; i++)
			out[i] = -7.0f;
		quant_fused_stats fs = { .scales = scales, .amax = amax };
		size_t done;
		ck_assert_int_eq(quant_mx_rne_rows(out, in, NE, &o, &t, &fs, &done), MP_EINVAL);
		ck_assert_uint_eq(done, at / BS * BS);
		for (size_t i = 0; i < NE; i++)
			ck_assert_msg(f2u(out[i]) == f2u(i < done ? want[i] : -7.0f), "element %zu", i);
		to_columns();
		uint32_t work[3 * NB];
		fs = (quant_fused_stats){ .scales = scales, .amax = amax, .work = work };
		ck_assert_int_eq(quant_mx_rne_cols(cout, cin, BS, NB, LD, &o, &t, &fs), MP_EINVAL);
		for (size_t i = 0; i < BS * LD; i++)
			ck_assert(f2u(cout[i]) == f2u(-7.0f));
		in[at] = keep;
	}
}
END_TEST

/* What the fused casts do not do, refused before anything is written. */
START_TEST(refusals)
{
	const quant_mx_tabs t = { .sval = sval, .over = over };
	uint32_t work[3 * NB];
	quant_fused_stats fs = { .scales = scales, .amax = amax, .work = work };
	quant_opts o = { .fmt = QUANT_MXFP8_E4M3, .rule = QUANT_RULE_OCP, .mode = FMT_RNE, .block = BS };
	size_t done = 99;
	ck_assert_int_eq(quant_mx_rne_cols(cout, cin, BS, 12, LD, &o, &t, &fs), MP_EUNSUPPORTED);   /* 12 columns */
	ck_assert_int_eq(quant_mx_rne_cols(cout, cin, BS + 1, NB, LD, &o, &t, &fs), MP_EUNSUPPORTED);
	ck_assert_int_eq(quant_mx_rne_cols(cout, cin, 0, NB, LD, &o, &t, &fs), MP_EUNSUPPORTED);
	ck_assert_int_eq(quant_mx_rne_cols(cout, cin, BS, NB, NB - 8, &o, &t, &fs), MP_EUNSUPPORTED);
	ck_assert_int_eq(quant_mx_rne_rows(out, in, NE - 8, &o, &t, &fs, &done), MP_EUNSUPPORTED);
	ck_assert_uint_eq(done, 0);
	o.mode = FMT_SR;
	ck_assert_int_eq(quant_mx_rne_rows(out, in, NE, &o, &t, &fs, &done), MP_EUNSUPPORTED);
	o = (quant_opts){ .fmt = QUANT_MXINT8, .rule = QUANT_RULE_OCP, .mode = FMT_RNE, .block = BS };
	ck_assert_int_eq(quant_mx_rne_rows(out, in, NE, &o, &t, &fs, &done), MP_EUNSUPPORTED);
	o = (quant_opts){ .fmt = QUANT_NVFP4, .mode = FMT_RNE, .block = 16 };
	ck_assert_int_eq(quant_mx_rne_rows(out, in, NE, &o, &t, &fs, &done), MP_EUNSUPPORTED);
	o = (quant_opts){ .fmt = QUANT_MXFP8_E4M3, .rule = QUANT_RULE_OCP, .mode = FMT_RNE, .block = 20 };
	ck_assert_int_eq(quant_mx_rne_rows(out, in, 40 * 20, &o, &t, &fs, &done), MP_EUNSUPPORTED);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quant_fused");
	TCase *tc = tcase_create("quant_fused");
	tcase_add_loop_test(tc, fused_as_two_passes, 0, 12);
	tcase_add_test(tc, short_strip);
	tcase_add_test(tc, nonfinite);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
