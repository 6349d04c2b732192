/* The drift simulation's update draw, shared by the CPU (drift.c) and the
 * CUDA kernel (gpu/gpu_drift.cu) so that both give every (step, element) the
 * same fp32 update, bit for bit.
 *
 * libm's log and cos and CUDA's differ in the last bit now and then, which
 * is enough to flip the rounding to fp32 of a rare update; the normal draw
 * therefore uses its own log and cos built from +, -, *, / and sqrt only
 * (all correctly rounded in IEEE arithmetic on both sides, never fused, see
 * util/hd.h). They are accurate to a few units in the last place of a
 * double, far more than a random draw needs. */
#ifndef MIXPREC_DRIFT_DRIFT_UPDATE_H
#define MIXPREC_DRIFT_DRIFT_UPDATE_H

#include <math.h>
#include <stdint.h>

#include "util/hd.h"
#include "util/rng.h"

/* clang contracts a * b + c within an expression when the target has FMA;
 * GCC is stopped per function by MP_NO_CONTRACT */
#if defined(__clang__) && !defined(__CUDACC__)
#pragma STDC FP_CONTRACT OFF
#endif

/* log(x) for a normal positive double x: x = 2^k * m with m in
 * [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1), by its
 * series (|s| <= 0.172: eleven terms reach 2^-60). */
static inline MP_HD MP_NO_CONTRACT double drift_log(double x)
{
	uint64_t b;
#if defined(__CUDA_ARCH__)
	b = (uint64_t)__double_as_longlong(x);
#else
	__builtin_memcpy(&b, &x, 8);
#endif
	int k = (int)((b >> 52) & 0x7ff) - 1023;
	b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;   /* m in [1, 2) */
	if (b > 0x3ff6a09e667f3bcdull) {                            /* m > sqrt(2): halve it */
		b -= 0x0010000000000000ull;
		k++;
	}
	double m;
#if defined(__CUDA_ARCH__)
	m = __longlong_as_double((long long)b);
#else
	__builtin_memcpy(&m, &b, 8);
#endif
	double f = MP_DADD(m, -1.0);   /* exact */
	double s = MP_DDIV(f, MP_DADD(m, 1.0));
	double z = MP_DMUL(s, s);
	double p = 0.043478260869565216;                 /* 1/23 */
	p = MP_DADD(0.047619047619047616, MP_DMUL(z, p)); /* 1/21 */
	p = MP_DADD(0.05263157894736842, MP_DMUL(z, p));  /* 1/19 */
	p = MP_DADD(0.058823529411764705, MP_DMUL(z, p)); /* 1/17 */
	p = MP_DADD(0.06666666666666667, MP_DMUL(z, p));  /* 1/15 */
	p = MP_DADD(0.07692307692307693, MP_DMUL(z, p));  /* 1/13 */
	p = MP_DADD(0.09090909090909091, MP_DMUL(z, p));  /* 1/11 */
	p = MP_DADD(0.1111111111111111, MP_DMUL(z, p));   /* 1/9 */
	p = MP_DADD(0.14285714285714285, MP_DMUL(z, p));  /* 1/7 */
	p = MP_DADD(0.2, MP_DMUL(z, p));                  /* 1/5 */
	p = MP_DADD(0.3333333333333333, MP_DMUL(z, p));   /* 1/3 */
	double two_s = MP_DADD(s, s);
	double logm = MP_DADD(two_s, MP_DMUL(MP_DMUL(two_s, z), p));
	/* k * ln2 in two parts: ln2_hi has 32 trailing zero bits, so k * ln2_hi is exact */
	double dk = (double)k;
	return MP_DADD(MP_DMUL(dk, 6.93147180369123816490e-01),
	               MP_DADD(MP_DMUL(dk, 1.90821492927058770002e-10), logm));
}

/* cos(2 pi u) for u in [0, 1] with 2^-32 steps (or any u whose 4u - round(4u)
 * is exact): reduced to a quarter turn exactly, then Taylor series of sin or
 * cos on [-pi/4, pi/4] (terms to x^18: below 2^-60). */
