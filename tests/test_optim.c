/* The optimiser's schedule and state: the learning-rate schedule against
 * its formula written out here, the rate each trainer really applies,
 * stochastic rounding of Adam's moments, the EMA stall of a single value
 * against a rounding written here (not fmt/'s), and the progress meter's
 * rate limit on a clock the test drives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/meter.h"
#include "drift/ema.h"
#include "train/optim.h"
#include "train/schedule.h"
#include "train/train.h"
#include "testutil.h"

void openblas_set_num_threads(int num_threads);

/* --- the schedule --- */

/* Warmup lr n / W, then lr_min + (lr - lr_min) (1 + cos(pi p)) / 2 with
 * p = (n - W) / (N - W): the formula pretraining papers and nanoGPT write. */
static double cosine_by_hand(double lr, double lr_min, double W, double N, double n)
{
	if (n <= W)
		return lr * n / W;
	double p = (n - W) / (N - W);
	return lr_min + (lr - lr_min) * (1 + cos(3.14159265358979323846 * (p > 1 ? 1 : p))) / 2;
}

START_TEST(schedule_values)
{
	lr_schedule s = { .kind = LR_COSINE, .warmup = 10, .lr_min = 1e-4, .total = 110 };
	/* worked out on paper: the ramp, the top, a quarter, half, three
	 * quarters (cos(pi/4) = sqrt(1/2)), the end and past it */
	const struct { uint64_t n; double want; } pts[] = {
		{ 1, 1e-4 }, { 5, 5e-4 }, { 10, 1e-3 },
		{ 35, 1e-4 + 0.45e-3 * (1 + 0.70710678118654752) },
		{ 60, 5.5e-4 },
		{ 85, 1e-4 + 0.45e-3 * (1 - 0.70710678118654752) },
		{ 110, 1e-4 }, { 500, 1e-4 },
	};
	for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
		double got = lr_schedule_at(&s, 1e-3, pts[i].n);
		ck_assert_msg(fabs(got - pts[i].want) <= 1e-15, "update %llu: %.17g, want %.17g",
		              (unsigned long long)pts[i].n, got, pts[i].want);
	}
	/* the default is --lr itself, the same bits */
	lr_schedule zero = { 0 };
	for (uint64_t n = 1; n < 1000; n += 37)
		ck_assert(lr_schedule_at(&zero, 3e-4, n) == 3e-4);
	/* constant with a warmup: the ramp, then lr */
	lr_schedule cw = { .kind = LR_CONSTANT, .warmup = 4 };
	ck_assert(fabs(lr_schedule_at(&cw, 1e-3, 2) - 5e-4) <= 1e-18);
	ck_assert(lr_schedule_at(&cw, 1e-3, 5) == 1e-3 && lr_schedule_at(&cw, 1e-3, 4) == 1e-3);
	/* a warmup as long as the run: nothing left to decay */
	lr_schedule all = { .kind = LR_COSINE, .warmup = 8, .lr_min = 0, .total = 8 };
	ck_assert(lr_schedule_at(&all, 1e-3, 8) == 1e-3 && lr_schedule_at(&all, 1e-3, 9) == 0);
	lr_kind k;
	ck_assert(lr_kind_parse("cosine", &k) == MP_OK && k == LR_COSINE);
	ck_assert(lr_kind_parse("constant", &k) == MP_OK && k == LR_CONSTANT);
	ck_assert(lr_kind_parse("linear", &k) == MP_EINVAL);
}
END_TEST

static corpus data;

static void load_corpus(void)
{
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 16, err, sizeof err) == MP_OK, "%s", err);
}

/* Small enough for a step in milliseconds: V=128, T=16, C=32, L=1, B=4. */
static train_config tiny_config(void)
{
	train_config cfg = train_config_default();
	cfg.model.L = 1;
	cfg.model.C = 32;
	cfg.model.NH = 2;
	cfg.model.T = 16;
	cfg.t = 16;
	cfg.B = 4;
	cfg.eval_every = 0;
	return cfg;
}

