/* The table of number formats; everything else about a format derives from it. */
#ifndef MIXPREC_FMT_FORMAT_H
#define MIXPREC_FMT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

typedef enum {
	FMT_FP32,
	FMT_TF32,
	FMT_FP16,
	FMT_BF16,
	FMT_E4M3,
	FMT_E5M2,
	FMT_E3M2,        /* OCP MX fp6 */
	FMT_E2M3,        /* OCP MX fp6 */
	FMT_E2M1,        /* OCP MX fp4 */
	FMT_E4M3FNUZ,
	FMT_E5M2FNUZ,
	FMT_E8M0,        /* OCP MX scale: unsigned power of two */
	FMT_INT8,        /* two's complement integers (the MXINT8 element, ml_dtypes int4/int2) */
	FMT_INT4,
	FMT_INT2,
	FMT_E3M4,        /* ml_dtypes float8_e3m4: IEEE-like */
	FMT_E4M3IEEE,    /* ml_dtypes float8_e4m3: IEEE-like, with inf */
	FMT_E4M3B11FNUZ, /* ml_dtypes float8_e4m3b11fnuz: bias 11, FNUZ */
	/* IEEE P3109 binary8pP, P = 1..7: signed extended (the default), signed
	 * finite, unsigned extended, unsigned finite */
	FMT_P3109_P1, FMT_P3109_P1SF, FMT_P3109_P1UE, FMT_P3109_P1UF,
	FMT_P3109_P2, FMT_P3109_P2SF, FMT_P3109_P2UE, FMT_P3109_P2UF,
	FMT_P3109_P3, FMT_P3109_P3SF, FMT_P3109_P3UE, FMT_P3109_P3UF,
	FMT_P3109_P4, FMT_P3109_P4SF, FMT_P3109_P4UE, FMT_P3109_P4UF,
	FMT_P3109_P5, FMT_P3109_P5SF, FMT_P3109_P5UE, FMT_P3109_P5UF,
	FMT_P3109_P6, FMT_P3109_P6SF, FMT_P3109_P6UE, FMT_P3109_P6UF,
	FMT_P3109_P7, FMT_P3109_P7SF, FMT_P3109_P7UE, FMT_P3109_P7UF,
	FMT_COUNT
} fmt_id;

/* Which patterns are special. */
typedef enum {
	FMT_SPECIALS_IEEE,   /* all-ones exponent: inf (fraction 0) or NaN */
	FMT_SPECIALS_FN,     /* OCP "fn": no inf; only S.1111.111 is NaN */
	FMT_SPECIALS_NONE,   /* OCP MX fp6/fp4: every pattern finite, no inf, no NaN;
	                      * results beyond max saturate in every mode */
	FMT_SPECIALS_FNUZ,   /* no inf, no -0: 0x80 (sign alone) is the only NaN */
	FMT_SPECIALS_E8M0,   /* no sign, no fraction: pattern b is 2^(b - bias),
	                      * no zero, all ones (0xff) NaN */
	FMT_SPECIALS_INT,    /* two's complement integer of `width` bits, no exponent:
	                      * -2^(width-1) .. 2^(width-1) - 1, no inf, no NaN, no -0;
	                      * a real rounds to an integer by the mode, and beyond
	                      * the range saturates in every mode, as NONE does */
	/* IEEE P3109 binary8 (the interim report's rules): one zero 0x00, no -0;
	 * a format's finite signed variant follows the FNUZ rules exactly */
	FMT_SPECIALS_P3109,   /* signed extended: NaN 0x80, +inf 0x7f, -inf 0xff */
	FMT_SPECIALS_P3109U,  /* unsigned extended: no sign bit; +inf 0xfe, NaN 0xff */
	FMT_SPECIALS_P3109UF, /* unsigned finite: no sign bit, no inf; NaN 0xff */
} fmt_specials;

typedef struct {
	fmt_id id;
	const char *name;        /* canonical name, e.g. "fp8-e4m3" */
	const char *aliases;     /* comma-separated alternative names */
	const char *summary;     /* one line for help and tables */
	int width;               /* total bits */
	int exp_bits;
	int frac_bits;           /* stored fraction bits (precision is frac_bits + 1) */
	int bias;
	fmt_specials specials;
	bool kernel;             /* implemented by the training kernels, the SIMD bulk
	                          * paths and the GPU (fmt_is_kernel) */
	bool extra;              /* the integer, ml_dtypes and P3109 rows: every command
	                          * takes them, but the exercises' lists of likely
	                          * mistakes compare only the course's formats */
} fmt_info;

