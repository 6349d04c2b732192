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
#include "gpu_kernels_util.h"

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

/* The key/value gradients bit for bit, at the head sizes gpu_trainer.cu
 * compiles as constants (32, 64, 128) and at a generic one (12), with
 * T = 45 and NH = 3: warps of 32 indices then straddle (b, h) blocks and
 * start in the middle of a row, so the shared first row t0 of a lane's loop
 * (gpu_kernel_warp_first_row) lies before its own diagonal u by 0 to 31
 * rows, which it must skip. Oracle: the two sums written out here from their definition, over
 * t = u .. T-1 ascending in fp32, then rounded by fmt_bulk_quantize; the
 * bodies must give the same bits whichever order the indices run in. */
static float round1(float x, fmt_id f)
{
	quantize(&x, 1, f, FMT_RNE, 0, 0);
	return x;
}

static void check_attention_kv_bits(size_t hs, fmt_id gemm)
{
	const size_t Tx = 45, NHx = 3, Cx = hs * NHx, C3 = 3 * Cx, BTx = B * Tx, NT = B * NHx * Tx * Tx;
	uint64_t st = 900 + hs + (uint64_t)gemm;
	float *inp = xcalloc(BTx * C3, sizeof *inp), *dout = xcalloc(BTx * Cx, sizeof *dout);
	float *att = xcalloc(NT, sizeof *att), *dpre = xcalloc(NT, sizeof *dpre), *ref = xcalloc(BTx * C3, sizeof *ref);
	fill(inp, BTx * C3, 1.5, &st);
	fill(dout, BTx * Cx, 1.0, &st);
	fill(ref, BTx * C3, 0.5, &st);
	/* causal rows t >= u; above the diagonal, where the trainer stores 0,
	 * garbage that a body reading a row t < u would add */
	for (size_t i = 0; i < NT; i++) {
		bool causal = i % Tx <= i / Tx % Tx;
		att[i] = causal ? (float)(0.5 * (urand(&st) + 1.0)) : 7.0f;
		dpre[i] = causal ? (float)urand(&st) : -5.0f;
	}
	quantize(inp, BTx * C3, gemm, FMT_RNE, 0, 0);   /* operands in the GEMM format, as the trainer passes them */
	quantize(dout, BTx * Cx, gemm, FMT_RNE, 0, 0);
	quantize(att, NT, gemm, FMT_RNE, 0, 0);
	float *got = fdup(ref, BTx * C3), *got2 = fdup(ref, BTx * C3);
	const float scale = 1.0f / sqrtf((float)hs);
	for (size_t b = 0; b < B; b++)
		for (size_t h = 0; h < NHx; h++)
			for (size_t u = 0; u < Tx; u++)
				for (size_t j = 0; j < hs; j++) {
					float sv = 0.0f, sk = 0.0f;
					for (size_t t = u; t < Tx; t++) {
						size_t a = ((b * NHx + h) * Tx + t) * Tx + u;
						sv += att[a] * dout[(b * Tx + t) * Cx + h * hs + j];
						sk += dpre[a] * inp[(b * Tx + t) * C3 + h * hs + j];
					}
					float *row = ref + (b * Tx + u) * C3 + h * hs + j;
					row[Cx] += round1(sk * scale, gemm);
					row[2 * Cx] += round1(sv, gemm);
				}
	gpu_kernel_q gm = gpu_kernel_q_of(gemm, FMT_RNE);
	for (size_t r = B * NHx * Tx; r-- > 0;)
		gpu_kernel_attention_backward_kv_hs(r, got, dpre, dout, inp, att, NHx, Tx, Cx, gm, hs);
	for (size_t r = 0; r < B * NHx * Tx; r++)
		gpu_kernel_attention_backward_kv(r, got2, dpre, dout, inp, att, NHx, Tx, Cx, gm);
	char what[96];
	snprintf(what, sizeof what, "attention_backward_kv %s hs %zu (T 45, indices descending)", fmt_short(gemm), hs);
	expect_bits(what, got, ref, BTx * C3);
	snprintf(what, sizeof what, "attention_backward_kv %s hs %zu (T 45)", fmt_short(gemm), hs);
	expect_bits(what, got2, ref, BTx * C3);
	free(inp);
	free(dout);
	free(att);
	free(dpre);
	free(ref);
	free(got);
	free(got2);
}

START_TEST(test_attention_kv_bits)
{
	static const size_t hs[] = { 32, 64, 128, 12 };
	for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
		check_attention_kv_bits(hs[i], FMT_FP32);
		check_attention_kv_bits(hs[i], FMT_BF16);
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

static Suite *gpu_kernels_suite(void)
{
	Suite *s = suite_create("gpu_kernels");
	TCase *tc = tcase_create("bodies");
	/* the kernel bodies run thread by thread on the CPU: slow under
	 * --enable-sanitizers on a shared machine */
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_encoder_forward);
	tcase_add_test(tc, test_encoder_backward);
	tcase_add_test(tc, test_layernorm);
	tcase_add_test(tc, test_attention);
	tcase_add_test(tc, test_attention_kv_bits);
	tcase_add_test(tc, test_gelu);
	tcase_add_test(tc, test_crossentropy);
	tcase_add_test(tc, test_bias);
	tcase_add_test(tc, test_residual);
	gpu_kernels_add_optimiser_tests(tc);
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
