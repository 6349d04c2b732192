/* The policy parts of train/policy_parts.c in the tiny GPT:
 *
 * - per-operand GEMM formats (fwd=, dgrad=, wgrad=): one Linear's three
 *   GEMMs (model_gemm.c) against a reference in double written here, each
 *   operand rounded by the exact core (fmt_round_double, fmt/round.c) into
 *   its format; each part reaches the GEMM it names and no other (bitwise:
 *   the other products are plain fp32 BLAS's); parts set to the formats a
 *   preset already uses change nothing, bit for bit;
 * - softmax=, layernorm=, gelu=: the first block's outputs are values of
 *   the format and equal the fp32 pass's outputs rounded by the exact core;
 * - flip=: p = 0 changes nothing; p > 0 is reproducible for a seed;
 * - bad part values refused, the part named; parts with fp8 scaling and
 *   on --device cuda refused.
 *
 * The tolerance of a reference GEMM: the operands' products are exact in
 * fp32 (at most 8 + 8 significant bits here), so the layer's result differs
 * from the exact sum only by the n fp32 additions of its dot product (and
 * the bias's): |err| <= (n + 1) 2^-24 (sum |x_i w_i| + |b|) (Higham,
 * Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "fmt/decode.h"
#include "fmt/round.h"
#include "train/model.h"
#include "train/model_gemm.h"
#include "train/policy.h"
#include "train/train.h"
#include "util/rng.h"

enum { BT = 8, C = 16, OC = 48 };   /* the first block's qkv Linear of the fixture */

/* x rounded to nearest even into f by the exact core, as a double. */
static double qx(fmt_id f, double x)
{
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	const fmt_info *fi = fmt_get(f);
	return fmt_to_double(fi, fmt_round_double(fi, &ctl, x, NULL));
}

/* Uniform in [-2, 2) from a counter-based stream. */
static float urand(uint64_t seed, uint64_t i)
{
	return (float)((double)(rng_mix64(seed ^ rng_mix64(i)) >> 11) * 0x1p-51 - 2.0);
}

static train_policy policy(const char *spec)
{
	train_policy p;
	char err[256];
	ck_assert_msg(policy_parse(spec, &p, err, sizeof err) == MP_OK, "%s: %s", spec, err);
	return p;
}

/* --- one Linear's GEMMs --- */

typedef struct {
	gpt_model m;
	float x[BT * C], dy[BT * OC];
	float *w, *b;   /* the block's qkv weight (OC,C) and bias (OC), in m's params */
} linear_fixture;

static void linear_init(linear_fixture *f)
{
	gpt_config c = { .V = 16, .T = BT, .C = C, .L = 1, .NH = 2 };
	ck_assert_int_eq(gpt_init(&f->m, c, 1, BT, 3), MP_OK);
	f->w = f->m.params.qkvw;
	f->b = f->m.params.qkvb;
	for (size_t i = 0; i < OC * C; i++)
		f->w[i] = urand(1, i) * 0.5f;
	for (size_t i = 0; i < OC; i++)
		f->b[i] = urand(2, i);
	for (size_t i = 0; i < BT * C; i++)
		f->x[i] = urand(3, i);
	for (size_t i = 0; i < BT * OC; i++)
		f->dy[i] = urand(4, i) * 0.01f;
}

/* A pass of the Linear under nx (NULL: plain fp32): y, dx, dw. The input
 * goes in as a copy, which the forward may round in place (xin gets it
 * back). */
static void linear_run(linear_fixture *f, const gpt_numerics *nx, float *y, float *dx, float *dw, float *xin)
{
	memcpy(xin, f->x, sizeof f->x);
	ck_assert_int_eq(gemm_forward(&f->m, nx, y, xin, f->w, f->b, BT, C, OC, 0), MP_OK);
	memset(dx, 0, BT * C * sizeof *dx);
	memset(dw, 0, OC * C * sizeof *dw);
	float db[OC] = { 0 };
	ck_assert_int_eq(gemm_backward(&f->m, nx, dx, dw, db, f->dy, xin, f->w, BT, C, OC, 0), MP_OK);
}

