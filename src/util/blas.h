/* Which OpenBLAS kernels run, and which should. Debian's OpenBLAS 0.3.21
 * does not recognise recent Intel CPUs (family 6, model 207) and silently
 * uses its Prescott (SSE3) kernels, about 5x slower for sgemm; the core type
 * can only be chosen through OPENBLAS_CORETYPE before the library loads. */
#ifndef MIXPREC_UTIL_BLAS_H
#define MIXPREC_UTIL_BLAS_H

#include <stdbool.h>

/* OpenBLAS's name for the kernels it runs ("SkylakeX", "Prescott", ...). */
const char *blas_corename(void);

/* The core type to ask for when OpenBLAS chose a slower one than the CPU
 * supports ("SkylakeX" with AVX-512, "Haswell" with AVX2); NULL when nothing
 * is to gain or OPENBLAS_CORETYPE is already set. */
const char *blas_better_coretype(void);

/* Whether this CPU can run OpenBLAS's core type name (as OPENBLAS_CORETYPE
 * takes it, any case; "native", OpenBLAS's own choice, always can); false
 * with *known false for a name not in blas_coretype_names(). */
bool blas_coretype_runs(const char *name, bool *known);

/* The core types blas_coretype_runs knows, comma-separated. */
const char *blas_coretype_names(void);

#endif
