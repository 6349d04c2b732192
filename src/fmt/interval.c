#include <math.h>

#include "fmt/decode.h"
#include "fmt/interval.h"

/* --- each mode's rule --- */

/* How a mode shares the open gap between two adjacent magnitudes a < b of
 * one sign: which of the two each real in it rounds to. */
typedef enum {
	GAP_TIE_LOW,      /* to the nearer; the midpoint to a */
	GAP_TIE_HIGH,     /* to the nearer; the midpoint to b */
	GAP_ALL_LOW,      /* all of it to a */
	GAP_ALL_HIGH,     /* all of it to b */
	GAP_RANDOM,       /* to either, b with probability (x - a) / (b - a) */
	GAP_RANDOM_HALF,  /* to either, each with probability 1/2 */
} gap_rule;

/* Whether the significand of pattern bits is odd: its last bit, except in
 * a format whose only significand bit is the implicit 1 (e8m0, P3109's
 * binary8p1: no fraction bits behind an exponent), where every nonzero
 * significand is 1 and zero's is 0. */
static bool significand_odd(const fmt_info *f, uint32_t bits)
{
	if (f->frac_bits == 0 && f->exp_bits > 0) {
		bool zero = f->specials != FMT_SPECIALS_E8M0 && (bits & ~fmt_sign_mask(f) & fmt_all_mask(f)) == 0;
		return !zero;
	}
	return (bits & 1) != 0;
}

/* The rule of mode m between magnitudes a < b of values of sign neg in f,
 * a being pattern a_bits (b's pattern is the next magnitude's). */
static gap_rule gap_rule_of(const fmt_info *f, fmt_mode m, bool neg, uint32_t a_bits)
{
	switch (m) {
	/* a tie to the even pattern (e8m0: by its exponent, the pattern) */
	case FMT_RNE:  return a_bits & 1 ? GAP_TIE_HIGH : GAP_TIE_LOW;
	case FMT_RNA:  return GAP_TIE_HIGH;                         /* a tie away from zero */
	case FMT_RNZ:  return GAP_TIE_LOW;                          /* a tie toward zero */
	case FMT_RTZ:  return GAP_ALL_LOW;
	case FMT_UP:   return neg ? GAP_ALL_LOW : GAP_ALL_HIGH;     /* toward +inf */
	case FMT_DOWN: return neg ? GAP_ALL_HIGH : GAP_ALL_LOW;     /* toward -inf */
	/* truncation, then the last significand bit set: the odd one takes the gap */
	case FMT_RTO:  return significand_odd(f, a_bits) ? GAP_ALL_LOW : GAP_ALL_HIGH;
	case FMT_SR:   return GAP_RANDOM;
	case FMT_SR_EQUAL: return GAP_RANDOM_HALF;
	default:       return GAP_ALL_LOW;
	}
}

bool fmt_mode_stochastic(fmt_mode m)
{
	return m == FMT_SR || m == FMT_SR_EQUAL;
}

/* --- magnitudes --- */

/* One end of a value's interval in magnitudes: `at` (or +inf), open or
 * closed, and the probability between it and the value. */
typedef struct {
	mpq_t at;
	mpq_t far;   /* a RAMP or HALF side's neighbour */
	bool inf;
	bool closed;
	fmt_side side;
} mag_end;

/* A value's neighbours in magnitude on its own side of zero. */
typedef struct {
	bool has_toward;   /* false for a zero and for e8m0's smallest value */
	double toward;     /* |the neighbour toward zero| */
	uint32_t toward_bits;   /* its pattern */
	double away;       /* |the neighbour away from zero|; past the extreme
	                    * finite value, |extreme| + its spacing */
	bool away_past;    /* away is that value past the extreme */
} mag_nbrs;

static bool finite_class(fmt_class c)
{
	return c == FMT_CLASS_ZERO || c == FMT_CLASS_SUBNORMAL || c == FMT_CLASS_NORMAL;
}

/* The neighbours of the finite value bits (decoded d) on side neg (a zero's
 * side: the one its interval extends to). */
