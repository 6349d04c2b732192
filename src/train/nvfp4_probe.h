/* train --probe nvfp4: what two parts of NVIDIA's NVFP4 recipe buy,
 * measured on a run's own tensors through the recipe's casts
 * (fp8_state_cast_only, the code path the trainer casts with), where the
 * tiny model's loss cannot show it.
 *
 * - 2D weight blocks. The forward GEMM contracts a Linear weight W (OC, C)
 *   over its columns, so it casts W in blocks of 16 along each row; the
 *   input-gradient GEMM contracts it over its rows and casts it in blocks
 *   of 16 down each column (W^T cut along its rows). With 1D blocks the two
 *   casts round W differently: the backward pass differentiates a weight
 *   the forward pass did not use. 16x16 blocks are the same blocks either
 *   way, so the two casts are the same bits. Measured: ||Q_fwd(W) -
 *   Q_bwd(W)||_F / ||W||_F, pooled over the weights (the squares summed
 *   before the ratio), with 1D and with 2D blocks, and the forward cast's
 *   own error ||Q_fwd(W) - W|| / ||W|| (1D) to compare it with.
 * - Stochastic rounding of the output gradients (each Linear's dL/dy, the
 *   tensor the recipe casts with SR, cut along its rows as the
 *   input-gradient GEMM reads it). Cast R times with SR (independent random
 *   bits each time) and once with RNE: the bias ||mean_r Q_sr(g) - g|| /
 *   ||g|| (it shrinks like 1/sqrt(R) where SR is unbiased; what stays is
 *   the saturation of elements past 6 x their block's scale), RNE's
 *   ||Q_rne(g) - g|| / ||g|| (deterministic: its whole error is bias), one
 *   SR draw's own error (root mean square over the draws), and the signed
 *   part along g, <mean Q(g) - g, g> / ||g||^2, for both.
 *
 * Everything is deterministic: the draws' random bits are keyed by the
 * probe's seed, the tensor's key and the draw, and the casts give the same
 * bits on every SIMD path. Depends on train/ and util/; never prints. */
#ifndef MIXPREC_TRAIN_NVFP4_PROBE_H
#define MIXPREC_TRAIN_NVFP4_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "train/train.h"
#include "util/status.h"

/* The largest number of SR draws (train --probe-draws). */
#define NVFP4_PROBE_DRAWS_MAX 4096

typedef struct {
	size_t weights, grads;      /* tensors measured (a gradient: one batch half's) */
	size_t draws;               /* R */
	double w_1d, w_2d;          /* ||Q_fwd(W) - Q_bwd(W)|| / ||W||, 1D and 2D blocks */
	double w_err;               /* ||Q_fwd(W) - W|| / ||W||, 1D blocks */
	double sr_bias, rne_bias;   /* ||mean_r Q_sr(g) - g|| / ||g||, ||Q_rne(g) - g|| / ||g|| */
	double sr_err;              /* sqrt(mean_r ||Q_sr,r(g) - g||^2) / ||g|| */
	double sr_proj, rne_proj;   /* <mean Q(g) - g, g> / ||g||^2 */
} nvfp4_probe_result;

typedef struct nvfp4_probe nvfp4_probe;

/* A probe drawing `draws` SR casts of every gradient (1..NVFP4_PROBE_DRAWS_MAX),
 * its random bits keyed from seed. MP_EINVAL for a bad draws, MP_ENOMEM. */
mp_status nvfp4_probe_create(nvfp4_probe **out, size_t draws, uint64_t seed);
void nvfp4_probe_free(nvfp4_probe *p);

/* Adds the weight w (rows, cols) = (OC, C), row-major, to the weight
 * measures. MP_ENOMEM. */
mp_status nvfp4_probe_weight(nvfp4_probe *p, const float *w, size_t rows, size_t cols);

/* Adds the gradient g (rows, cols) = (tokens, OC) to the gradient
 * measures; key tells its draws' random bits from every other tensor's.
 * MP_ENOMEM. */
mp_status nvfp4_probe_grad(nvfp4_probe *p, const float *g, size_t rows, size_t cols, uint64_t key);

/* The measures over what was added; a ratio over no tensor (or a zero
 * one) is NaN. */
nvfp4_probe_result nvfp4_probe_result_of(const nvfp4_probe *p);

/* The probe of a run: the final weights of the block Linears the policy
 * casts (all the blocks for a policy without fp8 scaling) and the same
 * Linears' output gradients of the last step, each batch half's as cast
 * there. The trainer must have been created with cfg->keep_douts and have
 * run a step (else MP_EINVAL); draws and seed as for nvfp4_probe_create. */
mp_status trainer_probe_nvfp4(const trainer *t, size_t draws, uint64_t seed, nvfp4_probe_result *out);

#endif
