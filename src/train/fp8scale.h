/* Per-tensor fp8 scaling as Transformer Engine does it: each quantized
 * tensor x is cast as q = sat(round(x * scale)) in an fp8 format and used
 * as q / scale, one fp32 scale per tensor.
 *
 * Delayed scaling (TE's DelayedScaling; transformer_engine/common/recipe/
 * delayed_scaling.cu, amax_and_scale_update): a step quantizes with the scale
 * left by the previous step and records the tensor's amax; after the step
 * the amax enters the history (the newest first, the oldest dropped) and the
 * next scale is (fp8_max * 2^-margin) / amax, amax being the history's max
 * (or its newest entry with most_recent). An amax of 0, inf or NaN keeps
 * the previous scale; scales start at 1 and histories at 0 (TE's initial
 * values).
 * Current scaling (TE's Float8CurrentScaling; common/recipe/recipe_common.cuh,
 * compute_scale_from_amax): the scale is fp8_max / amax of the tensor being
 * cast; amax 0, inf or NaN gives 1, and a scale that overflows fp32 gives
 * FLT_MAX. TE's current recipe has no margin.
 * The cast saturates to +-fp8_max, as TE's (cuda_fp8.h __NV_SATFINITE); an
 * inf input becomes +-fp8_max too, a NaN stays NaN.
 *
 * Block recipes (fp8-block, mxfp8, nvfp4: train/blockcast.h) keep no
 * history: each cast scales its blocks from their own amax. The GEMM then
 * needs each operand cast along its contraction: a weight or input along
 * its rows for the forward GEMM, the input and output gradient down their
 * columns (over the tokens) for the weight-gradient GEMM, each cast from
 * the high-precision tensor (TE: "both versions must be quantized
 * separately from the high-precision source"); 2D weight blocks cover the
 * same elements either way. Block sizes, as TE's recipes use them:
 * fp8-block 1x128 for inputs and gradients, 128x128 for weights; mxfp8
 * 1x32 for all; nvfp4 1x16, 16x16 for weights (2d). nvfp4 rounds the
 * output gradients stochastically (sr) and rotates the weight-gradient
 * GEMM's operands by a 16x16 random Hadamard transform first (rht).
 * A tensor's statistics: amax and scale from its cast along the rows (the
 * forward GEMM's, for an output gradient the input gradient's); the
 * overflow and underflow shares over every cast the GEMMs read: inputs and
 * output gradients twice (the weight-gradient GEMM's cast too), a weight
 * cut in 1D blocks twice (along its rows and down its columns), a 2D or
 * per-tensor weight once (its second cast gives the same bits).
 *
 * The two batch halves of the CPU trainer quantize in parallel: each writes
 * only its own slot, and the step's end combines them (the amax is the max
 * over both, as TE reduces amaxes over data-parallel ranks). */
#ifndef MIXPREC_TRAIN_FP8SCALE_H
#define MIXPREC_TRAIN_FP8SCALE_H

#include <stdbool.h>
#include <stddef.h>

#include "fmt/format.h"
#include "quant/quant_rule.h"
#include "train/fp8scale_kind.h"
#include "train/gradnoise.h"
#include "util/status.h"

/* --- the rules, on numbers --- */

/* The delayed scale from amax (already reduced over the history): fp8_max
 * * 2^-margin / amax, or prev when amax is 0, inf or NaN. */
float fp8_delayed_scale(float fp8_max, float amax, int margin, float prev);

/* The current scale: fp8_max / amax; 1 for amax 0, inf or NaN; FLT_MAX
 * when the quotient overflows. */
float fp8_current_scale(float fp8_max, float amax);

/* The amax the history hist[0..H) (hist[0] the newest) gives under algo. */
float fp8_history_amax(const float *hist, size_t H, fp8_amax_algo algo);

/* hist[0..H) after amax enters it: hist[0] = amax, the rest shifted one
 * place older, the oldest dropped. */
void fp8_history_push(float *hist, size_t H, float amax);

/* What casting one tensor did. */
typedef struct {
	float amax;             /* max |x| (NaN when x held a NaN) */
	size_t overflow;        /* elements saturated (x * scale nearer a value past fp8_max) or NaN */
	size_t underflow;       /* nonzero elements that became 0 */
	size_t n;
} fp8_cast_stat;

/* x[0..n) = sat(rne(x * scale)) / scale in fmt (fp8-e4m3 or fp8-e5m2), in
 * place; *stat counts what it did (amax of the input). */
void fp8_cast(float *x, size_t n, fmt_id fmt, float scale, fp8_cast_stat *stat);

/* max |x| over x[0..n); NaN when x holds a NaN. */
float fp8_amax(const float *x, size_t n);

/* --- the scaling state of a model's tensors --- */

/* Roles of a Linear layer's quantized tensors. */
typedef enum { FP8_WEIGHT, FP8_INPUT, FP8_GRAD_OUTPUT, FP8_ROLES } fp8_role;

/* The Linear layers of a block, in GPT-2's names. */
enum { FP8_LINEARS = 4 };

typedef struct fp8_state fp8_state;

typedef struct {
	cast_scaling scaling;    /* not NONE */
	fmt_id fwd, bwd;        /* weights and inputs; output gradients (fp8; nvfp4: fp4-e2m1 both) */
	size_t H;               /* delayed: the history, 1..FP8_HISTORY_MAX (others: 1 or more, unused) */
	fp8_amax_algo algo;
	int margin;
	bool pow2;              /* fp8-block: scales rounded down to powers of two */
	quant_rule rule;        /* mxfp8: the e8m0 scale's rule */
	size_t mx_block;        /* mxfp8: elements per e8m0 scale, 1..QUANT_BLOCK_MAX; 0: 32 */
	bool rht, sr, w2d;      /* nvfp4: the Hadamard transform, SR gradients, 16x16 weight blocks */
	size_t highp_last;       /* the last blocks whose Linears are left out (the GEMM format), 0..L */
	bool noise;             /* measure the gradients' quantization noise (fp8_state_grad_noise_ratio):
	                         * a copy of each output gradient cast and, in block recipes, one more
	                         * GEMM per cast Linear; off, those ratios are NaN */
} fp8_opts;

