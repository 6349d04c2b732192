#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt/bulk.h"
#include "gpu/gpu_train.h"
#include "train/optim.h"
#include "train/train.h"

struct trainer {
	train_config cfg;
	train_policy pol;
	const corpus *data;
	gpt_model half[2];      /* the batch halves; half[0].params are the weights */
	size_t hB[2];           /* sequences per half (hB[1] may be 0 when B = 1) */
	float *comp;            /* (P) Kahan compensation, or NULL */
	float *m, *v;           /* (P) Adam moments */
	float *vref;            /* (P) v in fp32 beside a low-precision v (train/optim.h), or NULL */
	double v_ratio;         /* the last update's mean v / vref */
	float *update;          /* (P) scratch: -lr * step */
	float *before;          /* (P) scratch: the weights before the update */
	float *raw_grads;       /* (P) gradients before rounding */
	float *wq;              /* (P) the weights rounded to the GEMM format, or NULL */
	int *inputs, *targets;  /* (B,t) */
	loss_scaler scaler;
	size_t step;
	size_t adam_t;          /* updates taken (skipped steps do not count) */
	const gt_backend *be;   /* the GPU trainer (cfg.device != CPU), or NULL */
	void *dev;              /* its state; half[0] then holds host copies only */
};

train_config train_config_default(void)
{
	return (train_config){ .model = gpt_config_default(), .B = 16, .t = 128, .lr = 1e-3, .beta1 = 0.9,
	                       .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.0, .grad_clip = 1.0,
	                       .seed = 1, .eval_every = 100, .eval_batches = 4, .threads = 2 };
}

/* --- the two batch halves --- */

typedef enum { HALF_TRAIN, HALF_EVAL } half_job;

typedef struct {
	trainer *t;
	int h;
	half_job job;
	mp_status st;
} half_task;

static gpt_numerics numerics_of(const trainer *t, int h);

/* Forward (and for training, backward with the half's share of the mean)
 * on half h of the batch in t->inputs/t->targets. */
static void *half_run(void *arg)
{
	half_task *task = arg;
	trainer *t = task->t;
	int h = task->h;
	size_t off = h ? t->hB[0] * t->cfg.t : 0;
	gpt_numerics nx = numerics_of(t, h);
	gpt_model *m = &t->half[h];
	task->st = gpt_forward(m, &nx, t->inputs + off, t->targets + off);
	if (task->st == MP_OK && task->job == HALF_TRAIN) {
		gpt_zero_grad(m);
		/* the batch mean = sum over halves of (share of the batch) x half mean */
		float share = (float)((double)t->hB[h] / (double)t->cfg.B);
		task->st = gpt_backward(m, &nx, (float)t->scaler.scale * share);
	}
	return NULL;
}

/* Runs both halves (in parallel with threads >= 2); returns the first error. */
static mp_status halves(trainer *t, half_job job)
{
	half_task task[2] = { { .t = t, .h = 0, .job = job }, { .t = t, .h = 1, .job = job } };
	int n = t->hB[1] ? 2 : 1;
	pthread_t tid;
	bool spawned = n == 2 && t->cfg.threads >= 2 && pthread_create(&tid, NULL, half_run, &task[1]) == 0;
	half_run(&task[0]);
	if (spawned)
		pthread_join(tid, NULL);
	else if (n == 2)
		half_run(&task[1]);
	return task[0].st != MP_OK ? task[0].st : n == 2 ? task[1].st : MP_OK;
}

/* Batch mean loss from the halves' means. */
static double halves_loss(const trainer *t)
{
	double l = t->half[0].mean_loss * (double)t->hB[0];
	if (t->hB[1])
		l += t->half[1].mean_loss * (double)t->hB[1];
	return l / (double)t->cfg.B;
}

static void round_array(fmt_id f, fmt_mode mode, uint64_t seed, uint64_t index0, float *x, size_t n)
{
	if (f == FMT_FP32)
		return;
	fmt_bulk_opts o = { .fmt = f, .mode = mode, .seed = seed, .index0 = index0 };
	/* RNE and SR on the automatic path cannot fail */
	(void)fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, n);
}

/* wq[lo, hi) = the weights rounded to the GEMM format, a block at a time
 * (the copy is still in cache when it is rounded). */
