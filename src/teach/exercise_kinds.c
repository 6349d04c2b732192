/* The exercise kinds: from the parameters of one variant, the expected
 * answers, the recognisable wrong answers and the worked solution, all
 * computed by the engine (fmt/, budget/, drift/). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "budget/budget.h"
#include "drift/drift.h"
#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "teach/exercise.h"
#include "util/numtext.h"
#include "util/strbuf.h"

/* ---- helpers to fill a solution -------------------------------------------- */

typedef struct {
	const ex_exercise *ex;
	const ex_variant *v;
	ex_solution *sol;
	strbuf w;
	char *err;
	size_t errlen;
} solve_ctx;

static int fidx(solve_ctx *c, const char *name)
{
	return ex_field_index(c->ex, name);
}

/* The text an answer key shows: whole numbers without an exponent. */
static void short_text(char *out, size_t n, double x)
{
	if (x == floor(x) && fabs(x) < 1e15)
		snprintf(out, n, "%.0f", x);
	else
		numtext_short(out, n, x);
}

static void set_num(solve_ctx *c, const char *field, double x)
{
	int i = fidx(c, field);
	if (i < 0)
		return;
	ex_value *e = &c->sol->expect[i];
	e->type = EX_NUMBER;
	e->number = x;
	short_text(e->text, sizeof e->text, x);
}

static void set_bits(solve_ctx *c, const char *field, const fmt_info *f, uint32_t bits)
{
	int i = fidx(c, field);
	if (i < 0)
		return;
	ex_value *e = &c->sol->expect[i];
	e->type = EX_BITS;
	e->bits = bits;
	snprintf(e->text, sizeof e->text, "0x%0*x", fmt_hex_digits(f), (unsigned)bits);
}

/* A bare field of width bits (the kept fraction), shown in binary. */
static void set_field_bits(solve_ctx *c, const char *field, int width, uint32_t bits)
{
	int i = fidx(c, field);
	if (i < 0)
		return;
	ex_value *e = &c->sol->expect[i];
	e->type = EX_BITS;
	e->bits = bits;
	int n = 0;
	for (int k = width - 1; k >= 0 && n < (int)sizeof e->text - 1; k--)
		e->text[n++] = (bits >> k) & 1 ? '1' : '0';
	e->text[n] = '\0';
}

static void set_choice(solve_ctx *c, const char *field, const char *choice)
{
	int i = fidx(c, field);
	if (i < 0)
		return;
	ex_value *e = &c->sol->expect[i];
	e->type = EX_CHOICE;
	snprintf(e->choice, sizeof e->choice, "%s", choice);
	snprintf(e->text, sizeof e->text, "%s", choice);
}

static ex_mistake *mistake(solve_ctx *c, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static ex_mistake *mistake(solve_ctx *c, const char *field, const char *fmt, ...)
{
	int i = fidx(c, field);
	if (i < 0 || c->sol->nmistakes == EX_MAX_MISTAKES)
		return NULL;
	ex_mistake *m = &c->sol->mistakes[c->sol->nmistakes++];
	memset(m, 0, sizeof *m);
	m->field = (size_t)i;
	m->tag = fmt;   /* the same sentence for every variant, before its numbers go in */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->message, sizeof m->message, fmt, ap);
	va_end(ap);
	return m;
}

/* A wrong number that a field must not accept as a mistake when it is the
 * right answer too (two figures can coincide for some parameters). */
static void mistake_num(solve_ctx *c, const char *field, double x, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void mistake_num(solve_ctx *c, const char *field, double x, const char *fmt, ...)
{
	int i = fidx(c, field);
	if (i < 0 || c->sol->expect[i].number == x || c->sol->nmistakes == EX_MAX_MISTAKES)
		return;
	ex_mistake *m = &c->sol->mistakes[c->sol->nmistakes++];
	memset(m, 0, sizeof *m);
	m->field = (size_t)i;
	m->value.type = EX_NUMBER;
	m->value.number = x;
	m->tag = fmt;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->message, sizeof m->message, fmt, ap);
	va_end(ap);
}

/* Whether x is within 1e-9 relative of field's expected number: a mistake
 * too close to the answer would shadow it. */
static bool number_close(solve_ctx *c, const char *field, double x)
{
	int i = fidx(c, field);
	if (i < 0)
		return true;
	double e = c->sol->expect[i].number;
	return fabs(x - e) <= 1e-9 * fabs(e);
}

/* A wrong choice word for field and what to tell a student who picks it. */
static void mistake_choice(solve_ctx *c, const char *field, const char *word, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void mistake_choice(solve_ctx *c, const char *field, const char *word, const char *fmt, ...)
{
	int i = fidx(c, field);
	if (i < 0 || strcmp(c->sol->expect[i].choice, word) == 0 || c->sol->nmistakes == EX_MAX_MISTAKES)
		return;
	ex_mistake *m = &c->sol->mistakes[c->sol->nmistakes++];
	memset(m, 0, sizeof *m);
	m->field = (size_t)i;
	m->value.type = EX_CHOICE;
	snprintf(m->value.choice, sizeof m->value.choice, "%s", word);
	m->tag = fmt;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->message, sizeof m->message, fmt, ap);
	va_end(ap);
}

