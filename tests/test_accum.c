/* train/accum.c: the truncating tensor-core partial sum on cases whose bits
 * are worked out by hand below, the fp32 paths against a plain float loop,
 * the exact dot against integer arithmetic, and the size of the error at
 * K = 4096 against the estimate in the comment of error_size. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fmt/bulk.h"
#include "train/accum.h"
#include "train/data.h"
#include "train/policy.h"
#include "train/train.h"
#include "util/rng.h"
#include "testutil.h"

static float dot(const float *x, const float *y, size_t K, int bits, size_t block, size_t every)
{
	accum_cfg c = { .bits = bits, .block = block, .promote_every = every };
	return accum_dot(x, 1, y, 1, K, &c);
}

/* 1 + 0.09375 * 2^-9 = 1 + 1.5 * 2^-13. With 14 bits the block is aligned to
 * 2^0 and cut at 2^-13: the small product keeps 1 * 2^-13, so the result is
 * 1 + 2^-13 = 0x3f800400 (fraction bit 23 - 13 = 10). With 15 bits the cut
 * is 2^-14 and 3 * 2^-14 survives: 1 + 3 * 2^-14 = 0x3f800600, the exact
 * sum, which fp32 (24 bits) also holds. */
START_TEST(drops_bits)
{
	const float x[] = { 1.0f, 0.09375f }, y[] = { 1.0f, 0x1p-9f };
	ck_assert_uint_eq(f2u(dot(x, y, 2, 14, 32, 0)), 0x3f800400u);
	ck_assert_uint_eq(f2u(dot(x, y, 2, 15, 32, 0)), 0x3f800600u);
	ck_assert_uint_eq(f2u(dot(x, y, 2, 24, 32, 0)), 0x3f800600u);
}
END_TEST

/* 1 - 1.5 * 2^-13: truncation toward zero keeps -1 * 2^-13, giving
 * 1 - 2^-13 = 2^-1 * (2 - 2^-12): fraction (1 - 2^-12) * 2^23 = 0x7ff800,
 * so 0x3f7ff800. (Rounding down, a two's-complement shift, would keep
 * -2 * 2^-13: 0x3f7ff000; the exact value rounds to 0x3f7ff400.) */
START_TEST(toward_zero)
{
	const float x[] = { 1.0f, -0.09375f }, y[] = { 1.0f, 0x1p-9f };
	ck_assert_uint_eq(f2u(dot(x, y, 2, 14, 32, 0)), 0x3f7ff800u);
	ck_assert_uint_eq(f2u(dot(x, y, 2, 24, 32, 0)), 0x3f7ff400u);
}
END_TEST

/* Products 1.5 * 2^-13, 1.5 * 2^-13, 1. In one block all three are aligned
 * to 2^0 and each small one keeps 2^-13: 1 + 2^-12 = 0x3f800800. One product
 * per block: the two small ones add exactly first (3 * 2^-13, aligned to
 * 2^-12), and then survive the cut at 2^-13 whole: 1 + 3 * 2^-13 =
 * 0x3f800c00, the exact sum. */
START_TEST(block_order)
{
	const float x[] = { 0.09375f, 0.09375f, 1.0f }, y[] = { 0x1p-9f, 0x1p-9f, 1.0f };
	ck_assert_uint_eq(f2u(dot(x, y, 3, 14, 32, 0)), 0x3f800800u);
	ck_assert_uint_eq(f2u(dot(x, y, 3, 14, 1, 0)), 0x3f800c00u);
}
END_TEST

/* 4 bits, blocks of 2: 1.875 + 1.875 = 3.75 = 11.11b (exact, cut 2^-3).
 * The next block is aligned to 2^1, cut 2^-2: 3.75 stays, 1.875 = 1.111b
 * keeps 1.11b = 1.75, 0.25 stays: 5.75 = 101.11b, five bits, since the
 * block's carry is kept. Exact: 5.875. */
START_TEST(carry)
{
	const float x[] = { 1.875f, 1.875f, 1.875f, 0.25f }, y[] = { 1, 1, 1, 1 };
	ck_assert_float_eq(dot(x, y, 2, 4, 2, 0), 3.75f);
	ck_assert_float_eq(dot(x, y, 4, 4, 2, 0), 5.75f);
	ck_assert_float_eq(dot(x, y, 4, 24, 2, 0), 5.875f);
}
END_TEST

