/* Block-scaled casts of a GEMM operand, as the trainer's fp8 and fp4
 * recipes make them: a matrix x (rows, cols), row-major, is cut into blocks
 * of br rows by bc columns; each block gets its own scale and its elements
 * are cast with it, then x holds what the cast stands for (element times
 * scale), as the GEMM reads it.
 *
 * - CAST_SCALING_BLOCK (DeepSeek-V3; Transformer Engine's Float8BlockScaling,
 *   docs/features/low_precision_training/fp8_blockwise_scaling): an fp32
 *   scale per block, s = fp8_max / amax_block (fp8_current_scale's rule),
 *   with pow2 rounded down to a power of two by clearing its fraction bits;
 *   the elements sat(rne(x * s)) / s (fp8_cast).
 * - CAST_SCALING_MX (OCP MX; TE's MXFP8BlockScaling): an e8m0 scale per
 *   block by quant/'s rule (ceil, as TE, or ocp); the elements in fmt.
 * - CAST_SCALING_NVFP4 (TE's NVFP4BlockScaling; arXiv:2509.25149): e2m1
 *   elements, an e4m3 scale per block and an fp32 scale for the whole x.
 * MX and NVFP4 go through quant_bulk, bit for bit the rules quant_run
 * computes exactly (quant/quant.h); their elements are decoded exactly and
 * the product rounded once to fp32.
 *
 * A block at the right or bottom edge may be partial: it is padded with
 * zeros, which change no amax. Statistics count x's own elements only.
 * Depends on fmt/, quant/ and util/; never prints. */
#ifndef MIXPREC_TRAIN_BLOCKCAST_H
#define MIXPREC_TRAIN_BLOCKCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "fmt/round.h"
#include "quant/quant_rule.h"
#include "train/fp8scale_kind.h"
#include "util/status.h"

typedef struct {
	cast_scaling kind;   /* CAST_SCALING_BLOCK, _MX or _NVFP4 */
	fmt_id elem;        /* BLOCK and MX: fp8-e4m3 or fp8-e5m2; NVFP4: fp4-e2m1 */
	size_t br, bc;      /* the block: br rows by bc columns, each 1..QUANT_BLOCK_MAX in product */
	bool pow2;          /* BLOCK: each scale rounded down to a power of two */
	quant_rule rule;    /* MX: QUANT_RULE_CEIL or QUANT_RULE_OCP */
	fmt_mode mode;      /* MX and NVFP4 elements: FMT_RNE or FMT_SR (BLOCK: RNE) */
	uint64_t seed;      /* SR: the stream; element j of the block-ordered copy draws rng_bits(seed, j) */
} block_cast_cfg;

typedef struct {
	float amax;         /* max |x| (NaN when x held a NaN or inf: the cast then gives NaN, see below) */
	float scale;        /* the multiplier of the block holding the amax (x * scale is what is cast) */
	size_t overflow;    /* elements whose nearest value without saturation lies past the block's
	                     * largest (as fp8_cast counts them; quant/'s QUANT_SATURATED also counts
	                     * those that merely round down onto it), or NaN */
	size_t underflow;   /* nonzero elements cast to 0 */
	size_t n;           /* rows * cols */
} block_cast_stat;

/* Scratch for block_cast: grows as needed, freed by block_scratch_free. */
typedef struct {
	float *f;
	uint8_t *b;
	size_t cap;
	float *d;      /* the decoding tables and multipliers of cast_quant */
	size_t dcap;
} block_scratch;

void block_scratch_free(block_scratch *s);

/* Casts x (rows, cols) in place as c says; *st says what it did. An inf or
 * NaN in a block makes the whole block NaN (OCP MX gives such a block a NaN
 * scale; for NVFP4 the whole tensor, whose scale it spoils), all counted as
 * overflow (its zeros aside). MP_EINVAL for a bad c, MP_ENOMEM when the
 * scratch cannot grow. */
mp_status block_cast(float *x, size_t rows, size_t cols, const block_cast_cfg *c, block_scratch *s,
                     block_cast_stat *st);
/* As block_cast, reading src (rows, cols) and writing the cast into x: a
 * cast down the columns reads src straight into its block order, so no
 * copy of it is made first; src may be x. */
mp_status block_cast_from(const float *src, float *x, size_t rows, size_t cols, const block_cast_cfg *c,
                          block_scratch *s, block_cast_stat *st);

/* The random Hadamard transform of TE's NVFP4 recipe along the rows: every
 * column's values in rows 16k .. 16k + 15 (a row vector v over 16 tokens)
 * become v H with H = S H16 / 4, H16 the Sylvester Hadamard matrix of
 * order 16 and S = diag(signs) from the bits of `signs` (bit i set: -1;
 * the trainer passes QUANT_RHT_SIGNS, as quant_rht16 does).
 * H is orthogonal, so transforming both operands of a product that
 * contracts over the rows leaves it unchanged. Rows past the last full 16
 * stay as they are (the identity, also orthogonal). */
void block_rht16_rows(float *x, size_t rows, size_t cols, uint16_t signs);

/* block_rht16_rows of src into x (apart from src, or src itself), rows past
 * the last full 16 copied. */
void block_rht16_rows_from(const float *src, float *x, size_t rows, size_t cols, uint16_t signs);

/* The inverse of block_rht16_rows (its transpose): v H^T = v H16 S / 4,
 * that is block_rht16_rows with no signs, then S. In fp32, so the round
 * trip gives x back to rounding, not exactly. */
void block_rht16_rows_back(float *x, size_t rows, size_t cols, uint16_t signs);

#endif
