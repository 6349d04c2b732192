/* The GPU trainer's kernel bodies (src/gpu/gpu_kernels.h), each run on the
 * host over its whole index range, against the CPU trainer's kernels in
 * layers.c (and, for the optimiser, the formulas of train.c's span_grads and
 * span_update re-derived here with fmt_bulk_quantize / fmt_bulk_accumulate).
 *
 * Shapes are small and odd where it matters: B=2, T=7 (odd, so the causal
 * edges are exercised), C=12, NH=3 (hs=4), V=20; attention also with C=18
 * (hs=6, whose scale 1/sqrt(6) is not a power of two).
 *
 * Tolerances (got vs ref, each tensor against its own largest magnitude
 * S = max|ref|):
 * - bit-exact where both sides do the same fp32 operations in the same
 *   order: the embeddings, their backward, the bias backward, the
 *   cross-entropy backward, the residual stream (SR included) and the
 *   optimiser bodies (which use MP_D* macros and MP_NO_CONTRACT so that no
 *   FMA contraction can change a bit; the oracles here are compiled without
 *   contraction too);
 * - fp32 paths: |got - ref| <= 1e-5 S. The CPU's AVX-512 paths use a
 *   polynomial exp (~1e-7 relative, vs libm's expf here), fused
 *   multiply-adds and 16-lane sums, and sgemm sums in its own order: each
 *   reduction of K <= 12 O(1) terms then differs by a few fp32 ulps
 *   (2^-24 ~ 6e-8) of S. Against S rather than |ref| because a value that
 *   cancels to near 0 (a centred LayerNorm output, a GELU derivative near
 *   its zero) keeps the absolute error of its terms. 1e-5 S is >= 50x the
 *   differences seen and ~1e5 below the error of a wrong index or term;
 * - low-precision paths (bf16, fp16 GEMM or reduction formats): both sides
 *   round the same intermediates, but an fp32 sum taken in a different
 *   order (sgemm vs the body's loop, 16 lanes vs serial) can land on the
 *   other side of a rounding boundary and flip one rounded intermediate by
 *   one ulp, which then propagates; so |got - ref| <= 4 * 2^-8 S, a few
 *   bf16 ulps (2^-8 relative is bf16's unit roundoff), still far below the
 *   O(1) error of a real mistake; and at most one element in 8 may differ
 *   at all (see expect_close).
 * Observed (GPU_KERNEL_VERBOSE=1 prints the worst error of each comparison): on an
 * AVX-512 machine every low-precision comparison is bit-identical; with
 * MIXPREC_SIMD=portable every comparison but the fp32 attention's (sgemm's
 * summation order) is. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "gpu/gpu_kernels.h"
#include "testutil.h"
#include "train/layers.h"
#include "util/rng.h"

#define B 2
#define T 7
#define C 12
#define NH 3
#define V 20
#define BT (B * T)
#define FP32_TOL 1e-5
#define LOWP_TOL (4 * 0x1p-8)

/* --- helpers --- */

static double urand(uint64_t *state)
{
	*state += 1;
	return (double)(rng_mix64(*state) >> 11) * 0x1p-52 - 1.0;
}

static void fill(float *f, size_t n, double scale, uint64_t *st)
{
	for (size_t i = 0; i < n; i++)
		f[i] = (float)(scale * urand(st));
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	ck_assert_ptr_nonnull(p);
	return p;
}

static float *fdup(const float *x, size_t n)
{
	float *p = xcalloc(n, sizeof *p);
	memcpy(p, x, n * sizeof *p);
	return p;
}


/* x rounded in place with fmt_bulk_quantize (fp32: untouched). */
static void quantize(float *x, size_t n, fmt_id f, fmt_mode mode, uint64_t seed, uint64_t index0)
{
	if (f == FMT_FP32)
		return;
	fmt_bulk_opts o = { .fmt = f, .mode = mode, .seed = seed, .index0 = index0 };
	ck_assert_int_eq(fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, n), MP_OK);
}

/* GPU_KERNEL_VERBOSE=1 prints the worst error of every comparison (to size the
 * tolerances). */
static int verbose(void)
{
	static int v = -1;
	if (v < 0)
		v = getenv("GPU_KERNEL_VERBOSE") != NULL;
	return v;
}

/* |got - ref| <= tol * max|ref| for every element; names the first element
 * that fails (what, index, expected, got). */
static void expect_close(const char *what, const float *got, const float *ref, size_t n, double tol)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s = fmax(s, fabs((double)ref[i]));
	ck_assert_msg(s > 0.0 && isfinite(s), "%s: reference is all zero or not finite", what);
	double worst = 0.0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)got[i] - (double)ref[i]);
		ck_assert_msg(e <= tol * s, "%s[%zu]: expected %.9g, got %.9g (error %.3g > %.3g = %.3g * max %.4g)",
		              what, i, (double)ref[i], (double)got[i], e, tol * s, tol, s);
		worst = fmax(worst, e);
	}
	if (verbose())
		fprintf(stderr, "# %-40s worst %.3g of max %.4g (%.3g of the tolerance)\n", what, worst, s,
		        worst / (tol * s));
	/* Low precision: a flipped rounding needs an fp32 sum within a few fp32
	 * ulps of a rounding boundary of the format (odds ~2^-14 per rounding
	 * for bf16), and it spreads at most over the row it feeds; so besides
	 * the size of the differences, at most one element in 8 may differ at
	 * all. This catches a mistake smaller than an ulp that is made on every
	 * element (a scale applied after the rounding instead of before). */
	if (tol > FP32_TOL) {
		size_t differ = 0;
		for (size_t i = 0; i < n; i++)
			differ += got[i] != ref[i];
		ck_assert_msg(differ <= n / 8 + 1, "%s: %zu of %zu elements differ (at most %zu may: a rare flipped rounding)",
		              what, differ, n, n / 8 + 1);
	}
}