static void neighbours(const fmt_info *f, uint32_t bits, const fmt_decoded *d, bool neg, mag_nbrs *nb)
{
	uint32_t t, w;
	*nb = (mag_nbrs){ 0 };
	if (d->value != 0 && (neg ? fmt_next_up(f, bits, &t) : fmt_next_down(f, bits, &t))) {
		fmt_decoded dt;
		fmt_decode(f, t, &dt);
		if (finite_class(dt.cls) && (dt.value == 0 || (dt.value < 0) == neg)) {
			nb->has_toward = true;
			nb->toward = fabs(dt.value);
			nb->toward_bits = t;
		}
	}
	if (neg ? fmt_next_down(f, bits, &w) : fmt_next_up(f, bits, &w)) {
		fmt_decoded dw;
		fmt_decode(f, w, &dw);
		if (finite_class(dw.cls)) {
			nb->away = fabs(dw.value);
			return;
		}
	}
	nb->away = fabs(d->value) + d->ulp;   /* exact: d->ulp is a power of two of the grid */
	nb->away_past = true;
}

static void mid(mpq_t out, double a, double b)
{
	mpq_t t;
	mpq_init(t);
	mpq_set_d(out, a);
	mpq_set_d(t, b);
	mpq_add(out, out, t);
	mpq_div_2exp(out, out, 1);
	mpq_clear(t);
}

/* The last magnitude between v and away > v that SR can round down to v:
 * away - (away - v) * 2^-32, where the step away from zero, with probability
 * ceil(fraction * 2^32) / 2^32, becomes certain. */
static void sr_last(mpq_t out, double v, double away)
{
	mpq_t g;
	mpq_init(g);
	mpq_set_d(out, away);
	mpq_set_d(g, v);
	mpq_sub(g, out, g);
	mpq_div_2exp(g, g, 32);
	mpq_sub(out, out, g);
	mpq_clear(g);
}

/* The lower end (toward zero) of magnitude v's interval. */
static void toward_end(mag_end *e, const fmt_info *f, fmt_mode m, bool neg, double v, const mag_nbrs *nb)
{
	e->inf = false;
	if (v == 0) {   /* a zero's interval starts at itself */
		mpq_set_ui(e->at, 0, 1);
		e->closed = true;
		e->side = FMT_SIDE_NONE;
		return;
	}
	if (!nb->has_toward) {   /* no zero (e8m0): everything below clamps to v */
		mpq_set_ui(e->at, 0, 1);
		e->closed = false;
		e->side = FMT_SIDE_ONE;
		return;
	}
	switch (gap_rule_of(f, m, neg, nb->toward_bits)) {
	case GAP_TIE_LOW:     mid(e->at, nb->toward, v); e->closed = false; e->side = FMT_SIDE_ONE; break;
	case GAP_TIE_HIGH:    mid(e->at, nb->toward, v); e->closed = true; e->side = FMT_SIDE_ONE; break;
	case GAP_ALL_LOW:     mpq_set_d(e->at, v); e->closed = true; e->side = FMT_SIDE_NONE; break;
	case GAP_ALL_HIGH:    mpq_set_d(e->at, nb->toward); e->closed = false; e->side = FMT_SIDE_ONE; break;
	case GAP_RANDOM:      mpq_set_d(e->at, nb->toward); e->closed = false; e->side = FMT_SIDE_RAMP; break;
	case GAP_RANDOM_HALF: mpq_set_d(e->at, nb->toward); e->closed = false; e->side = FMT_SIDE_HALF; break;
	}
	mpq_set_d(e->far, nb->toward);
}

/* The upper end (away from zero) of magnitude v's interval, v being
 * pattern v_bits. */
static void away_end(mag_end *e, const fmt_info *f, fmt_mode m, bool neg, double v, uint32_t v_bits,
                     const mag_nbrs *nb)
{
	e->inf = false;
	switch (gap_rule_of(f, m, neg, v_bits)) {
	case GAP_TIE_LOW:     mid(e->at, v, nb->away); e->closed = true; e->side = FMT_SIDE_ONE; break;
	case GAP_TIE_HIGH:    mid(e->at, v, nb->away); e->closed = false; e->side = FMT_SIDE_ONE; break;
	case GAP_ALL_LOW:     mpq_set_d(e->at, nb->away); e->closed = false; e->side = FMT_SIDE_ONE; break;
	case GAP_ALL_HIGH:    mpq_set_d(e->at, v); e->closed = true; e->side = FMT_SIDE_NONE; break;
	case GAP_RANDOM:      sr_last(e->at, v, nb->away); e->closed = true; e->side = FMT_SIDE_RAMP; break;
	case GAP_RANDOM_HALF: mpq_set_d(e->at, nb->away); e->closed = false; e->side = FMT_SIDE_HALF; break;
	}
	mpq_set_d(e->far, nb->away);
}