static bool fail(solve_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(solve_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return false;
}

/* A parameter as an exact number. */
static bool param_exact(solve_ctx *c, const char *name, fmt_num *out)
{
	const char *t = ex_variant_get(c->ex, c->v, name);
	char perr[160];
	if (!t)
		return fail(c, "parameter %s is missing", name);
	if (fmt_parse_number(out, t, perr, sizeof perr) != MP_OK)
		return fail(c, "parameter %s = '%s': %s", name, t, perr);
	if (out->kind != NUM_FINITE)
		return fail(c, "parameter %s = '%s' must be finite", name, t);
	return true;
}

static bool param_double(solve_ctx *c, const char *name, double *out)
{
	fmt_num x;
	fmt_num_init(&x);
	bool ok = param_exact(c, name, &x);
	if (ok) {
		*out = fmt_num_to_double(&x);   /* signed */
		if (!isfinite(*out))
			ok = fail(c, "parameter %s is out of range", name);
	}
	fmt_num_clear(&x);
	return ok;
}

static bool param_positive(solve_ctx *c, const char *name, double *out)
{
	if (!param_double(c, name, out))
		return false;
	if (!(*out > 0))
		return fail(c, "parameter %s must be positive", name);
	return true;
}

/* The format named by parameter name, or def when the exercise has none. */
static const fmt_info *param_format(solve_ctx *c, const char *name, fmt_id def)
{
	const char *t = ex_variant_get(c->ex, c->v, name);
	if (!t)
		return fmt_get(def);
	const fmt_info *f = fmt_find(t);
	if (!f)
		fail(c, "parameter %s = '%s' is not a format (%s)", name, t, fmt_known_names());
	return f;
}

/* Short texts for the worked solutions: each call gets its own buffer from a
 * ring, so several can appear in one printf. */
static char *ring(void)
{
	static _Thread_local char pool[16][40];
	static _Thread_local unsigned next;
	return pool[next++ % 16];
}

static const char *g(double x)
{
	char *buf = ring();
	snprintf(buf, 40, "%.6g", x);
	return buf;
}

/* "2^-14" for a power of two. */
static const char *pow2_text(double x)
{
	int e;
	double m = frexp(x, &e);
	char *buf = ring();
	if (m == 0.5)
		snprintf(buf, 40, "2^%d", e - 1);
	else
		snprintf(buf, 40, "%.6g", x);
	return buf;
}

static bool rne_flushes(const fmt_info *f, double x)
{
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	uint32_t b = fmt_round_double(f, &ctl, fabs(x), NULL);
	return b == 0;
}

/* floor(log2 |x|) for a nonzero finite double, exactly. */
static int floor_log2(double x)
{
	int e;
	frexp(fabs(x), &e);
	return e - 1;
}

/* Spacing of f's grid around |x| (toward larger magnitude). */
static double spacing_at(const fmt_info *f, double x)
{
	int e = x == 0 ? fmt_emin(f) : floor_log2(x);
	if (e < fmt_emin(f))
		e = fmt_emin(f);
	return ldexp(1.0, e - f->frac_bits);
}

/* ---- kind: underflow (7.4a) ------------------------------------------------ */

/* Whether the exercise asks "does G survive" (parameter q = survive) rather
 * than "does G vanish". */
static bool survive_asked(solve_ctx *c)
{
	const char *q = ex_variant_get(c->ex, c->v, "q");
	return q && strcmp(q, "survive") == 0;
}

static bool solve_underflow(solve_ctx *c)
{
	double G;
	if (!param_double(c, "G", &G))
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
		static const char *suffix[] = { "_min_normal", "_min_subnormal", "_flushes" };
		for (size_t k = 0; k < 3; k++) {
			snprintf(name, sizeof name, "%s%s", short_name, suffix[k]);
			if (fidx(c, name) < 0)
				snprintf(name, sizeof name, "%s%s", f->name, suffix[k]);
			if (fidx(c, name) < 0)
				continue;
			used = true;
			if (k == 0) {
				set_num(c, name, fmt_min_normal(f));
				mistake_num(c, name, fmt_min_subnormal(f),
				            "%s = 2^%d is the smallest subnormal of %s: the answer if subnormals counted as "
				            "normal. The smallest normal is 2^%d (emin = 1 - bias = %d).",
				            g(fmt_min_subnormal(f)), fmt_emin(f) - f->frac_bits, f->name, fmt_emin(f),
				            fmt_emin(f));
				mistake_num(c, name, fmt_max(f),
				            "%s is the largest finite %s value: the other end of the range. The smallest "
				            "positive normal is 2^%d.",
				            g(fmt_max(f)), f->name, fmt_emin(f));
				mistake_num(c, name, fmt_epsilon(f),
				            "%s = 2^-%d is the epsilon of %s (the gap from 1 to the next value), which depends "
				            "on the fraction bits; the smallest normal depends on the exponent bits: 2^%d.",
				            g(fmt_epsilon(f)), f->frac_bits, f->name, fmt_emin(f));
				for (fmt_id o = 0; o < FMT_COUNT; o++)
					if (o != id && fmt_min_normal(fmt_get(o)) != fmt_min_normal(f))
						mistake_num(c, name, fmt_min_normal(fmt_get(o)),
						            "%s is the smallest normal of %s, not of %s (bias %d gives 2^%d).",
						            g(fmt_min_normal(fmt_get(o))), fmt_get(o)->name, f->name, f->bias,
						            fmt_emin(f));
			} else if (k == 1) {
				set_num(c, name, fmt_min_subnormal(f));
				mistake_num(c, name, fmt_min_normal(f),
				            "That is the smallest normal of %s; subnormals go %d binades lower.", f->name,
				            f->frac_bits);
			} else {
				/* the question is asked either way round ("does G vanish", "does
				 * G survive") so that the answer differs between students */
				bool fl = rne_flushes(f, G);
				bool yes = survive_asked(c) ? !fl : fl;
				set_choice(c, name, yes ? "yes" : "no");
				ex_mistake *m;
				if (fl)
					m = mistake(c, name,
					            "%s is at most half the smallest %s subnormal (2^%d / 2 = %s), so round-to-nearest "
					            "gives 0.",
					            g(G), f->name, fmt_emin(f) - f->frac_bits, g(fmt_min_subnormal(f) / 2));
				else if (G < fmt_min_normal(f))
					m = mistake(c, name,
					            "%s is below the smallest normal of %s (%s) but subnormals still hold it, with "
					            "fewer significant bits.",
					            g(G), f->name, g(fmt_min_normal(f)));
				else
					m = mistake(c, name, "%s is a normal %s number; nothing is lost but rounding.", g(G),
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
			   f->name, f->bias, f->bias, fmt_emin(f), fmt_emin(f), g(fmt_min_normal(f)), fmt_emin(f),
			   f->frac_bits, fmt_emin(f) - f->frac_bits, g(fmt_min_subnormal(f)), g(fmt_min_subnormal(f) / 2),
			   g(G),
			   rne_flushes(f, G) ? "is at most that: it rounds to 0 (flushed)"
			   : G < fmt_min_normal(f) ? "is above it but below the min normal: a subnormal (reduced precision)"
			                           : "is at least the min normal: a normal number");
	}
	if (survive_asked(c))
		strbuf_printf(&c->w, "\nThe question asks whether G survives (stays nonzero): the answer is yes where it is not flushed.\n");
	else
		strbuf_printf(&c->w, "\nThe question asks whether G vanishes (becomes 0): the answer is yes where it is flushed.\n");
	/* the conclusion must match this student's G: not every listed G flushes in fp16 */
	const fmt_info *h = fmt_get(FMT_FP16);
	if (rne_flushes(h, G))
		strbuf_printf(&c->w, "\nfp16 has 5 exponent bits and cannot reach below about 6e-8, so a gradient of %s vanishes\n"
		          "unless the loss is scaled up first; bf16 keeps fp32's 8 exponent bits and reaches 1e-38.\n",
		   g(G));
	else if (G < fmt_min_normal(h))
		strbuf_printf(&c->w, "\nA gradient of %s survives in fp16 only as a subnormal, with %d significant bits instead of 11;\n"
		          "gradients a little smaller (at most 2^-25, about 3e-8) vanish. Scaling the loss up moves them\n"
		          "into fp16's normal range; bf16 keeps fp32's 8 exponent bits and reaches 1e-38.\n",
		   g(G), floor_log2(G) - (fmt_emin(h) - h->frac_bits) + 1);
	else
		strbuf_printf(&c->w, "\nA gradient of %s is a normal fp16 number, but gradients below 2^-14 lose precision in fp16\n"
		          "and those at most 2^-25 (about 3e-8) vanish unless the loss is scaled up first; bf16 keeps\n"
		          "fp32's 8 exponent bits and reaches 1e-38.\n",
		   g(G));
	return true;
}

/* ---- kind: loss-scale (7.4b) ------------------------------------------------ */

/* What fp16 makes of x: 0, a subnormal with fewer bits (and its error), or a
 * normal number. */
static void explain_fp16_fate(solve_ctx *c, const char *what, double x)
{
	const fmt_info *h = fmt_get(FMT_FP16);
	double ax = fabs(x);
	if (rne_flushes(h, ax)) {
		strbuf_printf(&c->w, "  %s = %s is at most 2^-25: it flushes to 0.\n", what, g(x));
		return;
	}
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	double r = fmt_to_double(h, fmt_round_double(h, &ctl, ax, NULL));
	if (ax < fmt_min_normal(h))
		strbuf_printf(&c->w, "  %s = %s is below 2^-14: it survives only as a subnormal, %s, with %d significant\n"
		              "    bits instead of 11 (relative error %s).\n",
		   what, g(x), g(r), floor_log2(r) - (fmt_emin(h) - h->frac_bits) + 1, g(fabs(r - ax) / ax));
	else
		strbuf_printf(&c->w, "  %s = %s is a normal fp16 number (stored as %s, relative error %s).\n", what, g(x), g(r),
		   g(fabs(r - ax) / ax));
}

static bool solve_loss_scale(solve_ctx *c)
{
	double S, gr;
	if (!param_positive(c, "S", &S) || !param_double(c, "g", &gr))
		return false;
	const fmt_info *h = fmt_get(FMT_FP16);
	set_num(c, "dscaled_dloss", S);
	set_num(c, "factor", S);
	set_num(c, "unscale", 1 / S);
	set_num(c, "scaled_grad", gr * S);
	bool fu = rne_flushes(h, gr), fs = rne_flushes(h, gr * S);
	set_choice(c, "unscaled_flushes", fu ? "yes" : "no");
	set_choice(c, "scaled_flushes", fs ? "yes" : "no");
	mistake_choice(c, "unscaled_flushes", fu ? "no" : "yes",
	               fu ? "%s is at most 2^-25 (about 2.98e-8), half of fp16's smallest subnormal: it rounds to 0."
	                  : "%s is above 2^-25 (about 2.98e-8), half of fp16's smallest subnormal: it survives, as a "
	                    "subnormal or a normal number.",
	               g(gr));
	mistake_choice(c, "scaled_flushes", fs ? "no" : "yes",
	               fs ? "g x S = %s is still at most 2^-25 (about 2.98e-8): this scale is too small to save it."
	                  : "g x S = %s is above 2^-25 (about 2.98e-8): the scale lifts it out of the flush zone.",
	               g(gr * S));
	mistake_num(c, "factor", 1 / S, "%s = 1/S is what you get by dividing by S: that is the unscaling done "
	                                "before the optimiser step. Scaling the loss multiplies every gradient by S.",
	            g(1 / S));
	mistake_num(c, "factor", 1, "1 would mean scaling leaves the gradients alone; but the derivative of S*L is S "
	                            "times the derivative of L: the gradients change.");
	mistake_num(c, "unscale", S, "%s = S would scale a second time; unscaling undoes the scale: multiply by 1/S.",
	            g(S));
	mistake_num(c, "dscaled_dloss", 1, "1 is dL/dL; S is a constant factor: the derivative of S*L with respect "
	                                   "to L is S.");
	mistake_num(c, "dscaled_dloss", 0, "0 is the derivative of a constant alone; S multiplies L: the derivative "
	                                   "of S*L with respect to L is S, not 0.");
	mistake_num(c, "scaled_grad", gr, "%s is the gradient before scaling.", g(gr));
	mistake_num(c, "scaled_grad", gr / S, "%s = g / S is what dividing by S gives; the scale multiplies the "
	                                      "gradient: g x S.",
	            g(gr / S));
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
	   pow2_text(S), g(1 / S));
	explain_fp16_fate(c, "unscaled: g", gr);
	explain_fp16_fate(c, "scaled: g x S", gr * S);
	return true;
}

/* ---- kind: memory (7.4c) and zero ------------------------------------------- */

static bool budget_of(solve_ctx *c, double P, int stage, double gpus, budget_result *r)
{
	budget_config cfg = budget_defaults();
	cfg.params = P;
	cfg.zero_stage = stage;
	cfg.gpus = gpus;
	if (budget_compute(r, &cfg) != MP_OK)
		return fail(c, "no memory budget for %g parameters, ZeRO %d on %g GPUs", P, stage, gpus);
	return true;
}

static bool solve_memory(solve_ctx *c)
{
	double P;
	if (!param_positive(c, "P", &P))
		return false;
	budget_result r;
	if (!budget_of(c, P, 0, 1, &r))
		return false;
	double bpp = r.total_bytes_per_param;
	set_num(c, "bytes_per_param", bpp);
	set_num(c, "total_gb", r.total_bytes / 1e9);
	set_num(c, "total_gib", r.total_bytes / 1073741824.0);
	set_num(c, "rule_gb", 20 * P / 1e9);
	double acc = r.bytes_per_param[BUDGET_GRAD_ACCUM];
	double master = r.bytes_per_param[BUDGET_MASTER], moment = r.bytes_per_param[BUDGET_OPTIMIZER] / 2;
	if (acc == master && acc == moment)
		/* all three omissions give the same count: name them all */
		mistake_num(c, "bytes_per_param", bpp - acc,
		            "4 bytes short: did you leave out the fp32 gradient accumulator (gradients are summed in fp32 "
		            "across micro-batches), the fp32 master weights, or one of Adam's two fp32 moments?");
	mistake_num(c, "bytes_per_param", bpp - acc,
	            "You left out the fp32 gradient accumulator (4 bytes): gradients are summed in fp32 across "
	            "micro-batches before the update.");
	mistake_num(c, "bytes_per_param", bpp - master,
	            "You left out the fp32 master weights (4 bytes) that the optimiser updates.");
	mistake_num(c, "bytes_per_param", bpp - moment,
	            "Adam keeps two fp32 states per parameter (m and v): 8 bytes, not 4.");
	mistake_num(c, "bytes_per_param", 2, "2 bytes is only the bf16 weight copy; count every tensor kept per "
	                                     "parameter during training.");
	mistake_num(c, "total_gb", (bpp - acc) * P / 1e9,
	            "That total leaves out the fp32 gradient accumulator (4 bytes per parameter).");
	mistake_num(c, "total_gb", 2 * P / 1e9, "%s GB is only the bf16 weights (2 bytes per parameter); training "
	                                        "keeps much more.",
	            g(2 * P / 1e9));
	mistake_num(c, "total_gb", r.total_bytes, "%s is the total in bytes; the question asks for GB: divide by 10^9.",
	            g(r.total_bytes));
	mistake_num(c, "total_gib", r.total_bytes, "%s is the total in bytes; the question asks for GiB: divide by "
	                                           "2^30 = 1073741824.",
	            g(r.total_bytes));
	mistake_num(c, "total_gb", r.total_bytes / 1073741824.0,
	            "%s looks like GiB, the total / 2^30; the question asks for GB: bytes / 10^9 = %s.",
	            g(r.total_bytes / 1073741824.0), g(r.total_bytes / 1e9));
	mistake_num(c, "total_gib", r.total_bytes / 1e9,
	            "%s looks like GB, the total / 10^9; the question asks for GiB: bytes / 2^30 = %s.",
	            g(r.total_bytes / 1e9), g(r.total_bytes / 1073741824.0));
	strbuf_printf(&c->w, "Step 1: bf16 mixed precision with Adam keeps, per parameter:\n");
	for (budget_component k = 0; k < BUDGET_ACTIVATIONS; k++)
		if (r.bytes_per_param[k] > 0)
			strbuf_printf(&c->w, "  %-15s %g bytes\n", budget_component_name(k), r.bytes_per_param[k]);
	strbuf_printf(&c->w, "  %-15s %g bytes per parameter\n\n", "total", bpp);
	strbuf_printf(&c->w, "Step 2: for P = %s parameters, %g x %s = %s bytes.\n", g(P), bpp, g(P), g(r.total_bytes));
	strbuf_printf(&c->w, "Step 3: in GB (10^9 bytes): %s / 10^9 = %s GB.\n", g(r.total_bytes), g(r.total_bytes / 1e9));
	strbuf_printf(&c->w, "Step 4: in GiB (2^30 = 1073741824 bytes): %s / 2^30 = %s GiB (a GiB is 7.4%% larger than\n"
	              "  a GB, so the GiB figure is smaller).\n",
	   g(r.total_bytes), g(r.total_bytes / 1073741824.0));
	strbuf_printf(&c->w, "Step 5: the rule of thumb of 20 GB per billion parameters gives %s / 10^9 x 20 = %s GB: %s.\n"
	          "Activations come on top and depend on the batch and sequence length.\n",
	   g(P), g(20 * P / 1e9), bpp == 20 ? "the same count (20 bytes per parameter)" : "a different count");
	return true;
}

static bool solve_zero(solve_ctx *c)
{
	double P, gpus, stage;
	if (!param_positive(c, "P", &P) || !param_positive(c, "gpus", &gpus) || !param_double(c, "stage", &stage))
		return false;
	if (stage != 0 && stage != 1 && stage != 2 && stage != 3)
		return fail(c, "parameter stage must be 0, 1, 2 or 3");
	if (gpus != floor(gpus) || gpus > 1e6)
		return fail(c, "parameter gpus must be a whole number");
	budget_result r[4];
	for (int s = 0; s < 4; s++)
		if (!budget_of(c, P, s, gpus, &r[s]))
			return false;
	const budget_result *me = &r[(int)stage];
	set_num(c, "gpu_gb", me->gpu_total_bytes / 1e9);
	set_num(c, "total_gb", me->total_bytes / 1e9);
	set_num(c, "gpu_bytes_per_param", me->gpu_total_bytes / P);
	for (int s = 0; s < 4; s++)
		if (s != (int)stage) {
			mistake_num(c, "gpu_gb", r[s].gpu_total_bytes / 1e9, "That is the per-GPU figure of ZeRO stage %d, not %d.",
			            s, (int)stage);
			mistake_num(c, "gpu_bytes_per_param", r[s].gpu_total_bytes / P,
			            "That is the per-GPU figure of ZeRO stage %d, not %d.", s, (int)stage);
		}
	mistake_num(c, "gpu_gb", me->total_bytes / gpus / 1e9,
	            "Stage %d does not shard everything: only stage 3 divides every component by the GPU count.",
	            (int)stage);
	strbuf_printf(&c->w, "ZeRO stage 1 shards the optimiser state (with the fp32 master weights), stage 2 also the\n"
	          "gradients, stage 3 also the weights; what is sharded is divided by G = %g GPUs.\n\n",
	   gpus);
	strbuf_printf(&c->w, "%-15s %10s %10s\n", "component", "bytes/par", "per GPU");
	for (budget_component k = 0; k < BUDGET_ACTIVATIONS; k++)
		if (me->bytes_per_param[k] > 0)
			strbuf_printf(&c->w, "%-15s %10g %10.4g\n", budget_component_name(k), me->bytes_per_param[k],
			   me->gpu_bytes[k] / P);
	strbuf_printf(&c->w, "\nPer GPU: %s bytes per parameter x %s = %s GB (unsharded: %s GB).\n", g(me->gpu_total_bytes / P),
	   g(P), g(me->gpu_total_bytes / 1e9), g(me->total_bytes / 1e9));
	return true;
}

/* ---- kind: hand-round (7.4d, fp8) ------------------------------------------ */

/* The formats whose fields an exercise names ("fp16_bits", "e4m3_rel_error"). */
static bool field_format(const char *field, fmt_id *id)
{
	static const char *suffix[] = { "_bits", "_value", "_rel_error" };
	for (size_t k = 0; k < 3; k++) {
		size_t fl = strlen(field), sl = strlen(suffix[k]);
		if (fl > sl && strcmp(field + fl - sl, suffix[k]) == 0) {
			char name[EX_NAME_MAX];
			snprintf(name, sizeof name, "%.*s", (int)(fl - sl), field);
			const fmt_info *f = fmt_find(name);
			if (f) {
				*id = f->id;
				return true;
			}
		}
	}
	return false;
}

static void field_name(char *out, size_t n, const char *prefix, const char *suffix)
{
	snprintf(out, n, "%s%s", prefix, suffix);
}

/* The low width bits of v, most significant first (from the ring). */
static const char *binary(int v, int width)
{
	char *buf = ring();
	int n = 0;
	for (int i = width - 1; i >= 0 && n < 39; i--)
		buf[n++] = (v >> i) & 1 ? '1' : '0';
	buf[n] = '\0';
	return buf;
}

/* The steps of rounding by hand, as explain_round finds them. */
typedef struct {
	bool zero, overflow, subnormal;
	int e;                 /* 2^e <= |x| < 2^(e+1) */
	int exp_field;         /* the biased exponent field (0 when subnormal) */
	uint32_t fraction;     /* the kept fraction bits, before rounding */
	int guard, round, sticky;
	bool up;               /* the decision: away from zero */
} round_steps;

/* Writes |x|'s significand bits for f (e, kept bits, guard, round, sticky)
 * and the decision; returns the bits found by the engine. steps (may be
 * NULL) gets the steps. */
static uint32_t explain_round(solve_ctx *c, const fmt_info *f, const fmt_num *x, bool *ok, round_steps *steps)
{
	round_steps dummy;
	if (!steps)
		steps = &dummy;
	memset(steps, 0, sizeof *steps);
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	uint32_t bits = fmt_round_num(f, &ctl, x, NULL);
	*ok = true;
	strbuf_printf(&c->w, "%s (1 sign, %d exponent, %d fraction bits; bias %d)\n", f->name, f->exp_bits, f->frac_bits, f->bias);
	if (mpq_sgn(x->mag) == 0) {
		strbuf_printf(&c->w, "  zero is exact: 0x%0*x\n", fmt_hex_digits(f), (unsigned)bits);
		steps->zero = true;
		return bits;
	}
	double d = fmt_num_to_double(x);
	int e = floor_log2(d);
	mpq_t q, p2;
	mpq_inits(q, p2, NULL);
	/* make e exact: 2^e <= |x| < 2^(e+1) */
	for (;;) {
		mpq_set_ui(p2, 1, 1);
		if (e >= 0)
			mpz_mul_2exp(mpq_numref(p2), mpq_numref(p2), (mp_bitcnt_t)e);
		else
			mpz_mul_2exp(mpq_denref(p2), mpq_denref(p2), (mp_bitcnt_t)-e);
		if (mpq_cmp(x->mag, p2) < 0) {
			e--;
			continue;
		}
		mpz_mul_2exp(mpq_numref(p2), mpq_numref(p2), 1);
		mpq_canonicalize(p2);
		if (mpq_cmp(x->mag, p2) >= 0) {
			e++;
			continue;
		}
		break;
	}
	bool sub = e < fmt_emin(f);
	int eu = sub ? fmt_emin(f) : e;
	/* q = |x| / 2^(eu - frac_bits): integer part = kept significand */
	int sh = f->frac_bits - eu;
	mpq_set(q, x->mag);
	if (sh >= 0)
		mpz_mul_2exp(mpq_numref(q), mpq_numref(q), (mp_bitcnt_t)sh);
	else
		mpz_mul_2exp(mpq_denref(q), mpq_denref(q), (mp_bitcnt_t)-sh);
	mpq_canonicalize(q);
	mpz_t sig, rem;
	mpz_inits(sig, rem, NULL);
	mpz_fdiv_qr(sig, rem, mpq_numref(q), mpq_denref(q));
	/* guard, round: next two bits of rem/den; sticky: anything below */
	mpz_mul_2exp(rem, rem, 1);
	int guard = mpz_cmp(rem, mpq_denref(q)) >= 0;
	if (guard)
		mpz_sub(rem, rem, mpq_denref(q));
	mpz_mul_2exp(rem, rem, 1);
	int roundb = mpz_cmp(rem, mpq_denref(q)) >= 0;
	if (roundb)
		mpz_sub(rem, rem, mpq_denref(q));
	int sticky = mpz_sgn(rem) != 0;
	char sigbits[80];
	size_t nb = 0;
	for (int i = f->frac_bits; i >= 0 && nb < sizeof sigbits - 2; i--) {
		sigbits[nb++] = mpz_tstbit(sig, (mp_bitcnt_t)i) ? '1' : '0';
		if (i == f->frac_bits)
			sigbits[nb++] = '.';
	}
	sigbits[nb] = '\0';
	char dec[64];
	short_text(dec, sizeof dec, d);
	steps->e = e;
	steps->subnormal = sub;
	steps->exp_field = sub ? 0 : e + f->bias;
	steps->fraction = (uint32_t)mpz_get_ui(sig) & fmt_frac_mask(f);
	steps->guard = guard;
	steps->round = roundb;
	steps->sticky = sticky;
	if (e > fmt_emax(f)) {
		steps->overflow = true;
		strbuf_printf(&c->w, "  %s is at least 2^%d, beyond the largest exponent 2^%d: it overflows\n", dec, e, fmt_emax(f));
		strbuf_printf(&c->w, "  result: 0x%0*x (%s)\n", fmt_hex_digits(f), (unsigned)bits,
		   fmt_has_inf(f) ? "inf" : "NaN: this format has no inf");
		mpz_clears(sig, rem, NULL);
		mpq_clears(q, p2, NULL);
		return bits;
	}
	if (sub)
		strbuf_printf(&c->w, "  %s = 0.xxx x 2^%d: below 2^%d, the smallest normal, so it is subnormal\n"
		          "  exponent field: 0 (subnormal, scale 2^%d)\n",
		   dec, e, fmt_emin(f), fmt_emin(f));
	else
		strbuf_printf(&c->w, "  %s lies in [2^%d, 2^%d), so it is 1.xxx x 2^%d\n  exponent field: %d + %d = %d = %s\n", dec, e,
		   e + 1, e, e, f->bias, e + f->bias, binary(e + f->bias, f->exp_bits));
	strbuf_printf(&c->w, "  significand kept (%d bits): %s | guard %d, round %d, sticky %d\n", f->frac_bits + 1, sigbits, guard,
	   roundb, sticky);
	int lsb = mpz_tstbit(sig, 0);
	bool up = guard && (roundb || sticky || lsb);
	steps->up = up;
	if (!guard && !roundb && !sticky)
		strbuf_printf(&c->w, "  decision: guard, round and sticky all 0: V is exact in %s, nothing to round\n", f->name);
	else if (!guard)
		strbuf_printf(&c->w, "  decision: guard bit 0, the rest is below half an ulp: round down (keep the bits)\n");
	else if (roundb || sticky)
		strbuf_printf(&c->w, "  decision: guard 1 and round/sticky not both 0: more than half an ulp: round up\n");
	else
		strbuf_printf(&c->w, "  decision: exactly half an ulp, a tie: to even, the last kept bit is %d: round %s\n", lsb,
		   up ? "up" : "down");
	/* cross-check the explanation against the engine */
	if (up)
		mpz_add_ui(sig, sig, 1);
	double mine = ldexp(mpz_get_d(sig), eu - f->frac_bits);
	double eng = fmt_to_double(f, bits);
	if (fabs(eng) != mine && !(isinf(eng) || isnan(eng))) {
		*ok = false;
		fail(c, "internal error: hand rounding of %s to %s disagrees with the engine", dec, f->name);
	}
	fmt_decoded dd;
	fmt_decode(f, bits, &dd);
	char val[64];
	short_text(val, sizeof val, dd.value);
	strbuf_printf(&c->w, "  result: sign %d, exponent field %u, fraction field 0x%x = 0x%0*x = %s\n", dd.neg, dd.exp_field,
	   dd.frac_field, fmt_hex_digits(f), (unsigned)bits, val);
	mpz_clears(sig, rem, NULL);
	mpq_clears(q, p2, NULL);
	return bits;
}

static bool solve_hand_round(solve_ctx *c)
{
	fmt_num x;
	fmt_num_init(&x);
	if (!param_exact(c, "V", &x)) {
		fmt_num_clear(&x);
		return false;
	}
	if (!isfinite(fmt_num_to_double(&x)) || (mpq_sgn(x.mag) && fmt_num_to_double(&x) == 0)) {
		fmt_num_clear(&x);
		return fail(c, "parameter V must lie within binary64's range");
	}
	if (mpq_sgn(x.mag) == 0) {
		/* -0 and 0: the relative error |rounded - V| / |V| is 0/0 */
		fmt_num_clear(&x);
		return fail(c, "parameter V = %s is zero: its relative error is 0/0, undefined",
		            ex_variant_get(c->ex, c->v, "V"));
	}
	/* the formats named by fields; fp16, bf16, fp32 when none */
	bool want[FMT_COUNT] = { false };
	size_t nwant = 0;
	for (size_t i = 0; i < c->ex->nfields; i++) {
		fmt_id id;
		if (field_format(c->ex->fields[i].name, &id) && !want[id]) {
			want[id] = true;
			nwant++;
		}
	}
	if (!nwant)
		want[FMT_FP16] = want[FMT_BF16] = want[FMT_FP32] = true;
	double rel[FMT_COUNT];
	bool ok = true;
	const char *vtext = ex_variant_get(c->ex, c->v, "V");
	strbuf_printf(&c->w, "Rounding V = %s to nearest, ties to even (RNE).\n\n", vtext);
	for (fmt_id id = 0; id < FMT_COUNT && ok; id++) {
		if (!want[id])
			continue;
		const fmt_info *f = fmt_get(id);
		uint32_t bits = explain_round(c, f, &x, &ok, NULL);
		double value = fmt_to_double(f, bits), abs_err;
		if (ok && !isfinite(value)) {
			fmt_num_clear(&x);
			return fail(c, "V = %s overflows %s (its relative error would be infinite): choose a value in its range",
			            vtext, f->name);
		}
		fmt_error_of(&x, value, &abs_err, &rel[id]);
		char rt[64], at[64];
		fmt_error_text(&x, value, 6, at, rt, sizeof rt);
		char vt[64];
		short_text(vt, sizeof vt, value);
		strbuf_printf(&c->w, "  relative error: |%s - %s| / |%s| = %s\n\n", vt, vtext, vtext, rt);
		const char *prefixes[2] = { f->name, id == FMT_E4M3 ? "e4m3" : id == FMT_E5M2 ? "e5m2" : NULL };
		for (int pi = 0; pi < 2; pi++) {
			if (!prefixes[pi])
				continue;
			char fb[EX_NAME_MAX + 8], fv[EX_NAME_MAX + 8], fr[EX_NAME_MAX + 12];
			field_name(fb, sizeof fb, prefixes[pi], "_bits");
			field_name(fv, sizeof fv, prefixes[pi], "_value");
			field_name(fr, sizeof fr, prefixes[pi], "_rel_error");
			set_bits(c, fb, f, bits);
			set_num(c, fv, value);
			set_num(c, fr, rel[id]);
			/* the bound mistaken for the error: u = 2^-p, and epsilon = 2u */
			int p = fmt_precision(f);
			if (!number_close(c, fr, ldexp(1, -p)))
				mistake_num(c, fr, ldexp(1, -p),
				            "%s = 2^-%d is the unit roundoff of %s: the largest relative error round-to-nearest "
				            "can make, not the error for this V. Compute |rounded - V| / |V|.",
				            g(ldexp(1, -p)), p, f->name);
			if (!number_close(c, fr, ldexp(1, 1 - p)))
				mistake_num(c, fr, ldexp(1, 1 - p),
				            "%s = 2^-%d is the epsilon of %s (the spacing at 1), a bound, not the error for "
				            "this V. Compute |rounded - V| / |V|.",
				            g(ldexp(1, 1 - p)), p - 1, f->name);
			/* the other neighbour: what rounding the wrong way gives */
			/* (none when V is exact: no bits beyond the kept ones, no direction to get wrong) */
			uint32_t other;
			bool neg = x.neg;
			bool toward_zero_now = fabs(value) <= fabs(fmt_num_to_double(&x));
			bool have = rel[id] != 0 &&
			            ((toward_zero_now != neg) ? fmt_next_up(f, bits, &other) : fmt_next_down(f, bits, &other));
			if (have && isfinite(fmt_to_double(f, other))) {
				double ov = fmt_to_double(f, other), oabs, orel;
				fmt_error_of(&x, ov, &oabs, &orel);
				ex_mistake *m = mistake(c, fb,
				                        "0x%0*x (%s) is the other neighbour of V, what rounding the other way "
				                        "gives: the bits beyond the kept ones decide the direction (see the guard, "
				                        "round and sticky bits).",
				                        fmt_hex_digits(f), (unsigned)other, g(ov));
				if (m) {
					m->value.type = EX_BITS;
					m->value.bits = other;
				}
				mistake_num(c, fv, ov, "%s is the other neighbour of V, what rounding the other way gives; check "
				                       "the rounding direction.",
				            g(ov));
				mistake_num(c, fr, orel, "%s is the error of the other neighbour (%s), what rounding the other way "
				                         "gives; check the rounding direction.",
				            g(orel), g(ov));
			}
			mistake_num(c, fr, abs_err, "%s is the absolute error |rounded - V|; divide it by |V|.", g(abs_err));
			/* the pattern of another format of the same width */
			for (fmt_id o = 0; o < FMT_COUNT; o++) {
				const fmt_info *of = fmt_get(o);
				if (o == id || of->width != f->width)
					continue;
				fmt_round_ctl octl = { .mode = FMT_RNE };
				uint32_t ob = fmt_round_num(of, &octl, &x, NULL);
				if (ob == bits)
					continue;
				ex_mistake *wm = mistake(c, fb,
				                         "That is the %s pattern of V (%d exponent bits, bias %d); %s has %d "
				                         "exponent and %d fraction bits, bias %d.",
				                         of->name, of->exp_bits, of->bias, f->name, f->exp_bits, f->frac_bits,
				                         f->bias);
				if (wm) {
					wm->value.type = EX_BITS;
					wm->value.bits = ob;
				}
			}
		}
	}
	if (ok) {
		double best = INFINITY, worst = -INFINITY;
		for (fmt_id id = 0; id < FMT_COUNT; id++)
			if (want[id]) {
				best = fmin(best, rel[id]);
				worst = fmax(worst, rel[id]);
			}
		char bs[EX_NAME_MAX] = "", ws[EX_NAME_MAX] = "";
		for (fmt_id id = 0; id < FMT_COUNT; id++) {
			if (!want[id])
				continue;
			if (rel[id] == best && strlen(bs) + strlen(fmt_get(id)->name) + 2 < sizeof bs)
				snprintf(bs + strlen(bs), sizeof bs - strlen(bs), "%s%s", bs[0] ? "|" : "", fmt_get(id)->name);
			if (rel[id] == worst && strlen(ws) + strlen(fmt_get(id)->name) + 2 < sizeof ws)
				snprintf(ws + strlen(ws), sizeof ws - strlen(ws), "%s%s", ws[0] ? "|" : "", fmt_get(id)->name);
		}
		for (fmt_id id = 0; id < FMT_COUNT; id++)
			if (want[id] && rel[id] == best && rel[id] == worst && fidx(c, "best") >= 0 && fidx(c, "worst") >= 0) {
				fmt_num_clear(&x);
				return fail(c, "V = %s: every format keeps it equally well, so %s is both best and worst; "
				               "choose a value the formats round differently",
				            vtext, fmt_get(id)->name);
			}
		set_choice(c, "best", bs);
		set_choice(c, "worst", ws);
		strbuf_printf(&c->w, "Smallest relative error: %s. Largest: %s.\n", bs, ws);
		ex_mistake *m = mistake(c, "best", "Compare the relative errors, not the number of bits stored.");
		if (m) {
			m->value.type = EX_CHOICE;
			snprintf(m->value.choice, sizeof m->value.choice, "%s", ws);
		}
		m = mistake(c, "worst", "That format has the smallest error here; compare the relative errors.");
		if (m) {
			m->value.type = EX_CHOICE;
			snprintf(m->value.choice, sizeof m->value.choice, "%s", bs);
		}
	}
	fmt_num_clear(&x);
	return ok;
}

/* ---- kinds: spacing (drift.1, ulp) and update-vanish (7.4e) ------------------ */

static void explain_spacing(solve_ctx *c, const fmt_info *f, double x, double sp)
{
	int e = floor_log2(x);
	if (e < fmt_emin(f))
		strbuf_printf(&c->w, "|x| = %s is subnormal in %s: the spacing is fixed at 2^(%d - %d) = %s.\n", g(fabs(x)), f->name,
		   fmt_emin(f), f->frac_bits, g(sp));
	else
		strbuf_printf(&c->w,
		   "%s keeps %d fraction bits. |x| = %s lies in [2^%d, 2^%d) = [%s, %s), where neighbours are\n"
		   "2^(%d - %d) = %s apart.\n",
		   f->name, f->frac_bits, g(fabs(x)), e, e + 1, g(ldexp(1, e)), g(ldexp(1, e + 1)), e,
		   f->frac_bits, g(sp));
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
	double sv = spacing_at(f, xs) / 2;
	if (sv != sp / 2)
		strbuf_printf(&c->w, "Stored in %s, x becomes %s, a power of two: the gap above it is %s, so an update smaller than\n"
		          "%s is rounded away under round-to-nearest.\n",
		   f->name, g(xs), g(2 * sv), g(sv));
	else
		strbuf_printf(&c->w, "An update smaller than half the spacing, %s, is rounded away under round-to-nearest.\n", g(sv));
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
		double so = spacing_at(o, x);
		if (so != spacing_at(f, x))
			mistake_num(c, field, so, "%s is the spacing of %s at %s (%d fraction bits); %s keeps %d fraction bits, "
			                          "so its spacing there is 2^(e - %d).",
			            g(so), o->name, g(fabs(x)), o->frac_bits, f->name, f->frac_bits, f->frac_bits);
	}
}

