/* Exercise kinds about spacing and accumulation: the gap at a value and the
 * updates that vanish (drift.1, ulp.1, 7.4e), repeated updates (drift.3),
 * the drift simulation (drift.4) and Adam's second moment stalling in 16 bits
 * (7.4f). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "drift/drift.h"
#include "fmt/parse.h"
#include "fmt/decode.h"
#include "fmt/round.h"
#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "util/strbuf.h"

/* ---- kinds: spacing (drift.1, ulp) and update-vanish (7.4e) ------------------ */

static void explain_spacing(solve_ctx *c, const fmt_info *f, double x, double sp)
{
	int e = exs_floor_log2(x);
	if (e < fmt_emin(f))
		strbuf_printf(&c->w, "|x| = %s is subnormal in %s: the spacing is fixed at 2^(%d - %d) = %s.\n", exs_g(fabs(x)), f->name,
		   fmt_emin(f), f->frac_bits, exs_g(sp));
	else
		strbuf_printf(&c->w,
		   "%s keeps %d fraction bits. |x| = %s lies in [2^%d, 2^%d) = [%s, %s), where neighbours are\n"
		   "2^(%d - %d) = %s apart.\n",
		   f->name, f->frac_bits, exs_g(fabs(x)), e, e + 1, exs_g(ldexp(1, e)), exs_g(ldexp(1, e + 1)), e,
		   f->frac_bits, exs_g(sp));
}

/* x as f stores it (RNE). */
static double stored_value(const fmt_info *f, double x)
{
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	return fmt_to_double(f, fmt_round_double(f, &ctl, x, NULL));
}

/* The threshold below which an update to x (as stored) vanishes: half the gap
 * above the stored value, which is the next binade's when x rounds up to a
 * power of two (255.9 is 256 in bf16: the gap above is 2, not 1). */
static double explain_vanish(solve_ctx *c, const fmt_info *f, double x, double sp)
{
	double xs = stored_value(f, x);
	double sv = exs_spacing_at(f, xs) / 2;
	if (sv != sp / 2)
		strbuf_printf(&c->w, "Stored in %s, x becomes %s, a power of two: the gap above it is %s, so an update smaller than\n"
		          "%s is rounded away under round-to-nearest.\n",
		   f->name, exs_g(xs), exs_g(2 * sv), exs_g(sv));
	else
		strbuf_printf(&c->w, "An update smaller than half the spacing, %s, is rounded away under round-to-nearest.\n", exs_g(sv));
	return sv;
}

/* The spacing another format has at x, offered as the mistake of using the
 * wrong format's fraction bits (fp16's 10 for bf16's 7, and so on). */
static void mistake_other_spacing(solve_ctx *c, const char *field, const fmt_info *f, double x)
{
	static const fmt_id others[] = { FMT_FP16, FMT_BF16, FMT_FP32 };
	for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
		const fmt_info *o = fmt_get(others[k]);
		if (o->id == f->id || fabs(x) > fmt_max(o))
			continue;
		double so = exs_spacing_at(o, x);
		if (so != exs_spacing_at(f, x))
			exs_mistake_num(c, field, so, "%s is the spacing of %s at %s (%d fraction bits); %s keeps %d fraction bits, "
			                          "so its spacing there is 2^(e - %d).",
			            exs_g(so), o->name, exs_g(fabs(x)), o->frac_bits, f->name, f->frac_bits, f->frac_bits);
	}
}

bool exs_solve_spacing(solve_ctx *c)
{
	double x;
	if (!exs_param_double(c, "x", &x))
		return false;
	const fmt_info *f = exs_param_format(c, "format", FMT_BF16);
	if (!f)
		return false;
	if (x == 0)
		return exs_fail(c, "parameter x must not be 0");
	if (fabs(x) > fmt_max(f))
		return exs_fail(c, "parameter x is beyond %s's largest value", f->name);
	double sp = exs_spacing_at(f, x);
	exs_set_num(c, "spacing", sp);
	explain_spacing(c, f, x, sp);
	double sv = explain_vanish(c, f, x, sp);
	exs_set_num(c, "vanish_below", sv);
	exs_set_num(c, "exponent", exs_floor_log2(x) < fmt_emin(f) ? fmt_emin(f) : exs_floor_log2(x));
	exs_mistake_num(c, "spacing", fabs(x) * fmt_epsilon(f),
	            "The spacing is not |x| times epsilon: it is fixed within each binade [2^e, 2^(e+1)) at "
	            "2^(e - %d), and jumps at powers of two.",
	            f->frac_bits);
	mistake_other_spacing(c, "spacing", f, x);
	exs_mistake_num(c, "vanish_below", 2 * sv,
	            "An update rounds to the next value once it passes half the spacing; below that it vanishes.");
	exs_mistake_num(c, "vanish_below", fabs(x) * fmt_epsilon(f) / 2,
	            "Half of |x| times epsilon ignores that the spacing is fixed per binade: use 2^(e - %d) / 2.",
	            f->frac_bits);
	return true;
}

