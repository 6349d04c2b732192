/* The CPU training backend: the batch in two halves, each with its own
 * model copy and activations (OpenBLAS single-threaded inside each), whose
 * gradients are summed in a fixed order, so one thread or two give the same
 * bits; the optimiser over two fixed spans of the parameters likewise. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "train/backend.h"
#include "train/fp8scale.h"
#include "train/layers_simd.h"
#include "train/optim.h"

typedef struct {
	const train_config *cfg;   /* borrowed from the trainer */
	const train_policy *pol;
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
	fp8_state *fp8;         /* the per-tensor fp8 scales of a policy with them, or NULL */
	float *douts[2];        /* cfg->keep_douts: each half's Linear output gradients, or NULL */
	const int *inputs, *targets;   /* (B,t) of the last forward, borrowed */
	uint64_t step;          /* of the last forward (its SR draws; the backward's numerics) */
	gpt_numerics nx[2];     /* each half's numerics, made with the trainer; each forward sets
	                         * their step and whether it casts (the backward's are the same) */
} cpu_trainer;

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
static void working_weights(cpu_trainer *t, size_t lo, size_t hi)
{
	enum { BLOCK = 2048 };
	const float *w = t->half[0].params_memory;
	for (size_t i = lo; i < hi; i += BLOCK) {
		size_t len = hi - i < BLOCK ? hi - i : BLOCK;
		memcpy(t->wq + i, w + i, len * sizeof *w);
		round_array(t->pol->gemm_fmt, FMT_RNE, 0, 0, t->wq + i, len);
	}
}

/* --- the two batch halves --- */

typedef enum { HALF_FORWARD, HALF_BACKWARD } half_job;

typedef struct {
	cpu_trainer *t;
	int h;
	half_job job;
	float loss_scale;   /* HALF_BACKWARD */
	mp_status st;
} half_task;

/* Forward, or backward with the half's share of the mean, on half h of the
 * batch in t->inputs/t->targets. */
static void *half_run(void *arg)
{
	half_task *task = arg;
	cpu_trainer *t = task->t;
	int h = task->h;
	size_t off = h ? t->hB[0] * t->cfg->t : 0;
	const gpt_numerics *nx = &t->nx[h];
	gpt_model *m = &t->half[h];
	if (task->job == HALF_FORWARD) {
		task->st = gpt_forward(m, nx, t->inputs + off, t->targets ? t->targets + off : NULL);
	} else {
		gpt_zero_grad(m);
		/* the batch mean = sum over halves of (share of the batch) x half mean */
		float share = (float)((double)t->hB[h] / (double)t->cfg->B);
		task->st = gpt_backward(m, nx, task->loss_scale * share);
	}
	return NULL;
}

/* Runs both halves (in parallel with threads >= 2); returns the first error. */
static mp_status halves(cpu_trainer *t, half_job job, float loss_scale)
{
	half_task task[2] = { { .t = t, .h = 0, .job = job, .loss_scale = loss_scale },
		              { .t = t, .h = 1, .job = job, .loss_scale = loss_scale } };
	int n = t->hB[1] ? 2 : 1;
	pthread_t tid;
	bool spawned = n == 2 && t->cfg->threads >= 2 && pthread_create(&tid, NULL, half_run, &task[1]) == 0;
	half_run(&task[0]);
	if (spawned)
		pthread_join(tid, NULL);
	else if (n == 2)
		half_run(&task[1]);
	return task[0].st != MP_OK ? task[0].st : n == 2 ? task[1].st : MP_OK;
}

static mp_status cpu_forward(void *state, const int *inputs, const int *targets, uint64_t step, double *loss,
                             double *dot_se, double *dot_ee)
{
	cpu_trainer *t = state;
	t->inputs = inputs;
	t->targets = targets;
	t->step = step;
	for (int h = 0; h < 2; h++) {
		t->nx[h].step = step;
		/* past bf16-from the Linears are the GEMM format's, as bf16-mixed's */
		t->nx[h].fp8 = policy_casts_at(t->pol, (size_t)step) ? t->fp8 : NULL;
	}
	if (t->fp8)   /* an evaluation's casts since the last step do not count */
		fp8_state_begin(t->fp8);
	mp_status st = halves(t, HALF_FORWARD, 0.0f);
	if (st != MP_OK)
		return st;
	/* the batch mean loss from the halves' means */
	int nh = t->hB[1] ? 2 : 1;
	double l = 0, se = 0, ee = 0;
	for (int h = 0; h < nh; h++) {
		l += t->half[h].mean_loss * (double)t->hB[h];
		se += t->half[h].resid_dot_se;
		ee += t->half[h].resid_dot_ee;
	}
	*loss = l / (double)t->cfg->B;
	*dot_se = se;
	*dot_ee = ee;
	return MP_OK;
}

