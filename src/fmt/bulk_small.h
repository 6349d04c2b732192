/* Internal to fmt/bulk*.c: the bulk paths of the formats outside the SIMD and
 * GPU kernels (fp6, fp4, FNUZ, e8m0; !fmt_is_kernel), portable C only. */
#ifndef MIXPREC_FMT_BULK_SMALL_H
#define MIXPREC_FMT_BULK_SMALL_H

#include "fmt/bulk_impl.h"

typedef enum { BULK_SMALL_ENCODE, BULK_SMALL_QUANTIZE, BULK_SMALL_ACCUMULATE } bulk_small_op;

/* One call of fmt_bulk_encode/quantize/accumulate for a small format, n
 * elements whose SR indices idx_lo.. lie in key k's block; returns the
 * number of unchanged elements (accumulate). */
size_t bulk_small_run(const fmt_bulk_opts *o, bulk_small_op op, rng_key k, uint32_t idx_lo, void *out,
                      float *x, const float *in, float *comp, size_t n);

/* fmt_bulk_decode for a small format. */
void bulk_small_decode(fmt_id fmt, float *out, const void *in, size_t n);

#endif
