/* Counter-based random numbers: the value for (seed, index) never depends on
 * how a stream is split across threads, SIMD lanes or calls, which is what
 * makes stochastic rounding reproducible and identical on every code path. */
#ifndef MIXPREC_UTIL_RNG_H
#define MIXPREC_UTIL_RNG_H

#include <stdint.h>

#include "util/hd.h"

/* SplitMix64 finaliser: a bijective 64-bit mix. */
static inline MP_HD uint64_t rng_mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* lowbias32's two factors (the SIMD kernels split its steps: fmt/vec_body.h). */
#define RNG_MIX32_M1 0x7feb352du
#define RNG_MIX32_M2 0x846ca68bu

/* A bijective 32-bit mix (Wellons' lowbias32): cheap enough for SIMD lanes. */
static inline MP_HD uint32_t rng_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= RNG_MIX32_M1;
	x ^= x >> 15;
	x *= RNG_MIX32_M2;
	x ^= x >> 16;
	return x;
}

/* Per-block keys: everything about (seed, index >> 32) that a SIMD kernel can
 * hoist out of its loop. */
typedef struct {
	uint32_t k1, k2;
} rng_key;

static inline MP_HD rng_key rng_key_for(uint64_t seed, uint64_t index)
{
	uint64_t s = rng_mix64(seed ^ rng_mix64(index >> 32));
	rng_key k;
	k.k1 = (uint32_t)s;   /* member by member: this header is also C++ (CUDA) */
	k.k2 = (uint32_t)(s >> 32);
	return k;
}

/* The 32 random bits for the low half of an index under a key: one round of
 * a well-tested integer hash over the keyed counter. One round, not two: the
 * 32-bit multiplies are what limits the SIMD stochastic-rounding kernels, and
 * the SR tests (neighbours only, unbiased means, distinct seeds) hold with one. */
static inline MP_HD uint32_t rng_bits_keyed(rng_key k, uint32_t index_lo)
{
	return rng_mix32(index_lo ^ k.k1) ^ k.k2;
}

/* The 32 random bits for element `index` of the stream `seed`. */
static inline MP_HD uint32_t rng_bits(uint64_t seed, uint64_t index)
{
	return rng_bits_keyed(rng_key_for(seed, index), (uint32_t)index);
}

#endif
