#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/fp8scale.h"
#include "train/nvfp4_probe.h"
#include "util/grow.h"
#include "util/rng.h"

struct nvfp4_probe {
	fp8_state *st[2];   /* the recipe's casts: [0] 1D weight blocks, RNE gradients; [1] 16x16, SR */
	size_t draws;
	uint64_t seed;
	float *a, *b;       /* one cast each */
	double *sum;        /* the SR draws summed */
	size_t cap;
	size_t weights, grads;
	double w2, d1, d2, werr;                        /* sums of squares over the weights */
	double g2, rne2, rne_dot, bias2, bias_dot, draw2;   /* ... and over the gradients */
};

void nvfp4_probe_free(nvfp4_probe *p)
{
	if (!p)
		return;
	fp8_state_free(p->st[0]);
	fp8_state_free(p->st[1]);
	free(p->a);
	free(p->b);
	free(p->sum);
	free(p);
}

mp_status nvfp4_probe_create(nvfp4_probe **out, size_t draws, uint64_t seed)
{
	*out = NULL;
	if (draws == 0 || draws > NVFP4_PROBE_DRAWS_MAX)
		return MP_EINVAL;
	nvfp4_probe *p = calloc(1, sizeof *p);
	if (!p)
		return MP_ENOMEM;
	p->draws = draws;
	p->seed = seed;
	for (int s = 0; s < 2; s++) {
		/* the nvfp4 preset's state for one block, its parts off ([0]) or on
		 * ([1]); the casts below read only the rows' direction, which the
		 * Hadamard transform never touches */
		fp8_opts o = { .scaling = CAST_SCALING_NVFP4, .fwd = FMT_E2M1, .bwd = FMT_E2M1, .H = 1,
			       .algo = AMAX_ALGO_MAX, .sr = s == 1, .w2d = s == 1 };
		mp_status st = fp8_state_create(&p->st[s], 1, &o);
		if (st != MP_OK) {
			nvfp4_probe_free(p);
			return st;
		}
	}
	*out = p;
	return MP_OK;
}

/* Room for n elements in the scratch. */
static mp_status grow(nvfp4_probe *p, size_t n)
{
	if (n <= p->cap)
		return MP_OK;
	/* each array on its own: one that grew stays grown when another fails */
	bool a = grow_to(&p->a, n, sizeof *p->a);
	bool b = grow_to(&p->b, n, sizeof *p->b);
	bool sum = grow_to(&p->sum, n, sizeof *p->sum);
	if (!a || !b || !sum)
		return MP_ENOMEM;
	p->cap = n;
	return MP_OK;
}

/* out = x (rows, cols) cast by state s as tensor role r of a GEMM that
 * contracts it `along`, with SR's stream seed where s rounds r so. */
static mp_status cast(nvfp4_probe *p, int s, fp8_role r, fp8_along along, uint64_t seed, float *out,
                      const float *x, size_t rows, size_t cols)
{
	return fp8_state_cast_only(p->st[s], 0, fp8_tensor_index(0, 0, r), along, seed, x, out, rows, cols);
}

mp_status nvfp4_probe_weight(nvfp4_probe *p, const float *w, size_t rows, size_t cols)
{
	size_t n = rows * cols;
	mp_status st = grow(p, n);
	for (int s = 0; s < 2 && st == MP_OK; s++) {
		/* the forward GEMM's cast (along the rows), then the input
		 * gradient's (down the columns) */
		if ((st = cast(p, s, FP8_WEIGHT, FP8_ALONG_ROWS, 0, p->a, w, rows, cols)) != MP_OK ||
		    (st = cast(p, s, FP8_WEIGHT, FP8_ALONG_COLS, 0, p->b, w, rows, cols)) != MP_OK)
			break;
		double d = 0, e = 0;
		for (size_t i = 0; i < n; i++) {
			double fb = (double)p->a[i] - p->b[i], fw = (double)p->a[i] - w[i];
			d += fb * fb;
			e += fw * fw;
		}
		*(s == 0 ? &p->d1 : &p->d2) += d;
		if (s == 0)
			p->werr += e;
	}
	if (st != MP_OK)
		return st;
	for (size_t i = 0; i < n; i++)
		p->w2 += (double)w[i] * w[i];
	p->weights++;
	return MP_OK;
}

