/* The tiny GPT: allocation, initialisation, forward and backward passes, and
 * the number-format emulation hooks a trainer uses to play precision policies. */
#include "train/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "train/layers.h"
#include "train/model_gemm.h"
#include "util/rng.h"

#define TRY(expr)                               \
	do {                                    \
		mp_status st_ = (expr);         \
		if (st_ != MP_OK)               \
			return st_;             \
	} while (0)

gpt_config gpt_config_default(void)
{
	return (gpt_config){ .V = 128, .T = 128, .C = 128, .L = 4, .NH = 4 };
}

/* --- parameters --- */

void gpt_param_sizes(size_t sizes[GPT_NUM_PARAM_TENSORS], gpt_config c)
{
	size_t V = c.V, T = c.T, C = c.C, L = c.L;
	size_t s[GPT_NUM_PARAM_TENSORS] = {
		V * C, T * C,                 /* wte, wpe */
		L * C, L * C,                 /* ln1w, ln1b */
		L * 3 * C * C, L * 3 * C,     /* qkvw, qkvb */
		L * C * C, L * C,             /* attprojw, attprojb */
		L * C, L * C,                 /* ln2w, ln2b */
		L * 4 * C * C, L * 4 * C,     /* fcw, fcb */
		L * C * 4 * C, L * C,         /* fcprojw, fcprojb */
		C, C,                         /* lnfw, lnfb */
	};
	memcpy(sizes, s, sizeof s);
}

/* Points the views of p into mem, laid out in the order of gpt_param_sizes. */
static void point_params(gpt_params *p, float *mem, const size_t sizes[GPT_NUM_PARAM_TENSORS])
{
	float **views[GPT_NUM_PARAM_TENSORS] = {
		&p->wte, &p->wpe, &p->ln1w, &p->ln1b, &p->qkvw, &p->qkvb,
		&p->attprojw, &p->attprojb, &p->ln2w, &p->ln2b, &p->fcw, &p->fcb,
		&p->fcprojw, &p->fcprojb, &p->lnfw, &p->lnfb,
	};
	for (size_t i = 0; i < GPT_NUM_PARAM_TENSORS; i++) {
		*views[i] = mem;
		mem += sizes[i];
	}
}

/* --- activations --- */

/* Rounds a float count up to 16 floats (64 bytes) so every view is aligned
 * for SIMD loads. */
static size_t pad16(size_t n)
{
	return (n + 15) / 16 * 16;
}

/* Lays the activation views out from mem (NULL: only counts) and returns the
 * byte count. */
static size_t point_acts(gpt_acts *a, char *mem, gpt_config c, size_t B, size_t T)
{
	size_t C = c.C, L = c.L, NH = c.NH, V = c.V, BT = B * T;
	size_t wmax = (V > 4 * C ? V : 4 * C) * C;
	size_t amax = BT * (V > 4 * C ? V : 4 * C);
	struct {
		float **view;
		size_t n;
	} f[] = {
		{ &a->encoded, BT * C },
		{ &a->ln1, L * BT * C }, { &a->ln1_mean, L * BT }, { &a->ln1_rstd, L * BT },
		{ &a->qkv, L * BT * 3 * C }, { &a->atty, L * BT * C },
		{ &a->preatt, L * B * NH * T * T }, { &a->att, L * B * NH * T * T },
		{ &a->attproj, L * BT * C }, { &a->residual2, L * BT * C },
		{ &a->ln2, L * BT * C }, { &a->ln2_mean, L * BT }, { &a->ln2_rstd, L * BT },
		{ &a->fch, L * BT * 4 * C }, { &a->fch_gelu, L * BT * 4 * C },
		{ &a->fcproj, L * BT * C }, { &a->residual3, L * BT * C },
		{ &a->lnf, BT * C }, { &a->lnf_mean, BT }, { &a->lnf_rstd, BT },
		{ &a->logits, BT * V }, { &a->probs, BT * V }, { &a->losses, BT },
		{ &a->dresid, BT * C }, { &a->dbuf_c, BT * C }, { &a->dbuf_3c, BT * 3 * C },
		{ &a->dbuf_4c, BT * 4 * C }, { &a->dbuf_4c2, BT * 4 * C }, { &a->dlogits, BT * V },
		{ &a->dpreatt, T * T }, { &a->datt, T * T },
		{ &a->q_act, amax }, { &a->q_w, wmax },
		{ &a->q_att, attention_scratch_floats(T, C, NH) },
	};
	/* The fp64 accumulator first: malloc's alignment then suits it. */
	size_t off = pad16(2 * BT * C) * sizeof(float);
	if (mem != NULL)
		a->dexact = (double *)(void *)mem;
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		if (mem != NULL)
			*f[i].view = (float *)(void *)(mem + off);
		off += pad16(f[i].n) * sizeof(float);
	}
	return off;
}