/* Bit for bit (+0 and -0 differ; NaNs compare by pattern). */
static void expect_bits(const char *what, const float *got, const float *ref, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t a, b;
		memcpy(&a, &got[i], 4);
		memcpy(&b, &ref[i], 4);
		ck_assert_msg(a == b, "%s[%zu]: expected %.9g (0x%08x), got %.9g (0x%08x)", what, i, (double)ref[i],
		              (unsigned)b, (double)got[i], (unsigned)a);
	}
	if (verbose())
		fprintf(stderr, "# %-40s bit-identical (%zu elements)\n", what, n);
}

static void expect_dbits(const char *what, const double *got, const double *ref, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(memcmp(&got[i], &ref[i], sizeof got[i]) == 0, "%s[%zu]: expected %.17g, got %.17g", what, i,
		              ref[i], got[i]);
}

static const char *fmt_short(fmt_id f)
{
	switch (f) {
	case FMT_FP32: return "fp32";
	case FMT_BF16: return "bf16";
	case FMT_FP16: return "fp16";
	case FMT_E4M3: return "e4m3";
	default: return "other";
	}
}

/* Random tokens in [0, V), every one of the first few ids used at least
 * twice so that dwte sums several rows. */
static void fill_tokens(int *tok, size_t n, uint64_t *st)
{
	for (size_t i = 0; i < n; i++)
		tok[i] = (int)((urand(st) + 1.0) * 0.5 * V) % V;
	tok[0] = tok[3] = tok[n - 1] = 5;
}

/* --- embeddings --- */

/* resid fp32 (on = 0), bf16 RNE and bf16 SR: encoder_forward, plus the offset
 * by hand on the first k channels, then fmt_bulk_quantize; bit for bit (the
 * same fp32 adds in the same order, the same rounding). dexact cleared. */
static void check_encoder_forward(fmt_id f, fmt_mode mode, float offset, size_t k)
{
	uint64_t st = 11;
	int tok[BT];
	float wte[V * C], wpe[T * C];
	fill_tokens(tok, BT, &st);
	fill(wte, V * C, 1.0, &st);
	fill(wpe, T * C, 1.0, &st);
	float *ref = xcalloc(BT * C, sizeof *ref), *got = xcalloc(BT * C, sizeof *got);
	double *dexact = xcalloc(BT * C, sizeof *dexact);
	for (size_t i = 0; i < BT * C; i++)
		dexact[i] = 3.5;
	const uint64_t seed = 0x5eedull, index0 = 1000;
	encoder_forward(ref, tok, wte, wpe, B, T, C);
	for (size_t bt = 0; bt < BT; bt++)
		for (size_t c = 0; c < k; c++)
			ref[bt * C + c] += offset;
	quantize(ref, BT * C, f, mode, seed, index0);
	gpu_kernel_q q = gpu_kernel_q_of(f, mode);
	for (size_t i = 0; i < BT * C; i++)
		gpu_kernel_encoder_forward(i, got, dexact, tok, wte, wpe, T, C, offset, k, q, seed, index0);
	char what[64];
	snprintf(what, sizeof what, "encoder_forward %s%s off %g k %zu", fmt_short(f), mode == FMT_SR ? " SR" : "",
	         (double)offset, k);
	expect_bits(what, got, ref, BT * C);
	for (size_t i = 0; i < BT * C; i++)
		ck_assert_msg(dexact[i] == 0.0, "encoder_forward: dexact[%zu] = %g, not cleared", i, dexact[i]);
	free(ref);
	free(got);
	free(dexact);
}

START_TEST(test_encoder_forward)
{
	check_encoder_forward(FMT_FP32, FMT_RNE, 0.0f, 0);
	check_encoder_forward(FMT_FP32, FMT_RNE, 100.25f, 5);
	check_encoder_forward(FMT_BF16, FMT_RNE, 0.0f, 0);
	check_encoder_forward(FMT_BF16, FMT_RNE, 100.25f, 5);
	check_encoder_forward(FMT_BF16, FMT_SR, 100.25f, 5);
}
END_TEST

/* Accumulating (+=) into random gradients; the same adds in the same order
 * (b, t ascending) as encoder_backward: bit for bit. */
START_TEST(test_encoder_backward)
{
	uint64_t st = 22;
	int tok[BT];
	float dout[BT * C], dwte0[V * C], dwpe0[T * C];
	fill_tokens(tok, BT, &st);
	fill(dout, BT * C, 1.0, &st);
	fill(dwte0, V * C, 0.5, &st);
	fill(dwpe0, T * C, 0.5, &st);
	float *rte = fdup(dwte0, V * C), *rpe = fdup(dwpe0, T * C);
	float *gte = fdup(dwte0, V * C), *gpe = fdup(dwpe0, T * C);
	encoder_backward(rte, rpe, dout, tok, B, T, C);
	/* each token's positions in order, as gpu_trainer_impl.h's counting sort lists
	 * them (built here by scanning once per token) */
	int off[V + 1], pos[BT], np = 0;
	for (size_t v = 0; v < V; v++) {
		off[v] = np;
		for (size_t bt = 0; bt < BT; bt++)
			if ((size_t)tok[bt] == v)
				pos[np++] = (int)bt;
	}
	off[V] = np;
	ck_assert_int_eq(np, BT);
	for (size_t i = 0; i < V * C; i++)
		gpu_kernel_encoder_backward_wte(i, gte, dout, off, pos, C);
	for (size_t i = 0; i < T * C; i++)
		gpu_kernel_encoder_backward_wpe(i, gpe, dout, B, T, C);
	expect_bits("encoder_backward dwte", gte, rte, V * C);
	expect_bits("encoder_backward dwpe", gpe, rpe, T * C);
	free(rte);
	free(rpe);
	free(gte);
	free(gpe);
}
END_TEST

/* --- layer normalisation --- */

/* 64 rows (1 x 64 tokens): enough that a rounding missing from a
 * per-row statistic shows in more than the few elements a flip may change. */
#define LR 64