/* The three references: y = q(x) q(w)^T + b, dx = q(dy) q(w), dw = q(dy)^T
 * q(x), each operand in its own format (fx, fw, ...), with each entry's
 * bound (n + 1) 2^-24 sum |terms|. */
typedef struct {
	double y[BT * OC], ty[BT * OC], dx[BT * C], tdx[BT * C], dw[OC * C], tdw[OC * C];
} linear_ref;

static void linear_ref_make(const linear_fixture *f, fmt_id fx, fmt_id fw, fmt_id fdy, fmt_id fw2, fmt_id fx2,
                            fmt_id fdy2, linear_ref *r)
{
	for (size_t i = 0; i < BT; i++)
		for (size_t o = 0; o < OC; o++) {
			double s = f->b[o], a = fabs(f->b[o]);
			for (size_t c = 0; c < C; c++) {
				double t = qx(fx, f->x[i * C + c]) * qx(fw, f->w[o * C + c]);
				s += t;
				a += fabs(t);
			}
			r->y[i * OC + o] = s;
			r->ty[i * OC + o] = (C + 1) * 0x1p-24 * a;
		}
	for (size_t i = 0; i < BT; i++)
		for (size_t c = 0; c < C; c++) {
			double s = 0, a = 0;
			for (size_t o = 0; o < OC; o++) {
				double t = qx(fdy, f->dy[i * OC + o]) * qx(fw2, f->w[o * C + c]);
				s += t;
				a += fabs(t);
			}
			r->dx[i * C + c] = s;
			r->tdx[i * C + c] = (OC + 1) * 0x1p-24 * a;
		}
	for (size_t o = 0; o < OC; o++)
		for (size_t c = 0; c < C; c++) {
			double s = 0, a = 0;
			for (size_t i = 0; i < BT; i++) {
				double t = qx(fdy2, f->dy[i * OC + o]) * qx(fx2, f->x[i * C + c]);
				s += t;
				a += fabs(t);
			}
			r->dw[o * C + c] = s;
			r->tdw[o * C + c] = (BT + 1) * 0x1p-24 * a;
		}
}

/* Every entry of got within its bound of ref; returns how many of them lie
 * farther than their bound from other (a reference with other formats), so
 * a caller can tell that the formats made a difference. */
static size_t within(const char *what, const float *got, const double *ref, const double *tol, const double *other,
                     size_t n)
{
	size_t apart = 0;
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(fabs(got[i] - ref[i]) <= tol[i], "%s[%zu] = %.9g, reference %.9g (bound %.3g)", what, i,
		              (double)got[i], ref[i], tol[i]);
		apart += fabs(ref[i] - other[i]) > 2 * tol[i];
	}
	return apart;
}

static void same_bits(const char *what, const float *a, const float *b, size_t n)
{
	ck_assert_msg(!memcmp(a, b, n * sizeof *a), "%s differs from the plain fp32 GEMM", what);
}

