/* The activation memory of mixprec train's own GPT (src/train) as a formula
 * of its shape, for the memory lab's comparison of trainer and formula. The
 * trainer keeps every tensor in fp32 whatever the policy (low formats are
 * emulated by rounding), splits a batch into two halves of (B+1)/2 and B/2
 * sequences on the CPU, each with its own buffers, and adds the backward
 * pass's scratch and the GEMM emulation's operand copies.
 *
 * Per token of a half, in floats:
 *   kept for backward: L * (18C + 4 + 2*NH*t) + 4C + 2V + 3
 *     (per layer ln1, qkv 3C, atty, attproj, residual2, ln2, fch 4C,
 *      fch_gelu 4C, fcproj, residual3 = 18C; two LayerNorms' mean and rstd;
 *      preatt and att NH*t each; then the embedding output, the final
 *      LayerNorm, logits and probs V each, the loss, and the fp64 sum of the
 *      block outputs behind resid_lost_frac, C doubles = 2C floats)
 *   backward scratch: 13C + V + max(V, 4C)
 *     (dresid, dbuf_c, dbuf_3c, dbuf_4c, dbuf_4c2, dlogits, and the rounded
 *      dout operand)
 * and per half, once: 2t^2 (dpreatt, datt), max(V, 4C)*C (the rounded weight
 * operand), 5t*C/NH + t^2 (the attention emulation's scratch).
 * The trainer pads each tensor to 64 bytes; the formula does not. */
#ifndef MIXPREC_BUDGET_TINYGPT_H
#define MIXPREC_BUDGET_TINYGPT_H

#include <stddef.h>

#include "util/status.h"

typedef struct {
	double V, C, L, NH;   /* vocabulary, channels, layers, heads (NH divides C) */
	double B, t;          /* sequences per batch, tokens per sequence */
} budget_tiny_gpt;

typedef struct {
	double kept;      /* bytes kept from the forward pass for the backward pass */
	double scratch;   /* bytes of backward and emulation scratch */
	double total;     /* kept + scratch: what the trainer allocates, less padding */
} budget_tiny_acts;

/* Fills *out for g on the CPU trainer. MP_EINVAL for a dimension that is not
 * a positive whole number or heads that do not divide the channels. */
mp_status budget_tiny_gpt_activations(budget_tiny_acts *out, const budget_tiny_gpt *g);

#endif