static mp_status cpu_backward(void *state, float loss_scale)
{
	cpu_trainer *t = state;
	mp_status st = halves(t, HALF_BACKWARD, loss_scale);
	/* the step's amaxes enter the histories after the step used the scales
	 * (a step past bf16-from cast nothing: the last statistics stay) */
	if (st == MP_OK && t->fp8 && policy_casts_at(t->pol, (size_t)t->step))
		fp8_state_step_end(t->fp8);
	return st;
}

/* --- the optimiser step, on two fixed halves of the parameters --- */

/* What one span of the parameters contributes to a step's statistics. */
typedef struct {
	cpu_trainer *t;
	size_t lo, hi;                 /* parameters [lo, hi) */
	double inv_scale;              /* phase A: 1 / the loss scale */
	double clip, c1, c2, lr;       /* phase B: clip factor, Adam bias corrections, this update's lr */
	uint64_t adam_t;               /* phase B: the update's number (its SR draws) */
	optim_vstat vstat;             /* phase B, with a low-precision v */
	size_t nonzero, flushed;       /* phase A: gradient underflow */
	bool found_inf;
	double norm2;                  /* phase A: squared norm of the unscaled gradient */
	size_t nonzero_updates, lost;  /* phase B */
	mp_status st;
} span_task;

/* Phase A on one span: the raw gradient for histograms, each half's
 * gradient rounded to grad_fmt (counting what flushes), the halves summed
 * in a fixed order and rounded to grad_accum_fmt, unscaled, squared norm.
 * The elementwise loops and the integer counts vectorised (the same bits;
 * the norm's binary64 sum keeps its order, which the compiler may not
 * change). */
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
static void *span_grads(void *arg)
{
	span_task *k = arg;
	cpu_trainer *t = k->t;
	const train_policy *p = t->pol;
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
	double inv = k->inv_scale, norm2 = 0;
	for (size_t i = 0; i < n; i++) {
		g[i] = (float)(g[i] * inv);
		norm2 += (double)g[i] * g[i];
	}
	k->norm2 = norm2;
	return NULL;
}

/* The change AdamW makes to a weight w, from the bias-corrected moments. */
static float adamw_update(const train_config *cfg, double lr, double mhat, double vhat, float w)
{
	return (float)-(lr * (mhat / (sqrt(vhat) + cfg->eps) + cfg->weight_decay * w));
}

/* AVX-512 and AVX2 twins of the AdamW loops below: the same operations in
 * the same order on 8 or 4 doubles at a time, not contracted into fused
 * multiply-adds, so the same bits as the scalar loops (train-paths.sh
 * compares them). Each returns how many leading elements it did (a multiple
 * of its lane count; 0 without the path); the scalar loop does the rest. */
#if defined(__x86_64__)
#include <immintrin.h>
#define T512 __attribute__((target("avx512f,avx512vl,avx512dq"), optimize("fp-contract=off")))

/* The layers' AVX-512 path (detected once, MIXPREC_SIMD honoured), with DQ
 * and VL. */
static bool adam_have_avx512(void)
{
	return layers_path_best() == LAYERS_AVX512 && __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512vl");
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

/* The same loops on 4 doubles at a time (AVX2: the path of most laptops). */
#define T256 __attribute__((target("avx2"), optimize("fp-contract=off")))

T256 static size_t adam_moments_avx2(float *m, float *v, const float *g, size_t n, double clip, double b1, double b2)
{
	__m256d vclip = _mm256_set1_pd(clip), vb1 = _mm256_set1_pd(b1), vb2 = _mm256_set1_pd(b2);
	__m256d va1 = _mm256_set1_pd(1 - b1), va2 = _mm256_set1_pd(1 - b2);
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		__m256d gi = _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(g + i)), vclip)));
		__m256d mm = _mm256_add_pd(_mm256_mul_pd(vb1, _mm256_cvtps_pd(_mm_loadu_ps(m + i))), _mm256_mul_pd(va1, gi));
		__m256d vv = _mm256_add_pd(_mm256_mul_pd(vb2, _mm256_cvtps_pd(_mm_loadu_ps(v + i))),
		                           _mm256_mul_pd(_mm256_mul_pd(va2, gi), gi));
		_mm_storeu_ps(m + i, _mm256_cvtpd_ps(mm));
		_mm_storeu_ps(v + i, _mm256_cvtpd_ps(vv));
	}
	return i;
}

