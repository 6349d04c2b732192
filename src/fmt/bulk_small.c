/* Bulk rounding into the formats below the SIMD kernels (fp6-e3m2, fp6-e2m3,
 * fp4-e2m1, fp8-e4m3fnuz, fp8-e5m2fnuz, e8m0), one byte per element.
 *
 * fp6/fp4 and FNUZ share bulk_encode1's integer formula, with the
 * parameters set for their specials and one fix-up (FNUZ has no -0); e8m0,
 * whose rounding has no fraction to work on, calls the scalar core. Results
 * equal fmt_round_double's bit for bit (test_bulk_small checks every path).
 * A NaN input, which fp6/fp4 cannot encode, gives +0 here, as the scalar
 * functions do (they also raise FMT_FLAG_INVALID; the bulk kernels have no
 * per-element status). */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "fmt/bulk_small.h"
#include "fmt/decode.h"

#define SMALL_COUNT (FMT_COUNT - FMT_E3M2)

static float small_tables[SMALL_COUNT][256];

static void small_tables_fill(void)
{
	for (int t = 0; t < SMALL_COUNT; t++) {
		const fmt_info *f = fmt_get((fmt_id)(FMT_E3M2 + t));
		for (uint32_t b = 0; b < 256; b++) {
			double v = fmt_to_double(f, b);
			small_tables[t][b] = isnan(v) ? bulk_u2f(0x7fc00000u) : (float)v;
		}
	}
}

static const float *small_table(fmt_id fmt)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, small_tables_fill);
	return small_tables[fmt - FMT_E3M2];
}

typedef struct {
	bulk_params p;
	const fmt_info *f;
	fmt_round_ctl ctl;      /* e8m0: the scalar core's control (rbits set per element) */
	uint32_t sign;          /* the format's sign bit */
	const float *table;
} small_params;

static void small_params_init(small_params *s, const fmt_bulk_opts *o)
{
	memset(s, 0, sizeof *s);
	s->f = fmt_get(o->fmt);
	s->ctl = (fmt_round_ctl){ .mode = o->mode, .saturate = o->saturate };
	s->sign = fmt_sign_mask(s->f);
	s->table = small_table(o->fmt);
	if (o->fmt == FMT_E8M0)
		return;
	bulk_params_init(&s->p, o);
	s->p.nan_bits = fmt_nan_bits(s->f);   /* fp6/fp4: +0; FNUZ: 0x80 */
	if (s->f->specials == FMT_SPECIALS_NONE || o->saturate) {
		s->p.ov_bits = fmt_max_bits(s->f);   /* fp6/fp4 saturate in every mode */
		s->p.ov_signed = 1;
	} else {
		s->p.ov_bits = fmt_nan_bits(s->f);   /* FNUZ: the one NaN, unsigned */
		s->p.ov_signed = 0;
	}
}

/* One fp32 pattern x into the format; r: SR bits. */
static inline uint32_t small_encode1(const small_params *s, uint32_t x, uint32_t r)
{
	if (s->f->specials == FMT_SPECIALS_E8M0) {
		fmt_round_ctl ctl = s->ctl;
		ctl.rbits = r;
		return fmt_round_double(s->f, &ctl, (double)bulk_u2f(x), NULL);
	}
	uint32_t b = bulk_encode1(&s->p, x, r);
	/* FNUZ: -0 and negatives rounding to 0 give 0x00 (the sign alone is NaN);
	 * an input below 1 cannot have overflowed to that NaN */
	if (s->f->specials == FMT_SPECIALS_FNUZ && b == s->sign && (x & 0x7fffffffu) < 0x3f800000u)
		b = 0;
	return b;
}

static inline float small_quantize1(const small_params *s, float v, uint32_t r)
{
	return s->table[small_encode1(s, bulk_f2u(v), r) & 0xffu];
}

static size_t small_accumulate(const small_params *s, rng_key k, uint32_t idx_lo, float *x, float *comp,
                               const float *u, size_t n)
{
	small_params rne = *s;
	rne.p.sr = 0;
	rne.ctl.mode = FMT_RNE;
	size_t unchanged = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = s->ctl.mode == FMT_SR ? rng_bits_keyed(k, idx_lo + (uint32_t)i) : 0;
		float old = x[i];
		if (comp) {
			float y = u[i] - comp[i];
			float t = small_quantize1(s, old + y, r);
			comp[i] = small_quantize1(&rne, (t - old) - y, 0);
			x[i] = t;
		} else {
			x[i] = small_quantize1(s, old + u[i], r);
		}
		unchanged += x[i] == old;
	}
	return unchanged;
}

size_t bulk_small_run(const fmt_bulk_opts *o, bulk_small_op op, rng_key k, uint32_t idx_lo, void *out,
                      float *x, const float *in, float *comp, size_t n)
{
	small_params s;
	small_params_init(&s, o);
	bool sr = o->mode == FMT_SR;
	uint8_t *dst = out;
	switch (op) {
	case BULK_SMALL_ENCODE:
		for (size_t i = 0; i < n; i++)
			dst[i] = (uint8_t)small_encode1(&s, bulk_f2u(in[i]), sr ? rng_bits_keyed(k, idx_lo + (uint32_t)i) : 0);
		return 0;
	case BULK_SMALL_QUANTIZE:
		for (size_t i = 0; i < n; i++)
			x[i] = small_quantize1(&s, x[i], sr ? rng_bits_keyed(k, idx_lo + (uint32_t)i) : 0);
		return 0;
	default:
		return small_accumulate(&s, k, idx_lo, x, comp, in, n);
	}
}

void bulk_small_decode(fmt_id fmt, float *out, const void *in, size_t n)
{
	const float *t = small_table(fmt);
	const uint8_t *b = in;
	for (size_t i = 0; i < n; i++)
		out[i] = t[b[i]];
}
