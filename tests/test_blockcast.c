/* train/blockcast.c and the block recipes of train/fp8scale.c: every
 * expected value is worked out by hand in the comments (a block's amax, its
 * scale by the recipe's rule, each element rounded to the element format),
 * on small matrices cut into row, column and square blocks; partial blocks,
 * non-finite inputs, SR's mean, the Hadamard transform, and the recipes
 * inside a few training steps. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"
#include "fmt/decode.h"
#include "train/blockcast.h"
#include "train/data.h"
#include "train/fp8scale.h"
#include "train/policy.h"
#include "train/train.h"
#include "testutil.h"

static block_cast_cfg fp32_cfg(size_t br, size_t bc, bool pow2)
{
	return (block_cast_cfg){ .kind = CAST_SCALING_BLOCK, .elem = FMT_E4M3, .br = br, .bc = bc, .pow2 = pow2 };
}

static void expect(const float *got, const float *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i] || (isnan(got[i]) && isnan(want[i])), "element %zu: %.9g, expected %.9g",
		              i, (double)got[i], (double)want[i]);
}

static block_cast_stat cast(float *x, size_t rows, size_t cols, block_cast_cfg c)
{
	block_scratch s = { 0 };
	block_cast_stat st;
	ck_assert_int_eq(block_cast(x, rows, cols, &c, &s, &st), MP_OK);
	block_scratch_free(&s);
	return st;
}

/* A cast down the columns is the cast of the transpose along its rows: the
 * same blocks, the same scales, the same elements (RNE: no random bits whose
 * order could differ). On shapes whose sides are no multiple of 4 or of
 * the block (37 x 13, 32 x 6, 5 x 9), the column path's strip transpose,
 * its edges and its padding against the row path, which needs none. */
START_TEST(columns_are_the_transposed_rows)
{
	static const size_t shapes[][2] = { { 37, 13 }, { 32, 6 }, { 5, 9 }, { 64, 12 } };
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		size_t R = shapes[k][0], C = shapes[k][1];
		float x[64 * 13], xt[64 * 13];
		for (size_t i = 0; i < R * C; i++) {
			/* values of every size, some zero, a few large */
			float v = (float)((i * 2654435761u) % 1000) / 37.0f - 13.0f;
			x[i] = i % 11 == 0 ? 0.0f : i % 17 == 0 ? v * 300.0f : v;
		}
		for (size_t r = 0; r < R; r++)
			for (size_t c = 0; c < C; c++)
				xt[c * R + r] = x[r * C + c];
		for (int kind = 0; kind < 2; kind++) {
			size_t b = kind ? 16 : 32;
			block_cast_cfg col = { .kind = kind ? CAST_SCALING_NVFP4 : CAST_SCALING_MX,
				               .elem = kind ? FMT_E2M1 : FMT_E4M3, .rule = QUANT_RULE_CEIL, .mode = FMT_RNE,
				               .br = b, .bc = 1 };
			block_cast_cfg row = col;
			row.br = 1;
			row.bc = b;
			float a[64 * 13], t[64 * 13];
			memcpy(a, x, R * C * sizeof *a);
			memcpy(t, xt, R * C * sizeof *t);
			block_cast_stat sa = cast(a, R, C, col), st = cast(t, C, R, row);
			for (size_t r = 0; r < R; r++)
				for (size_t c = 0; c < C; c++)
					ck_assert_msg(a[r * C + c] == t[c * R + r], "%zux%zu kind %d (%zu,%zu): %a against %a", R, C,
					              kind, r, c, (double)a[r * C + c], (double)t[c * R + r]);
			ck_assert(sa.underflow == st.underflow && sa.overflow == st.overflow && sa.amax == st.amax);
		}
	}
}
END_TEST

/* The reference of an MX or nvfp4 cast of x (R x C) in blocks of br x bc:
 * the block-ordered copy built element by element (zeros past the edge),
 * one quant_bulk call over the whole of it on the portable path, each
 * element decoded by quant_decode (exact) and rounded once to fp32, and
 * the statistics by their definitions: underflow a nonzero x cast to 0,
 * overflow |x| past thr x the block's scale (at it, tie_over), amax the
 * largest |x| and scale the multiplier 1 / scale of the first block
 * holding it. The cast under test encodes and decodes in chunks and, down
 * the columns, strip by strip; every bit must be the one-call result. */