/* 4 bits, one product per block: 1.875 + 1.875 = 3.75, then each 0.125 is
 * below the cut at 2^-2 and lost: 3.75. Promoted every 2 products, the
 * second pair starts from zero (0.125 + 0.125 = 0.25 exactly) and fp32
 * adds it: 3.75 + 0.25 = 4. */
START_TEST(promotion_restarts)
{
	const float x[] = { 1.875f, 1.875f, 0.125f, 0.125f }, y[] = { 1, 1, 1, 1 };
	ck_assert_float_eq(dot(x, y, 4, 4, 1, 0), 3.75f);
	ck_assert_float_eq(dot(x, y, 4, 4, 1, 2), 4.0f);
}
END_TEST

/* n operands uniform on [-1, 1) rounded to f. */
static void operands(float *x, size_t n, fmt_id f, uint64_t seed)
{
	for (size_t k = 0; k < n; k++)
		x[k] = (float)((double)(rng_mix64(seed * 1000003u + k) >> 11) * 0x1p-52 - 1.0);
	fmt_bulk_opts o = { .fmt = f, .mode = FMT_RNE, .saturate = true };
	ck_assert_int_eq(fmt_bulk_quantize(FMT_SIMD_PORTABLE, &o, x, n), MP_OK);
}

static float plain_fp32(const float *x, const float *y, size_t K)
{
	float s = 0.0f;
	for (size_t k = 0; k < K; k++)
		s += x[k] * y[k];
	return s;
}

/* 24 bits is an IEEE fp32 accumulator; promotion after every product makes
 * each partial sum one exact product (8 bits < 14), added in fp32: both are
 * the plain loop's bits, for any block size. */
START_TEST(fp32_paths)
{
	enum { K = 1000 };
	static const fmt_id fmts[] = { FMT_E4M3, FMT_BF16, FMT_FP16 };
	for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
		float x[K], y[K];
		operands(x, K, fmts[i], 2 * i + 1);
		operands(y, K, fmts[i], 2 * i + 2);
		uint32_t want = f2u(plain_fp32(x, y, K));
		ck_assert_uint_eq(f2u(dot(x, y, K, 24, 32, 0)), want);
		ck_assert_uint_eq(f2u(dot(x, y, K, 24, 1, 0)), want);
		if (fmts[i] == FMT_E4M3)
			ck_assert_uint_eq(f2u(dot(x, y, K, 14, 32, 1)), want);
	}
}
END_TEST

/* Every e4m3 value is an integer times 2^-9, so a dot of them is an integer
 * times 2^-18: summed in int64 (exactly) it is the exact dot. */
START_TEST(exact_dot)
{
	enum { K = 2000 };
	float x[K], y[K];
	operands(x, K, FMT_E4M3, 7);
	operands(y, K, FMT_E4M3, 8);
	x[0] = 448.0f;
	y[0] = -448.0f;
	int64_t sum = 0;
	for (size_t k = 0; k < K; k++)
		sum += (int64_t)ldexp(x[k], 9) * (int64_t)ldexp(y[k], 9);
	double exact;
	ck_assert_int_eq(accum_exact_dot(x, y, K, &exact), MP_OK);
	ck_assert(exact == ldexp((double)sum, -18));
}
END_TEST

/* Strided operands: out = a (M,K) @ b^T with b stored (K,N), each element
 * the dot of a row and a column; add puts the old value on top in fp32. */
START_TEST(gemm)
{
	enum { M = 3, N = 4, K = 300 };
	float a[M * K], b[K * N], out[M * N], row[K], col[K];
	operands(a, M * K, FMT_E4M3, 11);
	operands(b, K * N, FMT_E4M3, 12);
	accum_cfg c = { .bits = 14, .block = 32, .promote_every = 128 };
	ck_assert_int_eq(accum_gemm(out, N, false, a, K, 1, b, 1, N, M, N, K, &c), MP_OK);
	for (size_t i = 0; i < M; i++) {
		for (size_t j = 0; j < N; j++) {
			for (size_t k = 0; k < K; k++) {
				row[k] = a[i * K + k];
				col[k] = b[k * N + j];
			}
			ck_assert_uint_eq(f2u(out[i * N + j]), f2u(accum_dot(row, 1, col, 1, K, &c)));
		}
	}
	float before = out[5];
	ck_assert_int_eq(accum_gemm(out, N, true, a, K, 1, b, 1, N, M, N, K, &c), MP_OK);
	ck_assert_uint_eq(f2u(out[5]), f2u(before + before));
}
END_TEST

