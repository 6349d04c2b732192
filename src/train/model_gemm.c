/* The Linear layers' GEMMs under a policy's number formats: operands
 * rounded (or cast with fp8/fp4 scales), products summed in fp32 or in an
 * emulated accumulator, outputs rounded; for model.c's passes. */
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "fmt/flip.h"
#include "train/accum.h"
#include "train/fp8scale.h"
#include "train/layers.h"
#include "train/model_gemm.h"
#include "util/rng.h"

#define TRY(expr)                               \
	do {                                    \
		mp_status st_ = (expr);         \
		if (st_ != MP_OK)               \
			return st_;             \
	} while (0)

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

/* Rounds x in place to the nearest values of fmt (ties to even). */
mp_status round_rne(float *x, size_t n, fmt_id fmt)
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
		if (fmt != FMT_FP32)
			TRY(round_rne(dst + i, len, fmt));
	}
	return MP_OK;
}

/* --- the operands of the unscaled GEMMs (policy_operand_fmt, flips) --- */

/* Whether the unscaled GEMMs are emulated: a low GEMM format, an operand
 * format other than fp32 (fwd=, dgrad=, wgrad=) or bit flips. Else they are
 * BLAS's fp32 products of the tensors as they are. */
static bool gemm_emulated(const gpt_numerics *nx)
{
	const train_policy *p = pol_of(nx);
	if (p == NULL)
		return false;
	if (p->gemm_fmt != FMT_FP32 || p->flip_class != POLICY_FLIP_NONE)
		return true;
	for (int k = 0; k < GEMM_OPERANDS; k++)
		if (policy_operand_fmt(p, (gemm_operand)k) != FMT_FP32)
			return true;
	return false;
}

static fmt_id op_fmt(const gpt_numerics *nx, gemm_operand k)
{
	return policy_operand_fmt(nx->pol, k);
}

/* Whether the policy's flips strike operand k. */
static bool strikes(const gpt_numerics *nx, gemm_operand k)
{
	static const policy_flip class_of[GEMM_OPERANDS] = {
		[GEMM_FWD_X] = POLICY_FLIP_ACTIVATIONS, [GEMM_FWD_W] = POLICY_FLIP_WEIGHTS,
		[GEMM_DGRAD_DY] = POLICY_FLIP_GRADS, [GEMM_DGRAD_W] = POLICY_FLIP_WEIGHTS,
		[GEMM_WGRAD_X] = POLICY_FLIP_ACTIVATIONS, [GEMM_WGRAD_DY] = POLICY_FLIP_GRADS,
	};
	const train_policy *p = nx->pol;
	return p->flip_class != POLICY_FLIP_NONE && class_of[k] == p->flip_class && p->flip_p > 0;
}

/* x[0..n), operand k of Linear lin rounded to its format, struck by the
 * policy's flips: a stream of its own per step, batch half (nx->seed),
 * Linear and operand, element i at index i. */
static void operand_flip(const gpt_numerics *nx, int lin, gemm_operand k, float *x, size_t n)
{
	if (!strikes(nx, k))
		return;
	uint64_t which = (nx->step << 24) ^ ((uint64_t)(lin + 1) << 4) ^ (uint64_t)k;
	flip_opts o = { .p = nx->pol->flip_p, .where = nx->pol->flip_bits,
	                .seed = rng_mix64(nx->seed ^ 0xf11b5ull ^ rng_mix64(which)) };
	(void)flip_floats(op_fmt(nx, k), &o, 0, x, n);
}

/* dst = src (n floats) as operand k of Linear lin: rounded, then flipped. */
static mp_status operand_copy(const gpt_numerics *nx, int lin, gemm_operand k, float *dst, const float *src,
                              size_t n)
{
	TRY(copy_rounded(dst, src, n, op_fmt(nx, k)));
	operand_flip(nx, lin, k, dst, n);
	return MP_OK;
}

/* The weight w (n elements of the params) as operand k of Linear lin: w
 * itself in fp32, the caller's working copy when that is in the format
 * (gemm_fmt) and nothing is flipped, else rounded (and flipped) into
 * scratch now. */
static mp_status weight_operand(gpt_model *m, const gpt_numerics *nx, const float *w, size_t n, int lin,
                                gemm_operand k, const float **wq)
{
	fmt_id f = op_fmt(nx, k);
	if (!strikes(nx, k) && f == FMT_FP32) {
		*wq = w;
		return MP_OK;
	}
	if (!strikes(nx, k) && f == nx->pol->gemm_fmt && nx->gemm_weights != NULL) {
		*wq = nx->gemm_weights + (w - m->params_memory);
		return MP_OK;
	}
	*wq = m->acts.q_w;
	return operand_copy(nx, lin, k, m->acts.q_w, w, n);
}