/* With beta1 = beta2 = 0 Adam's step is g / (|g| + eps): +-1 for every
 * weight whose gradient is far above eps, so the largest |change| of a
 * step is that update's lr (up to eps / max|g| and the fp32 rounding of
 * w + update, half an fp32 spacing of the largest weight). */
static void check_applied_lr(train_device dev)
{
	train_config cfg = tiny_config();
	cfg.device = dev;
	cfg.beta1 = 0;
	cfg.beta2 = 0;
	cfg.grad_clip = 0;
	cfg.lr = 1e-2;
	const size_t N = 8;
	cfg.sched = (lr_schedule){ .kind = LR_COSINE, .warmup = 2, .lr_min = 1e-3, .total = N };
	train_policy p;
	ck_assert_int_eq(policy_from_name("fp32", &p), MP_OK);
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_OK);
	size_t P = trainer_model(t)->num_params;
	float *before = malloc(P * sizeof *before);
	ck_assert(before != NULL);
	for (size_t n = 1; n <= N; n++) {
		ck_assert_int_eq(trainer_sync(t), MP_OK);
		const float *w = trainer_model(t)->params_memory;
		memcpy(before, w, P * sizeof *w);
		train_stats s;
		ck_assert_int_eq(trainer_step(t, &s), MP_OK);
		ck_assert(!s.skipped);
		ck_assert_int_eq(trainer_sync(t), MP_OK);
		double big = 0, wmax = 0;
		for (size_t i = 0; i < P; i++) {
			big = fmax(big, fabs((double)w[i] - (double)before[i]));
			wmax = fmax(wmax, fabs((double)before[i]));
		}
		double want = cosine_by_hand(1e-2, 1e-3, 2, (double)N, (double)n);
		double tol = 1e-5 * want + ldexp(wmax, -24);
		ck_assert_msg(fabs(big - want) <= tol, "device %d, update %zu: largest change %.9g, lr %.9g", (int)dev, n,
		              big, want);
	}
	free(before);
	trainer_free(t);
}

START_TEST(trainers_apply_the_schedule)
{
	load_corpus();
	check_applied_lr(TRAIN_DEVICE_CPU);
	check_applied_lr(TRAIN_DEVICE_EMULATED);   /* the GPU trainer's code, run here */
	corpus_free(&data);
}
END_TEST

/* --- Adam's moments rounded stochastically --- */

START_TEST(optim_state_parse)
{
	train_policy p;
	char err[256];
	ck_assert_int_eq(policy_from_name("fp32", &p), MP_OK);
	ck_assert_int_eq(policy_set(&p, "optim-state", "bf16:sr", err, sizeof err), MP_OK);
	ck_assert(p.optim_fmt == FMT_BF16 && p.optim_mode == FMT_SR);
	char d[512];
	policy_describe(&p, d, sizeof d);
	ck_assert_msg(strstr(d, "Adam state bf16:sr") != NULL, "%s", d);
	ck_assert_int_eq(policy_set(&p, "optim-state", "fp16:rne", err, sizeof err), MP_OK);
	ck_assert(p.optim_fmt == FMT_FP16 && p.optim_mode == FMT_RNE);
	ck_assert_int_eq(policy_set(&p, "optim-state", "bf16", err, sizeof err), MP_OK);
	ck_assert(p.optim_mode == FMT_RNE);
	ck_assert_int_eq(policy_set(&p, "optim-state", "bf16:rtz", err, sizeof err), MP_EINVAL);
	ck_assert_msg(strstr(err, "rtz") != NULL, "%s", err);
	ck_assert_int_eq(policy_set(&p, "optim-state", "fp32:sr", err, sizeof err), MP_EINVAL);
	/* the presets keep round-to-nearest state */
	ck_assert_int_eq(policy_from_name("bf16-pure-sr", &p), MP_OK);
	ck_assert(p.optim_fmt == FMT_BF16 && p.optim_mode == FMT_RNE);
}
END_TEST

