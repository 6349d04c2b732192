/* The tiny GPT: allocation, initialisation, forward and backward passes, and
 * the number-format emulation hooks a trainer uses to play precision policies. */
#include "train/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "train/accum.h"
#include "train/fp8scale.h"
#include "train/layers.h"
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
	memset(model, 0, sizeof *model);
}

/* --- number-format emulation --- */

/* The policy nx emulates; NULL when every part is fp32. */
static const train_policy *pol_of(const gpt_numerics *nx)
{
	return nx != NULL ? nx->pol : NULL;
}

static bool gemm_lowp(const gpt_numerics *nx)
{
	return pol_of(nx) != NULL && nx->pol->gemm_fmt != FMT_FP32;
}

/* Whether the Linear GEMMs sum through train/accum.c: a blocked C loop,
 * one dot at a time (no BLAS), for the accumulator experiment only. */
static bool accum_emulated(const gpt_numerics *nx)
{
	return pol_of(nx) != NULL && policy_accum_emulated(nx->pol);
}

static accum_cfg accum_of(const gpt_numerics *nx)
{
	return (accum_cfg){ .bits = nx->pol->accum_bits ? nx->pol->accum_bits : ACCUM_BITS_FP32,
	                    .block = ACCUM_BLOCK_HOPPER, .promote_every = nx->pol->promote_every };
}

/* The formats the attention, LayerNorm and softmax kernels emulate. */
static kernel_fmts kernel_fmts_of(const gpt_numerics *nx)
{
	const train_policy *p = pol_of(nx);
	return (kernel_fmts){ .gemm = p != NULL ? p->gemm_fmt : FMT_FP32,
	                      .reduce = p != NULL ? p->reduce_fmt : FMT_FP32 };
}

/* Rounds x in place to the nearest values of fmt (ties to even). */
static mp_status round_rne(float *x, size_t n, fmt_id fmt)
{
	fmt_bulk_opts o = { .fmt = fmt, .mode = FMT_RNE };
	return fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, n);
}

/* dst = src rounded to fmt, a block at a time so that the rounding finds
 * the copy still in the L1 cache (one pass over memory, not two). */
static mp_status copy_rounded(float *dst, const float *src, size_t n, fmt_id fmt)
{
	enum { BLOCK = 2048 };   /* 8 KiB */
	for (size_t i = 0; i < n; i += BLOCK) {
		size_t len = n - i < BLOCK ? n - i : BLOCK;
		memcpy(dst + i, src + i, len * sizeof *dst);
		TRY(round_rne(dst + i, len, fmt));
	}
	return MP_OK;
}

/* The weight operand w (n elements of the params) rounded to the GEMM
 * format: from the caller's working copy when it has one, else rounded
 * into scratch now. */
static mp_status weight_operand(gpt_model *m, const gpt_numerics *nx, const float *w, size_t n,
                                const float **wq)
{
	if (nx->gemm_weights != NULL) {
		*wq = nx->gemm_weights + (w - m->params_memory);
		return MP_OK;
	}
	*wq = m->acts.q_w;
	return copy_rounded(m->acts.q_w, w, n, nx->pol->gemm_fmt);
}

/* out = inp @ wq^T + bias from operands already rounded, through the
 * emulated accumulator or BLAS, the output rounded to the GEMM format. */
static mp_status gemm_forward_core(const gpt_numerics *nx, float *out, const float *inp, const float *wq,
                                   const float *bias, size_t BT, size_t C, size_t OC)
{
	if (accum_emulated(nx)) {
		accum_cfg c = accum_of(nx);
		TRY(accum_gemm(out, OC, false, inp, C, 1, wq, C, 1, BT, OC, C, &c));
		for (size_t i = 0; bias != NULL && i < BT; i++)
			for (size_t o = 0; o < OC; o++)
				out[i * OC + o] += bias[o];
	} else {
		matmul_forward(out, inp, wq, bias, 1, BT, C, OC);
	}
	return gemm_lowp(nx) ? round_rne(out, BT * OC, nx->pol->gemm_fmt) : MP_OK;
}

