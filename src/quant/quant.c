/* Block-scaled quantization of exact values (the rules are in quant.h);
 * the table of formats and the option checks are quant_table.c. */
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fmt/decode.h"
#include "fmt/numarg.h"
#include "fmt/parse.h"
#include "quant/quant.h"
#include "util/rng.h"

/* --- exact helpers --- */

/* floor(log2 q) for q > 0. */
static long q_floor_log2(const mpq_t q)
{
	long e = (long)mpz_sizeinbase(mpq_numref(q), 2) - (long)mpz_sizeinbase(mpq_denref(q), 2);
	mpz_t a, b;
	mpz_inits(a, b, NULL);
	if (e >= 0) {
		mpz_set(a, mpq_numref(q));
		mpz_mul_2exp(b, mpq_denref(q), (mp_bitcnt_t)e);
	} else {
		mpz_mul_2exp(a, mpq_numref(q), (mp_bitcnt_t)-e);
		mpz_set(b, mpq_denref(q));
	}
	if (mpz_cmp(a, b) < 0)
		e--;
	mpz_clears(a, b, NULL);
	return e;
}

/* q = d * 2^k, exactly. */
static void q_set_d_2exp(mpq_t q, double d, long k)
{
	mpq_set_d(q, d);
	if (k >= 0)
		mpq_mul_2exp(q, q, (mp_bitcnt_t)k);
	else
		mpq_div_2exp(q, q, (mp_bitcnt_t)-k);
}

/* ceil(log2 d) of a positive finite fp32 value d, exactly: its floor, one
 * up unless d is a power of two. */
static long f32_ceil_log2(double d)
{
	int e;
	double m = frexp(d, &e);   /* d = m 2^e, 1/2 <= m < 1 */
	return m == 0.5 ? e - 1 : e;
}

/* The rceil rule's exponent: d = fp32_rne(amax / max_elem), rounded once
 * from the exact quotient, then ceil(log2 d); d = 0 gives the clamp at
 * -127 and d = inf the one at 127. */
static long rceil_exp(const quant_info *q, const mpq_t amax)
{
	fmt_num t;
	fmt_num_init(&t);
	mpq_set_d(t.mag, quant_elem_max(q));
	mpq_div(t.mag, amax, t.mag);
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	uint32_t bits = fmt_round_num(fmt_get(FMT_FP32), &ctl, &t, NULL);
	fmt_num_clear(&t);
	double d = fmt_to_double(fmt_get(FMT_FP32), bits);
	return d == 0 ? -128 : isinf(d) ? 128 : f32_ceil_log2(d);
}

/* The MX scale exponent of a block whose max |V| is amax (the rules are in
 * quant.h). */
static int mx_scale_exp(const quant_info *q, quant_rule rule, const mpq_t amax, bool *clamped)
{
	*clamped = false;
	if (mpq_sgn(amax) == 0)
		return -127;   /* log2 0 = -inf: the clamp */
	long L = q_floor_log2(amax), k = L - q->emax_elem;
	mpq_t t;
	mpq_init(t);
	switch (rule) {
	case QUANT_RULE_CEIL:
		/* 2^L <= amax < 2^(L+1) and max_elem = M * 2^emax_elem with 1 <= M < 2,
		 * so ceil(log2(amax / max_elem)) is L - emax_elem, or one more when
		 * amax > max_elem * 2^(L - emax_elem) */
		q_set_d_2exp(t, quant_elem_max(q), k);
		k += mpq_cmp(amax, t) > 0;
		break;
	case QUANT_RULE_EVEN:
		/* amax's significand rounded to mbits fraction bits reaches 2 iff
		 * amax >= (2 - 2^-(mbits + 1)) * 2^L */
		q_set_d_2exp(t, 2.0 - ldexp(1.0, -(q->mbits + 1)), L);
		k += mpq_cmp(amax, t) >= 0;
		break;
	case QUANT_RULE_TCEIL:
		q_set_d_2exp(t, 1.0, L);
		k += mpq_cmp(amax, t) != 0;
		break;
	case QUANT_RULE_RCEIL:
		k = rceil_exp(q, amax);
		break;
	default:
		break;
	}
	mpq_clear(t);
	if (k < -127 || k > 127) {
		*clamped = true;
		k = k < -127 ? -127 : 127;
	}
	return (int)k;
}

/* Rounds |V| / divisor (divisor > 0) into the element format with V's sign,
 * saturating, and fills e (value = element x unit). maxq and tie_over are
 * quant_overflow_threshold's: past maxq (or at it, with tie_over) the
 * element saturates. */
