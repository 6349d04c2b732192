/* train/fp8scale.c: Transformer Engine's per-tensor scaling rules against
 * values worked out by hand in the comments (the scale from an amax, the
 * history window and algorithm, the margin, amax 0 / inf / NaN), a spike
 * that overflows for one step under delayed scaling and never under
 * current scaling, the statistics, and the rules inside a training run. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "train/data.h"
#include "train/fp8scale.h"
#include "train/policy.h"
#include "train/train.h"
#include "testutil.h"

/* The options of a per-tensor state: scaling, forward format, history, algo, margin. */
#define OPTS(S, F, H_, A, M) \
	(&(fp8_opts){ .scaling = (S), .fwd = (F), .bwd = FMT_E5M2, .H = (H_), .algo = (A), .margin = (M) })

/* --- the rules on numbers --- */

/* 448 / 2 = 224; margin 1 halves it (112), margin -1 doubles it (448);
 * E5M2: 57344 / 2 = 28672. amax 0, inf or NaN keeps the previous scale. */
START_TEST(delayed_scale)
{
	ck_assert_float_eq(fp8_delayed_scale(448, 2, 0, 1), 224);
	ck_assert_float_eq(fp8_delayed_scale(448, 2, 1, 1), 112);
	ck_assert_float_eq(fp8_delayed_scale(448, 2, -1, 1), 448);
	ck_assert_float_eq(fp8_delayed_scale(57344, 2, 0, 1), 28672);
	ck_assert_float_eq(fp8_delayed_scale(448, 0, 0, 5), 5);
	ck_assert_float_eq(fp8_delayed_scale(448, INFINITY, 0, 5), 5);
	ck_assert_float_eq(fp8_delayed_scale(448, NAN, 0, 5), 5);
}
END_TEST

/* 448 / 3.5 = 128; amax 0, inf, NaN give 1; 448 / 2^-149 overflows fp32:
 * FLT_MAX. */
START_TEST(current_scale)
{
	ck_assert_float_eq(fp8_current_scale(448, 3.5f), 128);
	ck_assert_float_eq(fp8_current_scale(448, 0), 1);
	ck_assert_float_eq(fp8_current_scale(448, INFINITY), 1);
	ck_assert_float_eq(fp8_current_scale(448, NAN), 1);
	ck_assert_float_eq(fp8_current_scale(448, 0x1p-149f), FLT_MAX);
}
END_TEST

/* A 3-step window: 1, 4, 2 enter (newest first: 2, 4, 1): max 4, most
 * recent 2; then 0.5: (0.5, 2, 4), max still 4; then 0.25: (0.25, 0.5, 2),
 * the 4 has left the window: max 2. */
START_TEST(history_window)
{
	float h[3] = { 0, 0, 0 };
	fp8_history_push(h, 3, 1);
	fp8_history_push(h, 3, 4);
	fp8_history_push(h, 3, 2);
	ck_assert(h[0] == 2 && h[1] == 4 && h[2] == 1);
	ck_assert_float_eq(fp8_history_amax(h, 3, AMAX_ALGO_MAX), 4);
	ck_assert_float_eq(fp8_history_amax(h, 3, AMAX_ALGO_MOST_RECENT), 2);
	fp8_history_push(h, 3, 0.5f);
	ck_assert_float_eq(fp8_history_amax(h, 3, AMAX_ALGO_MAX), 4);
	fp8_history_push(h, 3, 0.25f);
	ck_assert(h[0] == 0.25f && h[1] == 0.5f && h[2] == 2);
	ck_assert_float_eq(fp8_history_amax(h, 3, AMAX_ALGO_MAX), 2);
	/* a NaN amax in the window (NaN, 0.25, 0.5) is passed over by max
	 * (fmaxf, as TE): 0.5 */
	fp8_history_push(h, 3, NAN);
	ck_assert_float_eq(fp8_history_amax(h, 3, AMAX_ALGO_MAX), 0.5f);
}
END_TEST