/* An end reaching +inf: closed when the typed infinity rounds there too. */
static void inf_end(mag_end *e, bool closed)
{
	mpq_set_ui(e->at, 0, 1);
	e->inf = true;
	e->closed = closed;
	e->side = FMT_SIDE_ONE;
}

/* --- signed pieces --- */

static void point_set(fmt_num *p, const mag_end *e, bool neg)
{
	p->kind = e->inf ? NUM_INF : NUM_FINITE;
	p->neg = neg;
	mpq_set(p->mag, e->at);
}

/* Appends the piece of magnitudes [lo, hi] on side neg, centred at c. */
static void add_piece(fmt_interval *iv, const mag_end *lo, const mag_end *hi, const fmt_num *c, bool neg)
{
	if (iv->n == FMT_PIECES_MAX)
		return;
	fmt_piece *p = &iv->piece[iv->n++];
	point_set(&p->lo, neg ? hi : lo, neg);
	point_set(&p->hi, neg ? lo : hi, neg);
	p->lo_closed = neg ? hi->closed : lo->closed;
	p->hi_closed = neg ? lo->closed : hi->closed;
	p->below = neg ? hi->side : lo->side;
	p->above = neg ? lo->side : hi->side;
	p->below_far.neg = p->above_far.neg = neg;
	mpq_set(p->below_far.mag, neg ? hi->far : lo->far);
	mpq_set(p->above_far.mag, neg ? lo->far : hi->far);
	p->past = false;
	p->centre.kind = c->kind;
	p->centre.neg = c->neg;
	mpq_set(p->centre.mag, c->mag);
}

/* How much of the overflow of sign neg goes to bits: 2 all, 1 half (sr-
 * equal draws between the largest value and inf or NaN by its random
 * bits), 0 none. */
static int overflow_share(const fmt_info *f, const fmt_round_ctl *ctl, bool neg, uint32_t bits)
{
	fmt_round_ctl c = *ctl;
	c.rbits = 0;
	int n = fmt_overflow_result(f, &c, neg) == bits;
	c.rbits = UINT32_MAX;
	return n + (fmt_overflow_result(f, &c, neg) == bits);
}

/* The two ends of finite value v's interval (decoded d) on side neg. */
static void finite_ends(const fmt_info *f, const fmt_round_ctl *ctl, uint32_t bits, const fmt_decoded *d,
                        bool neg, mag_end *lo, mag_end *hi)
{
	mag_nbrs nb;
	neighbours(f, bits, d, neg, &nb);
	double v = fabs(d->value);
	toward_end(lo, f, ctl->mode, neg, v, &nb);
	int over = nb.away_past ? overflow_share(f, ctl, neg, bits) : 0;
	if (over) {   /* saturation: all beyond is v (sr-equal: half of it) */
		inf_end(hi, fmt_inf_result(f, ctl, neg) == bits);
		hi->side = over == 2 ? FMT_SIDE_ONE : FMT_SIDE_HALF;
	} else {
		away_end(hi, f, ctl->mode, neg, v, bits, &nb);
	}
}

static void mag_end_init(mag_end *e) { mpq_inits(e->at, e->far, NULL); }
static void mag_end_clear(mag_end *e) { mpq_clears(e->at, e->far, NULL); }

static void finite_interval(fmt_interval *iv, const fmt_info *f, const fmt_round_ctl *ctl, uint32_t bits,
                            const fmt_decoded *d)
{
	mag_end lo, hi, lo2, hi2;
	mag_end_init(&lo);
	mag_end_init(&hi);
	mag_end_init(&lo2);
	mag_end_init(&hi2);
	fmt_num c;
	fmt_num_init(&c);
	fmt_num_set_double(&c, d->value);
	fmt_decoded twin;
	fmt_decode(f, bits ^ fmt_sign_mask(f), &twin);
	bool unsigned_zero = d->value == 0 && fmt_has_sign(f) && twin.cls != FMT_CLASS_ZERO;
	if (unsigned_zero) {
		/* one zero for both signs (FNUZ): the negative side's reals, -0 up */
		finite_ends(f, ctl, bits, d, true, &lo, &hi);
		finite_ends(f, ctl, bits, d, false, &lo2, &hi2);
		add_piece(iv, &lo, &hi2, &c, false);
		fmt_piece *p = &iv->piece[0];
		point_set(&p->lo, &hi, true);
		p->lo_closed = hi.closed;
		p->below = hi.side;
		p->below_far.neg = true;
		mpq_set(p->below_far.mag, hi.far);
	} else {
		finite_ends(f, ctl, bits, d, d->neg, &lo, &hi);
		add_piece(iv, &lo, &hi, &c, d->neg);
	}
	fmt_num_clear(&c);
	mag_end_clear(&lo);
	mag_end_clear(&hi);
	mag_end_clear(&lo2);
	mag_end_clear(&hi2);
}