/* --- initialisation --- */

/* SplitMix64 as a sequential generator, with Box-Muller normals. */
typedef struct {
	uint64_t state;
	bool has_spare;
	double spare;
} init_rng;

static uint64_t init_rng_next(init_rng *r)
{
	uint64_t z = rng_mix64(r->state);
	r->state += 0x9e3779b97f4a7c15ull;
	return z;
}

/* A standard normal deviate. */
static double init_rng_normal(init_rng *r)
{
	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	/* u1 in (0, 1] keeps the logarithm finite. */
	double u1 = (double)((init_rng_next(r) >> 11) + 1) * 0x1p-53;
	double u2 = (double)(init_rng_next(r) >> 11) * 0x1p-53;
	double rad = sqrt(-2.0 * log(u1));
	double th = 2.0 * M_PI * u2;
	r->spare = rad * sin(th);
	r->has_spare = true;
	return rad * cos(th);
}

static void fill_normal(float *x, size_t n, double std, init_rng *r)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(std * init_rng_normal(r));
}

static void fill_const(float *x, size_t n, float v)
{
	for (size_t i = 0; i < n; i++)
		x[i] = v;
}

static void init_params(gpt_model *m, uint64_t seed)
{
	gpt_config c = m->config;
	gpt_params *p = &m->params;
	const size_t *s = m->param_sizes;
	init_rng r = { .state = seed };
	/* GPT-2: each residual projection adds to the stream 2L times in all,
	 * so its std shrinks by 1/sqrt(2L) to keep the stream's variance flat. */
	double std = 0.02, std_proj = 0.02 / sqrt(2.0 * (double)c.L);
	fill_normal(p->wte, s[0], std, &r);
	fill_normal(p->wpe, s[1], std, &r);
	fill_const(p->ln1w, s[2], 1.0f);
	fill_const(p->ln1b, s[3], 0.0f);
	fill_normal(p->qkvw, s[4], std, &r);
	fill_const(p->qkvb, s[5], 0.0f);
	fill_normal(p->attprojw, s[6], std_proj, &r);
	fill_const(p->attprojb, s[7], 0.0f);
	fill_const(p->ln2w, s[8], 1.0f);
	fill_const(p->ln2b, s[9], 0.0f);
	fill_normal(p->fcw, s[10], std, &r);
	fill_const(p->fcb, s[11], 0.0f);
	fill_normal(p->fcprojw, s[12], std_proj, &r);
	fill_const(p->fcprojb, s[13], 0.0f);
	fill_const(p->lnfw, s[14], 1.0f);
	fill_const(p->lnfb, s[15], 0.0f);
}

