/* The interface every training backend implements. train.c keeps what does
 * not depend on where the arithmetic runs (batches, the loss scaler,
 * clipping, Adam's bias corrections, the per-step record, evaluation) and
 * calls a backend for the passes and the optimiser's two phases.
 *
 * Three implement it, chosen by train_device (train_backend_for):
 *   TRAIN_DEVICE_CPU       train/backend_cpu.c: two batch halves, OpenBLAS;
 *   TRAIN_DEVICE_CUDA      gpu/gpu_trainer.cu: the whole batch on the GPU
 *                          (a build without CUDA: create says MP_EUNSUPPORTED);
 *   TRAIN_DEVICE_EMULATED  gpu/gpu_trainer_host.c: the GPU trainer's code
 *                          run on the CPU, for the tests.
 * train/ declares the tables; gpu/ defines the two GPU ones, so train/
 * includes nothing from gpu/. */
#ifndef MIXPREC_TRAIN_BACKEND_H
#define MIXPREC_TRAIN_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "train/model.h"
#include "train/train.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The (P) arrays a backend copies back to the host. */
typedef enum {
	TRAIN_ARRAY_WEIGHTS,     /* the weights (in the policy's weight format) */
	TRAIN_ARRAY_GRADS,       /* the gradients as the optimiser took them: rounded, unscaled */
	TRAIN_ARRAY_RAW_GRADS,   /* the gradients as the backward pass made them: scaled, before rounding */
} train_array;

/* The (P) arrays of the run state (train/run_state.h) beside the weights. */
typedef enum {
	TRAIN_STATE_WEIGHTS,   /* the weights, in the policy's weight format */
	TRAIN_STATE_M,         /* Adam's moments, in optim_fmt */
	TRAIN_STATE_V,
	TRAIN_STATE_VREF,      /* v in fp32 beside a low-precision v (trainer_v_ratio) */
	TRAIN_STATE_COMP,      /* the Kahan compensation, in the weight format */
} train_state_array;

typedef struct {
	const char *name;
	/* A state for cfg->model at batch (cfg->B, cfg->t) under p, both
	 * borrowed (they outlive the state), starting from the P weights params
	 * (already in the policy's weight format); gradients, moments and
	 * compensation zero. MP_EINVAL for a shape the backend cannot run. On
	 * failure a backend with a sentence to say (the device's own) writes it
	 * into err (errlen bytes); otherwise it leaves err untouched and the
	 * status says all. */
	mp_status (*create)(void **out, const train_config *cfg, const train_policy *p, const float *params, size_t P,
	                    char *err, size_t errlen);
	void (*free)(void *s);
	/* Bytes of the activation allocations. */
	size_t (*acts_bytes)(const void *s);
	/* Forward over the (B,t) tokens; with targets the mean loss into *loss
	 * (else NaN), and the two sums behind resid_lost_frac. step numbers the
	 * residual stream's SR draws. MP_EINVAL for a token outside [0, V). */
	mp_status (*forward)(void *s, const int *inputs, const int *targets, uint64_t step, double *loss,
	                     double *dot_se, double *dot_ee);
	/* Gradients of loss_scale * mean loss of the last forward (which had
	 * targets), overwriting the previous ones. */
	mp_status (*backward)(void *s, float loss_scale);
	/* Phase A: the raw copy, rounding to the gradient and accumulation
	 * formats (counting flushes and inf/NaN), unscaling, squared norm. */
	mp_status (*grads)(void *s, double inv_scale, size_t *nonzero, size_t *flushed, bool *found_inf,
	                   double *norm2);
	/* Phase B: AdamW update number adam_t (1-based) with clip factor and
	 * bias corrections c1, c2; counts nonzero and lost updates. */
	mp_status (*update)(void *s, double clip, double c1, double c2, uint64_t adam_t, size_t *nonzero,
	                    size_t *lost);
	/* Copies one (P) array to host. */
	mp_status (*read)(void *s, train_array which, float *host);
	/* The backend's own host model (params: the weights; grads: the last
	 * step's gradients) and raw gradients, current after every step; NULL
	 * where the state lives on a device and only read() reaches it. */
	gpt_model *(*host_model)(void *s);
	const float *(*host_raw_grads)(const void *s);
	/* With cfg->keep_douts: half h's Linear output gradients of the last
	 * backward pass (train.h's trainer_douts), its token count in *rows;
	 * NULL where the backend keeps none. */
	const float *(*host_douts)(const void *s, int h, size_t *rows);
	/* With a low-precision Adam v: the last update's mean of v over an fp32
	 * EMA of the same squared gradients (trainer_v_ratio); NULL where the
	 * backend keeps no such reference. */
	double (*v_ratio)(const void *s);
	/* Whether the state keeps array `which` (VREF and COMP only under some
	 * policies), and its copy to or from the host; writing the weights also
	 * refreshes what is derived from them (a working copy in the GEMM
	 * format). NULL where a backend cannot export or import its state: the
	 * run state then says MP_EUNSUPPORTED. */
	bool (*state_has)(const void *s, train_state_array which);
	mp_status (*state_read)(void *s, train_state_array which, float *host);
	mp_status (*state_write)(void *s, train_state_array which, const float *host);
	/* The per-tensor fp8 scaling state (train/fp8scale.h) of a policy that
	 * has one; NULL (or no operation) otherwise. Only the CPU backend runs
	 * such policies. */
	struct fp8_state *(*fp8)(void *s);
	/* After an operation on s failed: writes the device's own sentence for
	 * that failure into err (errlen bytes) and returns true; false when the
	 * status says all. NULL where it always does (the CPU). */
	bool (*error)(const void *s, char *err, size_t errlen);
} train_backend;

extern const train_backend train_backend_cpu;   /* train/backend_cpu.c */
extern const train_backend gpu_trainer_cuda;    /* gpu/gpu_trainer_cuda.c, or gpu/gpu_none.c */
extern const train_backend gpu_trainer_host;    /* gpu/gpu_trainer_host.c */

/* The backend of a device; NULL for a value outside train_device. */
const train_backend *train_backend_for(train_device d);

#ifdef __cplusplus
}
#endif

#endif