static bool solve_spacing(solve_ctx *c)
{
	double x;
	if (!param_double(c, "x", &x))
		return false;
	const fmt_info *f = param_format(c, "format", FMT_BF16);
	if (!f)
		return false;
	if (x == 0)
		return fail(c, "parameter x must not be 0");
	if (fabs(x) > fmt_max(f))
		return fail(c, "parameter x is beyond %s's largest value", f->name);
	double sp = spacing_at(f, x);
	set_num(c, "spacing", sp);
	explain_spacing(c, f, x, sp);
	double sv = explain_vanish(c, f, x, sp);
	set_num(c, "vanish_below", sv);
	set_num(c, "exponent", floor_log2(x) < fmt_emin(f) ? fmt_emin(f) : floor_log2(x));
	mistake_num(c, "spacing", fabs(x) * fmt_epsilon(f),
	            "The spacing is not |x| times epsilon: it is fixed within each binade [2^e, 2^(e+1)) at "
	            "2^(e - %d), and jumps at powers of two.",
	            f->frac_bits);
	mistake_other_spacing(c, "spacing", f, x);
	mistake_num(c, "vanish_below", 2 * sv,
	            "An update rounds to the next value once it passes half the spacing; below that it vanishes.");
	mistake_num(c, "vanish_below", fabs(x) * fmt_epsilon(f) / 2,
	            "Half of |x| times epsilon ignores that the spacing is fixed per binade: use 2^(e - %d) / 2.",
	            f->frac_bits);
	return true;
}

