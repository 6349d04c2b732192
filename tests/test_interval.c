/* The intervals of reals that round to each value (fmt/interval), checked
 * against the rounding core, which computes them nowhere: for every value
 * of every format of at most 8 bits, in every mode, with and without
 * saturation, each closed end rounds to the value and each open end to
 * another, points 2^-200 inside each end to the value and 2^-200 outside
 * to another; the intervals of a deterministic mode tile the extended line
 * with neither gap nor overlap (exact comparisons); in an SR mode the
 * probability the interval code states is the one the core's random-bit
 * threshold gives, and the probabilities of all values at a point sum to
 * one. Then intervals derived by hand: fp4-e2m1 in rne from OCP MX v1.0's
 * value table, fp16 at 1 and at 65504 with the overflow threshold 65520 of
 * IEEE 754-2019 section 7.4. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "fmt/decode.h"
#include "fmt/interval.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "testutil.h"

/* The table's formats of at most 8 bits (every one of them). */
static size_t small_ids(fmt_id *ids)
{
	size_t n = 0;
	for (int i = 0; i < FMT_COUNT; i++)
		if (fmt_get((fmt_id)i)->width <= 8)
			ids[n++] = (fmt_id)i;
	return n;
}

/* --- points --- */

/* The signed rational of a finite point into v. */
static void signed_of(mpq_t v, const fmt_num *p)
{
	mpq_set(v, p->mag);
	if (p->neg)
		mpq_neg(v, v);
}

/* p moved by dir * 2^-200 (dir +1 or -1) into *out; a zero moves off to
 * that side. Infinite p: the finite point 2^1000 inward. */
static void nudge(fmt_num *out, const fmt_num *p, int dir)
{
	out->kind = NUM_FINITE;
	if (p->kind == NUM_INF) {
		mpq_set_ui(out->mag, 1, 1);
		mpq_mul_2exp(out->mag, out->mag, 1000);
		out->neg = p->neg;
		return;
	}
	mpq_t v, e;
	mpq_inits(v, e, NULL);
	signed_of(v, p);
	mpq_set_ui(e, 1, 1);
	mpq_div_2exp(e, e, 200);
	if (dir < 0)
		mpq_neg(e, e);
	mpq_add(v, v, e);
	out->neg = mpq_sgn(v) < 0;
	mpq_abs(out->mag, v);
	mpq_clears(v, e, NULL);
}

/* The core's result for x under ctl with random bits r. */
static uint32_t core(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_num *x, uint32_t r)
{
	fmt_round_ctl c = *ctl;
	c.rbits = r;
	return fmt_round_num(f, &c, x, NULL);
}

/* Whether the core can give bits for x (either random extreme: 0 steps away
 * from zero whenever inexact, all ones toward it unless the gap fraction
 * exceeds 1 - 2^-32). */
static bool core_can(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_num *x, uint32_t bits)
{
	return core(f, ctl, x, 0) == bits || core(f, ctl, x, UINT32_MAX) == bits;
}

/* Whether the core always gives bits for x. */
static bool core_always(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_num *x, uint32_t bits)
{
	return core(f, ctl, x, 0) == bits && core(f, ctl, x, UINT32_MAX) == bits;
}

/* --- each piece against the core --- */

/* The probability the interval states at x against the core's threshold:
 * the step away from zero is taken iff rbits < K, so a value away from x
 * comes for rbits 0..K-1, one toward zero for K..2^32-1. */
static void check_probability(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_interval *iv,
                              const fmt_num *x, uint32_t bits, const char *what)
{
	mpq_t p;
	mpq_init(p);
	fmt_interval_probability(iv, x, p);
	mpq_mul_2exp(p, p, 32);
	ck_assert_msg(mpz_cmp_ui(mpq_denref(p), 1) == 0, "%s: probability not k/2^32", what);
	uint64_t k = mpz_get_ui(mpq_numref(p));
	ck_assert_msg(k >= 1 && k <= (1ull << 32), "%s: probability %llu/2^32 inside", what, (unsigned long long)k);
	fmt_decoded d;
	fmt_decode(f, bits, &d);
	mpq_t xv;
	mpq_init(xv);
	bool away = true;   /* an overflow's inf or NaN lies away from x */
	if (!isinf(d.value) && !isnan(d.value)) {
		mpq_set_d(xv, fabs(d.value));
		away = mpq_cmp(x->mag, xv) < 0;
	}
	uint64_t kaway = away ? k : (1ull << 32) - k;
	if (kaway > 0)
		ck_assert_msg((core(f, ctl, x, (uint32_t)(kaway - 1)) == bits) == away, "%s: rbits K-1", what);
	if (kaway < (1ull << 32))
		ck_assert_msg((core(f, ctl, x, (uint32_t)kaway) == bits) == !away, "%s: rbits K", what);
	mpq_clears(p, xv, NULL);
}

