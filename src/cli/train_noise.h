/* train's table of the gradients over their quantization noise
 * (train_stats.grad_noise_ratio and wgrad_noise_ratio, train/gradnoise.h),
 * after a run: per policy that casts, each ratio at the run's first step
 * and its mean over the last tenth of the steps that cast, the weight
 * gradients' smallest, and the steps where it was below sqrt(3), the
 * threshold of "FP4 All the Way" (arXiv:2505.19115). */
#ifndef MIXPREC_CLI_TRAIN_NOISE_H
#define MIXPREC_CLI_TRAIN_NOISE_H

#include <stdbool.h>
#include <stddef.h>

#include "train/policy.h"
#include "train/train.h"

enum { NOISE_LOG_POLICIES = 16 };

/* Each policy's two ratios, step by step, over the steps that cast. */
typedef struct {
	double (*r[NOISE_LOG_POLICIES])[2];   /* [0] per cast, [1] per weight gradient (NaN: none) */
	size_t n[NOISE_LOG_POLICIES], cap[NOISE_LOG_POLICIES];
	bool nomem;   /* a step could not be kept: the table is left out */
} noise_log;

/* Keeps s's ratios as policy i's (nothing when the step cast nothing). */
void noise_log_add(noise_log *l, size_t i, const train_stats *s);

/* The figures of one ratio of a policy. */
typedef struct {
	double first, last, min;   /* last: the mean over the last tenth of the steps (at least one) */
	size_t below;              /* steps below sqrt(3) */
} noise_figures;

/* Policy i's figures of ratio k (0 per cast, 1 per weight gradient) and
 * the steps that cast; false when it has no such ratio. */
bool noise_log_figures(const noise_log *l, size_t i, int k, noise_figures *out, size_t *steps);

/* The table, policy names padded to pw, when a policy has fp8 scaling. */
void noise_log_print(const noise_log *l, const train_policy *pols, size_t np, int pw);

void noise_log_free(noise_log *l);

#endif