static bool solve_update_vanish(solve_ctx *c)
{
	double w;
	if (!param_double(c, "w", &w))
		return false;
	const fmt_info *f = param_format(c, "format", FMT_BF16);
	if (!f)
		return false;
	if (w == 0 || fabs(w) > fmt_max(f))
		return fail(c, "parameter w must be nonzero and within %s's range", f->name);
	w = stored_value(f, w);   /* "a weight stored in bf16": its gaps are those of the stored value */
	double sp = spacing_at(f, w);
	int p = fmt_precision(f);
	double T = ldexp(1, 2 * p);
	set_num(c, "spacing", sp);
	set_num(c, "vanish_below", sp / 2);
	set_num(c, "steps", T);
	mistake_num(c, "spacing", fabs(w) * fmt_epsilon(f),
	            "The spacing is not w times epsilon: it is 2^(e - %d) with e = floor(log2 w), fixed per binade.",
	            f->frac_bits);
	mistake_num(c, "vanish_below", sp, "%s is the whole spacing: an update survives once it passes half the "
	                                   "spacing, not the whole of it.",
	            g(sp));
	mistake_other_spacing(c, "spacing", f, w);
	mistake_num(c, "steps", ldexp(1, p), "sqrt(T) x 2^-%d = 1 gives sqrt(T) = 2^%d, so T = 2^%d: square it.", p, p,
	            2 * p);
	mistake_num(c, "steps", ldexp(1, 2 * (p - 1)),
	            "Use the unit roundoff 2^-%d (half of epsilon 2^-%d), as the question says.", p, p - 1);
	explain_spacing(c, f, w, sp);
	explain_vanish(c, f, w, sp);
	strbuf_printf(&c->w,
	   "\nWithout fp32 master weights every small update below %s is lost outright. Even updates that\n"
	   "survive are rounded: after T steps the rounding errors (each up to 2^-%d relative, the unit\n"
	   "roundoff) add up to roughly sqrt(T) x 2^-%d when they are independent, and reach the size of w\n"
	   "itself when sqrt(T) x 2^-%d = 1, that is T = 2^%d = %s steps, far fewer than a training run.\n"
	   "fp32 master weights (24 bits) push this to 2^48 steps.\n",
	   g(sp / 2), p, p, p, 2 * p, g(T));
	return true;
}

