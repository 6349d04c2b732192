/* Helpers shared by CPU and CUDA code: MP_HD marks a small inline function
 * that device code calls too, so that the GPU and the CPU run one formula
 * rather than two copies that could drift apart. In C it expands to nothing.
 *
 * Floating-point helpers that must give the same bits on both sides use
 * MP_DMUL/MP_DADD/MP_DDIV/MP_DSQRT: on the device the _rn intrinsics, which
 * the compiler never fuses into an FMA; on the host plain operators, with
 * contraction switched off by MP_NO_CONTRACT (GCC) or the STDC pragma
 * (clang), so that a -march with FMA cannot change a result either. */
#ifndef MIXPREC_UTIL_HD_H
#define MIXPREC_UTIL_HD_H

/* nvcc --use_fast_math replaces division, square roots and expf by
 * approximations and flushes subnormals: the device would no longer give
 * the CPU's bits. */
#if defined(__USE_FAST_MATH__)
#error "code shared by CPU and GPU must round as the CPU does: build it without --use_fast_math"
#endif

#if defined(__CUDACC__)
#define MP_HD __host__ __device__
#else
#define MP_HD
#endif

#if defined(__CUDA_ARCH__)
#define MP_DMUL(a, b) __dmul_rn((a), (b))
#define MP_DADD(a, b) __dadd_rn((a), (b))
#define MP_DDIV(a, b) __ddiv_rn((a), (b))
#define MP_DSQRT(a) __dsqrt_rn(a)
#else
#define MP_DMUL(a, b) ((a) * (b))
#define MP_DADD(a, b) ((a) + (b))
#define MP_DDIV(a, b) ((a) / (b))
#define MP_DSQRT(a) sqrt(a)
#endif

#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define MP_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define MP_NO_CONTRACT
#endif

#endif