static void working_weights(trainer *t, size_t lo, size_t hi)
{
	enum { BLOCK = 2048 };
	const float *w = t->half[0].params_memory;
	for (size_t i = lo; i < hi; i += BLOCK) {
		size_t len = hi - i < BLOCK ? hi - i : BLOCK;
		memcpy(t->wq + i, w + i, len * sizeof *w);
		round_array(t->pol.gemm_fmt, FMT_RNE, 0, 0, t->wq + i, len);
	}
}

/* The GPU trainer: half[0] is a host model of batch (1,1) whose params
 * are the initial weights (and later the copies trainer_model reads back). */
static mp_status create_device(trainer *t)
{
	const train_config *cfg = &t->cfg;
	const train_policy *p = &t->pol;
	t->be = cfg->device == TRAIN_DEVICE_CUDA ? &gt_backend_cuda : &gt_backend_host;
	t->hB[0] = cfg->B;
	t->hB[1] = 0;
	if (cfg->t == 0 || cfg->t > cfg->model.T)
		return MP_EINVAL;
	mp_status st = gpt_init(&t->half[0], cfg->model, 1, 1, cfg->seed);
	if (st != MP_OK)
		return st;
	size_t P = t->half[0].num_params;
	t->raw_grads = calloc(P, sizeof(float));
	t->inputs = calloc(cfg->B * cfg->t, sizeof(int));
	t->targets = calloc(cfg->B * cfg->t, sizeof(int));
	if (!t->raw_grads || !t->inputs || !t->targets)
		return MP_ENOMEM;
	if (!p->master_fp32)
		round_array(p->weight_fmt, FMT_RNE, 0, 0, t->half[0].params_memory, P);
	return t->be->create(&t->dev, cfg, p, t->half[0].params_memory, P);
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
	t->v_ratio = NAN;
	if (cfg->B == 0) {
		free(t);
		return MP_EINVAL;
	}
	scaler_init(&t->scaler, p->scaling, p->static_scale);
	if (p->scaling == SCALER_DYNAMIC && cfg->init_scale > 0)
		t->scaler.scale = cfg->init_scale;
	if (cfg->device != TRAIN_DEVICE_CPU) {
		mp_status st = create_device(t);
		if (st != MP_OK) {
			trainer_free(t);
			return st;
		}
		*out = t;
		return MP_OK;
	}
	t->hB[0] = (cfg->B + 1) / 2;
	t->hB[1] = cfg->B / 2;
	mp_status st = gpt_init(&t->half[0], cfg->model, t->hB[0], cfg->t, cfg->seed);
	if (st == MP_OK && t->hB[1]) {
		st = gpt_init(&t->half[1], cfg->model, t->hB[1], cfg->t, cfg->seed);
		if (st != MP_OK)
			gpt_free(&t->half[0]);
	}
	if (st != MP_OK) {
		free(t);
		return st;
	}
	size_t P = t->half[0].num_params;
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
	if (ok && p->gemm_lowp)
		ok = (t->wq = malloc(P * sizeof(float))) != NULL;
	if (ok && p->optim_fmt != FMT_FP32)
		ok = (t->vref = calloc(P, sizeof(float))) != NULL;
	if (!ok) {
		trainer_free(t);
		return MP_ENOMEM;
	}
	/* weights without an fp32 master live in their format from the start */
	if (!p->master_fp32)
		round_array(p->weight_fmt, FMT_RNE, 0, 0, t->half[0].params_memory, P);
	if (t->hB[1])
		memcpy(t->half[1].params_memory, t->half[0].params_memory, P * sizeof(float));
	if (t->wq)
		working_weights(t, 0, P);
	*out = t;
	return MP_OK;
}

void trainer_free(trainer *t)
{
	if (!t)
		return;
	if (t->be && t->dev)
		t->be->free(t->dev);
	gpt_free(&t->half[0]);
	gpt_free(&t->half[1]);
	free(t->comp);
	free(t->m);
	free(t->v);
	free(t->vref);
	free(t->update);
	free(t->before);
	free(t->raw_grads);
	free(t->wq);
	free(t->inputs);
	free(t->targets);
	free(t);
}

static gpt_numerics numerics_of(const trainer *t, int h)
{
	const train_policy *p = &t->pol;
	/* each half draws its own SR stream */
	return (gpt_numerics){ .gemm_lowp = p->gemm_lowp, .gemm_fmt = p->gemm_fmt, .gemm_weights = t->wq,
	                       .reduce_lowp = p->reduce_lowp, .reduce_fmt = p->reduce_fmt, .resid_lowp = p->resid_lowp,
	                       .resid_fmt = p->resid_fmt, .resid_mode = p->resid_mode,
	                       .seed = t->cfg.seed ^ 0x5eedull ^ ((uint64_t)h << 40), .step = t->step,
	                       .resid_offset = t->cfg.resid_offset,
	                       .resid_offset_channels = t->cfg.resid_offset_channels };
}

