/* The Linear layers' GEMMs of the tiny GPT under a policy's numerics
 * (model_gemm.c), for model.c's forward and backward passes only. */
#ifndef MIXPREC_TRAIN_MODEL_GEMM_H
#define MIXPREC_TRAIN_MODEL_GEMM_H

#include "train/model.h"

/* The policy nx emulates; NULL when every part is fp32. */
static inline const train_policy *pol_of(const gpt_numerics *nx)
{
	return nx != NULL ? nx->pol : NULL;
}

/* Rounds x in place to the nearest values of fmt (ties to even). */
mp_status round_rne(float *x, size_t n, fmt_id fmt);

/* out (BT,OC) = inp (BT,C) @ w (OC,C)^T + bias for Linear number lin
 * (block l's k-th: 4l + k; -1 the tied head), its operands and output in
 * the policy's formats; inp may be rounded in place (model_gemm.c says
 * when). */
mp_status gemm_forward(gpt_model *m, const gpt_numerics *nx, float *out, float *inp, const float *w,
                       const float *bias, size_t BT, size_t C, size_t OC, int lin);

/* dinp (BT,C) += dout @ w, dweight (OC,C) += dout^T @ inp and dbias (OC)
 * += the column sums of dout, for the same Linear after gemm_forward; dinp
 * zero on entry. */
mp_status gemm_backward(gpt_model *m, const gpt_numerics *nx, float *dinp, float *dweight, float *dbias,
                        const float *dout, const float *inp, const float *w, size_t BT, size_t C, size_t OC,
                        int lin);

#endif
