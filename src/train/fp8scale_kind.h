/* The choices of per-tensor fp8 scaling a policy names (train/policy.h);
 * the scaling itself is train/fp8scale.h. */
#ifndef MIXPREC_TRAIN_FP8SCALE_KIND_H
#define MIXPREC_TRAIN_FP8SCALE_KIND_H

typedef enum {
	CAST_SCALING_NONE,      /* operands rounded to gemm_fmt unscaled (fp8-mixed, bf16, ...) */
	CAST_SCALING_DELAYED,   /* Transformer Engine's DelayedScaling: the scale from an amax history */
	CAST_SCALING_CURRENT,   /* Float8CurrentScaling: the scale from this tensor's own amax */
	CAST_SCALING_BLOCK,     /* DeepSeek-V3 / TE's Float8BlockScaling: fp32 scales per 1x128 and 128x128 block */
	CAST_SCALING_MX,        /* MXFP8: an e8m0 scale per 32 elements along the contraction */
	CAST_SCALING_NVFP4,     /* NVFP4: e2m1, e4m3 scales per 16 (16x16 for weights), an fp32 tensor scale */
	CAST_SCALING_COUNT
} cast_scaling;

/* Whether s scales blocks (train/blockcast.h) rather than whole tensors. */
static inline int cast_scaling_blocked(cast_scaling s)
{
	return s == CAST_SCALING_BLOCK || s == CAST_SCALING_MX || s == CAST_SCALING_NVFP4;
}

typedef enum {
	AMAX_ALGO_MAX,          /* the largest amax in the history window */
	AMAX_ALGO_MOST_RECENT,  /* the last step's amax */
} fp8_amax_algo;

enum { FP8_HISTORY_MAX = 1024, FP8_MARGIN_MAX = 32 };

#endif