/* Whether Linear number lin (block l's k-th: 4l + k; -1 the head) casts its
 * operands with per-tensor fp8 scales. */
static bool scaled(const gpt_numerics *nx, int lin)
{
	return nx != NULL && nx->fp8 != NULL && lin >= 0 && fp8_state_covers(nx->fp8, (size_t)lin / FP8_LINEARS);
}

/* The SR stream of Linear lin's tensor i cast along `along`: bits of its
 * own for every step, tensor, direction and batch half (nx->seed is the
 * half's). */
static uint64_t fp8_seed(const gpt_numerics *nx, size_t i, fp8_along along)
{
	return rng_mix64(nx->seed ^ rng_mix64((nx->step << 20) ^ (i << 1) ^ (uint64_t)along));
}

/* Casts src (NULL: x itself) into x as Linear lin's tensor of role r for a
 * GEMM contracting it `along`, counted in the step's statistics. */
static mp_status fp8_matrix(const gpt_numerics *nx, size_t lin, fp8_role r, fp8_along along, const float *src,
                            float *x, size_t rows, size_t cols)
{
	size_t i = fp8_tensor_index(lin / FP8_LINEARS, lin % FP8_LINEARS, r);
	return fp8_state_cast_and_record(nx->fp8, nx->fp8_half, i, along, fp8_seed(nx, i, along), src, x, rows, cols);
}

/* The same cast made again (the weight in the backward pass, with the
 * forward's scale: the same bits), counted nowhere. */
static mp_status fp8_matrix_again(const gpt_numerics *nx, size_t lin, fp8_role r, fp8_along along,
                                  const float *src, float *x, size_t rows, size_t cols)
{
	size_t i = fp8_tensor_index(lin / FP8_LINEARS, lin % FP8_LINEARS, r);
	return fp8_state_cast_only(nx->fp8, nx->fp8_half, i, along, fp8_seed(nx, i, along), src, x, rows, cols);
}

/* gemm_forward under fp8 scaling, as Transformer Engine's Linear: the
 * weight cast from the fp32 master into scratch; per-tensor, the input cast
 * in place (the backward pass reuses it, as TE saves the fp8 input); block
 * recipes cast a copy and leave inp as it is, for the weight-gradient GEMM
 * to cast again, down its columns, from the high-precision tensor. */
static mp_status gemm_forward_scaled(gpt_model *m, const gpt_numerics *nx, float *out, float *inp, const float *w,
                                     const float *bias, size_t BT, size_t C, size_t OC, size_t lin)
{
	float *wq = m->acts.q_w, *xq = inp;
	if (fp8_state_blocked(nx->fp8) && (xq = fp8_state_scratch(nx->fp8, nx->fp8_half, BT * C)) == NULL)
		return MP_ENOMEM;
	TRY(fp8_matrix(nx, lin, FP8_INPUT, FP8_ALONG_ROWS, inp, xq, BT, C));
	TRY(fp8_matrix(nx, lin, FP8_WEIGHT, FP8_ALONG_ROWS, w, wq, OC, C));
	return gemm_forward_core(nx, out, xq, wq, bias, BT, C, OC);
}

/* out (BT,OC) = inp (BT,C) @ w (OC,C)^T + bias, as a tensor core does it when
 * asked (under fp8 scaling, gemm_forward_scaled): operands rounded to the
 * GEMM format, fp32 accumulation, output rounded. The activation inp is
 * rounded in place: every GEMM input here
 * (ln1, atty, ln2, fch_gelu, lnf) is used by nothing but its GEMM's forward
 * and backward products, so the stored activation is the rounded operand,
 * as autocast saves it, and the backward pass uses it as it is. */
