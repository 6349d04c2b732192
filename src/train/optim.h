/* Adam's second moment against a reference: the same EMA of the same
 * squared gradients kept in fp32 beside a low-precision v, so that a v
 * that stopped moving (drift --ema shows why) is visible in training. */
#ifndef MIXPREC_TRAIN_OPTIM_H
#define MIXPREC_TRAIN_OPTIM_H

#include <stddef.h>

/* Sums over the elements whose reference is positive. */
typedef struct {
	double ratio_sum;   /* of v / vref */
	size_t count;
} optim_vstat;

/* One update of the reference, as the trainer updates v before rounding
 * it: gi = fl32(g[i] clip), vref[i] = fl32(b2 vref[i] + (1 - b2) gi^2);
 * then v[i] / vref[i] (v as stored after the update) into *st. */
void optim_vref_update(optim_vstat *st, float *vref, const float *v, const float *g, size_t n, double clip,
                       double b2);

/* The mean of v / vref, NaN for no elements. */
double optim_vstat_mean(const optim_vstat *st);

#endif