/* Whether the forward rounds its input in place, for the weight-gradient
 * GEMM to read as it is: when both take it in one format. */
static bool input_in_place(const gpt_numerics *nx)
{
	return op_fmt(nx, GEMM_FWD_X) == op_fmt(nx, GEMM_WGRAD_X);
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
mp_status gemm_forward(gpt_model *m, const gpt_numerics *nx, float *out,
                              float *inp, const float *w, const float *bias,
                              size_t BT, size_t C, size_t OC, int lin)
{
	if (scaled(nx, lin))
		return gemm_forward_scaled(m, nx, out, inp, w, bias, BT, C, OC, (size_t)lin);
	if (!gemm_emulated(nx)) {
		matmul_forward(out, inp, w, bias, 1, BT, C, OC);
		return MP_OK;
	}
	float *xq = inp;
	if (input_in_place(nx)) {
		if (op_fmt(nx, GEMM_FWD_X) != FMT_FP32)
			TRY(round_rne(inp, BT * C, op_fmt(nx, GEMM_FWD_X)));
		operand_flip(nx, lin, GEMM_FWD_X, inp, BT * C);
	} else {   /* inp stays as computed, for wgrad to round into its own format */
		xq = m->acts.q_act;
		TRY(operand_copy(nx, lin, GEMM_FWD_X, xq, inp, BT * C));
	}
	const float *wq;
	TRY(weight_operand(m, nx, w, OC * C, lin, GEMM_FWD_W, &wq));
	return gemm_forward_core(nx, out, xq, wq, bias, BT, C, OC);
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

/* The input gradient and weight gradient GEMMs of an unscaled Linear:
 * dgrad's dY and W and wgrad's X and dY each in its operand format; one
 * copy of dY (and one product call) when both GEMMs take it in one format,
 * X as gemm_forward left it when that rounded it in place. */
static mp_status gemm_backward_unscaled(gpt_model *m, const gpt_numerics *nx, float *dinp, float *dweight,
                                        const float *dout, const float *inp, const float *w, size_t BT, size_t C,
                                        size_t OC, int lin)
{
	gpt_acts *a = &m->acts;
	const float *wq, *xq = inp;
	TRY(operand_copy(nx, lin, GEMM_DGRAD_DY, a->q_act, dout, BT * OC));
	TRY(weight_operand(m, nx, w, OC * C, lin, GEMM_DGRAD_W, &wq));
	if (dweight != NULL && !input_in_place(nx)) {
		if (m->q_x == NULL && (m->q_x = malloc(m->B * m->t * 4 * m->config.C * sizeof *m->q_x)) == NULL)
			return MP_ENOMEM;
		TRY(operand_copy(nx, lin, GEMM_WGRAD_X, m->q_x, inp, BT * C));
		xq = m->q_x;
	}
	if (op_fmt(nx, GEMM_WGRAD_DY) == op_fmt(nx, GEMM_DGRAD_DY))
		return gemm_products(nx, dinp, dweight, a->q_act, xq, wq, BT, C, OC);
	TRY(gemm_products(nx, dinp, NULL, a->q_act, NULL, wq, BT, C, OC));
	TRY(operand_copy(nx, lin, GEMM_WGRAD_DY, a->q_act, dout, BT * OC));
	return gemm_products(nx, NULL, dweight, a->q_act, xq, NULL, BT, C, OC);
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
mp_status gemm_backward(gpt_model *m, const gpt_numerics *nx, float *dinp,
                               float *dweight, float *dbias, const float *dout,
                               const float *inp, const float *w, size_t BT, size_t C, size_t OC, int lin)
{
	if (nx != NULL && nx->douts != NULL && lin >= 0) {
		size_t oc;
		float *keep = nx->douts + gpt_dout_at(m->config, BT, (size_t)lin / 4, (size_t)lin % 4, &oc);
		memcpy(keep, dout, BT * OC * sizeof *keep);
	}
	bool sc = scaled(nx, lin);
	if (!sc && !gemm_emulated(nx)) {
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
			/* inp was cast in place by gemm_forward */
			TRY(gemm_products(nx, dinp, dweight, a->q_act, inp, wq, BT, C, OC));
		} else {
			TRY(gemm_backward_unscaled(m, nx, dinp, dweight, dout, inp, w, BT, C, OC, lin));
		}
	}
	if (gemm_lowp(nx))
		TRY(round_rne(dinp, BT * C, nx->pol->gemm_fmt));
	if (dbias != NULL)
		matmul_backward(NULL, NULL, dbias, dout, inp, w, 1, BT, C, OC);
	return MP_OK;
}
