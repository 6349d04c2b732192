/* Block-scaled quantization: OCP MX v1.0 (MXFP8, MXFP6, MXFP4, MXINT8: an
 * e8m0 power-of-two scale per block of 32) and NVFP4 (e2m1 elements, an e4m3
 * scale per block of 16 and an fp32 tensor scale).
 *
 * The rules, exactly (amax = max |V_i| over the block, exact; L =
 * floor(log2 amax); the scale X = 2^k; k clamped to [-127, 127]; an
 * all-zero block gets k = -127, as log2 0 = -inf clamps; the e8m0 byte is
 * k + 127; elements are V_i / X rounded (rne or sr) with saturation to the
 * element format's max):
 * - MX, ocp (OCP MX v1.0 section 6.3; torchao's FLOOR, also named floor):
 *   k = L - emax_elem.
 * - MX, ceil (NVIDIA Transformer Engine's MXFP8 rule; cuBLAS's not verified):
 *   k = ceil(log2(amax / max_elem)). It never saturates an element; it can
 *   cost one binade of range.
 * - MX, even (torchao's EVEN): amax's significand rounded to the element's
 *   mbits fraction bits of its top binade, ties away, then floor: k = L -
 *   emax_elem, plus 1 when amax >= (2 - 2^-(mbits + 1)) * 2^L (torchao adds
 *   2^(22 - mbits) to the fp32 pattern and keeps the exponent).
 * - MX, rceil (torchao's RCEIL, after cuBLAS's ue8m0 recipe as its
 *   docstring says): d = fp32_rne(amax / max_elem), rounded once from the
 *   exact quotient; k = ceil(log2 d) exactly (d = 0: -127; d = inf: 127). It differs from ceil only where
 *   the rounding of d crosses a power of two: for an fp32 amax only when
 *   amax / max_elem lies in (2^-127, 2^-127 (1 + 2^-23)).
 * - MX, torchao-ceil (torchao's CEIL, which is not Transformer Engine's):
 *   k = ceil(log2 amax) - emax_elem.
 * Where torchao's to_mx (mx_tensor.py, pytorch/ao commit b88afaf4) differs,
 * on fp32 inputs, all in the elements or out of fp32's range, none in the
 * e8m0 byte of torchao's five element formats: it clamps FLOOR, CEIL and
 * EVEN to [-127, 128] (128, e8m0 0xff = NaN, needs L - emax_elem = 128,
 * beyond an fp32 amax for emax_elem >= 1; an mxint8 block (emax_elem 0)
 * from EVEN at amax >= (2 - 2^-7) 2^127 gets 127 here); it divides the
 * elements by max(X, 2^-126) under those rules and multiplies them by 1
 * instead of 2^127 under RCEIL when k = -127, where the elements here are
 * V_i / X; its RCEIL takes log2 in fp32, which can round k + 2^-23 / ln 2
 * down to k, where here ceil(log2 d) is exact. torchao takes no inputs
 * beyond fp32; the exact amax here can be any real.
 * - nvfp4: s_t = fp32_rne(amax_tensor / (448 * 6)); s_b = e4m3_rne(block_amax
 *   / (6 * s_t)); elements e2m1(V_i / (s_b * s_t)) saturating at 6. Every
 *   quotient is taken exactly and rounded once. A block whose s_b is 0 (all
 *   zero, or rounded to 0), and every block when s_t is 0, has elements 0.
 *
 * Defined edge cases:
 * - A subnormal fp32 amax is exact: L is the position of its top bit (every
 *   rule above clamps it to -127 for emax_elem >= 1). mxint8 (emax_elem 0,
 *   a format torchao lacks) follows the exact rules: torchao-ceil gives -127
 *   to a subnormal amax, where torchao's CEIL formula on the bit fields
 *   (exponent field 0 read as -127, plus one) would give -126.
 * - mxint8: elements are int8 codes for code x 2^-6 (elem_shift), V / X
 *   rounded to an integer in units of 2^-6, saturating at +-127.
 * - Inputs are exact reals (fmt_num), never rounded to fp32 or binary64
 *   first. inf and NaN have no place in a block (OCP gives the whole block a
 *   NaN scale): quant_run refuses them with MP_EINVAL naming the index.
 * - The last block may be shorter than the block size; its rule is the same.
 * - Zero keeps its sign in the elements, and a negative element that rounds
 *   to zero is -0 (fp4 -0 is 0x8), also in a block whose s_b is 0.
 * - SR (elements only; scales are always as the rules say): element i of the
 *   input draws rng_bits(seed, i), so results are reproducible and do not
 *   depend on the block size, the code path or the thread split.
 * - nvfp4: s_b is rounded with saturation at 448; the quotient can only
 *   exceed 448 when s_t is an fp32 subnormal. A tensor whose amax / 2688
 *   overflows fp32 is refused (MP_EINVAL).
 *
 * Depends on fmt/ and util/ only; returns statuses, never prints. */
