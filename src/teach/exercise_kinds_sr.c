/* Exercise kinds about rounding rules. sr-bias (lesson frontier, section
 * 2): a value between two grid points of a small format, rounded to
 * nearest and stochastically; the probability of rounding up, the variance
 * of one stochastic cast and the bias of rounding to nearest.
 * rounding-rules (lesson rounding-rules): the same value by round to odd,
 * nearest with ties toward zero, and equal-probability SR's expected value
 * and bias. */
#include <math.h>
#include <stdio.h>

#include "fmt/decode.h"
#include "fmt/round.h"
#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "util/strbuf.h"

/* x rounded into f in mode m, decoded (x positive and within range). */
static double rounded(const fmt_info *f, fmt_mode m, double x)
{
	fmt_round_ctl ctl = { .mode = m, .saturate = true };
	return fmt_to_double(f, fmt_round_double(f, &ctl, x, NULL));
}

bool exs_solve_sr_bias(solve_ctx *c)
{
	double t;
	if (!exs_param_double(c, "t", &t))
		return false;
	const fmt_info *f = exs_param_format(c, "format", FMT_E2M1);
	if (!f)
		return false;
	if (!(t > 0) || t >= fmt_max(f))
		return exs_fail(c, "parameter t = %s must lie between 0 and %s's largest value %s", exs_g(t), f->name,
		                exs_g(fmt_max(f)));
	double a = rounded(f, FMT_RTZ, t);
	if (a == t)
		return exs_fail(c, "parameter t = %s is a %s value: nothing to round", exs_g(t), f->name);
	double b = rounded(f, FMT_UP, t), r = rounded(f, FMT_RNE, t);
	double p = (t - a) / (b - a), var = (t - a) * (b - t);
	exs_set_num(c, "down", a);
	exs_set_num(c, "up", b);
	exs_set_num(c, "p_up", p);
	exs_set_num(c, "variance", var);
	exs_set_num(c, "rne_bias", r - t);
	exs_mistake_num(c, "p_up", 1 - p, "That is the probability of rounding down: the nearer neighbour is the likelier "
	                                "one, so up has probability (t - down) / (up - down).");
	exs_mistake_num(c, "variance", sqrt(var), "That is the standard deviation; the variance is its square, "
	                                        "(t - down)(up - t).");
	exs_mistake_num(c, "variance", (b - a) * (b - a) / 4, "That is the largest variance, reached at the midpoint; at "
	                                                  "t it is (t - down)(up - t).");
	exs_mistake_num(c, "rne_bias", t - r, "The bias is the rounded value minus t, so it is negative when t rounds "
	                                   "down.");
	exs_mistake_num(c, "rne_bias", 0, "Rounding to nearest is deterministic: t becomes %s every time, so its error "
	                                "%s is a bias, not noise.",
	            exs_g(r), exs_g(r - t));
	strbuf_printf(&c->w, "Step 1: t = %s lies between the %s values down = %s and up = %s (gap %s).\n", exs_g(t),
	              f->name, exs_g(a), exs_g(b), exs_g(b - a));
	strbuf_printf(&c->w, "Step 2: stochastic rounding goes up with probability (t - down) / gap = %s / %s = %s, so its\n"
	              "  expected value is down + p x gap = %s = t: no bias. One cast's variance is\n"
	              "  p (1 - p) gap^2 = (t - down)(up - t) = %s x %s = %s.\n",
	              exs_g(t - a), exs_g(b - a), exs_g(p), exs_g(a + p * (b - a)), exs_g(t - a), exs_g(b - t), exs_g(var));
	strbuf_printf(&c->w, "Step 3: rounding to nearest gives %s every time: its error %s - %s = %s repeats at every\n"
	              "  step that casts this value, a bias that adds up, while the stochastic errors average out.\n",
	              exs_g(r), exs_g(r), exs_g(t), exs_g(r - t));
	return true;
}

/* Whether the pattern of a value of f ends in 1 (the significand's last
 * bit: round to odd's choice). */
