/* train/gradnoise.c and its place in the casts: the output gradients over
 * their quantization noise, ||G|| / ||Q(G) - G||, against a case worked by
 * hand (an E5M2 per-tensor cast of two values) and against a plain
 * recomputation of the sums on an nvfp4 cast (both halves, both
 * contractions, the Hadamard transform, SR), the weights and unrecorded
 * casts left out; the weight gradient's ratio on a product worked by hand;
 * then the bf16-from switch in training: from step 0 it is bf16-mixed bit
 * for bit, from step N the steps before N are nvfp4's and the steps after
 * cast nothing. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "train/blockcast.h"
#include "train/data.h"
#include "train/fp8scale.h"
#include "train/gradnoise.h"
#include "train/policy.h"
#include "train/train.h"
#include "testutil.h"

/* NaN with nothing cast; 0 for an all-zero g; inf for an exact cast; and
 * (3, 4) against (3, 3): ||g|| = 5, ||e|| = 1, ratio 5. */
START_TEST(ratio_rules)
{
	grad_noise a = { 0 };
	ck_assert(isnan(grad_noise_ratio(&a)));
	float z[2] = { 0, 0 };
	grad_noise_add(&a, z, z, 2);
	ck_assert(grad_noise_ratio(&a) == 0);
	float g[2] = { 3, 4 }, q[2] = { 3, 3 };
	grad_noise b = { 0 };
	grad_noise_add(&b, g, g, 2);
	ck_assert(isinf(grad_noise_ratio(&b)));
	grad_noise c = { 0 };
	grad_noise_add(&c, g, q, 2);
	ck_assert(c.n == 2 && c.gg == 25 && c.ee == 1);
	ck_assert(grad_noise_ratio(&c) == 5);
	grad_noise_merge(&c, &a);   /* zeros add nothing but their count */
	ck_assert(c.n == 4 && grad_noise_ratio(&c) == 5);
	float bad[1] = { NAN };
	grad_noise_add(&c, bad, bad, 1);
	ck_assert(isnan(grad_noise_ratio(&c)));
}
END_TEST

/* One weight, two tokens: G = (1, 2), X = (3, 4): dW = 1*3 + 2*4 = 11; the
 * product added 10 to the 5 already there: noise -1, ratio 11. */
START_TEST(wgrad_hand)
{
	float dout[2] = { 1, 2 }, inp[2] = { 3, 4 }, before[1] = { 5 }, after[1] = { 15 }, ref[1];
	grad_noise g = { 0 };
	grad_noise_wgrad(&g, before, after, ref, dout, inp, 2, 1, 1);
	ck_assert(ref[0] == 11 && g.n == 1 && g.gg == 121 && g.ee == 1);
	ck_assert(grad_noise_ratio(&g) == 11);
}
END_TEST

/* fp8-current's output gradient in E5M2: amax 1 gives the scale
 * 57344 / 1; 1 becomes 57344, E5M2's largest, exactly; 0.3125 becomes
 * 17920, between 16384 and 20480 (E5M2's spacing from 2^14 is 2^12), 1536
 * above 16384: rounded down, read back as 16384 / 57344 = 2/7. So ||g||^2 =
 * 1 + 0.3125^2 and ||Q(g) - g|| = 0.3125 - 2/7 (in fp32: 16384f / 57344f).
 * A weight's cast and an unrecorded cast do not count. */