/* One end e of a piece of bits (closed or not), inward dir. */
static void check_end(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_interval *iv, uint32_t bits,
                      const fmt_num *e, bool closed, int dir, bool point, const char *what)
{
	fmt_num in, out;
	fmt_num_init(&in);
	fmt_num_init(&out);
	if (closed && iv->stochastic)
		ck_assert_msg(core_can(f, ctl, e, bits), "%s: closed end cannot round to the value", what);
	else if (closed)
		ck_assert_msg(core_always(f, ctl, e, bits), "%s: closed end does not round to the value", what);
	else
		ck_assert_msg(!core_can(f, ctl, e, bits), "%s: open end rounds to the value", what);
	nudge(&in, e, dir);
	if (point) {
		/* [v, v]: nothing inside but v */
	} else if (iv->stochastic) {
		ck_assert_msg(core_can(f, ctl, &in, bits), "%s: just inside cannot round to the value", what);
		check_probability(f, ctl, iv, &in, bits, what);
	} else {
		ck_assert_msg(core_always(f, ctl, &in, bits), "%s: just inside does not round to the value", what);
	}
	if (e->kind == NUM_FINITE) {
		nudge(&out, e, -dir);
		ck_assert_msg(!core_can(f, ctl, &out, bits), "%s: just outside rounds to the value", what);
		if (mpq_sgn(e->mag) == 0 && closed) {   /* the other zero lies outside a closed zero end */
			fmt_num z;
			fmt_num_init(&z);
			z.neg = !e->neg;
			fmt_decoded d;
			fmt_decode(f, bits, &d);
			if (fmt_has_neg_zero(f) || d.cls != FMT_CLASS_ZERO)
				ck_assert_msg(!core_can(f, ctl, &z, bits), "%s: the other zero rounds to the value", what);
			fmt_num_clear(&z);
		}
	}
	fmt_num_clear(&in);
	fmt_num_clear(&out);
}

static void check_piece(const fmt_info *f, const fmt_round_ctl *ctl, const fmt_interval *iv, uint32_t bits,
                        const fmt_piece *p)
{
	char what[160];
	snprintf(what, sizeof what, "%s %s%s 0x%x", f->name, fmt_mode_name(ctl->mode), ctl->saturate ? " sat" : "",
	         bits);
	int c = fmt_point_cmp(&p->lo, &p->hi);
	ck_assert_msg(c < 0 || (c == 0 && p->lo_closed && p->hi_closed), "%s: empty piece", what);
	/* [v, v], or FNUZ's [-0, 0] in rto: no reals strictly inside */
	bool point = c == 0 || (p->lo.kind == NUM_FINITE && p->hi.kind == NUM_FINITE && mpq_sgn(p->lo.mag) == 0 &&
	                        mpq_sgn(p->hi.mag) == 0);
	check_end(f, ctl, iv, bits, &p->lo, p->lo_closed, +1, point, what);
	check_end(f, ctl, iv, bits, &p->hi, p->hi_closed, -1, point, what);
	if (p->centre.kind == NUM_FINITE && fmt_piece_contains(p, &p->centre)) {
		if (iv->stochastic)   /* the value itself: 1; past the largest: the overflow's share */
			check_probability(f, ctl, iv, &p->centre, bits, what);
		else
			ck_assert_msg(core_always(f, ctl, &p->centre, bits), "%s: the centre", what);
	}
}

/* --- tiling --- */

typedef struct {
	const fmt_piece *p;
	uint32_t bits;
} tile;