/* ---- kind: overflow ------------------------------------------------------------ */

static bool solve_overflow(solve_ctx *c)
{
	const fmt_info *f = param_format(c, "format", FMT_FP16);
	if (!f)
		return false;
	double mx = fmt_max(f);
	double ulp = ldexp(1, fmt_emax(f) - f->frac_bits);
	/* The tie max + ulp/2 goes to even: away from max when max's last
	 * significand bit is 1 (fp16, bf16, fp32), back to max when it is 0
	 * (fp8-e4m3, whose all-ones fraction is NaN). */
	bool tie_up = (fmt_max_bits(f) & 1u) != 0;
	const char *beyond = fmt_has_inf(f) ? "inf" : "NaN (this format has no inf)";
	set_num(c, "max", mx);
	set_num(c, "overflow_at", mx + ulp / 2);
	set_num(c, "min_normal", fmt_min_normal(f));
	set_num(c, "min_subnormal", fmt_min_subnormal(f));
	set_num(c, "epsilon", fmt_epsilon(f));
	set_num(c, "max_spacing", ulp);
	mistake_num(c, "overflow_at", mx, "Values a little above the maximum still round down to it: overflow starts "
	                                  "half a spacing above.");
	if (tie_up)
		mistake_num(c, "overflow_at", mx + ulp, "Half a spacing above the maximum is already a tie, which rounds "
		                                        "to even: away from the maximum, whose last bit is 1.");
	else
		mistake_num(c, "overflow_at", mx + ulp, "Every value more than half a spacing above the maximum is nearer "
		                                        "the next step up, which this format cannot hold.");
	mistake_num(c, "max", ldexp(2, fmt_emax(f)), "That would need an all-ones fraction with one more bit; the "
	                                             "largest significand is 2 - 2^-%d.",
	            f->frac_bits);
	strbuf_printf(&c->w, "%s: %d exponent bits (bias %d), %d fraction bits.\n", f->name, f->exp_bits, f->bias, f->frac_bits);
	strbuf_printf(&c->w, "Largest exponent %d; largest significand %s: max = %s.\n", fmt_emax(f),
	   g(mx / ldexp(1, fmt_emax(f))), g(mx));
	if (tie_up)
		strbuf_printf(&c->w, "Spacing at the top: 2^(%d - %d) = %s. Under RNE a value rounds to %s once it reaches\n"
		          "max + spacing/2 = %s (the tie goes to even, away from max, whose last bit is 1).\n",
		   fmt_emax(f), f->frac_bits, g(ulp), beyond, g(mx + ulp / 2));
	else
		strbuf_printf(&c->w, "Spacing at the top: 2^(%d - %d) = %s. Under RNE a value rounds to %s once it exceeds\n"
		          "max + spacing/2 = %s. That value itself is a tie and goes to even, which is max (its last\n"
		          "bit is 0), so %s still rounds to %s; anything above it does not.\n",
		   fmt_emax(f), f->frac_bits, g(ulp), beyond, g(mx + ulp / 2), g(mx + ulp / 2), g(mx));
	strbuf_printf(&c->w, "min normal 2^%d = %s, min subnormal 2^%d = %s, epsilon 2^-%d = %s.\n", fmt_emin(f),
	   g(fmt_min_normal(f)), fmt_emin(f) - f->frac_bits, g(fmt_min_subnormal(f)), f->frac_bits,
	   g(fmt_epsilon(f)));
	return true;
}

