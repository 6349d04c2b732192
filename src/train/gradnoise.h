/* The gradient over its quantization noise, two ways. Chmiel et al., "FP4
 * All the Way" (arXiv:2505.19115), find quantized training stops helping
 * once the gradient norm falls below about sqrt(3) times the quantization
 * noise.
 * - Per cast: for the output gradients G a recipe casts in the backward
 *   pass, ||G|| / ||Q(G) - G||, both norms over every element of every such
 *   cast of a step (both batch halves, both contractions). Block scaling
 *   makes it a property of the format and the values' spread within a
 *   block, not of the gradient's size.
 * - Per weight gradient: for the weight-gradient products of the block
 *   recipes, ||dW|| / ||dW_q - dW||, dW = G^T X from the unquantized
 *   operands and dW_q the product of the cast ones, over every Linear cast.
 *   The sum over the tokens adds the signal coherently and the noise not,
 *   so this ratio can fall as the batch's gradients cancel, where the
 *   per-cast one cannot.
 * The sums are binary64, added in index order, so they are the same bits
 * on every SIMD path (the casts are) and for either thread count (each
 * half keeps its own, added half 0 first). */
#ifndef MIXPREC_TRAIN_GRADNOISE_H
#define MIXPREC_TRAIN_GRADNOISE_H

#include <stddef.h>

typedef struct {
	double gg;   /* sum of g^2 over the elements cast */
	double ee;   /* sum of (Q(g) - g)^2 */
	size_t n;    /* elements cast */
} grad_noise;

/* Adds x[0..n) (before the cast) and q[0..n) (after) into *acc. */
void grad_noise_add(grad_noise *acc, const float *x, const float *q, size_t n);

/* b added into *a. */
void grad_noise_merge(grad_noise *a, const grad_noise *b);

/* The weight gradient of one Linear against its quantization noise, into
 * *acc: dq = after - before is what the quantized weight-gradient product
 * added to dweight (Q(G)^T Q(X), as the GEMM made it), ref gets G^T X in
 * fp32 from the unquantized operands; gg sums ref^2 and ee (dq - ref)^2.
 * ref (OC,C) is scratch; dout (BT,OC), inp (BT,C). */
void grad_noise_wgrad(grad_noise *acc, const float *before, const float *after, float *ref, const float *dout,
                      const float *inp, size_t BT, size_t C, size_t OC);

/* sqrt(gg / ee): NaN when nothing was cast (n 0) or the sums are NaN,
 * +inf when the cast was exact (ee 0) and g nonzero, 0 for an all-zero g. */
double grad_noise_ratio(const grad_noise *a);

#endif
