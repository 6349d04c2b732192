/* Accumulation precision: a dot product (and a small GEMM) summed the way
 * an fp8 tensor core sums it, with a partial sum that keeps only a few bits
 * and, optionally, a promotion of that partial sum into an IEEE fp32
 * accumulator every so many products (DeepSeek-V3's fix).
 *
 * The model (sources, all checked for this module):
 *  - DeepSeek-V3 Technical Report (arXiv 2412.19437), sec. 3.3.2: on H800 the
 *    fp8 GEMM's accumulation "is limited to retaining around 14 bits", which
 *    for K = 4096 gives a maximum relative error of nearly 2%; the fix copies
 *    the partial result to fp32 registers on CUDA cores every N_C = 128
 *    elements (4 WGMMAs). DeepGEMM's SM90 fp8 kernels do it so: per
 *    BLOCK_K = 128, four K = 32 WGMMAs of which the first overwrites the
 *    accumulator (scale_d = 0, ScaleOut::Zero), then final_accum +=
 *    scale_a * scale_b * accum in fp32 (impls/sm90_fp8_gemm_1d2d.cuh). Sec. 3.5.2: the tensor core aligns the 32 mantissa
 *    products of a block by right-shifting to the maximum exponent, keeps the
 *    highest 14 bits of each and truncates the rest, and accumulates into the
 *    register with 14-bit precision too (quoted in
 *    deepseek-ai/DeepSeek-V3 issues #197 and #847, deepseek-ai/DeepGEMM issue #37).
 *  - Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor
 *    cores", PeerJ Comput. Sci. 7:e330 (2021): products are exact, a block's
 *    products and the addend are aligned to the largest exponent, the bits
 *    shifted out are truncated, the sum is normalised once (round toward
 *    zero), with no rounding per addition.
 *  - Khattak and Mikaitis, "Accurate models of NVIDIA tensor cores" (arXiv
 *    2512.07004) and their MATLAB models (north-numerical-computing/
 *    MATLAB-tensor-core, models/H100TC.m): for fp8 inputs on H100 a block of
 *    32 products plus the accumulator, aligned to the largest exponent,
 *    13 fraction bits kept (neab = -10 from fp32's 23), truncation, final
 *    round toward zero; blocks chained by recursive summation.
 *
 * So here, for bits = N < 24: a block of `block` exact products and the
 * partial sum are each truncated toward zero to a multiple of 2^(E - N + 1),
 * E the exponent of the largest of them in magnitude, summed exactly, and
 * the sum stored in fp32 rounded toward zero. (Khattak and Mikaitis add one
 * alignment bit when the largest product's significand is >= 2; this model
 * leaves that detail out.) bits = 24 is an IEEE fp32 accumulator instead:
 * every product added in order, rounded to nearest even, as the CUDA cores
 * and the CPU's sgemm-based emulation do. Promotion adds the partial sum to
 * an fp32 accumulator (round to nearest) and restarts it at zero.
 *
 * What this model gives (mixprec accum, fp8-e4m3 operands, 100 dots of
 * K = 4096, 14 bits): on positive operands (uniform [0, 1)) the largest
 * relative error is 6.9% unpromoted and 0.057% promoted every 128; the
 * promoted sum cannot do better than one 128-long partial sum (0.10% at
 * worst, 0.05% on average), whose errors all have the same sign. On
 * operands of both signs the relative error |err| / |exact| is ruled by
 * the dots whose exact value is small (2.1% and 1.4% here, a factor of ten
 * either way with another seed); the normwise error |err| / sum |x y|, the
 * measure of the standard bound |err| <= gamma_K sum |x_k y_k| (Higham,
 * Accuracy and Stability of Numerical Algorithms, sec. 3.1), is 0.0087%
 * unpromoted and 0.00069% promoted. DeepSeek-V3's "nearly 2%" names
 * neither its operands nor its measure. The model is not tuned to any of
 * these figures: block, bits and truncation are the sources' own. */
#ifndef MIXPREC_TRAIN_ACCUM_H
#define MIXPREC_TRAIN_ACCUM_H

#include <stdbool.h>
#include <stddef.h>

#include "fmt/format.h"
#include "util/status.h"

