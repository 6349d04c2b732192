#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/blas.h"

char *openblas_get_corename(void);

const char *blas_corename(void)
{
	return openblas_get_corename();
}

const char *blas_better_coretype(void)
{
	if (getenv("OPENBLAS_CORETYPE"))
		return NULL;
	const char *core = openblas_get_corename();
	/* the generic fallbacks; a core OpenBLAS recognised is left alone */
	static const char *const generic[] = { "Prescott", "Core2", "Penryn", "Dunnington", "Nehalem",
		                               "Katmai", "Coppermine", "Northwood", "Banias", "Atom", "Unknown" };
	bool fallback = false;
	for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++)
		fallback |= core && !strcasecmp(core, generic[i]);
	if (!fallback)
		return NULL;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
#endif
	return NULL;
}
