/* Exercise kind about accumulation precision (fp8.3): K equal products
 * summed one at a time by an accumulator that keeps N significant bits and
 * truncates, as train/accum.c models a tensor core (one product per block,
 * so the sum can be followed by hand). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "train/accum.h"
#include "util/strbuf.h"

enum { K_MAX = 1 << 20, PHASES_SHOWN = 14 };

/* Every digit of a sum (they are short binary fractions: 2048.625, not
 * 2048.62). */
static const char *full(double x)
{
	char *b = exs_ring();
	snprintf(b, 32, "%.12g", x);
	return b;
}

/* The truncating accumulator's sum of K products p with bits N; *exact_steps
 * (may be NULL) the number of products added before the first lost bit (K
 * when none is lost). */
static double truncated_sum(size_t K, int N, float p, size_t *exact_steps)
{
	const float one = 1.0f;
	float acc = 0.0f;
	size_t first = K;
	for (size_t k = 0; k < K; k++) {
		float next = accum_block_add(acc, &p, 1, &one, 1, 1, N);
		if (first == K && (double)next != (double)acc + (double)p)
			first = k;
		acc = next;
	}
	if (exact_steps)
		*exact_steps = first;
	return acc;
}

/* The same sum rounded to nearest (ties to even) to N bits after each add:
 * the mistake of assuming IEEE-style rounding. */
static double nearest_sum(size_t K, int N, double p)
{
	double acc = 0.0;
	for (size_t k = 0; k < K; k++) {
		double v = acc + p;
		int shift = ilogb(v) - N + 1;
		acc = ldexp(nearbyint(ldexp(v, -shift)), shift);
	}
	return acc;
}

/* A run of adds under one cut. */
typedef struct {
	size_t first, last;   /* 1-based product numbers */
	double cut;
	float from, to;       /* the sum before the first add and after the last */
} accum_phase;

/* One line of the worked solution's table; a run with no lost bit gets a
 * short line. */
static void print_phase(solve_ctx *c, const accum_phase *ph, float p, size_t exact_steps)
{
	if (ph->last <= exact_steps) {
		strbuf_printf(&c->w, "  products %zu..%zu: every bit kept (the cut is at or below p's last bit); "
		              "sum -> %s\n", ph->first, ph->last, full((double)ph->to));
		return;
	}
	double kept = floor((double)p / ph->cut) * ph->cut, entry = floor((double)ph->from / ph->cut) * ph->cut;
	strbuf_printf(&c->w, "  products %zu..%zu: cut %s, each p keeps %s%s; sum %s -> %s\n", ph->first, ph->last,
	              exs_pow2_text(ph->cut), exs_g(kept), kept < p ? " (truncated)" : "", full((double)ph->from),
	              full((double)ph->to));
	if (entry < ph->from)
		strbuf_printf(&c->w, "    (the first add also cuts the sum %s itself to %s)\n", full((double)ph->from),
		              full(entry));
}

/* The worked solution's table: the adds grouped by the cut 2^(E-N+1), E
 * the exponent of the larger of the sum and p before each add; the adds
 * before the first lost bit in one run. */
static void explain_phases(solve_ctx *c, size_t K, int N, float p, size_t exact_steps)
{
	const float one = 1.0f;
	float acc = 0.0f;
	accum_phase ph = { 0 };
	size_t shown = 0;
	for (size_t k = 0; k < K; k++) {
		double cut = ldexp(1.0, ilogb(fmax((double)acc, (double)p)) - N + 1);
		if (k == 0 || k == exact_steps || (k > exact_steps && cut != ph.cut)) {
			if (k > 0 && shown++ < PHASES_SHOWN)
				print_phase(c, &ph, p, exact_steps);
			ph = (accum_phase){ .first = k + 1, .cut = cut, .from = acc };
		}
		acc = accum_block_add(acc, &p, 1, &one, 1, 1, N);
		ph.last = k + 1;
		ph.to = acc;
	}
	if (shown < PHASES_SHOWN)
		print_phase(c, &ph, p, exact_steps);
	else
		strbuf_printf(&c->w, "  (and so on to product %zu: sum %s)\n", K, full((double)acc));
}