bool exs_solve_update_vanish(solve_ctx *c)
{
	double w;
	if (!exs_param_double(c, "w", &w))
		return false;
	const fmt_info *f = exs_param_format(c, "format", FMT_BF16);
	if (!f)
		return false;
	if (w == 0 || fabs(w) > fmt_max(f))
		return exs_fail(c, "parameter w must be nonzero and within %s's range", f->name);
	w = stored_value(f, w);   /* "a weight stored in bf16": its gaps are those of the stored value */
	double sp = exs_spacing_at(f, w);
	int p = fmt_precision(f);
	double T = ldexp(1, 2 * p);
	exs_set_num(c, "spacing", sp);
	exs_set_num(c, "vanish_below", sp / 2);
	exs_set_num(c, "steps", T);
	exs_mistake_num(c, "spacing", fabs(w) * fmt_epsilon(f),
	            "The spacing is not w times epsilon: it is 2^(e - %d) with e = floor(log2 w), fixed per binade.",
	            f->frac_bits);
	exs_mistake_num(c, "vanish_below", sp, "%s is the whole spacing: an update survives once it passes half the "
	                                   "spacing, not the whole of it.",
	            exs_g(sp));
	mistake_other_spacing(c, "spacing", f, w);
	exs_mistake_num(c, "steps", ldexp(1, p), "sqrt(T) x 2^-%d = 1 gives sqrt(T) = 2^%d, so T = 2^%d: square it.", p, p,
	            2 * p);
	exs_mistake_num(c, "steps", ldexp(1, 2 * (p - 1)),
	            "Use the unit roundoff 2^-%d (half of epsilon 2^-%d), as the question says.", p, p - 1);
	explain_spacing(c, f, w, sp);
	explain_vanish(c, f, w, sp);
	strbuf_printf(&c->w,
	   "\nWhy fp32 master weights: stagnation. An update below %s is rounded away at every step,\n"
	   "so a weight that receives many such updates never moves: after N of them an fp32 master\n"
	   "weight has moved by their sum and the bf16 weight by nothing. The loss does not grow slowly;\n"
	   "it is total, and it starts at the first step. The random-walk figure, T = 2^%d = %s steps\n"
	   "for errors of 2^-%d each to add up to w, assumes independent errors that accumulate, but a\n"
	   "vanished update is the same rounding made again and again: the error of a weight that\n"
	   "stagnates grows like N times the update, not like sqrt(N) x 2^-%d. fp32 master weights\n"
	   "(24 bits) lose only updates below about 2^-24 of w.\n",
	   exs_g(sp / 2), 2 * p, exs_g(T), p, p);
	return true;
}

/* ---- kind: lost-updates (drift.3) ------------------------------------------------- */