#ifndef MIXPREC_QUANT_QUANT_H
#define MIXPREC_QUANT_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/bulk.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "quant/quant_rule.h"

typedef enum {
	QUANT_MXFP8_E4M3,
	QUANT_MXFP8_E5M2,
	QUANT_MXFP6_E3M2,
	QUANT_MXFP6_E2M3,
	QUANT_MXFP4,
	QUANT_NVFP4,
	QUANT_MXINT8,
	QUANT_COUNT
} quant_id;


typedef struct {
	quant_id id;
	const char *name;      /* "mxfp8-e4m3", ..., "nvfp4" */
	const char *summary;   /* one line for help texts */
	fmt_id elem;           /* the element format */
	int block;             /* default elements per block: 32 (MX), 16 (nvfp4) */
	int emax_elem;         /* OCP's emax_elem: exponent of the element's max */
	int mbits;             /* fraction bits of the element's top binade (the even rule rounds amax to them) */
	int elem_shift;        /* an element stands for its format's value times 2^elem_shift (mxint8: -6) */
	bool nvfp4;            /* two-level: fp32 tensor scale, e4m3 block scales (MX: e8m0) */
} quant_info;

/* The largest --block accepted. */
#define QUANT_BLOCK_MAX 65536
/* quantize --seed when not given */
#define QUANT_SEED_DEFAULT 0

/* The row of a block format; id must be < QUANT_COUNT. */
const quant_info *quant_get(quant_id id);
/* Looks a block-format name up, case-insensitively; NULL when unknown. */
const quant_info *quant_find(const char *name);
/* "mxfp8-e4m3, mxfp8-e5m2, mxfp6-e3m2, mxfp6-e2m3, mxfp4, nvfp4, mxint8". */
const char *quant_known_names(void);
/* "ocp", "ceil", "even", "rceil" or "torchao-ceil". */
const char *quant_rule_name(quant_rule r);
/* The rule names for messages: "ocp (or floor), ceil, even, rceil, torchao-ceil". */
const char *quant_rule_names(void);
/* A rule name (or "floor", the ocp rule) into *r, case-insensitively;
 * MP_EINVAL when unknown. */
mp_status quant_rule_parse(const char *name, quant_rule *r);
/* --block's value: elements per block, 1..QUANT_BLOCK_MAX, in the full
 * number syntax; MP_EINVAL with the message, naming the option, in err. */
mp_status quant_parse_block(const char *text, size_t *block, char *err, size_t errlen);

/* max_elem: the largest value an element stands for (fmt_max x 2^elem_shift;
 * mxint8: 127 x 2^-6 = 1.984375). */
double quant_elem_max(const quant_info *q);

/* Storage per element, scales included: the element width plus the scale's
 * 8 bits shared by `block` elements (MXFP4: 4.25, NVFP4: 4.5); the tensor
 * scale of nvfp4 is not counted (32 bits per tensor). block 0: the default. */
double quant_bits_per_elem(const quant_info *q, size_t block);

