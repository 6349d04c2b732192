#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt/bulk.h"
#include "train/backend.h"
#include "train/fp8scale.h"
#include "train/train.h"
#include "train/train_impl.h"

/* MIXPREC_THREADS=1 makes one thread the default (lesson check runs its
 * commands side by side that way); the bits do not depend on it. */
train_config train_config_default(void)
{
	const char *env = getenv("MIXPREC_THREADS");
	int threads = env && !strcmp(env, "1") ? 1 : 2;
	return (train_config){ .model = gpt_config_default(), .B = 16, .t = 128, .lr = 1e-3, .beta1 = 0.9,
	                       .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.0, .grad_clip = 1.0,
	                       .seed = 1, .eval_every = 100, .eval_batches = 4, .threads = threads };
}

/* The weights as every backend starts from them: cfg->seed's
 * initialisation (or cfg->init_weights), in the policy's weight format when
 * there is no fp32 master copy. */
static mp_status initial_weights(trainer *t, const float *init)
{
	mp_status st = gpt_init(&t->host, t->cfg.model, 1, 1, t->cfg.seed);
	if (st != MP_OK)
		return st;
	if (init)
		memcpy(t->host.params_memory, init, t->host.num_params * sizeof(float));
	if (!policy_master_fp32(&t->pol)) {
		fmt_bulk_opts o = { .fmt = t->pol.weight_fmt, .mode = FMT_RNE };
		/* RNE on the automatic path cannot fail */
		(void)fmt_bulk_quantize(FMT_SIMD_AUTO, &o, t->host.params_memory, t->host.num_params);
	}
	return MP_OK;
}

/* --- the rules joining a policy to a run --- */

/* The emulated accumulator and the per-tensor fp8 casts live in model.c,
 * which only the CPU backend runs. */
static mp_status check_device(const train_policy *p, const train_config *cfg, char *err, size_t errlen)
{
	if (!policy_cpu_only(p) || cfg->device == TRAIN_DEVICE_CPU)
		return MP_OK;
	if (p->cast != CAST_SCALING_NONE)
		snprintf(err, errlen, "--device cuda: policy %s scales its fp8 tensors one by one (amax, scale, "
		         "history), which is emulated with --device cpu only", p->name);
	else if (policy_has_parts(p))
		snprintf(err, errlen, "--device cuda: policy %s has per-operand GEMM formats, rounded softmax, "
		         "LayerNorm or GELU outputs or bit flips (fwd, dgrad, wgrad, softmax, layernorm, gelu, elementwise, "
		         "flip), which are emulated with --device cpu only", p->name);
	else
		snprintf(err, errlen, "%s: the CUDA trainer's GEMMs are cuBLAS's, whose accumulator is the GPU's own; "
		         "the accumulator is emulated with --device cpu only",
		         p->accum_bits ? "--accum-bits" : "--promote-every");
	return MP_EUNSUPPORTED;
}

mp_status policy_check(const train_policy *p, const train_config *cfg, char *err, size_t errlen)
{
	mp_status st = check_device(p, cfg, err, errlen);
	if (st != MP_OK)
		return st;
	if (p->cast != CAST_SCALING_NONE && p->highp_last > cfg->model.L) {
		snprintf(err, errlen, "--bf16-last: policy %s leaves its last %zu blocks in bf16, and the model has "
		         "%zu (--layers)", p->name, p->highp_last, cfg->model.L);
		return MP_EINVAL;
	}
	/* per-operand formats replace gemm_fmt's unscaled rounding; a scaled
	 * cast has its own formats (fp8-format) */
	if (p->op_set != 0 && p->cast != CAST_SCALING_NONE) {
		snprintf(err, errlen, "--policy: policy %s casts its Linears with fp8 or fp4 scales (fp8-scaling) and "
		         "names operand formats (fwd, dgrad, wgrad), which apply to unscaled GEMMs only", p->name);
		return MP_EINVAL;
	}
	/* an fp32 GEMM is BLAS's, whose sums the emulation does not replace */
	if (policy_accum_emulated(p) && p->gemm_fmt == FMT_FP32) {
		snprintf(err, errlen, "%s: policy %s multiplies in fp32 (BLAS); the accumulator is emulated for a "
		         "low-precision GEMM only (add --gemm F, e.g. fp8-e4m3)",
		         p->accum_bits ? "--accum-bits" : "--promote-every", p->name);
		return MP_EINVAL;
	}
	/* the offset must survive being stored in the residual format */
	const fmt_info *f = fmt_get(p->resid_fmt);
	if (p->resid_fmt != FMT_FP32 && fabs((double)cfg->resid_offset) > fmt_max(f)) {
		snprintf(err, errlen, "--resid-offset: %g does not fit in policy %s's residual stream (%s, largest %g)",
		         (double)cfg->resid_offset, p->name, f->name, fmt_max(f));
		return MP_EINVAL;
	}
	return MP_OK;
}