T256 static size_t adamw_apply_avx2(float *w, const float *m, const float *v, size_t n, const train_config *cfg,
                                    double rate, double c1, double c2, size_t *nonzero, size_t *lost)
{
	__m256d vc1 = _mm256_set1_pd(c1), vc2 = _mm256_set1_pd(c2), lr = _mm256_set1_pd(rate);
	__m256d eps = _mm256_set1_pd(cfg->eps), wd = _mm256_set1_pd(cfg->weight_decay), neg = _mm256_set1_pd(-1.0);
	size_t nz = 0, ls = 0, i = 0;
	for (; i + 4 <= n; i += 4) {
		__m128 old = _mm_loadu_ps(w + i);
		__m256d mhat = _mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(m + i)), vc1);
		__m256d vhat = _mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(v + i)), vc2);
		__m256d step = _mm256_div_pd(mhat, _mm256_add_pd(_mm256_sqrt_pd(vhat), eps));
		step = _mm256_add_pd(step, _mm256_mul_pd(wd, _mm256_cvtps_pd(old)));
		__m128 upd = _mm256_cvtpd_ps(_mm256_mul_pd(neg, _mm256_mul_pd(lr, step)));
		__m128 nw = _mm_add_ps(old, upd);
		_mm_storeu_ps(w + i, nw);
		int moved = _mm_movemask_ps(_mm_cmp_ps(upd, _mm_setzero_ps(), _CMP_NEQ_UQ));
		nz += (size_t)__builtin_popcount((unsigned)moved);
		ls += (size_t)__builtin_popcount((unsigned)(moved & _mm_movemask_ps(_mm_cmp_ps(nw, old, _CMP_EQ_OQ))));
	}
	*nonzero += nz;
	*lost += ls;
	return i;
}

/* The layers' AVX2 path or better (detected once, MIXPREC_SIMD honoured). */
static bool adam_have_avx2(void)
{
	return layers_path_best() >= LAYERS_AVX2;
}
#endif