mp_status nvfp4_probe_grad(nvfp4_probe *p, const float *g, size_t rows, size_t cols, uint64_t key)
{
	size_t n = rows * cols;
	mp_status st = grow(p, n);
	if (st != MP_OK || (st = cast(p, 0, FP8_GRAD_OUTPUT, FP8_ALONG_ROWS, 0, p->a, g, rows, cols)) != MP_OK)
		return st;
	for (size_t i = 0; i < n; i++) {
		double e = (double)p->a[i] - g[i];
		p->rne2 += e * e;
		p->rne_dot += e * g[i];
		p->g2 += (double)g[i] * g[i];
		p->sum[i] = 0;
	}
	for (size_t r = 0; r < p->draws; r++) {
		uint64_t seed = rng_mix64(p->seed ^ rng_mix64(key << 32 ^ r));
		if ((st = cast(p, 1, FP8_GRAD_OUTPUT, FP8_ALONG_ROWS, seed, p->a, g, rows, cols)) != MP_OK)
			return st;
		double e2 = 0;
		for (size_t i = 0; i < n; i++) {
			double e = (double)p->a[i] - g[i];
			e2 += e * e;
			p->sum[i] += p->a[i];
		}
		p->draw2 += e2;
	}
	for (size_t i = 0; i < n; i++) {
		double e = p->sum[i] / (double)p->draws - g[i];
		p->bias2 += e * e;
		p->bias_dot += e * g[i];
	}
	p->grads++;
	return MP_OK;
}

nvfp4_probe_result nvfp4_probe_result_of(const nvfp4_probe *p)
{
	double w2 = p->w2 > 0 ? p->w2 : NAN, g2 = p->g2 > 0 ? p->g2 : NAN;
	return (nvfp4_probe_result){
		.weights = p->weights, .grads = p->grads, .draws = p->draws,
		.w_1d = sqrt(p->d1 / w2), .w_2d = sqrt(p->d2 / w2), .w_err = sqrt(p->werr / w2),
		.sr_bias = sqrt(p->bias2 / g2), .rne_bias = sqrt(p->rne2 / g2),
		.sr_err = sqrt(p->draw2 / (double)p->draws / g2),
		.sr_proj = p->bias_dot / g2, .rne_proj = p->rne_dot / g2,
	};
}

/* --- a run's tensors --- */

/* The blocks whose Linears policy pol casts in a model of L blocks. */
static size_t blocks_cast(const train_policy *pol, size_t L)
{
	if (pol->cast == CAST_SCALING_NONE)
		return L;
	return pol->highp_last < L ? L - pol->highp_last : 0;
}

/* Block l's four Linear weights into the probe, as (OC, C). */
static mp_status probe_weights(nvfp4_probe *p, const gpt_model *m, size_t l)
{
	size_t C = m->config.C;
	const gpt_params *w = &m->params;
	const float *mat[4] = { w->qkvw + l * 3 * C * C, w->attprojw + l * C * C, w->fcw + l * 4 * C * C,
		                w->fcprojw + l * C * 4 * C };
	const size_t oc[4] = { 3 * C, C, 4 * C, C }, ic[4] = { C, C, C, 4 * C };
	mp_status st = MP_OK;
	for (size_t k = 0; k < 4 && st == MP_OK; k++)
		st = nvfp4_probe_weight(p, mat[k], oc[k], ic[k]);
	return st;
}

mp_status trainer_probe_nvfp4(const trainer *t, size_t draws, uint64_t seed, nvfp4_probe_result *out)
{
	const gpt_model *m = trainer_model(t);
	size_t rows0;
	if (trainer_douts(t, 0, &rows0) == NULL)
		return MP_EINVAL;
	nvfp4_probe *p;
	mp_status st = nvfp4_probe_create(&p, draws, seed);
	if (st != MP_OK)
		return st;
	size_t nl = blocks_cast(trainer_policy(t), m->config.L);
	for (size_t l = 0; l < nl && st == MP_OK; l++)
		st = probe_weights(p, m, l);
	for (int h = 0; h < 2 && st == MP_OK; h++) {
		size_t rows;
		const float *d = trainer_douts(t, h, &rows);
		for (size_t lin = 0; d != NULL && lin < 4 * nl && st == MP_OK; lin++) {
			size_t oc, at = gpt_dout_at(m->config, rows, lin / 4, lin % 4, &oc);
			st = nvfp4_probe_grad(p, d + at, rows, oc, (uint64_t)h << 16 | lin);
		}
	}
	if (st == MP_OK)
		*out = nvfp4_probe_result_of(p);
	nvfp4_probe_free(p);
	return st;
}