static void round_elem(const fmt_info *f, fmt_mode mode, uint32_t rbits, const fmt_num *v, const mpq_t divisor,
                       double unit, const mpq_t maxq, bool tie_over, quant_elem *e)
{
	fmt_num s;
	fmt_num_init(&s);
	s.neg = v->neg;
	mpq_div(s.mag, v->mag, divisor);
	fmt_round_ctl ctl = { .mode = mode, .saturate = true, .rbits = rbits };
	e->bits = fmt_round_num(f, &ctl, &s, NULL);
	if (fmt_is_int(f) && e->bits == fmt_sign_mask(f))
		e->bits |= 1;   /* -2^(w-1) to -(2^(w-1) - 1): integers saturate symmetrically */
	e->value = fmt_to_double(f, e->bits) * unit;
	e->flags = 0;
	int c = mpq_cmp(s.mag, maxq);
	if (c > 0 || (c == 0 && tie_over))
		e->flags |= QUANT_SATURATED;
	if (mpq_sgn(v->mag) != 0 && (e->bits & ~fmt_sign_mask(f)) == 0)
		e->flags |= QUANT_FLUSHED;
	fmt_num_clear(&s);
}

/* ||value - V|| / ||V|| over elements: each difference exact (mpq), the
 * squares and sums in MPFR, whose exponent range is far beyond binary64's
 * (inputs such as 1e400 or 1e-400 neither overflow nor vanish); only the
 * ratio is rounded to binary64. */
typedef struct {
	mpq_t d;
	mpfr_t t, num, den;
} err_sum;

static void err_init(err_sum *s)
{
	mpq_init(s->d);
	mpfr_inits2(128, s->t, s->num, s->den, (mpfr_ptr)0);
	mpfr_set_zero(s->num, 1);
	mpfr_set_zero(s->den, 1);
}

static void err_add(err_sum *s, const fmt_num *x, double value)
{
	mpq_set_d(s->d, value);
	if (x->neg)
		mpq_add(s->d, s->d, x->mag);
	else
		mpq_sub(s->d, s->d, x->mag);
	mpfr_set_q(s->t, s->d, MPFR_RNDN);
	mpfr_sqr(s->t, s->t, MPFR_RNDN);
	mpfr_add(s->num, s->num, s->t, MPFR_RNDN);
	mpfr_set_q(s->t, x->mag, MPFR_RNDN);
	mpfr_sqr(s->t, s->t, MPFR_RNDN);
	mpfr_add(s->den, s->den, s->t, MPFR_RNDN);
}

/* The relative error (0 when every V is 0); s is cleared. */
static double err_done(err_sum *s)
{
	double rel = 0;
	if (!mpfr_zero_p(s->den)) {
		mpfr_div(s->t, s->num, s->den, MPFR_RNDN);
		mpfr_sqrt(s->t, s->t, MPFR_RNDN);
		rel = mpfr_get_d(s->t, MPFR_RNDN);
	}
	mpq_clear(s->d);
	mpfr_clears(s->t, s->num, s->den, (mpfr_ptr)0);
	return rel;
}

/* The block's counts and relative error from its elements. */
static void block_stats(quant_block *b, const fmt_num *x, const quant_elem *e)
{
	err_sum s;
	err_init(&s);
	b->nsaturated = b->nflushed = 0;
	for (size_t i = 0; i < b->count; i++) {
		b->nsaturated += (e[i].flags & QUANT_SATURATED) != 0;
		b->nflushed += (e[i].flags & QUANT_FLUSHED) != 0;
		err_add(&s, &x[i], e[i].value);
	}
	b->rel_error = err_done(&s);
}

/* max |x_i| over [0, n) into amax; returns the first i where it is. */
static size_t q_amax(mpq_t amax, const fmt_num *x, size_t n)
{
	size_t at = 0;
	mpq_set_ui(amax, 0, 1);
	for (size_t i = 0; i < n; i++) {
		if (mpq_cmp(x[i].mag, amax) > 0) {
			mpq_set(amax, x[i].mag);
			at = i;
		}
	}
	return at;
}

/* --- the rules --- */

/* maxq set to f's overflow threshold (quant_overflow_threshold); whether a
 * value at the threshold overflows too. */