static void check_layernorm(fmt_id reduce)
{
	uint64_t st = 33 + (uint64_t)reduce;
	float inp[LR * C], w[C], bias[C], dout[LR * C], dinp0[LR * C], dw0[C], db0[C];
	/* row 0 carries an offset (the two-pass variance matters); every
	 * fourth row has a variance below eps (so eps and the rounding of
	 * v + eps matter), centred on 0 so that x - m does not cancel (a
	 * centred row of 1 + 1e-3 u would turn the CPU's different summation
	 * order for m into a 1e-5 relative error of the output, which is the
	 * conditioning of the input, not a fault of either kernel) */
	fill(inp, LR * C, 2.0, &st);
	for (size_t i = 0; i < LR * C; i++) {
		size_t row = i / C;
		if (row % 4 == 1)
			inp[i] *= 1e-3f;
		else
			inp[i] += row == 0 ? 50.0f : 0.5f;
	}
	fill(w, C, 1.0, &st);
	fill(bias, C, 1.0, &st);
	fill(dout, LR * C, 1.0, &st);
	fill(dinp0, LR * C, 0.5, &st);
	fill(dw0, C, 0.5, &st);
	fill(db0, C, 0.5, &st);
	double tol = reduce == FMT_FP32 ? FP32_TOL : LOWP_TOL;
	gpu_kernel_q r = gpu_kernel_q_of(reduce, FMT_RNE);
	const char *name = fmt_short(reduce);
	char what[64];

	float rout[LR * C], rmean[LR], rrstd[LR], gout[LR * C], gmean[LR], grstd[LR];
	layernorm_forward_q(rout, rmean, rrstd, inp, w, bias, 1, LR, C, reduce);
	for (size_t row = 0; row < LR; row++)
		gpu_kernel_layernorm_forward(row, gout, gmean, grstd, inp, w, bias, C, r);
	snprintf(what, sizeof what, "layernorm_forward %s out", name);
	expect_close(what, gout, rout, LR * C, tol);
	snprintf(what, sizeof what, "layernorm_forward %s mean", name);
	expect_close(what, gmean, rmean, LR, tol);
	snprintf(what, sizeof what, "layernorm_forward %s rstd", name);
	expect_close(what, grstd, rrstd, LR, tol);

	/* backward from the CPU's saved statistics on both sides */
	float *rdi = fdup(dinp0, LR * C), *rdw = fdup(dw0, C), *rdb = fdup(db0, C);
	float *gdi = fdup(dinp0, LR * C), *gdw = fdup(dw0, C), *gdb = fdup(db0, C);
	layernorm_backward_q(rdi, rdw, rdb, dout, inp, w, rmean, rrstd, 1, LR, C, reduce);
	for (size_t row = 0; row < LR; row++)
		gpu_kernel_layernorm_backward_inp(row, gdi, dout, inp, w, rmean, rrstd, C, r);
	/* the parameter gradients in 5 row chunks (the last one short), then
	 * the chunk sums in order: the device's two steps */
	enum { R = 5 };
	size_t rows_per = (LR + R - 1) / R;
	float part[2 * R * C];
	for (size_t i = 0; i < R * C; i++)
		gpu_kernel_layernorm_params_partial(i, part, part + R * C, dout, inp, rmean, rrstd, LR, C, rows_per);
	for (size_t c = 0; c < C; c++) {
		gpu_kernel_colsum_finish(c, gdw, part, C, R);
		gpu_kernel_colsum_finish(c, gdb, part + R * C, C, R);
	}
	/* compare the increments (the buffers started at dinp0 etc.) */
	for (size_t i = 0; i < LR * C; i++) {
		rdi[i] -= dinp0[i];
		gdi[i] -= dinp0[i];
	}
	snprintf(what, sizeof what, "layernorm_backward %s dinp", name);
	expect_close(what, gdi, rdi, LR * C, tol);
	/* the parameter gradients are fp32 sums on both sides whatever reduce */
	snprintf(what, sizeof what, "layernorm_backward %s dweight", name);
	expect_close(what, gdw, rdw, C, FP32_TOL);
	snprintf(what, sizeof what, "layernorm_backward %s dbias", name);
	expect_close(what, gdb, rdb, C, FP32_TOL);
	free(rdi);
	free(rdw);
	free(rdb);
	free(gdi);
	free(gdw);
	free(gdb);
}

START_TEST(test_layernorm)
{
	check_layernorm(FMT_FP32);
	check_layernorm(FMT_BF16);
}
END_TEST

/* --- attention --- */

