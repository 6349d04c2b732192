#include <math.h>

#include "train/optim.h"

void optim_vref_update(optim_vstat *st, float *vref, const float *v, const float *g, size_t n, double clip,
                       double b2)
{
	double sum = 0;
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		float gi = (float)(g[i] * clip);
		vref[i] = (float)(b2 * vref[i] + (1 - b2) * (double)gi * gi);
		if (vref[i] > 0) {
			sum += (double)v[i] / (double)vref[i];
			count++;
		}
	}
	st->ratio_sum += sum;
	st->count += count;
}

double optim_vstat_mean(const optim_vstat *st)
{
	return st->count ? st->ratio_sum / (double)st->count : NAN;
}