mp_status gpt_init(gpt_model *model, gpt_config config, size_t B, size_t t, uint64_t seed)
{
	memset(model, 0, sizeof *model);
	if (config.V == 0 || config.T == 0 || config.C == 0 || config.L == 0 || config.NH == 0 ||
	    config.C % config.NH != 0 || B == 0 || t == 0 || t > config.T || config.V > INT32_MAX)
		return MP_EINVAL;
	model->config = config;
	model->B = B;
	model->t = t;

	gpt_param_sizes(model->param_sizes, config);
	size_t n = 0;
	for (size_t i = 0; i < GPT_NUM_PARAM_TENSORS; i++)
		n += model->param_sizes[i];
	model->num_params = n;
	model->params_memory = malloc(n * sizeof(float));
	model->grads_memory = calloc(n, sizeof(float));
	model->acts_bytes = point_acts(&model->acts, NULL, config, B, t);
	model->acts_memory = calloc(1, model->acts_bytes);
	if (model->params_memory == NULL || model->grads_memory == NULL || model->acts_memory == NULL) {
		gpt_free(model);
		return MP_ENOMEM;
	}
	point_params(&model->params, model->params_memory, model->param_sizes);
	point_params(&model->grads, model->grads_memory, model->param_sizes);
	point_acts(&model->acts, model->acts_memory, config, B, t);
	init_params(model, seed);
	model->mean_loss = NAN;
	return MP_OK;
}

gpt_memory gpt_memory_bytes(const gpt_model *model)
{
	return (gpt_memory){
		.params = model->num_params * sizeof(float),
		.grads = model->num_params * sizeof(float),
		.acts = model->acts_bytes,
	};
}

void gpt_zero_grad(gpt_model *model)
{
	memset(model->grads_memory, 0, model->num_params * sizeof(float));
}

void gpt_free(gpt_model *model)
{
	if (model == NULL)
		return;
	free(model->params_memory);
	free(model->grads_memory);
	free(model->acts_memory);
	free(model->q_x);
	memset(model, 0, sizeof *model);
}

/* --- number-format emulation (the Linear GEMMs: model_gemm.c) --- */

/* The formats the attention, LayerNorm and softmax kernels emulate. */
static kernel_fmts kernel_fmts_of(const gpt_numerics *nx)
{
	const train_policy *p = pol_of(nx);
	return (kernel_fmts){ .gemm = p != NULL ? p->gemm_fmt : FMT_FP32,
	                      .reduce = p != NULL ? p->reduce_fmt : FMT_FP32,
	                      .softmax = p != NULL ? p->softmax_fmt : FMT_FP32 };
}

/* x (n) rounded in place to f (layernorm= or gelu=), nothing for fp32:
 * an elementwise op's output as microxcaling's elementwise emulation
 * leaves it. The backward passes differentiate the op as computed in fp32
 * (LayerNorm from its input and statistics, GELU from its input), so the
 * rounding passes the gradient straight through. */
static mp_status output_store(float *x, size_t n, fmt_id f)
{
	return f == FMT_FP32 ? MP_OK : round_rne(x, n, f);
}

/* Rounds the residual stream x (B,t,C) to its storage format after write
 * number `site` of the pass (0: embeddings, 1 + 2l: attention add of layer
 * l, 2 + 2l: MLP add), so stochastic rounding never reuses random bits
 * within a step or across steps. */
static mp_status resid_store(gpt_model *m, const gpt_numerics *nx, float *x, size_t site)
{
	if (pol_of(nx) == NULL || nx->pol->resid_fmt == FMT_FP32)
		return MP_OK;
	size_t n = m->B * m->t * m->config.C;
	uint64_t sites = 2 * (uint64_t)m->config.L + 1;
	fmt_bulk_opts o = {
		.fmt = nx->pol->resid_fmt,
		.mode = nx->pol->resid_mode,
		.seed = nx->seed,
		.index0 = (nx->step * sites + site) * (uint64_t)n,
	};
	return fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, n);
}

/* --- forward --- */

static bool tokens_valid(const int *tok, size_t n, size_t V)
{
	for (size_t i = 0; i < n; i++)
		if (tok[i] < 0 || (size_t)tok[i] >= V)
			return false;
	return true;
}

static void accumulate_exact(double *acc, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		acc[i] += (double)x[i];
}

