/* Adam's second moment in a narrow format, one value at a time: the EMA
 * v <- round_F(fl32(fl32(b v) + fl32(c g2))), b = fl32(beta2), c = fl32(1 - b),
 * from v = 0 with a constant g2. With round-to-nearest the increment
 * c (g2 - v) shrinks as v grows, and once it is below half the spacing of F
 * at v it is rounded away: v stops far below g2. Stochastic rounding keeps
 * the increment on average. The fp32 recurrence (no round_F) and the exact
 * EMA in fp64 are computed alongside. */
#ifndef MIXPREC_DRIFT_EMA_H
#define MIXPREC_DRIFT_EMA_H

#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "fmt/round.h"
#include "util/status.h"

typedef struct {
	double beta2;        /* in (0, 1) */
	double g2;           /* the squared gradient of every step */
	fmt_id fmt;          /* F */
	fmt_mode mode;       /* FMT_RNE or FMT_SR */
	size_t steps;        /* updates simulated */
	size_t elements;     /* independent values (SR: each its own draws; RNE: all the same) */
	uint64_t seed;       /* SR */
} ema_params;

/* beta2 0.999, g2 1, bf16, rne, 20 / (1 - beta2) steps, 1000 elements, seed 0. */
ema_params ema_defaults(void);

/* The state after some steps. */
typedef struct {
	size_t step;
	double v;                /* the mean over the elements of v in F */
	double v32, v64;         /* the fp32 recurrence; the exact EMA in fp64 */
	double unchanged_frac;   /* share of the updates so far (all elements) that left v unchanged */
} ema_state;

typedef struct {
	ema_state final;
	/* RNE: a fixed point is reached once an update leaves v unchanged;
	 * stalled then, with the value and the number of updates that moved v
	 * before it (the update after the last of them is the first that
	 * changes nothing). SR never stalls for good: stalled is 0. */
	int stalled;
	double stall_value;
	size_t stall_steps;
	/* RNE, stalled: what an update adds to stall_value before round_F
	 * (fl32(fl32(b v) + fl32(c g2)) - v), and half the spacing of F above
	 * stall_value, which that falls short of */
	double increment, half_spacing;
} ema_result;

/* Called after every step (step 1..steps), e.g. for a CSV; may be NULL. */
typedef void (*ema_emit)(void *ctx, const ema_state *s);

/* Runs the recurrence. MP_EINVAL for beta2 outside (0, 1), a non-finite or
 * negative g2, zero steps or elements, or a mode other than RNE and SR;
 * MP_EUNSUPPORTED for a format the bulk rounding lacks; MP_ENOMEM. */
mp_status ema_run(const ema_params *p, ema_emit emit, void *ctx, ema_result *out);

#endif
