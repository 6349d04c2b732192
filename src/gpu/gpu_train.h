/* The GPU trainer's backend interface: train.c drives training with
 * --device cuda through this table (forward, backward, the optimiser's two
 * phases), keeping the loss scaler, clipping and the per-step record in one
 * place for both devices.
 *
 * Two tables implement it from one source (gpu/gt_impl.h with the kernel
 * bodies of gpu/gt_kernels.h): gt_backend_cuda on the GPU (gpu_train.cu;
 * in a build without CUDA its create returns MP_EUNSUPPORTED), and
 * gt_backend_host, the same passes and kernel bodies run on the CPU with
 * sgemm for cuBLAS, which the tests use to check the GPU trainer's code on
 * machines without a GPU.
 *
 * The whole batch is one pass (the CPU trainer splits it into two halves
 * for its two threads); the statistics are the CPU trainer's, except that
 * underflow_frac counts the flushes of one pass where the CPU rounds each
 * half-batch's (smaller) gradients. */
#ifndef MIXPREC_GPU_GPU_TRAIN_H
#define MIXPREC_GPU_GPU_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "train/train.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest head size (channels / heads) the GPU kernels take: they
 * keep a head's row in a local array. create returns MP_EINVAL above it. */
#define GPU_TRAIN_HEAD_MAX 128

typedef struct {
	/* The model of cfg->model for batches (cfg->B, cfg->t) under policy p,
	 * starting from the P weights params (already in the policy's weight
	 * format); gradients, moments and compensation zero. */
	mp_status (*create)(void **out, const train_config *cfg, const train_policy *p, const float *params, size_t P);
	void (*free)(void *s);
	/* Bytes of the activation allocation. */
	size_t (*acts_bytes)(const void *s);
	/* Forward over (B,t) tokens; with targets the mean loss into *loss
	 * (else NaN). The dot products behind resid_lost_frac. step numbers the
	 * residual stream's SR draws. MP_EINVAL for a token outside [0, V). */
	mp_status (*forward)(void *s, const int *inputs, const int *targets, uint64_t step, double *loss,
	                     double *dot_se, double *dot_ee);
	/* Gradients of loss_scale * mean loss of the last forward (which had
	 * targets), overwriting the previous ones. */
	mp_status (*backward)(void *s, float loss_scale);
	/* train.c's phase A: raw copy, rounding to the gradient and accumulation
	 * formats (counting flushes and inf/NaN), unscaling, squared norm. */
	mp_status (*grads)(void *s, double inv_scale, size_t *nonzero, size_t *flushed, bool *found_inf,
	                   double *norm2);
	/* Phase B: AdamW update number adam_t (1-based) with clip factor and
	 * bias corrections; counts nonzero and lost updates. */
	mp_status (*update)(void *s, double clip, double c1, double c2, uint64_t adam_t, size_t *nonzero,
	                    size_t *lost);
	/* Copies (P) floats to the host: 0 weights, 1 gradients as the
	 * optimiser took them, 2 raw gradients (scaled, before rounding). */
	mp_status (*read)(void *s, int which, float *host);
} gt_backend;

extern const gt_backend gt_backend_cuda;
extern const gt_backend gt_backend_host;

/* Every kernel body run on the GPU and on the host (the same code) over
 * random inputs at a small odd shape; emit gets each comparison: err is the
 * largest difference over the largest magnitude (inf: patterns differ where
 * tol is 0, i.e. where both sides must give the same bits), tol its bound
 * (looser where expf/logf enter). MP_EUNSUPPORTED without a usable GPU. */
typedef void (*gt_kernel_emit)(void *ctx, const char *kernel, double err, double tol);
mp_status gpu_train_kernel_check(gt_kernel_emit emit, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