static int tile_cmp(const void *a, const void *b)
{
	const tile *x = a, *y = b;
	int c = fmt_point_cmp(&x->p->lo, &y->p->lo);
	if (c)
		return c;
	return (int)y->p->lo_closed - (int)x->p->lo_closed;   /* [a before (a */
}

/* Whether pattern 0 is a zero (not in e8m0, whose pattern 0 is 2^-127). */
static bool has_zero(const fmt_info *f)
{
	fmt_decoded d;
	fmt_decode(f, 0, &d);
	return d.cls == FMT_CLASS_ZERO;
}

/* Consecutive pieces meet: one end closed and the other open at one point,
 * or -0 closed then +0 closed. */
static bool meet(const fmt_piece *a, const fmt_piece *b)
{
	if (fmt_point_cmp(&a->hi, &b->lo) == 0)
		return a->hi_closed != b->lo_closed;
	return a->hi.kind == NUM_FINITE && b->lo.kind == NUM_FINITE && mpq_sgn(a->hi.mag) == 0 &&
	       mpq_sgn(b->lo.mag) == 0 && a->hi.neg && !b->lo.neg && a->hi_closed && b->lo_closed;
}

static void check_tiling(const fmt_info *f, const fmt_round_ctl *ctl, fmt_interval *ivs)
{
	tile t[2 * 256];
	size_t n = 0;
	for (uint32_t b = 0; b <= fmt_all_mask(f); b++)
		for (size_t i = 0; i < ivs[b].n; i++)
			t[n++] = (tile){ &ivs[b].piece[i], b };
	qsort(t, n, sizeof t[0], tile_cmp);
	ck_assert(n > 0);
	const fmt_piece *first = t[0].p, *last = t[n - 1].p;
	if (fmt_has_sign(f))
		ck_assert_msg(first->lo.kind == NUM_INF && first->lo.neg && first->lo_closed, "%s %s: starts at -inf",
		              f->name, fmt_mode_name(ctl->mode));
	else   /* unsigned: from 0, or above it without a zero (e8m0) */
		ck_assert_msg(first->lo.kind == NUM_FINITE && mpq_sgn(first->lo.mag) == 0 && !first->lo.neg &&
		              first->lo_closed == has_zero(f), "%s: starts at 0", f->name);
	ck_assert_msg(last->hi.kind == NUM_INF && !last->hi.neg && last->hi_closed, "%s %s: ends at inf]", f->name,
	              fmt_mode_name(ctl->mode));
	for (size_t i = 0; i + 1 < n; i++)
		ck_assert_msg(meet(t[i].p, t[i + 1].p), "%s %s%s: 0x%x then 0x%x leave a gap or overlap", f->name,
		              fmt_mode_name(ctl->mode), ctl->saturate ? " sat" : "", t[i].bits, t[i + 1].bits);
}

/* In an SR mode: at every end and near it, the values' probabilities add
 * up to one. */
static void check_sum(const fmt_info *f, fmt_interval *ivs, const fmt_num *x)
{
	mpq_t sum, p;
	mpq_inits(sum, p, NULL);
	for (uint32_t b = 0; b <= fmt_all_mask(f); b++) {
		fmt_interval_probability(&ivs[b], x, p);
		mpq_add(sum, sum, p);
	}
	/* an unsigned format's domain: the reals from 0 (from above 0 without a zero) */
	bool out = !fmt_has_sign(f) && (x->neg || (mpq_sgn(x->mag) == 0 && !has_zero(f)));
	ck_assert_msg(mpq_cmp_ui(sum, out ? 0 : 1, 1) == 0, "%s: probabilities sum to %f", f->name, mpq_get_d(sum));
	mpq_clears(sum, p, NULL);
}

static void check_sums(const fmt_info *f, fmt_interval *ivs)
{
	fmt_num x;
	fmt_num_init(&x);
	for (uint32_t b = 0; b <= fmt_all_mask(f); b++)
		for (size_t i = 0; i < ivs[b].n; i++) {
			const fmt_piece *p = &ivs[b].piece[i];
			for (int dir = -1; dir <= 1; dir += 2) {
				nudge(&x, &p->lo, dir);
				check_sum(f, ivs, &x);
				nudge(&x, &p->hi, dir);
				check_sum(f, ivs, &x);
			}
		}
	fmt_num_clear(&x);
}

