/* Exercise kind about stochastic rounding (lesson frontier, section 2): a
 * value between two grid points of a small format, rounded to nearest and
 * stochastically; the probability of rounding up, the variance of one
 * stochastic cast and the bias of rounding to nearest. */
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