/* Casting {4, 1, -0.5, 0} with scale 224: 896 saturates to 448 (-> 2),
 * 224 = 1.75 * 2^7 and -112 = -1.75 * 2^6 are E4M3 values (-> 1, -0.5):
 * one overflow in 4. With 112 every product is exact: none. A NaN stays
 * NaN and counts; an inf becomes 448 / scale. 1e-6 * 1 is below E4M3's
 * smallest subnormal 2^-9 (half of it is 2^-10 ~ 0.00098): it underflows. */
START_TEST(cast)
{
	float x[] = { 4, 1, -0.5f, 0 };
	fp8_cast_stat st;
	fp8_cast(x, 4, FMT_E4M3, 224, &st);
	ck_assert(x[0] == 2 && x[1] == 1 && x[2] == -0.5f && x[3] == 0);
	ck_assert_float_eq(st.amax, 4);
	ck_assert_uint_eq(st.overflow, 1);
	ck_assert_uint_eq(st.underflow, 0);
	float y[] = { 4, 1, -0.5f, 0 };
	fp8_cast(y, 4, FMT_E4M3, 112, &st);
	ck_assert(y[0] == 4 && y[1] == 1 && y[2] == -0.5f && st.overflow == 0);
	float z[] = { NAN, -INFINITY, 448, 1e-6f };
	fp8_cast(z, 4, FMT_E4M3, 1, &st);
	ck_assert(isnan(z[0]) && z[1] == -448 && z[2] == 448 && z[3] == 0);
	ck_assert(isnan(st.amax));
	ck_assert_uint_eq(st.overflow, 2);
	ck_assert_uint_eq(st.underflow, 1);
	/* E5M2 saturates at 57344: 2 * 57344 does, 57344 does not */
	float g[] = { 2, 1 };
	fp8_cast(g, 2, FMT_E5M2, 57344, &st);
	ck_assert(g[0] == 1 && g[1] == 1 && st.overflow == 1);
}
END_TEST

/* --- the state over steps --- */

/* One step of the input tensor of h.0.attn.c_attn: x (4 elements with amax
 * a, sign alternating) cast by half 0, then the step's end. */
static fp8_tensor_stat step_with(fp8_state *st, float a)
{
	size_t i = fp8_tensor_index(0, 0, FP8_INPUT);
	float x[4] = { a, -a / 4, a / 8, 0 };
	fp8_state_cast(st, 0, i, true, x, 4);
	fp8_state_step_end(st);
	return fp8_state_stat(st, i);
}

static float next_scale(fp8_state *st)
{
	return fp8_state_scales(st)[fp8_tensor_index(0, 0, FP8_INPUT)];
}

/* H = 2, max: step 0 casts with the initial 1 (amax 2), then the scale is
 * 448/2 = 224; step 1 (amax 4) still casts with 224 (its amax enters after
 * use) and then the window (4, 2) gives 448/4 = 112; step 2 (amax 1):
 * window (1, 4), 112; step 3 (amax 1): window (1, 1), 448. With margin 1
 * every scale is halved; with most_recent step 2 leaves 448/1. A step with
 * amax 0 under most_recent keeps the scale. */
START_TEST(delayed_over_steps)
{
	fp8_state *st;
	ck_assert_int_eq(fp8_state_create(&st, 1, OPTS(CAST_SCALING_DELAYED, FMT_E4M3, 2, AMAX_ALGO_MAX, 0)), MP_OK);
	fp8_tensor_stat s = step_with(st, 2);
	ck_assert(s.scale == 1 && s.amax == 2);
	ck_assert_float_eq(next_scale(st), 224);
	s = step_with(st, 4);
	ck_assert_float_eq(s.scale, 224);
	ck_assert_float_eq(next_scale(st), 112);
	step_with(st, 1);
	ck_assert_float_eq(next_scale(st), 112);
	step_with(st, 1);
	ck_assert_float_eq(next_scale(st), 448);
	const float *h = fp8_state_histories(st) + 2 * fp8_tensor_index(0, 0, FP8_INPUT);
	ck_assert(h[0] == 1 && h[1] == 1);
	fp8_state_free(st);

	ck_assert_int_eq(fp8_state_create(&st, 1, OPTS(CAST_SCALING_DELAYED, FMT_E4M3, 2, AMAX_ALGO_MAX, 1)), MP_OK);
	step_with(st, 2);
	ck_assert_float_eq(next_scale(st), 112);
	step_with(st, 4);
	ck_assert_float_eq(next_scale(st), 56);
	fp8_state_free(st);

	ck_assert_int_eq(fp8_state_create(&st, 1, OPTS(CAST_SCALING_DELAYED, FMT_E4M3, 2, AMAX_ALGO_MOST_RECENT, 0)),
	                 MP_OK);
	step_with(st, 2);
	step_with(st, 4);
	step_with(st, 1);
	ck_assert_float_eq(next_scale(st), 448);
	step_with(st, 0);
	ck_assert_float_eq(next_scale(st), 448);
	fp8_state_free(st);
}
END_TEST