static mp_status gemm_forward(gpt_model *m, const gpt_numerics *nx, float *out,
                              float *inp, const float *w, const float *bias,
                              size_t BT, size_t C, size_t OC, int lin)
{
	if (scaled(nx, lin))
		return gemm_forward_scaled(m, nx, out, inp, w, bias, BT, C, OC, (size_t)lin);
	if (!gemm_lowp(nx)) {
		matmul_forward(out, inp, w, bias, 1, BT, C, OC);
		return MP_OK;
	}
	TRY(round_rne(inp, BT * C, nx->pol->gemm_fmt));
	const float *wq;
	TRY(weight_operand(m, nx, w, OC * C, &wq));
	return gemm_forward_core(nx, out, inp, wq, bias, BT, C, OC);
}

/* dinp (BT,C) += dq (BT,OC) @ wq (OC,C) and dweight (OC,C) += dq^T @ xq
 * (BT,C), either NULL, through the emulated accumulator or BLAS. */
static mp_status gemm_products(const gpt_numerics *nx, float *dinp, float *dweight, const float *dq,
                               const float *xq, const float *wq, size_t BT, size_t C, size_t OC)
{
	if (accum_emulated(nx)) {
		accum_cfg c = accum_of(nx);
		if (dinp != NULL)
			TRY(accum_gemm(dinp, C, true, dq, OC, 1, wq, 1, C, BT, C, OC, &c));
		if (dweight != NULL)
			TRY(accum_gemm(dweight, C, true, dq, 1, OC, xq, 1, C, OC, C, BT, &c));
	} else {
		matmul_backward(dinp, dweight, NULL, dq, xq, wq, 1, BT, C, OC);
	}
	return MP_OK;
}

/* The backward GEMMs of a block recipe: each operand cast along the
 * contraction of the GEMM that reads it, from the high-precision tensor. */
static mp_status gemm_backward_blocked(gpt_model *m, const gpt_numerics *nx, float *dinp, float *dweight,
                                       const float *dout, const float *inp, const float *w, size_t BT, size_t C,
                                       size_t OC, size_t lin)
{
	gpt_acts *a = &m->acts;
	if (dinp != NULL) {   /* over OC: the gradient along its rows, the weight down its columns */
		TRY(fp8_matrix(nx, lin, FP8_GRAD_OUTPUT, FP8_ALONG_ROWS, dout, a->q_act, BT, OC));
		TRY(fp8_matrix(nx, lin, FP8_WEIGHT, FP8_ALONG_COLS, w, a->q_w, OC, C));
		TRY(gemm_products(nx, dinp, NULL, a->q_act, NULL, a->q_w, BT, C, OC));
	}
	if (dweight != NULL) {   /* over the tokens: both down their columns */
		TRY(fp8_matrix(nx, lin, FP8_GRAD_OUTPUT, FP8_ALONG_COLS, dout, a->q_act, BT, OC));
		float *xq = fp8_state_scratch(nx->fp8, nx->fp8_half, BT * C);
		if (xq == NULL)
			return MP_ENOMEM;
		TRY(fp8_matrix(nx, lin, FP8_INPUT, FP8_ALONG_COLS, inp, xq, BT, C));
		if (!fp8_state_noise(nx->fp8))
			return gemm_products(nx, NULL, dweight, a->q_act, xq, NULL, BT, C, OC);
		/* the product's noise against the fp32 one of dout and inp, in q_w
		 * (free once the input gradient is made) */
		float *before = fp8_state_wgrad_scratch(nx->fp8, nx->fp8_half, OC * C);
		if (before == NULL)
			return MP_ENOMEM;
		memcpy(before, dweight, OC * C * sizeof *before);
		TRY(gemm_products(nx, NULL, dweight, a->q_act, xq, NULL, BT, C, OC));
		grad_noise g = { 0 };
		grad_noise_wgrad(&g, before, dweight, a->q_w, dout, inp, BT, C, OC);
		fp8_state_add_wgrad_noise(nx->fp8, nx->fp8_half, fp8_tensor_index(lin / FP8_LINEARS, lin % FP8_LINEARS,
		                                                                   FP8_WEIGHT), &g);
	}
	return MP_OK;
}