static inline MP_HD MP_NO_CONTRACT double drift_cos2pi(double u)
{
	double t = MP_DMUL(u, 4.0);
	int q = (int)MP_DADD(t, 0.5);
	double x = MP_DMUL(MP_DADD(t, -(double)q), 1.5707963267948966);   /* pi/2 */
	double x2 = MP_DMUL(x, x);
	double c = 1.5619206968586225e-16;                  /* 1/18! */
	c = MP_DADD(-4.779477332387385e-14, MP_DMUL(x2, c)); /* -1/16! */
	c = MP_DADD(1.1470745597729725e-11, MP_DMUL(x2, c)); /* 1/14! */
	c = MP_DADD(-2.08767569878681e-09, MP_DMUL(x2, c));  /* -1/12! */
	c = MP_DADD(2.755731922398589e-07, MP_DMUL(x2, c));  /* 1/10! */
	c = MP_DADD(-2.48015873015873e-05, MP_DMUL(x2, c));  /* -1/8! */
	c = MP_DADD(0.001388888888888889, MP_DMUL(x2, c));   /* 1/6! */
	c = MP_DADD(-0.041666666666666664, MP_DMUL(x2, c));  /* -1/4! */
	c = MP_DADD(0.5, MP_DMUL(x2, c));                    /* 1/2! */
	c = MP_DADD(1.0, -MP_DMUL(x2, c));
	double s = 8.22063524662433e-18;                    /* 1/19! */
	s = MP_DADD(-2.8114572543455206e-15, MP_DMUL(x2, s)); /* -1/17! */
	s = MP_DADD(7.647163731819816e-13, MP_DMUL(x2, s));   /* 1/15! */
	s = MP_DADD(-1.6059043836821613e-10, MP_DMUL(x2, s)); /* -1/13! */
	s = MP_DADD(2.505210838544172e-08, MP_DMUL(x2, s));   /* 1/11! */
	s = MP_DADD(-2.7557319223985893e-06, MP_DMUL(x2, s)); /* -1/9! */
	s = MP_DADD(0.0001984126984126984, MP_DMUL(x2, s));   /* 1/7! */
	s = MP_DADD(-0.008333333333333333, MP_DMUL(x2, s));   /* -1/5! */
	s = MP_DADD(0.16666666666666666, MP_DMUL(x2, s));     /* 1/3! */
	s = MP_DADD(x, -MP_DMUL(MP_DMUL(x, x2), s));
	switch (q & 3) {
	case 0:  return c;
	case 1:  return -s;
	case 2:  return -c;
	default: return s;
	}
}

/* The fp32 update for (step, element) of a simulation with E elements:
 * dist 0 constant (mean), 1 uniform (mean +- std sqrt 3), 2 normal
 * (Box-Muller), drawn from the counter hash of (seed, step * E + element). */
static inline MP_HD MP_NO_CONTRACT float drift_update_draw(int dist, double mean, double std, uint64_t seed,
                                                           uint64_t elements, uint64_t step, uint64_t element)
{
	if (dist == 0)
		return (float)mean;
	uint64_t r = rng_mix64(seed * 0x9e3779b97f4a7c15ull ^ rng_mix64(step * elements + element));
	/* two uniforms in (0, 1], 32 bits each (exact) */
	double u1 = ((double)(uint32_t)r + 1.0) * 0x1p-32;
	double u2 = ((double)(uint32_t)(r >> 32) + 1.0) * 0x1p-32;
	if (dist == 1)   /* sqrt(3) = 1.7320508075688772 */
		return (float)MP_DADD(mean, MP_DMUL(MP_DMUL(std, 1.7320508075688772), MP_DADD(MP_DMUL(2.0, u1), -1.0)));
	double radius = MP_DSQRT(MP_DMUL(-2.0, drift_log(u1)));
	return (float)MP_DADD(mean, MP_DMUL(MP_DMUL(std, radius), drift_cos2pi(u2)));
}

#endif