/* amax 1 for three steps, a spike of 8 at step 3, then 1 again (H = 4).
 * Delayed: the scale is 448 from step 1 on, so at step 3 the 8 casts to
 * 8 * 448 = 3584 > 448 and saturates (the 8 alone: 1 of 4 elements; -8/4
 * * 448 = -896 too: 2 of 4); at step 4 the window holds the 8 and the scale
 * is 56: nothing overflows. Current: 448 / 8 = 56 at the spike itself:
 * never. */
START_TEST(spike)
{
	const float amax[] = { 1, 1, 1, 8, 1, 1 };
	for (int cur = 0; cur < 2; cur++) {
		fp8_state *st;
		ck_assert_int_eq(fp8_state_create(&st, 1, OPTS(cur ? CAST_SCALING_CURRENT : CAST_SCALING_DELAYED, FMT_E4M3, 4, AMAX_ALGO_MAX, 0)), MP_OK);
		for (int k = 0; k < 6; k++) {
			fp8_tensor_stat s = step_with(st, amax[k]);
			double want = !cur && k == 3 ? 0.5 : 0;
			ck_assert_msg(s.overflow_frac == want, "%s step %d: overflow %g, expected %g", cur ? "current" : "delayed",
			              k, s.overflow_frac, want);
			ck_assert(fp8_state_overflow_frac(st) == want);
			if (cur)
				ck_assert_float_eq(s.scale, 448 / amax[k]);
		}
		if (!cur)
			ck_assert_float_eq(next_scale(st), 56);
		fp8_state_free(st);
	}
}
END_TEST

/* The halves' records combine: amax the max of both; the counts summed.
 * Names follow GPT-2's; the weight cast again (not recorded) does not count. */
START_TEST(halves_and_names)
{
	fp8_state *st;
	ck_assert_int_eq(fp8_state_create(&st, 2, OPTS(CAST_SCALING_DELAYED, FMT_E4M3, 16, AMAX_ALGO_MAX, 0)), MP_OK);
	ck_assert_uint_eq(fp8_state_count(st), 24);
	size_t i = fp8_tensor_index(1, 2, FP8_WEIGHT);
	float a[2] = { 2, 1 }, b[2] = { 8, 1 }, c[2] = { 1000, 1 };
	fp8_state_cast(st, 0, i, true, a, 2);
	fp8_state_cast(st, 1, i, true, b, 2);
	fp8_state_cast(st, 1, i, false, c, 2);
	fp8_state_step_end(st);
	fp8_tensor_stat s = fp8_state_stat(st, i);
	ck_assert_str_eq(s.name, "h.1.mlp.c_fc.weight");
	ck_assert_float_eq(s.amax, 8);
	ck_assert(s.overflow_frac == 0 && s.fmt == FMT_E4M3);
	ck_assert_float_eq(next_scale(st), 1);   /* tensor 1's input: nothing recorded, unchanged */
	ck_assert_float_eq(fp8_state_scales(st)[i], 56);
	s = fp8_state_stat(st, fp8_tensor_index(0, 3, FP8_GRAD_OUTPUT));
	ck_assert_str_eq(s.name, "h.0.mlp.c_proj.grad_output");
	ck_assert(s.fmt == FMT_E5M2);
	ck_assert_str_eq(fp8_state_stat(st, fp8_tensor_index(0, 1, FP8_INPUT)).name, "h.0.attn.c_proj.input");
	fp8_state_free(st);
	ck_assert_int_eq(fp8_state_create(&st, 1, OPTS(CAST_SCALING_DELAYED, FMT_E4M3, 0, AMAX_ALGO_MAX, 0)),
	                 MP_EINVAL);
	ck_assert_int_eq(fp8_state_create(&st, 1, OPTS(CAST_SCALING_DELAYED, FMT_BF16, 4, AMAX_ALGO_MAX, 0)),
	                 MP_EINVAL);
}
END_TEST

