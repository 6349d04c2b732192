/* bench round's rows for the block-quantization kernels (quant/). */
#ifndef MIXPREC_CLI_BENCH_QUANT_H
#define MIXPREC_CLI_BENCH_QUANT_H

#include <stddef.h>

#include "cli/bench.h"
#include "util/csvout.h"

/* Times quant_bulk into each block format on in[0..n) (finite fp32 values)
 * with nthreads threads, best of reps, writing elements and scales into out
 * (at least 2 * n bytes), and prints one row per kernel as bench round does:
 * CSV through w, or text when w is NULL; base is memcpy's GB/s. GB/s counts
 * 4 bytes read and 1 + 1/block written per element. nvfp4's tensor scale
 * (one amax pass over the tensor) is computed before the timing. */
void bench_quant_rows(csvw *w, const float *in, void *out, size_t n, int nthreads, unsigned reps, double base);

#endif