START_TEST(operands_reach_their_gemm)
{
	static linear_fixture f;
	static linear_ref r, r32;
	static float y0[BT * OC], dx0[BT * C], dw0[OC * C], x0[BT * C];
	static float y[BT * OC], dx[BT * C], dw[OC * C], xin[BT * C];
	linear_init(&f);
	linear_run(&f, NULL, y0, dx0, dw0, x0);
	const fmt_id F32 = FMT_FP32, E4 = FMT_E4M3, E5 = FMT_E5M2, B16 = FMT_BF16;
	linear_ref_make(&f, F32, F32, F32, F32, F32, F32, &r32);
	within("plain y", y0, r32.y, r32.ty, r32.y, BT * OC);

	/* fwd only: y from e4m3 X and bf16 W; the input left as computed (wgrad
	 * takes it in fp32); dX and dW plain */
	train_policy p = policy("fp32+fwd=x:fp8-e4m3/w:bf16");
	gpt_numerics nx = { .pol = &p };
	linear_run(&f, &nx, y, dx, dw, xin);
	linear_ref_make(&f, E4, B16, F32, F32, F32, F32, &r);
	ck_assert_uint_gt(within("fwd y", y, r.y, r.ty, r32.y, BT * OC), BT * OC / 2);
	same_bits("fwd: the input", xin, f.x, BT * C);
	same_bits("fwd: dX", dx, dx0, BT * C);
	same_bits("fwd: dW", dw, dw0, OC * C);

	/* dgrad only: dX from e5m2 dY and e4m3 W; y and dW plain */
	p = policy("fp32+dgrad=dy:fp8-e5m2/w:fp8-e4m3");
	linear_run(&f, &nx, y, dx, dw, xin);
	linear_ref_make(&f, F32, F32, E5, E4, F32, F32, &r);
	ck_assert_uint_gt(within("dgrad dx", dx, r.dx, r.tdx, r32.dx, BT * C), BT * C / 2);
	same_bits("dgrad: y", y, y0, BT * OC);
	same_bits("dgrad: dW", dw, dw0, OC * C);

	/* wgrad only: dW from e4m3 X and e5m2 dY; y and dX plain */
	p = policy("fp32+wgrad=x:fp8-e4m3/dy:fp8-e5m2");
	linear_run(&f, &nx, y, dx, dw, xin);
	linear_ref_make(&f, F32, F32, F32, F32, E4, E5, &r);
	ck_assert_uint_gt(within("wgrad dw", dw, r.dw, r.tdw, r32.dw, OC * C), OC * C / 2);
	same_bits("wgrad: y", y, y0, BT * OC);
	same_bits("wgrad: dX", dx, dx0, BT * C);

	/* all six at once, one format given for both operands of fwd */
	p = policy("fp32+fwd=bf16+dgrad=dy:fp8-e5m2+dgrad=w:bf16+wgrad=x:fp8-e4m3/dy:bf16");
	linear_run(&f, &nx, y, dx, dw, xin);
	linear_ref_make(&f, B16, B16, E5, B16, E4, B16, &r);
	within("all y", y, r.y, r.ty, r32.y, BT * OC);
	within("all dx", dx, r.dx, r.tdx, r32.dx, BT * C);
	within("all dw", dw, r.dw, r.tdw, r32.dw, OC * C);
	gpt_free(&f.m);
}
END_TEST

/* fwd and wgrad take X in one format: the forward rounds it in place (the
 * stored activation), and wgrad reads it so. */
START_TEST(shared_input_rounded_in_place)
{
	static linear_fixture f;
	static linear_ref r, r32;
	static float y[BT * OC], dx[BT * C], dw[OC * C], xin[BT * C];
	linear_init(&f);
	train_policy p = policy("fp32+fwd=x:bf16+wgrad=x:bf16");
	gpt_numerics nx = { .pol = &p };
	linear_run(&f, &nx, y, dx, dw, xin);
	for (size_t i = 0; i < BT * C; i++)
		ck_assert_msg((double)xin[i] == qx(FMT_BF16, f.x[i]), "input %zu: %a", i, (double)xin[i]);
	linear_ref_make(&f, FMT_BF16, FMT_FP32, FMT_FP32, FMT_FP32, FMT_FP32, FMT_FP32, &r32);
	linear_ref_make(&f, FMT_BF16, FMT_FP32, FMT_FP32, FMT_FP32, FMT_BF16, FMT_FP32, &r);
	within("y", y, r.y, r.ty, r.y, BT * OC);
	within("dw", dw, r.dw, r.tdw, r.dw, OC * C);
	gpt_free(&f.m);
}
END_TEST

