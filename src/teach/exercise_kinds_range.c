/* Exercise kinds about a format's range: the smallest normal values and
 * flushing (7.4a), loss scaling (7.4b), where overflow starts, and choosing a
 * loss scale. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/round.h"
#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "util/strbuf.h"

/* ---- kind: underflow (7.4a) ------------------------------------------------ */

bool exs_solve_underflow(solve_ctx *c)
{
	double G;
	if (!exs_param_double(c, "G", &G))
		return false;
	G = fabs(G);
	strbuf_printf(&c->w, "A normal number has a leading 1 bit; the smallest one is 2^emin with emin = 1 - bias.\n"
	          "Below it, subnormals keep shrinking down to 2^(emin - fraction bits); under RNE a value\n"
	          "becomes 0 when it is at most half of that smallest subnormal.\n\n");
	for (fmt_id id = 0; id < FMT_COUNT; id++) {
		const fmt_info *f = fmt_get(id);
		char name[EX_NAME_MAX + 16];
		const char *short_name = id == FMT_E4M3 ? "e4m3" : id == FMT_E5M2 ? "e5m2" : f->name;
		bool used = false;
		static const char *suffix[] = { "_min_normal", "_min_subnormal", "_flushes", "_stored" };
		for (size_t k = 0; k < 4; k++) {
			snprintf(name, sizeof name, "%s%s", short_name, suffix[k]);
			if (exs_fidx(c, name) < 0)
				snprintf(name, sizeof name, "%s%s", f->name, suffix[k]);
			if (exs_fidx(c, name) < 0)
				continue;
			used = true;
			if (k == 0) {
				exs_set_num(c, name, fmt_min_normal(f));
				exs_mistake_num(c, name, fmt_min_subnormal(f),
				            "%s = 2^%d is the smallest subnormal of %s: the answer if subnormals counted as "
				            "normal. The smallest normal is 2^%d (emin = 1 - bias = %d).",
				            exs_g(fmt_min_subnormal(f)), fmt_emin(f) - f->frac_bits, f->name, fmt_emin(f),
				            fmt_emin(f));
				exs_mistake_num(c, name, fmt_max(f),
				            "%s is the largest finite %s value: the other end of the range. The smallest "
				            "positive normal is 2^%d.",
				            exs_g(fmt_max(f)), f->name, fmt_emin(f));
				exs_mistake_num(c, name, fmt_epsilon(f),
				            "%s = 2^-%d is the epsilon of %s (the gap from 1 to the next value), which depends "
				            "on the fraction bits; the smallest normal depends on the exponent bits: 2^%d.",
				            exs_g(fmt_epsilon(f)), f->frac_bits, f->name, fmt_emin(f));
				for (fmt_id o = 0; o < FMT_COUNT; o++)
					if (o != id && !fmt_get(o)->extra && fmt_min_normal(fmt_get(o)) != fmt_min_normal(f))
						exs_mistake_num(c, name, fmt_min_normal(fmt_get(o)),
						            "%s is the smallest normal of %s, not of %s (bias %d gives 2^%d).",
						            exs_g(fmt_min_normal(fmt_get(o))), fmt_get(o)->name, f->name, f->bias,
						            fmt_emin(f));
			} else if (k == 1) {
				exs_set_num(c, name, fmt_min_subnormal(f));
				exs_mistake_num(c, name, fmt_min_normal(f),
				            "That is the smallest normal of %s; subnormals go %d binades lower.", f->name,
				            f->frac_bits);
			} else if (k == 3) {
				fmt_round_ctl ctl = { .mode = FMT_RNE };
				double r = fmt_to_double(f, fmt_round_double(f, &ctl, G, NULL));
				exs_set_num(c, name, r);
				if (r != 0)
					exs_mistake_num(c, name, 0,
					            "%s is above half the smallest %s subnormal (%s): it is kept, rounded to "
					            "the nearest %s value.",
					            exs_g(G), f->name, exs_g(fmt_min_subnormal(f) / 2), f->name);
			} else {
				bool fl = exs_rne_flushes(f, G), yes = fl;
				exs_set_choice(c, name, yes ? "yes" : "no");
				ex_mistake *m;
				if (fl)
					m = exs_mistake(c, name,
					            "%s is at most half the smallest %s subnormal (2^%d / 2 = %s), so round-to-nearest "
					            "gives 0.",
					            exs_g(G), f->name, fmt_emin(f) - f->frac_bits, exs_g(fmt_min_subnormal(f) / 2));
				else if (G < fmt_min_normal(f))
					m = exs_mistake(c, name,
					            "%s is below the smallest normal of %s (%s) but subnormals still hold it, with "
					            "fewer significant bits.",
					            exs_g(G), f->name, exs_g(fmt_min_normal(f)));
				else
					m = exs_mistake(c, name, "%s is a normal %s number; nothing is lost but rounding.", exs_g(G),
					            f->name);
				if (m) {
					m->value.type = EX_CHOICE;
					snprintf(m->value.choice, sizeof m->value.choice, "%s", yes ? "no" : "yes");
				}
			}
		}
		if (used)
			strbuf_printf(&c->w, "%-9s bias %3d: emin = 1 - %d = %d, min normal 2^%d = %s; min subnormal 2^(%d - %d) = "
			              "2^%d = %s,\n          half of it %s; G = %s %s\n",
			   f->name, f->bias, f->bias, fmt_emin(f), fmt_emin(f), exs_g(fmt_min_normal(f)), fmt_emin(f),
			   f->frac_bits, fmt_emin(f) - f->frac_bits, exs_g(fmt_min_subnormal(f)), exs_g(fmt_min_subnormal(f) / 2),
			   exs_g(G),
			   exs_rne_flushes(f, G) ? "is at most that: it rounds to 0 (flushed)"
			   : G < fmt_min_normal(f) ? "is above it but below the min normal: a subnormal (reduced precision)"
			                           : "is at least the min normal: a normal number");
	}
	/* the conclusion must match this student's G: not every listed G flushes in fp16 */
	const fmt_info *h = fmt_get(FMT_FP16);
	if (exs_rne_flushes(h, G))
		strbuf_printf(&c->w, "\nfp16 has 5 exponent bits and cannot reach below about 6e-8, so a gradient of %s vanishes\n"
		          "unless the loss is scaled up first; bf16 keeps fp32's 8 exponent bits and reaches 1e-38.\n",
		   exs_g(G));
	else if (G < fmt_min_normal(h))
		strbuf_printf(&c->w, "\nA gradient of %s survives in fp16 only as a subnormal, with %d significant bits instead of 11;\n"
		          "gradients a little smaller (at most 2^-25, about 3e-8) vanish. Scaling the loss up moves them\n"
		          "into fp16's normal range; bf16 keeps fp32's 8 exponent bits and reaches 1e-38.\n",
		   exs_g(G), exs_floor_log2(G) - (fmt_emin(h) - h->frac_bits) + 1);
	else
		strbuf_printf(&c->w, "\nA gradient of %s is a normal fp16 number, but gradients below 2^-14 lose precision in fp16\n"
		          "and those at most 2^-25 (about 3e-8) vanish unless the loss is scaled up first; bf16 keeps\n"
		          "fp32's 8 exponent bits and reaches 1e-38.\n",
		   exs_g(G));
	return true;
}

