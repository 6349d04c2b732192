/* Shared by the CUDA sources of gpu/ only. */
#ifndef MIXPREC_GPU_GPU_INTERNAL_H
#define MIXPREC_GPU_GPU_INTERNAL_H

#include "util/status.h"

/* Sets the message gpu_last_error() returns. */
void gpu_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* MP_OK for cudaSuccess; otherwise records "what: CUDA's message" and
 * returns MP_ENOMEM or MP_EIO. */
mp_status gpu_status_of(int cuda_error, const char *what);
/* MP_OK when gpu_ready(); else MP_EUNSUPPORTED with the reason recorded. */
mp_status gpu_require(void);
/* The device's multiprocessor count, read once at detection (1 without a
 * usable device): launch shapes read it without a query or a race. */
int gpu_sm_count(void);
/* GPU_COUNTERS 64-bit device counters, allocated on first use and kept; the
 * caller zeroes the ones it uses. Not for concurrent kernels. */
enum { GPU_COUNTERS = 8 };
mp_status gpu_counters(unsigned long long **d_counters);

#endif
