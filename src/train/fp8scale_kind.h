/* The choices of per-tensor fp8 scaling a policy names (train/policy.h);
 * the scaling itself is train/fp8scale.h. */
#ifndef MIXPREC_TRAIN_FP8SCALE_KIND_H
#define MIXPREC_TRAIN_FP8SCALE_KIND_H

typedef enum {
	FP8_SCALING_NONE,      /* operands rounded to gemm_fmt unscaled (fp8-mixed, bf16, ...) */
	FP8_SCALING_DELAYED,   /* Transformer Engine's DelayedScaling: the scale from an amax history */
	FP8_SCALING_CURRENT,   /* Float8CurrentScaling: the scale from this tensor's own amax */
} fp8_scaling;

typedef enum {
	AMAX_ALGO_MAX,          /* the largest amax in the history window */
	AMAX_ALGO_MOST_RECENT,  /* the last step's amax */
} fp8_amax_algo;

enum { FP8_HISTORY_MAX = 1024, FP8_MARGIN_MAX = 32 };

#endif