/* Whether bits is the finite value of sign neg farthest from zero. */
static bool is_extreme(const fmt_info *f, uint32_t bits, bool neg)
{
	fmt_decoded d;
	fmt_decode(f, bits, &d);
	if (!finite_class(d.cls) || d.value == 0 || (d.value < 0) != neg)
		return false;
	mag_nbrs nb;
	neighbours(f, bits, &d, neg, &nb);
	return nb.away_past;
}

/* The extreme finite value of sign neg: sign and magnitude for the table's
 * formats, else found among the patterns. */
static uint32_t extreme_bits(const fmt_info *f, bool neg)
{
	uint32_t guess = neg ? fmt_sign_mask(f) | fmt_max_bits(f) : fmt_max_bits(f);
	if (is_extreme(f, guess, neg) || f->width > 16)
		return guess;
	for (uint32_t b = 0; b <= fmt_all_mask(f); b++)
		if (is_extreme(f, b, neg))
			return b;
	return guess;
}

/* What inf or NaN pattern bits takes on side neg: the reals past the
 * extreme value when overflow gives bits (centred at the value past the
 * extreme), and the typed infinity when it gives bits. */
static void special_side(fmt_interval *iv, const fmt_info *f, const fmt_round_ctl *ctl, uint32_t bits, bool neg)
{
	int over = overflow_share(f, ctl, neg, bits);
	bool inf = fmt_inf_result(f, ctl, neg) == bits;
	if (!over && !inf)
		return;
	mag_end lo, hi;
	mag_end_init(&lo);
	mag_end_init(&hi);
	fmt_num c;
	fmt_num_init(&c);
	bool centre_past = false;
	inf_end(&hi, inf);
	if (over) {
		/* the value past the extreme, whose toward-zero neighbour the
		 * extreme is: its lower end by the mode's rule, as for a value */
		uint32_t x = extreme_bits(f, neg);
		fmt_decoded d;
		fmt_decode(f, x, &d);
		mag_nbrs nb, past;
		neighbours(f, x, &d, neg, &nb);
		past = (mag_nbrs){ .has_toward = true, .toward = fabs(d.value), .toward_bits = x };
		toward_end(&lo, f, ctl->mode, neg, nb.away, &past);
		fmt_num_set_double(&c, neg ? -nb.away : nb.away);
		hi.side = over == 2 ? FMT_SIDE_ONE : FMT_SIDE_HALF;
		centre_past = true;
	} else {
		mpq_set_ui(lo.at, 0, 1);
		lo.inf = true;
		lo.closed = true;
		lo.side = hi.side = FMT_SIDE_NONE;
		c.kind = NUM_INF;
		c.neg = neg;
	}
	add_piece(iv, &lo, &hi, &c, neg);
	iv->piece[iv->n - 1].past = centre_past;
	fmt_num_clear(&c);
	mag_end_clear(&lo);
	mag_end_clear(&hi);
}

/* --- the interface --- */

void fmt_interval_init(fmt_interval *iv)
{
	iv->n = 0;
	iv->stochastic = false;
	for (size_t i = 0; i < FMT_PIECES_MAX; i++) {
		fmt_num_init(&iv->piece[i].lo);
		fmt_num_init(&iv->piece[i].hi);
		fmt_num_init(&iv->piece[i].centre);
		fmt_num_init(&iv->piece[i].below_far);
		fmt_num_init(&iv->piece[i].above_far);
	}
}

