#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt/bulk.h"
#include "train/train.h"

struct trainer {
	train_config cfg;
	train_policy pol;
	const corpus *data;
	gpt_model model;        /* model.params: the weights the passes use */
	float *comp;            /* (P) Kahan compensation, or NULL */
	float *m, *v;           /* (P) Adam moments */
	float *update;          /* (P) scratch: -lr * step */
	float *before;          /* (P) scratch: the weights before the update */
	float *raw_grads;       /* (P) gradients before rounding */
	int *inputs, *targets;  /* (B,t) */
	loss_scaler scaler;
	size_t step;
	size_t adam_t;          /* updates taken (skipped steps do not count) */
};

train_config train_config_default(void)
{
	return (train_config){ .model = gpt_config_default(), .B = 16, .t = 128, .lr = 1e-3, .beta1 = 0.9,
	                       .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.0, .grad_clip = 1.0,
	                       .seed = 1, .eval_every = 100, .eval_batches = 4 };
}

static void round_array(fmt_id f, fmt_mode mode, uint64_t seed, uint64_t index0, float *x, size_t n)
{
	if (f == FMT_FP32)
		return;
	fmt_bulk_opts o = { .fmt = f, .mode = mode, .seed = seed, .index0 = index0 };
	/* RNE and SR on the automatic path cannot fail */
	(void)fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, n);
}

mp_status trainer_create(trainer **out, const train_config *cfg, const train_policy *p, const corpus *c)
{
	*out = NULL;
	trainer *t = calloc(1, sizeof *t);
	if (!t)
		return MP_ENOMEM;
	t->cfg = *cfg;
	t->pol = *p;
	t->data = c;
	mp_status st = gpt_init(&t->model, cfg->model, cfg->B, cfg->t, cfg->seed);
	if (st != MP_OK) {
		free(t);
		return st;
	}
	size_t P = t->model.num_params;
	t->m = calloc(P, sizeof(float));
	t->v = calloc(P, sizeof(float));
	t->update = calloc(P, sizeof(float));
	t->before = calloc(P, sizeof(float));
	t->raw_grads = calloc(P, sizeof(float));
	t->inputs = calloc(cfg->B * cfg->t, sizeof(int));
	t->targets = calloc(cfg->B * cfg->t, sizeof(int));
	bool ok = t->m && t->v && t->update && t->before && t->raw_grads && t->inputs && t->targets;
	if (ok && !p->master_fp32 && p->wupdate == WUPD_KAHAN)
		ok = (t->comp = calloc(P, sizeof(float))) != NULL;
	if (!ok) {
		trainer_free(t);
		return MP_ENOMEM;
	}
	/* weights without an fp32 master live in their format from the start */
	if (!p->master_fp32)
		round_array(p->weight_fmt, FMT_RNE, 0, 0, t->model.params_memory, P);
	scaler_init(&t->scaler, p->scaling, p->static_scale);
	*out = t;
	return MP_OK;
}

void trainer_free(trainer *t)
{
	if (!t)
		return;
	gpt_free(&t->model);
	free(t->comp);
	free(t->m);
	free(t->v);
	free(t->update);
	free(t->before);
	free(t->raw_grads);
	free(t->inputs);
	free(t->targets);
	free(t);
}

static gpt_numerics numerics_of(const trainer *t)
{
	const train_policy *p = &t->pol;
	return (gpt_numerics){ .gemm_lowp = p->gemm_lowp, .gemm_fmt = p->gemm_fmt, .resid_lowp = p->resid_lowp,
	                       .resid_fmt = p->resid_fmt, .resid_mode = p->resid_mode,
	                       .seed = t->cfg.seed ^ 0x5eedull, .step = t->step,
	                       .resid_offset = t->cfg.resid_offset,
	                       .resid_offset_channels = t->cfg.resid_offset_channels };
}