/* Parts naming the formats a policy already has change nothing. */
START_TEST(parts_equal_to_the_preset)
{
	static const char *const pairs[][2] = {
		{ "fp32", "fp32+fwd=fp32+dgrad=fp32+wgrad=fp32+elementwise=fp32+flip=weights:0" },
		{ "bf16-mixed", "bf16-mixed+fwd=bf16+dgrad=dy:bf16/w:bf16+wgrad=x:bf16/dy:bf16" },
		{ "fp8-mixed", "fp8-mixed+fwd=fp8-e4m3+softmax=fp32+flip=grads:0:exp" },
	};
	static linear_fixture f;
	static float y[2][BT * OC], dx[2][BT * C], dw[2][OC * C], xin[2][BT * C];
	linear_init(&f);
	for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
		for (int j = 0; j < 2; j++) {
			train_policy p = policy(pairs[k][j]);
			gpt_numerics nx = { .pol = &p };
			linear_run(&f, &nx, y[j], dx[j], dw[j], xin[j]);
		}
		same_bits(pairs[k][1], y[0], y[1], BT * OC);
		same_bits(pairs[k][1], dx[0], dx[1], BT * C);
		same_bits(pairs[k][1], dw[0], dw[1], OC * C);
	}
	gpt_free(&f.m);
}
END_TEST

/* --- the whole model --- */

typedef struct {
	gpt_model m;
	int inp[2 * 8], tgt[2 * 8];
} model_fixture;

static void model_init(model_fixture *f)
{
	gpt_config c = { .V = 32, .T = 8, .C = 16, .L = 2, .NH = 2 };
	ck_assert_int_eq(gpt_init(&f->m, c, 2, 8, 11), MP_OK);
	for (size_t i = 0; i < 16; i++) {
		f->inp[i] = (int)(rng_mix64(100 + i) % 32);
		f->tgt[i] = (int)(rng_mix64(200 + i) % 32);
	}
}

/* The forward under spec; *loss gets the loss, the gradients after a
 * backward land in grads (m.num_params floats) when grads is not NULL. */
static void model_pass(model_fixture *f, const char *spec, uint64_t seed, float *loss, float *grads)
{
	train_policy p;
	gpt_numerics nx = { .seed = seed, .step = 3 };
	if (spec) {
		p = policy(spec);
		nx.pol = &p;
	}
	ck_assert_int_eq(gpt_forward(&f->m, &nx, f->inp, f->tgt), MP_OK);
	*loss = f->m.mean_loss;
	if (grads) {
		gpt_zero_grad(&f->m);
		ck_assert_int_eq(gpt_backward(&f->m, &nx, 1.0f), MP_OK);
		memcpy(grads, f->m.grads_memory, f->m.num_params * sizeof *grads);
	}
}

/* got[i] is a value of fmt (decoding its encoding gives it back) and the
 * exact core's rounding of ref[i]. */
static void rounded_outputs(const char *what, fmt_id fmt, const float *got, const float *ref, size_t n)
{
	size_t changed = 0;
	for (size_t i = 0; i < n; i++) {
		fmt_round_ctl ctl = { .mode = FMT_RNE };
		const fmt_info *fi = fmt_get(fmt);
		ck_assert_msg(fmt_to_double(fi, fmt_round_double(fi, &ctl, got[i], NULL)) == (double)got[i],
		              "%s[%zu] = %a is not a %s value", what, i, (double)got[i], fi->name);
		ck_assert_msg((double)got[i] == qx(fmt, ref[i]), "%s[%zu] = %a, fp32 %a rounds to %a", what, i,
		              (double)got[i], (double)ref[i], qx(fmt, ref[i]));
		changed += got[i] != ref[i];
	}
	ck_assert_msg(changed > 0, "%s: nothing was rounded", what);
}