/* The policy's underflow share weighs each tensor by its elements. Current
 * scaling: the c_attn input {1e-6, 1, 2, 0} casts with 448/2 = 224, and
 * 1e-6 * 224 = 2.2e-4 is below half of E4M3's least subnormal 2^-9, so it
 * becomes 0 (the 0 was 0 already): 1 of 4. The grad_output {1, 1e-12} casts
 * with 57344/1, and 5.7e-8 is below half of E5M2's 2^-16: 1 of 2. Over the
 * step 2 of 6 elements, 1/3 (not the mean of the tensors' shares, 3/8). */
START_TEST(underflow_share)
{
	fp8_state *st;
	ck_assert_int_eq(fp8_state_create(&st, 1, OPTS(CAST_SCALING_CURRENT, FMT_E4M3, 1, AMAX_ALGO_MAX, 0)), MP_OK);
	ck_assert(fp8_state_underflow_frac(st) == 0);   /* before any step */
	float in[4] = { 1e-6f, 1, 2, 0 }, go[2] = { 1, 1e-12f };
	fp8_state_cast(st, 0, fp8_tensor_index(0, 0, FP8_INPUT), true, in, 4);
	fp8_state_cast(st, 1, fp8_tensor_index(0, 0, FP8_GRAD_OUTPUT), true, go, 2);
	fp8_state_step_end(st);
	ck_assert(fp8_state_stat(st, fp8_tensor_index(0, 0, FP8_INPUT)).underflow_frac == 0.25);
	ck_assert(fp8_state_stat(st, fp8_tensor_index(0, 0, FP8_GRAD_OUTPUT)).underflow_frac == 0.5);
	ck_assert_msg(fp8_state_underflow_frac(st) == 2.0 / 6, "underflow %g, expected 1/3", fp8_state_underflow_frac(st));
	ck_assert(fp8_state_overflow_frac(st) == 0);
	fp8_state_step_end(st);   /* a step that cast nothing */
	ck_assert(fp8_state_underflow_frac(st) == 0);
	fp8_state_free(st);
}
END_TEST

/* --- the policy parts --- */

START_TEST(policy_parts)
{
	train_policy p;
	char err[256];
	ck_assert_int_eq(policy_from_name("fp8-delayed", &p), MP_OK);
	ck_assert(p.cast == CAST_SCALING_DELAYED && p.cast_fwd == FMT_E4M3 && p.cast_bwd == FMT_E5M2);
	ck_assert(p.amax_history == 16 && p.amax_algo == AMAX_ALGO_MAX && p.fp8_margin == 0);
	ck_assert(p.weight_fmt == FMT_FP32 && p.grad_accum_fmt == FMT_FP32 && p.optim_fmt == FMT_FP32 &&
	          p.reduce_fmt == FMT_FP32);
	ck_assert_int_eq(policy_set(&p, "amax-history", "0", err, sizeof err), MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "1..1024"));
	ck_assert_int_eq(policy_set(&p, "amax-algo", "mean", err, sizeof err), MP_EINVAL);
	ck_assert_int_eq(policy_set(&p, "fp8-margin", "2", err, sizeof err), MP_OK);
	ck_assert_int_eq(p.fp8_margin, 2);
	ck_assert_int_eq(policy_set(&p, "fp8-format", "e4m3", err, sizeof err), MP_OK);
	ck_assert(p.cast_bwd == FMT_E4M3);
	ck_assert_str_eq(p.name, "fp8-delayed+fp8-margin=2+fp8-format=e4m3");
	ck_assert_int_eq(policy_from_name("bf16-mixed", &p), MP_OK);
	ck_assert(p.cast == CAST_SCALING_NONE);
	ck_assert_int_eq(policy_set(&p, "fp8-scaling", "current", err, sizeof err), MP_OK);
	ck_assert(p.cast == CAST_SCALING_CURRENT && p.cast_fwd == FMT_E4M3 && p.cast_bwd == FMT_E5M2);
	char d[400];
	policy_describe(&p, d, sizeof d);
	ck_assert_ptr_nonnull(strstr(d, "current-scaled per tensor"));
}
END_TEST