typedef enum {
	FMT_CLASS_ZERO,
	FMT_CLASS_SUBNORMAL,
	FMT_CLASS_NORMAL,
	FMT_CLASS_INF,
	FMT_CLASS_NAN,
} fmt_class;

/* Returns the format's row; id must be < FMT_COUNT. */
const fmt_info *fmt_get(fmt_id id);

/* Looks a name or alias up, case-insensitively; NULL when unknown. */
const fmt_info *fmt_find(const char *name);

/* The number of the table's leading rows that are not extra: fp32 .. e8m0,
 * the formats the course's explorers show (the extra rows follow them). */
size_t fmt_course_count(void);

/* "fp32, tf32, fp16, bf16, fp8-e4m3, ..., p3109-8p1..8p7 and their sf, ue, uf
 * variants" (every format) for error messages. */
const char *fmt_known_names(void);

/* True for the formats the training kernels, the SIMD bulk paths and the GPU
 * implement (the table's kernel column: fp32 to fp8-e5m2); the others (fp6,
 * fp4, FNUZ, e8m0) are served by the scalar core and the scalar bulk loop only. */
static inline bool fmt_is_kernel(fmt_id id) { return fmt_get(id)->kernel; }
/* "fp32, tf32, fp16, bf16, fp8-e4m3, fp8-e5m2": the fmt_is_kernel formats. */
const char *fmt_kernel_names(void);

/* Parses "fp32,bf16" into at most max ids; MP_EFORMAT on an unknown name and
 * MP_EINVAL past max, with the reason in err ("unknown format 'x' (known: ...)"). */
mp_status fmt_parse_list(const char *list, fmt_id *ids, size_t max, size_t *count, char *err, size_t errlen);

static inline bool fmt_is_int(const fmt_info *f) { return f->specials == FMT_SPECIALS_INT; }
static inline bool fmt_is_p3109(const fmt_info *f)
{
	return f->specials == FMT_SPECIALS_P3109 || f->specials == FMT_SPECIALS_P3109U ||
	       f->specials == FMT_SPECIALS_P3109UF;
}
static inline bool fmt_has_inf(const fmt_info *f)
{
	return f->specials == FMT_SPECIALS_IEEE || f->specials == FMT_SPECIALS_P3109 ||
	       f->specials == FMT_SPECIALS_P3109U;
}
static inline bool fmt_has_nan(const fmt_info *f)
{
	return f->specials != FMT_SPECIALS_NONE && f->specials != FMT_SPECIALS_INT;
}
/* False for e8m0 and P3109's unsigned formats: no sign bit, no negative values. */
static inline bool fmt_has_sign(const fmt_info *f)
{
	return f->specials != FMT_SPECIALS_E8M0 && f->specials != FMT_SPECIALS_P3109U &&
	       f->specials != FMT_SPECIALS_P3109UF;
}
/* Whether -0 exists (IEEE, fn and the OCP MX fp6/fp4 formats). */
static inline bool fmt_has_neg_zero(const fmt_info *f)
{
	return f->specials == FMT_SPECIALS_IEEE || f->specials == FMT_SPECIALS_FN || f->specials == FMT_SPECIALS_NONE;
}
/* Whether subnormals exist: a zero exponent field with a nonzero fraction
 * (none in e8m0, the integers, nor a format without fraction bits). */
static inline bool fmt_has_subnormals(const fmt_info *f)
{
	return f->specials != FMT_SPECIALS_E8M0 && f->specials != FMT_SPECIALS_INT && f->frac_bits > 0;
}
/* Bits of significance: frac_bits + 1; an integer's width - 1 magnitude bits. */
static inline int fmt_precision(const fmt_info *f)
{
	return fmt_is_int(f) ? f->width - 1 : f->frac_bits + 1;
}
/* Smallest unbiased exponent of a normal number: 1 - bias (e8m0: -bias, its
 * pattern 0 being 2^-127 rather than zero; an integer: 0, its smallest
 * nonzero magnitude being 1). */