bool exs_solve_lost_updates(solve_ctx *c)
{
	fmt_num x, u;
	double nd;
	const fmt_info *f = exs_param_format(c, "format", FMT_BF16);
	if (!f || !exs_param_positive(c, "n", &nd))
		return false;
	if (nd != floor(nd) || nd > 10000)
		return exs_fail(c, "parameter n must be a whole number up to 10000");
	fmt_num_init(&x);
	fmt_num_init(&u);
	bool ok = exs_param_exact(c, "x0", &x) && exs_param_exact(c, "u", &u);
	if (ok && fmt_num_to_double(&u) == 0)
		ok = exs_fail(c, "parameter u must not be 0");
	double uval = ok ? fmt_num_to_double(&u) : 0;   /* signed */
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	uint32_t bits = ok ? fmt_round_num(f, &ctl, &x, NULL) : 0;
	if (ok && !isfinite(fmt_to_double(f, bits)))
		ok = exs_fail(c, "parameter x0 is beyond %s's range", f->name);
	if (!ok) {
		fmt_num_clear(&x);
		fmt_num_clear(&u);
		return false;
	}
	/* sum exactly, round after every update */
	mpq_t cur, step;
	mpq_inits(cur, step, NULL);
	mpq_set_d(cur, fmt_to_double(f, bits));
	mpq_set(step, u.mag);
	if (u.neg)
		mpq_neg(step, step);
	size_t n = (size_t)nd, lost = 0, first_lost = 0;
	fmt_num t;
	fmt_num_init(&t);
	double start = fmt_to_double(f, bits), now = start;
	for (size_t i = 0; i < n; i++) {
		mpq_add(t.mag, cur, step);
		t.neg = mpq_sgn(t.mag) < 0;
		mpq_abs(t.mag, t.mag);
		t.kind = NUM_FINITE;
		uint32_t nb = fmt_round_num(f, &ctl, &t, NULL);
		double nv = fmt_to_double(f, nb);
		if (!isfinite(nv))
			break;
		if (nv == now) {
			if (!lost)
				first_lost = i + 1;
			lost++;
		}
		now = nv;
		mpq_set_d(cur, nv);
	}
	fmt_num_clear(&t);
	mpq_clears(cur, step, NULL);
	fmt_num_clear(&x);
	fmt_num_clear(&u);
	exs_set_num(c, "lost", (double)lost);
	exs_set_num(c, "final", now);
	exs_set_num(c, "kept", (double)(n - lost));
	exs_mistake_num(c, "final", start + nd * uval, "That is the exact sum; each update is rounded to %s as it is added.",
	            f->name);
	exs_mistake_num(c, "lost", nd, "Not every update is lost: follow the value as it moves, the spacing changes "
	                           "at powers of two.");
	exs_mistake_num(c, "lost", 0, "Updates smaller than half the spacing at the current value are rounded away.");
	strbuf_printf(&c->w, "x0 = %s is stored in %s as %s; each step adds u = %s and rounds to nearest.\n",
	   ex_variant_get(c->ex, c->v, "x0"), f->name, exs_g(start), exs_g(uval));
	strbuf_printf(&c->w, "At %s the spacing is %s, so an update of %s is %s.\n", exs_g(start), exs_g(exs_spacing_at(f, start)),
	   exs_g(fabs(uval)), fabs(uval) < exs_spacing_at(f, start) / 2 ? "rounded away" : "kept (rounded)");
	if (lost && first_lost > 1)
		strbuf_printf(&c->w, "The value moves until the spacing grows; the first update lost is number %zu.\n", first_lost);
	strbuf_printf(&c->w, "After %zu updates: %zu lost, %zu kept; the value is %s (exact sum: %s).\n", n, lost, n - lost,
	   exs_g(now), exs_g(start + nd * uval));
	return true;
}

/* ---- kind: drift-retained (drift.4) ------------------------------------------------ */