START_TEST(hand_case)
{
	fp8_opts o = { .scaling = CAST_SCALING_CURRENT, .fwd = FMT_E4M3, .bwd = FMT_E5M2, .H = 1, .noise = true };
	fp8_state *st;
	ck_assert_int_eq(fp8_state_create(&st, 1, &o), MP_OK);
	fp8_state_begin(st);
	size_t ig = fp8_tensor_index(0, 2, FP8_GRAD_OUTPUT), iw = fp8_tensor_index(0, 2, FP8_WEIGHT);
	float x[2] = { 1.0f, 0.3125f };
	fp8_state_cast(st, 0, ig, true, x, 2);
	ck_assert(x[0] == 1.0f && x[1] == 16384.0f / 57344.0f);
	float w[2] = { 1.0f, 0.3f }, u[2] = { 1.0f, 0.3f };
	fp8_state_cast(st, 0, iw, true, w, 2);
	fp8_state_cast(st, 1, ig, false, u, 2);
	fp8_state_step_end(st);
	double e = (double)(16384.0f / 57344.0f) - 0.3125;
	double want = sqrt((1.0 + 0.3125 * 0.3125) / (e * e));
	double got = fp8_state_grad_noise_ratio(st);
	ck_assert_msg(fabs(got - want) <= 1e-12 * want, "ratio %.17g, by hand %.17g", got, want);
	ck_assert(got > 39.1 && got < 39.2);   /* sqrt(1.09765625 / 0.0267857^2) = 39.11 */
	/* the next step forgets it; a step without a gradient cast has none */
	fp8_state_step_end(st);
	ck_assert(isnan(fp8_state_grad_noise_ratio(st)));
	fp8_state_free(st);
	/* without .noise the same cast measures nothing, and casts the same */
	o.noise = false;
	ck_assert_int_eq(fp8_state_create(&st, 1, &o), MP_OK);
	fp8_state_begin(st);
	float y[2] = { 1.0f, 0.3125f };
	fp8_state_cast(st, 0, ig, true, y, 2);
	ck_assert(y[0] == 1.0f && y[1] == 16384.0f / 57344.0f && !fp8_state_noise(st));
	fp8_state_step_end(st);
	ck_assert(isnan(fp8_state_grad_noise_ratio(st)));
	fp8_state_free(st);
}
END_TEST

/* Fills x (n) with values over several binades, a different tensor per k. */
static void fill(float *x, size_t n, int k)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(sin(0.37 * (double)i + k) * ldexp(1.0, (int)((i * 7 + (size_t)k) % 9) - 4));
}

/* sum x^2 and sum (q - x)^2 over n, in a plain loop. */
static void sums(const float *x, const float *q, size_t n, double *gg, double *ee)
{
	double a = 0, b = 0;
	for (size_t i = 0; i < n; i++) {
		a += (double)x[i] * x[i];
		b += ((double)q[i] - x[i]) * ((double)q[i] - x[i]);
	}
	*gg += a;
	*ee += b;
}

/* nvfp4's output gradient (32 tokens by 24): half 0 casts it along its
 * rows (1x16 blocks, SR), half 1 another down its columns after the
 * Hadamard transform (16x1 blocks, SR). The state's ratio is the plain
 * sums over the same block_cast calls made here, of the tensors as the
 * casts saw them (the rotated one for half 1). */
START_TEST(nvfp4_against_plain)
{
	enum { R = 32, C = 24, N = R * C };
	fp8_opts o = { .scaling = CAST_SCALING_NVFP4, .fwd = FMT_E2M1, .bwd = FMT_E2M1, .H = 1, .noise = true, .rht = true,
		       .sr = true, .w2d = true };
	fp8_state *st;
	ck_assert_int_eq(fp8_state_create(&st, 1, &o), MP_OK);
	fp8_state_begin(st);
	size_t ig = fp8_tensor_index(0, 1, FP8_GRAD_OUTPUT), iw = fp8_tensor_index(0, 1, FP8_WEIGHT);
	static float a[N], b[N], ra[N], rb[N], rot[N], w[R * R];
	fill(a, N, 1);
	fill(b, N, 2);
	memcpy(ra, a, sizeof a);
	memcpy(rb, b, sizeof b);
	ck_assert_int_eq(fp8_state_cast_and_record(st, 0, ig, FP8_ALONG_ROWS, 11, NULL, a, R, C), MP_OK);
	ck_assert_int_eq(fp8_state_cast_and_record(st, 1, ig, FP8_ALONG_COLS, 12, NULL, b, R, C), MP_OK);
	fill(w, R * R, 3);
	ck_assert_int_eq(fp8_state_cast_and_record(st, 0, iw, FP8_ALONG_ROWS, 13, NULL, w, R, R), MP_OK);
	fill(w, R * R, 4);   /* an output gradient's cast not recorded */
	ck_assert_int_eq(fp8_state_cast_only(st, 1, ig, FP8_ALONG_ROWS, 14, NULL, w, R, C), MP_OK);
	fp8_state_step_end(st);

	block_scratch s = { 0 };
	block_cast_stat bs;
	double gg0 = 0, ee0 = 0, gg1 = 0, ee1 = 0;
	block_cast_cfg rows = { .kind = CAST_SCALING_NVFP4, .elem = FMT_E2M1, .br = 1, .bc = 16, .mode = FMT_SR,
		                .seed = 11 };
	memcpy(rot, ra, sizeof ra);
	ck_assert_int_eq(block_cast(ra, R, C, &rows, &s, &bs), MP_OK);
	ck_assert(memcmp(ra, a, sizeof a) == 0);   /* the state cast as block_cast does */
	sums(rot, ra, N, &gg0, &ee0);
	block_cast_cfg cols = rows;
	cols.br = 16;
	cols.bc = 1;
	cols.seed = 12;
	block_rht16_rows(rb, R, C, QUANT_RHT_SIGNS);
	memcpy(rot, rb, sizeof rb);
	ck_assert_int_eq(block_cast(rb, R, C, &cols, &s, &bs), MP_OK);
	ck_assert(memcmp(rb, b, sizeof b) == 0);
	sums(rot, rb, N, &gg1, &ee1);
	block_scratch_free(&s);
	double want = sqrt((gg0 + gg1) / (ee0 + ee1)), got = fp8_state_grad_noise_ratio(st);
	ck_assert_msg(fabs(got - want) <= 1e-12 * want, "ratio %.17g, plain %.17g", got, want);
	/* E2M1 with SR: the noise is a sizeable share of the gradient */
	ck_assert_msg(got > 1 && got < 20, "ratio %g", got);
	fp8_state_free(st);
}
END_TEST