/* The value an element stands for: element(bits) x scale(scale_bits) x
 * tensor_scale (tensor_scale is ignored for MX: pass 1). Exact. NaN for an
 * e8m0 scale byte 0xff or an e4m3 NaN scale. */
double quant_decode(const quant_info *q, uint32_t bits, uint32_t scale_bits, double tensor_scale);

/* The value of the e4m3 code c (its low 8 bits; nvfp4's scale format),
 * exactly, without fmt's general decoder: per cast, every scale code's
 * table entry is made from it. NaN for 0x7f and 0xff. */
double quant_e4m3_value(uint32_t c);

/* The value of the e8m0 code c (its low 8 bits; MX's scale format),
 * 2^(c - 127), as quant_e4m3_value: NaN for 0xff. */
double quant_e8m0_value(uint32_t c);

typedef struct {
	quant_id fmt;
	quant_rule rule;   /* MX only; nvfp4 has one rule */
	fmt_mode mode;     /* of the elements: quant_mode_ok's */
	uint64_t seed;     /* SR: element i (from 0) uses rng_bits(seed, i) */
	size_t block;      /* elements per block, 1..QUANT_BLOCK_MAX; 0: the format's default */
} quant_opts;

/* Where an element saturates: its nearest value without saturation would
 * lie past the largest, that is past max + half the spacing there (e2m1 7,
 * e4m3 464, e5m2 61440), or at that tie itself when rounding to even goes
 * up (tie_over: the largest value's last fraction bit is 1). A value
 * between max and thr merely rounds down onto max, as it would with more
 * range. The one definition of "saturates" for quantize, the workbench and
 * the training statistics. */
void quant_overflow_threshold(const fmt_info *f, double *thr, bool *tie_over);

/* quant_elem.flags */
enum {
	QUANT_SATURATED = 1u << 0,   /* clipped: the nearest value of V_i / scale, were the element
	                              * format's range unbounded, lies past its largest value
	                              * (quant_overflow_threshold); the training casts count the same */
	QUANT_FLUSHED = 1u << 1,     /* V_i nonzero, element zero */
};

typedef struct {
	uint32_t bits;     /* element pattern (low width bits) */
	double value;      /* element x scale x tensor scale (exact) */
	unsigned flags;    /* QUANT_* */
} quant_elem;

typedef struct {
	size_t begin, count;   /* the block holds elements [begin, begin + count) */
	uint32_t scale_bits;   /* e8m0 byte (MX) or e4m3 byte (nvfp4) */
	double scale;          /* X = 2^scale_exp (MX) or s_b (nvfp4), exact */
	int scale_exp;         /* MX: the exponent; nvfp4: 0 */
	bool clamped;          /* MX: the exponent was clamped to [-127, 127] */
	double amax;           /* max |V_i| to the nearest binary64 (inf or 0 beyond its range) */
	size_t amax_at;        /* an element whose |V_i| is the amax (its exact value) */
	size_t nsaturated;     /* elements with QUANT_SATURATED */
	size_t nflushed;       /* elements with QUANT_FLUSHED */
	double rel_error;      /* ||value - V|| / ||V|| (2-norms; 0 for an all-zero block), computed
	                        * exactly then rounded: right for inputs beyond binary64's range */
} quant_block;

typedef struct {
	quant_opts opts;          /* with block resolved */
	size_t n, nblocks;
	double tensor_scale;      /* nvfp4: s_t (an fp32 value); MX: 1 */
	uint32_t tensor_scale_bits;   /* nvfp4: s_t's fp32 pattern; MX: 0x3f800000 */
	quant_block *blocks;      /* nblocks */
	quant_elem *elems;        /* n */
	size_t nsaturated, nflushed;   /* over all blocks */
	double rel_error;         /* ||value - V|| / ||V|| over all elements */
	size_t bad;               /* after MP_EINVAL for an input: its index */
} quant_result;

/* The element modes of the block formats: rne, sr, rto, rnz, sr-equal
 * (fmt_bulk_mode_ok's: the bulk encoder rounds the elements). */