static bool odd_pattern(const fmt_info *f, double v)
{
	fmt_round_ctl ctl = { .mode = FMT_RNE, .saturate = true };
	return fmt_round_double(f, &ctl, v, NULL) & 1u;
}

bool exs_solve_rounding_rules(solve_ctx *c)
{
	double t;
	if (!exs_param_double(c, "t", &t))
		return false;
	const fmt_info *f = exs_param_format(c, "format", FMT_E2M1);
	if (!f)
		return false;
	if (f->frac_bits == 0)
		return exs_fail(c, "format %s has no significand bit for round to odd to set", f->name);
	if (!(t > 0) || t >= fmt_max(f))
		return exs_fail(c, "parameter t = %s must lie between 0 and %s's largest value %s", exs_g(t), f->name,
		                exs_g(fmt_max(f)));
	double a = rounded(f, FMT_RTZ, t);
	if (a == t)
		return exs_fail(c, "parameter t = %s is a %s value: nothing to round", exs_g(t), f->name);
	double b = rounded(f, FMT_UP, t), mid = (a + b) / 2;
	double rto = rounded(f, FMT_RTO, t), rnz = rounded(f, FMT_RNZ, t), rne = rounded(f, FMT_RNE, t);
	exs_set_num(c, "down", a);
	exs_set_num(c, "up", b);
	exs_set_num(c, "rto", rto);
	exs_set_num(c, "rnz", rnz);
	exs_set_num(c, "sre_mean", mid);
	exs_set_num(c, "sre_bias", mid - t);
	exs_mistake_num(c, "rto", rto == a ? b : a, "That neighbour's pattern ends in 0: round to odd truncates and then "
	                                          "sets the last bit, so it keeps the neighbour whose pattern ends in 1.");
	if (rnz != rne)
		exs_mistake_num(c, "rnz", rne, "That is the tie broken to even (rne); rnz breaks it toward zero, to the "
		                             "smaller neighbour.");
	else
		exs_mistake_num(c, "rnz", rnz == a ? b : a, "That is the farther neighbour: rnz rounds to nearest, and only "
		                                          "a tie goes toward zero.");
	if (mid != t) {   /* at a tie both rules have the mean t and no bias */
		exs_mistake_num(c, "sre_mean", t, "That is proportional SR's expected value; with equal probabilities the "
		                                "expected value is the midpoint (down + up) / 2.");
		exs_mistake_num(c, "sre_bias", t - mid, "The bias is the expected value minus t: (down + up) / 2 - t.");
		exs_mistake_num(c, "sre_bias", 0, "Zero is proportional SR's bias; equal-probability SR ignores where t "
		                                "lies in the gap, so it is biased toward the midpoint.");
	}
	strbuf_printf(&c->w, "Step 1: t = %s lies between the %s values down = %s and up = %s; the midpoint is %s.\n",
	              exs_g(t), f->name, exs_g(a), exs_g(b), exs_g(mid));
	strbuf_printf(&c->w, "Step 2: round to odd truncates toward zero to %s and, t being inexact, sets the last\n"
	              "  bit of its pattern: %s's pattern ends in %d, so rto gives %s.\n",
	              exs_g(a), exs_g(a), odd_pattern(f, a) ? 1 : 0, exs_g(rto));
	strbuf_printf(&c->w, "Step 3: rnz rounds to the nearest neighbour, a tie toward zero: t %s the midpoint, so %s.\n",
	              t < mid ? "lies below" : t > mid ? "lies above" : "is", exs_g(rnz));
	strbuf_printf(&c->w, "Step 4: equal-probability SR gives down or up with probability 1/2 each: expected value\n"
	              "  (%s + %s) / 2 = %s, bias %s - %s = %s (proportional SR's is 0).\n",
	              exs_g(a), exs_g(b), exs_g(mid), exs_g(mid), exs_g(t), exs_g(mid - t));
	return true;
}