double trainer_eval(trainer *t)
{
	double sum = 0;
	size_t nb = t->cfg.eval_batches ? t->cfg.eval_batches : 1;
	for (size_t b = 0; b < nb; b++) {
		corpus_batch(t->data, true, t->cfg.seed, b, t->cfg.B, t->cfg.t, t->inputs, t->targets);
		if (t->be) {
			double loss, se, ee;
			if (t->be->forward(t->dev, t->inputs, t->targets, t->step, &loss, &se, &ee) != MP_OK)
				return NAN;
			sum += loss;
			continue;
		}
		if (halves(t, HALF_EVAL) != MP_OK)
			return NAN;
		sum += halves_loss(t);
	}
	return sum / (double)nb;
}

/* The change AdamW makes to a weight w, from the bias-corrected moments. */
static float adamw_update(const train_config *cfg, double lr, double mhat, double vhat, float w)
{
	return (float)-(lr * (mhat / (sqrt(vhat) + cfg->eps) + cfg->weight_decay * w));
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* --- the optimiser step, on two fixed halves of the parameters --- */

/* What one span of the parameters contributes to a step's statistics. */
typedef struct {
	trainer *t;
	size_t lo, hi;                 /* parameters [lo, hi) */
	double clip, c1, c2, lr;       /* phase B: clip factor, Adam bias corrections, this update's lr */
	size_t nonzero, flushed;       /* phase A: gradient underflow */
	bool found_inf;
	double norm2;                  /* phase A: squared norm of the unscaled gradient */
	size_t nonzero_updates, lost;  /* phase B */
	optim_vstat vstat;             /* phase B, with a low-precision v */
	mp_status st;
} span_task;

/* Phase A on one span: the raw gradient for histograms, each half's
 * gradient rounded to grad_fmt (counting what flushes), the halves summed
 * in a fixed order and rounded to grad_accum_fmt, unscaled, squared norm. */
static void *span_grads(void *arg)
{
	span_task *k = arg;
	trainer *t = k->t;
	const train_policy *p = &t->pol;
	size_t lo = k->lo, n = k->hi - k->lo;
	int nh = t->hB[1] ? 2 : 1;
	float *g = t->half[0].grads_memory + lo, *raw = t->raw_grads + lo, *before = t->before + lo;
	const float *g1 = nh == 2 ? t->half[1].grads_memory + lo : NULL;
	memcpy(raw, g, n * sizeof *raw);
	if (g1)
		for (size_t i = 0; i < n; i++)
			raw[i] += g1[i];
	if (p->grad_fmt != FMT_FP32) {   /* in fp32 nothing flushes (inf shows in the norm) */
		/* each half is a micro-batch whose gradients come out in grad_fmt:
		 * count what that flushes to zero (before: the unrounded values) */
		for (int h = 0; h < nh; h++) {
			float *gh = t->half[h].grads_memory + lo;
			memcpy(before, gh, n * sizeof *before);
			round_array(p->grad_fmt, FMT_RNE, 0, 0, gh, n);
			for (size_t i = 0; i < n; i++) {
				k->nonzero += before[i] != 0;
				k->flushed += before[i] != 0 && gh[i] == 0;
				k->found_inf |= !isfinite(gh[i]);
			}
		}
	}
	if (g1)
		for (size_t i = 0; i < n; i++)
			g[i] += g1[i];
	round_array(p->grad_accum_fmt, FMT_RNE, 0, 0, g, n);
	double inv = 1.0 / t->scaler.scale, norm2 = 0;
	for (size_t i = 0; i < n; i++) {
		g[i] = (float)(g[i] * inv);
		norm2 += (double)g[i] * g[i];
	}
	k->norm2 = norm2;
	return NULL;
}

/* AVX-512 twins of the AdamW loops below: the same operations in the same
 * order on 8 doubles at a time, not contracted into fused multiply-adds, so
 * the same bits as the scalar loops. Each returns how many leading elements
 * it did (a multiple of 8; 0 without AVX-512); the scalar loop does the rest. */
#if defined(__x86_64__)
#include <immintrin.h>
#define T512 __attribute__((target("avx512f,avx512vl,avx512dq"), optimize("fp-contract=off")))

static bool adam_have_avx512(void)
{
	static int have = -1;
	if (have < 0) {
		__builtin_cpu_init();
		const char *env = getenv("MIXPREC_SIMD");
		bool capped = env && (!strcmp(env, "portable") || !strcmp(env, "avx2"));
		have = !capped && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512dq");
	}
	return have;
}

T512 static size_t adam_moments_avx512(float *m, float *v, const float *g, size_t n, double clip, double b1,
                                       double b2)
{
	__m512d vclip = _mm512_set1_pd(clip), vb1 = _mm512_set1_pd(b1), vb2 = _mm512_set1_pd(b2);
	__m512d va1 = _mm512_set1_pd(1 - b1), va2 = _mm512_set1_pd(1 - b2);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m512d gi = _mm512_cvtps_pd(_mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(g + i)), vclip)));
		__m512d mm = _mm512_add_pd(_mm512_mul_pd(vb1, _mm512_cvtps_pd(_mm256_loadu_ps(m + i))), _mm512_mul_pd(va1, gi));
		__m512d vv = _mm512_add_pd(_mm512_mul_pd(vb2, _mm512_cvtps_pd(_mm256_loadu_ps(v + i))),
		                           _mm512_mul_pd(_mm512_mul_pd(va2, gi), gi));
		_mm256_storeu_ps(m + i, _mm512_cvtpd_ps(mm));
		_mm256_storeu_ps(v + i, _mm512_cvtpd_ps(vv));
	}
	return i;
}