static trainer *one_step(train_device dev, const char *state)
{
	train_config cfg = tiny_config();
	cfg.device = dev;
	train_policy p;
	char err[256];
	ck_assert_int_eq(policy_from_name("fp32", &p), MP_OK);
	ck_assert_int_eq(policy_set(&p, "optim-state", state, err, sizeof err), MP_OK);
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_OK);
	train_stats s;
	ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	ck_assert_int_eq(trainer_sync(t), MP_OK);
	return t;
}

/* Share of the P weights of a and b that are not the same bits. */
static double differ(const trainer *a, const trainer *b)
{
	const gpt_model *ma = trainer_model(a), *mb = trainer_model(b);
	size_t n = 0;
	for (size_t i = 0; i < ma->num_params; i++)
		n += memcmp(&ma->params_memory[i], &mb->params_memory[i], sizeof(float)) != 0;
	return (double)n / (double)ma->num_params;
}

/* After one update with bf16 moments the fp32 master weights show which
 * way each m and v was rounded (a different m moves w by far more than an
 * fp32 spacing). SR against RNE: about half the draws go the other way.
 * SR twice: the same bits (seeded). The GPU trainer's code draws the same
 * stream (element = parameter): nearly the same bits (its gradients differ
 * in the last places, which a draw rarely straddles). */
START_TEST(optim_state_sr)
{
	load_corpus();
	trainer *rne = one_step(TRAIN_DEVICE_CPU, "bf16");
	trainer *sr = one_step(TRAIN_DEVICE_CPU, "bf16:sr");
	trainer *sr2 = one_step(TRAIN_DEVICE_CPU, "bf16:sr");
	trainer *dev = one_step(TRAIN_DEVICE_EMULATED, "bf16:sr");
	trainer *devrne = one_step(TRAIN_DEVICE_EMULATED, "bf16");
	double d_mode = differ(rne, sr), d_again = differ(sr, sr2), d_dev = differ(sr, dev);
	ck_assert_msg(d_mode > 0.3, "SR and RNE moments: only %.3f of the weights differ", d_mode);
	ck_assert_msg(d_again == 0, "SR twice: %.3g of the weights differ", d_again);
	ck_assert_msg(d_dev < 0.1, "CPU and GPU code, SR: %.3f of the weights differ", d_dev);
	/* and the GPU code's SR is not its RNE */
	ck_assert_msg(differ(dev, devrne) > 0.3, "GPU code: SR and RNE alike (%.3f)", differ(dev, devrne));
	trainer_free(rne);
	trainer_free(sr);
	trainer_free(sr2);
	trainer_free(dev);
	trainer_free(devrne);
	corpus_free(&data);
}
END_TEST

/* --- the EMA stall of one value --- */

/* Round-to-nearest-even of a float to bf16 on its bits: add 0x7fff plus
 * the lowest kept bit, drop the low 16 (finite inputs, as here). */
static float bf16_rne(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
	memcpy(&x, &u, sizeof u);
	return x;
}

/* fp16 through the compiler's _Float16 conversion (RNE, subnormals included). */
static float fp16_rne(float x)
{
	return (float)(_Float16)x;
}

typedef struct {
	double value;
	size_t steps;
} stall;

/* The recurrence with the test's own rounding; each fp32 operation a
 * separate volatile store, so nothing is fused. */
static stall stall_by_hand(double beta2, float (*round_f)(float))
{
	volatile float b = (float)beta2, c = 1.0f - b, v = 0, bv, cg;
	for (size_t n = 1; n < 10000000; n++) {
		bv = b * v;
		cg = c * 1.0f;
		float next = round_f(bv + cg);
		if (next == v)
			return (stall){ v, n - 1 };
		v = next;
	}
	return (stall){ NAN, 0 };
}