enum {
	ACCUM_BITS_MIN = 2,
	ACCUM_BITS_FP32 = 24,      /* an IEEE fp32 accumulator, round to nearest per add */
	ACCUM_BLOCK_HOPPER = 32,   /* products per aligned block, Hopper fp8 (see above) */
	ACCUM_BLOCK_MAX = 1 << 20,
};

typedef struct {
	int bits;              /* significant bits of the partial sum, ACCUM_BITS_MIN..ACCUM_BITS_FP32 */
	size_t block;          /* products aligned together, 1..ACCUM_BLOCK_MAX (ignored at 24 bits) */
	size_t promote_every;  /* products between promotions to fp32; 0 = never */
} accum_cfg;

/* MP_OK when c is within the ranges above, else MP_EINVAL with what is
 * wrong in err ("bits 30 is out of range (2..24)"). */
mp_status accum_cfg_check(const accum_cfg *c, char *err, size_t errlen);

/* The dot product sum_k x[k*incx] * y[k*incy] of K terms in order, summed as
 * the model above says (c checked by the caller). The operands are used as
 * they are: round them to the GEMM format first. Products are exact in
 * double for operands of up to 26 significant bits (every format but fp32:
 * fp32 operands give products rounded once, in double). K = 0 gives 0. */
float accum_dot(const float *x, size_t incx, const float *y, size_t incy, size_t K, const accum_cfg *c);

/* One block of the model: acc plus the n (<= ACCUM_BLOCK_MAX) products
 * x[k*incx] * y[k*incy], all aligned to the largest exponent among them and
 * acc, truncated to bits (< 24) and summed exactly, stored rounded toward
 * zero. accum_dot with bits < 24 is a chain of these. */
float accum_block_add(float acc, const float *x, size_t incx, const float *y, size_t incy, size_t n, int bits);

/* out[i*ldo + j] = (add ? out[i*ldo + j] : 0) + accum_dot(a row i, b column j)
 * for i < M, j < N, where a row i is a[i*a_rs + k*a_ks] and b column j is
 * b[j*b_cs + k*b_ks], k < K. The previous value is added in fp32 after the
 * dot (an epilogue, as a GEMM with beta = 1 on CUDA cores). Strided
 * operands (a_ks or b_ks not 1) are first copied contiguous: MP_ENOMEM. */
mp_status accum_gemm(float *out, size_t ldo, bool add, const float *a, size_t a_rs, size_t a_ks, const float *b,
                     size_t b_cs, size_t b_ks, size_t M, size_t N, size_t K, const accum_cfg *c);

/* The exact value of sum_k x[k] * y[k] (finite operands), rounded once to
 * double, computed with MPFR; MP_ENOMEM. */
mp_status accum_exact_dot(const float *x, const float *y, size_t K, double *out);

/* --- the error of a K-long dot product against K (mixprec accum) --- */

typedef enum {
	ACCUM_DIST_POSITIVE,   /* x, y uniform on [0, 1): every product positive */
	ACCUM_DIST_MIXED,      /* x, y uniform on [-1, 1): products of both signs */
} accum_dist;

/* "positive" / "mixed"; accum_dist_parse returns false for another name. */
const char *accum_dist_name(accum_dist d);
bool accum_dist_parse(const char *name, accum_dist *d);

typedef struct {
	double max_rel, mean_rel;   /* over the trials: |dot - exact| / |exact| */
	double max_scaled;          /* max |dot - exact| / sum |x_k y_k| */
} accum_error;

/* accum --seed when not given */
#define ACCUM_SEED_DEFAULT 1

/* The relative error of trials K-long dots of seeded random operands drawn
 * from dist and rounded to fmt (RNE, saturating), each summed under c,
 * against the exact dot. Trial t of seed s draws the same operands for every
 * K prefix and every c, so rows differ only in what is compared. A trial
 * whose exact dot is 0 counts in max_scaled only. MP_EINVAL for K = 0 or
 * trials = 0, MP_ENOMEM. */
mp_status accum_error_measure(accum_error *out, fmt_id fmt, accum_dist dist, size_t K, size_t trials,
                              unsigned long long seed, const accum_cfg *c);

#endif