START_TEST(every_value_every_mode)
{
	fmt_id ids[FMT_COUNT];
	size_t nids = small_ids(ids);
	ck_assert(nids >= 8);
	fmt_interval *ivs = malloc(256 * sizeof *ivs);
	ck_assert_ptr_nonnull(ivs);
	for (size_t i = 0; i < 256; i++)
		fmt_interval_init(&ivs[i]);
	for (size_t k = 0; k < nids; k++) {
		const fmt_info *f = fmt_get(ids[k]);
		for (int m = 0; m < FMT_MODE_COUNT; m++)
			for (int sat = 0; sat <= 1; sat++) {
				fmt_round_ctl ctl = { .mode = (fmt_mode)m, .saturate = sat };
				for (uint32_t b = 0; b <= fmt_all_mask(f); b++) {
					fmt_interval_of(&ivs[b], f, &ctl, b);
					for (size_t i = 0; i < ivs[b].n; i++)
						check_piece(f, &ctl, &ivs[b], b, &ivs[b].piece[i]);
				}
				if (fmt_mode_stochastic(ctl.mode))
					check_sums(f, ivs);
				else
					check_tiling(f, &ctl, ivs);
			}
	}
	for (size_t i = 0; i < 256; i++)
		fmt_interval_clear(&ivs[i]);
	free(ivs);
}
END_TEST

/* fp16 and bf16: every 61st pattern's pieces against the core, every mode. */
START_TEST(sixteen_bits_sampled)
{
	const fmt_id ids[] = { FMT_FP16, FMT_BF16 };
	fmt_interval iv;
	fmt_interval_init(&iv);
	for (size_t k = 0; k < 2; k++) {
		const fmt_info *f = fmt_get(ids[k]);
		for (int m = 0; m < FMT_MODE_COUNT; m++) {
			fmt_round_ctl ctl = { .mode = (fmt_mode)m };
			for (uint32_t b = 0; b <= 0xffff; b += (b & 0x7fff) >= 0x7bf0 ? 1 : 61) {
				fmt_interval_of(&iv, f, &ctl, b);
				for (size_t i = 0; i < iv.n; i++)
					check_piece(f, &ctl, &iv, b, &iv.piece[i]);
			}
		}
	}
	fmt_interval_clear(&iv);
}
END_TEST

/* --- by hand --- */

/* One expected piece: lo and hi as binary64 (+-inf allowed; -0.0 is -0). */
typedef struct {
	double lo;
	bool lo_closed;
	double hi;
	bool hi_closed;
} want_piece;

static void expect_piece(const fmt_info *f, fmt_mode m, uint32_t bits, want_piece w)
{
	fmt_round_ctl ctl = { .mode = m };
	fmt_interval iv;
	fmt_interval_init(&iv);
	fmt_interval_of(&iv, f, &ctl, bits);
	ck_assert_msg(iv.n == 1, "%s 0x%x: %zu pieces", f->name, bits, iv.n);
	fmt_num lo, hi;
	fmt_num_init(&lo);
	fmt_num_init(&hi);
	fmt_num_set_double(&lo, w.lo);
	fmt_num_set_double(&hi, w.hi);
	const fmt_piece *p = &iv.piece[0];
	ck_assert_msg(fmt_point_cmp(&p->lo, &lo) == 0 && p->lo_closed == w.lo_closed, "%s 0x%x: lower end %g%s",
	              f->name, bits, w.lo, w.lo_closed ? " closed" : " open");
	ck_assert_msg(fmt_point_cmp(&p->hi, &hi) == 0 && p->hi_closed == w.hi_closed, "%s 0x%x: upper end %g%s",
	              f->name, bits, w.hi, w.hi_closed ? " closed" : " open");
	fmt_num_clear(&lo);
	fmt_num_clear(&hi);
	fmt_interval_clear(&iv);
}

/* OCP MX v1.0 (section 5.3.3, FP4 E2M1): patterns 0..7 are 0, 0.5, 1, 1.5,
 * 2, 3, 4, 6 (the same table as Modular MAX's fp4_utils E2M1_TO_FLOAT32);
 * no inf, no NaN, saturating. In rne each end is the midpoint with the
 * neighbour: 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5; a midpoint belongs to the
 * even pattern (0, 2, 4, 6 hold 0, 1, 2, 4), so their ends are closed and
 * the odd patterns' open; 1 takes [0.75, 1.25]. Past 6 nothing is
 * larger: 6 keeps (5, inf] (inf itself saturates to 6). The negatives are
 * the mirror, and -0 takes [-0.25, -0]. */