/* The shape the tests train at: 2 blocks, so that nvfp4 casts block 0. */
static train_config small_cfg(void)
{
	train_config cfg = train_config_default();
	cfg.grad_noise = true;
	cfg.model.L = 2;
	cfg.model.C = 32;
	cfg.model.NH = 2;
	cfg.model.T = 16;
	cfg.B = 4;
	cfg.t = 16;
	cfg.eval_every = 2;
	return cfg;
}

/* n steps of policy spec into s[0..n). */
static void run(const char *spec, const corpus *data, size_t n, train_stats *s)
{
	train_config cfg = small_cfg();
	train_policy p;
	char why[256];
	ck_assert_msg(policy_parse(spec, &p, why, sizeof why) == MP_OK, "%s", why);
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, data, NULL, 0), MP_OK);
	for (size_t k = 0; k < n; k++)
		ck_assert_int_eq(trainer_step(t, &s[k]), MP_OK);
	trainer_free(t);
}

static bool same_num(double a, double b)
{
	return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* The fp8 presets' other parts are bf16-mixed's (policy.c's
 * FP8_RECIPE_REST): switched at step 0, nvfp4 and mxfp8 are bf16-mixed,
 * losses and norms bit for bit, and cast nothing. Switched at step 2, the
 * first two steps are nvfp4's; steps 2 and 3 cast nothing, and step 2's
 * loss (a bf16 forward of the same weights) is not nvfp4's. */
START_TEST(bf16_from)
{
	corpus data;
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 16, err, sizeof err) == MP_OK, "%s", err);
	enum { S = 4 };
	train_stats ref[S], a[S], b[S], nv[S], sw[S];
	run("bf16-mixed", &data, S, ref);
	run("nvfp4+bf16-from=0", &data, S, a);
	run("mxfp8+bf16-from=0", &data, S, b);
	for (size_t k = 0; k < S; k++) {
		ck_assert_msg(same_num(a[k].loss, ref[k].loss) && same_num(a[k].val_loss, ref[k].val_loss) &&
		              same_num(a[k].grad_norm, ref[k].grad_norm), "step %zu: nvfp4+bf16-from=0 %.9g, bf16-mixed %.9g",
		              k, a[k].loss, ref[k].loss);
		ck_assert(same_num(b[k].loss, ref[k].loss) && same_num(b[k].grad_norm, ref[k].grad_norm));
		ck_assert(isnan(a[k].grad_noise_ratio) && isnan(a[k].overflow_frac) && isnan(ref[k].grad_noise_ratio));
	}
	run("nvfp4", &data, S, nv);
	run("nvfp4+bf16-from=2", &data, S, sw);
	for (size_t k = 0; k < 2; k++) {
		ck_assert(same_num(sw[k].loss, nv[k].loss) && same_num(sw[k].grad_norm, nv[k].grad_norm));
		ck_assert(same_num(sw[k].grad_noise_ratio, nv[k].grad_noise_ratio));
		ck_assert(same_num(sw[k].overflow_frac, nv[k].overflow_frac));
		ck_assert(same_num(sw[k].wgrad_noise_ratio, nv[k].wgrad_noise_ratio));
		ck_assert_msg(nv[k].grad_noise_ratio > 1 && isfinite(nv[k].grad_noise_ratio), "step %zu: %g", k,
		              nv[k].grad_noise_ratio);
		ck_assert_msg(nv[k].wgrad_noise_ratio > 1 && isfinite(nv[k].wgrad_noise_ratio), "step %zu: %g", k,
		              nv[k].wgrad_noise_ratio);
	}
	for (size_t k = 2; k < S; k++) {
		ck_assert(isnan(sw[k].grad_noise_ratio) && isnan(sw[k].wgrad_noise_ratio) && isnan(sw[k].overflow_frac) &&
		          isnan(sw[k].cast_underflow_frac));
		ck_assert(isfinite(nv[k].grad_noise_ratio));
	}
	ck_assert(!same_num(sw[2].loss, nv[2].loss));
	/* step 1's evaluation (after 2 steps) is already bf16's */
	ck_assert(!same_num(sw[1].val_loss, nv[1].val_loss));
	/* three fraction bits against one: mxfp8's gradients are nearer */
	ck_assert(isnan(b[0].grad_noise_ratio));
	train_stats mx[1];
	run("mxfp8", &data, 1, mx);
	ck_assert_msg(mx[0].grad_noise_ratio > 2 * nv[0].grad_noise_ratio, "mxfp8 %g, nvfp4 %g", mx[0].grad_noise_ratio,
	              nv[0].grad_noise_ratio);
	/* a per-tensor recipe measures its casts, not its weight gradients */
	train_stats cur[1];
	run("fp8-current", &data, 1, cur);
	ck_assert(isfinite(cur[0].grad_noise_ratio) && isnan(cur[0].wgrad_noise_ratio));
	corpus_free(&data);
}
END_TEST