static block_cast_stat reference_cast(const float *x, float *out, size_t R, size_t C, const block_cast_cfg *c)
{
	quant_id id = c->kind == CAST_SCALING_NVFP4 ? QUANT_NVFP4 : c->elem == FMT_E5M2 ? QUANT_MXFP8_E5M2
	                                                                            : QUANT_MXFP8_E4M3;
	const quant_info *q = quant_get(id);
	size_t br = c->br, bc = c->bc, len = br * bc, nr = (R + br - 1) / br, nc = (C + bc - 1) / bc, nb = nr * nc;
	size_t n = nb * len, bad;
	float *blk = calloc(n, sizeof *blk);
	uint8_t *el = malloc(n), *sc = malloc(nb);
	ck_assert(blk && el && sc);
	for (size_t r = 0; r < R; r++)
		for (size_t k = 0; k < C; k++)
			blk[((r / br) * nc + k / bc) * len + (r % br) * bc + k % bc] = x[r * C + k];
	float s_t = 1.0f;
	if (q->nvfp4)
		ck_assert_int_eq(quant_bulk_tensor_scale(&s_t, blk, n, &bad), MP_OK);
	quant_opts o = { .fmt = id, .rule = c->rule, .mode = c->mode, .seed = c->seed, .block = len };
	ck_assert_int_eq(quant_bulk(FMT_SIMD_PORTABLE, &o, s_t, 0, el, sc, blk, n, &bad), MP_OK);
	double thr;
	bool tie;
	quant_overflow_threshold(fmt_get(q->elem), &thr, &tie);
	block_cast_stat st = { .n = R * C };
	for (size_t b = 0; b < nb; b++) {
		double scale = q->nvfp4 ? fmt_to_double(fmt_get(FMT_E4M3), sc[b]) * (double)s_t : ldexp(1.0, sc[b] - 127);
		float am = 0;
		for (size_t e = b * len; e < (b + 1) * len; e++) {
			double a = fabs((double)blk[e]), t = thr * scale;
			float v = (float)quant_decode(q, el[e], sc[b], s_t);
			st.underflow += blk[e] != 0 && v == 0;
			st.overflow += scale > 0 && (a > t || (tie && a == t));
			am = fabsf(blk[e]) > am ? fabsf(blk[e]) : am;
			blk[e] = v;
		}
		if (am > st.amax || st.scale == 0) {
			st.amax = am;
			st.scale = scale > 0 ? (float)(1.0 / scale) : 0.0f;
		}
	}
	for (size_t r = 0; r < R; r++)
		for (size_t k = 0; k < C; k++)
			out[r * C + k] = blk[((r / br) * nc + k / bc) * len + (r % br) * bc + k % bc];
	free(blk);
	free(el);
	free(sc);
	return st;
}

/* MX and nvfp4 casts (rows, columns; RNE and nvfp4's SR) of tensors large
 * enough to span many chunks and column strips, sides no multiple of the
 * block or of 8, against reference_cast; from a separate source (the
 * trainer's use) and in place. */
START_TEST(chunked_casts_match_one_call)
{
	/* sides a multiple of 8 (40, 264, 1032) take MX rne's fused column path */
	static const size_t shapes[][2] = { { 300, 260 }, { 2048, 40 }, { 17, 1030 }, { 300, 264 }, { 45, 1032 } };
	static const struct { cast_scaling k; fmt_id e; size_t b; fmt_mode m; quant_rule r; } kinds[] = {
		{ CAST_SCALING_MX, FMT_E4M3, 32, FMT_RNE, QUANT_RULE_CEIL },
		{ CAST_SCALING_MX, FMT_E5M2, 32, FMT_RNE, QUANT_RULE_CEIL },
		{ CAST_SCALING_MX, FMT_E4M3, 32, FMT_RNE, QUANT_RULE_OCP },
		{ CAST_SCALING_MX, FMT_E5M2, 32, FMT_RNE, QUANT_RULE_RCEIL },
		{ CAST_SCALING_NVFP4, FMT_E2M1, 16, FMT_RNE, QUANT_RULE_CEIL },
		{ CAST_SCALING_NVFP4, FMT_E2M1, 16, FMT_SR, QUANT_RULE_CEIL },
	};
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		size_t R = shapes[k][0], C = shapes[k][1], n = R * C;
		float *x = malloc(n * sizeof *x), *got = malloc(n * sizeof *x), *want = malloc(n * sizeof *x);
		ck_assert(x && got && want);
		for (size_t i = 0; i < n; i++) {
			/* magnitudes over many binades, some zeros, a few tiny ones that
			 * underflow, and e4m3's overflow threshold 464 x 2^j exactly (a
			 * block's amax there: its scale 2^j under ocp, the tie counted) */
			float v = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
			x[i] = i % 13 == 0 ? 0.0f : i % 29 == 0 ? v * 1e-6f : v * (float)(1u << (i % 9));
			if (i % 97 == 0)
				x[i] = ldexpf(i % 2 ? 464.0f : -464.0f, (int)(i % 5));
		}
		for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++)
			for (int cols = 0; cols < 2; cols++) {
				block_cast_cfg c = { .kind = kinds[j].k, .elem = kinds[j].e, .rule = kinds[j].r,
					             .mode = kinds[j].m, .seed = 12345, .br = cols ? kinds[j].b : 1,
					             .bc = cols ? 1 : kinds[j].b };
				block_cast_stat ws = reference_cast(x, want, R, C, &c), gs;
				block_scratch s = { 0 };
				ck_assert_int_eq(block_cast_from(x, got, R, C, &c, &s, &gs), MP_OK);
				for (size_t i = 0; i < n; i++)
					ck_assert_msg(memcmp(&got[i], &want[i], 4) == 0, "%zux%zu kind %zu cols %d [%zu]: %a, expected %a",
					              R, C, j, cols, i, (double)got[i], (double)want[i]);
				ck_assert_uint_eq(gs.underflow, ws.underflow);
				ck_assert_uint_eq(gs.overflow, ws.overflow);
				ck_assert(gs.amax == ws.amax && gs.scale == ws.scale && gs.n == n);
				memcpy(got, x, n * sizeof *got);
				ck_assert_int_eq(block_cast(got, R, C, &c, &s, &gs), MP_OK);
				ck_assert_int_eq(memcmp(got, want, n * sizeof *got), 0);
				block_scratch_free(&s);
			}
		free(x);
		free(got);
		free(want);
	}
}
END_TEST