double trainer_eval(trainer *t)
{
	gpt_numerics nx = numerics_of(t);
	double sum = 0;
	size_t nb = t->cfg.eval_batches ? t->cfg.eval_batches : 1;
	for (size_t b = 0; b < nb; b++) {
		corpus_batch(t->data, true, t->cfg.seed, b, t->cfg.B, t->cfg.t, t->inputs, t->targets);
		if (gpt_forward(&t->model, &nx, t->inputs, t->targets) != MP_OK)
			return NAN;
		sum += t->model.mean_loss;
	}
	return sum / (double)nb;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

mp_status trainer_step(trainer *t, train_stats *s)
{
	double t0 = now_ms();
	const train_policy *p = &t->pol;
	const train_config *cfg = &t->cfg;
	size_t P = t->model.num_params;
	float *w = t->model.params_memory, *g = t->model.grads_memory;
	memset(s, 0, sizeof *s);
	s->step = t->step;
	s->val_loss = NAN;
	s->loss_scale = t->scaler.scale;

	corpus_batch(t->data, false, cfg->seed, t->step, cfg->B, cfg->t, t->inputs, t->targets);
	gpt_numerics nx = numerics_of(t);
	mp_status st = gpt_forward(&t->model, &nx, t->inputs, t->targets);
	if (st != MP_OK)
		return st;
	s->loss = t->model.mean_loss;
	s->resid_lost_frac = t->model.resid_lost_frac;
	gpt_zero_grad(&t->model);
	st = gpt_backward(&t->model, &nx, (float)t->scaler.scale);
	if (st != MP_OK)
		return st;
	memcpy(t->raw_grads, g, P * sizeof(float));

	/* gradients in their format: count what flushes to zero */
	round_array(p->grad_fmt, FMT_RNE, 0, 0, g, P);
	size_t nonzero = 0, flushed = 0;
	bool found_inf = false;
	for (size_t i = 0; i < P; i++) {
		nonzero += t->raw_grads[i] != 0;
		flushed += t->raw_grads[i] != 0 && g[i] == 0;
		found_inf |= !isfinite(g[i]);
	}
	s->underflow_frac = nonzero ? (double)flushed / (double)nonzero : 0;
	round_array(p->grad_accum_fmt, FMT_RNE, 0, 0, g, P);

	/* unscale in fp32, clip by the global norm */
	double inv = 1.0 / t->scaler.scale, norm2 = 0;
	for (size_t i = 0; i < P; i++) {
		g[i] = (float)(g[i] * inv);
		norm2 += (double)g[i] * g[i];
	}
	s->grad_norm = sqrt(norm2);
	bool apply = scaler_update(&t->scaler, found_inf || !isfinite(norm2));
	s->skipped = !apply;
	t->step++;
	if (!apply) {
		s->grad_norm = isfinite(norm2) ? s->grad_norm : NAN;
		if (cfg->eval_every && t->step % cfg->eval_every == 0)
			s->val_loss = trainer_eval(t);
		s->ms = now_ms() - t0;
		return MP_OK;
	}
	double clip = cfg->grad_clip > 0 && s->grad_norm > cfg->grad_clip ? cfg->grad_clip / s->grad_norm : 1.0;

	/* AdamW; the moments live in optim_fmt */
	t->adam_t++;
	double b1 = cfg->beta1, b2 = cfg->beta2;
	double c1 = 1.0 - pow(b1, (double)t->adam_t), c2 = 1.0 - pow(b2, (double)t->adam_t);
	for (size_t i = 0; i < P; i++) {
		float gi = (float)(g[i] * clip);
		t->m[i] = (float)(b1 * t->m[i] + (1 - b1) * gi);
		t->v[i] = (float)(b2 * t->v[i] + (1 - b2) * (double)gi * gi);
	}
	round_array(p->optim_fmt, FMT_RNE, 0, 0, t->m, P);
	round_array(p->optim_fmt, FMT_RNE, 0, 0, t->v, P);
	for (size_t i = 0; i < P; i++) {
		double mhat = t->m[i] / c1, vhat = t->v[i] / c2;
		double u = cfg->lr * (mhat / (sqrt(vhat) + cfg->eps) + cfg->weight_decay * w[i]);
		t->update[i] = (float)-u;
	}
	memcpy(t->before, w, P * sizeof *w);
	if (p->master_fp32) {
		for (size_t i = 0; i < P; i++)
			w[i] += t->update[i];
	} else {
		fmt_bulk_opts o = { .fmt = p->weight_fmt, .mode = p->wupdate == WUPD_SR ? FMT_SR : FMT_RNE,
		                    .seed = cfg->seed ^ 0xada0ull, .index0 = (uint64_t)t->adam_t * P };
		st = fmt_bulk_accumulate(FMT_SIMD_AUTO, &o, w, p->wupdate == WUPD_KAHAN ? t->comp : NULL, t->update, P,
		                         NULL);
		if (st != MP_OK)
			return st;
	}
	size_t nonzero_updates = 0, lost = 0;
	for (size_t i = 0; i < P; i++) {
		bool nz = t->update[i] != 0;
		nonzero_updates += nz;
		lost += nz && w[i] == t->before[i];
	}
	s->lost_update_frac = nonzero_updates ? (double)lost / (double)nonzero_updates : 0;

	if (cfg->eval_every && t->step % cfg->eval_every == 0)
		s->val_loss = trainer_eval(t);
	s->ms = now_ms() - t0;
	return MP_OK;
}

const train_policy *trainer_policy(const trainer *t)
{
	return &t->pol;
}

const gpt_model *trainer_model(const trainer *t)
{
	return &t->model;
}

const float *trainer_raw_grads(const trainer *t, size_t *n)
{
	*n = t->model.num_params;
	return t->raw_grads;
}

/* Bytes per element of a format as stored (tf32 occupies 4). */
static size_t width_bytes(fmt_id f)
{
	return fmt_bulk_elem_size(f);
}

train_memory trainer_memory(const trainer *t)
{
	const train_policy *p = &t->pol;
	size_t P = t->model.num_params;
	gpt_memory gm = gpt_memory_bytes(&t->model);
	train_memory m = {
		.master_weights = p->master_fp32 ? 4 * P : 0,
		.working_weights = p->master_fp32 ? (p->gemm_lowp ? width_bytes(p->gemm_fmt) * P : 0)
		                                   : width_bytes(p->weight_fmt) * P,
		.gradients = width_bytes(p->grad_fmt) * P,
		.grad_accum = p->grad_accum_fmt != p->grad_fmt ? width_bytes(p->grad_accum_fmt) * P : 0,
		.optim_state = 2 * width_bytes(p->optim_fmt) * P + (t->comp ? width_bytes(p->weight_fmt) * P : 0),
		.activations = gm.acts,   /* as allocated here (fp32, plus the emulation's scratch) */
	};
	return m;
}