T512 static size_t adamw_apply_avx512(float *w, const float *m, const float *v, size_t n, const train_config *cfg,
                                      double rate, double c1, double c2, size_t *nonzero, size_t *lost)
{
	__m512d vc1 = _mm512_set1_pd(c1), vc2 = _mm512_set1_pd(c2), lr = _mm512_set1_pd(rate);
	__m512d eps = _mm512_set1_pd(cfg->eps), wd = _mm512_set1_pd(cfg->weight_decay), neg = _mm512_set1_pd(-1.0);
	size_t nz = 0, ls = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 old = _mm256_loadu_ps(w + i);
		__m512d mhat = _mm512_div_pd(_mm512_cvtps_pd(_mm256_loadu_ps(m + i)), vc1);
		__m512d vhat = _mm512_div_pd(_mm512_cvtps_pd(_mm256_loadu_ps(v + i)), vc2);
		__m512d step = _mm512_div_pd(mhat, _mm512_add_pd(_mm512_sqrt_pd(vhat), eps));
		step = _mm512_add_pd(step, _mm512_mul_pd(wd, _mm512_cvtps_pd(old)));
		__m256 upd = _mm512_cvtpd_ps(_mm512_mul_pd(neg, _mm512_mul_pd(lr, step)));
		__m256 nw = _mm256_add_ps(old, upd);
		_mm256_storeu_ps(w + i, nw);
		__mmask8 moved = _mm256_cmp_ps_mask(upd, _mm256_setzero_ps(), _CMP_NEQ_UQ);
		nz += (size_t)__builtin_popcount(moved);
		ls += (size_t)__builtin_popcount(moved & _mm256_cmp_ps_mask(nw, old, _CMP_EQ_OQ));
	}
	*nonzero += nz;
	*lost += ls;
	return i;
}
#endif

static size_t adam_moments_simd(float *m, float *v, const float *g, size_t n, double clip, double b1, double b2)
{
#if defined(__x86_64__)
	if (adam_have_avx512())
		return adam_moments_avx512(m, v, g, n, clip, b1, b2);
#endif
	(void)m; (void)v; (void)g; (void)n; (void)clip; (void)b1; (void)b2;
	return 0;
}

static size_t adamw_apply_simd(float *w, const float *m, const float *v, size_t n, const train_config *cfg,
                               double lr, double c1, double c2, size_t *nonzero, size_t *lost)
{
#if defined(__x86_64__)
	if (adam_have_avx512())
		return adamw_apply_avx512(w, m, v, n, cfg, lr, c1, c2, nonzero, lost);
#endif
	(void)w; (void)m; (void)v; (void)n; (void)cfg; (void)lr; (void)c1; (void)c2; (void)nonzero; (void)lost;
	return 0;
}

/* Phase B on one span: AdamW with its moments in optim_fmt, the weights
 * updated in their format, counting updates lost to rounding; the second
 * half's copy of the weights refreshed. */
