/* The tiny GPT: a pre-LayerNorm GPT-2 layout with a tied output embedding
 * (logits = lnf(x) @ wte^T), character level by default.
 *
 * Parameters, gradients and activations each live in one contiguous
 * allocation with named views into it, so their byte counts are exact and
 * cheap to report. The optimiser is not here: a trainer reads params and
 * grads through the views (or the flat arrays) and updates them itself. */
#ifndef MIXPREC_TRAIN_MODEL_H
#define MIXPREC_TRAIN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "fmt/round.h"
#include "train/policy.h"
#include "util/status.h"

typedef struct {
	size_t V;    /* vocabulary size */
	size_t T;    /* maximum context length */
	size_t C;    /* channels */
	size_t L;    /* layers */
	size_t NH;   /* heads; must divide C */
} gpt_config;

/* V=128 (bytes below 128), T=128, C=128, L=4, NH=4. */
gpt_config gpt_config_default(void);

/* The largest shape train accepts (--layers, --heads, --context,
 * --channels), and the largest vocabulary (a token is one byte); the
 * checkpoint reader refuses a file beyond them. */
#define GPT_MAX_LAYERS 64
#define GPT_MAX_HEADS 64
#define GPT_MAX_CONTEXT 4096
#define GPT_MAX_CHANNELS 4096
#define GPT_MAX_VOCAB 256

#define GPT_NUM_PARAM_TENSORS 16

/* Element counts of the 16 parameter tensors of config c, in gpt_params
 * order (the order of the parameter buffer). */
void gpt_param_sizes(size_t sizes[GPT_NUM_PARAM_TENSORS], gpt_config c);

/* Views of one parameter (or gradient) buffer, in storage order. */
typedef struct {
	float *wte;       // (V,C)
	float *wpe;       // (T,C)
	float *ln1w;      // (L,C)
	float *ln1b;      // (L,C)
	float *qkvw;      // (L,3C,C)
	float *qkvb;      // (L,3C)
	float *attprojw;  // (L,C,C)
	float *attprojb;  // (L,C)
	float *ln2w;      // (L,C)
	float *ln2b;      // (L,C)
	float *fcw;       // (L,4C,C)
	float *fcb;       // (L,4C)
	float *fcprojw;   // (L,C,4C)
	float *fcprojb;   // (L,C)
	float *lnfw;      // (C)
	float *lnfb;      // (C)
} gpt_params;

/* Views of the activation buffer for a batch of B sequences of length t
 * (written T below). The fp64 accumulator comes first, so it is aligned. */
typedef struct {
	double *dexact;     // (B,T,C) block outputs summed in fp64 (resid_lost_frac)
	float *encoded;     // (B,T,C) initial residual stream, as stored
	float *ln1;         // (L,B,T,C)
	float *ln1_mean;    // (L,B,T)
	float *ln1_rstd;    // (L,B,T)
	float *qkv;         // (L,B,T,3C)
	float *atty;        // (L,B,T,C)
	float *preatt;      // (L,B,NH,T,T)
	float *att;         // (L,B,NH,T,T)
	float *attproj;     // (L,B,T,C)
	float *residual2;   // (L,B,T,C)
	float *ln2;         // (L,B,T,C)
	float *ln2_mean;    // (L,B,T)
	float *ln2_rstd;    // (L,B,T)
	float *fch;         // (L,B,T,4C)
	float *fch_gelu;    // (L,B,T,4C)
	float *fcproj;      // (L,B,T,C)
	float *residual3;   // (L,B,T,C)
	float *lnf;         // (B,T,C)
	float *lnf_mean;    // (B,T)
	float *lnf_rstd;    // (B,T)
	float *logits;      // (B,T,V)
	float *probs;       // (B,T,V)
	float *losses;      // (B,T)
	/* backward scratch, reused by every layer */
	float *dresid;      // (B,T,C) gradient of the residual stream
	float *dbuf_c;      // (B,T,C)
	float *dbuf_3c;     // (B,T,3C)
	float *dbuf_4c;     // (B,T,4C)
	float *dbuf_4c2;    // (B,T,4C)
	float *dlogits;     // (B,T,V)
	float *dpreatt;     // (T,T)
	float *datt;        // (T,T)
	/* low-precision GEMM emulation: rounded operand copies and products */
	float *q_act;       // (B,T,max(4C,V)) dout operand (backward)
	float *q_w;         // (max(V,4C)*C) weight operand
	float *q_att;       // (attention_scratch_floats) attention operands and products
} gpt_acts;

/* Number-format emulation for one forward/backward pass; data, not code
 * paths. NULL everywhere means plain fp32. */
