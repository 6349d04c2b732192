/* Bulk rounding of fp32 arrays, with SIMD paths chosen at run time.
 *
 * Encoded elements are uint16_t for fp16/bf16, uint8_t for fp8 formats and
 * uint32_t for fp32/tf32 (tf32 patterns in the low 19 bits). fp6, fp4, FNUZ
 * and e8m0 take one uint8_t each (patterns in the low bits) and run element
 * by element whatever path is asked (!fmt_is_kernel). Every path gives
 * bit-identical results; stochastic rounding draws element i's random bits
 * from rng_bits(seed, index0 + i), so results do not depend on the path, the
 * thread split or the call boundaries. */
#ifndef MIXPREC_FMT_BULK_H
#define MIXPREC_FMT_BULK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "fmt/round.h"

typedef enum {
	FMT_SIMD_AUTO = -1,
	FMT_SIMD_PORTABLE = 0,
	FMT_SIMD_AVX2,        /* AVX2 + F16C */
	FMT_SIMD_AVX512,      /* AVX-512 F/BW/VL/DQ + BF16 */
	FMT_SIMD_COUNT
} fmt_simd;

typedef struct {
	fmt_id fmt;
	fmt_mode mode;      /* FMT_RNE, FMT_SR, FMT_RTO, FMT_RNZ or FMT_SR_EQUAL (fmt_bulk_mode_ok) */
	bool saturate;
	uint64_t seed;      /* sr, sr-equal */
	uint64_t index0;    /* sr, sr-equal: index of element 0 in the stream */
} fmt_bulk_opts;

/* The best path this CPU supports (detected once). */
fmt_simd fmt_simd_best(void);
bool fmt_simd_available(fmt_simd path);
const char *fmt_simd_name(fmt_simd path);
/* Element size of the encoded format in bytes. */
size_t fmt_bulk_elem_size(fmt_id fmt);

/* The modes the bulk functions take: rne, sr, rto, rnz, sr-equal (not rna,
 * rtz, up, down). */
bool fmt_bulk_mode_ok(fmt_mode m);

/* fp32 -> format. MP_EUNSUPPORTED for a mode fmt_bulk_mode_ok refuses or a
 * path the CPU lacks. */
mp_status fmt_bulk_encode(fmt_simd path, const fmt_bulk_opts *o, void *out, const float *in, size_t n);
/* format -> fp32 (exact; NaN becomes fp32's canonical quiet NaN). */
mp_status fmt_bulk_decode(fmt_simd path, fmt_id fmt, float *out, const void *in, size_t n);
/* Rounds x in place to values of the format (encode then decode). */
mp_status fmt_bulk_quantize(fmt_simd path, const fmt_bulk_opts *o, float *x, size_t n);

/* Accumulates in a format, in one pass: x[i] = q(x[i] + u[i]), the sum taken
 * in fp32 and q rounding it to the format (mode o->mode; SR element i uses
 * index0 + i), so x holds values of the format. With comp (not NULL) the sum
 * is compensated (Kahan): y = u[i] - comp[i]; t = q(x[i] + y);
 * comp[i] = q_rne((t - x[i]) - y); x[i] = t. *unchanged (may be NULL) gets the
 * number of elements whose x did not change. */
mp_status fmt_bulk_accumulate(fmt_simd path, const fmt_bulk_opts *o, float *x, float *comp,
                              const float *u, size_t n, size_t *unchanged);

#endif
