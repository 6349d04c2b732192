/* What a block format's cast does to a generated tensor (mixprec quantize
 * --random): n values drawn from a seeded distribution, a few planted
 * outliers, cast as one tensor by quant_bulk (any block format: MX's e8m0
 * scale per block, or NVFP4's fp32 tensor scale and e4m3 scale per 16)
 * after, optionally, the trainer's 16-point RHT (block_rht16_rows), and
 * measured after rotating back.
 *
 * The values are a vector cut into consecutive blocks; under the RHT each
 * 16 is one group of the transform and, with NVFP4's blocks of 16, one
 * block, as in the trainer's weight-gradient GEMM, whose operands are
 * rotated and blocked along the same 16 tokens.
 *
 * Every figure is computed from fp32 values with fixed-order binary64
 * sums, and the cast is quant_bulk's (the same bits on every SIMD path), so
 * a seed gives the same figures on every machine. Depends on fmt/, quant/,
 * drift/ (its platform-independent normal draw) and util/; never prints. */
#ifndef MIXPREC_TRAIN_RHT_PROBE_H
#define MIXPREC_TRAIN_RHT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/round.h"
#include "quant/quant.h"
#include "util/status.h"

/* Mean 0, standard deviation 1: normal, uniform on +-sqrt 3, or Laplace
 * (heavier tails: e^-|x| sqrt 2, with more values near 0 and beyond 3). */
typedef enum { PROBE_DIST_GAUSS, PROBE_DIST_UNIFORM, PROBE_DIST_LAPLACE } probe_dist;

/* Where the outliers go: one each in K distinct blocks (of rht_probe_cfg's
 * unit values) chosen at random (at a random position in the block), or at
 * K distinct positions anywhere in the tensor (two may share a block). */
typedef enum { PROBE_PLACE_BLOCKS, PROBE_PLACE_TENSOR } probe_place;

/* The largest n (values) and draws accepted. */
#define PROBE_N_MAX ((size_t)1 << 24)
#define PROBE_DRAWS_MAX 100000

typedef struct {
	size_t n;              /* values: a positive multiple of unit, at most PROBE_N_MAX */
	probe_dist dist;
	size_t unit;           /* the blocks of PROBE_PLACE_BLOCKS: n / unit of unit values; 0: 16 */
	size_t outliers;       /* K, at most n (tensor) or n / unit (blocks) */
	double outlier_value;  /* each outlier is +V or -V (a positive finite V) */
	probe_place place;
	uint64_t seed;         /* the values, the outliers and the SR draws */
	fmt_mode mode;         /* the elements: FMT_RNE or FMT_SR */
	size_t draws;          /* R: 1 for RNE; SR draw r uses the stream rng_mix64(rng_mix64(seed) + r) */
} rht_probe_cfg;

/* One arm (with or without the RHT). Errors are ||Q - x|| / ||x|| (2-norms)
 * in the original domain, Q rotated back under the RHT; H is orthogonal,
 * so error, sr_var and sr_bias equal those of the rotated values the GEMM
 * multiplies (to fp32 rounding). Over R draws, an error is the root mean
 * square over the draws. */
typedef struct {
	double error;          /* all the values */
	double inlier_error;   /* the values that are not outliers */
	double outlier_error;  /* the outliers (0 when there are none) */
	double flushed;        /* share of the cast values (rotated under RHT) nonzero and cast to 0 */
	double saturated;      /* share clipped: |v| > max_elem x scale (nvfp4: 6 s_b s_t), scale > 0 */
	/* SR, R >= 2 (else 0): the mean over elements of each element's
	 * variance over the draws (unbiased, 1 / (R - 1)), divided by
	 * ||x||^2 / n; the bias ||mean_r Q_r - x|| / ||x||; and the bias an
	 * unbiased SR shows from sampling alone, sqrt(sr_var / R). */
	double sr_var, sr_bias, sr_noise;
	float tensor_scale;    /* s_t of the cast (nvfp4; MX: 1) */
	double bits;           /* storage per element: elements and block scales, and nvfp4's
	                        * 32-bit tensor scale shared by the n values */
} rht_probe_arm;

/* The cast of one arm: a block format with its rule and block size (as
 * quant_opts; mode and seed come from rht_probe_cfg), and whether the values
 * are rotated first. */
typedef struct {
	quant_id fmt;
	quant_rule rule;       /* MX only */
	size_t block;          /* elements per block; 0: the format's default */
	bool rht;
} rht_probe_cast;

/* Checks c: MP_OK, or MP_EINVAL with err naming the field. */
mp_status rht_probe_cfg_check(const rht_probe_cfg *c, char *err, size_t errlen);

/* The values of c into x[0..n) and whether each is an outlier into
 * is_outlier[0..n) (may be NULL). Value i is drift_update_draw's for
 * (seed, element i) (drift/drift_update.h), an outlier replaces the value
 * at its place. c must pass rht_probe_cfg_check. MP_ENOMEM when out of memory. */
mp_status rht_probe_values(float *x, bool *is_outlier, const rht_probe_cfg *c);

/* Checks k against c: MP_OK, or MP_EINVAL with err saying why: the
 * options must pass quant_opts_check, n must be a multiple of the block
 * and, under the RHT, of 16. */
mp_status rht_probe_cast_check(const rht_probe_cast *k, const rht_probe_cfg *c, char *err, size_t errlen);

/* Casts x[0..c->n) (rht_probe_values's) c->draws times as k says into *out.
 * MP_EINVAL for a bad c or k, MP_ENOMEM when out of memory. */
mp_status rht_probe_run(rht_probe_arm *out, const float *x, const bool *is_outlier, const rht_probe_cfg *c,
                        const rht_probe_cast *k);

#endif
