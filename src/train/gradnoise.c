#include <math.h>
#include <string.h>

#include "train/gradnoise.h"
#include "train/layers.h"

void grad_noise_add(grad_noise *acc, const float *x, const float *q, size_t n)
{
	double gg = 0, ee = 0;
	for (size_t i = 0; i < n; i++) {
		double g = x[i], e = (double)q[i] - g;
		gg += g * g;
		ee += e * e;
	}
	acc->gg += gg;
	acc->ee += ee;
	acc->n += n;
}

void grad_noise_wgrad(grad_noise *acc, const float *before, const float *after, float *ref, const float *dout,
                      const float *inp, size_t BT, size_t C, size_t OC)
{
	size_t n = OC * C;
	memset(ref, 0, n * sizeof *ref);
	matmul_backward(NULL, ref, NULL, dout, inp, NULL, 1, BT, C, OC);
	double gg = 0, ee = 0;
	for (size_t i = 0; i < n; i++) {
		double g = ref[i], e = ((double)after[i] - before[i]) - g;
		gg += g * g;
		ee += e * e;
	}
	acc->gg += gg;
	acc->ee += ee;
	acc->n += n;
}

void grad_noise_merge(grad_noise *a, const grad_noise *b)
{
	a->gg += b->gg;
	a->ee += b->ee;
	a->n += b->n;
}

double grad_noise_ratio(const grad_noise *a)
{
	if (a->n == 0 || isnan(a->gg) || isnan(a->ee))
		return NAN;
	if (a->gg == 0)
		return 0;
	return a->ee == 0 ? INFINITY : sqrt(a->gg / a->ee);
}