/* ---- kind: scale-choice ---------------------------------------------------------- */

static bool solve_scale_choice(solve_ctx *c)
{
	double gmax, gmin;
	if (!param_positive(c, "gmax", &gmax) || !param_positive(c, "gmin", &gmin))
		return false;
	if (gmin > gmax)
		return fail(c, "parameter gmin must not exceed gmax");
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
	set_num(c, "max_scale", smax);
	set_num(c, "min_scale", smin);
	set_choice(c, "fits", kmin <= kmax ? "yes" : "no");
	mistake_num(c, "max_scale", 2 * smax, "With that scale gmax x S exceeds fp16's largest value 65504.");
	mistake_num(c, "min_scale", smin / 2, "With that scale gmin x S is still below fp16's smallest normal 2^-14.");
	strbuf_printf(&c->w, "Largest power of two S with gmax x S <= 65504: S = 2^%d = %s (gmax x S = %s).\n", kmax, g(smax),
	   g(gmax * smax));
	strbuf_printf(&c->w, "Smallest power of two S with gmin x S >= 2^-14: S = 2^%d = %s (gmin x S = %s).\n", kmin, g(smin),
	   g(gmin * smin));
	strbuf_printf(&c->w, "%s\n", kmin <= kmax ? "Both fit: any S between them keeps the whole range normal in fp16."
	                               : "They do not fit together: the range of gradients is wider than fp16's "
	                                 "normal range; some underflow or overflow is unavoidable (bf16 avoids this).");
	return true;
}

/* ---- kind: lost-updates (drift.3) ------------------------------------------------- */

static bool solve_lost_updates(solve_ctx *c)
{
	fmt_num x, u;
	double nd;
	const fmt_info *f = param_format(c, "format", FMT_BF16);
	if (!f || !param_positive(c, "n", &nd))
		return false;
	if (nd != floor(nd) || nd > 10000)
		return fail(c, "parameter n must be a whole number up to 10000");
	fmt_num_init(&x);
	fmt_num_init(&u);
	bool ok = param_exact(c, "x0", &x) && param_exact(c, "u", &u);
	if (ok && fmt_num_to_double(&u) == 0)
		ok = fail(c, "parameter u must not be 0");
	double uval = ok ? fmt_num_to_double(&u) : 0;   /* signed */
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	uint32_t bits = ok ? fmt_round_num(f, &ctl, &x, NULL) : 0;
	if (ok && !isfinite(fmt_to_double(f, bits)))
		ok = fail(c, "parameter x0 is beyond %s's range", f->name);
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
	set_num(c, "lost", (double)lost);
	set_num(c, "final", now);
	set_num(c, "kept", (double)(n - lost));
	mistake_num(c, "final", start + nd * uval, "That is the exact sum; each update is rounded to %s as it is added.",
	            f->name);
	mistake_num(c, "lost", nd, "Not every update is lost: follow the value as it moves, the spacing changes "
	                           "at powers of two.");
	mistake_num(c, "lost", 0, "Updates smaller than half the spacing at the current value are rounded away.");
	strbuf_printf(&c->w, "x0 = %s is stored in %s as %s; each step adds u = %s and rounds to nearest.\n",
	   ex_variant_get(c->ex, c->v, "x0"), f->name, g(start), g(uval));
	strbuf_printf(&c->w, "At %s the spacing is %s, so an update of %s is %s.\n", g(start), g(spacing_at(f, start)),
	   g(fabs(uval)), fabs(uval) < spacing_at(f, start) / 2 ? "rounded away" : "kept (rounded)");
	if (lost && first_lost > 1)
		strbuf_printf(&c->w, "The value moves until the spacing grows; the first update lost is number %zu.\n", first_lost);
	strbuf_printf(&c->w, "After %zu updates: %zu lost, %zu kept; the value is %s (exact sum: %s).\n", n, lost, n - lost,
	   g(now), g(start + nd * uval));
	return true;
}

/* ---- kind: drift-retained (drift.4) ------------------------------------------------ */

static bool solve_drift_retained(solve_ctx *c)
{
	double x0, u, T;
	if (!param_double(c, "x0", &x0) || !param_double(c, "u", &u) || !param_positive(c, "T", &T))
		return false;
	if (T != floor(T) || T > 1e5)
		return fail(c, "parameter T must be a whole number up to 100000");
	if (u == 0)
		return fail(c, "parameter u must not be 0");
	drift_params p = drift_defaults();
	/* With constant updates every value of a round-to-nearest variant takes
	 * the same path, so one value gives what the command's 1,000 give;
	 * stochastic rounding differs per value, so it is simulated (only when
	 * asked) exactly as the command does: 1,000 values, the same seed. */
	bool want_sr = fidx(c, "retained_sr") >= 0;
	p.elements = want_sr ? drift_defaults().elements : 1;
	p.steps = (size_t)T;
	p.x0 = x0;
	p.dist = DRIFT_DIST_CONSTANT;
	p.mean = u;
	p.std = 0;
	drift_sim *s;
	mp_status st = drift_create(&s, &p);
	if (st != MP_OK)
		return st == MP_ENOMEM ? fail(c, "out of memory") : fail(c, "the drift simulation refuses these parameters");
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
		if (fidx(c, rows[i].field) >= 0 && !isfinite(d->retained))
			return fail(c, "the %s drift is undefined for these parameters", drift_variant_name(rows[i].v));
		set_num(c, rows[i].field, d->retained);
	}
	mistake_num(c, "retained_rne", 1, "bf16 near x0 cannot represent a step of u: check the spacing at x0.");
	strbuf_printf(&c->w, "Run: mixprec drift --x0 %s --dist constant --mean %s --steps %.0f\n\n", ex_variant_get(c->ex, c->v, "x0"),
	   ex_variant_get(c->ex, c->v, "u"), T);
	strbuf_printf(&c->w, "fp64 drifts by %s.\n", g(out[DRIFT_FP64].drift));
	for (drift_variant v = DRIFT_FP32; v < DRIFT_VARIANT_COUNT; v++)
		if (v != DRIFT_BF16_SR || want_sr)
			strbuf_printf(&c->w, "  %-11s drift %-12s retained %s\n", drift_variant_name(v), g(out[v].drift),
			   g(out[v].retained));
	if (!want_sr)
		strbuf_printf(&c->w, "  (bf16-sr rounds at random: the command's 1,000 values show its retained share)\n");
	const fmt_info *bf = fmt_get(FMT_BF16);
	double stop = x0 + out[DRIFT_BF16_RNE].drift;
	if (out[DRIFT_BF16_RNE].drift == 0)
		strbuf_printf(&c->w, "\nbf16 spacing at %s is %s: an update of %s is not above half of it and is rounded away\n"
		              "every time (round-to-nearest makes the same decision at every step, so nothing averages out).\n",
		   g(x0), g(spacing_at(bf, x0)), g(fabs(u)));
	else
		strbuf_printf(&c->w, "\nbf16 spacing at %s is %s: an update of %s moves the value (rounded) at first, but the\n"
		              "spacing doubles at every power of two; at %s it is %s, more than twice the update, and from\n"
		              "there on every update is rounded away.\n",
		   g(x0), g(spacing_at(bf, x0)), g(fabs(u)), g(stop), g(spacing_at(bf, stop)));
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