typedef struct {
	/* NULL (every part fp32), or the policy whose formats the pass emulates:
	 * gemm_fmt (both matmul operands and the output rounded to it, RNE; the
	 * Linear GEMMs summed by train/accum.c when policy_accum_emulated),
	 * reduce_fmt (softmax, LayerNorm and cross-entropy sums, RNE) and
	 * resid_fmt with resid_mode (the stored residual stream) */
	const train_policy *pol;
	const float *gemm_weights; /* NULL, or every parameter already rounded to gemm_fmt (the
	                            * params' layout): a working copy made once per update */
	uint64_t seed;           /* SR seed */
	uint64_t step;           /* SR: distinct per step so the random bits never repeat */
	/* NULL, or the per-tensor fp8 scaling of the Linear GEMMs' operands
	 * (train/fp8scale.h): weight and input cast in the forward, the output
	 * gradient in the backward, by batch half fp8_half; the outputs then
	 * rounded to gemm_fmt when it is not fp32 */
	struct fp8_state *fp8;
	int fp8_half;
	float resid_offset;      /* added to the stream after the embeddings */
	int resid_offset_channels; /* first channels that get the offset; 0 = all C */
	/* NULL, or gpt_douts_floats floats: the backward pass copies each
	 * block Linear's output gradient there (gpt_dout_at), as it left the
	 * layer above, before any cast (the train --probe's tensors) */
	float *douts;
} gpt_numerics;

/* The floats gpt_numerics.douts takes for a pass over BT tokens: the
 * output gradients (BT, OC) of every block's four Linears, OC = 3C, C, 4C
 * and C (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj). */
size_t gpt_douts_floats(gpt_config c, size_t BT);

/* Where block l's Linear k (0..3, in that order) has its output gradient
 * in douts; *oc gets its OC. */
size_t gpt_dout_at(gpt_config c, size_t BT, size_t l, size_t k, size_t *oc);

typedef struct {
	size_t params, grads, acts;   /* bytes of each allocation */
} gpt_memory;

typedef struct {
	gpt_config config;
	size_t B, t;                  /* batch shape the activations are sized for */

	float *params_memory;         /* every parameter, in gpt_params order */
	size_t num_params;
	size_t param_sizes[GPT_NUM_PARAM_TENSORS];
	gpt_params params;

	float *grads_memory;          /* same layout as params_memory */
	gpt_params grads;

	void *acts_memory;
	size_t acts_bytes;
	gpt_acts acts;

	const int *inputs;            /* (B,t) of the last forward, borrowed */
	const int *targets;           /* (B,t) or NULL, borrowed */
	float mean_loss;              /* NAN after a forward without targets */
	double resid_lost_frac;       /* see doc/DESIGN.md; 0 when the exact change is 0 */
	double resid_dot_se;          /* <Dstored, Dexact> of the last forward */
	double resid_dot_ee;          /* <Dexact, Dexact> (sums, so batches can be combined) */
	float *q_x;                   /* NULL, or (B,t,4C) scratch for a weight-gradient GEMM's input in
	                               * a format of its own (wgrad=x:F), allocated at first use */
} gpt_model;

/* Allocates the three buffers for batches of B sequences of length t <= T and
 * initialises parameters GPT-2 style (normal, std 0.02; residual projections
 * 0.02/sqrt(2L); biases 0; LayerNorm gains 1), deterministically from seed;
 * gradients start at zero. MP_EINVAL for a bad shape, MP_ENOMEM (and nothing
 * left allocated) when out of memory. */
mp_status gpt_init(gpt_model *model, gpt_config config, size_t B, size_t t, uint64_t seed);

/* Byte counts of the parameter, gradient and activation allocations. */
gpt_memory gpt_memory_bytes(const gpt_model *model);

/* Forward pass over inputs (B,t); with targets (B,t) also the mean loss
 * (model->mean_loss), else mean_loss = NAN. Both arrays are borrowed until
 * the next forward (the backward reads them). Sets resid_lost_frac.
 * MP_EINVAL for a token outside [0, V); MP_EUNSUPPORTED when a numerics
 * format or mode cannot be applied. nx may be NULL (plain fp32). */
mp_status gpt_forward(gpt_model *model, const gpt_numerics *nx, const int *inputs,
                      const int *targets);

/* Sets every gradient to zero. */
void gpt_zero_grad(gpt_model *model);

/* Accumulates (+=) into model->grads the gradient of loss_scale * mean loss
 * of the last forward, which must have had targets (else MP_EINVAL). Pass
 * the same numerics as to that forward. */
mp_status gpt_backward(gpt_model *model, const gpt_numerics *nx, float loss_scale);

/* Frees the buffers; the model may be passed to gpt_init again. NULL is fine. */
void gpt_free(gpt_model *model);

#endif