static void check_attention(fmt_id gemm, fmt_id reduce, size_t Cx, size_t NHx)
{
	uint64_t st = 44 + 7 * (uint64_t)gemm + (uint64_t)reduce + Cx;
	const size_t CC3 = 3 * Cx, NT = B * NHx * T * T;
	float *inp = xcalloc(BT * CC3, sizeof *inp), *dout = xcalloc(BT * Cx, sizeof *dout);
	float *dinp0 = xcalloc(BT * CC3, sizeof *dinp0);
	fill(inp, BT * CC3, 1.5, &st);
	fill(dout, BT * Cx, 1.0, &st);
	fill(dinp0, BT * CC3, 0.5, &st);
	kernel_fmts f = { .gemm = gemm, .reduce = reduce };
	gpu_kernel_q gm = gpu_kernel_q_of(gemm, FMT_RNE), rd = gpu_kernel_q_of(reduce, FMT_RNE);
	double tol = gemm == FMT_FP32 && reduce == FMT_FP32 ? FP32_TOL : LOWP_TOL;
	char what[128], tag[48];
	snprintf(tag, sizeof tag, "(%s,%s) hs %zu", fmt_short(gemm), fmt_short(reduce), Cx / NHx);

	float *rout = xcalloc(BT * Cx, sizeof *rout), *rpre = xcalloc(NT, sizeof *rpre), *ratt = xcalloc(NT, sizeof *ratt);
	float *gout = xcalloc(BT * Cx, sizeof *gout), *gpre = xcalloc(NT, sizeof *gpre), *gatt = xcalloc(NT, sizeof *gatt);
	float *scratch = xcalloc(attention_scratch_floats(T, Cx, NHx), sizeof *scratch);
	/* garbage above the diagonal: both must store 0 there */
	for (size_t i = 0; i < NT; i++)
		gpre[i] = gatt[i] = 7.0f;
	attention_forward_q(rout, rpre, ratt, scratch, inp, B, T, Cx, NHx, f);
	/* the operands rounded once, as gpu_trainer_impl.h does (gpu_kernel_operand, fp32 storage) */
	float *inp_r = xcalloc(BT * CC3, sizeof *inp_r), *gatt_r = xcalloc(NT, sizeof *gatt_r);
	for (size_t i = 0; i < BT * CC3; i++)
		gpu_kernel_operand(i, inp_r, GPU_KERNEL_OP_F32, inp, 0, gm);
	for (size_t r = 0; r < B * NHx * T; r++)
		gpu_kernel_attention_forward(r, gout, gpre, gatt, gatt_r, inp_r, NHx, T, Cx, gm, rd);
	snprintf(what, sizeof what, "attention_forward %s out", tag);
	expect_close(what, gout, rout, BT * Cx, tol);
	snprintf(what, sizeof what, "attention_forward %s preatt", tag);
	expect_close(what, gpre, rpre, NT, tol);
	/* att is the softmax, in the reduction format only (fp32 with a bf16 GEMM) */
	snprintf(what, sizeof what, "attention_forward %s att", tag);
	expect_close(what, gatt, ratt, NT, reduce == FMT_FP32 ? FP32_TOL : LOWP_TOL);
	for (size_t r = 0; r < B * NHx * T; r++)
		for (size_t u = r % T + 1; u < T; u++)
			ck_assert_msg(gpre[r * T + u] == 0.0f && gatt[r * T + u] == 0.0f,
			              "attention_forward %s: row %zu col %zu above the diagonal not 0", tag, r, u);

	/* backward from the CPU's att on both sides */
	float *rdi = fdup(dinp0, BT * CC3), *gdi = fdup(dinp0, BT * CC3);
	float *rdpre = xcalloc(T * T, sizeof *rdpre), *datt = xcalloc(T * T, sizeof *datt);
	float *gdpre = xcalloc(NT, sizeof *gdpre);
	attention_backward_q(rdi, rdpre, datt, scratch, dout, inp, ratt, B, T, Cx, NHx, f);
	float *dout_r = xcalloc(BT * Cx, sizeof *dout_r), *ratt_r = xcalloc(NT, sizeof *ratt_r);
	for (size_t i = 0; i < BT * Cx; i++)
		gpu_kernel_operand(i, dout_r, GPU_KERNEL_OP_F32, dout, 0, gm);
	for (size_t i = 0; i < NT; i++)
		gpu_kernel_operand(i, ratt_r, GPU_KERNEL_OP_F32, ratt, 0, gm);
	for (size_t r = 0; r < B * NHx * T; r++)
		gpu_kernel_attention_backward_q(r, gdi, gdpre, dout_r, inp_r, ratt, NHx, T, Cx, gm, rd);
	for (size_t r = 0; r < B * NHx * T; r++)
		gpu_kernel_attention_backward_kv(r, gdi, gdpre, dout_r, inp_r, ratt_r, NHx, T, Cx, gm);
	for (size_t i = 0; i < BT * CC3; i++) {
		rdi[i] -= dinp0[i];
		gdi[i] -= dinp0[i];
	}
	/* q, k and v parts apart, so a failure says which */
	const char *part[3] = { "dq", "dk", "dv" };
	for (int p = 0; p < 3; p++) {
		float *rg = xcalloc(BT * Cx, sizeof *rg), *gg = xcalloc(BT * Cx, sizeof *gg);
		for (size_t bt = 0; bt < BT; bt++)
			for (size_t c = 0; c < Cx; c++) {
				rg[bt * Cx + c] = rdi[bt * CC3 + (size_t)p * Cx + c];
				gg[bt * Cx + c] = gdi[bt * CC3 + (size_t)p * Cx + c];
			}
		snprintf(what, sizeof what, "attention_backward %s dinp %s", tag, part[p]);
		expect_close(what, gg, rg, BT * Cx, tol);
		free(rg);
		free(gg);
	}
	/* the CPU's dpreatt scratch holds the last (b, h) block */
	snprintf(what, sizeof what, "attention_backward %s dpreatt (last b,h)", tag);
	expect_close(what, gdpre + (B * NHx - 1) * T * T, rdpre, T * T, tol);
	free(inp);
	free(dout);
	free(dinp0);
	free(rout);
	free(rpre);
	free(ratt);
	free(gout);
	free(gpre);
	free(gatt);
	free(scratch);
	free(rdi);
	free(gdi);
	free(rdpre);
	free(datt);
	free(gdpre);
	free(inp_r);
	free(gatt_r);
	free(dout_r);
	free(ratt_r);
}

START_TEST(test_attention)
{
	/* hs = 4 (the brief's C=12, NH=3) and hs = 6: with hs = 4 the scale
	 * 1/sqrt(hs) is a power of two and commutes with rounding, so only hs = 6
	 * tells a scale applied after the rounding from one applied before */
	static const size_t shape[2][2] = { { C, NH }, { 18, 3 } };
	for (int k = 0; k < 2; k++) {
		check_attention(FMT_FP32, FMT_FP32, shape[k][0], shape[k][1]);
		check_attention(FMT_BF16, FMT_FP32, shape[k][0], shape[k][1]);
		check_attention(FMT_BF16, FMT_BF16, shape[k][0], shape[k][1]);
		check_attention(FMT_FP16, FMT_FP32, shape[k][0], shape[k][1]);
	}
}
END_TEST

/* --- GELU --- */

START_TEST(test_gelu)
{
	enum { N = 200 };
	uint64_t st = 55;
	float inp[N], dout[N], d0[N], rout[N], gout[N];
	fill(inp, N, 5.0, &st);   /* both tails and the middle */
	inp[0] = 0.0f;
	inp[1] = -12.0f;
	inp[2] = 12.0f;
	fill(dout, N, 1.0, &st);
	fill(d0, N, 0.5, &st);
	gelu_forward(rout, inp, N);
	for (size_t i = 0; i < N; i++)
		gpu_kernel_gelu_forward(i, gout, inp);
	expect_close("gelu_forward", gout, rout, N, FP32_TOL);
	float *rd = fdup(d0, N), *gd = fdup(d0, N);
	gelu_backward(rd, inp, dout, N);
	for (size_t i = 0; i < N; i++)
		gpu_kernel_gelu_backward(i, gd, inp, dout);
	for (size_t i = 0; i < N; i++) {
		rd[i] -= d0[i];
		gd[i] -= d0[i];
	}
	expect_close("gelu_backward", gd, rd, N, FP32_TOL);
	free(rd);
	free(gd);
}
END_TEST