static bool solve_ema_stall(solve_ctx *c)
{
	fmt_num beta;
	fmt_num_init(&beta);
	bool ok = param_exact(c, "beta2", &beta);
	double bd = ok ? fmt_num_to_double(&beta) : 0;
	const fmt_info *f32 = fmt_get(FMT_FP32);
	fmt_round_ctl rne = { .mode = FMT_RNE };
	float b = ok ? (float)fmt_to_double(f32, fmt_round_num(f32, &rne, &beta, NULL)) : 0;
	fmt_num_clear(&beta);
	if (!ok)
		return false;
	if (!(bd > 0.5 && bd < 1) || b >= 1)
		return fail(c, "parameter beta2 must lie in (0.5, 1) and below 1 in fp32");
	const fmt_info *f = param_format(c, "format", FMT_BF16);
	if (!f)
		return false;
	if (f->width > 16)
		return fail(c, "parameter format must be a 16-bit or smaller format, not %s", f->name);
	volatile float one = 1.0f;
	float cc = one - b;   /* exact: b lies in [1/2, 1] (Sterbenz) */
	float stall;
	size_t steps;
	if (!ema_stall(f, FMT_RNE, b, cc, &stall, &steps))
		return fail(c, "v does not stop changing in %s for beta2 = %s", f->name, g(bd));
	set_num(c, "stall_value", stall);
	set_num(c, "steps", (double)steps);
	mistake_num(c, "stall_value", 1, "1 is where v converges in exact arithmetic (the fixed point of v = b v + c "
	                                 "is c / (1 - b) = 1); in %s the increments are rounded away long before.",
	            f->name);
	fmt_id other_id = f->id == FMT_BF16 ? FMT_FP16 : FMT_BF16;
	float ostall, tstall;
	size_t osteps, tsteps;
	if (ema_stall(fmt_get(other_id), FMT_RNE, b, cc, &ostall, &osteps))
		mistake_num(c, "stall_value", ostall, "%s is where v stops in %s (%d fraction bits); %s has %d fraction "
		                                      "bits, so its spacing, and the stall, differ.",
		            g(ostall), fmt_get(other_id)->name, fmt_get(other_id)->frac_bits, f->name, f->frac_bits);
	if (ema_stall(f, FMT_RTZ, b, cc, &tstall, &tsteps))
		mistake_num(c, "stall_value", tstall, "%s is where v would stop if an increment needed a whole spacing to "
		                                      "count (rounding toward zero); round-to-nearest moves v once the "
		                                      "increment passes half the spacing.",
		            g(tstall));
	mistake_num(c, "steps", (double)steps + 1, "%zu counts the step that left v unchanged; count the steps that "
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
			int e = floor_log2(v);
			if (e != last_e || k == steps) {
				strbuf_printf(&c->w, "%8zu  %-12s %-12s %s\n", k, g(v), g(spacing_at(f, v)), g(cc * (1 - (double)v)));
				last_e = e;
			}
		}
	}
	volatile float bv = b * stall;
	volatile float sum = bv + cc;
	double sp = spacing_at(f, stall);
	strbuf_printf(&c->w, "\nAt v = %s the spacing of %s is %s, half of it %s. The next value would be\n"
	              "fl32(b v) + c = %.9g, only %s above v: not more than half the spacing, so it rounds back to\n"
	              "v. v stops at %s after %zu steps (stall_value = %s, steps = %zu).\n",
	   g(stall), f->name, g(sp), g(sp / 2), (double)sum, g((double)sum - stall), g(stall), steps, g(stall), steps);
	strbuf_printf(&c->w, "\nAdam divides by sqrt(v): sqrt(%s) = %s instead of 1, so its steps come out %s times too large.\n"
	              "Keeping v in fp32 (or rounding stochastically) lets it reach 1.\n",
	   g(stall), g(sqrt(stall)), g(1 / sqrt(stall)));
	return true;
}

/* ---- kind: round-steps (the hand-rounding lab) ------------------------------ */

/* The format a step field names ("fp16_guard", "e4m3_exponent") and its step. */
static bool step_field(const char *field, fmt_id *id, const char **step)
{
	static const char *const steps[] = { "_exponent", "_exp_field", "_fraction", "_guard", "_round", "_sticky",
		                             "_round_up", "_bits" };
	for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
		size_t fl = strlen(field), sl = strlen(steps[k]);
		if (fl > sl && strcmp(field + fl - sl, steps[k]) == 0) {
			char name[EX_NAME_MAX];
			snprintf(name, sizeof name, "%.*s", (int)(fl - sl), field);
			const fmt_info *f = fmt_find(name);
			if (f) {
				*id = f->id;
				*step = steps[k] + 1;
				return true;
			}
		}
	}
	return false;
}

/* Rounding V by hand one step at a time: the exponent e with 2^e <= |V| <
 * 2^(e+1), the exponent field, the guard, round and sticky bits after the kept
 * fraction bits, the decision (round away from zero: yes/no) and the
 * pattern, each a field of its own so that each step can be checked. */
static bool solve_round_steps(solve_ctx *c)
{
	fmt_num x;
	fmt_num_init(&x);
	if (!param_exact(c, "V", &x)) {
		fmt_num_clear(&x);
		return false;
	}
	double d = fmt_num_to_double(&x);
	if (!isfinite(d) || d == 0) {
		fmt_num_clear(&x);
		return fail(c, "parameter V must be finite and not zero");
	}
	bool done[FMT_COUNT] = { false }, ok = true;
	strbuf_printf(&c->w, "Rounding V = %s to nearest, ties to even (RNE), step by step.\n\n", ex_variant_get(c->ex, c->v, "V"));
	for (size_t i = 0; i < c->ex->nfields && ok; i++) {
		fmt_id id;
		const char *step;
		if (!step_field(c->ex->fields[i].name, &id, &step) || done[id])
			continue;
		done[id] = true;
		const fmt_info *f = fmt_get(id);
		round_steps rs;
		uint32_t bits = explain_round(c, f, &x, &ok, &rs);
		strbuf_printf(&c->w, "\n");
		if (!ok)
			break;
		if (rs.overflow) {
			fmt_num_clear(&x);
			return fail(c, "V = %s overflows %s: choose a value in its range", ex_variant_get(c->ex, c->v, "V"),
			            f->name);
		}
		/* every field of this format, under its full name and the fp8 short ones */
		const char *prefixes[2] = { f->name, id == FMT_E4M3 ? "e4m3" : id == FMT_E5M2 ? "e5m2" : NULL };
		for (int pi = 0; pi < 2; pi++) {
			if (!prefixes[pi])
				continue;
			char n[EX_NAME_MAX + 16];
			field_name(n, sizeof n, prefixes[pi], "_exponent");
			set_num(c, n, rs.subnormal ? fmt_emin(f) : rs.e);
			if (!rs.subnormal)
				mistake_num(c, n, rs.e + f->bias, "That is the biased exponent field; the exponent is e itself.");
			field_name(n, sizeof n, prefixes[pi], "_exp_field");
			set_num(c, n, rs.exp_field);
			if (!rs.subnormal)
				mistake_num(c, n, rs.e, "That is e; the field stores e + bias.");
			field_name(n, sizeof n, prefixes[pi], "_fraction");
			set_field_bits(c, n, f->frac_bits, rs.fraction);
			{
				/* the fraction after rounding: a step too far */
				uint32_t after = bits & fmt_frac_mask(f);
				int k = fidx(c, n);
				if (k >= 0 && after != rs.fraction && c->sol->nmistakes < EX_MAX_MISTAKES) {
					ex_mistake *m = mistake(c, n, "Those are the fraction bits after rounding; this step asks for "
					                              "the %d bits kept before the decision.",
					                        f->frac_bits);
					if (m) {
						m->value.type = EX_BITS;
						m->value.bits = after;
					}
				}
			}
			field_name(n, sizeof n, prefixes[pi], "_guard");
			set_choice(c, n, rs.guard ? "1" : "0");
			mistake_choice(c, n, rs.guard ? "0" : "1",
			               "The guard bit is the first bit after the %d kept fraction bits: write V / 2^e in "
			               "binary to %d places after the point and read place %d (place %d when the bit "
			               "before the point is counted).",
			               f->frac_bits, f->frac_bits + 1, f->frac_bits + 1, f->frac_bits + 2);
			field_name(n, sizeof n, prefixes[pi], "_round");
			set_choice(c, n, rs.round ? "1" : "0");
			mistake_choice(c, n, rs.round ? "0" : "1",
			               "The round bit is the one right after the guard bit: place %d after the binary point "
			               "of V / 2^e.",
			               f->frac_bits + 2);
			field_name(n, sizeof n, prefixes[pi], "_sticky");
			set_choice(c, n, rs.sticky ? "1" : "0");
			mistake_choice(c, n, rs.sticky ? "0" : "1",
			               rs.sticky ? "Sticky is 1 when any bit after the round bit is 1, however far down: "
			                           "the remainder after the round bit is not zero here."
			                         : "Sticky is 0 when every bit after the round bit is 0: here the remainder "
			                           "after the round bit is exactly zero.");
			field_name(n, sizeof n, prefixes[pi], "_round_up");
			set_choice(c, n, rs.up ? "yes" : "no");
			if (rs.guard && !rs.round && !rs.sticky) {
				ex_mistake *m = mistake(c, n, "A tie (guard 1, nothing after it) goes to the even neighbour: "
				                              "look at the last kept bit.");
				if (m) {
					m->value.type = EX_CHOICE;
					snprintf(m->value.choice, sizeof m->value.choice, "%s", rs.up ? "no" : "yes");
				}
			}
			mistake_choice(c, n, rs.up ? "no" : "yes",
			               "Apply the rule to your guard, round and sticky bits: round up exactly when guard is "
			               "1 and round or sticky is 1 (more than half an ulp), or on a tie (guard 1, the rest 0) "
			               "when the last kept bit is 1; otherwise keep the bits (round down).");
			field_name(n, sizeof n, prefixes[pi], "_bits");
			set_bits(c, n, f, bits);
			{
				/* the other neighbour: the truncated pattern one ulp up or down */
				bool exact = !rs.guard && !rs.round && !rs.sticky;
				uint32_t other = rs.up ? bits - 1 : bits + 1;
				double ov = fmt_to_double(f, other);
				if (!exact && !rs.zero && isfinite(ov)) {
					ex_mistake *m = mistake(c, n,
					                        "0x%0*x (%s) is the other neighbour of V, what rounding %s gives: "
					                        "check the decision against the guard, round and sticky bits.",
					                        fmt_hex_digits(f), (unsigned)other, g(ov), rs.up ? "down" : "up");
					if (m) {
						m->value.type = EX_BITS;
						m->value.bits = other;
					}
				}
			}
		}
	}
	fmt_num_clear(&x);
	return ok;
}