/* An inf deep inside a tensor of many chunks and strips: its block (32
 * elements of one column, rows 160..191) NaN, every other block as the
 * reference cast of the tensor with that element 0 (RNE: blocks cast
 * alone); nvfp4 (one tensor scale): all NaN. Columns 260 and 264 (the
 * fused column path, its strip with the inf reordered instead). */
START_TEST(chunked_casts_spoil_one_block)
{
	size_t R = 300, C = _i ? 264 : 260, n = R * C, at = 170 * C + 77;
	float *x = malloc(n * sizeof *x), *got = malloc(n * sizeof *x), *want = malloc(n * sizeof *x);
	ck_assert(x && got && want);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
	for (int cols = 0; cols < 2; cols++) {
		block_cast_cfg c = { .kind = CAST_SCALING_MX, .elem = FMT_E4M3, .rule = QUANT_RULE_CEIL, .mode = FMT_RNE,
			             .br = cols ? 32 : 1, .bc = cols ? 1 : 32 };
		x[at] = 0.0f;
		(void)reference_cast(x, want, R, C, &c);
		x[at] = INFINITY;
		block_scratch s = { 0 };
		block_cast_stat gs;
		ck_assert_int_eq(block_cast_from(x, got, R, C, &c, &s, &gs), MP_OK);
		ck_assert(isnan(gs.amax));
		for (size_t i = 0; i < n; i++) {
			size_t r = i / C, k = i % C;
			bool spoilt = cols ? k == 77 && r / 32 == 170 / 32 : r == 170 && k / 32 == 77 / 32;
			ck_assert_msg(spoilt ? isnan(got[i]) : memcmp(&got[i], &want[i], 4) == 0, "cols %d [%zu]: %a, expected %a",
			              cols, i, (double)got[i], (double)want[i]);
		}
		memcpy(got, x, n * sizeof *got);   /* in place: the strip with the inf read before it is written */
		ck_assert_int_eq(block_cast(got, R, C, &c, &s, &gs), MP_OK);
		for (size_t i = 0; i < n; i++) {
			size_t r = i / C, k = i % C;
			bool spoilt = cols ? k == 77 && r / 32 == 170 / 32 : r == 170 && k / 32 == 77 / 32;
			ck_assert(spoilt ? isnan(got[i]) : memcmp(&got[i], &want[i], 4) == 0);
		}
		c = (block_cast_cfg){ .kind = CAST_SCALING_NVFP4, .elem = FMT_E2M1, .mode = FMT_SR, .br = cols ? 16 : 1,
			              .bc = cols ? 1 : 16 };
		ck_assert_int_eq(block_cast_from(x, got, R, C, &c, &s, &gs), MP_OK);
		for (size_t i = 0; i < n; i++)
			ck_assert(isnan(got[i]));
		block_scratch_free(&s);
	}
	free(x);
	free(got);
	free(want);
}
END_TEST

START_TEST(fp32_rows)
{
	/* 1x4 blocks of a 2x6 matrix, the last block of each row 2 wide.
	 * (0,0..3): amax 3, 448/3 = 149.3 -> power of two 128: 3*128 = 384 and
	 * 1.5*128 = 192 and -2*128 = -256 are E4M3 values; 0.1*128 = 12.8 lies
	 * in [8,16), spacing 1 -> 13: 13/128. (0,4..5): amax 0.5 -> 896 -> 512:
	 * 256 and 128 exact. (1,0..3): all zero, scale 1. (1,4..5): amax 0.75
	 * -> 597.3 -> 512: -384 exact; 1e-6*512 = 5.1e-4 is below half the
	 * smallest subnormal 2^-9: 0, an underflow. */
	float x[12] = { 3, 1.5f, 0.1f, -2, 0.5f, 0.25f, 0, 0, 0, 0, 1e-6f, -0.75f };
	const float want[12] = { 3, 1.5f, 13.0f / 128, -2, 0.5f, 0.25f, 0, 0, 0, 0, 0, -0.75f };
	block_cast_stat st = cast(x, 2, 6, fp32_cfg(1, 4, true));
	expect(x, want, 12);
	ck_assert(st.amax == 3 && st.scale == 128 && st.overflow == 0 && st.underflow == 1 && st.n == 12);

	/* without pow2: s = fp32(448/3); 3*s rounds to 448 in E4M3, 0.1*s =
	 * 14.93 to 15; each divided back by s */
	float y[4] = { 3, 1.5f, 0.1f, -2 };
	float s = 448.0f / 3.0f;
	st = cast(y, 1, 4, fp32_cfg(1, 4, false));
	ck_assert(y[0] == 448 / s && y[2] == 15 / s && st.scale == s);
	/* 1.5*s = 224 (E4M3: [128,256) spacing 16 -> 224), -2*s = -298.7 -> -288 */
	ck_assert(y[1] == 224 / s && y[3] == -288 / s);
}
END_TEST

