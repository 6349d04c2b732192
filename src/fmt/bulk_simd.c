/* fmt/bulk_body.h compiled for the AVX2 path (8 lanes, AVX2 + F16C) and
 * the portable path (4 lanes: SSE2 on x86-64, NEON on AArch64, plain code
 * elsewhere). The AVX-512 kernels are fmt/bulk_avx512.c's. */
#include "fmt/bulk_impl.h"

/* a 32-byte vector type is passed in registers only where AVX is enabled;
 * the helpers are always inlined, so no call crosses that ABI */
#pragma GCC diagnostic ignored "-Wpsabi"

#define VB_NAME(x) bp_##x
#define VB_W 4
#define VB_TARGET
#define VB_AVX2 0
#include "fmt/bulk_body.h"
#undef VB_NAME
#undef VB_W
#undef VB_TARGET
#undef VB_AVX2

void bulk_portable_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n)
{
	bp_bulk_encode(p, k, idx_lo, out, in, n);
}

void bulk_portable_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n)
{
	bp_bulk_quantize(p, k, idx_lo, x, n);
}

size_t bulk_portable_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                                const float *u, size_t n)
{
	return bp_bulk_accumulate(p, k, idx_lo, x, comp, u, n);
}

void bulk_portable_decode(fmt_id fmt, float *out, const void *in, size_t n)
{
	bp_bulk_decode(fmt, out, in, n);
}

#if defined(__x86_64__)
#define VB_NAME(x) b2_##x
#define VB_W 8
#define VB_TARGET __attribute__((target("avx2,f16c")))
#define VB_AVX2 1
#include "fmt/bulk_body.h"
#else
/* never selected off x86-64 (fmt_simd_available); the names must link */
#define b2_bulk_encode bp_bulk_encode
#define b2_bulk_quantize bp_bulk_quantize
#define b2_bulk_accumulate bp_bulk_accumulate
#define b2_bulk_decode bp_bulk_decode
#endif

void bulk_avx2_encode(const bulk_params *p, rng_key k, uint32_t idx_lo, void *out, const float *in, size_t n)
{
	b2_bulk_encode(p, k, idx_lo, out, in, n);
}

void bulk_avx2_quantize(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, size_t n)
{
	b2_bulk_quantize(p, k, idx_lo, x, n);
}

size_t bulk_avx2_accumulate(const bulk_params *p, rng_key k, uint32_t idx_lo, float *x, float *comp,
                            const float *u, size_t n)
{
	return b2_bulk_accumulate(p, k, idx_lo, x, comp, u, n);
}

void bulk_avx2_decode(fmt_id fmt, float *out, const void *in, size_t n)
{
	b2_bulk_decode(fmt, out, in, n);
}