START_TEST(cfg_ranges)
{
	char err[128];
	accum_cfg c = { .bits = 14, .block = 32 };
	ck_assert_int_eq(accum_cfg_check(&c, err, sizeof err), MP_OK);
	c.bits = 25;
	ck_assert_int_eq(accum_cfg_check(&c, err, sizeof err), MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bits 25"));
	c.bits = 1;
	ck_assert_int_eq(accum_cfg_check(&c, err, sizeof err), MP_EINVAL);
	c.bits = 14;
	c.block = 0;
	ck_assert_int_eq(accum_cfg_check(&c, err, sizeof err), MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "block 0"));
}
END_TEST

/* The size of the effect, estimated by hand. Positive products p ~ 1/4 on
 * average; after k of them the partial sum is S_k ~ k/4 and the cut is
 * 2^(E-13) with 2^E ~ S_k / 1.5, so each new product loses about half a
 * cut: S_k * 2^-14 / 1.5. Summed over k < K and divided by S_K this is
 * ~ 2^-14 / 1.5 * K / 2 = 8% at K = 4096 (a product of e4m3 values has 8
 * bits, so the first few dozen lose nothing). Promoted every 128, each
 * interval's partial sum reaches only 32, where most products still fit
 * whole: far smaller, but not zero (only products below 2^(E-6) lose bits). */
START_TEST(error_size)
{
	accum_cfg none = { .bits = 14, .block = 32, .promote_every = 0 };
	accum_cfg every = { .bits = 14, .block = 32, .promote_every = 128 };
	accum_error e0, e1;
	ck_assert_int_eq(accum_error_measure(&e0, FMT_E4M3, ACCUM_DIST_POSITIVE, 4096, 8, 1, &none), MP_OK);
	ck_assert_int_eq(accum_error_measure(&e1, FMT_E4M3, ACCUM_DIST_POSITIVE, 4096, 8, 1, &every), MP_OK);
	ck_assert_double_gt(e0.mean_rel, 0.04);
	ck_assert_double_lt(e0.max_rel, 0.16);
	ck_assert_double_lt(e1.max_rel, e0.mean_rel / 50);
	ck_assert_double_gt(e1.max_rel, 0.0);
	/* an fp32 accumulator: far below either */
	accum_cfg fp32 = { .bits = 24, .block = 32 };
	accum_error e2;
	ck_assert_int_eq(accum_error_measure(&e2, FMT_E4M3, ACCUM_DIST_POSITIVE, 4096, 8, 1, &fp32), MP_OK);
	ck_assert_double_lt(e2.max_rel, 1e-5);
	ck_assert_int_eq(accum_error_measure(&e2, FMT_E4M3, ACCUM_DIST_POSITIVE, 0, 8, 1, &fp32), MP_EINVAL);
}
END_TEST

/* Why promotion every 128 leaves positive dots near 0.05% (the lesson's
 * "it cannot fall further"): with positive products every truncation cuts
 * toward zero, so each 128-long piece ends at or below its exact sum
 * (MPFR), and the promoted dot, the fp32 sum of the pieces, errs by the
 * pieces' errors added up, up to its 31 fp32 additions (each at most
 * 2^-24 of the running total, so 2^-19 of the whole). Its relative error
 * is then at least the smallest piece's. Each piece's last block adds
 * products near 1/4 to a sum near 24, where the cut is 2^-9: most
 * products lose bits, so no piece can be below 0.01%. */
START_TEST(promotion_floor)
{
	enum { K = 4096, NC = 128 };
	static float x[K], y[K];
	operands(x, K, FMT_E4M3, 21);
	operands(y, K, FMT_E4M3, 22);
	for (size_t k = 0; k < K; k++)
		x[k] = fabsf(x[k]), y[k] = fabsf(y[k]);
	double exact, piece_min = 1.0;
	ck_assert_int_eq(accum_exact_dot(x, y, K, &exact), MP_OK);
	for (size_t c = 0; c < K / NC; c++) {
		double e;
		ck_assert_int_eq(accum_exact_dot(x + c * NC, y + c * NC, NC, &e), MP_OK);
		double p = dot(x + c * NC, y + c * NC, NC, 14, 32, 0);
		ck_assert_double_le(p, e);
		piece_min = fmin(piece_min, (e - p) / e);
	}
	ck_assert_double_gt(piece_min, 1e-4);
	double d = dot(x, y, K, 14, 32, NC);
	ck_assert_double_ge((exact - d) / exact, piece_min - 0x1p-19);
}
END_TEST