/* --- in training --- */

/* A small model, 3 steps of fp8-delayed: step 0 casts every tensor with
 * scale 1; step 1 with fp8_max / (step 0's amax) exactly (a window of one
 * amax); fp8-current never overflows (its scale puts the amax on fp8_max);
 * a GPU refuses both. */
START_TEST(in_training)
{
	corpus data;
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 16, err, sizeof err) == MP_OK, "%s", err);
	train_config cfg = train_config_default();
	cfg.model.L = 2;
	cfg.model.C = 32;
	cfg.model.NH = 2;
	cfg.model.T = 16;
	cfg.B = 4;
	cfg.t = 16;
	cfg.eval_every = 0;
	train_policy p;
	ck_assert_int_eq(policy_from_name("fp8-delayed", &p), MP_OK);
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_OK);
	const fp8_state *fs = trainer_fp8(t);
	ck_assert_ptr_nonnull(fs);
	train_stats s;
	ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	float amax0[24];
	for (size_t i = 0; i < 24; i++) {
		fp8_tensor_stat x = fp8_state_stat(fs, i);
		ck_assert_msg(x.scale == 1 && x.amax > 0, "%s: scale %g amax %g", x.name, x.scale, x.amax);
		amax0[i] = x.amax;
	}
	ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	for (size_t i = 0; i < 24; i++) {
		fp8_tensor_stat x = fp8_state_stat(fs, i);
		float fmax = x.fmt == FMT_E4M3 ? 448.0f : 57344.0f;
		ck_assert_msg(x.scale == fmax / amax0[i], "%s: scale %.9g, expected %.9g", x.name, x.scale, fmax / amax0[i]);
	}
	ck_assert(s.overflow_frac >= 0 && s.overflow_frac <= 1);
	trainer_free(t);

	ck_assert_int_eq(policy_from_name("fp8-current", &p), MP_OK);
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_OK);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(trainer_step(t, &s), MP_OK);
		ck_assert(s.overflow_frac == 0);
	}
	trainer_free(t);
	ck_assert_int_eq(policy_from_name("bf16-mixed", &p), MP_OK);
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_OK);
	ck_assert_ptr_null(trainer_fp8(t));
	ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	ck_assert(isnan(s.overflow_frac));
	trainer_free(t);
	cfg.device = TRAIN_DEVICE_EMULATED;
	ck_assert_int_eq(policy_from_name("fp8-delayed", &p), MP_OK);
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_EUNSUPPORTED);
	corpus_free(&data);
}
END_TEST

int main(int argc, char **argv)
{
	testutil_fast_blas(argv);
	(void)argc;
	Suite *s = suite_create("fp8scale");
	TCase *tc = tcase_create("fp8scale");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, delayed_scale);
	tcase_add_test(tc, current_scale);
	tcase_add_test(tc, history_window);
	tcase_add_test(tc, cast);
	tcase_add_test(tc, delayed_over_steps);
	tcase_add_test(tc, spike);
	tcase_add_test(tc, halves_and_names);
	tcase_add_test(tc, underflow_share);
	tcase_add_test(tc, policy_parts);
	tcase_add_test(tc, in_training);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
