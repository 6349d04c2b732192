/* Compiles the header named by VB_BODY, written over fmt/vec_body.h, once
 * per vector path: the portable one (4 lanes: SSE2 on x86-64, NEON on
 * AArch64, plain code elsewhere), its names VB_PORTABLE_NAME(x), and on
 * x86-64 the AVX2 one (8 lanes, AVX2 + F16C + FMA, which fmt_simd_available
 * asks of that path), its names VB_AVX2_NAME(x).
 * The includer defines the three macros first. */

/* a 32-byte vector type is passed in registers only where AVX is enabled;
 * the helpers are always inlined, so no call crosses that ABI */
#pragma GCC diagnostic ignored "-Wpsabi"

#define VB_NAME(x) VB_PORTABLE_NAME(x)
#define VB_W 4
#define VB_TARGET
#define VB_AVX2 0
#include VB_BODY
#undef VB_NAME
#undef VB_W
#undef VB_TARGET
#undef VB_AVX2

#if defined(__x86_64__)
#define VB_NAME(x) VB_AVX2_NAME(x)
#define VB_W 8
#define VB_TARGET __attribute__((target("avx2,f16c,fma")))
#define VB_AVX2 1
#include VB_BODY
#undef VB_NAME
#undef VB_W
#undef VB_TARGET
#undef VB_AVX2
#endif