START_TEST(fp4_by_hand)
{
	const fmt_info *f = fmt_get(FMT_E2M1);
	static const want_piece pos[8] = {
		{ 0, true, 0.25, true },  { 0.25, false, 0.75, false }, { 0.75, true, 1.25, true },
		{ 1.25, false, 1.75, false }, { 1.75, true, 2.5, true }, { 2.5, false, 3.5, false },
		{ 3.5, true, 5, true },    { 5, false, INFINITY, true },
	};
	for (uint32_t b = 0; b < 8; b++) {
		expect_piece(f, FMT_RNE, b, pos[b]);
		want_piece neg = { -pos[b].hi, pos[b].hi_closed, b ? -pos[b].lo : -0.0, pos[b].lo_closed };
		expect_piece(f, FMT_RNE, 0x8 | b, neg);
	}
	/* rtz: a value takes [itself, next) toward zero, 6 all beyond */
	expect_piece(f, FMT_RTZ, 0x2, (want_piece){ 1, true, 1.5, false });
	expect_piece(f, FMT_RTZ, 0x7, (want_piece){ 6, true, INFINITY, true });
}
END_TEST

/* Round to odd (truncate toward zero, then set the last significand bit
 * when inexact): a real strictly between two neighbours goes to the odd
 * one, so an odd value takes the open interval between its neighbours and
 * an even one only itself. fp4-e2m1 (values above): 0.5, 1.5, 3 and 6 are
 * the odd patterns 1, 3, 5, 7: 0.5 takes (0, 1), 1.5 (1, 2), 3 (2, 4); 6
 * takes (4, inf] (fp4 saturates, inf too); 0, 1, 2 and 4 themselves only.
 * e8m0's significand is the implicit 1 alone, always odd: truncation is
 * already odd, so rto is rtz there and 2^-126 takes [2^-126, 2^-125). */
START_TEST(rto_by_hand)
{
	const fmt_info *f = fmt_get(FMT_E2M1);
	expect_piece(f, FMT_RTO, 0x1, (want_piece){ 0, false, 1, false });
	expect_piece(f, FMT_RTO, 0x2, (want_piece){ 1, true, 1, true });
	expect_piece(f, FMT_RTO, 0x3, (want_piece){ 1, false, 2, false });
	expect_piece(f, FMT_RTO, 0x5, (want_piece){ 2, false, 4, false });
	expect_piece(f, FMT_RTO, 0x6, (want_piece){ 4, true, 4, true });
	expect_piece(f, FMT_RTO, 0x7, (want_piece){ 4, false, INFINITY, true });
	expect_piece(f, FMT_RTO, 0xb, (want_piece){ -2, false, -1, false });
	expect_piece(f, FMT_RTO, 0x0, (want_piece){ 0, true, 0, true });
	expect_piece(fmt_get(FMT_E8M0), FMT_RTO, 0x01, (want_piece){ 0x1p-126, true, 0x1p-125, false });
	/* rnz, ties toward zero: the tie 0.75 (between 0.5 and 1) goes to 0.5, 1.25 to 1 */
	expect_piece(f, FMT_RNZ, 0x2, (want_piece){ 0.75, false, 1.25, true });
}
END_TEST

/* IEEE binary16: 1 = 0x3c00, its neighbours 1 - 2^-11 (0x3bff) and
 * 1 + 2^-10 (0x3c01); 0x3c00 is even, so in rne both midpoints are its:
 * [1 - 2^-12, 1 + 2^-11]. 65504 = 0x7bff is odd; below it 65472, and the
 * next value with an unbounded exponent is 65536 = 2^16. IEEE 754-2019
 * section 7.4: overflow is signalled when the result rounded as if the
 * exponent range were unbounded exceeds the largest finite number, and in
 * rne the result is then inf: 65520, the midpoint, ties to the even 2^16,
 * so 0x7bff takes (65488, 65520) and inf [65520, inf]. rtz: 65504 takes
 * [65504, inf) and inf only the typed inf. */