START_TEST(fp32_columns_and_squares)
{
	/* [[3,-2],[0.1,1.5],[0.5,-0.75],[0.25,1e-6]] */
	const float m[8] = { 3, -2, 0.1f, 1.5f, 0.5f, -0.75f, 0.25f, 1e-6f };
	float x[8];
	/* 2x1 blocks: column 0 rows 0-1 amax 3 -> 128 (0.1 -> 13/128); rows
	 * 2-3 amax 0.5 -> 512, exact. Column 1 rows 0-1 amax 2 -> 224 -> 128,
	 * exact; rows 2-3 amax 0.75 -> 512: 1e-6 underflows. */
	memcpy(x, m, sizeof x);
	block_cast_stat st = cast(x, 4, 2, fp32_cfg(2, 1, true));
	const float cols[8] = { 3, -2, 13.0f / 128, 1.5f, 0.5f, -0.75f, 0.25f, 0 };
	expect(x, cols, 8);
	ck_assert(st.underflow == 1 && st.amax == 3);
	/* 2x2 blocks: rows 0-1 amax 3 -> 128; rows 2-3 amax 0.75 -> 512 */
	memcpy(x, m, sizeof x);
	cast(x, 4, 2, fp32_cfg(2, 2, true));
	expect(x, cols, 8);
	/* one 128x128 block over the whole 4x2: amax 3 -> 128 for all; 0.5,
	 * 0.25, 0.75 exact; 1e-6*128 = 1.3e-4, below 2^-10: 0 */
	memcpy(x, m, sizeof x);
	st = cast(x, 4, 2, fp32_cfg(128, 128, true));
	expect(x, cols, 8);
	ck_assert(st.scale == 128);
}
END_TEST

START_TEST(mx_rules)
{
	/* 1x4 blocks of {500, 1, 0, 0 | 0.1, 0.2, 0.3, 0.4}, E4M3.
	 * ceil: X = 2^ceil(log2(500/448)) = 2: 250 in [128,256) spacing 16 ->
	 * 256: 512; 1/2 = 0.5 exact. Block 2: log2(0.4/448) = -10.1 -> X =
	 * 2^-10: 409.6 -> 416, 102.4 -> 104, 204.8 -> 208, 307.2 -> 320. */
	block_cast_cfg c = { .kind = CAST_SCALING_MX, .elem = FMT_E4M3, .br = 1, .bc = 4, .rule = QUANT_RULE_CEIL };
	float x[8] = { 500, 1, 0, 0, 0.1f, 0.2f, 0.3f, 0.4f };
	block_cast_stat st = cast(x, 1, 8, c);
	const float ceil_want[8] = { 512, 1, 0, 0, 104.0f / 1024, 208.0f / 1024, 320.0f / 1024, 416.0f / 1024 };
	expect(x, ceil_want, 8);
	ck_assert(st.overflow == 0 && st.amax == 500 && st.scale == 0.5f);
	/* ocp: X = 2^(floor(log2 500) - 8) = 1: 500 saturates to 448 (an
	 * overflow: 500 > 448 * 1); block 2: 2^(floor(log2 0.4) - 8) = 2^-10 */
	c.rule = QUANT_RULE_OCP;
	float y[8] = { 500, 1, 0, 0, 0.1f, 0.2f, 0.3f, 0.4f };
	st = cast(y, 1, 8, c);
	const float ocp_want[8] = { 448, 1, 0, 0, 104.0f / 1024, 208.0f / 1024, 320.0f / 1024, 416.0f / 1024 };
	expect(y, ocp_want, 8);
	ck_assert(st.overflow == 1 && st.scale == 1);
	/* ocp, E4M3: 460 (below 464, half way to the next step 480) rounds to
	 * 448 unsaturated too: no overflow; 465 would round to 480: one */
	float w[8] = { 460, 1, 0, 0, 465, 1, 0, 0 };
	st = cast(w, 1, 8, c);
	ck_assert(w[0] == 448 && w[4] == 448 && st.overflow == 1);
	/* an inf spoils its block only: {inf,1,2,3} NaN (4 overflows); {1,2,3,4}:
	 * 2^ceil(log2(4/448)) = 2^-6, 64..256 exact */
	float z[8] = { INFINITY, 1, 2, 3, 1, 2, 3, 4 };
	c.rule = QUANT_RULE_CEIL;
	st = cast(z, 2, 4, c);
	const float z_want[8] = { NAN, NAN, NAN, NAN, 1, 2, 3, 4 };
	expect(z, z_want, 8);
	ck_assert(st.overflow == 4 && isnan(st.amax));
}
END_TEST