START_TEST(ema_stall)
{
	/* bf16, beta2 0.999, on paper: at v = 0.25 an update adds about
	 * (1 - 0.999)(1 - 0.25) = 0.00075, less than half the spacing there
	 * (bf16 keeps 8 significant bits: spacing 2^-2 * 2^-7 = 2^-9, half of it
	 * 2^-10 = 0.000977), so v stays; one value below, 0.25 - 2^-10, the
	 * increment 0.001 * 0.751 = 0.000751 is above half ITS spacing (2^-11 =
	 * 0.000488), so v does reach 0.25. */
	ck_assert((1 - 0.999) * (1 - 0.25) < ldexp(1, -10));
	ck_assert((1 - 0.999) * (1 - (0.25 - ldexp(1, -10))) > ldexp(1, -11));
	ema_params p = ema_defaults();
	ema_result r;
	ck_assert_int_eq(ema_run(&p, NULL, NULL, &r), MP_OK);
	ck_assert_msg(r.stalled && r.stall_value == 0.25, "bf16, 0.999: stalls at %.9g", r.stall_value);
	ck_assert(r.final.v == 0.25 && fabs(r.half_spacing - ldexp(1, -10)) == 0);
	ck_assert(r.increment > 0.00074 && r.increment < 0.00076);
	ck_assert(r.final.v64 > 0.9999 && r.final.v32 > 0.999);   /* 1 - 0.999^20000 */
	/* the oracle over the exercise's grid */
	const double betas[] = { 0.99, 0.995, 0.999, 0.9999 };
	for (size_t i = 0; i < 4; i++) {
		for (int f = 0; f < 2; f++) {
			stall want = stall_by_hand(betas[i], f ? fp16_rne : bf16_rne);
			p = ema_defaults();
			p.beta2 = betas[i];
			p.fmt = f ? FMT_FP16 : FMT_BF16;
			p.steps = (size_t)(50 / (1 - betas[i]));
			ck_assert_int_eq(ema_run(&p, NULL, NULL, &r), MP_OK);
			ck_assert_msg(r.stalled && r.stall_value == want.value && r.stall_steps == want.steps,
			              "%s, beta2 %g: %.9g after %zu, by hand %.9g after %zu", f ? "fp16" : "bf16", betas[i],
			              r.stall_value, r.stall_steps, want.value, want.steps);
			ck_assert(r.final.v == want.value);
		}
	}
}
END_TEST

/* SR: the increment survives on average, so the mean of many values
 * follows the exact EMA to near 1 (sd of one bf16 value near 1 is at most
 * a spacing, 2^-8; over 1000 values the mean's is ~1e-4). */
START_TEST(ema_sr_keeps_going)
{
	ema_params p = ema_defaults();
	p.mode = FMT_SR;
	p.seed = 7;
	ema_result r;
	ck_assert_int_eq(ema_run(&p, NULL, NULL, &r), MP_OK);
	ck_assert(!r.stalled);
	ck_assert_msg(fabs(r.final.v - r.final.v64) < 0.01, "mean %.6g, fp64 %.6g", r.final.v, r.final.v64);
	ck_assert(r.final.unchanged_frac < 1);
	/* bad parameters */
	p.beta2 = 1;
	ck_assert_int_eq(ema_run(&p, NULL, NULL, &r), MP_EINVAL);
	p = ema_defaults();
	p.mode = FMT_RTZ;
	ck_assert_int_eq(ema_run(&p, NULL, NULL, &r), MP_EINVAL);
}
END_TEST

/* --- v against its fp32 reference --- */

START_TEST(v_reference)
{
	/* by hand: g = 2 clipped by 0.5 is 1; vref = 0.9 * 0 + 0.1 * 1 = 0.1;
	 * a stored v of 0.05 is half of it, one of 0.1 all of it */
	float vref[2] = { 0, 0 }, v[2] = { 0.05f, 0.1f }, g[2] = { 2, 2 };
	optim_vstat st = { 0 };
	optim_vref_update(&st, vref, v, g, 2, 0.5, 0.9);
	ck_assert(vref[0] == (float)(0.1) && vref[1] == vref[0]);
	ck_assert_uint_eq(st.count, 2);
	ck_assert(fabs(optim_vstat_mean(&st) - (0.05 / 0.1f + 0.1f / 0.1f) / 2) < 1e-7);
	optim_vstat none = { 0 };
	ck_assert(isnan(optim_vstat_mean(&none)));
}
END_TEST