/* --- softmax + cross-entropy --- */

/* 64 rows, as for LayerNorm. */
#define CR 64

static void check_crossentropy_forward(fmt_id reduce)
{
	uint64_t st = 66 + (uint64_t)reduce;
	float logits[CR * V], rp[CR * V], rl[CR], gp[CR * V], gl[CR];
	int tg[CR];
	fill(logits, CR * V, 4.0, &st);
	for (size_t i = 0; i < CR; i++)
		tg[i] = (int)(i * 7 % V);
	tg[CR - 1] = V - 1;
	crossentropy_softmax_forward_q(rp, rl, logits, tg, 1, CR, V, reduce);
	gpu_kernel_q rd = gpu_kernel_q_of(reduce, FMT_RNE);
	for (size_t row = 0; row < CR; row++)
		gpu_kernel_crossentropy_forward(row, gp, gl, logits, tg, V, rd);
	double tol = reduce == FMT_FP32 ? FP32_TOL : LOWP_TOL;
	char what[64];
	snprintf(what, sizeof what, "crossentropy_forward %s probs", fmt_short(reduce));
	expect_close(what, gp, rp, CR * V, tol);
	snprintf(what, sizeof what, "crossentropy_forward %s losses", fmt_short(reduce));
	expect_close(what, gl, rl, CR, tol);
}

START_TEST(test_crossentropy)
{
	check_crossentropy_forward(FMT_FP32);
	check_crossentropy_forward(FMT_BF16);

	/* backward: the body overwrites, layers.c accumulates into zeros; the
	 * same product and subtraction, so bit for bit */
	uint64_t st = 67;
	float probs[BT * V], rd[BT * V], gd[BT * V];
	int tg[BT];
	fill(probs, BT * V, 1.0, &st);
	for (size_t i = 0; i < BT; i++)
		tg[i] = (int)((i * 3 + 1) % V);
	memset(rd, 0, sizeof rd);
	for (size_t i = 0; i < BT * V; i++)
		gd[i] = 9.0f;   /* overwritten, not accumulated */
	const float dloss = 1.0f / 14.0f * 1024.0f;
	crossentropy_softmax_backward(rd, probs, tg, dloss, B, T, V);
	for (size_t i = 0; i < BT * V; i++)
		gpu_kernel_crossentropy_backward(i, gd, probs, tg, dloss, V);
	expect_bits("crossentropy_backward dlogits", gd, rd, BT * V);
}
END_TEST

/* --- matmul helpers --- */

START_TEST(test_bias)
{
	enum { IC = 8, OC = 5 };
	uint64_t st = 77;
	float inp[BT * IC], w[OC * IC], bias[OC], prod[BT * OC], ref[BT * OC];
	fill(inp, BT * IC, 1.0, &st);
	fill(w, OC * IC, 1.0, &st);
	fill(bias, OC, 2.0, &st);
	/* the product without bias, then the body adds the bias and rounds */
	matmul_forward(prod, inp, w, NULL, B, T, IC, OC);
	matmul_forward(ref, inp, w, bias, B, T, IC, OC);
	float got[BT * OC];
	memcpy(got, prod, sizeof got);
	gpu_kernel_q off = gpu_kernel_q_of(FMT_FP32, FMT_RNE);
	for (size_t i = 0; i < BT * OC; i++)
		gpu_kernel_bias_round(i, got, bias, OC, off);
	/* sgemm with beta 1 may fold the bias into its accumulation: fp32 tol */
	expect_close("bias_round fp32", got, ref, BT * OC, FP32_TOL);
	/* a zero weight: the product is 0 and out = bias exactly */
	float zw[OC * IC], zref[BT * OC], zgot[BT * OC];
	memset(zw, 0, sizeof zw);
	matmul_forward(zref, inp, zw, bias, B, T, IC, OC);
	memset(zgot, 0, sizeof zgot);
	for (size_t i = 0; i < BT * OC; i++)
		gpu_kernel_bias_round(i, zgot, bias, OC, off);
	expect_bits("bias_round zero weight", zgot, zref, BT * OC);
	/* bf16: the CPU result rounded with fmt_bulk_quantize */
	gpu_kernel_q g16 = gpu_kernel_q_of(FMT_BF16, FMT_RNE);
	memcpy(got, prod, sizeof got);
	for (size_t i = 0; i < BT * OC; i++)
		gpu_kernel_bias_round(i, got, bias, OC, g16);
	quantize(ref, BT * OC, FMT_BF16, FMT_RNE, 0, 0);
	expect_close("bias_round bf16", got, ref, BT * OC, LOWP_TOL);
	/* bias NULL: only the rounding */
	memcpy(got, prod, sizeof got);
	memcpy(ref, prod, sizeof ref);
	for (size_t i = 0; i < BT * OC; i++)
		gpu_kernel_bias_round(i, got, NULL, OC, g16);
	quantize(ref, BT * OC, FMT_BF16, FMT_RNE, 0, 0);
	expect_bits("bias_round bf16 no bias", got, ref, BT * OC);

	/* backward: dbias += column sums, in 3 row chunks (the last one short)
	 * and then the chunk sums in order, as the device does; matmul_backward
	 * adds row by row, so the sums differ by float rounding only */
	float dout[BT * OC], db0[OC];
	fill(dout, BT * OC, 1.0, &st);
	fill(db0, OC, 0.5, &st);
	float *rdb = fdup(db0, OC), *gdb = fdup(db0, OC);
	matmul_backward(NULL, NULL, rdb, dout, inp, w, B, T, IC, OC);
	enum { R = 3 };
	float part[R * OC];
	size_t rows_per = (BT + R - 1) / R;
	for (size_t i = 0; i < R * OC; i++)
		gpu_kernel_bias_partial(i, part, dout, BT, OC, rows_per);
	for (size_t oc = 0; oc < OC; oc++)
		gpu_kernel_colsum_finish(oc, gdb, part, OC, R);
	expect_close("bias_backward dbias", gdb, rdb, OC, FP32_TOL);
	free(rdb);
	free(gdb);
}
END_TEST

