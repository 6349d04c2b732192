/* Training the tiny GPT under a precision policy: one trainer per policy,
 * all drawing the same batches from the same initial weights. */
#ifndef MIXPREC_TRAIN_TRAIN_H
#define MIXPREC_TRAIN_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "train/data.h"
#include "train/model.h"
#include "train/policy.h"
#include "train/schedule.h"
#include "util/status.h"

typedef enum {
	TRAIN_DEVICE_CPU,
	TRAIN_DEVICE_CUDA,       /* the GPU (train/backend.h); MP_EUNSUPPORTED without one */
	TRAIN_DEVICE_EMULATED,   /* the GPU trainer's code run on the CPU, for tests */
} train_device;

typedef struct {
	gpt_config model;
	size_t B, t;               /* batch: B sequences of t tokens */
	double lr;                 /* AdamW (the peak rate under a schedule) */
	lr_schedule sched;         /* the lr of each update; zero: lr throughout */
	double beta1, beta2, eps, weight_decay;
	double grad_clip;          /* global norm clip; 0 = off */
	uint64_t seed;             /* weights and batches */
	size_t eval_every;         /* held-out loss every this many steps (0 = never) */
	size_t eval_batches;
	float resid_offset;
	int resid_offset_channels;
	int threads;               /* 1: the two batch halves one after the other; 2: in parallel */
	double init_scale;         /* a dynamic loss scaler's first S; 0: 2^16 as PyTorch's GradScaler */
	size_t scale_growth_interval; /* a dynamic scaler doubles S after this many clean steps; 0: 2000 */
	train_device device;       /* where the passes and the optimiser run */
	const float *init_weights; /* NULL: seed's initialisation; else the num_params weights to start
	                            * from (train --init), borrowed for trainer_create */
	bool grad_noise;           /* measure the gradients' quantization noise (train_stats'
	                            * grad_noise_ratio, wgrad_noise_ratio; NaN when off): it costs a
	                            * copy per cast and, in block recipes, a GEMM per cast Linear */
	bool keep_douts;           /* keep each step's Linear output gradients (trainer_douts); CPU only */
} train_config;

/* The defaults: the default model, B = 16, t = 128, lr 1e-3, betas 0.9 and
 * 0.95, eps 1e-8, weight decay 0, clip 1, eval every 100 steps on 4 batches,
 * 2 threads, a constant lr without warmup.
 *
 * A batch is always split into two halves, each with its own model copy and
 * activations, whose gradients are summed in a fixed order: the results are
 * the same bits whether the halves run on one thread or two. OpenBLAS then
 * runs single-threaded inside each half (set it so: openblas_set_num_threads
 * (1)); two independent workers keep both cores busy with no spin-waiting. */
train_config train_config_default(void);

/* One step's record: the train --csv columns. */
typedef struct {
	size_t step;
	double loss;
	double val_loss;           /* NaN on steps without an evaluation */
	double grad_norm;          /* of the unscaled gradient, before clipping */
	double loss_scale;
	bool skipped;              /* inf/NaN in the gradients: no update */
	double underflow_frac;     /* nonzero gradients flushed to zero by grad_fmt */
	double lost_update_frac;   /* nonzero updates that left the stored weight unchanged */
	double resid_lost_frac;
	double ms;
	double overflow_frac;      /* elements the fp8 / fp4 casts saturated or made NaN; NaN for a
	                            * policy without fp8 scaling and on a step past its bf16-from */
	double cast_underflow_frac; /* nonzero elements those casts made 0; NaN likewise */
	double grad_noise_ratio;   /* the output gradients cast over their quantization noise,
	                            * ||G|| / ||Q(G) - G|| (train/gradnoise.h); NaN likewise */
	double wgrad_noise_ratio;  /* the cast Linears' weight gradients over their quantization
	                            * noise, ||dW|| / ||dW_q - dW||; NaN likewise and for the
	                            * per-tensor recipes */
} train_stats;

/* Bytes each class of state takes under the policy (element width of its
 * format times the count; the emulation itself holds them as fp32), and the
 * activation buffer as allocated here. */
typedef struct {
	size_t master_weights, working_weights, gradients, grad_accum, optim_state, activations;
} train_memory;

typedef struct trainer trainer;

/* Whether policy p may train with cfg's model shape, device and residual
 * offset: every rule that joins a policy to the rest of a run (fp8 scaling
 * and the emulated accumulator on the CPU only, the accumulator for a
 * low-precision GEMM only, bf16-last within the layers, the offset within
 * the residual format). MP_OK, or MP_EUNSUPPORTED (the device cannot run
 * p) or MP_EINVAL, with err naming the option that conflicts, as the train
 * command's options spell it ("--bf16-last: policy nvfp4 leaves ..."). */
