/* Soft errors after rounding: bit flips in a format's encodings, as CPFloat
 * simulates them (its optstruct fields flip and p; read in
 * north-numerical-computing/cpfloat, src/cpfloat_definitions.h at commit
 * 0ca9279 and src/cpfloat_template.h at commit 6ea1027, ADD_BITFLIP_CODE):
 * after rounding, each element independently, with probability p, has
 * exactly one bit flipped, the bit drawn uniformly from the eligible ones.
 * One bit per struck element, never several: that is CPFloat's rule.
 *
 * CPFloat draws the position in its binary32/binary64 storage word (the
 * fraction bits the target keeps, and for CPFLOAT_SOFTERR_FP the storage
 * exponent and sign too); here the position is drawn in the format's own
 * encoding, so FLIP_ANY covers exactly its width bits and FLIP_FRAC exactly
 * its stored fraction bits. FLIP_EXP (the exponent field only) and FLIP_BIT
 * (one chosen position) have no CPFloat counterpart: they show what a struck
 * exponent bit does.
 *
 * The random numbers are counter-based (util/rng.h): element `index` of
 * stream `seed` gets the same decision and position whatever the thread
 * split, SIMD path or call boundaries. */
#ifndef MIXPREC_FMT_FLIP_H
#define MIXPREC_FMT_FLIP_H

#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "util/status.h"

typedef enum {
	FLIP_ANY,    /* any bit of the encoding (CPFLOAT_SOFTERR_FP) */
	FLIP_FRAC,   /* a stored fraction bit (CPFLOAT_SOFTERR_FRAC) */
	FLIP_EXP,    /* an exponent bit */
	FLIP_BIT,    /* the bit `bit` */
} flip_where;

typedef struct {
	double p;          /* probability per element, in [0, 1] */
	uint64_t seed;
	flip_where where;
	int bit;           /* FLIP_BIT: 0 = the least significant bit */
} flip_opts;

/* The eligible positions of f under o: *lo and the count (0 when f has
 * none, e.g. FLIP_FRAC for e8m0, or FLIP_BIT past the width). */
int flip_span(const fmt_info *f, const flip_opts *o, int *lo);

/* The bit element `index` gets flipped, or -1 when it is spared. With
 * p = 0 never, with p = 1 always (given an eligible bit); otherwise with
 * probability floor(p 2^64) / 2^64. */
int flip_pick(const fmt_info *f, const flip_opts *o, uint64_t index);

/* bits (a pattern of f) with element index's flip applied. */
uint32_t flip_code(const fmt_info *f, const flip_opts *o, uint64_t index, uint32_t bits);

/* Flips x[0..n), each a value of fmt (as rounding to fmt left it), element
 * i as index index0 + i, each struck value re-encoded, flipped and decoded.
 * Returns the number of elements flipped. */
size_t flip_floats(fmt_id fmt, const flip_opts *o, uint64_t index0, float *x, size_t n);

/* "any", "frac", "exp" or a bit number into o->where (and o->bit); the
 * bit's range is checked against a format by flip_span's caller. MP_EINVAL
 * with "OPT: ..." in err. */
mp_status flip_where_parse(const char *opt, const char *text, flip_opts *o, char *err, size_t errlen);

#endif
