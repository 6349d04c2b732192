#include "fmt/flip.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/round.h"
#include "util/rng.h"

/* The streams of the decision and of the position: apart from each other
 * and from stochastic rounding's rng_bits(seed, index). */
#define FLIP_STREAM_HIT 0x666c69702d686974ull   /* "flip-hit" */
#define FLIP_STREAM_POS 0x666c69702d706f73ull   /* "flip-pos" */

int flip_span(const fmt_info *f, const flip_opts *o, int *lo)
{
	switch (o->where) {
	case FLIP_FRAC:
		*lo = 0;
		return f->frac_bits;
	case FLIP_EXP:
		*lo = f->frac_bits;
		return f->exp_bits;
	case FLIP_BIT:
		*lo = o->bit;
		return o->bit >= 0 && o->bit < f->width ? 1 : 0;
	default:
		*lo = 0;
		return f->width;
	}
}

/* 64 random bits for element index of one of the flip streams. */
static uint64_t flip_draw(uint64_t seed, uint64_t stream, uint64_t index)
{
	return rng_mix64(rng_mix64(seed ^ stream) ^ rng_mix64(index));
}

int flip_pick(const fmt_info *f, const flip_opts *o, uint64_t index)
{
	int lo, n = flip_span(f, o, &lo);
	if (n <= 0 || !(o->p > 0))
		return -1;
	if (o->p < 1) {
		/* p < 1, so p 2^64 < 2^64 fits: struck iff the draw is below it */
		uint64_t below = (uint64_t)ldexp(o->p, 64);
		if (flip_draw(o->seed, FLIP_STREAM_HIT, index) >= below)
			return -1;
	}
	/* the top 32 bits scaled to [0, n): uniform to within n / 2^32 */
	uint64_t r = flip_draw(o->seed, FLIP_STREAM_POS, index) >> 32;
	return lo + (int)((r * (uint64_t)n) >> 32);
}

uint32_t flip_code(const fmt_info *f, const flip_opts *o, uint64_t index, uint32_t bits)
{
	int b = flip_pick(f, o, index);
	return b < 0 ? bits : bits ^ (UINT32_C(1) << b);
}

size_t flip_floats(fmt_id fmt, const flip_opts *o, uint64_t index0, float *x, size_t n)
{
	const fmt_info *f = fmt_get(fmt);
	fmt_round_ctl exact = { .mode = FMT_RNE };
	size_t flipped = 0;
	if (!(o->p > 0))
		return 0;
	for (size_t i = 0; i < n; i++) {
		int b = flip_pick(f, o, index0 + i);
		if (b < 0)
			continue;
		uint32_t bits;
		if (fmt == FMT_FP32) {
			memcpy(&bits, &x[i], sizeof bits);
			bits ^= UINT32_C(1) << b;
			memcpy(&x[i], &bits, sizeof bits);
		} else {
			/* x[i] is a value of f, so its encoding is exact */
			bits = fmt_round_double(f, &exact, (double)x[i], NULL) ^ (UINT32_C(1) << b);
			x[i] = (float)fmt_to_double(f, bits);
		}
		flipped++;
	}
	return flipped;
}

mp_status flip_where_parse(const char *opt, const char *text, flip_opts *o, char *err, size_t errlen)
{
	static const char *const names[] = { [FLIP_ANY] = "any", [FLIP_FRAC] = "frac", [FLIP_EXP] = "exp" };
	for (int i = FLIP_ANY; i <= FLIP_EXP; i++) {
		if (!strcmp(text, names[i])) {
			o->where = (flip_where)i;
			return MP_OK;
		}
	}
	char *end;
	errno = 0;
	long b = strtol(text, &end, 10);
	if (!*text || *end || errno || b < 0 || b > 31)
		return mp_fail(MP_EINVAL, err, errlen, "%s: '%s' is not any, frac, exp or a bit number 0..31", opt, text);
	o->where = FLIP_BIT;
	o->bit = (int)b;
	return MP_OK;
}