mp_status policy_check(const train_policy *p, const train_config *cfg, char *err, size_t errlen);

/* What p does with cfg that is allowed but likely not meant (bf16-last
 * as many as the layers: nothing cast), as a note into buf; false (buf
 * untouched) when there is nothing to say. */
bool policy_check_note(const train_policy *p, const train_config *cfg, char *buf, size_t n);

/* Errors. trainer_create, which has no trainer yet, writes the sentence of
 * its failure into the caller's err (errlen bytes; err may be NULL when
 * errlen is 0). A trainer's own calls that can fail (trainer_step,
 * trainer_eval, trainer_sync) return a status (trainer_eval NaN) and keep
 * the sentence in the trainer, as SQLite's sqlite3_errmsg does: the callers
 * are loops over many steps that report once, at the failure, so one place
 * per trainer serves them better than a buffer at every call. */

/* A trainer for policy p on corpus c (borrowed). MP_EINVAL for a bad shape
 * or what policy_check refuses (MP_EUNSUPPORTED there for the device; err
 * then holds policy_check's message, naming the option), MP_ENOMEM when it
 * does not fit. With --device cuda (cfg->device), MP_EUNSUPPORTED when
 * there is no usable GPU and the device's own sentence (the memory a shape
 * needs, a CUDA error) for its failures. Otherwise err gets the status's
 * text. */
mp_status trainer_create(trainer **out, const train_config *cfg, const train_policy *p, const corpus *c, char *err,
                         size_t errlen);
void trainer_free(trainer *t);

/* Why t's last failing call failed: the device's own sentence on a GPU,
 * else mp_status_message of the status it returned. The text lives in t
 * (never static, never shared between trainers) until the next failure or
 * trainer_free; "" before any failure. */
const char *trainer_error(const trainer *t);

/* With --device cuda the whole batch is one pass on the GPU, not two
 * halves; threads is ignored.
 *
 * One optimisation step (batch number = steps done so far); fills *s. On
 * failure, trainer_error says why. */
mp_status trainer_step(trainer *t, train_stats *s);

/* Mean held-out loss over cfg->eval_batches batches; NaN when the device
 * fails (trainer_error says why). */
double trainer_eval(trainer *t);

const train_policy *trainer_policy(const trainer *t);
/* Steps done so far (the next step's number), counting skipped ones. */
size_t trainer_steps_done(const trainer *t);

/* With Adam's v in a low-precision format (optim_fmt not fp32): the mean
 * over parameters of v as stored over the same EMA kept in fp32 (1: v is
 * where it should be; a v that stopped moving drifts away from 1), after
 * the last update. NaN for fp32 state, before the first update, and on a
 * GPU (which keeps no reference). */
double trainer_v_ratio(const trainer *t);

/* The per-tensor fp8 scaling state (train/fp8scale.h: each quantized
 * tensor's last-step statistics and running scales); NULL for a policy
 * without it. */
struct fp8_state;
const struct fp8_state *trainer_fp8(const trainer *t);
/* On a GPU: copies the weights, the gradients of the last step and their raw
 * form back to the host, for trainer_model and trainer_raw_grads; MP_EIO
 * (trainer_error says why) when the device fails. Nothing to do (MP_OK)
 * on the CPU. */
mp_status trainer_sync(trainer *t);

/* The first half's model: its params are the weights, its grads the summed
 * gradients of the last step. On a GPU, as of the last trainer_sync (the
 * initial weights before one; the model's activations are not the run's). */
const gpt_model *trainer_model(const trainer *t);
train_memory trainer_memory(const trainer *t);

/* The gradients of the last step as the backward pass produced them, before
 * rounding and unscaling (still multiplied by the loss scale), for
 * histograms; n gets the count. On a GPU, as of the last trainer_sync. */
const float *trainer_raw_grads(const trainer *t, size_t *n);

/* With cfg->keep_douts on the CPU: batch half h's (0 or 1) output
 * gradients of every block Linear in the last step's backward pass (the
 * layout of model.h's gpt_dout_at, BT = *rows tokens), scaled by the loss
 * scale as the casts see them. NULL otherwise, or for a half the batch
 * does not have (B = 1), or before the first step. */
const float *trainer_douts(const trainer *t, int h, size_t *rows);

#endif
