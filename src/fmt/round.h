/* Exact rounding of a real value into a format, in every mode. */
#ifndef MIXPREC_FMT_ROUND_H
#define MIXPREC_FMT_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"

/* An exact typed number (fmt/parse.h); only round_exact.c needs its GMP insides. */
typedef struct fmt_num fmt_num;

typedef enum {
	FMT_RNE,   /* nearest, ties to even */
	FMT_RNA,   /* nearest, ties away from zero */
	FMT_RTZ,   /* toward zero */
	FMT_UP,    /* toward +inf */
	FMT_DOWN,  /* toward -inf */
	FMT_SR,    /* stochastic: up with probability = fraction of the gap */
	FMT_RTO,   /* to odd: toward zero, then the last significand bit set when inexact */
	FMT_RNZ,   /* nearest, ties toward zero */
	FMT_SR_EQUAL,   /* stochastic: either neighbour with probability 1/2 when inexact */
	FMT_MODE_COUNT
} fmt_mode;

enum {
	FMT_FLAG_INEXACT = 1u << 0,
	FMT_FLAG_OVERFLOW = 1u << 1,
	FMT_FLAG_UNDERFLOW = 1u << 2,  /* tiny and inexact */
	/* The value has no encoding in the format: NaN into fp6/fp4 (no NaN),
	 * zero, negatives and -inf into e8m0 (no zero, no sign). The bits
	 * returned are fmt_nan_bits(f): +0 for fp6/fp4, the NaN 0xff for e8m0.
	 * Front ends report it as an error naming the format (fmt_invalid_reason). */
	FMT_FLAG_INVALID = 1u << 3,
};

typedef struct {
	fmt_mode mode;
	bool saturate;    /* overflow and inf give +-max instead of inf/NaN */
	uint32_t rbits;   /* sr and sr-equal: the 32 random bits for this element */
} fmt_round_ctl;

const char *fmt_mode_name(fmt_mode m);
/* "rne, rna, rtz, up, down, sr, rto, rnz, sr-equal" for error messages. */
const char *fmt_mode_known(void);
/* Looks a mode name up (case-insensitive); MP_EMODE when unknown. */
mp_status fmt_mode_parse(const char *name, fmt_mode *m);

/* The stochastic-rounding rule shared by every code path. SR rounds the
 * magnitude, as hardware does: with f the exact fraction of the gap by which
 * |x| exceeds its neighbour toward zero (f = frac_hi32 / 2^32, plus less than
 * 2^-32 more when `below`), the result moves away from zero iff
 * rbits < ceil(f * 2^32). So sr(-x) = -sr(x) for the same bits. */
static inline bool fmt_sr_round_up(uint32_t rbits, uint32_t frac_hi32, bool below)
{
	return (uint64_t)rbits < (uint64_t)frac_hi32 + (below ? 1u : 0u);
}

/* sr-equal's rule (CPFloat's mode 6, stochastic rounding with equal
 * probabilities): an inexact magnitude moves away from zero iff
 * rbits < 2^31, whatever the fraction of the gap, so each neighbour has
 * probability 1/2. It reads the element's rbits as sr does (one draw per
 * element, the same stream), and at an exact midpoint (f = 1/2) it takes
 * sr's decision for the same bits. A finite value beyond the largest one
 * has the largest value and the overflow result (inf, or NaN without inf)
 * as neighbours and takes either by the same rule, as CPFloat does. */
static inline bool fmt_sr_equal_round_up(uint32_t rbits)
{
	return rbits < 0x80000000u;
}

/* Round to odd (rto) keeps the significand truncated toward zero and sets
 * its last bit when the value is inexact, as CPFloat's CPFLOAT_RND_OD does
 * (src/cpfloat_template.h, commit 05df53ca, case 7): a finite value never
 * rounds to inf (beyond the largest value it gives the largest, as rtz
 * does), a nonzero value below the smallest subnormal gives the smallest
 * subnormal, and a format without fraction bits (e8m0, one bit of
 * precision, which CPFloat leaves truncated) rounds toward zero. rnz is
 * nearest with ties toward zero; exactly halfway between the largest value
 * and the next step of the unbounded grid it keeps the largest value
 * (CPFloat's CPFLOAT_RND_NZ gives inf there), beyond that it overflows as
 * rne does.
 *
 * Rounds the value (-1)^neg * sig * 2^(exp2 - 63) into f. sig has bit 63 set
 * unless the value is zero (sig == 0, sticky false); sticky says that nonzero
 * bits lie below sig. Returns the bit pattern; *flags (may be NULL) gets
 * FMT_FLAG_* bits. */
uint32_t fmt_round_parts(const fmt_info *f, const fmt_round_ctl *ctl, bool neg, long exp2,
                         uint64_t sig, bool sticky, unsigned *flags);

/* Why a value flagged FMT_FLAG_INVALID has no encoding in f, as a clause
 * to follow the format's name ("has no NaN (nor inf)"): a static string. The
 * value was a NaN (nan), a zero of either sign (zero) or negative (neg). */
const char *fmt_invalid_reason(const fmt_info *f, bool nan, bool zero, bool neg);

/* Rounds an exact number (inf and NaN included). */
uint32_t fmt_round_num(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_num *x, unsigned *flags);

/* Rounds a binary64 value (exactly: a double is already exact). */
uint32_t fmt_round_double(const fmt_info *f, const fmt_round_ctl *ctl, double x, unsigned *flags);



/* Absolute and relative error of `result` (a value of some format) against the
 * exact x, computed exactly and then converted to binary64. inf when the
 * result is infinite and x is not; NaN when x or the result is NaN. rel is 0 for an exact
 * zero and inf when x is 0 but the result is not. */
void fmt_error_of(const fmt_num *x, double result, double *abs_err, double *rel_err);

/* The same errors as text with `digits` significant digits, computed without
 * binary64's range limits (an error of 1e-100000 prints as such); "0",
 * "inf" and "nan" as above. */
void fmt_error_text(const fmt_num *x, double result, int digits, char *abs_text, char *rel_text, size_t n);

/* x rounded to nearest binary64 (subnormals and overflow to inf included). */
double fmt_num_to_double(const fmt_num *x);

/* What a finite value too large for f gives under ctl (by mode, saturation
 * and the format's specials: +-max, +-inf or a NaN), and what a typed
 * infinity of that sign gives: the rules fmt_round_parts and
 * fmt_round_double apply, for code that describes rounding (fmt/interval). */
uint32_t fmt_overflow_result(const fmt_info *f, const fmt_round_ctl *ctl, bool neg);
uint32_t fmt_inf_result(const fmt_info *f, const fmt_round_ctl *ctl, bool neg);

#endif