/* ---- kind: loss-scale (7.4b) ------------------------------------------------ */

/* What fp16 makes of x: 0, a subnormal with fewer bits (and its error), or a
 * normal number. */
static void explain_fp16_fate(solve_ctx *c, const char *what, double x)
{
	const fmt_info *h = fmt_get(FMT_FP16);
	double ax = fabs(x);
	if (exs_rne_flushes(h, ax)) {
		strbuf_printf(&c->w, "  %s = %s is at most 2^-25: it flushes to 0.\n", what, exs_g(x));
		return;
	}
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	double r = fmt_to_double(h, fmt_round_double(h, &ctl, ax, NULL));
	if (ax < fmt_min_normal(h))
		strbuf_printf(&c->w, "  %s = %s is below 2^-14: it survives only as a subnormal, %s, with %d significant\n"
		              "    bits instead of 11 (relative error %s).\n",
		   what, exs_g(x), exs_g(r), exs_floor_log2(r) - (fmt_emin(h) - h->frac_bits) + 1, exs_g(fabs(r - ax) / ax));
	else
		strbuf_printf(&c->w, "  %s = %s is a normal fp16 number (stored as %s, relative error %s).\n", what, exs_g(x), exs_g(r),
		   exs_g(fabs(r - ax) / ax));
}

