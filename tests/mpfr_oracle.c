/* The oracle of tests/mpfr_oracle.h. */
#include "mpfr_oracle.h"

#include "testutil.h"

/* the oracle's own description of each format (from doc/DESIGN.md) */
const ref_fmt REF[FMT_COUNT] = {
	[FMT_FP32] = { 32, 23, 127, true, 0x7f7fffffu, 0x7f800000u, 0x7fc00000u, "0x1.fffffep127" },
	[FMT_TF32] = { 19, 10, 127, true, 0x3fbffu, 0x3fc00u, 0x3fe00u, "0x1.ffcp127" },
	[FMT_FP16] = { 16, 10, 15, true, 0x7bffu, 0x7c00u, 0x7e00u, "65504" },
	[FMT_BF16] = { 16, 7, 127, true, 0x7f7fu, 0x7f80u, 0x7fc0u, "0x1.fep127" },
	[FMT_E4M3] = { 8, 3, 7, false, 0x7eu, 0x7fu, 0x7fu, "448" },
	[FMT_E5M2] = { 8, 2, 15, true, 0x7bu, 0x7cu, 0x7eu, "57344" },
};

void oracle_init(oracle *o, fmt_id id)
{
	o->id = id;
	o->r = &REF[id];
	o->p = o->r->fb + 1;
	o->emin_f = 1 - o->r->bias;
	o->mp_emin = (mpfr_exp_t)(o->emin_f + 1 - o->r->fb);
	mpfr_inits2(o->p, o->lo, o->hi, o->rn, o->rz, o->maxv, o->tmp, (mpfr_ptr)0);
	int inex = mpfr_set_str(o->maxv, o->r->max_text, 0, MPFR_RNDN);
	ck_assert_int_eq(inex, 0);
	mpq_inits(o->qlo, o->qhi, o->d1, o->d2, NULL);
	mpz_init(o->z);
}

void oracle_clear(oracle *o)
{
	mpfr_clears(o->lo, o->hi, o->rn, o->rz, o->maxv, o->tmp, (mpfr_ptr)0);
	mpq_clears(o->qlo, o->qhi, o->d1, o->d2, NULL);
	mpz_clear(o->z);
}

/* Rounds the signed exact value q into v at the format's precision on the
 * subnormal grid, exponent unbounded above. */
static void oracle_set(oracle *o, mpfr_ptr v, const mpq_t q, mpfr_rnd_t rnd)
{
	mpfr_exp_t old_emin = mpfr_get_emin();
	mpfr_set_emin(o->mp_emin);
	int inex = mpfr_set_q(v, q, rnd);
	mpfr_subnormalize(v, inex, rnd);
	mpfr_set_emin(old_emin);
}

void oracle_prepare(oracle *o, num_kind kind, bool neg, const mpq_t q)
{
	o->neg = neg;
	o->special_nan = kind == NUM_NAN;
	o->special_inf = kind == NUM_INF;
	o->is_zero = kind == NUM_FINITE && mpq_sgn(q) == 0;
	o->exact = true;
	o->t = 0;
	if (kind != NUM_FINITE || o->is_zero)
		return;
	oracle_set(o, o->lo, q, MPFR_RNDD);
	oracle_set(o, o->hi, q, MPFR_RNDU);
	oracle_set(o, o->rn, q, MPFR_RNDN);
	oracle_set(o, o->rz, q, MPFR_RNDZ);
	o->exact = mpfr_equal_p(o->lo, o->hi);
	if (o->exact)
		return;
	/* f = (x - lo) / (hi - lo); t = ceil(f * 2^32) */
	mpfr_get_q(o->qlo, o->lo);
	mpfr_get_q(o->qhi, o->hi);
	mpq_sub(o->d1, q, o->qlo);
	mpq_sub(o->d2, o->qhi, o->qlo);
	mpq_div(o->d2, o->d1, o->d2);
	mpq_mul_2exp(o->d2, o->d2, 32);
	mpz_cdiv_q(o->z, mpq_numref(o->d2), mpq_denref(o->d2));
	o->t = (uint64_t)mpz_get_ui(o->z);
	mpz_fdiv_q(o->z, mpq_numref(o->d2), mpq_denref(o->d2));
	o->t_floor = (uint64_t)mpz_get_ui(o->z);
}

static uint32_t sign_bit(const oracle *o, bool neg)
{
	return neg ? 1u << (o->r->width - 1) : 0u;
}

uint32_t inf_or_nan(const oracle *o, bool neg)
{
	/* without inf (e4m3) the NaN keeps the sign: -1000 -> 0xff, as PyTorch does */
	return sign_bit(o, neg) | (o->r->has_inf ? o->r->inf_bits : o->r->nan_bits);
}