START_TEST(nvfp4_rule)
{
	/* three 1x16 blocks. Tensor amax 2688: s_t = 2688 / (448*6) = 1.
	 * A {2688, 1000}: s_b = e4m3(2688/6) = 448: 6 -> 2688; 1000/448 = 2.23
	 * -> e2m1 2 -> 896. B {6, 2.4, 0.2, -3.1}: s_b = 1: 6, 2, 0 (0.2 <
	 * 0.25: an underflow), -3. C {6.2}: s_b = e4m3(1.033) = 1: 6.2 -> 6,
	 * below 7 (half way to 8, where the grid would go on): rounding to
	 * nearest gives 6 anyway, no overflow. */
	float x[48] = { 0 };
	x[0] = 2688, x[1] = 1000;
	x[16] = 6, x[17] = 2.4f, x[18] = 0.2f, x[19] = -3.1f;
	x[32] = 6.2f;
	float want[48] = { 0 };
	want[0] = 2688, want[1] = 896;
	want[16] = 6, want[17] = 2, want[18] = 0, want[19] = -3;
	want[32] = 6;
	block_cast_cfg c = { .kind = CAST_SCALING_NVFP4, .elem = FMT_E2M1, .br = 1, .bc = 16 };
	block_cast_stat st = cast(x, 1, 48, c);
	expect(x, want, 48);
	ck_assert(st.amax == 2688 && st.scale == 1.0f / 448 && st.overflow == 0 && st.underflow == 1);
	/* a block far below the tensor's amax: amax 1e6 gives s_t = 1e6 / 2688 =
	 * 372; the block {0.001 .. 0.016} needs s_b = 0.016 / (6 * 372) = 7e-6,
	 * below half of E4M3's smallest subnormal 2^-9: s_b = 0, the block's 16
	 * elements are 0, all underflow and none overflows */
	float z[32] = { 1e6f };
	for (int i = 16; i < 32; i++)
		z[i] = 1e-3f * (float)(i - 15);
	st = cast(z, 1, 32, c);
	for (int i = 16; i < 32; i++)
		ck_assert(z[i] == 0);
	ck_assert(st.underflow == 16 && st.overflow == 0);
	/* a NaN anywhere spoils the tensor's scale: all NaN */
	float y[4] = { 1, NAN, 2, 3 };
	c.bc = 2;
	st = cast(y, 2, 2, c);
	ck_assert(isnan(y[0]) && isnan(y[3]) && isnan(st.amax));
	/* bad configurations */
	block_scratch s = { 0 };
	c.elem = FMT_E4M3;
	ck_assert_int_eq(block_cast(y, 2, 2, &c, &s, &st), MP_EINVAL);
	c = fp32_cfg(0, 4, true);
	ck_assert_int_eq(block_cast(y, 2, 2, &c, &s, &st), MP_EINVAL);
	block_scratch_free(&s);
}
END_TEST

START_TEST(nvfp4_sr_mean)
{
	/* blocks {6, 2.4 x 15}: s_t = 6/2688, s_b = e4m3(6 / (6 s_t)) = 448, so
	 * 2.4 stands at 2.4 / (448 s_t) = 2.4 in e2m1 units, between 2 and 3:
	 * SR gives 3 with probability 0.4. 15000 draws: the mean within 0.02
	 * of 2.4 (5 standard errors of sqrt(0.24 / 15000) = 0.004) and every
	 * value 2 or 3 */
	enum { NB = 1000 };
	static float x[NB * 16];
	for (size_t b = 0; b < NB; b++) {
		x[b * 16] = 6;
		for (int i = 1; i < 16; i++)
			x[b * 16 + i] = 2.4f;
	}
	block_cast_cfg c = { .kind = CAST_SCALING_NVFP4, .elem = FMT_E2M1, .br = 1, .bc = 16, .mode = FMT_SR,
		             .seed = 7 };
	cast(x, NB, 16, c);
	double sum = 0;
	for (size_t b = 0; b < NB; b++)
		for (int i = 1; i < 16; i++) {
			float v = x[b * 16 + i];
			ck_assert_msg(fabsf(v - 2) < 1e-5f || fabsf(v - 3) < 1e-5f, "block %zu: %g", b, (double)v);
			sum += v;
		}
	ck_assert_double_lt(fabs(sum / (NB * 15) - 2.4), 0.02);
}
END_TEST