static bool overflow_bound(const fmt_info *f, mpq_t maxq)
{
	double thr;
	bool tie_over;
	quant_overflow_threshold(f, &thr, &tie_over);
	mpq_set_d(maxq, thr);
	return tie_over;
}

static void run_mx_block(const quant_info *q, const quant_opts *o, const fmt_num *x, quant_block *b,
                         quant_elem *e)
{
	const fmt_info *f = fmt_get(q->elem);
	mpq_t amax, div, maxq;
	mpq_inits(amax, div, maxq, NULL);
	b->amax_at = b->begin + q_amax(amax, x + b->begin, b->count);
	b->amax = fabs(fmt_num_to_double(&x[b->amax_at]));   /* the element may be negative */
	b->scale_exp = mx_scale_exp(q, o->rule, amax, &b->clamped);
	b->scale_bits = (uint32_t)(b->scale_exp + 127);
	b->scale = ldexp(1.0, b->scale_exp);
	q_set_d_2exp(div, 1.0, b->scale_exp + q->elem_shift);   /* the element's own unit within X */
	bool tie_over = overflow_bound(f, maxq);
	double unit = ldexp(1.0, b->scale_exp + q->elem_shift);
	for (size_t i = 0; i < b->count; i++) {
		size_t j = b->begin + i;
		round_elem(f, o->mode, rng_bits(o->seed, j), &x[j], div, unit, maxq, tie_over, &e[j]);
	}
	block_stats(b, x + b->begin, e + b->begin);
	mpq_clears(amax, div, maxq, NULL);
}

/* nvfp4's s_t = fp32(amax / 2688) into r; MP_EINVAL when it overflows fp32. */
static mp_status nv_tensor_scale(const fmt_num *x, size_t n, quant_result *r, char *err, size_t errlen)
{
	fmt_num t;
	fmt_num_init(&t);
	size_t at = q_amax(t.mag, x, n);
	mpq_t d;
	mpq_init(d);
	mpq_set_ui(d, 448 * 6, 1);
	mpq_div(t.mag, t.mag, d);
	mpq_clear(d);
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	unsigned flags;
	r->tensor_scale_bits = fmt_round_num(fmt_get(FMT_FP32), &ctl, &t, &flags);
	fmt_num_clear(&t);
	r->tensor_scale = fmt_to_double(fmt_get(FMT_FP32), r->tensor_scale_bits);
	if (flags & FMT_FLAG_OVERFLOW) {
		r->bad = at;
		return mp_fail(MP_EINVAL, err, errlen, "nvfp4: the tensor scale amax / 2688 overflows fp32");
	}
	return MP_OK;
}

static void run_nv_block(const quant_info *q, const quant_opts *o, double st, const fmt_num *x, quant_block *b,
                         quant_elem *e)
{
	const fmt_info *f = fmt_get(q->elem), *e4 = fmt_get(FMT_E4M3);
	fmt_num t;
	fmt_num_init(&t);
	b->amax_at = b->begin + q_amax(t.mag, x + b->begin, b->count);
	b->amax = fabs(fmt_num_to_double(&x[b->amax_at]));   /* the element may be negative */
	b->scale_bits = 0;
	if (st > 0 && mpq_sgn(t.mag) > 0) {
		mpq_t d;
		mpq_init(d);
		q_set_d_2exp(d, 6 * st, 0);   /* exact: 6 * an fp32 value */
		mpq_div(t.mag, t.mag, d);
		mpq_clear(d);
		fmt_round_ctl ctl = { .mode = FMT_RNE, .saturate = true };
		b->scale_bits = fmt_round_num(e4, &ctl, &t, NULL);
	}
	fmt_num_clear(&t);
	b->scale = fmt_to_double(e4, b->scale_bits);
	mpq_t div, maxq;
	mpq_inits(div, maxq, NULL);
	q_set_d_2exp(div, b->scale * st, 0);   /* exact: 4 by 24 significant bits */
	bool tie_over = overflow_bound(f, maxq);
	for (size_t i = 0; i < b->count; i++) {
		size_t j = b->begin + i;
		if (b->scale == 0) {
			e[j].bits = x[j].neg ? fmt_sign_mask(f) : 0;
			e[j].value = x[j].neg ? -0.0 : 0.0;
			e[j].flags = mpq_sgn(x[j].mag) ? QUANT_FLUSHED : 0;
			continue;
		}
		round_elem(f, o->mode, rng_bits(o->seed, j), &x[j], div, b->scale * st, maxq, tie_over, &e[j]);
	}
	mpq_clears(div, maxq, NULL);
	block_stats(b, x + b->begin, e + b->begin);
}