/* 1 - <Dstored, Dexact> / <Dexact, Dexact>, Dstored = last - first. */
static double lost_fraction(const float *last, const float *first, const double *dexact, size_t n,
                            double *dot_se, double *dot_ee)
{
	double num = 0.0, den = 0.0;
	for (size_t i = 0; i < n; i++) {
		num += ((double)last[i] - (double)first[i]) * dexact[i];
		den += dexact[i] * dexact[i];
	}
	*dot_se = num;
	*dot_ee = den;
	return den == 0.0 ? 0.0 : 1.0 - num / den;
}

mp_status gpt_forward(gpt_model *model, const gpt_numerics *nx, const int *inputs,
                      const int *targets)
{
	gpt_config c = model->config;
	size_t B = model->B, T = model->t, C = c.C, L = c.L, NH = c.NH, V = c.V;
	size_t BT = B * T, BTC = BT * C;
	gpt_params *p = &model->params;
	gpt_acts *a = &model->acts;
	kernel_fmts kf = kernel_fmts_of(nx);
	fmt_id ln_out = pol_of(nx) ? nx->pol->layernorm_fmt : FMT_FP32;
	fmt_id gelu_out = pol_of(nx) ? nx->pol->gelu_fmt : FMT_FP32;

	model->inputs = NULL;
	model->targets = NULL;
	model->mean_loss = NAN;
	if (!tokens_valid(inputs, BT, V) || (targets != NULL && !tokens_valid(targets, BT, V)))
		return MP_EINVAL;

	encoder_forward(a->encoded, inputs, p->wte, p->wpe, B, T, C);
	if (nx != NULL && nx->resid_offset != 0.0f) {
		size_t k = nx->resid_offset_channels > 0 && (size_t)nx->resid_offset_channels < C
		           ? (size_t)nx->resid_offset_channels : C;
		for (size_t i = 0; i < BT; i++)
			for (size_t ch = 0; ch < k; ch++)
				a->encoded[i * C + ch] += nx->resid_offset;
	}
	TRY(resid_store(model, nx, a->encoded, 0));
	memset(a->dexact, 0, BTC * sizeof(double));

	for (size_t l = 0; l < L; l++) {
		const float *resid = l == 0 ? a->encoded : a->residual3 + (l - 1) * BTC;  // (B,T,C)
		float *ln1 = a->ln1 + l * BTC;                  // (B,T,C)
		float *ln1_mean = a->ln1_mean + l * BT;         // (B,T)
		float *ln1_rstd = a->ln1_rstd + l * BT;         // (B,T)
		float *qkv = a->qkv + l * BTC * 3;              // (B,T,3C)
		float *atty = a->atty + l * BTC;                // (B,T,C)
		float *preatt = a->preatt + l * B * NH * T * T; // (B,NH,T,T)
		float *att = a->att + l * B * NH * T * T;       // (B,NH,T,T)
		float *attproj = a->attproj + l * BTC;          // (B,T,C)
		float *resid2 = a->residual2 + l * BTC;         // (B,T,C)
		float *ln2 = a->ln2 + l * BTC;                  // (B,T,C)
		float *ln2_mean = a->ln2_mean + l * BT;         // (B,T)
		float *ln2_rstd = a->ln2_rstd + l * BT;         // (B,T)
		float *fch = a->fch + l * BTC * 4;              // (B,T,4C)
		float *fch_gelu = a->fch_gelu + l * BTC * 4;    // (B,T,4C)
		float *fcproj = a->fcproj + l * BTC;            // (B,T,C)
		float *resid3 = a->residual3 + l * BTC;         // (B,T,C)

		layernorm_forward_q(ln1, ln1_mean, ln1_rstd, resid, p->ln1w + l * C, p->ln1b + l * C, B, T, C,
		                    kf.reduce);
		TRY(output_store(ln1, BTC, ln_out));
		TRY(gemm_forward(model, nx, qkv, ln1, p->qkvw + l * 3 * C * C, p->qkvb + l * 3 * C,
		                 BT, C, 3 * C, (int)(4 * l)));
		attention_forward_q(atty, preatt, att, a->q_att, qkv, B, T, C, NH, kf);
		TRY(gemm_forward(model, nx, attproj, atty, p->attprojw + l * C * C, p->attprojb + l * C,
		                 BT, C, C, (int)(4 * l + 1)));
		accumulate_exact(a->dexact, attproj, BTC);
		residual_forward(resid2, resid, attproj, BTC);
		TRY(resid_store(model, nx, resid2, 1 + 2 * l));

		layernorm_forward_q(ln2, ln2_mean, ln2_rstd, resid2, p->ln2w + l * C, p->ln2b + l * C, B, T, C,
		                    kf.reduce);
		TRY(output_store(ln2, BTC, ln_out));
		TRY(gemm_forward(model, nx, fch, ln2, p->fcw + l * 4 * C * C, p->fcb + l * 4 * C,
		                 BT, C, 4 * C, (int)(4 * l + 2)));
		gelu_forward(fch_gelu, fch, BTC * 4);
		TRY(output_store(fch_gelu, BTC * 4, gelu_out));
		TRY(gemm_forward(model, nx, fcproj, fch_gelu, p->fcprojw + l * C * 4 * C,
		                 p->fcprojb + l * C, BT, 4 * C, C, (int)(4 * l + 3)));
		accumulate_exact(a->dexact, fcproj, BTC);
		residual_forward(resid3, resid2, fcproj, BTC);
		TRY(resid_store(model, nx, resid3, 2 + 2 * l));
	}

	const float *last = a->residual3 + (L - 1) * BTC;   // (B,T,C)
	layernorm_forward_q(a->lnf, a->lnf_mean, a->lnf_rstd, last, p->lnfw, p->lnfb, B, T, C, kf.reduce);
	TRY(output_store(a->lnf, BTC, ln_out));
	TRY(gemm_forward(model, nx, a->logits, a->lnf, p->wte, NULL, BT, C, V, -1));
	model->resid_lost_frac = lost_fraction(last, a->encoded, a->dexact, BTC, &model->resid_dot_se,
	                                       &model->resid_dot_ee);

	model->inputs = inputs;
	if (targets != NULL) {
		model->targets = targets;
		model->mean_loss = crossentropy_softmax_forward_q(a->probs, a->losses, a->logits,
		                                                  targets, B, T, V, kf.reduce);
	}
	return MP_OK;
}

