/* Internal to quant/: the pieces of the bulk kernels that have SIMD twins. */
#ifndef MIXPREC_QUANT_QUANT_IMPL_H
#define MIXPREC_QUANT_QUANT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "quant/quant.h"

/* (a * 2^ea) / (d * 2^ed) rounded once into f (a, d nonzero; a < 2^32, d < 2^40). */
uint32_t quant_div_round(const fmt_info *f, const fmt_round_ctl *ctl, bool neg, uint64_t a, int ea, uint64_t d,
                         int ed);
/* The MX scale exponent of a block whose largest |x| has the (finite) fp32 pattern amax. */
int quant_mx_exp(const quant_info *q, quant_rule rule, uint32_t amax);
/* The 7 e2m1 decision patterns of quotients by D (see quant_bulk.c). */
void quant_nv_thresholds(uint32_t g[7], double D);

/* The largest |x| pattern of in[0..n) (NaN patterns above inf). */
typedef uint32_t (*quant_amax_fn)(const float *in /* (n) */, size_t n);
/* out[i] = in[i] * 2^-k, with a vanished nonzero product kept as the smallest subnormal. */
typedef void (*quant_scale_fn)(float *out /* (n) */, const float *in /* (n) */, size_t n, int k);
/* nvfp4 rne elements from the thresholds g. */
typedef void (*quant_nv_fn)(uint8_t *out /* (n) */, const float *in /* (n) */, size_t n, const uint32_t g[7]);

uint32_t quant_amax_portable(const float *in, size_t n);
void quant_mx_scale_portable(float *out, const float *in, size_t n, int k);
void quant_nv_rne_portable(uint8_t *out, const float *in, size_t n, const uint32_t g[7]);
uint32_t quant_amax_avx512(const float *in, size_t n);
void quant_mx_scale_avx512(float *out, const float *in, size_t n, int k);
void quant_nv_rne_avx512(uint8_t *out, const float *in, size_t n, const uint32_t g[7]);

#endif