/* --- in training --- */

/* The first `steps` losses of policy fp8-mixed with the changes (key,
 * value pairs, NULL-terminated) on a one-layer model. */
static void losses(const corpus *data, const char *const *changes, size_t steps, double *out)
{
	train_config cfg = train_config_default();
	cfg.model.L = 1;
	cfg.model.C = 32;
	cfg.model.NH = 2;
	cfg.model.T = 32;
	cfg.B = 4;
	cfg.t = 32;
	cfg.eval_every = 0;
	train_policy p;
	char err[256];
	ck_assert_int_eq(policy_from_name("fp8-mixed", &p), MP_OK);
	/* every step an update (no overflow-skipped first steps) */
	ck_assert_int_eq(policy_set(&p, "loss-scale", "none", err, sizeof err), MP_OK);
	for (size_t i = 0; changes[i]; i += 2)
		ck_assert_int_eq(policy_set(&p, changes[i], changes[i + 1], err, sizeof err), MP_OK);
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, data, NULL, 0), MP_OK);
	for (size_t i = 0; i < steps; i++) {
		train_stats st;
		ck_assert_int_eq(trainer_step(t, &st), MP_OK);
		out[i] = st.loss;
	}
	trainer_free(t);
}

/* Promoted after every product, a 14-bit accumulator holds each e4m3
 * product exactly and fp32 adds them in order: the same bits as the
 * emulated fp32 accumulator (24), step after step. The BLAS path sums in
 * another order, so it agrees only closely; 4 bits are far off (over the
 * steps: the first loss, of near-zero logits, is ln V whatever sums them). */
START_TEST(in_training)
{
	corpus data;
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 32, err, sizeof err) == MP_OK, "%s", err);
	enum { STEPS = 4 };
	double blas[STEPS], fp32[STEPS], every1[STEPS], four[STEPS];
	losses(&data, (const char *const[]){ NULL }, STEPS, blas);
	losses(&data, (const char *const[]){ "accum-bits", "24", NULL }, STEPS, fp32);
	losses(&data, (const char *const[]){ "accum-bits", "14", "promote-every", "1", NULL }, STEPS, every1);
	losses(&data, (const char *const[]){ "accum-bits", "4", NULL }, STEPS, four);
	double near = 0, far = 0;
	for (size_t i = 0; i < STEPS; i++) {
		ck_assert(every1[i] == fp32[i]);
		double dn = fabs(fp32[i] - blas[i]) / blas[i], df = fabs(four[i] - blas[i]) / blas[i];
		near = dn > near ? dn : near;
		far = df > far ? df : far;
	}
	ck_assert_msg(near < 1e-3, "emulated fp32 accumulation %g from BLAS's", near);
	ck_assert_msg(far > 10 * near && far > 2e-4, "4-bit accumulator only %g from BLAS's (fp32 %g)", far, near);
	/* the GPU trainers sum with cuBLAS: refused, not ignored */
	train_config cfg = train_config_default();
	cfg.device = TRAIN_DEVICE_EMULATED;
	train_policy p;
	ck_assert_int_eq(policy_from_name("fp8-mixed", &p), MP_OK);
	ck_assert_int_eq(policy_set(&p, "promote-every", "128", err, sizeof err), MP_OK);
	trainer *t = NULL;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_EUNSUPPORTED);
	ck_assert_int_eq(policy_set(&p, "accum-bits", "25", err, sizeof err), MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "2..24"));
	corpus_free(&data);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("accum");
	TCase *tc = tcase_create("accum");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, drops_bits);
	tcase_add_test(tc, toward_zero);
	tcase_add_test(tc, block_order);
	tcase_add_test(tc, carry);
	tcase_add_test(tc, promotion_restarts);
	tcase_add_test(tc, fp32_paths);
	tcase_add_test(tc, exact_dot);
	tcase_add_test(tc, gemm);
	tcase_add_test(tc, cfg_ranges);
	tcase_add_test(tc, error_size);
	tcase_add_test(tc, promotion_floor);
	tcase_add_test(tc, in_training);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
