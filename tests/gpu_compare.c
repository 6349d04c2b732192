#include "gpu_compare.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "fmt/bulk.h"
#include "train/backend.h"

gpt_config gpu_compare_small_model(void)
{
	return (gpt_config){ .V = 128, .T = 16, .C = 32, .L = 2, .NH = 2 };
}

const char *gpu_compare_tensor_name(int i)
{
	static const char *const names[GPU_COMPARE_PARTS] = {
		"wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
		"ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb", "qkvw.q", "qkvw.k",
	};
	return i >= 0 && i < GPU_COMPARE_PARTS ? names[i] : "?";
}

mp_status gpu_compare_pass_compare(train_device dev, const char *policy, const train_config *cfg, const corpus *c,
                           gpu_compare_pass *out)
{
	memset(out, 0, sizeof *out);
	train_policy p;
	mp_status st = policy_from_name(policy, &p);
	if (st != MP_OK)
		return st;
	size_t B = cfg->B, T = cfg->t;
	gpt_model m;
	st = gpt_init(&m, cfg->model, B, T, cfg->seed);
	if (st != MP_OK)
		return st;
	int *in = malloc(B * T * sizeof *in), *tg = malloc(B * T * sizeof *tg);
	float *gdev = malloc(m.num_params * sizeof *gdev);
	const train_backend *be = train_backend_for(dev);
	void *s = NULL;
	if (!in || !tg || !gdev) {
		st = MP_ENOMEM;
		goto done;
	}
	corpus_batch(c, false, cfg->seed, 0, B, T, in, tg);
	if (!policy_master_fp32(&p)) {   /* as the trainer stores them */
		fmt_bulk_opts o = { .fmt = p.weight_fmt, .mode = FMT_RNE };
		fmt_bulk_quantize(FMT_SIMD_AUTO, &o, m.params_memory, m.num_params);
	}
	st = be->create(&s, cfg, &p, m.params_memory, m.num_params, NULL, 0);
	double se, ee;
	float scale = p.scaling == SCALER_STATIC ? (float)p.static_scale : p.scaling == SCALER_DYNAMIC ? 1024.0f : 1.0f;
	out->scale = scale;
	if (st == MP_OK)
		st = be->forward(s, in, tg, 0, &out->loss_dev, &se, &ee);
	if (st == MP_OK)
		st = be->backward(s, scale);
	if (st == MP_OK)
		st = be->read(s, TRAIN_ARRAY_GRADS, gdev);
	if (st != MP_OK)
		goto done;
	gpt_numerics nx = { .pol = &p, .seed = cfg->seed ^ 0x5eedull, .step = 0,
	                    .resid_offset = cfg->resid_offset, .resid_offset_channels = cfg->resid_offset_channels };
	st = gpt_forward(&m, &nx, in, tg);
	if (st == MP_OK) {
		gpt_zero_grad(&m);
		st = gpt_backward(&m, &nx, scale);
	}
	if (st != MP_OK)
		goto done;
	out->loss_cpu = m.mean_loss;
	/* each part as index ranges [lo, lo + len) repeated every `stride`, `count` times */
	size_t off[GPT_NUM_PARAM_TENSORS], o = 0;
	for (int i = 0; i < GPT_NUM_PARAM_TENSORS; i++) {
		off[i] = o;
		o += m.param_sizes[i];
	}
	size_t C = cfg->model.C, L = cfg->model.L, nz = 0;
	for (size_t j = 0; j < m.num_params; j++)
		nz += m.grads_memory[j] != 0;
	out->nonzero = (double)nz / (double)m.num_params;
	out->worst = -1;
	for (int i = 0; i < GPU_COMPARE_PARTS; i++) {
		size_t lo, len, stride, count;
		if (i < GPT_NUM_PARAM_TENSORS) {
			lo = off[i], len = m.param_sizes[i], stride = len, count = 1;
		} else {   /* rows [0, C) or [C, 2C) of each layer's (3C, C) block */
			lo = off[4] + (size_t)(i - GPT_NUM_PARAM_TENSORS) * C * C, len = C * C, stride = 3 * C * C, count = L;
		}
		double d2 = 0, r2 = 0;
		for (size_t k = 0; k < count; k++)
			for (size_t j = lo + k * stride; j < lo + k * stride + len; j++) {
				double d = (double)gdev[j] - m.grads_memory[j];
				d2 += d * d;
				r2 += (double)m.grads_memory[j] * m.grads_memory[j];
			}
		out->rel[i] = r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
		if (!(out->rel[i] <= out->worst)) {   /* NaN counts as worst */
			out->worst = out->rel[i];
			out->worst_tensor = i;
		}
	}
done:
	if (s)
		be->free(s);
	free(in);
	free(tg);
	free(gdev);
	gpt_free(&m);
	return st;
}