static inline int fmt_emin(const fmt_info *f)
{
	if (fmt_is_int(f))
		return 0;
	return f->specials == FMT_SPECIALS_E8M0 ? -f->bias : 1 - f->bias;
}
/* The sign bit, the top bit of the width; 0 for e8m0, which has none. */
static inline uint32_t fmt_sign_mask(const fmt_info *f)
{
	return fmt_has_sign(f) ? 1u << (f->width - 1) : 0u;
}
static inline uint32_t fmt_all_mask(const fmt_info *f)
{
	return f->width == 32 ? 0xffffffffu : (1u << f->width) - 1u;
}
static inline uint32_t fmt_frac_mask(const fmt_info *f) { return (1u << f->frac_bits) - 1u; }
/* Bit pattern (magnitude) of the largest finite value. */
static inline uint32_t fmt_max_bits(const fmt_info *f)
{
	uint32_t top = ((1u << f->exp_bits) - 1u) << f->frac_bits;
	switch (f->specials) {
	case FMT_SPECIALS_IEEE: return top - 1u;
	case FMT_SPECIALS_FN:   return top | (fmt_frac_mask(f) - 1u);
	case FMT_SPECIALS_E8M0: return top - 1u;   /* 0xfe = 2^127 */
	case FMT_SPECIALS_INT:  return fmt_sign_mask(f) - 1u;   /* 2^(width-1) - 1 */
	case FMT_SPECIALS_P3109:   return fmt_sign_mask(f) - 2u;   /* 0x7e: 0x7f is inf */
	case FMT_SPECIALS_P3109U:  return fmt_all_mask(f) - 2u;    /* 0xfd: 0xfe inf, 0xff NaN */
	case FMT_SPECIALS_P3109UF: return fmt_all_mask(f) - 1u;    /* 0xfe: 0xff NaN */
	default:                return top | fmt_frac_mask(f);   /* NONE, FNUZ: all ones */
	}
}
/* Largest unbiased exponent of a finite number: that of the largest value. */
static inline int fmt_emax(const fmt_info *f)
{
	if (fmt_is_int(f))
		return f->width - 2;
	return (int)(fmt_max_bits(f) >> f->frac_bits) - f->bias;
}
/* Bit pattern of +inf (P3109: the pattern after the largest value); for
 * formats without inf, the canonical NaN. */
static inline uint32_t fmt_inf_bits(const fmt_info *f)
{
	if (f->specials == FMT_SPECIALS_P3109 || f->specials == FMT_SPECIALS_P3109U)
		return fmt_max_bits(f) + 1u;
	return ((1u << f->exp_bits) - 1u) << f->frac_bits;
}
/* The canonical quiet NaN: positive, quiet bit (top fraction bit) set, rest 0;
 * for fn formats the only NaN pattern, S.1111.111 with S = 0; for FNUZ 0x80;
 * for e8m0 and P3109's unsigned formats 0xff, its signed ones 0x80. Formats without NaN (fp6, fp4, the integers) have none: this
 * returns +0, the pattern fmt_round_* give a NaN input together with
 * FMT_FLAG_INVALID. */
static inline uint32_t fmt_nan_bits(const fmt_info *f)
{
	uint32_t top = ((1u << f->exp_bits) - 1u) << f->frac_bits;
	switch (f->specials) {
	case FMT_SPECIALS_IEEE: return top | (1u << (f->frac_bits - 1));
	case FMT_SPECIALS_FN:   return top | fmt_frac_mask(f);
	case FMT_SPECIALS_FNUZ: return 1u << (f->width - 1);
	case FMT_SPECIALS_E8M0: return fmt_all_mask(f);
	case FMT_SPECIALS_P3109: return 1u << (f->width - 1);   /* 0x80, where -0 would be */
	case FMT_SPECIALS_P3109U:
	case FMT_SPECIALS_P3109UF: return fmt_all_mask(f);     /* 0xff */
	default:                return 0u;
	}
}
/* The value of an integer format's pattern (two's complement). */
static inline int32_t fmt_int_value(const fmt_info *f, uint32_t bits)
{
	bits &= fmt_all_mask(f);
	return (bits & fmt_sign_mask(f)) ? (int32_t)bits - (int32_t)(fmt_all_mask(f) + 1u) : (int32_t)bits;
}
/* The pattern of an integer in an integer format's range. */
static inline uint32_t fmt_int_bits(const fmt_info *f, int32_t v)
{
	return (uint32_t)v & fmt_all_mask(f);
}

/* Exact values (every one fits a binary64 exactly). */
double fmt_max(const fmt_info *f);
double fmt_min_normal(const fmt_info *f);
double fmt_min_subnormal(const fmt_info *f);  /* NaN for e8m0, which has none */
double fmt_epsilon(const fmt_info *f);        /* spacing at 1: 2^-frac_bits */
double fmt_decimal_digits(const fmt_info *f); /* precision * log10(2) */

/* Number of hex digits used to print a bit pattern. */
static inline int fmt_hex_digits(const fmt_info *f) { return (f->width + 3) / 4; }

#endif