bool exs_solve_loss_scale(solve_ctx *c)
{
	double S, gr;
	if (!exs_param_positive(c, "S", &S) || !exs_param_double(c, "g", &gr))
		return false;
	const fmt_info *h = fmt_get(FMT_FP16);
	exs_set_num(c, "dscaled_dloss", S);
	exs_set_num(c, "factor", S);
	exs_set_num(c, "unscale", 1 / S);
	exs_set_num(c, "scaled_grad", gr * S);
	bool fu = exs_rne_flushes(h, gr), fs = exs_rne_flushes(h, gr * S);
	exs_set_choice(c, "unscaled_flushes", fu ? "yes" : "no");
	exs_set_choice(c, "scaled_flushes", fs ? "yes" : "no");
	exs_mistake_choice(c, "unscaled_flushes", fu ? "no" : "yes",
	               fu ? "%s is at most 2^-25 (about 2.98e-8), half of fp16's smallest subnormal: it rounds to 0."
	                  : "%s is above 2^-25 (about 2.98e-8), half of fp16's smallest subnormal: it survives, as a "
	                    "subnormal or a normal number.",
	               exs_g(gr));
	exs_mistake_choice(c, "scaled_flushes", fs ? "no" : "yes",
	               fs ? "g x S = %s is still at most 2^-25 (about 2.98e-8): this scale is too small to save it."
	                  : "g x S = %s is above 2^-25 (about 2.98e-8): the scale lifts it out of the flush zone.",
	               exs_g(gr * S));
	exs_mistake_num(c, "factor", 1 / S, "%s = 1/S is what you get by dividing by S: that is the unscaling done "
	                                "before the optimiser step. Scaling the loss multiplies every gradient by S.",
	            exs_g(1 / S));
	exs_mistake_num(c, "factor", 1, "1 would mean scaling leaves the gradients alone; but the derivative of S*L is S "
	                            "times the derivative of L: the gradients change.");
	exs_mistake_num(c, "unscale", S, "%s = S would scale a second time; unscaling undoes the scale: multiply by 1/S.",
	            exs_g(S));
	exs_mistake_num(c, "dscaled_dloss", 1, "1 is dL/dL; S is a constant factor: the derivative of S*L with respect "
	                                   "to L is S.");
	exs_mistake_num(c, "dscaled_dloss", 0, "0 is the derivative of a constant alone; S multiplies L: the derivative "
	                                   "of S*L with respect to L is S, not 0.");
	exs_mistake_num(c, "scaled_grad", gr, "%s is the gradient before scaling.", exs_g(gr));
	exs_mistake_num(c, "scaled_grad", gr / S, "%s = g / S is what dividing by S gives; the scale multiplies the "
	                                      "gradient: g x S.",
	            exs_g(gr / S));
	strbuf_printf(&c->w,
	   "Let L be the loss and L' = S * L the scaled loss. S is a constant, so dL'/dL = S.\n"
	   "For any weight w, by the chain rule\n"
	   "  dL'/dw = dL'/dL * dL/dw = S * dL/dw,\n"
	   "and the same holds at every layer of backpropagation, because each step multiplies the\n"
	   "incoming gradient by a local derivative that does not depend on S. So every gradient is\n"
	   "multiplied by S = %s (factor), and the optimiser must multiply by 1/S = %s (unscale)\n"
	   "before the update, which leaves the update unchanged.\n\n"
	   "fp16's smallest normal is 2^-14 = 6.10e-05, its smallest subnormal 2^-24 = 5.96e-08, and\n"
	   "round-to-nearest gives 0 at or below half of that, 2^-25 = 2.98e-08.\n",
	   exs_pow2_text(S), exs_g(1 / S));
	explain_fp16_fate(c, "unscaled: g", gr);
	explain_fp16_fate(c, "scaled: g x S", gr * S);
	return true;
}

/* ---- kind: overflow ------------------------------------------------------------ */