/* The backward products of gemm_forward, emulated the same way: operands
 * rounded, fp32 accumulation. The input gradient is rounded to the GEMM
 * format like any output; dinp must be zero on entry (every caller zeroes
 * it), so the product is written there and rounded in place. The weight
 * gradient is left in fp32 and accumulated: the trainer rounds every
 * parameter gradient to the policy's gradient format, and counts what that
 * flushes to zero (underflow_frac), in one place; rounding it here first
 * would flush the GEMM's small gradients where nobody counts them. The bias
 * gradient is a reduction, not a GEMM, and stays in fp32. */
static mp_status gemm_backward(gpt_model *m, const gpt_numerics *nx, float *dinp,
                               float *dweight, float *dbias, const float *dout,
                               const float *inp, const float *w, size_t BT, size_t C, size_t OC, int lin)
{
	if (nx != NULL && nx->douts != NULL && lin >= 0) {
		size_t oc;
		float *keep = nx->douts + gpt_dout_at(m->config, BT, (size_t)lin / 4, (size_t)lin % 4, &oc);
		memcpy(keep, dout, BT * OC * sizeof *keep);
	}
	bool sc = scaled(nx, lin);
	if (!sc && !gemm_lowp(nx)) {
		matmul_backward(dinp, dweight, dbias, dout, inp, w, 1, BT, C, OC);
		return MP_OK;
	}
	gpt_acts *a = &m->acts;
	if (sc && fp8_state_blocked(nx->fp8)) {
		TRY(gemm_backward_blocked(m, nx, dinp, dweight, dout, inp, w, BT, C, OC, (size_t)lin));
	} else {
		const float *wq;
		if (sc) {
			/* the output gradient in its own format and scale; the weight cast
			 * again with the forward's scale (the same bits), not recorded twice */
			TRY(fp8_matrix(nx, (size_t)lin, FP8_GRAD_OUTPUT, FP8_ALONG_ROWS, dout, a->q_act, BT, OC));
			TRY(fp8_matrix_again(nx, (size_t)lin, FP8_WEIGHT, FP8_ALONG_ROWS, w, a->q_w, OC, C));
			wq = a->q_w;
		} else {
			TRY(copy_rounded(a->q_act, dout, BT * OC, nx->pol->gemm_fmt));
			TRY(weight_operand(m, nx, w, OC * C, &wq));
		}
		/* inp was rounded in place by gemm_forward */
		TRY(gemm_products(nx, dinp, dweight, a->q_act, inp, wq, BT, C, OC));
	}
	if (gemm_lowp(nx))
		TRY(round_rne(dinp, BT * C, nx->pol->gemm_fmt));
	if (dbias != NULL)
		matmul_backward(NULL, NULL, dbias, dout, inp, w, 1, BT, C, OC);
	return MP_OK;
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
		TRY(gemm_forward(model, nx, fch, ln2, p->fcw + l * 4 * C * C, p->fcb + l * 4 * C,
		                 BT, C, 4 * C, (int)(4 * l + 2)));
		gelu_forward(fch_gelu, fch, BTC * 4);
		TRY(gemm_forward(model, nx, fcproj, fch_gelu, p->fcprojw + l * C * 4 * C,
		                 p->fcprojb + l * C, BT, 4 * C, C, (int)(4 * l + 3)));
		accumulate_exact(a->dexact, fcproj, BTC);
		residual_forward(resid3, resid2, fcproj, BTC);
		TRY(resid_store(model, nx, resid3, 2 + 2 * l));
	}

	const float *last = a->residual3 + (L - 1) * BTC;   // (B,T,C)
	layernorm_forward_q(a->lnf, a->lnf_mean, a->lnf_rstd, last, p->lnfw, p->lnfb, B, T, C, kf.reduce);
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