bool exs_solve_drift_retained(solve_ctx *c)
{
	double x0, u, T;
	if (!exs_param_double(c, "x0", &x0) || !exs_param_double(c, "u", &u) || !exs_param_positive(c, "T", &T))
		return false;
	if (T != floor(T) || T > 1e5)
		return exs_fail(c, "parameter T must be a whole number up to 100000");
	if (u == 0)
		return exs_fail(c, "parameter u must not be 0");
	drift_params p = drift_defaults();
	/* With constant updates every value of a round-to-nearest variant takes
	 * the same path, so one value gives what the command's 1,000 give;
	 * stochastic rounding differs per value, so it is simulated (only when
	 * asked) exactly as the command does: 1,000 values, the same seed. */
	bool want_sr = exs_fidx(c, "retained_sr") >= 0;
	p.elements = want_sr ? drift_defaults().elements : 1;
	p.steps = (size_t)T;
	p.x0 = x0;
	p.dist = DRIFT_DIST_CONSTANT;
	p.mean = u;
	p.std = 0;
	drift_sim *s;
	mp_status st = drift_create(&s, &p, NULL, 0);
	if (st != MP_OK)
		return st == MP_ENOMEM ? exs_fail(c, "out of memory") : exs_fail(c, "the drift simulation refuses these parameters");
	drift_advance(s, p.steps);
	drift_state out[DRIFT_VARIANT_COUNT];
	drift_snapshot(s, out);
	drift_free(s);
	static const struct {
		const char *field;
		drift_variant v;
	} rows[] = {
		{ "retained_fp32", DRIFT_FP32 },         { "retained_rne", DRIFT_BF16_RNE },
		{ "retained_kahan", DRIFT_BF16_KAHAN },  { "retained_fp16", DRIFT_FP16_RNE },
		{ "retained_sr", DRIFT_BF16_SR },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const drift_state *d = &out[rows[i].v];
		if (rows[i].v == DRIFT_BF16_SR && !want_sr)
			continue;
		if (exs_fidx(c, rows[i].field) >= 0 && !isfinite(d->retained))
			return exs_fail(c, "the %s drift is undefined for these parameters", drift_variant_name(rows[i].v));
		exs_set_num(c, rows[i].field, d->retained);
		/* the command prints the share in percent ("100.0%"); the field wants a fraction */
		if (d->retained != 0)
			exs_mistake_num(c, rows[i].field, 100 * d->retained, "That is the share in percent, as the "
			                "command prints it; give it as a fraction (%s), or write the %% sign.",
			                exs_g(d->retained));
	}
	exs_mistake_num(c, "retained_rne", 1, "bf16 near x0 cannot represent a step of u: check the spacing at x0.");
	strbuf_printf(&c->w, "Run: mixprec drift --x0 %s --dist constant --mean %s --steps %.0f\n\n", ex_variant_get(c->ex, c->v, "x0"),
	   ex_variant_get(c->ex, c->v, "u"), T);
	strbuf_printf(&c->w, "fp64 drifts by %s.\n", exs_g(out[DRIFT_FP64].drift));
	for (drift_variant v = DRIFT_FP32; v < DRIFT_VARIANT_COUNT; v++)
		if (v != DRIFT_BF16_SR || want_sr)
			strbuf_printf(&c->w, "  %-11s drift %-12s retained %s\n", drift_variant_name(v), exs_g(out[v].drift),
			   exs_g(out[v].retained));
	if (!want_sr)
		strbuf_printf(&c->w, "  (bf16-sr rounds at random: the command's 1,000 values show its retained share)\n");
	const fmt_info *bf = fmt_get(FMT_BF16);
	double stop = x0 + out[DRIFT_BF16_RNE].drift;
	if (out[DRIFT_BF16_RNE].drift == 0)
		strbuf_printf(&c->w, "\nbf16 spacing at %s is %s: an update of %s is not above half of it and is rounded away\n"
		              "every time (round-to-nearest makes the same decision at every step, so nothing averages out).\n",
		   exs_g(x0), exs_g(exs_spacing_at(bf, x0)), exs_g(fabs(u)));
	else
		strbuf_printf(&c->w, "\nbf16 spacing at %s is %s: an update of %s moves the value (rounded) at first, but the\n"
		              "spacing doubles at every power of two; at %s it is %s, more than twice the update, and from\n"
		              "there on every update is rounded away.\n",
		   exs_g(x0), exs_g(exs_spacing_at(bf, x0)), exs_g(fabs(u)), exs_g(stop), exs_g(exs_spacing_at(bf, stop)));
	return true;
}

/* ---- kind: ema-stall (7.4f): Adam's v stored in 16 bits ------------------------ */

/* One run of v <- round_F(fl32(fl32(b*v) + fl32(c*1))) from v = 0 with g^2 = 1:
 * the value where v stops changing and the number of steps that changed it.
 * mode is RNE for the exercise (RTZ shows the "whole spacing" mistake).
 * Returns false when v has not stopped within the cap. */
static bool ema_stall(const fmt_info *f, fmt_mode mode, float b, float cc, float *stall, size_t *steps)
{
	fmt_round_ctl ctl = { .mode = mode };
	float v = 0;
	for (size_t k = 0; k < 10000000; k++) {
		/* volatile: each operation rounds to fp32 on its own, no fused multiply-add */
		volatile float bv = b * v;
		volatile float sum = bv + cc;
		float nv = (float)fmt_to_double(f, fmt_round_double(f, &ctl, (double)sum, NULL));
		if (nv == v) {
			*stall = v;
			*steps = k;
			return true;
		}
		v = nv;
	}
	return false;
}