bool policy_check_note(const train_policy *p, const train_config *cfg, char *buf, size_t n)
{
	if (p->cast == CAST_SCALING_NONE || p->highp_last != cfg->model.L)
		return false;
	snprintf(buf, n, "policy %s leaves all %zu blocks' Linears in %s (--bf16-last %zu): nothing is cast to fp8 "
	         "or fp4 (--bf16-last 0 casts them)", p->name, p->highp_last, fmt_get(p->gemm_fmt)->name, p->highp_last);
	return true;
}

/* --- the trainer --- */

/* Records why a backend call on t failed with st: the backend's own
 * sentence, else the status's text. */
static mp_status failed(trainer *t, mp_status st)
{
	if (!t->be->error || !t->be->error(t->state, t->err, sizeof t->err))
		snprintf(t->err, sizeof t->err, "%s", mp_status_message(st));
	return st;
}

mp_status trainer_create(trainer **out, const train_config *cfg, const train_policy *p, const corpus *c, char *err,
                         size_t errlen)
{
	*out = NULL;
	const train_backend *be = train_backend_for(cfg->device);
	if (!be)
		return mp_fail(MP_EINVAL, err, errlen, "no training backend for device %d", (int)cfg->device);
	if (cfg->B == 0 || cfg->t == 0 || cfg->t > cfg->model.T)
		return mp_fail(MP_EINVAL, err, errlen, "a batch of %zu sequences of %zu tokens does not fit a model "
		               "whose context is %zu", cfg->B, cfg->t, cfg->model.T);
	mp_status checked = policy_check(p, cfg, err, errlen);
	if (checked != MP_OK)
		return checked;
	trainer *t = calloc(1, sizeof *t);
	if (!t)
		return mp_fail(MP_ENOMEM, err, errlen, "%s", mp_status_message(MP_ENOMEM));
	t->cfg = *cfg;
	t->cfg.init_weights = NULL;   /* borrowed only until the backend has its copy */
	t->pol = *p;
	t->data = c;
	t->be = be;
	scaler_init(&t->scaler, p->scaling, p->static_scale);
	if (p->scaling == SCALER_DYNAMIC && cfg->init_scale > 0)
		t->scaler.scale = cfg->init_scale;
	if (cfg->scale_growth_interval > 0)
		t->scaler.growth_interval = cfg->scale_growth_interval;
	mp_status st = initial_weights(t, cfg->init_weights);
	size_t P = t->host.num_params;
	if (st == MP_OK) {
		t->inputs = calloc(cfg->B * cfg->t, sizeof(int));
		t->targets = calloc(cfg->B * cfg->t, sizeof(int));
		st = t->inputs && t->targets ? MP_OK : MP_ENOMEM;
	}
	if (st == MP_OK)
		st = be->create(&t->state, &t->cfg, &t->pol, t->host.params_memory, P, t->err, sizeof t->err);
	if (st == MP_OK && be->host_model) {
		/* the backend's own model is the host's view: no copy to keep */
		t->model = be->host_model(t->state);
		t->raw_grads = be->host_raw_grads(t->state);
		gpt_free(&t->host);
	} else if (st == MP_OK) {
		t->model = &t->host;
		t->raw_copy = calloc(P, sizeof(float));
		t->raw_grads = t->raw_copy;
		st = t->raw_copy ? MP_OK : MP_ENOMEM;
	}
	if (st != MP_OK) {
		mp_fail(st, err, errlen, "%s", t->err[0] ? t->err : mp_status_message(st));
		trainer_free(t);
		return st;
	}
	*out = t;
	return MP_OK;
}

void trainer_free(trainer *t)
{
	if (!t)
		return;
	if (t->state)
		t->be->free(t->state);
	gpt_free(&t->host);
	free(t->raw_copy);
	free(t->inputs);
	free(t->targets);
	free(t);
}