/* --- backward --- */

size_t gpt_douts_floats(gpt_config c, size_t BT)
{
	return c.L * BT * 9 * c.C;
}

size_t gpt_dout_at(gpt_config c, size_t BT, size_t l, size_t k, size_t *oc)
{
	static const size_t width[4] = { 3, 1, 4, 1 }, before[4] = { 0, 3, 4, 8 };   /* in C */
	*oc = width[k] * c.C;
	return (l * 9 + before[k]) * BT * c.C;
}

static void zero(float *x, size_t n)
{
	memset(x, 0, n * sizeof *x);
}

mp_status gpt_backward(gpt_model *model, const gpt_numerics *nx, float loss_scale)
{
	if (model->targets == NULL || model->inputs == NULL)
		return MP_EINVAL;
	gpt_config c = model->config;
	size_t B = model->B, T = model->t, C = c.C, L = c.L, NH = c.NH, V = c.V;
	size_t BT = B * T, BTC = BT * C;
	gpt_params *p = &model->params;
	gpt_params *g = &model->grads;
	gpt_acts *a = &model->acts;
	kernel_fmts kf = kernel_fmts_of(nx);

	/* The objective is loss_scale * mean over the B*T token losses. */
	float dloss = loss_scale / (float)BT;
	zero(a->dlogits, BT * V);
	crossentropy_softmax_backward(a->dlogits, a->probs, model->targets, dloss, B, T, V);
	zero(a->dbuf_c, BTC);
	TRY(gemm_backward(model, nx, a->dbuf_c, g->wte, NULL, a->dlogits, a->lnf, p->wte, BT, C, V, -1));
	const float *last = a->residual3 + (L - 1) * BTC;   // (B,T,C)
	zero(a->dresid, BTC);
	layernorm_backward_q(a->dresid, g->lnfw, g->lnfb, a->dbuf_c, last, p->lnfw,
	                     a->lnf_mean, a->lnf_rstd, B, T, C, kf.reduce);

	/* dresid carries the stream's gradient down through every residual
	 * add, which passes it unchanged to both branches. */
	for (size_t l = L; l-- > 0;) {
		const float *resid = l == 0 ? a->encoded : a->residual3 + (l - 1) * BTC;  // (B,T,C)
		const float *ln1 = a->ln1 + l * BTC;                  // (B,T,C)
		const float *qkv = a->qkv + l * BTC * 3;              // (B,T,3C)
		const float *atty = a->atty + l * BTC;                // (B,T,C)
		const float *att = a->att + l * B * NH * T * T;       // (B,NH,T,T)
		const float *resid2 = a->residual2 + l * BTC;         // (B,T,C)
		const float *ln2 = a->ln2 + l * BTC;                  // (B,T,C)
		const float *fch = a->fch + l * BTC * 4;              // (B,T,4C)
		const float *fch_gelu = a->fch_gelu + l * BTC * 4;    // (B,T,4C)
		float *dgelu = a->dbuf_4c;                            // (B,T,4C)
		float *dfch = a->dbuf_4c2;                            // (B,T,4C)
		float *dln = a->dbuf_c;                               // (B,T,C) dln2, datty, dln1
		float *dqkv = a->dbuf_3c;                             // (B,T,3C)

		zero(dgelu, BTC * 4);
		TRY(gemm_backward(model, nx, dgelu, g->fcprojw + l * C * 4 * C, g->fcprojb + l * C,
		                  a->dresid, fch_gelu, p->fcprojw + l * C * 4 * C, BT, 4 * C, C, (int)(4 * l + 3)));
		zero(dfch, BTC * 4);
		gelu_backward(dfch, fch, dgelu, BTC * 4);
		zero(dln, BTC);
		TRY(gemm_backward(model, nx, dln, g->fcw + l * 4 * C * C, g->fcb + l * 4 * C,
		                  dfch, ln2, p->fcw + l * 4 * C * C, BT, C, 4 * C, (int)(4 * l + 2)));
		layernorm_backward_q(a->dresid, g->ln2w + l * C, g->ln2b + l * C, dln, resid2,
		                     p->ln2w + l * C, a->ln2_mean + l * BT, a->ln2_rstd + l * BT, B, T, C,
		                     kf.reduce);

		zero(dln, BTC);
		TRY(gemm_backward(model, nx, dln, g->attprojw + l * C * C, g->attprojb + l * C,
		                  a->dresid, atty, p->attprojw + l * C * C, BT, C, C, (int)(4 * l + 1)));
		zero(dqkv, BTC * 3);
		attention_backward_q(dqkv, a->dpreatt, a->datt, a->q_att, dln, qkv, att, B, T, C, NH, kf);
		zero(dln, BTC);
		TRY(gemm_backward(model, nx, dln, g->qkvw + l * 3 * C * C, g->qkvb + l * 3 * C,
		                  dqkv, ln1, p->qkvw + l * 3 * C * C, BT, C, 3 * C, (int)(4 * l)));
		layernorm_backward_q(a->dresid, g->ln1w + l * C, g->ln1b + l * C, dln, resid,
		                     p->ln1w + l * C, a->ln1_mean + l * BT, a->ln1_rstd + l * BT, B, T, C,
		                     kf.reduce);
	}
	encoder_backward(g->wte, g->wpe, a->dresid, model->inputs, B, T, C);
	return MP_OK;
}