bool exs_solve_overflow(solve_ctx *c)
{
	const fmt_info *f = exs_param_format(c, "format", FMT_FP16);
	if (!f)
		return false;
	double mx = fmt_max(f);
	double ulp = ldexp(1, fmt_emax(f) - f->frac_bits);
	/* The tie max + ulp/2 goes to even: away from max when max's last
	 * significand bit is 1 (fp16, bf16, fp32), back to max when it is 0
	 * (fp8-e4m3, whose all-ones fraction is NaN). */
	bool tie_up = (fmt_max_bits(f) & 1u) != 0;
	const char *beyond = fmt_has_inf(f) ? "inf" : "NaN (this format has no inf)";
	exs_set_num(c, "max", mx);
	exs_set_num(c, "overflow_at", mx + ulp / 2);
	exs_set_num(c, "min_normal", fmt_min_normal(f));
	exs_set_num(c, "min_subnormal", fmt_min_subnormal(f));
	exs_set_num(c, "epsilon", fmt_epsilon(f));
	exs_set_num(c, "max_spacing", ulp);
	exs_mistake_num(c, "overflow_at", mx, "Values a little above the maximum still round down to it: overflow starts "
	                                  "half a spacing above.");
	if (tie_up)
		exs_mistake_num(c, "overflow_at", mx + ulp, "Half a spacing above the maximum is already a tie, which rounds "
		                                        "to even: away from the maximum, whose last bit is 1.");
	else
		exs_mistake_num(c, "overflow_at", mx + ulp, "Every value more than half a spacing above the maximum is nearer "
		                                        "the next step up, which this format cannot hold.");
	exs_mistake_num(c, "max", ldexp(2, fmt_emax(f)), "That would need an all-ones fraction with one more bit; the "
	                                             "largest significand is 2 - 2^-%d.",
	            f->frac_bits);
	strbuf_printf(&c->w, "%s: %d exponent bits (bias %d), %d fraction bits.\n", f->name, f->exp_bits, f->bias, f->frac_bits);
	strbuf_printf(&c->w, "Largest exponent %d; largest significand %s: max = %s.\n", fmt_emax(f),
	   exs_g(mx / ldexp(1, fmt_emax(f))), exs_g(mx));
	if (tie_up)
		strbuf_printf(&c->w, "Spacing at the top: 2^(%d - %d) = %s. Under RNE a value rounds to %s once it reaches\n"
		          "max + spacing/2 = %s (the tie goes to even, away from max, whose last bit is 1).\n",
		   fmt_emax(f), f->frac_bits, exs_g(ulp), beyond, exs_g(mx + ulp / 2));
	else
		strbuf_printf(&c->w, "Spacing at the top: 2^(%d - %d) = %s. Under RNE a value rounds to %s once it exceeds\n"
		          "max + spacing/2 = %s. That value itself is a tie and goes to even, which is max (its last\n"
		          "bit is 0), so %s still rounds to %s; anything above it does not.\n",
		   fmt_emax(f), f->frac_bits, exs_g(ulp), beyond, exs_g(mx + ulp / 2), exs_g(mx + ulp / 2), exs_g(mx));
	strbuf_printf(&c->w, "min normal 2^%d = %s, min subnormal 2^%d = %s, epsilon 2^-%d = %s.\n", fmt_emin(f),
	   exs_g(fmt_min_normal(f)), fmt_emin(f) - f->frac_bits, exs_g(fmt_min_subnormal(f)), f->frac_bits,
	   exs_g(fmt_epsilon(f)));
	return true;
}

/* ---- kind: scale-choice ---------------------------------------------------------- */

bool exs_solve_scale_choice(solve_ctx *c)
{
	double gmax, gmin;
	if (!exs_param_positive(c, "gmax", &gmax) || !exs_param_positive(c, "gmin", &gmin))
		return false;
	if (gmin > gmax)
		return exs_fail(c, "parameter gmin must not exceed gmax");
	const fmt_info *h = fmt_get(FMT_FP16);
	int kmax = (int)floor(log2(fmt_max(h) / gmax));
	while (gmax * ldexp(1, kmax) > fmt_max(h))
		kmax--;
	while (gmax * ldexp(1, kmax + 1) <= fmt_max(h))
		kmax++;
	int kmin = (int)ceil(log2(fmt_min_normal(h) / gmin));
	while (gmin * ldexp(1, kmin) < fmt_min_normal(h))
		kmin++;
	while (gmin * ldexp(1, kmin - 1) >= fmt_min_normal(h))
		kmin--;
	double smax = ldexp(1, kmax), smin = ldexp(1, kmin);
	exs_set_num(c, "max_scale", smax);
	exs_set_num(c, "min_scale", smin);
	exs_set_choice(c, "fits", kmin <= kmax ? "yes" : "no");
	exs_mistake_num(c, "max_scale", 2 * smax, "With that scale gmax x S exceeds fp16's largest value 65504.");
	exs_mistake_num(c, "min_scale", smin / 2, "With that scale gmin x S is still below fp16's smallest normal 2^-14.");
	strbuf_printf(&c->w, "Largest power of two S with gmax x S <= 65504: S = 2^%d = %s (gmax x S = %s).\n", kmax, exs_g(smax),
	   exs_g(gmax * smax));
	strbuf_printf(&c->w, "Smallest power of two S with gmin x S >= 2^-14: S = 2^%d = %s (gmin x S = %s).\n", kmin, exs_g(smin),
	   exs_g(gmin * smin));
	strbuf_printf(&c->w, "%s\n", kmin <= kmax ? "Both fit: any S between them keeps the whole range normal in fp16."
	                               : "They do not fit together: the range of gradients is wider than fp16's "
	                                 "normal range; some underflow or overflow is unavoidable (bf16 avoids this).");
	return true;
}