START_TEST(hadamard)
{
	/* e_0 as a 16-token column: v H = row 0 of S H16 / 4; sign 0 of 0xa53c
	 * is + and row 0 of H16 is all ones: 1/4 everywhere. e_2: sign 2 is -
	 * (0x3c has bit 2), row 2 of H16 is (-1)^(bit 1 of j): -1/4 where bit 1
	 * of j is clear, +1/4 where it is set. */
	float e0[16] = { 1 }, e2[16] = { 0 };
	e2[2] = 1;
	block_rht16_rows(e0, 16, 1, QUANT_RHT_SIGNS);
	block_rht16_rows(e2, 16, 1, QUANT_RHT_SIGNS);
	for (int j = 0; j < 16; j++) {
		ck_assert(e0[j] == 0.25f);
		ck_assert(e2[j] == (j & 2 ? 0.25f : -0.25f));
	}
	/* every row: e_i with only sign i flipped gives -H16[i][j] / 4, with
	 * none flipped +H16[i][j] / 4; Sylvester's H16[i][j] = (-1)^popcount(i & j) */
	for (int i = 0; i < 16; i++)
		for (int flip = 0; flip < 2; flip++) {
			float e[16] = { 0 };
			e[i] = 1;
			block_rht16_rows(e, 16, 1, (uint16_t)(flip << i));
			for (int j = 0; j < 16; j++) {
				float h = __builtin_popcount((unsigned)(i & j)) & 1 ? -0.25f : 0.25f;
				ck_assert_msg(e[j] == (flip ? -h : h), "row %d flip %d column %d: %g", i, flip, j, (double)e[j]);
			}
		}
	/* H orthogonal: A^T B unchanged for 35 tokens (rows 32..34 untouched) */
	enum { T = 35, CA = 3, CB = 2 };
	float a[T * CA], b[T * CB];
	for (int i = 0; i < T * CA; i++)
		a[i] = (float)sin(0.7 * i + 0.1);
	for (int i = 0; i < T * CB; i++)
		b[i] = (float)cos(1.3 * i);
	double before[CA][CB] = { { 0 } }, after[CA][CB] = { { 0 } };
	for (int t = 0; t < T; t++)
		for (int i = 0; i < CA; i++)
			for (int j = 0; j < CB; j++)
				before[i][j] += (double)a[t * CA + i] * b[t * CB + j];
	float a34 = a[34 * CA];
	block_rht16_rows(a, T, CA, QUANT_RHT_SIGNS);
	block_rht16_rows(b, T, CB, QUANT_RHT_SIGNS);
	ck_assert(a[34 * CA] == a34);
	for (int t = 0; t < T; t++)
		for (int i = 0; i < CA; i++)
			for (int j = 0; j < CB; j++)
				after[i][j] += (double)a[t * CA + i] * b[t * CB + j];
	for (int i = 0; i < CA; i++)
		for (int j = 0; j < CB; j++)
			ck_assert_double_lt(fabs(after[i][j] - before[i][j]), 1e-5);
}
END_TEST

/* Casts x (rows, cols) as block 0's attn.c_attn tensor of role r through st. */
static void state_cast(fp8_state *st, fp8_role r, fp8_along along, uint64_t seed, float *x, size_t rows,
                       size_t cols)
{
	ck_assert_int_eq(fp8_state_cast_and_record(st, 0, fp8_tensor_index(0, 0, r), along, seed, NULL, x, rows, cols),
	                 MP_OK);
}

START_TEST(state_roles)
{
	fp8_state *st;
	fp8_opts o = { .scaling = CAST_SCALING_BLOCK, .fwd = FMT_E4M3, .bwd = FMT_E4M3, .H = 1, .pow2 = true,
		       .highp_last = 1 };
	ck_assert_int_eq(fp8_state_create(&st, 2, &o), MP_OK);
	ck_assert(fp8_state_blocked(st) && fp8_state_covers(st, 0) && !fp8_state_covers(st, 1));
	/* {{3, 0}, {0.5, 1e-4}}. As an input along its rows (1x128 tiles: one
	 * per row): row 1 amax 0.5 -> 512: 1e-4*512 = 0.0512 in [2^-5, 2^-4),
	 * spacing 2^-8 -> 13 * 2^-8, /512. As a weight (one 128x128 block):
	 * amax 3 -> 128: 1e-4*128 = 0.0128, subnormal, spacing 2^-9 -> 7 *
	 * 2^-9, /128. */
	float in[4] = { 3, 0, 0.5f, 1e-4f }, w[4] = { 3, 0, 0.5f, 1e-4f };
	state_cast(st, FP8_INPUT, FP8_ALONG_ROWS, 0, in, 2, 2);
	state_cast(st, FP8_WEIGHT, FP8_ALONG_ROWS, 0, w, 2, 2);
	ck_assert(in[3] == 13.0f / 256 / 512 && w[3] == 7.0f / 512 / 128);
	/* down the columns (128x1): column 1 {0, 1e-4} on its own, amax 1e-4 ->
	 * 4.48e6 -> 2^22: 1e-4 * 2^22 = 419.4 -> 416 (spacing 32), / 2^22 */
	float g[4] = { 3, 0, 0.5f, 1e-4f };
	state_cast(st, FP8_GRAD_OUTPUT, FP8_ALONG_COLS, 0, g, 2, 2);
	ck_assert(g[3] == 416.0f / 4194304.0f);
	fp8_state_step_end(st);
	fp8_tensor_stat s = fp8_state_stat(st, fp8_tensor_index(0, 0, FP8_WEIGHT));
	ck_assert(s.amax == 3 && s.scale == 128 && s.underflow_frac == 0);
	fp8_state_free(st);

	/* nvfp4: output gradients rounded stochastically, with the seed given */
	o = (fp8_opts){ .scaling = CAST_SCALING_NVFP4, .fwd = FMT_E2M1, .bwd = FMT_E2M1, .H = 1, .sr = true };
	ck_assert_int_eq(fp8_state_create(&st, 1, &o), MP_OK);
	float g1[64], g2[64], g3[64];
	for (int i = 0; i < 64; i++)
		g1[i] = g2[i] = g3[i] = (float)(1 + 0.37 * i);
	state_cast(st, FP8_GRAD_OUTPUT, FP8_ALONG_ROWS, 5, g1, 4, 16);
	state_cast(st, FP8_GRAD_OUTPUT, FP8_ALONG_ROWS, 5, g2, 4, 16);
	state_cast(st, FP8_GRAD_OUTPUT, FP8_ALONG_ROWS, 6, g3, 4, 16);
	ck_assert(!memcmp(g1, g2, sizeof g1) && memcmp(g1, g3, sizeof g1));
	fp8_state_free(st);
	/* fp4 formats only; fp8 refused, as is highp_last beyond L */
	o.fwd = FMT_E4M3;
	ck_assert_int_eq(fp8_state_create(&st, 1, &o), MP_EINVAL);
	o = (fp8_opts){ .scaling = CAST_SCALING_MX, .fwd = FMT_E4M3, .bwd = FMT_E4M3, .H = 1, .highp_last = 3 };
	ck_assert_int_eq(fp8_state_create(&st, 2, &o), MP_EINVAL);
}
END_TEST

