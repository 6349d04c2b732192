#include "train/train_bench.h"

#include <stdio.h>

#include "train/train.h"

/* ms per step of policy on cfg's device after two warm-up steps (the
 * trainer times each step itself, to its return with the statistics); on
 * failure why (n bytes) says what failed. */
static mp_status train_ms(const train_config *cfg, const char *policy, const corpus *c, size_t steps, double *ms,
                          char *why, size_t n)
{
	train_policy p;
	mp_status st = policy_from_name(policy, &p);
	trainer *t = NULL;
	*ms = 0;
	if (st != MP_OK)
		return mp_fail(st, why, n, "%s", mp_status_message(st));
	st = trainer_create(&t, cfg, &p, c, why, n);
	train_stats s;
	for (int i = 0; i < 2 && st == MP_OK; i++)
		st = trainer_step(t, &s);
	double sum = 0;
	for (size_t i = 0; i < steps && st == MP_OK; i++) {
		st = trainer_step(t, &s);
		sum += s.ms;
	}
	*ms = sum / (double)steps;
	if (t && st != MP_OK)
		snprintf(why, n, "%s", trainer_error(t));
	trainer_free(t);
	return st;
}

size_t train_bench_cuda_context(void)
{
	return 256;
}

mp_status train_bench_cuda(const corpus *c, unsigned reps, train_bench_emit emit, void *ctx, char *err,
                           size_t errlen)
{
	static const char *const policies[] = { "fp32", "bf16-mixed" };
	train_config small = train_config_default(), large = small;
	small.eval_every = large.eval_every = 0;
	large.model = (gpt_config){ .V = 128, .T = 256, .C = 1024, .L = 4, .NH = 16 };
	large.t = train_bench_cuda_context();
	large.B = 16;
	const train_config *shapes[2] = { &small, &large };
	for (int si = 0; si < 2; si++) {
		train_config cfg = *shapes[si];
		char shape[96];
		snprintf(shape, sizeof shape, "L%zu H%zu C%zu B%zu T%zu", cfg.model.L, cfg.model.NH, cfg.model.C, cfg.B,
		         cfg.t);
		double base[2] = { 0, 0 };
		for (int dev = si == 0 ? 0 : 1; dev < 2; dev++) {
			cfg.device = dev ? TRAIN_DEVICE_CUDA : TRAIN_DEVICE_CPU;
			for (size_t k = 0; k < sizeof policies / sizeof policies[0]; k++) {
				double ms;
				char why[400];
				mp_status st = train_ms(&cfg, policies[k], c, dev ? 4 * (size_t)reps : reps, &ms, why,
				                        sizeof why);
				if (st != MP_OK) {
					snprintf(err, errlen, "%s on %s at %s: %s", policies[k], dev ? "cuda" : "cpu", shape,
					         why);
					return st;
				}
				if (si == 0 && !dev)
					base[k] = ms;
				if (si == 1 && k == 0)
					base[0] = ms;
				double ratio = si == 0 ? (dev ? base[k] / ms : 1.0) : base[0] / ms;
				train_bench_row row = { dev ? "cuda" : "cpu", shape, policies[k], ms, ratio };
				emit(ctx, &row);
			}
		}
	}
	return MP_OK;
}