/* The state for L blocks under o. MP_ENOMEM, MP_EINVAL for a bad H,
 * format or highp_last. */
mp_status fp8_state_create(fp8_state **out, size_t L, const fp8_opts *o);
void fp8_state_free(fp8_state *st);

/* Whether block l's Linears are cast (l below L - highp_last). */
bool fp8_state_covers(const fp8_state *st, size_t l);

/* Whether the state scales blocks: the GEMMs then cast each operand along
 * its contraction with fp8_state_cast_and_record. */
bool fp8_state_blocked(const fp8_state *st);

/* The index of block l's Linear k (0 attn.c_attn, 1 attn.c_proj, 2
 * mlp.c_fc, 3 mlp.c_proj), role r. */
static inline size_t fp8_tensor_index(size_t l, size_t k, fp8_role r)
{
	return (l * FP8_LINEARS + k) * FP8_ROLES + (size_t)r;
}

size_t fp8_state_count(const fp8_state *st);

/* Casts x (n) as tensor i, in its format, with its scale (delayed: the
 * state's; current: from x's amax), for batch half h (0 or 1); with record,
 * the cast counts towards the step's statistics (a weight cast again in the
 * backward pass does not). */
void fp8_state_cast(fp8_state *st, int h, size_t i, bool record, float *x, size_t n);

typedef enum {
	FP8_ALONG_ROWS,   /* the GEMM contracts x's columns: blocks run along each row */
	FP8_ALONG_COLS,   /* ... x's rows: blocks run down each column */
} fp8_along;

/* Casts the matrix src (rows, cols; NULL: x itself) into x as tensor i for
 * a GEMM that contracts it `along`, for batch half h; per-tensor scaling as
 * fp8_state_cast. The cast counts towards the step's statistics (amax,
 * scale, overflow and underflow shares, the gradients' noise), as a
 * training pass's casts do. seed: SR's stream (nvfp4 gradients); distinct
 * for every cast that must not share random bits. MP_ENOMEM when the
 * scratch cannot grow. */
mp_status fp8_state_cast_and_record(fp8_state *st, int h, size_t i, fp8_along along, uint64_t seed,
                                    const float *src, float *x, size_t rows, size_t cols);

/* The same cast, the same bits, counted nowhere: a weight cast again in the
 * backward pass with the forward's scale, or a measurement's cast. */
mp_status fp8_state_cast_only(fp8_state *st, int h, size_t i, fp8_along along, uint64_t seed, const float *src,
                              float *x, size_t rows, size_t cols);

/* A buffer of at least n floats for half h, kept between calls (a GEMM
 * operand's cast copy); NULL when out of memory. */
float *fp8_state_scratch(fp8_state *st, int h, size_t n);

/* Bytes of scratch the state holds now (both halves' operand copies and
 * block-cast buffers): activation memory the casts add. */
size_t fp8_state_scratch_bytes(const fp8_state *st);

/* Forgets what casts recorded since the last step_end (an evaluation's
 * forward passes). */
void fp8_state_begin(fp8_state *st);

/* The step's end: the halves' records combined into the step's
 * statistics; under delayed scaling each amax enters its history and the
 * scales are updated. */
void fp8_state_step_end(fp8_state *st);

/* One tensor's statistics at the last step_end. */
typedef struct {
	const char *name;       /* "h.2.mlp.c_fc.weight", ".input", ".grad_output" */
	fmt_id fmt;
	float amax;             /* over both halves */
	float scale;            /* the scale the step cast with (current: half 0's; blocks: the
	                         * multiplier of the block holding the amax, in the half holding it) */
	double overflow_frac, underflow_frac;
} fp8_tensor_stat;

fp8_tensor_stat fp8_state_stat(const fp8_state *st, size_t i);

/* Saturated or NaN elements over every element cast in the last step. */
double fp8_state_overflow_frac(const fp8_state *st);
/* Nonzero elements that became 0, over every element cast in the last step
 * (the per-tensor underflow_frac, weighted by each tensor's element count). */
double fp8_state_underflow_frac(const fp8_state *st);

/* The last step's output gradients over their quantization noise,
 * ||G|| / ||Q(G) - G|| over every cast of an output gradient the step made
 * (train/gradnoise.h); NaN when it cast none. */
double fp8_state_grad_noise_ratio(const fp8_state *st);
/* Whether the state measures the noise (fp8_opts.noise). */
bool fp8_state_noise(const fp8_state *st);

/* The weight gradients' side (block recipes): a buffer of n floats for
 * half h (a weight gradient kept before its product), NULL when out of
 * memory; g added to weight tensor i's record; and the last step's
 * ||dW|| / ||dW_q - dW|| over every weight-gradient product it measured
 * (NaN: none). */
float *fp8_state_wgrad_scratch(fp8_state *st, int h, size_t n);
void fp8_state_add_wgrad_noise(fp8_state *st, int h, size_t i, const grad_noise *g);
double fp8_state_wgrad_noise_ratio(const fp8_state *st);

/* The running state (for a checkpoint): the (count, H) histories, the
 * newest first in each row, and the count scales. */
size_t fp8_state_history_len(const fp8_state *st);
float *fp8_state_histories(fp8_state *st);
float *fp8_state_scales(fp8_state *st);

#endif