void fmt_interval_clear(fmt_interval *iv)
{
	for (size_t i = 0; i < FMT_PIECES_MAX; i++) {
		fmt_num_clear(&iv->piece[i].lo);
		fmt_num_clear(&iv->piece[i].hi);
		fmt_num_clear(&iv->piece[i].centre);
		fmt_num_clear(&iv->piece[i].below_far);
		fmt_num_clear(&iv->piece[i].above_far);
	}
}

void fmt_interval_of(fmt_interval *iv, const fmt_info *f, const fmt_round_ctl *ctl, uint32_t bits)
{
	iv->n = 0;
	iv->stochastic = fmt_mode_stochastic(ctl->mode);
	bits &= fmt_all_mask(f);
	fmt_decoded d;
	fmt_decode(f, bits, &d);
	if (finite_class(d.cls)) {
		finite_interval(iv, f, ctl, bits, &d);
		return;
	}
	/* inf or NaN: overflow and typed infinities, the negative side first */
	if (fmt_has_sign(f))
		special_side(iv, f, ctl, bits, true);
	special_side(iv, f, ctl, bits, false);
}

/* -3 -inf, -2 negative, -1 -0, 1 +0, 2 positive, 3 +inf */
static int point_rank(const fmt_num *a)
{
	int r = a->kind == NUM_INF ? 3 : mpq_sgn(a->mag) != 0 ? 2 : 1;
	return a->neg ? -r : r;
}

int fmt_point_cmp(const fmt_num *a, const fmt_num *b)
{
	int ra = point_rank(a), rb = point_rank(b);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ra == 2)
		return mpq_cmp(a->mag, b->mag);
	if (ra == -2)
		return mpq_cmp(b->mag, a->mag);
	return 0;
}

bool fmt_piece_contains(const fmt_piece *p, const fmt_num *x)
{
	int lo = fmt_point_cmp(x, &p->lo), hi = fmt_point_cmp(x, &p->hi);
	return (lo > 0 || (lo == 0 && p->lo_closed)) && (hi < 0 || (hi == 0 && p->hi_closed));
}

/* ceil(q * 2^32) / 2^32: SR's probability of the step away from zero for
 * the fraction q of the gap (fmt_sr_round_up). */
static void sr_quantise(mpq_t q)
{
	mpz_t c;
	mpz_init(c);
	mpq_mul_2exp(q, q, 32);
	mpz_cdiv_q(c, mpq_numref(q), mpq_denref(q));
	mpq_set_z(q, c);
	mpq_div_2exp(q, q, 32);
	mpz_clear(c);
}

/* The probability of centre c for x between c and neighbour e on a RAMP
 * side. */
static void ramp(mpq_t p, const fmt_num *x, const fmt_num *c, const fmt_num *e)
{
	mpq_t w;
	mpq_init(w);
	if (mpq_cmp(e->mag, c->mag) < 0) {
		/* e toward zero: c is the step away, with probability ceil(...) */
		mpq_sub(p, x->mag, e->mag);
		mpq_sub(w, c->mag, e->mag);
		mpq_div(p, p, w);
		sr_quantise(p);
	} else {
		mpq_sub(p, x->mag, c->mag);
		mpq_sub(w, e->mag, c->mag);
		mpq_div(p, p, w);
		sr_quantise(p);
		mpq_set_ui(w, 1, 1);
		mpq_sub(p, w, p);
	}
	mpq_clear(w);
}

void fmt_interval_probability(const fmt_interval *iv, const fmt_num *x, mpq_t p)
{
	mpq_set_ui(p, 0, 1);
	for (size_t i = 0; i < iv->n; i++) {
		const fmt_piece *pc = &iv->piece[i];
		if (!fmt_piece_contains(pc, x))
			continue;
		int side = fmt_point_cmp(x, &pc->centre);
		fmt_side s = side < 0 ? pc->below : pc->above;
		if (side == 0 && pc->past)   /* the value past the extreme overflows as beyond it */
			s = pc->above;
		if ((side == 0 && !pc->past) || s == FMT_SIDE_ONE || x->kind == NUM_INF)
			mpq_set_ui(p, 1, 1);
		else if (s == FMT_SIDE_HALF)
			mpq_set_ui(p, 1, 2);
		else if (s == FMT_SIDE_RAMP)
			ramp(p, x, &pc->centre, side < 0 ? &pc->below_far : &pc->above_far);
		return;
	}
}
