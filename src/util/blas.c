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
	bool known;
	if (blas_coretype_runs("SkylakeX", &known))
		return "SkylakeX";
	if (blas_coretype_runs("Haswell", &known))
		return "Haswell";
	return NULL;
}

/* --- the core types and what each needs of the CPU --- */

enum { NEED_SSE3 = 1, NEED_SSSE3 = 2, NEED_SSE42 = 4, NEED_AVX = 8, NEED_AVX2_FMA = 16, NEED_AVX512 = 32 };

/* The x86-64 core types of OpenBLAS's dynamic builds (Debian's among them). */
static const struct {
	const char *name;
	unsigned need;
} coretypes[] = {
	{ .name = "Prescott", .need = NEED_SSE3 },
	{ .name = "Core2", .need = NEED_SSSE3 },
	{ .name = "Nehalem", .need = NEED_SSE42 },
	{ .name = "Sandybridge", .need = NEED_AVX },
	{ .name = "Haswell", .need = NEED_AVX2_FMA },
	{ .name = "Zen", .need = NEED_AVX2_FMA },
	{ .name = "SkylakeX", .need = NEED_AVX512 },
};

const char *blas_coretype_names(void)
{
	return "native, Prescott, Core2, Nehalem, Sandybridge, Haswell, Zen, SkylakeX";
}

/* The NEED_ bits this CPU has. */
static unsigned cpu_features(void)
{
	unsigned f = 0;
#if defined(__x86_64__)
	__builtin_cpu_init();
	f |= __builtin_cpu_supports("sse3") ? NEED_SSE3 : 0;
	f |= __builtin_cpu_supports("ssse3") ? NEED_SSSE3 : 0;
	f |= __builtin_cpu_supports("sse4.2") ? NEED_SSE42 : 0;
	f |= __builtin_cpu_supports("avx") ? NEED_AVX : 0;
	f |= __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? NEED_AVX2_FMA : 0;
	f |= __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	     __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") ? NEED_AVX512 : 0;
#endif
	return f;
}

bool blas_coretype_runs(const char *name, bool *known)
{
	*known = true;
	if (!strcasecmp(name, "native"))
		return true;
	for (size_t i = 0; i < sizeof coretypes / sizeof coretypes[0]; i++)
		if (!strcasecmp(name, coretypes[i].name))
			return (cpu_features() & coretypes[i].need) == coretypes[i].need;   /* none off x86-64 */
	*known = false;
	return false;
}