START_TEST(elementwise_outputs_rounded)
{
	static model_fixture f;
	model_init(&f);
	size_t BTC = 16 * 16, NT = 2 * 2 * 8 * 8;
	static float ln1[16 * 16], att[2 * 2 * 8 * 8], gelu[16 * 64];
	float loss;
	model_pass(&f, NULL, 1, &loss, NULL);
	memcpy(ln1, f.m.acts.ln1, sizeof ln1);
	memcpy(att, f.m.acts.att, sizeof att);
	memcpy(gelu, f.m.acts.fch_gelu, sizeof gelu);
	model_pass(&f, "fp32+layernorm=bf16", 1, &loss, NULL);
	rounded_outputs("ln1 (bf16)", FMT_BF16, f.m.acts.ln1, ln1, BTC);
	model_pass(&f, "fp32+softmax=fp8-e4m3", 1, &loss, NULL);
	rounded_outputs("att (e4m3)", FMT_E4M3, f.m.acts.att, att, NT);
	model_pass(&f, "fp32+gelu=fp16", 1, &loss, NULL);
	rounded_outputs("gelu (fp16)", FMT_FP16, f.m.acts.fch_gelu, gelu, 4 * BTC);
	/* elementwise= sets all three */
	train_policy p = policy("fp32+elementwise=fp8-e5m2+gelu=bf16");
	ck_assert_int_eq(p.softmax_fmt, FMT_E5M2);
	ck_assert_int_eq(p.layernorm_fmt, FMT_E5M2);
	ck_assert_int_eq(p.gelu_fmt, FMT_BF16);
	gpt_free(&f.m);
}
END_TEST

START_TEST(flips_in_training)
{
	static model_fixture f;
	model_init(&f);
	size_t n = f.m.num_params;
	float *g0 = malloc(n * sizeof *g0), *g1 = malloc(n * sizeof *g1);
	ck_assert_ptr_nonnull(g0);
	ck_assert_ptr_nonnull(g1);
	float l0, l1, l2;
	model_pass(&f, "bf16-mixed", 1, &l0, g0);
	model_pass(&f, "bf16-mixed+flip=activations:0", 1, &l1, g1);
	ck_assert_msg(l0 == l1 && !memcmp(g0, g1, n * sizeof *g0), "p = 0 changed the pass");
	for (int c = 0; c < 3; c++) {
		static const char *const specs[] = { "bf16-mixed+flip=weights:0.02:frac", "bf16-mixed+flip=activations:0.02",
			                             "bf16-mixed+flip=grads:0.05:exp" };
		model_pass(&f, specs[c], 1, &l1, g1);
		bool differ = l1 != l0 || memcmp(g0, g1, n * sizeof *g0);
		ck_assert_msg(differ, "%s: no flip", specs[c]);
		model_pass(&f, specs[c], 1, &l2, g0);
		ck_assert_msg((l1 == l2 || (isnan(l1) && isnan(l2))) && !memcmp(g0, g1, n * sizeof *g0),
		              "%s: not reproducible", specs[c]);
		model_pass(&f, "bf16-mixed", 1, &l0, g0);
	}
	/* flips in the forward's operands change the loss; another seed other flips */
	model_pass(&f, "bf16-mixed+flip=weights:0.02:frac", 1, &l1, NULL);
	model_pass(&f, "bf16-mixed+flip=weights:0.02:frac", 2, &l2, NULL);
	ck_assert_msg(l1 != l0 && l2 != l0 && l1 != l2, "losses %g %g %g", (double)l0, (double)l1, (double)l2);
	free(g0);
	free(g1);
	gpt_free(&f.m);
}
END_TEST

/* --- parsing and the rules joining a policy to a run --- */

