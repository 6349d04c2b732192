/* The GPU trainer against the CPU trainer, for any train_device: shared by
 * test_train (the GPU trainer's code emulated on the CPU, every machine) and
 * tests/gpu/test_gpu (the real device). Plain C, no test framework. */
#ifndef MIXPREC_TESTS_GT_COMPARE_H
#define MIXPREC_TESTS_GT_COMPARE_H

#include "train/train.h"

/* One forward and backward pass on one batch from the same weights. */
typedef struct {
	double loss_cpu, loss_dev;
	double rel[GPT_NUM_PARAM_TENSORS];   /* |g_dev - g_cpu| / |g_cpu| per gradient tensor */
	double worst;                        /* the largest rel */
	int worst_tensor;
} gtc_pass;

/* Small shape: V=128, T=16, C=32, L=2, NH=2; B=4. */
gpt_config gtc_small_model(void);

/* Runs policy (a preset name) on dev and on the CPU's model (gpt_forward and
 * gpt_backward over the whole batch, with the trainer's numerics for step
 * 0) from cfg's weights on batch 0 of c, loss scale 1. */
mp_status gtc_pass_compare(train_device dev, const char *policy, const train_config *cfg, const corpus *c,
                           gtc_pass *out);

/* Name of gradient tensor i, in gpt_params order. */
const char *gtc_tensor_name(int i);

/* steps of training on dev and on the CPU trainer: the largest difference
 * of the per-step losses, and both last losses. */
typedef struct {
	double max_diff, last_cpu, last_dev;
	double max_lost_diff, max_underflow_diff;   /* of lost_update_frac and underflow_frac */
	size_t skipped_cpu, skipped_dev;
} gtc_run;

mp_status gtc_run_compare(train_device dev, const char *policy, const train_config *cfg, const corpus *c,
                          size_t steps, gtc_run *out);

#endif