#define QUANT_MODES "rne, sr, rto, rnz or sr-equal"
static inline bool quant_mode_ok(fmt_mode m)
{
	return m == FMT_RNE || m == FMT_SR || m == FMT_RTO || m == FMT_RNZ || m == FMT_SR_EQUAL;
}
/* Whether the mode draws random bits per element (sr, sr-equal). */
static inline bool quant_mode_draws(fmt_mode m)
{
	return m == FMT_SR || m == FMT_SR_EQUAL;
}

/* Checks o (format, rule, mode, block): MP_OK, or MP_EINVAL with err
 * saying what is wrong. */
mp_status quant_opts_check(const quant_opts *o, char *err, size_t errlen);

/* Quantizes x[0..n) exactly. On failure err says why; on MP_EINVAL, when
 * an input is to blame (inf, NaN, nvfp4 tensor scale overflow), r->bad is
 * its index. MP_ENOMEM when out of memory. r is freed by quant_result_free
 * in every case (a zeroed r stays safe to free). n may be 0. */
mp_status quant_run(const quant_opts *o, const fmt_num *x, size_t n, quant_result *r, char *err, size_t errlen);
void quant_result_free(quant_result *r);

/* The 16-point random Hadamard transform of NVIDIA's NVFP4 recipe, exactly:
 * every 16 consecutive values v (a row vector) become v S H16 / 4, H16
 * Sylvester's Hadamard matrix and S = diag(signs), bit i set for -1; values
 * past the last full 16 stay. The matrix is orthogonal: norms and errors
 * measured after it equal those of the rotated-back values. MP_EINVAL for
 * an inf or NaN. The trainer applies the same transform in fp32
 * (train/blockcast.h, block_rht16_rows) with QUANT_RHT_SIGNS. */
mp_status quant_rht16(fmt_num *x, size_t n, uint16_t signs);

/* --- bulk: fp32 arrays (quant_bulk.c) --- */

/* nvfp4's tensor scale of an fp32 array: s_t = fp32_rne(amax / 2688).
 * MP_EINVAL when an element is inf or NaN (*bad, may be NULL, gets its
 * index). */
mp_status quant_bulk_tensor_scale(float *s_t, const float *in, size_t n, size_t *bad);

/* Decodes blocks of elements back to fp32 in place of their inputs:
 * v[i] = tab[r * stride + elems[i]] * mul[b] for element i of block b (bs
 * elements each, the last may be shorter), r = rows[b] (rows NULL: r = b;
 * mul NULL: 1), on the best SIMD path; each row holds nvals entries (the
 * codes lie below it). Returns how many elements were
 * nonzero in v and are 0 after. */
size_t quant_bulk_decode(float *v, const uint8_t *elems, size_t n, size_t bs, const float *tab, size_t stride,
                         size_t nvals, const uint8_t *rows, const float *mul);

/* What quant_bulk_decode_stats reads and gathers besides the decode. */
typedef struct {
	const float *old;      /* the blocks' inputs, all finite (v itself when v is decoded in place) */
	const uint32_t *over;  /* per block: the |old| whose patterns lie above it count */
	float *amax;           /* per block: out, the largest |old| */
	size_t count;          /* out: how many counted */
} quant_decode_stats;

/* quant_bulk_decode from ds->old into v (the underflow against old), and in
 * the same pass each block's amax and count (ds). */
size_t quant_bulk_decode_stats(float *v, const uint8_t *elems, size_t n, size_t bs, const float *tab,
                               size_t stride, size_t nvals, const uint8_t *rows, const float *mul,
                               quant_decode_stats *ds);

/* An MX cast's scale tables: sval[k] scale code k's value, over[k] the
 * |x| patterns above which an element of a block of scale code k counts
 * (quant_decode_stats). The elements decode to their format's own values
 * (fp32 holds each exactly). */
typedef struct {
	const float *sval;
	const uint32_t *over;
} quant_mx_tabs;