/* bf16-from=N: its name, its bounds, and only with fp8 scaling. */
START_TEST(bf16_from_part)
{
	train_policy p;
	char why[256];
	ck_assert_int_eq(policy_parse("nvfp4+bf16-from=80", &p, why, sizeof why), MP_OK);
	ck_assert(p.bf16_switch && p.bf16_from == 80 && !strcmp(p.name, "nvfp4+bf16-from=80"));
	ck_assert(policy_casts_at(&p, 79) && !policy_casts_at(&p, 80));
	ck_assert_int_eq(policy_from_name("nvfp4", &p), MP_OK);
	ck_assert(!p.bf16_switch && policy_casts_at(&p, 100000000));
	ck_assert_int_eq(policy_parse("nvfp4+bf16-from=-1", &p, why, sizeof why), MP_EINVAL);
	ck_assert_msg(strstr(why, "bf16-from '-1' is not a whole number in 0..100000000"), "%s", why);
	ck_assert_int_eq(policy_parse("mxfp8+bf16-from=1e3", &p, why, sizeof why), MP_EINVAL);
	ck_assert_msg(strstr(why, "bf16-from '1e3'"), "%s", why);
	ck_assert_int_eq(policy_parse("bf16-mixed+bf16-from=5", &p, why, sizeof why), MP_EINVAL);
	ck_assert_msg(strstr(why, "bf16-from applies to fp8 or fp4 scaling only"), "%s", why);
	char d[512];
	ck_assert_int_eq(policy_parse("nvfp4+bf16-from=80", &p, why, sizeof why), MP_OK);
	policy_describe(&p, d, sizeof d);
	ck_assert_msg(strstr(d, "the last block in bf16, every block in bf16 from step 80"), "%s", d);
}
END_TEST

int main(int argc, char **argv)
{
	testutil_fast_blas(argv);
	(void)argc;
	Suite *s = suite_create("gradnoise");
	TCase *tc = tcase_create("gradnoise");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ratio_rules);
	tcase_add_test(tc, hand_case);
	tcase_add_test(tc, wgrad_hand);
	tcase_add_test(tc, nvfp4_against_plain);
	tcase_add_test(tc, bf16_from);
	tcase_add_test(tc, bf16_from_part);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
