/* The GPU trainer against the CPU trainer, for any train_device: shared by
 * test_train (the GPU trainer's code emulated on the CPU, every machine) and
 * tests/gpu/test_gpu (the real device). Plain C, no test framework. */
#ifndef MIXPREC_TESTS_GPU_COMPARE_H
#define MIXPREC_TESTS_GPU_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "train/train.h"

/* The parts compared: the 16 gradient tensors, then the query and key
 * rows of qkvw on their own (at initialisation the attention scores are
 * near 0 and their gradients small beside the value rows'). */
enum { GPU_COMPARE_PARTS = GPT_NUM_PARAM_TENSORS + 2 };

/* One forward and backward pass on one batch from the same weights. */
typedef struct {
	double loss_cpu, loss_dev;
	double rel[GPU_COMPARE_PARTS];               /* |g_dev - g_cpu| / |g_cpu| per part */
	double worst;                        /* the largest rel */
	int worst_tensor;
	double nonzero;                      /* share of the CPU's gradient entries that are not 0 */
	float scale;                         /* the loss scale the pass used */
} gpu_compare_pass;

/* Small shape: V=128, T=16, C=32, L=2, NH=2; B=4. */
gpt_config gpu_compare_small_model(void);

/* Runs policy (a preset name) on dev and on the CPU's model (gpt_forward and
 * gpt_backward over the whole batch, with the trainer's numerics for step
 * 0) from cfg's weights on batch 0 of c. The loss scale is the policy's:
 * 1 without scaling, S for a static one, 2^10 for a dynamic one (its first
 * steps' 2^16 overflows the fp8 formats, and a pass that skips tests
 * nothing). */
mp_status gpu_compare_pass_compare(train_device dev, const char *policy, const train_config *cfg, const corpus *c,
                           gpu_compare_pass *out);

/* Name of part i: the gradient tensors in gpt_params order, qkvw.q, qkvw.k. */
const char *gpu_compare_tensor_name(int i);

/* steps of training on dev and on the CPU trainer: the largest difference
 * of the per-step losses, and both last losses. The CPU trainer rounds each
 * half of the batch's gradients to the gradient format (two micro-batches,
 * each with half the gradient), the device the whole batch's at once: the
 * CPU's underflow_frac is the larger, by design. */
typedef struct {
	double max_diff, last_cpu, last_dev;
	double max_lost_diff, max_underflow_diff;   /* of lost_update_frac and underflow_frac */
	double mean_lost, mean_underflow;           /* the CPU's, over the steps */
	double mean_lost_dev, mean_underflow_dev;   /* the device's */
	size_t skipped_cpu, skipped_dev;
} gpu_compare_run;

mp_status gpu_compare_run_compare(train_device dev, const char *policy, const train_config *cfg, const corpus *c,
                          size_t steps, gpu_compare_run *out);

/* The statistics of a run against the CPU's: lost-update fractions within
 * a tenth of their mean rate, the device's underflow no more than the CPU's
 * two half-batches' (and not 0 when those are not); else false with why. */
bool gpu_compare_run_stats_ok(const gpu_compare_run *r, char *why, size_t n);

/* The tolerance of a pass comparison under policy p: 1e-4 relative when the
 * pass runs in fp32 throughout (the bound asked of the fp32 policy); else
 * 4 units of the coarsest format the pass rounds to (2^-p each): a rounded
 * intermediate may land on the other neighbour when the device sums in
 * another order, and the flip carries through the layers below it. */
double gpu_compare_tolerance(const char *policy);

#endif
