/* The GPU trainer's optimiser bodies (gpu_kernel_grads, gpu_kernel_adamw)
 * run on the host against the CPU backend's formulas; the shape, helpers
 * and tolerances are test_gpu_kernels.c's (gpu_kernels_util.h). */
#include "gpu_kernels_util.h"

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

void gpu_kernels_add_optimiser_tests(TCase *tc)
{
	tcase_add_test(tc, test_grads);
	tcase_add_test(tc, test_adamw);
}
