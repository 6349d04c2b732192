/* Training speed on the GPU against the CPU, measured in one run: used by
 * `mixprec bench train --device cuda` and tests/gpu/train_gpu (which the
 * device check builds without the rest of the program). */
#ifndef MIXPREC_TRAIN_TRAIN_BENCH_H
#define MIXPREC_TRAIN_TRAIN_BENCH_H

#include <stddef.h>

#include "train/data.h"
#include "util/status.h"

typedef struct {
	const char *device;    /* "cpu" or "cuda" */
	const char *shape;     /* "L4 H4 C128 B16 T128" */
	const char *policy;
	double ms;             /* per step, after two warm-up steps */
	double ratio;          /* default shape: CPU ms / this ms (1 for the CPU rows);
	                        * large shape: the GPU's fp32 ms / this ms */
} train_bench_row;

typedef void (*train_bench_emit)(void *ctx, const train_bench_row *row);

/* The context length of the large shape: load the corpus for it. */
size_t train_bench_cuda_context(void);

/* fp32 and bf16-mixed at the default shape on the CPU (reps steps) and on
 * the GPU (4 reps steps), then at L4 H16 C1024 B16 T256 on the GPU, where
 * the tensor cores matter. MP_EUNSUPPORTED without a GPU; on any failure
 * err names the policy, device and shape, and says why (the GPU's own
 * sentence where the device failed). */
mp_status train_bench_cuda(const corpus *c, unsigned reps, train_bench_emit emit, void *ctx, char *err,
                           size_t errlen);

#endif
