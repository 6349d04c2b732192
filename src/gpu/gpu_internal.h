/* Shared by the sources of gpu/ and by tests/gpu; never by front ends,
 * which get the sentence of a failure through the err buffers of gpu.h,
 * drift/drift_gpu.h and train/backend.h. */
#ifndef MIXPREC_GPU_GPU_INTERNAL_H
#define MIXPREC_GPU_GPU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gpu/'s private record of the last failure of a gpu_* call on this thread,
 * which the boundary functions copy into their caller's err: its message
 * ("no error" when none; "built without CUDA" in a build without CUDA) ... */
const char *gpu_last_error(void);
/* ... forgetting it (gpu_failed() is then false until the next) ... */
void gpu_clear_error(void);
/* ... and whether a call failed since the last clear. */
bool gpu_failed(void);
/* A boundary's return: for st other than MP_OK, writes the record (or, with
 * none, mp_status_message(st)) into err (errlen bytes; nothing when 0);
 * returns st. */
mp_status gpu_error_out(mp_status st, char *err, size_t errlen);

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

#ifdef __cplusplus
}
#endif

#endif