/* --- residual stream --- */

/* out = a + b in the residual format: fmt_bulk_quantize of the fp32 sums
 * with the same mode, seed and index0, bit for bit; dexact += b exactly.
 * index0 just below 2^32, so the stream crosses a key block. */
static void check_residual(fmt_id f, fmt_mode mode)
{
	enum { N = BT * C };
	uint64_t st = 88;
	float a[N], b[N], ref[N], got[N];
	double dx[N], dref[N];
	fill(a, N, 4.0, &st);
	fill(b, N, 0.01, &st);   /* small updates: SR decides most of them */
	for (size_t i = 0; i < N; i++) {
		dx[i] = urand(&st) * 10.0;
		dref[i] = dx[i] + (double)b[i];
		ref[i] = a[i] + b[i];
	}
	const uint64_t seed = 0xabcdef12345ull, index0 = (1ull << 32) - 37;
	quantize(ref, N, f, mode, seed, index0);
	gpu_kernel_q q = gpu_kernel_q_of(f, mode);
	for (size_t i = 0; i < N; i++)
		gpu_kernel_residual_forward(i, got, dx, a, b, q, seed, index0);
	char what[64];
	snprintf(what, sizeof what, "residual_forward %s%s", fmt_short(f), mode == FMT_SR ? " SR" : "");
	expect_bits(what, got, ref, N);
	expect_dbits("residual_forward dexact", dx, dref, N);
	if (mode == FMT_SR) {
		/* SR must really be stochastic here: some sums round up, some down
		 * relative to RNE (else the test could not tell SR from RNE) */
		float rne[N];
		for (size_t i = 0; i < N; i++)
			rne[i] = a[i] + b[i];
		quantize(rne, N, f, FMT_RNE, 0, 0);
		size_t differ = 0;
		for (size_t i = 0; i < N; i++)
			differ += rne[i] != got[i];
		ck_assert_msg(differ > N / 10, "SR rounded only %zu of %d sums away from RNE", differ, N);
		/* and a different seed gives a different result */
		float other[N];
		double dy[N];
		memset(dy, 0, sizeof dy);
		for (size_t i = 0; i < N; i++)
			gpu_kernel_residual_forward(i, other, dy, a, b, q, seed + 1, index0);
		ck_assert_msg(memcmp(other, got, sizeof got) != 0, "SR with another seed gave the same bits");
	}
}

START_TEST(test_residual)
{
	check_residual(FMT_FP32, FMT_RNE);
	check_residual(FMT_BF16, FMT_RNE);
	check_residual(FMT_BF16, FMT_SR);
	check_residual(FMT_FP16, FMT_SR);
}
END_TEST

/* --- the optimiser --- */

/* The oracles below must not be contracted into FMAs either. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define NO_CONTRACT
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

enum { NG = 103, NPART = 8 };   /* n not a multiple of NP: uneven partials */

/* Gradients with every case the counts look at: zeros, values that flush
 * in fp16 (below half its smallest subnormal), values that overflow it. */
static void fill_grads(float *g, uint64_t *st)
{
	fill(g, NG, 2.0, st);
	for (size_t i = 0; i < NG; i += 9)
		g[i] = 0.0f;
	for (size_t i = 4; i < NG; i += 11)
		g[i] = (float)(1e-9 * urand(st)) + 1e-12f;   /* fp16 flushes: < 2^-25 */
	g[17] = 1e6f;                                    /* fp16 overflows to inf */
	g[50] = -2e-8f;                                  /* flushes (2^-25 ~ 2.98e-8) */
}

/* train.c's span_grads for one half: round to grad_fmt counting what
 * flushes and what is not finite, then to grad_accum_fmt, unscale, square;
 * partial j over elements j, j + NP, ... */
NO_CONTRACT static void grads_oracle(float *g, unsigned long long *nz, unsigned long long *fl,
                                     unsigned long long *nf, double *norm2, fmt_id gf, fmt_id af, double inv)
{
	float before[NG];
	memcpy(before, g, sizeof before);
	quantize(g, NG, gf, FMT_RNE, 0, 0);
	for (size_t j = 0; j < NPART; j++)
		nz[j] = fl[j] = nf[j] = 0;
	if (gf != FMT_FP32)
		for (size_t i = 0; i < NG; i++) {
			nz[i % NPART] += before[i] != 0;
			fl[i % NPART] += before[i] != 0 && g[i] == 0;
			nf[i % NPART] += !isfinite(g[i]);
		}
	quantize(g, NG, af, FMT_RNE, 0, 0);
	for (size_t j = 0; j < NPART; j++)
		norm2[j] = 0.0;
	for (size_t i = 0; i < NG; i++) {
		g[i] = (float)(g[i] * inv);
		norm2[i % NPART] += (double)g[i] * g[i];
	}
}

static void check_grads(fmt_id gf, fmt_id af, double inv)
{
	uint64_t st = 99 + (uint64_t)gf;
	float g0[NG];
	fill_grads(g0, &st);
	float ref[NG], got[NG], raw[NG];
	memcpy(ref, g0, sizeof ref);
	memcpy(got, g0, sizeof got);
	unsigned long long rnz[NPART], rfl[NPART], rnf[NPART], gnz[NPART], gfl[NPART], gnf[NPART];
	double rn2[NPART], gn2[NPART];
	grads_oracle(ref, rnz, rfl, rnf, rn2, gf, af, inv);
	gpu_kernel_q gq = gpu_kernel_q_of(gf, FMT_RNE), aq = gpu_kernel_q_of(af, FMT_RNE);
	for (size_t j = 0; j < NPART; j++)
		gpu_kernel_grads(j, got, raw, gnz, gfl, gnf, gn2, NG, NPART, gq, aq, inv);
	char what[64];
	snprintf(what, sizeof what, "grads %s->%s g", fmt_short(gf), fmt_short(af));
	expect_bits(what, got, ref, NG);
	expect_bits("grads raw", raw, g0, NG);
	expect_dbits("grads norm2", gn2, rn2, NPART);
	unsigned long long tfl = 0, tnf = 0;
	for (size_t j = 0; j < NPART; j++) {
		ck_assert_msg(gnz[j] == rnz[j], "%s: nonzero[%zu] expected %llu, got %llu", what, j, rnz[j], gnz[j]);
		ck_assert_msg(gfl[j] == rfl[j], "%s: flushed[%zu] expected %llu, got %llu", what, j, rfl[j], gfl[j]);
		ck_assert_msg(gnf[j] == rnf[j], "%s: nonfinite[%zu] expected %llu, got %llu", what, j, rnf[j],
		              gnf[j]);
		tfl += gfl[j];
		tnf += gnf[j];
	}
	if (gf == FMT_FP16) {   /* the inputs do exercise the counts */
		ck_assert_msg(tfl >= 10, "only %llu flushed", tfl);
		ck_assert_msg(tnf == 1, "%llu nonfinite, expected 1 (g[17])", tnf);
	}
}