bool exs_solve_accum_error(solve_ctx *c)
{
	double Kd, Nd, pd;
	if (!exs_param_positive(c, "K", &Kd) || !exs_param_positive(c, "N", &Nd) || !exs_param_positive(c, "p", &pd))
		return false;
	if (Kd != floor(Kd) || Kd > K_MAX)
		return exs_fail(c, "parameter K must be a whole number of products, 1..%d", K_MAX);
	if (Nd != floor(Nd) || Nd < ACCUM_BITS_MIN + 1 || Nd >= ACCUM_BITS_FP32)
		return exs_fail(c, "parameter N must be a whole number of bits, %d..%d", ACCUM_BITS_MIN + 1,
		                ACCUM_BITS_FP32 - 1);
	float p = (float)pd;
	if ((double)p != pd || !isfinite(pd))
		return exs_fail(c, "parameter p must be a float value (got %s)", exs_g(pd));
	size_t K = (size_t)Kd, steps;
	int N = (int)Nd;
	double exact = Kd * pd, result = truncated_sum(K, N, p, &steps);
	double rel = fabs(exact - result) / exact;
	exs_set_num(c, "exact", exact);
	exs_set_num(c, "result", result);
	exs_set_num(c, "rel_error", rel);
	exs_set_num(c, "exact_steps", (double)steps);

	exs_mistake_num(c, "result", exact, "%s is the exact sum K x p: the accumulator keeps only %d bits, and "
	                "every bit of a product below the cut is dropped.", exs_g(exact), N);
	double rn = nearest_sum(K, N, pd);
	exs_mistake_num(c, "result", rn, "%s is what rounding to nearest gives; the tensor core truncates the "
	                "aligned bits (toward zero), so every cut loses, never gains.", exs_g(rn));
	double fewer = truncated_sum(K, N - 1, p, NULL), more = truncated_sum(K, N + 1, p, NULL);
	exs_mistake_num(c, "result", fewer, "That is the sum with %d bits: the %d significant bits include the "
	                "leading one, so the cut is 2^(E-%d), not 2^(E-%d).", N - 1, N, N - 1, N - 2);
	exs_mistake_num(c, "result", more, "That is the sum with %d bits: with %d significant bits (the leading one "
	                "included) the cut is 2^(E-%d), not 2^(E-%d).", N + 1, N, N - 1, N);
	exs_mistake_num(c, "rel_error", exact - result, "%s is the absolute error; divide it by the exact sum %s.",
	                exs_g(exact - result), exs_g(exact));
	exs_mistake_num(c, "rel_error", 100 * rel, "That is the relative error in percent; give it as a fraction "
	                "(%s), or write the %% sign.", exs_g(rel));
	exs_mistake_num(c, "rel_error", fabs(exact - result) / result, "That divides by the accumulated result; the "
	                "relative error is taken against the exact sum %s.", exs_g(exact));
	exs_mistake_num(c, "rel_error", fabs(exact - rn) / exact, "That is the error of rounding to nearest; the "
	                "accumulator truncates, which loses about twice as much.");
	exs_mistake_num(c, "exact_steps", (double)steps + 1, "Product %zu is the first that loses bits; the "
	                "question asks how many are added exactly before it.", steps + 1);

	strbuf_printf(&c->w, "Before each add the accumulator S and the product p = %s are aligned to the larger\n"
	              "exponent E (2^E <= max(S, p) < 2^(E+1)); with N = %d significant bits everything below the cut\n"
	              "2^(E-%d) is dropped (truncation toward zero), then the kept parts add exactly.\n\n",
	              exs_g(pd), N, N - 1);
	explain_phases(c, K, N, p, steps);
	strbuf_printf(&c->w, "\nThe first %zu products add exactly; the sum ends at %s against the exact K x p =\n"
	              "%zu x %s = %s. Relative error: (%s - %s) / %s = %s (%.3g%%).\n"
	              "With promotion to fp32 every 128 products (DeepSeek-V3) each partial sum stays small, so\n"
	              "its cut stays below p's last bit for longer: compare mixprec accum --bits %d.\n",
	              steps, full(result), K, exs_g(pd), full(exact), full(exact), full(result), full(exact),
	              exs_g(rel), 100 * rel, N);
	return true;
}
