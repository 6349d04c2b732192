/* The drift simulation on a device: drift.c declares what it needs here and
 * gpu/gpu_drift.cu implements it (gpu/gpu_none.c in a build without CUDA,
 * where create returns MP_EUNSUPPORTED), so drift/ includes nothing from
 * gpu/. A function that fails writes the sentence for the user into the
 * caller's err (errlen bytes; err may be NULL when errlen is 0). */
#ifndef MIXPREC_DRIFT_DRIFT_GPU_H
#define MIXPREC_DRIFT_DRIFT_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The variants after fp64, in drift_variant order: fp32, bf16-rne, bf16-sr,
 * bf16-kahan, fp16-rne. */
enum { GPU_DRIFT_NF = 5 };

typedef struct {
	size_t elements;
	int dist;                    /* drift_dist: 0 constant, 1 uniform, 2 normal */
	double mean, std;
	uint64_t seed;
	double start64;              /* the fp64 reference's start */
	float start[GPU_DRIFT_NF];   /* each variant's stored start */
} gpu_drift_params;

typedef struct gpu_drift gpu_drift;

/* Allocates the state on the device, every element at its start. */
mp_status gpu_drift_create(gpu_drift **out, const gpu_drift_params *p, char *err, size_t errlen);
void gpu_drift_free(gpu_drift *s);
/* Applies steps step0 .. step0 + n - 1 to every element (one thread per
 * element keeps its state in registers over the n steps); returns when done. */
mp_status gpu_drift_advance(gpu_drift *s, uint64_t step0, size_t n, char *err, size_t errlen);
/* Copies the state back: x64 (E), x[v] (E each, v < GPU_DRIFT_NF), comp (E;
 * the bf16-kahan compensation), and the unchanged counts so far, fp64 first. */
mp_status gpu_drift_read(gpu_drift *s, double *x64, float *const x[GPU_DRIFT_NF], float *comp,
                         uint64_t unchanged[GPU_DRIFT_NF + 1], char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