/* ---- the table ----------------------------------------------------------------- */

typedef bool (*kind_fn)(solve_ctx *c);

static const struct {
	ex_kind k;
	kind_fn fn;
} kinds[] = {
	{ { "underflow", "smallest normal and subnormal values; which formats flush a small gradient", "G",
	    "*_min_normal *_min_subnormal *_flushes", NULL },
	  solve_underflow },
	{ { "loss-scale", "scaling the loss by S scales every gradient by S", "S g",
	    "dscaled_dloss factor unscale scaled_grad unscaled_flushes scaled_flushes", NULL },
	  solve_loss_scale },
	{ { "memory", "training memory per parameter in bf16 mixed precision with Adam", "P",
	    "bytes_per_param total_gb total_gib rule_gb", NULL },
	  solve_memory },
	{ { "zero", "per-GPU training memory under ZeRO stage S on G GPUs", "P gpus stage",
	    "gpu_gb total_gb gpu_bytes_per_param", NULL },
	  solve_zero },
	{ { "hand-round", "round a value by hand: bits, value and relative error per format", "V",
	    "*_bits *_value *_rel_error best worst", NULL },
	  solve_hand_round },
	{ { "spacing", "the spacing of a format's grid at a value, and the largest update that vanishes", "x",
	    "spacing vanish_below exponent", NULL },
	  solve_spacing },
	{ { "update-vanish", "why bf16 weights need fp32 master copies: vanishing updates and error growth", "w",
	    "spacing vanish_below steps", NULL },
	  solve_update_vanish },
	{ { "overflow", "a format's largest value and where overflow starts", "",
	    "max overflow_at min_normal min_subnormal epsilon max_spacing", NULL },
	  solve_overflow },
	{ { "scale-choice", "choosing a loss scale: the powers of two that keep a gradient range in fp16",
	    "gmax gmin", "max_scale min_scale fits", NULL },
	  solve_scale_choice },
	{ { "lost-updates", "repeated small updates to a low-precision value: how many are lost", "x0 u n",
	    "lost kept final", NULL },
	  solve_lost_updates },
	{ { "drift-retained", "the share of the drift each variant of mixprec drift keeps", "x0 u T",
	    "retained_fp32 retained_rne retained_kahan retained_fp16 retained_sr", NULL },
	  solve_drift_retained },
	{ { "ema-stall", "Adam's second moment v stored in a 16-bit format: where it stops growing", "beta2",
	    "stall_value steps", NULL },
	  solve_ema_stall },
	{ { "round-steps", "round a value by hand one step at a time: exponent, guard/round/sticky, decision, bits",
	    "V", "*_exponent *_exp_field *_fraction *_guard *_round *_sticky *_round_up *_bits", NULL },
	  solve_round_steps },
};

#define NKINDS (sizeof kinds / sizeof kinds[0])

const ex_kind *ex_kind_find(const char *name)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (strcmp(kinds[i].k.name, name) == 0)
			return &kinds[i].k;
	return NULL;
}

const ex_kind *ex_kind_at(size_t i)
{
	return i < NKINDS ? &kinds[i].k : NULL;
}

/* Whether every '|'-separated word of answer is one of f's choices (format
 * names compared by their canonical names). */
static bool choice_declared(const ex_field *f, const char *answer)
{
	char buf[EX_NAME_MAX];
	snprintf(buf, sizeof buf, "%s", answer);
	char *save = NULL;
	for (char *w = strtok_r(buf, "|", &save); w; w = strtok_r(NULL, "|", &save)) {
		bool found = false;
		for (size_t k = 0; k < f->nchoices && !found; k++) {
			const fmt_info *fi = fmt_find(f->choices[k]);
			found = strcmp(fi ? fi->name : f->choices[k], w) == 0;
		}
		if (!found)
			return false;
	}
	return true;
}

mp_status ex_solve(const ex_exercise *ex, const ex_variant *v, ex_solution *sol, char *err, size_t errlen)
{
	memset(sol, 0, sizeof *sol);
	if (errlen)
		err[0] = '\0';
	size_t k = 0;
	while (k < NKINDS && &kinds[k].k != ex->kind)
		k++;
	if (k == NKINDS) {
		snprintf(err, errlen, "exercise %s has no kind", ex->id);
		return MP_EINVAL;
	}
	solve_ctx c = { .ex = ex, .v = v, .sol = sol, .err = err, .errlen = errlen };
	bool ok = kinds[k].fn(&c);
	if (ok && c.w.oom) {
		free(c.w.buf);
		return MP_ENOMEM;
	}
	if (ok) {
		for (size_t i = 0; i < ex->nfields; i++) {
			const ex_value *e = &sol->expect[i];
			if (!e->text[0]) {
				snprintf(err, errlen, "field %s: kind %s cannot answer it", ex->fields[i].name, ex->kind->name);
				ok = false;
			} else if ((e->type == EX_NUMBER) != (ex->fields[i].type == EX_NUMBER) ||
			           (e->type == EX_BITS) != (ex->fields[i].type == EX_BITS)) {
				snprintf(err, errlen, "field %s: kind %s answers it as %s", ex->fields[i].name, ex->kind->name,
				         e->type == EX_NUMBER ? "a number" : e->type == EX_BITS ? "bits" : "a choice");
				ok = false;
			} else if (e->type == EX_BITS && ex->fields[i].width && strspn(e->text, "01") != strlen(e->text)) {
				snprintf(err, errlen, "field %s holds a format's bits: declare it as 'bits FORMAT'", ex->fields[i].name);
				ok = false;
			} else if (e->type == EX_BITS && ex->fields[i].width && (int)strlen(e->text) != ex->fields[i].width) {
				snprintf(err, errlen, "field %s holds %zu bits: declare it as 'bits %zu'", ex->fields[i].name,
				         strlen(e->text), strlen(e->text));
				ok = false;
			} else if (e->type == EX_BITS && !ex->fields[i].width && strncmp(e->text, "0x", 2) != 0) {
				snprintf(err, errlen, "field %s holds %zu bits: declare it as 'bits %zu'", ex->fields[i].name,
				         strlen(e->text), strlen(e->text));
				ok = false;
			} else if (e->type == EX_BITS) {
				fmt_id id;
				if (field_format(ex->fields[i].name, &id) && id != ex->fields[i].format) {
					snprintf(err, errlen, "field %s holds %s bits: declare it as 'bits %s'",
					         ex->fields[i].name, fmt_get(id)->name, fmt_get(id)->name);
					ok = false;
				}
			} else if (e->type == EX_CHOICE && !choice_declared(&ex->fields[i], e->choice)) {
				snprintf(err, errlen, "field %s: the answer '%s' is not among its choices", ex->fields[i].name,
				         e->choice);
				ok = false;
			}
		}
	}
	if (!ok) {
		free(c.w.buf);
		sol->worked = NULL;
		if (!err[0])
			snprintf(err, errlen, "cannot solve %s", ex->id);
		return MP_EINVAL;
	}
	sol->worked = c.w.buf ? c.w.buf : strdup("");
	return sol->worked ? MP_OK : MP_ENOMEM;
}