static void *span_update(void *arg)
{
	span_task *k = arg;
	trainer *t = k->t;
	const train_policy *p = &t->pol;
	const train_config *cfg = &t->cfg;
	size_t lo = k->lo, n = k->hi - k->lo;
	float *w = t->half[0].params_memory + lo, *g = t->half[0].grads_memory + lo;
	float *m = t->m + lo, *v = t->v + lo;
	double b1 = cfg->beta1, b2 = cfg->beta2, clip = k->clip, c1 = k->c1, c2 = k->c2;
	size_t i0 = adam_moments_simd(m, v, g, n, clip, b1, b2);
	for (size_t i = i0; i < n; i++) {
		float gi = (float)(g[i] * clip);
		m[i] = (float)(b1 * m[i] + (1 - b1) * gi);
		v[i] = (float)(b2 * v[i] + (1 - b2) * (double)gi * gi);
	}
	/* element i of the moments' SR streams is parameter i of this update */
	uint64_t at = (uint64_t)t->adam_t * t->half[0].num_params + lo;
	round_array(p->optim_fmt, p->optim_mode, cfg->seed ^ 0xada1ull, at, m, n);
	round_array(p->optim_fmt, p->optim_mode, cfg->seed ^ 0xada2ull, at, v, n);
	if (t->vref)
		optim_vref_update(&k->vstat, t->vref + lo, v, g, n, clip, b2);
	size_t nonzero_updates = 0, lost = 0;
	if (p->master_fp32) {
		/* update, apply and count in one pass */
		i0 = adamw_apply_simd(w, m, v, n, cfg, k->lr, c1, c2, &nonzero_updates, &lost);
		for (size_t i = i0; i < n; i++) {
			float upd = adamw_update(cfg, k->lr, m[i] / c1, v[i] / c2, w[i]), old = w[i];
			w[i] = old + upd;
			nonzero_updates += upd != 0;
			lost += upd != 0 && w[i] == old;
		}
	} else {
		float *update = t->update + lo, *before = t->before + lo;
		for (size_t i = 0; i < n; i++)
			update[i] = adamw_update(cfg, k->lr, m[i] / c1, v[i] / c2, w[i]);
		memcpy(before, w, n * sizeof *w);
		/* element i of the SR stream is parameter i, whatever the span */
		fmt_bulk_opts o = { .fmt = p->weight_fmt, .mode = p->wupdate == WUPD_SR ? FMT_SR : FMT_RNE,
		                    .seed = cfg->seed ^ 0xada0ull, .index0 = (uint64_t)t->adam_t * t->half[0].num_params + lo };
		k->st = fmt_bulk_accumulate(FMT_SIMD_AUTO, &o, w, p->wupdate == WUPD_KAHAN ? t->comp + lo : NULL,
		                            update, n, NULL);
		for (size_t i = 0; i < n; i++) {
			bool nz = update[i] != 0;
			nonzero_updates += nz;
			lost += nz && w[i] == before[i];
		}
	}
	if (t->hB[1])
		memcpy(t->half[1].params_memory + lo, w, n * sizeof *w);
	if (t->wq)
		working_weights(t, lo, k->hi);
	k->nonzero_updates = nonzero_updates;
	k->lost = lost;
	return NULL;
}

/* Runs fn on the two spans of the parameters, in parallel with threads >= 2.
 * The split is fixed (not by thread count) and the spans' sums are combined
 * in a fixed order, so one thread and two give the same bits. */
static void spans_run(trainer *t, span_task k[2], void *(*fn)(void *))
{
	pthread_t tid;
	bool spawned = t->cfg.threads >= 2 && pthread_create(&tid, NULL, fn, &k[1]) == 0;
	fn(&k[0]);
	if (spawned)
		pthread_join(tid, NULL);
	else
		fn(&k[1]);
}