/* What the statistics count. A weight in 1D blocks is cast twice, along
 * its rows (forward) and down its columns (input gradient), and both count;
 * a 2D weight's second cast gives the same bits and counts once. */
START_TEST(state_counts)
{
	fp8_state *st;
	/* mxfp8 (1x32, ceil rule, E4M3 emax 8): w (32x32) zero but w[0][0] =
	 * 2^10 and w[1][0] = 2^-10. Along the rows, row 1 holds only 2^-10:
	 * scale 2^-18, 2^8 exact. Down the columns, column 0's amax 2^10 gives
	 * the scale 2^2 and 2^-12 lies below half the smallest subnormal
	 * (2^-10): flushed. One flush in 2 x 1024 elements cast. */
	fp8_opts o = { .scaling = CAST_SCALING_MX, .fwd = FMT_E4M3, .bwd = FMT_E4M3, .H = 1,
		       .rule = QUANT_RULE_CEIL };
	ck_assert_int_eq(fp8_state_create(&st, 1, &o), MP_OK);
	static float w[32 * 32], w2[32 * 32];
	memset(w, 0, sizeof w);
	w[0] = 1024.0f;
	w[32] = 0x1p-10f;
	memcpy(w2, w, sizeof w);
	state_cast(st, FP8_WEIGHT, FP8_ALONG_ROWS, 0, w, 32, 32);
	ck_assert(w[32] == 0x1p-10f);
	state_cast(st, FP8_WEIGHT, FP8_ALONG_COLS, 0, w2, 32, 32);
	ck_assert(w2[32] == 0 && w2[0] == 1024.0f);
	fp8_state_step_end(st);
	fp8_tensor_stat s = fp8_state_stat(st, fp8_tensor_index(0, 0, FP8_WEIGHT));
	ck_assert_double_eq(s.underflow_frac, 1.0 / 2048);
	ck_assert_double_eq(fp8_state_underflow_frac(st), 1.0 / 2048);
	fp8_state_free(st);

	/* fp8-block: the weight {{3, 0}, {0, 1e-7}} in one 128x128 block, amax
	 * 3 -> scale 128: 1e-7 * 128 = 1.28e-5 < 2^-10 flushes, both ways. With
	 * an input {1, 2, 3, 4} that flushes nothing: 1 flush in 4 + 4
	 * elements, not 2 in 8 + 4. */
	o = (fp8_opts){ .scaling = CAST_SCALING_BLOCK, .fwd = FMT_E4M3, .bwd = FMT_E4M3, .H = 1, .pow2 = true };
	ck_assert_int_eq(fp8_state_create(&st, 1, &o), MP_OK);
	float sq[4] = { 3, 0, 0, 1e-7f }, sq2[4] = { 3, 0, 0, 1e-7f }, in[4] = { 1, 2, 3, 4 };
	state_cast(st, FP8_INPUT, FP8_ALONG_ROWS, 0, in, 2, 2);
	state_cast(st, FP8_WEIGHT, FP8_ALONG_ROWS, 0, sq, 2, 2);
	state_cast(st, FP8_WEIGHT, FP8_ALONG_COLS, 0, sq2, 2, 2);
	ck_assert(sq[3] == 0 && !memcmp(sq, sq2, sizeof sq));
	fp8_state_step_end(st);
	ck_assert_double_eq(fp8_state_underflow_frac(st), 1.0 / 8);
	ck_assert_double_eq(fp8_state_stat(st, fp8_tensor_index(0, 0, FP8_WEIGHT)).underflow_frac, 1.0 / 4);
	fp8_state_free(st);
}
END_TEST

/* mxfp8+block=N: the e8m0 blocks of the training casts follow the part.
 * A row {256, 0 x 15, 1.5 * 2^-10 x 16} as an input along its rows, E4M3,
 * ceil rule. One block of 32: X = 2^ceil(log2(256 / 448)) = 1, and 1.5 *
 * 2^-10 = 0.75 of e4m3's least subnormal 2^-9 rounds to 2^-9. Blocks of 16:
 * the second has X = 2^ceil(log2(1.5 * 2^-10 / 448)) = 2^ceil(-18.22) =
 * 2^-18, the element 384: exact. Blocks of 24: elements 16..23 share the
 * first block (2^-9), 24..31 the second (exact). */
