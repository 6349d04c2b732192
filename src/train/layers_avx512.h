/* Internal to train/layers*.c: the AVX-512 kernels (layers_avx512.c) that
 * layers.c dispatches to when layers_have_avx512(). Each has the contract
 * of the portable kernel it stands in for (see layers.c); N counts rows or
 * elements as there, T is the causal block's side. */
#ifndef MIXPREC_TRAIN_LAYERS_AVX512_H
#define MIXPREC_TRAIN_LAYERS_AVX512_H

#include <stdbool.h>
#include <stddef.h>

#define GELU_SCALE 0.7978845608028654f   /* sqrt(2/pi) */
#define GELU_CUBE 0.044715f

/* True when the CPU has AVX-512F and DQ and MIXPREC_SIMD does not cap the
 * path at portable or avx2 (as for the bulk kernels), so that tests can run
 * the portable loops on any CPU. Always false off x86-64. */
bool layers_have_avx512(void);

/* softmax of in[0..n) into out; returns the sum of exp(in - max), sets *max_out. */
float softmax_row_avx512(float *out, const float *in, size_t n, float *max_out);
void gelu_forward_avx512(float *out, const float *inp, size_t N);
void gelu_backward_avx512(float *dinp, const float *inp, const float *dout, size_t N);
void softmax_backward_causal_avx512(float *dpre, const float *datt, const float *att, size_t T);
void layernorm_forward_avx512(float *out, float *mean, float *rstd, const float *inp,
                              const float *weight, const float *bias, size_t N, size_t C);
void layernorm_backward_avx512(float *dinp, float *dweight, float *dbias, const float *dout,
                               const float *inp, const float *weight, const float *mean,
                               const float *rstd, size_t N, size_t C);

#endif