mp_status trainer_step(trainer *t, train_stats *s)
{
	double t0 = now_ms();
	const train_config *cfg = &t->cfg;
	size_t P = t->half[0].num_params;
	memset(s, 0, sizeof *s);
	s->step = t->step;
	s->val_loss = NAN;
	s->loss_scale = t->scaler.scale;

	corpus_batch(t->data, false, cfg->seed, t->step, cfg->B, cfg->t, t->inputs, t->targets);
	span_task k[2];
	size_t nonzero, flushed;
	bool found_inf;
	double norm2;
	if (t->be) {
		double loss, se, ee;
		mp_status st = t->be->forward(t->dev, t->inputs, t->targets, t->step, &loss, &se, &ee);
		if (st == MP_OK)
			st = t->be->backward(t->dev, (float)t->scaler.scale);
		if (st == MP_OK)
			st = t->be->grads(t->dev, 1.0 / t->scaler.scale, &nonzero, &flushed, &found_inf, &norm2);
		if (st != MP_OK)
			return st;
		s->loss = loss;
		s->resid_lost_frac = ee == 0 ? 0 : 1 - se / ee;
	} else {
		mp_status st = halves(t, HALF_TRAIN);
		if (st != MP_OK)
			return st;
		s->loss = halves_loss(t);
		double se = 0, ee = 0;
		int nh = t->hB[1] ? 2 : 1;
		for (int h = 0; h < nh; h++) {
			se += t->half[h].resid_dot_se;
			ee += t->half[h].resid_dot_ee;
		}
		s->resid_lost_frac = ee == 0 ? 0 : 1 - se / ee;

		size_t mid = P / 2 / 16 * 16;   /* 64-byte aligned spans */
		k[0] = (span_task){ .t = t, .lo = 0, .hi = mid };
		k[1] = (span_task){ .t = t, .lo = mid, .hi = P };
		spans_run(t, k, span_grads);
		nonzero = k[0].nonzero + k[1].nonzero;
		flushed = k[0].flushed + k[1].flushed;
		found_inf = k[0].found_inf || k[1].found_inf;
		norm2 = k[0].norm2 + k[1].norm2;
	}
	s->underflow_frac = nonzero ? (double)flushed / (double)nonzero : 0;
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

	t->adam_t++;
	double c1 = 1.0 - pow(cfg->beta1, (double)t->adam_t), c2 = 1.0 - pow(cfg->beta2, (double)t->adam_t);
	size_t nonzero_updates, lost;
	if (t->be) {
		mp_status st = t->be->update(t->dev, clip, c1, c2, t->adam_t, &nonzero_updates, &lost);
		if (st != MP_OK)
			return st;
	} else {
		for (int i = 0; i < 2; i++) {
			k[i].clip = clip;
			k[i].c1 = c1;
			k[i].c2 = c2;
			k[i].lr = lr_schedule_at(&cfg->sched, cfg->lr, t->adam_t);
		}
		spans_run(t, k, span_update);
		if (k[0].st != MP_OK || k[1].st != MP_OK)
			return k[0].st != MP_OK ? k[0].st : k[1].st;
		nonzero_updates = k[0].nonzero_updates + k[1].nonzero_updates;
		lost = k[0].lost + k[1].lost;
		optim_vstat vs = { k[0].vstat.ratio_sum + k[1].vstat.ratio_sum, k[0].vstat.count + k[1].vstat.count };
		t->v_ratio = optim_vstat_mean(&vs);
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

mp_status trainer_sync(trainer *t)
{
	if (!t->be)
		return MP_OK;
	gpt_model *m = &t->half[0];
	mp_status st = t->be->read(t->dev, 0, m->params_memory);
	if (st == MP_OK)
		st = t->be->read(t->dev, 1, m->grads_memory);
	if (st == MP_OK)
		st = t->be->read(t->dev, 2, t->raw_grads);
	return st;
}

double trainer_v_ratio(const trainer *t)
{
	return t->v_ratio;
}

const gpt_model *trainer_model(const trainer *t)
{
	return &t->half[0];
}

const float *trainer_raw_grads(const trainer *t, size_t *n)
{
	*n = t->half[0].num_params;
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
	size_t P = t->half[0].num_params;
	gpt_memory gm = gpt_memory_bytes(&t->half[0]);
	if (t->be)
		gm.acts = t->be->acts_bytes(t->dev);
	if (t->hB[1])
		gm.acts += gpt_memory_bytes(&t->half[1]).acts;
	train_memory m = {
		.master_weights = p->master_fp32 ? 4 * P : 0,
		.working_weights = p->master_fp32 ? (p->gemm_lowp ? width_bytes(p->gemm_fmt) * P : 0)
		                                   : width_bytes(p->weight_fmt) * P,
		.gradients = width_bytes(p->grad_fmt) * P,
		.grad_accum = p->grad_accum_fmt != p->grad_fmt ? width_bytes(p->grad_accum_fmt) * P : 0,
		.optim_state = 2 * width_bytes(p->optim_fmt) * P +
		               (!p->master_fp32 && p->wupdate == WUPD_KAHAN ? width_bytes(p->weight_fmt) * P : 0),
		.activations = gm.acts,   /* as allocated here (fp32, plus the emulation's scratch) */
	};
	return m;
}