bool exs_solve_ema_stall(solve_ctx *c)
{
	fmt_num beta;
	fmt_num_init(&beta);
	bool ok = exs_param_exact(c, "beta2", &beta);
	double bd = ok ? fmt_num_to_double(&beta) : 0;
	const fmt_info *f32 = fmt_get(FMT_FP32);
	fmt_round_ctl rne = { .mode = FMT_RNE };
	float b = ok ? (float)fmt_to_double(f32, fmt_round_num(f32, &rne, &beta, NULL)) : 0;
	fmt_num_clear(&beta);
	if (!ok)
		return false;
	if (!(bd > 0.5 && bd < 1) || b >= 1)
		return exs_fail(c, "parameter beta2 must lie in (0.5, 1) and below 1 in fp32");
	const fmt_info *f = exs_param_format(c, "format", FMT_BF16);
	if (!f)
		return false;
	if (f->width > 16)
		return exs_fail(c, "parameter format must be a 16-bit or smaller format, not %s", f->name);
	volatile float one = 1.0f;
	float cc = one - b;   /* exact: b lies in [1/2, 1] (Sterbenz) */
	float stall;
	size_t steps;
	if (!ema_stall(f, FMT_RNE, b, cc, &stall, &steps))
		return exs_fail(c, "v does not stop changing in %s for beta2 = %s", f->name, exs_g(bd));
	exs_set_num(c, "stall_value", stall);
	exs_set_num(c, "steps", (double)steps);
	exs_mistake_num(c, "stall_value", 1, "1 is where v converges in exact arithmetic (the fixed point of v = b v + c "
	                                 "is c / (1 - b) = 1); in %s the increments are rounded away long before.",
	            f->name);
	fmt_id other_id = f->id == FMT_BF16 ? FMT_FP16 : FMT_BF16;
	float ostall, tstall;
	size_t osteps, tsteps;
	if (ema_stall(fmt_get(other_id), FMT_RNE, b, cc, &ostall, &osteps))
		exs_mistake_num(c, "stall_value", ostall, "%s is where v stops in %s (%d fraction bits); %s has %d fraction "
		                                      "bits, so its spacing, and the stall, differ.",
		            exs_g(ostall), fmt_get(other_id)->name, fmt_get(other_id)->frac_bits, f->name, f->frac_bits);
	if (ema_stall(f, FMT_RTZ, b, cc, &tstall, &tsteps))
		exs_mistake_num(c, "stall_value", tstall, "%s is where v would stop if an increment needed a whole spacing to "
		                                      "count (rounding toward zero); round-to-nearest moves v once the "
		                                      "increment passes half the spacing.",
		            exs_g(tstall));
	exs_mistake_num(c, "steps", (double)steps + 1, "%zu counts the step that left v unchanged; count the steps that "
	                                           "changed it.",
	            steps + 1);
	/* the worked solution: the constants, the path through the binades, the stop */
	strbuf_printf(&c->w, "b = fl32(beta2) = fl32(%s) = %.9g; c = fl32(1 - b) = %.9g (exact: b is within a factor\n"
	              "of two of 1). With g^2 = 1 each step is v <- round_%s(fl32(fl32(b v) + c)).\n\n",
	   ex_variant_get(c->ex, c->v, "beta2"), (double)b, (double)cc, f->name);
	strbuf_printf(&c->w, "In exact arithmetic v = 1 - b^k approaches 1. Each step adds c (1 - v): the increment\n"
	              "shrinks as v grows, while the spacing of %s grows with v (it doubles at every power of two).\n"
	              "Round-to-nearest keeps v unchanged once the increment is at most half the spacing at v.\n\n",
	   f->name);
	strbuf_printf(&c->w, "%8s  %-12s %-12s %s\n", "step", "v", "spacing", "increment c(1 - v)");
	{
		fmt_round_ctl ctl = { .mode = FMT_RNE };
		float v = 0;
		int last_e = INT32_MIN;
		for (size_t k = 1; k <= steps; k++) {
			volatile float bv = b * v;
			volatile float sum = bv + cc;
			v = (float)fmt_to_double(f, fmt_round_double(f, &ctl, (double)sum, NULL));
			int e = exs_floor_log2(v);
			if (e != last_e || k == steps) {
				strbuf_printf(&c->w, "%8zu  %-12s %-12s %s\n", k, exs_g(v), exs_g(exs_spacing_at(f, v)), exs_g(cc * (1 - (double)v)));
				last_e = e;
			}
		}
	}
	volatile float bv = b * stall;
	volatile float sum = bv + cc;
	double sp = exs_spacing_at(f, stall);
	strbuf_printf(&c->w, "\nAt v = %s the spacing of %s is %s, half of it %s. The next value would be\n"
	              "fl32(b v) + c = %.9g, only %s above v: not more than half the spacing, so it rounds back to\n"
	              "v. v stops at %s after %zu steps (stall_value = %s, steps = %zu).\n",
	   exs_g(stall), f->name, exs_g(sp), exs_g(sp / 2), (double)sum, exs_g((double)sum - stall), exs_g(stall), steps, exs_g(stall), steps);
	strbuf_printf(&c->w, "\nAdam divides by sqrt(v): sqrt(%s) = %s instead of 1, so its steps come out %s times too large.\n"
	              "Keeping v in fp32 lets it come within about 2^-25 / c of 1; stochastic rounding, unbiased, lets it\n"
	              "approach 1 on average.\n",
	   exs_g(stall), exs_g(sqrt(stall)), exs_g(1 / sqrt(stall)));
	return true;
}