static double v_ratio_after(train_device dev, const char *state, double beta2, size_t steps)
{
	train_config cfg = tiny_config();
	cfg.device = dev;
	cfg.beta2 = beta2;
	train_policy p;
	char err[256];
	ck_assert_int_eq(policy_from_name("fp32", &p), MP_OK);
	if (state)
		ck_assert_int_eq(policy_set(&p, "optim-state", state, err, sizeof err), MP_OK);
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, &data, NULL, 0), MP_OK);
	ck_assert(isnan(trainer_v_ratio(t)));   /* no update yet */
	train_stats s;
	for (size_t i = 0; i < steps; i++)
		ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	double r = trainer_v_ratio(t);
	trainer_free(t);
	return r;
}

/* In training: SR keeps v on its fp32 EMA (mean ratio 1 within 1%; measured
 * 1.000); fp16 cannot hold the tiny squared gradients (most are below its
 * smallest subnormal, 6e-8), so v falls far short (measured 0.19 at these
 * settings); fp32 state keeps no reference, nor does the GPU code. */
START_TEST(v_ratio_in_training)
{
	load_corpus();
	double sr = v_ratio_after(TRAIN_DEVICE_CPU, "bf16:sr", 0.999, 30);
	ck_assert_msg(fabs(sr - 1) < 0.01, "bf16:sr: v / vref = %.4f", sr);
	double h = v_ratio_after(TRAIN_DEVICE_CPU, "fp16", 0.999, 30);
	ck_assert_msg(h < 0.5, "fp16: v / vref = %.4f", h);
	ck_assert(isnan(v_ratio_after(TRAIN_DEVICE_CPU, NULL, 0.999, 3)));
	ck_assert(isnan(v_ratio_after(TRAIN_DEVICE_EMULATED, "bf16", 0.999, 3)));
	corpus_free(&data);
}
END_TEST

/* --- the progress meter, on a clock the test drives --- */

START_TEST(meter_rate_limit)
{
	run_meter m;
	meter_init(&m, false, 5, 100);
	const struct { double t; bool due; } seq[] = {
		{ 100.5, false }, { 104.9, false }, { 105.0, true }, { 106, false },
		{ 109.9, false }, { 131, true },    /* a slow step: one line, not a burst */
		{ 132, false }, { 135.9, false }, { 136, true },
	};
	for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
		ck_assert_msg(meter_due(&m, seq[i].t) == seq[i].due, "at %g", seq[i].t);
	meter_init(&m, false, 0, 0);   /* 0: every step */
	ck_assert(meter_due(&m, 0) && meter_due(&m, 0) && meter_due(&m, 1e-9));
	meter_init(&m, true, 5, 0);    /* a terminal: every step, rewritten in place */
	ck_assert(meter_due(&m, 0.1) && meter_due(&m, 0.2));
}
END_TEST

static Suite *optim_suite(void)
{
	Suite *s = suite_create("optim");
	TCase *tc = tcase_create("units");
	tcase_add_test(tc, schedule_values);
	tcase_add_test(tc, optim_state_parse);
	tcase_add_test(tc, ema_stall);
	tcase_add_test(tc, ema_sr_keeps_going);
	tcase_add_test(tc, meter_rate_limit);
	tcase_add_test(tc, v_reference);
	suite_add_tcase(s, tc);
	TCase *tr = tcase_create("training");
	tcase_set_timeout(tr, 300);
	tcase_add_test(tr, trainers_apply_the_schedule);
	tcase_add_test(tr, optim_state_sr);
	tcase_add_test(tr, v_ratio_in_training);
	suite_add_tcase(s, tr);
	return s;
}

int main(int argc, char **argv)
{
	(void)argc;
	testutil_fast_blas(argv);
	openblas_set_num_threads(1);
	return testutil_run(optim_suite());
}
