/* A saved model at work: the held-out loss of a text (mixprec eval) and
 * generated text (mixprec sample), both through the training's own fp32
 * forward pass (gpt_forward without numerics). */
#ifndef MIXPREC_CKPT_INFER_H
#define MIXPREC_CKPT_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "train/model.h"
#include "util/status.h"

/* Windows run through the forward pass at once by eval. */
#define INFER_BATCH 8

/* A model for batches of B windows of t tokens (t <= c.T), holding the weights params (c's num_params floats, gpt_params order).
 * MP_EINVAL for a bad shape, MP_ENOMEM. Free with gpt_free. */
mp_status infer_init(gpt_model *m, gpt_config c, const float *params, size_t B, size_t t);

/* Sum of the cross-entropies (nats) of predicting targets from inputs, over
 * nwin windows of m->t tokens each ((nwin, t) arrays), in fp32 per token
 * and summed in double; MP_EINVAL for a token outside the vocabulary. */
mp_status infer_loss_sum(gpt_model *m, const int *inputs, const int *targets, size_t nwin, double *sum);

/* mixprec eval's rule: text split into consecutive windows of m->t tokens
 * from its start, each predicting its next m->t characters (window k:
 * inputs text[k t, k t + t), targets one further on), the last partial one
 * dropped. *loss gets the mean per predicted token, *tokens their count.
 * MP_EINVAL when the text has no whole window (fewer than t + 1 tokens) or
 * a token outside the vocabulary. */
mp_status infer_eval_text(gpt_model *m, const unsigned char *text, size_t n, double *loss, size_t *tokens);

typedef struct {
	size_t tokens;         /* characters to generate */
	double temperature;    /* 0: always the most likely token */
	size_t top_k;          /* draw among the k most likely (0: all) */
	uint64_t seed;
} infer_sample_opts;

/* Generates o->tokens tokens after the np-token prompt (np >= 1; only its
 * last m->t tokens are seen) into out, deterministically from o->seed;
 * the first window of m's batch is used (B = 1 wastes nothing). MP_EINVAL for an empty prompt
 * or a token outside the vocabulary. */
mp_status infer_sample(gpt_model *m, const int *prompt, size_t np, const infer_sample_opts *o, int *out);

#endif