/* What quant_mx_rne_cols and _rows give besides the values, per block
 * (for _cols, block j is column j). */
typedef struct {
	uint8_t *scales;   /* out: the e8m0 byte */
	float *amax;       /* out: the largest |x| */
	size_t under;      /* added to: nonzero elements decoded to 0 */
	size_t count;      /* added to: elements counted against over */
	uint32_t *work;    /* _cols: 3 cols entries of scratch */
} quant_fused_stats;

/* MX rne (o: floating-point elements, o->mode FMT_RNE) of the blocks that
 * run down the columns of a strip of h rows by cols (a multiple of 8) at
 * in, row stride ld: block j is column j, o->block rows long (h <= o->block; rows
 * h.. count as zeros), each element encoded and decoded straight into out
 * (in itself or apart, the same stride), on the best SIMD path. Values,
 * scales, amax and counts are those of quant_bulk and then
 * quant_bulk_decode_stats (tab: the element values, mul t->sval[scale]) on the
 * block-ordered copy of the strip, without making the copy. MP_EINVAL,
 * with nothing written, when a column holds an inf or NaN;
 * MP_EUNSUPPORTED for other formats, modes or shapes. */
mp_status quant_mx_rne_cols(float *out, const float *in, size_t h, size_t cols, size_t ld, const quant_opts *o,
                            const quant_mx_tabs *t, quant_fused_stats *cs);

/* MX rne of the blocks of in[0..n) (o as for _cols; n a multiple of the
 * block o->block, itself a multiple of 8), encoded and decoded straight
 * into out (in itself or apart), on the best SIMD path: values, scales,
 * amax and counts those of quant_bulk and then quant_bulk_decode_stats.
 * *done: the elements done, n or the start of the first block that holds
 * an inf or NaN (MP_EINVAL; the blocks from there on unwritten).
 * MP_EUNSUPPORTED for other formats, modes or lengths. */
mp_status quant_mx_rne_rows(float *out, const float *in, size_t n, const quant_opts *o, const quant_mx_tabs *t,
                            quant_fused_stats *cs, size_t *done);

/* nvfp4 in blocks of 16 (o: QUANT_NVFP4, o->block 0 or 16, o->mode
 * FMT_RNE or FMT_SR) of in[0..n) (n a multiple of 16; element i of the
 * stream index0 + i), tensor scale s_t > 0, encoded and decoded straight
 * into out (in itself or apart), on the best SIMD path: the values (code e
 * of a block of scale code k: e2m1(e) x e4m3(k) x s_t rounded once to
 * fp32), scales, amax and counts (over: per scale code, as
 * quant_decode_stats) are those of quant_bulk and then
 * quant_bulk_decode_stats. *done as for _rows (MP_EINVAL at an inf or
 * NaN). MP_EUNSUPPORTED for other formats, modes or lengths, s_t 0, and
 * for sr indices that do not share their top 32 bits; ENOMEM. */
mp_status quant_nv_rows(float *out, const float *in, size_t n, const quant_opts *o, float s_t, uint64_t index0,
                        const uint32_t over[256], quant_fused_stats *cs, size_t *done);

/* Quantizes the fp32 array in[0..n) (element index0 + i of a tensor, index0
 * a multiple of the block size) into elems (one element per byte, its low
 * bits) and scales (one byte per block: e8m0 or e4m3), bit-identical to
 * quant_run on the same values. s_t: nvfp4's tensor scale (from
 * quant_bulk_tensor_scale over the whole tensor); ignored for MX. path
 * selects the SIMD path as fmt/bulk.h does. MP_EINVAL when an element is inf
 * or NaN (*bad, may be NULL, gets its index; the outputs are then
 * unspecified) or o is invalid; MP_EUNSUPPORTED for a path the CPU lacks. */
mp_status quant_bulk(fmt_simd path, const quant_opts *o, float s_t, uint64_t index0, uint8_t *elems,
                     uint8_t *scales, const float *in, size_t n, size_t *bad);

#endif