uint32_t oracle_encode(oracle *o, mpfr_srcptr v, fmt_mode m, bool sat)
{
	bool neg = mpfr_signbit(v) != 0;
	if (mpfr_zero_p(v))
		return sign_bit(o, neg);
	if (mpfr_cmpabs(v, o->maxv) > 0) {
		bool to_inf;
		switch (m) {
		case FMT_RTZ:  to_inf = false; break;
		case FMT_UP:   to_inf = !neg; break;
		case FMT_DOWN: to_inf = neg; break;
		case FMT_RTO:  to_inf = false; break;   /* CPFloat's round-to-odd: max, never inf */
		case FMT_SR_EQUAL: to_inf = o->sre_up; break;   /* max or inf by the element's one draw */
		default:       to_inf = true; break;
		}
		if (sat || !to_inf)
			return sign_bit(o, neg) | o->r->max_bits;
		return inf_or_nan(o, neg);
	}
	long e = (long)mpfr_get_exp(v) - 1;   /* |v| in [2^e, 2^(e+1)) */
	int fb = o->r->fb;
	uint32_t bits;
	if (e >= o->emin_f) {
		mpfr_mul_2si(o->tmp, v, fb - e, MPFR_RNDN);
		mpfr_abs(o->tmp, o->tmp, MPFR_RNDN);
		uint32_t sig = (uint32_t)mpfr_get_ui(o->tmp, MPFR_RNDN);
		bits = ((uint32_t)(e + o->r->bias) << fb) | (sig - (1u << fb));
	} else {
		mpfr_mul_2si(o->tmp, v, fb - o->emin_f, MPFR_RNDN);
		mpfr_abs(o->tmp, o->tmp, MPFR_RNDN);
		bits = (uint32_t)mpfr_get_ui(o->tmp, MPFR_RNDN);
	}
	return sign_bit(o, neg) | bits;
}

uint32_t oracle_expect(oracle *o, fmt_mode m, bool sat, uint32_t rbits)
{
	if (o->special_nan)
		return o->r->nan_bits;
	if (o->special_inf)
		return sat ? (sign_bit(o, o->neg) | o->r->max_bits) : inf_or_nan(o, o->neg);
	if (o->is_zero)
		return sign_bit(o, o->neg);
	mpfr_srcptr v;
	switch (m) {
	case FMT_RNE:  v = o->rn; break;
	case FMT_RTZ:  v = o->rz; break;
	case FMT_UP:   v = o->hi; break;
	case FMT_DOWN: v = o->lo; break;
	case FMT_RNA:
		if (o->exact) {
			v = o->lo;
		} else {
			/* d2 holds f * 2^32 here: compare f with 1/2 */
			mpq_set_ui(o->d1, 1u << 31, 1);
			int c = mpq_cmp(o->d2, o->d1);
			v = c < 0 ? o->lo : c > 0 ? o->hi : (o->neg ? o->lo : o->hi);
		}
		break;
	case FMT_SR:
		/* SR rounds the magnitude: away from zero iff rbits < ceil(f_mag * 2^32),
		 * f_mag the fraction of the gap beyond the neighbour toward zero. For
		 * x > 0 that is hi iff rbits < t = ceil(f * 2^32); for x < 0, f_mag = 1 - f
		 * and ceil((1 - f) * 2^32) = 2^32 - floor(f * 2^32). */
		if (o->exact)
			v = o->lo;
		else if (!o->neg)
			v = (uint64_t)rbits < o->t ? o->hi : o->lo;
		else
			v = (uint64_t)rbits < (1ull << 32) - o->t_floor ? o->lo : o->hi;
		break;
	case FMT_RTO:
		/* rtz, then the last bit of the significand ORed in when inexact:
		 * an even rtz result (zero included) moves one step away from zero */
		v = o->rz;
		if (!o->exact && !(oracle_encode(o, o->rz, FMT_RTZ, false) & 1))
			v = o->neg ? o->lo : o->hi;
		break;
	case FMT_RNZ:
		/* nearest, ties toward zero: the neighbour of smaller magnitude */
		if (o->exact) {
			v = o->lo;
		} else {
			mpq_set_ui(o->d1, 1u << 31, 1);   /* d2 holds f * 2^32 */
			int c = mpq_cmp(o->d2, o->d1);
			v = c < 0 ? o->lo : c > 0 ? o->hi : (o->neg ? o->hi : o->lo);
		}
		break;
	case FMT_SR_EQUAL:
		/* the magnitude goes up iff rbits < 2^31, whatever f; beyond max the
		 * same draw picks between max and the overflow result */
		o->sre_up = rbits < 0x80000000u;
		v = o->exact ? o->lo : o->sre_up != o->neg ? o->hi : o->lo;
		break;
	default:
		v = o->rn;
		break;
	}
	return oracle_encode(o, v, m, sat);
}