START_TEST(fp16_by_hand)
{
	const fmt_info *f = fmt_get(FMT_FP16);
	expect_piece(f, FMT_RNE, 0x3c00, (want_piece){ 1 - 0x1p-12, true, 1 + 0x1p-11, true });
	expect_piece(f, FMT_RNE, 0x3c01, (want_piece){ 1 + 0x1p-11, false, 1 + 0x1p-10 + 0x1p-11, false });
	expect_piece(f, FMT_RNE, 0x7bff, (want_piece){ 65488, false, 65520, false });
	expect_piece(f, FMT_RNE, 0x7c00, (want_piece){ 65520, true, INFINITY, true });
	expect_piece(f, FMT_RNE, 0xfc00, (want_piece){ -INFINITY, true, -65520, true });
	expect_piece(f, FMT_RTZ, 0x7bff, (want_piece){ 65504, true, INFINITY, false });
	expect_piece(f, FMT_RTZ, 0x7c00, (want_piece){ INFINITY, true, INFINITY, true });
	/* rna: the tie 1 - 2^-12 goes away from zero, to 1; 1 + 2^-11 to 0x3c01 */
	expect_piece(f, FMT_RNA, 0x3c00, (want_piece){ 1 - 0x1p-12, true, 1 + 0x1p-11, false });
	/* the signed zeros: 2^-25 is half the smallest subnormal 2^-24 */
	expect_piece(f, FMT_RNE, 0x0000, (want_piece){ 0, true, 0x1p-25, true });
	expect_piece(f, FMT_RNE, 0x8000, (want_piece){ -0x1p-25, true, -0.0, true });
	expect_piece(f, FMT_UP, 0x0000, (want_piece){ 0, true, 0, true });
	expect_piece(f, FMT_DOWN, 0x8000, (want_piece){ -0.0, true, -0.0, true });
}
END_TEST

/* OCP OFP8 E4M3 (fn): no inf; 448 = 0x7e is the largest, 0x7f a NaN; the
 * unbounded next value is 480 and the rne midpoint 464 ties to 448 (0x7e
 * even), so 448 takes [432, 464] and the NaN 0x7f what overflows, (464, inf].
 * FNUZ: 0x80 is the one NaN and both signs overflow to it: two pieces. */
START_TEST(nan_overflow_by_hand)
{
	const fmt_info *f = fmt_get(FMT_E4M3);
	expect_piece(f, FMT_RNE, 0x7e, (want_piece){ 432, true, 464, true });
	expect_piece(f, FMT_RNE, 0x7f, (want_piece){ 464, false, INFINITY, true });
	expect_piece(f, FMT_RNE, 0xff, (want_piece){ -INFINITY, true, -464, false });
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	fmt_interval iv;
	fmt_interval_init(&iv);
	fmt_interval_of(&iv, fmt_get(FMT_E4M3FNUZ), &ctl, 0x80);
	ck_assert_uint_eq(iv.n, 2);
	/* 240 = 0x7f is odd: the midpoint 248 with 256 overflows */
	ck_assert(mpq_cmp_ui(iv.piece[0].hi.mag, 248, 1) == 0 && iv.piece[0].hi.neg && iv.piece[0].hi_closed);
	ck_assert(mpq_cmp_ui(iv.piece[1].lo.mag, 248, 1) == 0 && !iv.piece[1].lo.neg && iv.piece[1].lo_closed);
	/* a NaN pattern that nothing gives */
	fmt_interval_of(&iv, fmt_get(FMT_FP16), &ctl, 0x7e01);
	ck_assert_uint_eq(iv.n, 0);
	fmt_interval_clear(&iv);
}
END_TEST

static Suite *interval_suite(void)
{
	Suite *s = suite_create("interval");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, every_value_every_mode);
	tcase_add_test(tc, sixteen_bits_sampled);
	suite_add_tcase(s, tc);
	tc = tcase_create("by_hand");
	tcase_add_test(tc, fp4_by_hand);
	tcase_add_test(tc, fp16_by_hand);
	tcase_add_test(tc, rto_by_hand);
	tcase_add_test(tc, nan_overflow_by_hand);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(interval_suite());
}