START_TEST(test_grads)
{
	check_grads(FMT_FP32, FMT_FP32, 1.0 / 1024.0);
	check_grads(FMT_FP16, FMT_FP32, 1.0 / 1024.0);
	check_grads(FMT_FP16, FMT_BF16, 1.0 / 3.0);
	check_grads(FMT_BF16, FMT_BF16, 1.0);
	check_grads(FMT_FP32, FMT_BF16, 0.125);
}
END_TEST

typedef enum { UPD_MASTER, UPD_RNE, UPD_SR, UPD_KAHAN, UPD_KAHAN_SR } upd_kind;

NO_CONTRACT static float adamw_step_oracle(const gpu_kernel_adam *a, double mhat, double vhat, float w)
{
	/* train.c's adamw_update */
	return (float)-(a->lr * (mhat / (sqrt(vhat) + a->eps) + a->weight_decay * w));
}

/* span_update: the moments in optim_fmt, the update, then the weight in
 * fp32 (master) or accumulated in weight_fmt with fmt_bulk_accumulate
 * (RNE, SR, Kahan); counts per partial j over j, j + NP, ... */
NO_CONTRACT static void adamw_oracle(float *w, float *m, float *v, float *comp, const float *g,
                                     unsigned long long *nz, unsigned long long *lost, const gpu_kernel_adam *a,
                                     fmt_id of, fmt_id wf, upd_kind kind)
{
	for (size_t i = 0; i < NG; i++) {
		float gi = (float)(g[i] * a->clip);
		m[i] = (float)(a->beta1 * m[i] + (1 - a->beta1) * gi);
		v[i] = (float)(a->beta2 * v[i] + (1 - a->beta2) * (double)gi * gi);
	}
	quantize(m, NG, of, FMT_RNE, 0, 0);
	quantize(v, NG, of, FMT_RNE, 0, 0);
	float upd[NG], before[NG];
	for (size_t i = 0; i < NG; i++)
		upd[i] = adamw_step_oracle(a, m[i] / a->c1, v[i] / a->c2, w[i]);
	memcpy(before, w, sizeof before);
	if (kind == UPD_MASTER) {
		for (size_t i = 0; i < NG; i++)
			w[i] = w[i] + upd[i];
	} else {
		fmt_bulk_opts o = { .fmt = wf, .mode = kind == UPD_SR || kind == UPD_KAHAN_SR ? FMT_SR : FMT_RNE,
		                    .seed = a->seed, .index0 = a->index0 };
		int k = kind == UPD_KAHAN || kind == UPD_KAHAN_SR;
		ck_assert_int_eq(fmt_bulk_accumulate(FMT_SIMD_AUTO, &o, w, k ? comp : NULL, upd, NG, NULL), MP_OK);
	}
	for (size_t j = 0; j < NPART; j++)
		nz[j] = lost[j] = 0;
	for (size_t i = 0; i < NG; i++) {
		nz[i % NPART] += upd[i] != 0;
		lost[i % NPART] += upd[i] != 0 && w[i] == before[i];
	}
}