static size_t adam_moments_simd(float *m, float *v, const float *g, size_t n, double clip, double b1, double b2)
{
#if defined(__x86_64__)
	if (adam_have_avx512())
		return adam_moments_avx512(m, v, g, n, clip, b1, b2);
	if (adam_have_avx2())
		return adam_moments_avx2(m, v, g, n, clip, b1, b2);
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
	if (adam_have_avx2())
		return adamw_apply_avx2(w, m, v, n, cfg, lr, c1, c2, nonzero, lost);
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
	cpu_trainer *t = k->t;
	const train_policy *p = t->pol;
	const train_config *cfg = t->cfg;
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
	uint64_t at = k->adam_t * t->half[0].num_params + lo;
	round_array(p->optim_fmt, p->optim_mode, cfg->seed ^ 0xada1ull, at, m, n);
	round_array(p->optim_fmt, p->optim_mode, cfg->seed ^ 0xada2ull, at, v, n);
	if (t->vref)
		optim_vref_update(&k->vstat, t->vref + lo, v, g, n, clip, b2);
	size_t nonzero_updates = 0, lost = 0;
	if (policy_master_fp32(p)) {
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
		                    .seed = cfg->seed ^ 0xada0ull, .index0 = k->adam_t * t->half[0].num_params + lo };
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
static void spans_run(cpu_trainer *t, span_task k[2], void *(*fn)(void *))
{
	size_t P = t->half[0].num_params, mid = P / 2 / 16 * 16;   /* 64-byte aligned spans */
	k[0].t = k[1].t = t;
	k[0].lo = 0;
	k[0].hi = k[1].lo = mid;
	k[1].hi = P;
	pthread_t tid;
	bool spawned = t->cfg->threads >= 2 && pthread_create(&tid, NULL, fn, &k[1]) == 0;
	fn(&k[0]);
	if (spawned)
		pthread_join(tid, NULL);
	else
		fn(&k[1]);
}

static mp_status cpu_grads(void *state, double inv_scale, size_t *nonzero, size_t *flushed, bool *found_inf,
                           double *norm2)
{
	span_task k[2] = { { .inv_scale = inv_scale }, { .inv_scale = inv_scale } };
	spans_run(state, k, span_grads);
	*nonzero = k[0].nonzero + k[1].nonzero;
	*flushed = k[0].flushed + k[1].flushed;
	*found_inf = k[0].found_inf || k[1].found_inf;
	*norm2 = k[0].norm2 + k[1].norm2;
	return MP_OK;
}

static mp_status cpu_update(void *state, double clip, double c1, double c2, uint64_t adam_t, size_t *nonzero,
                            size_t *lost)
{
	cpu_trainer *t = state;
	const train_config *cfg = t->cfg;
	span_task k[2];
	for (int i = 0; i < 2; i++)
		k[i] = (span_task){ .clip = clip, .c1 = c1, .c2 = c2, .adam_t = adam_t,
		                    .lr = lr_schedule_at(&cfg->sched, cfg->lr, adam_t) };
	spans_run(t, k, span_update);
	if (k[0].st != MP_OK || k[1].st != MP_OK)
		return k[0].st != MP_OK ? k[0].st : k[1].st;
	*nonzero = k[0].nonzero_updates + k[1].nonzero_updates;
	*lost = k[0].lost + k[1].lost;
	optim_vstat vs = { k[0].vstat.ratio_sum + k[1].vstat.ratio_sum, k[0].vstat.count + k[1].vstat.count };
	t->v_ratio = optim_vstat_mean(&vs);
	return MP_OK;
}

/* --- state --- */

static void cpu_free(void *state)
{
	cpu_trainer *t = state;
	if (!t)
		return;
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
	free(t->douts[0]);
	free(t->douts[1]);
	fp8_state_free(t->fp8);
	free(t);
}

/* Its statuses say all: err is left untouched. */
static mp_status cpu_create(void **out, const train_config *cfg, const train_policy *p, const float *params,
                            size_t P, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	*out = NULL;
	cpu_trainer *t = calloc(1, sizeof *t);
	if (!t)
		return MP_ENOMEM;
	t->cfg = cfg;
	t->pol = p;
	t->v_ratio = NAN;
	t->hB[0] = (cfg->B + 1) / 2;
	t->hB[1] = cfg->B / 2;
	mp_status st = gpt_init(&t->half[0], cfg->model, t->hB[0], cfg->t, cfg->seed);
	if (st == MP_OK && t->hB[1])
		st = gpt_init(&t->half[1], cfg->model, t->hB[1], cfg->t, cfg->seed);
	if (st == MP_OK && t->half[0].num_params != P)
		st = MP_EINVAL;
	if (st != MP_OK) {
		cpu_free(t);
		return st;
	}
	t->m = calloc(P, sizeof(float));
	t->v = calloc(P, sizeof(float));
	t->update = calloc(P, sizeof(float));
	t->before = calloc(P, sizeof(float));
	t->raw_grads = calloc(P, sizeof(float));
	bool ok = t->m && t->v && t->update && t->before && t->raw_grads;
	if (ok && !policy_master_fp32(p) && p->wupdate == WUPD_KAHAN)
		ok = (t->comp = calloc(P, sizeof(float))) != NULL;
	if (ok && p->gemm_fmt != FMT_FP32)
		ok = (t->wq = malloc(P * sizeof(float))) != NULL;
	if (ok && p->optim_fmt != FMT_FP32)
		ok = (t->vref = calloc(P, sizeof(float))) != NULL;
	for (int h = 0; ok && cfg->keep_douts && h < 2; h++)
		if (t->hB[h])
			ok = (t->douts[h] = calloc(gpt_douts_floats(cfg->model, t->hB[h] * cfg->t), sizeof(float))) != NULL;
	if (!ok) {
		cpu_free(t);
		return MP_ENOMEM;
	}
	fp8_opts fo = { .scaling = p->cast, .fwd = p->cast_fwd, .bwd = p->cast_bwd, .H = p->amax_history,
		        .algo = p->amax_algo, .margin = p->fp8_margin, .pow2 = p->scale_pow2, .rule = p->mx_rule,
		        .mx_block = p->mx_block,		        .rht = p->nvfp4_rht, .sr = p->nvfp4_sr, .w2d = p->nvfp4_2d, .highp_last = p->highp_last,
		        .noise = cfg->grad_noise };
	if (p->cast != CAST_SCALING_NONE && (st = fp8_state_create(&t->fp8, cfg->model.L, &fo)) != MP_OK) {
		cpu_free(t);
		return st;
	}
	for (int h = 0; h < 2; h++)   /* each half draws its own SR stream */
		t->nx[h] = (gpt_numerics){ .pol = p, .gemm_weights = t->wq,
		                           .seed = cfg->seed ^ 0x5eedull ^ ((uint64_t)h << 40), .fp8_half = h,
		                           .resid_offset = cfg->resid_offset,
		                           .resid_offset_channels = cfg->resid_offset_channels, .douts = t->douts[h] };
	memcpy(t->half[0].params_memory, params, P * sizeof(float));
	if (t->hB[1])
		memcpy(t->half[1].params_memory, params, P * sizeof(float));
	if (t->wq)
		working_weights(t, 0, P);
	*out = t;
	return MP_OK;
}

static size_t cpu_acts_bytes(const void *state)
{
	const cpu_trainer *t = state;
	size_t n = gpt_memory_bytes(&t->half[0]).acts;
	if (t->hB[1])
		n += gpt_memory_bytes(&t->half[1]).acts;
	/* the fp8 / fp4 casts' copies and block scratch, as grown so far */
	return n + (t->fp8 ? fp8_state_scratch_bytes(t->fp8) : 0);
}

static mp_status cpu_read(void *state, train_array which, float *host)
{
	cpu_trainer *t = state;
	const gpt_model *m = &t->half[0];
	const float *src = which == TRAIN_ARRAY_WEIGHTS ? m->params_memory
	                   : which == TRAIN_ARRAY_GRADS ? m->grads_memory : t->raw_grads;
	memcpy(host, src, m->num_params * sizeof *host);
	return MP_OK;
}

static gpt_model *cpu_host_model(void *state)
{
	return &((cpu_trainer *)state)->half[0];
}

static const float *cpu_host_raw_grads(const void *state)
{
	return ((const cpu_trainer *)state)->raw_grads;
}

static const float *cpu_host_douts(const void *state, int h, size_t *rows)
{
	const cpu_trainer *t = state;
	*rows = t->douts[h] ? t->hB[h] * t->cfg->t : 0;
	return t->douts[h];
}

static fp8_state *cpu_fp8(void *state)
{
	return ((cpu_trainer *)state)->fp8;
}

static double cpu_v_ratio(const void *state)
{
	return ((const cpu_trainer *)state)->v_ratio;
}

/* The array behind a run-state array, or NULL where the policy keeps none. */
static float *state_array(const cpu_trainer *t, train_state_array which)
{
	switch (which) {
	case TRAIN_STATE_WEIGHTS: return t->half[0].params_memory;
	case TRAIN_STATE_M: return t->m;
	case TRAIN_STATE_V: return t->v;
	case TRAIN_STATE_VREF: return t->vref;
	case TRAIN_STATE_COMP: return t->comp;
	}
	return NULL;
}

static bool cpu_state_has(const void *state, train_state_array which)
{
	return state_array(state, which) != NULL;
}

static mp_status cpu_state_read(void *state, train_state_array which, float *host)
{
	cpu_trainer *t = state;
	const float *a = state_array(t, which);
	if (!a)
		return MP_EINVAL;
	memcpy(host, a, t->half[0].num_params * sizeof *host);
	return MP_OK;
}

static mp_status cpu_state_write(void *state, train_state_array which, const float *host)
{
	cpu_trainer *t = state;
	float *a = state_array(t, which);
	size_t P = t->half[0].num_params;
	if (!a)
		return MP_EINVAL;
	memcpy(a, host, P * sizeof *a);
	if (which == TRAIN_STATE_WEIGHTS) {
		if (t->hB[1])
			memcpy(t->half[1].params_memory, host, P * sizeof *host);
		if (t->wq)
			working_weights(t, 0, P);
	}
	return MP_OK;
}

const train_backend train_backend_cpu = {
	.name = "cpu",
	.create = cpu_create,
	.free = cpu_free,
	.acts_bytes = cpu_acts_bytes,
	.forward = cpu_forward,
	.backward = cpu_backward,
	.grads = cpu_grads,
	.update = cpu_update,
	.read = cpu_read,
	.host_model = cpu_host_model,
	.host_raw_grads = cpu_host_raw_grads,
	.host_douts = cpu_host_douts,
	.v_ratio = cpu_v_ratio,
	.state_has = cpu_state_has,
	.state_read = cpu_state_read,
	.state_write = cpu_state_write,
	.fp8 = cpu_fp8,
};