mp_status gpu_compare_run_compare(train_device dev, const char *policy, const train_config *cfg, const corpus *c,
                          size_t steps, gpu_compare_run *out)
{
	memset(out, 0, sizeof *out);
	train_policy p;
	mp_status st = policy_from_name(policy, &p);
	if (st != MP_OK)
		return st;
	train_config cc = *cfg, dc = *cfg;
	cc.device = TRAIN_DEVICE_CPU;
	dc.device = dev;
	trainer *tc = NULL, *td = NULL;
	st = trainer_create(&tc, &cc, &p, c, NULL, 0);
	if (st == MP_OK)
		st = trainer_create(&td, &dc, &p, c, NULL, 0);
	for (size_t i = 0; st == MP_OK && i < steps; i++) {
		train_stats a, b;
		st = trainer_step(tc, &a);
		if (st == MP_OK)
			st = trainer_step(td, &b);
		if (st != MP_OK)
			break;
		double d = fabs(a.loss - b.loss);
		if (!(d <= out->max_diff))
			out->max_diff = d;
		d = fabs(a.lost_update_frac - b.lost_update_frac);
		out->max_lost_diff = d > out->max_lost_diff ? d : out->max_lost_diff;
		d = fabs(a.underflow_frac - b.underflow_frac);
		out->max_underflow_diff = d > out->max_underflow_diff ? d : out->max_underflow_diff;
		out->mean_lost += a.lost_update_frac / (double)steps;
		out->mean_underflow += a.underflow_frac / (double)steps;
		out->mean_lost_dev += b.lost_update_frac / (double)steps;
		out->mean_underflow_dev += b.underflow_frac / (double)steps;
		out->skipped_cpu += a.skipped;
		out->skipped_dev += b.skipped;
		out->last_cpu = a.loss;
		out->last_dev = b.loss;
	}
	trainer_free(tc);
	trainer_free(td);
	return st;
}

double gpu_compare_tolerance(const char *policy)
{
	train_policy p;
	if (policy_from_name(policy, &p) != MP_OK)
		return 0;
	int prec = 0;   /* the smallest precision in use; 0: none below fp32 */
	const fmt_id used[] = { p.gemm_fmt, p.reduce_fmt, p.resid_fmt, p.weight_fmt };
	for (int i = 0; i < 4; i++) {
		int q = fmt_precision(fmt_get(used[i]));
		if (used[i] != FMT_FP32 && (prec == 0 || q < prec))
			prec = q;
	}
	return prec == 0 ? 1e-4 : 4.0 * ldexp(1.0, -prec);
}

bool gpu_compare_run_stats_ok(const gpu_compare_run *r, char *why, size_t n)
{
	/* lost updates: the same weights and nearly the same updates, so within
	 * a tenth of their rate (measured: a thirtieth) */
	if (!(r->max_lost_diff <= 0.1 * r->mean_lost + 1e-4)) {
		snprintf(why, n, "lost-update fractions differ by up to %.3g (mean %.3g)", r->max_lost_diff, r->mean_lost);
		return false;
	}
	/* underflow: one pass flushes no more than two half-batches, and some */
	if (!(r->mean_underflow_dev <= 1.1 * r->mean_underflow + 1e-4) ||
	    (r->mean_underflow > 1e-3 && !(r->mean_underflow_dev > 0))) {
		snprintf(why, n, "underflow %.3g here against %.3g on the CPU", r->mean_underflow_dev, r->mean_underflow);
		return false;
	}
	return true;
}