static void check_adamw(upd_kind kind, fmt_id of, fmt_id wf, fmt_id opf, int opkind)
{
	uint64_t st = 111 + (uint64_t)kind * 13 + (uint64_t)wf;
	float w0[NG], m0[NG], v0[NG], g[NG], c0[NG];
	fill_grads(g, &st);
	g[17] = 3.0f;   /* no inf here */
	for (size_t i = 0; i < NG; i++) {
		/* weights of mixed magnitudes: updates of ~lr are lost on the
		 * large ones in bf16 and kept on the small ones */
		w0[i] = (float)(urand(&st) * (i % 3 == 0 ? 4.0 : i % 3 == 1 ? 0.01 : 1.0));
		m0[i] = (float)(urand(&st) * 0.1);
		v0[i] = (float)fabs(urand(&st) * 0.01);
		c0[i] = (float)(urand(&st) * 1e-4);
	}
	for (size_t i = 0; i < NG; i += 9)   /* g = 0, moments 0, weight 0: a zero update */
		w0[i] = m0[i] = v0[i] = 0.0f;
	quantize(w0, NG, wf, FMT_RNE, 0, 0);   /* the stored weights are values of their format */
	quantize(m0, NG, of, FMT_RNE, 0, 0);
	quantize(v0, NG, of, FMT_RNE, 0, 0);
	quantize(c0, NG, wf, FMT_RNE, 0, 0);
	gpu_kernel_adam a;
	memset(&a, 0, sizeof a);
	a.lr = 1e-3;
	a.beta1 = 0.9;
	a.beta2 = 0.95;
	a.eps = 1e-8;
	a.weight_decay = 0.1;
	a.clip = 0.75;
	a.c1 = 1.0 - pow(0.9, 3);
	a.c2 = 1.0 - pow(0.95, 3);
	a.master_fp32 = kind == UPD_MASTER;
	a.kahan = kind == UPD_KAHAN || kind == UPD_KAHAN_SR;
	a.seed = 0x1234ull ^ 0xada0ull;
	a.index0 = 3ull * NG + 5;

	float rw[NG], rm[NG], rv[NG], rc[NG], gw[NG], gm[NG], gv[NG], gc[NG];
	memcpy(rw, w0, sizeof rw);
	memcpy(rm, m0, sizeof rm);
	memcpy(rv, v0, sizeof rv);
	memcpy(rc, c0, sizeof rc);
	memcpy(gw, w0, sizeof gw);
	memcpy(gm, m0, sizeof gm);
	memcpy(gv, v0, sizeof gv);
	memcpy(gc, c0, sizeof gc);
	unsigned long long rnz[NPART], rls[NPART], gnz[NPART], gls[NPART];
	adamw_oracle(rw, rm, rv, rc, g, rnz, rls, &a, of, wf, kind);

	gpu_kernel_q oq = gpu_kernel_q_of(of, FMT_RNE);
	gpu_kernel_q wq = gpu_kernel_q_of(kind == UPD_MASTER ? FMT_FP32 : wf, kind == UPD_SR || kind == UPD_KAHAN_SR ? FMT_SR : FMT_RNE);
	gpu_kernel_q opq = gpu_kernel_q_of(opf, FMT_RNE);
	float op32[NG];
	uint16_t op16[NG];
	void *op = opkind == GPU_KERNEL_OP_F32 ? (void *)op32 : (void *)op16;
	for (size_t j = 0; j < NPART; j++)
		gpu_kernel_adamw(j, gw, gm, gv, gc, g, gnz, gls, op, opkind, 1, NG, NPART, a, oq, wq, opq);

	static const char *names[] = { "master", "RNE", "SR", "Kahan", "Kahan SR" };
	char what[80];
	snprintf(what, sizeof what, "adamw %s w=%s m,v=%s", names[kind], fmt_short(wf), fmt_short(of));
	expect_bits(what, gw, rw, NG);
	expect_bits("adamw m", gm, rm, NG);
	expect_bits("adamw v", gv, rv, NG);
	if (a.kahan)
		expect_bits("adamw comp", gc, rc, NG);
	else
		expect_bits("adamw comp untouched", gc, c0, NG);
	unsigned long long tnz = 0, tls = 0;
	for (size_t j = 0; j < NPART; j++) {
		ck_assert_msg(gnz[j] == rnz[j], "%s: nonzero[%zu] expected %llu, got %llu", what, j, rnz[j], gnz[j]);
		ck_assert_msg(gls[j] == rls[j], "%s: lost[%zu] expected %llu, got %llu", what, j, rls[j], gls[j]);
		tnz += gnz[j];
		tls += gls[j];
	}
	ck_assert_msg(tnz > 0 && tnz < NG, "%s: %llu nonzero updates: the zero-update case is not exercised", what, tnz);
	if (kind == UPD_RNE)
		ck_assert_msg(tls > 0 && tls < tnz, "%s: %llu of %llu updates lost: not exercised", what, tls, tnz);

	/* the GEMM's working copy of the new weights */
	float opv[NG];
	memcpy(opv, rw, sizeof opv);
	quantize(opv, NG, opf, FMT_RNE, 0, 0);
	if (opkind == GPU_KERNEL_OP_F32) {
		expect_bits("adamw operand f32", op32, opv, NG);
	} else if (opkind == GPU_KERNEL_OP_NATIVE16) {
		fmt_bulk_opts o = { .fmt = opf, .mode = FMT_RNE };
		uint16_t enc[NG];
		ck_assert_int_eq(fmt_bulk_encode(FMT_SIMD_AUTO, &o, enc, rw, NG), MP_OK);
		for (size_t i = 0; i < NG; i++)
			ck_assert_msg(op16[i] == enc[i], "adamw operand native16[%zu]: expected 0x%04x, got 0x%04x", i,
			              (unsigned)enc[i], (unsigned)op16[i]);
	} else {
		/* bf16 patterns of the fp8 values: the top half of each exactly */
		for (size_t i = 0; i < NG; i++) {
			uint32_t u = (uint32_t)op16[i] << 16;
			float back;
			memcpy(&back, &u, 4);
			ck_assert_msg(back == opv[i] || (isnan(back) && isnan(opv[i])),
			              "adamw operand bf16-of-%s[%zu]: expected %.9g, got %.9g", fmt_short(opf), i,
			              (double)opv[i], (double)back);
		}
	}
}

START_TEST(test_adamw)
{
	check_adamw(UPD_MASTER, FMT_FP32, FMT_FP32, FMT_FP32, GPU_KERNEL_OP_F32);
	check_adamw(UPD_MASTER, FMT_BF16, FMT_FP32, FMT_BF16, GPU_KERNEL_OP_NATIVE16);
	check_adamw(UPD_RNE, FMT_BF16, FMT_BF16, FMT_BF16, GPU_KERNEL_OP_NATIVE16);
	check_adamw(UPD_RNE, FMT_FP32, FMT_BF16, FMT_FP16, GPU_KERNEL_OP_NATIVE16);
	check_adamw(UPD_SR, FMT_BF16, FMT_BF16, FMT_E4M3, GPU_KERNEL_OP_BF16);
	check_adamw(UPD_KAHAN, FMT_BF16, FMT_BF16, FMT_BF16, GPU_KERNEL_OP_F32);
	check_adamw(UPD_KAHAN_SR, FMT_FP32, FMT_FP16, FMT_FP16, GPU_KERNEL_OP_NATIVE16);
}
END_TEST

static Suite *gpu_kernels_suite(void)
{
	Suite *s = suite_create("gpu_kernels");
	TCase *tc = tcase_create("bodies");
	tcase_add_test(tc, test_encoder_forward);
	tcase_add_test(tc, test_encoder_backward);
	tcase_add_test(tc, test_layernorm);
	tcase_add_test(tc, test_attention);
	tcase_add_test(tc, test_gelu);
	tcase_add_test(tc, test_crossentropy);
	tcase_add_test(tc, test_bias);
	tcase_add_test(tc, test_residual);
	tcase_add_test(tc, test_grads);
	tcase_add_test(tc, test_adamw);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	(void)argc;
	testutil_fast_blas(argv);
	bulk_tables_init();
	return testutil_run(gpu_kernels_suite());
}