START_TEST(bad_parts_refused)
{
	static const char *const bad[][3] = {
		{ "fp32+fwd=fp4", "fwd:", "'fp4'" },
		{ "fp32+fwd=bf61", "fwd:", "'bf61'" },
		{ "fp32+dgrad=x:bf16", "dgrad:", "'x:bf16'" },
		{ "fp32+wgrad=x:bf16/x:fp16", "wgrad:", "'x:fp16'" },
		{ "fp32+wgrad=x:", "wgrad:", "''" },
		{ "fp32+softmax=bogus", "softmax:", "'bogus'" },
		{ "fp32+layernorm=e8m0", "layernorm:", "'e8m0'" },
		{ "fp32+elementwise=fp6-e3m2", "elementwise:", "'fp6-e3m2'" },
		{ "fp32+flip=weights:1.5", "flip:", "'1.5'" },
		{ "fp32+flip=weights:x", "flip:", "'x'" },
		{ "fp32+flip=bias:0.1", "flip:", "'bias:0.1'" },
		{ "fp32+flip=grads", "flip:", "'grads'" },
		{ "fp32+flip=grads:0.1:sign", "flip:", "'sign'" },
		{ "fp8-current+fwd=bf16", "fwd:", "fp8-scaling" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		train_policy p;
		char err[512] = "";
		ck_assert_msg(policy_parse(bad[i][0], &p, err, sizeof err) == MP_EINVAL, "%s accepted", bad[i][0]);
		ck_assert_msg(strstr(err, bad[i][1]) && strstr(err, bad[i][2]), "%s: '%s'", bad[i][0], err);
	}
	/* the other order: fp8-scaling after an operand format */
	train_config cfg = train_config_default();
	char err[512];
	train_policy p = policy("fp8-mixed+fwd=bf16+fp8-scaling=current");
	ck_assert_int_eq(policy_check(&p, &cfg, err, sizeof err), MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "fwd, dgrad, wgrad"));
	/* every part is the CPU's */
	static const char *const cpu[] = { "bf16-mixed+fwd=x:fp8-e4m3", "bf16-mixed+gelu=fp16",
		                           "bf16-mixed+flip=grads:1e-6" };
	cfg.device = TRAIN_DEVICE_CUDA;
	for (size_t i = 0; i < 3; i++) {
		p = policy(cpu[i]);
		ck_assert_int_eq(policy_check(&p, &cfg, err, sizeof err), MP_EUNSUPPORTED);
		ck_assert_msg(strstr(err, "--device cuda") && strstr(err, "--device cpu only"), "%s: %s", cpu[i], err);
	}
	p = policy("bf16-mixed");
	ck_assert_int_eq(policy_check(&p, &cfg, err, sizeof err), MP_OK);
}
END_TEST

START_TEST(parts_described)
{
	char d[1024];
	train_policy p = policy("bf16-mixed+fwd=x:fp8-e4m3+wgrad=dy:fp8-e5m2+layernorm=bf16+flip=weights:1e-06:exp");
	policy_describe(&p, d, sizeof d);
	ck_assert_msg(strstr(d, ", fwd x:fp8-e4m3, wgrad dy:fp8-e5m2, layernorm out bf16, flips in weights p=1e-06 "
	                        "(exp bits)"), "%s", d);
	train_policy q = policy("bf16-mixed");
	char e[1024];
	policy_describe(&q, e, sizeof e);
	ck_assert_ptr_null(strstr(e, "fwd"));
	ck_assert_ptr_null(strstr(e, "flips"));
}
END_TEST

int main(int argc, char **argv)
{
	(void)argc;
	testutil_fast_blas(argv);
	Suite *s = suite_create("model_parts");
	TCase *tc = tcase_create("parts");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, operands_reach_their_gemm);
	tcase_add_test(tc, shared_input_rounded_in_place);
	tcase_add_test(tc, parts_equal_to_the_preset);
	tcase_add_test(tc, elementwise_outputs_rounded);
	tcase_add_test(tc, flips_in_training);
	tcase_add_test(tc, bad_parts_refused);
	tcase_add_test(tc, parts_described);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
