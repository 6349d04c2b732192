/* One row of LayerNorm (eps 1e-5, two passes), the formulas that the CPU's
 * portable and low-precision kernels (train/layers.c) and the GPU trainer's
 * bodies (gpu/gpu_kernels.h, host emulation and CUDA alike) all run, so that
 * they cannot drift apart. Every reduction and its terms are rounded by q to
 * nearest, ties to even (q NULL: fp32, no rounding); the per-channel
 * parameter gradients are not here (they are column sums, which the CPU and
 * the GPU take in different orders).
 *
 * The AVX-512 path of layers.c keeps its own loops: it sums in 16 lanes and
 * fuses multiply-adds, so it cannot give these bits. Compiled without
 * contraction on both sides (-ffp-contract=off, nvcc --fmad=false). */
#ifndef MIXPREC_TRAIN_LAYERNORM_CORE_H
#define MIXPREC_TRAIN_LAYERNORM_CORE_H

#include <math.h>
#include <stddef.h>

#include "fmt/bulk_impl.h"
#include "util/hd.h"

/* x rounded by q (RNE), or x itself when q is NULL. */
static inline MP_HD float layernorm_core_round(const bulk_params *q, float x)
{
	return q != NULL ? bulk_quantize1(q, x, 0u) : x;
}

/* One row: o = (x - mean) rstd weight + bias over C channels; sets *mean
 * and *rstd. The variance is that of the centred values, which does not
 * suffer the cancellation of E[x^2] - E[x]^2 when the stream carries a
 * large offset (the drift lesson adds hundreds to every channel). */
static inline MP_HD void layernorm_core_forward_row(float *o,                 // (C)
                                                    float *mean,              // (1)
                                                    float *rstd,              // (1)
                                                    const float *x,           // (C)
                                                    const float *weight,      // (C)
                                                    const float *bias,        // (C)
                                                    size_t C, const bulk_params *q)
{
	float m = 0.0f;
	for (size_t c = 0; c < C; c++)
		m = layernorm_core_round(q, m + x[c]);
	m = layernorm_core_round(q, m / (float)C);
	float v = 0.0f;
	for (size_t c = 0; c < C; c++) {
		float d = layernorm_core_round(q, x[c] - m);
		v = layernorm_core_round(q, v + layernorm_core_round(q, d * d));
	}
	v = layernorm_core_round(q, v / (float)C);
	float s = layernorm_core_round(q, 1.0f / sqrtf(layernorm_core_round(q, v + 1e-5f)));
	for (size_t c = 0; c < C; c++)
		o[c] = layernorm_core_round(q, layernorm_core_round(q, x[c] - m) * s * weight[c] + bias[c]);
	*mean = m;
	*rstd = s;
}

/* One row of the input gradient from the saved m and s: with n = (x - m) s
 * and g = weight dout, the Jacobian of the normalisation gives
 * dx += s (g - mean(g) - n mean(g n)); the two means (the only reductions)
 * and their terms are rounded by q, the elementwise update is fp32. */
static inline MP_HD void layernorm_core_backward_row(float *dx,               // (C)
                                                     const float *d,          // (C)
                                                     const float *x,          // (C)
                                                     const float *weight,     // (C)
                                                     float m, float s, size_t C, const bulk_params *q)
{
	float g_mean = 0.0f, gn_mean = 0.0f;
	for (size_t c = 0; c < C; c++) {
		float n = layernorm_core_round(q, (x[c] - m) * s);
		float g = layernorm_core_round(q, weight[c] * d[c]);
		g_mean = layernorm_core_round(q, g_mean + g);
		gn_mean = layernorm_core_round(q, gn_mean + layernorm_core_round(q, g * n));
	}
	g_mean = layernorm_core_round(q, g_mean / (float)C);
	gn_mean = layernorm_core_round(q, gn_mean / (float)C);
	for (size_t c = 0; c < C; c++) {
		float n = (x[c] - m) * s;
		float g = weight[c] * d[c];
		dx[c] += (g - g_mean - n * gn_mean) * s;
	}
}

#endif