/* The counts and the relative error over every block. */
static void result_totals(quant_result *r, const fmt_num *x)
{
	for (size_t k = 0; k < r->nblocks; k++) {
		r->nsaturated += r->blocks[k].nsaturated;
		r->nflushed += r->blocks[k].nflushed;
	}
	err_sum s;
	err_init(&s);
	for (size_t i = 0; i < r->n; i++)
		err_add(&s, &x[i], r->elems[i].value);
	r->rel_error = err_done(&s);
}

mp_status quant_run(const quant_opts *o, const fmt_num *x, size_t n, quant_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	mp_status st = quant_opts_check(o, err, errlen);
	if (st != MP_OK)
		return st;
	const quant_info *q = quant_get(o->fmt);
	r->opts = *o;
	if (!r->opts.block)
		r->opts.block = (size_t)q->block;
	size_t bs = r->opts.block;
	r->n = n;
	r->nblocks = (n + bs - 1) / bs;
	r->tensor_scale = 1;
	r->tensor_scale_bits = 0x3f800000u;
	for (size_t i = 0; i < n; i++) {
		if (x[i].kind != NUM_FINITE) {
			r->bad = i;
			return mp_fail(MP_EINVAL, err, errlen, "inf and NaN have no encoding in a block-scaled format");
		}
	}
	r->blocks = calloc(r->nblocks ? r->nblocks : 1, sizeof *r->blocks);
	r->elems = calloc(n ? n : 1, sizeof *r->elems);
	if (!r->blocks || !r->elems)
		return mp_fail(MP_ENOMEM, err, errlen, "out of memory");
	if (q->nvfp4 && (st = nv_tensor_scale(x, n, r, err, errlen)) != MP_OK)
		return st;
	for (size_t k = 0; k < r->nblocks; k++) {
		quant_block *b = &r->blocks[k];
		b->begin = k * bs;
		b->count = n - b->begin < bs ? n - b->begin : bs;
		if (q->nvfp4)
			run_nv_block(q, o, r->tensor_scale, x, b, r->elems);
		else
			run_mx_block(q, o, x, b, r->elems);
	}
	result_totals(r, x);
	return MP_OK;
}

void quant_result_free(quant_result *r)
{
	free(r->blocks);
	free(r->elems);
	r->blocks = NULL;
	r->elems = NULL;
}

mp_status quant_rht16(fmt_num *x, size_t n, uint16_t signs)
{
	for (size_t i = 0; i < n; i++)
		if (x[i].kind != NUM_FINITE)
			return MP_EINVAL;
	mpq_t v[16], a, b;
	for (int i = 0; i < 16; i++)
		mpq_init(v[i]);
	mpq_inits(a, b, NULL);
	for (size_t r0 = 0; r0 + 16 <= n; r0 += 16) {
		for (int i = 0; i < 16; i++) {   /* v = x S */
			mpq_set(v[i], x[r0 + i].mag);
			if (x[r0 + i].neg != ((signs >> i & 1) != 0))
				mpq_neg(v[i], v[i]);
		}
		for (int h = 1; h < 16; h *= 2)   /* v H16: four butterfly stages */
			for (int i = 0; i < 16; i += 2 * h)
				for (int k = i; k < i + h; k++) {
					mpq_add(a, v[k], v[k + h]);
					mpq_sub(b, v[k], v[k + h]);
					mpq_set(v[k], a);
					mpq_set(v[k + h], b);
				}
		for (int i = 0; i < 16; i++) {   /* / 4 */
			mpq_div_2exp(v[i], v[i], 2);
			x[r0 + i].neg = mpq_sgn(v[i]) < 0;
			mpq_abs(x[r0 + i].mag, v[i]);
		}
	}
	for (int i = 0; i < 16; i++)
		mpq_clear(v[i]);
	mpq_clears(a, b, NULL);
	return MP_OK;
}

mp_status quant_parse_block(const char *text, size_t *block, char *err, size_t errlen)
{
	unsigned long long u;
	if (numarg_u64("--block", text, &u, err, errlen) != MP_OK)
		return MP_EINVAL;
	if (u < 1 || u > QUANT_BLOCK_MAX) {
		snprintf(err, errlen, "--block: %s is out of range (1..%d)", text, QUANT_BLOCK_MAX);
		return MP_EINVAL;
	}
	*block = (size_t)u;
	return MP_OK;
}