double trainer_eval(trainer *t)
{
	double sum = 0;
	size_t nb = t->cfg.eval_batches ? t->cfg.eval_batches : 1;
	for (size_t b = 0; b < nb; b++) {
		corpus_batch(t->data, true, t->cfg.seed, b, t->cfg.B, t->cfg.t, t->inputs, t->targets);
		double loss, se, ee;
		mp_status st = t->be->forward(t->state, t->inputs, t->targets, t->step, &loss, &se, &ee);
		if (st != MP_OK) {
			failed(t, st);
			return NAN;
		}
		sum += loss;
	}
	return sum / (double)nb;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The step's end: the held-out loss when one is due, and the time. */
static void step_done(trainer *t, train_stats *s, double t0)
{
	if (t->cfg.eval_every && t->step % t->cfg.eval_every == 0)
		s->val_loss = trainer_eval(t);
	s->ms = now_ms() - t0;
}

mp_status trainer_step(trainer *t, train_stats *s)
{
	double t0 = now_ms();
	const train_config *cfg = &t->cfg;
	memset(s, 0, sizeof *s);
	s->step = t->step;
	s->val_loss = NAN;
	s->loss_scale = t->scaler.scale;

	corpus_batch(t->data, false, cfg->seed, t->step, cfg->B, cfg->t, t->inputs, t->targets);
	size_t nonzero, flushed;
	bool found_inf;
	double loss, se, ee, norm2;
	mp_status st = t->be->forward(t->state, t->inputs, t->targets, t->step, &loss, &se, &ee);
	if (st == MP_OK)
		st = t->be->backward(t->state, (float)t->scaler.scale);
	if (st == MP_OK)
		st = t->be->grads(t->state, 1.0 / t->scaler.scale, &nonzero, &flushed, &found_inf, &norm2);
	if (st != MP_OK)
		return failed(t, st);
	s->loss = loss;
	s->resid_lost_frac = ee == 0 ? 0 : 1 - se / ee;
	s->underflow_frac = nonzero ? (double)flushed / (double)nonzero : 0;
	s->grad_norm = sqrt(norm2);
	/* a step past bf16-from cast nothing */
	const fp8_state *fs = policy_casts_at(&t->pol, s->step) ? trainer_fp8(t) : NULL;
	s->overflow_frac = fs ? fp8_state_overflow_frac(fs) : NAN;
	s->cast_underflow_frac = fs ? fp8_state_underflow_frac(fs) : NAN;
	s->grad_noise_ratio = fs ? fp8_state_grad_noise_ratio(fs) : NAN;
	s->wgrad_noise_ratio = fs ? fp8_state_wgrad_noise_ratio(fs) : NAN;
	bool apply = scaler_update(&t->scaler, found_inf || !isfinite(norm2));
	s->skipped = !apply;
	t->step++;
	if (!apply) {
		s->grad_norm = isfinite(norm2) ? s->grad_norm : NAN;
		step_done(t, s, t0);
		return MP_OK;
	}
	double clip = cfg->grad_clip > 0 && s->grad_norm > cfg->grad_clip ? cfg->grad_clip / s->grad_norm : 1.0;

	t->adam_t++;
	double c1 = 1.0 - pow(cfg->beta1, (double)t->adam_t), c2 = 1.0 - pow(cfg->beta2, (double)t->adam_t);
	size_t nonzero_updates, lost;
	st = t->be->update(t->state, clip, c1, c2, t->adam_t, &nonzero_updates, &lost);
	if (st != MP_OK)
		return failed(t, st);
	s->lost_update_frac = nonzero_updates ? (double)lost / (double)nonzero_updates : 0;
	step_done(t, s, t0);
	return MP_OK;
}

const train_policy *trainer_policy(const trainer *t)
{
	return &t->pol;
}

size_t trainer_steps_done(const trainer *t)
{
	return t->step;
}

const fp8_state *trainer_fp8(const trainer *t)
{
	return t->be->fp8 ? t->be->fp8(t->state) : NULL;
}

double trainer_v_ratio(const trainer *t)
{
	return t->be->v_ratio ? t->be->v_ratio(t->state) : NAN;
}

mp_status trainer_sync(trainer *t)
{
	if (t->model != &t->host)
		return MP_OK;   /* the backend's own host model is always current */
	mp_status st = t->be->read(t->state, TRAIN_ARRAY_WEIGHTS, t->host.params_memory);
	if (st == MP_OK)
		st = t->be->read(t->state, TRAIN_ARRAY_GRADS, t->host.grads_memory);
	if (st == MP_OK)
		st = t->be->read(t->state, TRAIN_ARRAY_RAW_GRADS, t->raw_copy);
	return st == MP_OK ? MP_OK : failed(t, st);
}

const char *trainer_error(const trainer *t)
{
	return t->err;
}

const gpt_model *trainer_model(const trainer *t)
{
	return t->model;
}

const float *trainer_raw_grads(const trainer *t, size_t *n)
{
	*n = t->model->num_params;
	return t->raw_grads;
}

const float *trainer_douts(const trainer *t, int h, size_t *rows)
{
	*rows = 0;
	return t->step > 0 && t->be->host_douts ? t->be->host_douts(t->state, h, rows) : NULL;
}

/* Bytes per element of a format as stored (tf32 occupies 4). */
static size_t width_bytes(fmt_id f)
{
	return fmt_bulk_elem_size(f);
}

train_memory trainer_memory(const trainer *t)
{
	const train_policy *p = &t->pol;
	size_t P = t->model->num_params;
	train_memory m = {
		.master_weights = policy_master_fp32(p) ? 4 * P : 0,
		.working_weights = !policy_master_fp32(p) ? width_bytes(p->weight_fmt) * P
		                   : p->gemm_fmt != FMT_FP32 ? width_bytes(p->gemm_fmt) * P : 0,
		.gradients = width_bytes(p->grad_fmt) * P,
		.grad_accum = p->grad_accum_fmt != p->grad_fmt ? width_bytes(p->grad_accum_fmt) * P : 0,
		.optim_state = 2 * width_bytes(p->optim_fmt) * P +
		               (!policy_master_fp32(p) && p->wupdate == WUPD_KAHAN ? width_bytes(p->weight_fmt) * P
		                                                                   : 0),
		.activations = t->be->acts_bytes(t->state),   /* as allocated (fp32, plus the emulation's scratch) */
	};
	return m;
}
