/* The set of reals that rounds to a value of a format in a mode: its
 * interval (two for the FNUZ NaN, which overflow of either sign gives),
 * each end exact, open or closed. Derived from each mode's definition: the
 * value's neighbours (fmt_next_up, fmt_next_down and the decoded values),
 * the exact midpoints between them, which neighbour a tie or a directed
 * mode picks, and where the overflow of fmt_overflow_result starts; never
 * by probing fmt_round_*.
 *
 * The line is the extended reals with -0 just below +0: the typed -0
 * rounds to -0 and 0 to +0, so -0's interval ends at -0 and +0's starts
 * at +0; the typed infinities are the line's ends, so an interval that
 * ends at inf is closed there when inf rounds to the value. For the SR
 * modes a piece is the set where the value has a nonzero probability,
 * between the neighbours, and the sides say how the probability falls
 * from the centre. */
#ifndef MIXPREC_FMT_INTERVAL_H
#define MIXPREC_FMT_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "fmt/parse.h"
#include "fmt/round.h"

/* The probability that a real x on one side of a piece's centre (between
 * the centre and an end) rounds to the piece's value. */
typedef enum {
	FMT_SIDE_NONE,   /* no reals: the end is the centre itself */
	FMT_SIDE_ONE,    /* every x there, with probability 1 */
	FMT_SIDE_RAMP,   /* SR: linear, 1 at the centre to 0 at the neighbour
	                  * (the side's far point); the probability of the step
	                  * away from zero is rounded up to a multiple of 2^-32,
	                  * as fmt_sr_round_up does, so on the side away from
	                  * zero it is 0 already in the gap's last 2^-32: the
	                  * piece ends there, closed, short of the neighbour */
	FMT_SIDE_HALF,   /* sr-equal: 1/2 */
} fmt_side;

/* One interval [lo, hi] (each end open or closed) of the extended line. */
typedef struct {
	fmt_num lo, hi;
	bool lo_closed, hi_closed;
	/* The value itself (the format's value; for the reals past the largest
	 * value that overflow to inf or NaN, the first value past the largest,
	 * |max| + its spacing; inf for the typed infinity alone). */
	fmt_num centre;
	bool past;               /* the centre is that value past the largest */
	fmt_side below, above;   /* on (lo, centre) and on (centre, hi) */
	fmt_num below_far, above_far;   /* a RAMP or HALF side's neighbour */
} fmt_piece;

enum { FMT_PIECES_MAX = 2 };

typedef struct {
	size_t n;                         /* 0: no real rounds to the value */
	fmt_piece piece[FMT_PIECES_MAX];  /* in increasing order */
	bool stochastic;                  /* an SR mode: the pieces are supports */
} fmt_interval;

void fmt_interval_init(fmt_interval *iv);
void fmt_interval_clear(fmt_interval *iv);

/* The reals that round to pattern bits of f under ctl (its mode and
 * saturate; rbits unused) into *iv (fmt_interval_init first). A NaN
 * pattern that no overflow gives has none; e8m0's domain is the positive
 * reals (zero and negatives are invalid there). */
void fmt_interval_of(fmt_interval *iv, const fmt_info *f, const fmt_round_ctl *ctl, uint32_t bits);

/* Whether the mode is stochastic (the interval is a support). */
bool fmt_mode_stochastic(fmt_mode m);

/* Orders two points of the extended line (kind NUM_FINITE or NUM_INF),
 * -0 below +0: <0, 0 or >0. */
int fmt_point_cmp(const fmt_num *a, const fmt_num *b);

/* Whether x (finite or inf, not NaN) lies in the piece. */
bool fmt_piece_contains(const fmt_piece *p, const fmt_num *x);

/* The probability that x rounds to the interval's value, exactly, into p:
 * 0 outside its pieces, 1 at its centre and everywhere in a deterministic
 * mode's piece, by the sides' rule in an SR mode's. */
void fmt_interval_probability(const fmt_interval *iv, const fmt_num *x, mpq_t p);

#endif