START_TEST(mx_block_part)
{
	train_policy p;
	char err[256];
	ck_assert_int_eq(policy_from_name("mxfp8", &p), MP_OK);
	ck_assert_int_eq(policy_set(&p, "block", "0", err, sizeof err), MP_EINVAL);
	ck_assert_int_eq(policy_set(&p, "block", "65537", err, sizeof err), MP_EINVAL);
	ck_assert_int_eq(policy_set(&p, "block", "16", err, sizeof err), MP_OK);
	ck_assert(p.mx_block == 16 && !strcmp(p.name, "mxfp8+block=16"));
	char d[512];
	policy_describe(&p, d, sizeof d);
	ck_assert_msg(strstr(d, "an e8m0 scale per 16 (ceil rule)"), "%s", d);
	ck_assert_int_eq(policy_from_name("fp8-current", &p), MP_OK);
	ck_assert_int_eq(policy_set(&p, "block", "16", err, sizeof err), MP_EUNSUPPORTED);
	static const size_t sizes[] = { 0, 32, 16, 24 };
	for (size_t z = 0; z < 4; z++) {
		fp8_state *st;
		fp8_opts o = { .scaling = CAST_SCALING_MX, .fwd = FMT_E4M3, .bwd = FMT_E4M3, .H = 1,
			       .rule = QUANT_RULE_CEIL, .mx_block = sizes[z] };
		ck_assert_int_eq(fp8_state_create(&st, 1, &o), MP_OK);
		float x[32] = { 256 };
		for (int i = 16; i < 32; i++)
			x[i] = 0x1.8p-10f;
		state_cast(st, FP8_INPUT, FP8_ALONG_ROWS, 0, x, 1, 32);
		size_t exact_from = sizes[z] == 16 ? 16 : sizes[z] == 24 ? 24 : 32;
		ck_assert(x[0] == 256);
		for (size_t i = 16; i < 32; i++)
			ck_assert_msg(x[i] == (i >= exact_from ? 0x1.8p-10f : 0x1p-9f), "block %zu: x[%zu] = %a", sizes[z], i,
			              (double)x[i]);
		fp8_state_free(st);
	}
}
END_TEST

/* Three steps of preset name (with policy changes key=value) on a tiny
 * model; the final loss. */
static double train_tiny(const char *name, const char *key, const char *value, bool check_scales)
{
	corpus data;
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 16, err, sizeof err) == MP_OK, "%s", err);
	train_config cfg = train_config_default();
	cfg.model = (gpt_config){ .V = 128, .T = 32, .C = 32, .L = 2, .NH = 2 };
	cfg.B = 4;
	cfg.t = 32;
	cfg.eval_every = 0;
	train_policy p;
	ck_assert_int_eq(policy_from_name(name, &p), MP_OK);
	if (key)
		ck_assert_int_eq(policy_set(&p, key, value, err, sizeof err), MP_OK);
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_OK);
	train_stats s;
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	ck_assert(isfinite(s.loss) && s.overflow_frac >= 0 && s.overflow_frac < 0.1);
	const fp8_state *fs = trainer_fp8(t);
	for (size_t i = 0; check_scales && i < fp8_state_count(fs); i++) {
		fp8_tensor_stat x = fp8_state_stat(fs, i);
		int e;
		bool covered = fp8_state_covers(fs, i / (FP8_LINEARS * FP8_ROLES));
		/* fp8-block and mxfp8: every scale a power of two, every amax > 0 */
		ck_assert_msg(!covered || (frexpf(x.scale, &e) == 0.5f && x.amax > 0), "%s: scale %g", x.name,
		              (double)x.scale);
	}
	double loss = s.loss;
	trainer_free(t);
	corpus_free(&data);
	return loss;
}

START_TEST(recipes_train)
{
	double block = train_tiny("fp8-block", NULL, NULL, true);
	double mx = train_tiny("mxfp8", NULL, NULL, true);
	double nv = train_tiny("nvfp4", NULL, NULL, false);
	/* each part of nvfp4 changes the numbers */
	ck_assert(train_tiny("nvfp4", "rht", "off", false) != nv);
	ck_assert(train_tiny("nvfp4", "2d", "off", false) != nv);
	ck_assert(train_tiny("nvfp4", "bf16-last", "0", false) != nv);
	ck_assert(train_tiny("fp8-block", "scale-pow2", "off", false) != block);
	ck_assert(train_tiny("mxfp8", "scale-rule", "ocp", false) != mx);
	/* within reach of each other after three steps from the same weights */
	ck_assert_double_lt(fabs(block - mx), 0.05);
	ck_assert_double_lt(fabs(nv - mx), 0.2);
}
END_TEST

int main(int argc, char **argv)
{
	testutil_fast_blas(argv);
	(void)argc;
	Suite *s = suite_create("blockcast");
	TCase *tc = tcase_create("blockcast");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fp32_rows);
	tcase_add_test(tc, columns_are_the_transposed_rows);
	tcase_add_test(tc, chunked_casts_match_one_call);
	tcase_add_loop_test(tc, chunked_casts_spoil_one_block, 0, 2);
	tcase_add_test(tc, fp32_columns_and_squares);
	tcase_add_test(tc, mx_rules);
	tcase_add_test(tc, nvfp4_rule);
	tcase_add_test(tc, nvfp4_sr_mean);
	tcase_add_test(tc, hadamard);
	tcase_add_test(tc, state_roles);
	tcase_add_test(tc, state_counts);
	tcase_add_test(tc, mx_block_part);
	tcase_add_test(tc, recipes_train);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
