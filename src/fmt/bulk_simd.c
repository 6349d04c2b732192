/* fmt/bulk_body.h compiled for the AVX2 path (8 lanes, AVX2 + F16C) and
 * the portable path (4 lanes: SSE2 on x86-64, NEON on AArch64, plain code
 * elsewhere). The AVX-512 kernels are fmt/bulk_avx512.c's. */
#include "fmt/bulk_impl.h"

#define VB_BODY "fmt/bulk_body.h"
#define VB_PORTABLE_NAME(x) bp_##x
#define VB_AVX2_NAME(x) b2_##x
#include "fmt/vec_paths.h"

#if defined(__x86_64__)
#define AVX2_BODY(x) b2_##x
#else
#define AVX2_BODY(x) bp_##x   /* never selected off x86-64 (fmt_simd_available); the names must link */
#endif

/* bulk_impl.h's entry points of a path, over its instance of the body. */
#define BULK_PATH(path, body)                                                                             \
	void bulk_##path##_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, \
	                          size_t n)                                                                  \
	{                                                                                                    \
		body(bulk_encode)(p, k, idx_lo, out, in, n);                                                 \
	}                                                                                                    \
	void bulk_##path##_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n)    \
	{                                                                                                    \
		body(bulk_quantize)(p, k, idx_lo, x, n);                                                     \
	}                                                                                                    \
	size_t bulk_##path##_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp, \
	                                const float *u, size_t n)                                            \
	{                                                                                                    \
		return body(bulk_accumulate)(p, k, idx_lo, x, comp, u, n);                                   \
	}                                                                                                    \
	void bulk_##path##_decode(fmt_id fmt, float *out, const void *in, size_t n)                          \
	{                                                                                                    \
		body(bulk_decode)(fmt, out, in, n);                                                          \
	}

#define PORTABLE_BODY(x) bp_##x
BULK_PATH(portable, PORTABLE_BODY)
BULK_PATH(avx2, AVX2_BODY)
