/* Exercise kinds about rounding by hand: a value into several formats with
 * its relative errors (7.4d, fp8.0), and one step at a time (the
 * hand-rounding lab). The steps are derived with exact rationals (GMP) and
 * cross-checked against fmt/'s rounding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "util/numtext.h"
#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "util/strbuf.h"

/* ---- kind: hand-round (7.4d, fp8) ------------------------------------------ */

/* The low width bits of v, most significant first (from the ring). */
static const char *binary(int v, int width)
{
	char *buf = exs_ring();
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

/* e with 2^e <= mag < 2^(e+1) exactly, starting from the binary64 guess
 * (which can be off by one next to a power of two). */
static int exact_exponent(const mpq_t mag, int e)
{
	mpq_t p2;
	mpq_init(p2);
	for (;;) {
		mpq_set_ui(p2, 1, 1);
		if (e >= 0)
			mpz_mul_2exp(mpq_numref(p2), mpq_numref(p2), (mp_bitcnt_t)e);
		else
			mpz_mul_2exp(mpq_denref(p2), mpq_denref(p2), (mp_bitcnt_t)-e);
		if (mpq_cmp(mag, p2) < 0) {
			e--;
			continue;
		}
		mpz_mul_2exp(mpq_numref(p2), mpq_numref(p2), 1);
		mpq_canonicalize(p2);
		if (mpq_cmp(mag, p2) >= 0) {
			e++;
			continue;
		}
		break;
	}
	mpq_clear(p2);
	return e;
}

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
	int e = exact_exponent(x->mag, exs_floor_log2(d));
	mpq_t q;
	mpq_init(q);
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
	exs_short_text(dec, sizeof dec, d);
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
		mpq_clear(q);
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
		exs_fail(c, "internal error: hand rounding of %s to %s disagrees with the engine", dec, f->name);
	}
	fmt_decoded dd;
	fmt_decode(f, bits, &dd);
	char val[64];
	exs_short_text(val, sizeof val, dd.value);
	strbuf_printf(&c->w, "  result: sign %d, exponent field %u, fraction field 0x%x = 0x%0*x = %s\n", dd.neg, dd.exp_field,
	   dd.frac_field, fmt_hex_digits(f), (unsigned)bits, val);
	mpz_clears(sig, rem, NULL);
	mpq_clear(q);
	return bits;
}

/* The fields of one format (bits, value, relative error) and the mistakes a
 * student can make on them. */
static void hand_round_fields(solve_ctx *c, const fmt_info *f, const fmt_num *x, uint32_t bits, double value,
                              double abs_err, double rel)
{
	fmt_id id = f->id;
	const char *prefixes[2] = { f->name, id == FMT_E4M3 ? "e4m3" : id == FMT_E5M2 ? "e5m2" : NULL };
	for (int pi = 0; pi < 2; pi++) {
		if (!prefixes[pi])
			continue;
		char fb[EX_NAME_MAX + 8], fv[EX_NAME_MAX + 8], fr[EX_NAME_MAX + 12];
		exs_field_name(fb, sizeof fb, prefixes[pi], "_bits");
		exs_field_name(fv, sizeof fv, prefixes[pi], "_value");
		exs_field_name(fr, sizeof fr, prefixes[pi], "_rel_error");
		exs_set_bits(c, fb, f, bits);
		exs_set_num(c, fv, value);
		exs_set_num(c, fr, rel);
		/* the bound mistaken for the error: u = 2^-p, and epsilon = 2u */
		int p = fmt_precision(f);
		if (!exs_number_close(c, fr, ldexp(1, -p)))
			exs_mistake_num(c, fr, ldexp(1, -p),
			            "%s = 2^-%d is the unit roundoff of %s: the largest relative error round-to-nearest "
			            "can make, not the error for this V. Compute |rounded - V| / |V|.",
			            exs_g(ldexp(1, -p)), p, f->name);
		if (!exs_number_close(c, fr, ldexp(1, 1 - p)))
			exs_mistake_num(c, fr, ldexp(1, 1 - p),
			            "%s = 2^-%d is the epsilon of %s (the spacing at 1), a bound, not the error for "
			            "this V. Compute |rounded - V| / |V|.",
			            exs_g(ldexp(1, 1 - p)), p - 1, f->name);
		/* the other neighbour: what rounding the wrong way gives */
		/* (none when V is exact: no bits beyond the kept ones, no direction to get wrong) */
		uint32_t other;
		bool neg = x->neg;
		bool toward_zero_now = fabs(value) <= fabs(fmt_num_to_double(x));
		bool have = rel != 0 &&
		            ((toward_zero_now != neg) ? fmt_next_up(f, bits, &other) : fmt_next_down(f, bits, &other));
		if (have && isfinite(fmt_to_double(f, other))) {
			double ov = fmt_to_double(f, other), oabs, orel;
			fmt_error_of(x, ov, &oabs, &orel);
			ex_mistake *m = exs_mistake(c, fb,
			                        "0x%0*x (%s) is the other neighbour of V, what rounding the other way "
			                        "gives: the bits beyond the kept ones decide the direction (see the guard, "
			                        "round and sticky bits).",
			                        fmt_hex_digits(f), (unsigned)other, exs_g(ov));
			if (m) {
				m->value.type = EX_BITS;
				m->value.bits = other;
			}
			exs_mistake_num(c, fv, ov, "%s is the other neighbour of V, what rounding the other way gives; check "
			                       "the rounding direction.",
			            exs_g(ov));
			exs_mistake_num(c, fr, orel, "%s is the error of the other neighbour (%s), what rounding the other way "
			                         "gives; check the rounding direction.",
			            exs_g(orel), exs_g(ov));
		}
		exs_mistake_num(c, fr, abs_err, "%s is the absolute error |rounded - V|; divide it by |V|.", exs_g(abs_err));
		/* the pattern of another format of the same width */
		for (fmt_id o = 0; o < FMT_COUNT; o++) {
			const fmt_info *of = fmt_get(o);
			if (o == id || of->width != f->width || of->extra)
				continue;
			fmt_round_ctl octl = { .mode = FMT_RNE };
			unsigned ofl;
			uint32_t ob = fmt_round_num(of, &octl, x, &ofl);
			if (ob == bits || (ofl & FMT_FLAG_INVALID))   /* e8m0 holds no negative V, fp4 no NaN */
				continue;
			ex_mistake *wm = exs_mistake(c, fb,
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

/* best and worst: the formats with the smallest and the largest relative
 * error (joined by '|' when tied); false when a format is both. */
static bool hand_round_best_worst(solve_ctx *c, const bool *want, const double *rel, const char *vtext)
{
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
		if (want[id] && rel[id] == best && rel[id] == worst && exs_fidx(c, "best") >= 0 && exs_fidx(c, "worst") >= 0) {
			return exs_fail(c, "V = %s: every format keeps it equally well, so %s is both best and worst; "
			               "choose a value the formats round differently",
			            vtext, fmt_get(id)->name);
		}
	exs_set_choice(c, "best", bs);
	exs_set_choice(c, "worst", ws);
	strbuf_printf(&c->w, "Smallest relative error: %s. Largest: %s.\n", bs, ws);
	ex_mistake *m = exs_mistake(c, "best", "Compare the relative errors, not the number of bits stored.");
	if (m) {
		m->value.type = EX_CHOICE;
		snprintf(m->value.choice, sizeof m->value.choice, "%s", ws);
	}
	m = exs_mistake(c, "worst", "That format has the smallest error here; compare the relative errors.");
	if (m) {
		m->value.type = EX_CHOICE;
		snprintf(m->value.choice, sizeof m->value.choice, "%s", bs);
	}
	return true;
}

bool exs_solve_hand_round(solve_ctx *c)
{
	fmt_num x;
	fmt_num_init(&x);
	if (!exs_param_exact(c, "V", &x)) {
		fmt_num_clear(&x);
		return false;
	}
	if (!isfinite(fmt_num_to_double(&x)) || (mpq_sgn(x.mag) && fmt_num_to_double(&x) == 0)) {
		fmt_num_clear(&x);
		return exs_fail(c, "parameter V must lie within binary64's range");
	}
	if (mpq_sgn(x.mag) == 0) {
		/* -0 and 0: the relative error |rounded - V| / |V| is 0/0 */
		fmt_num_clear(&x);
		return exs_fail(c, "parameter V = %s is zero: its relative error is 0/0, undefined",
		            ex_variant_get(c->ex, c->v, "V"));
	}
	/* the formats named by fields; fp16, bf16, fp32 when none */
	bool want[FMT_COUNT] = { false };
	size_t nwant = 0;
	for (size_t i = 0; i < c->ex->nfields; i++) {
		fmt_id id;
		if (exs_field_format(c->ex->fields[i].name, &id) && !want[id]) {
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
			return exs_fail(c, "V = %s overflows %s (its relative error would be infinite): choose a value in its range",
			            vtext, f->name);
		}
		fmt_error_of(&x, value, &abs_err, &rel[id]);
		char rt[64], at[64];
		fmt_error_text(&x, value, 6, at, rt, sizeof rt);
		char vt[64];
		exs_short_text(vt, sizeof vt, value);
		strbuf_printf(&c->w, "  relative error: |%s - %s| / |%s| = %s\n\n", vt, vtext, vtext, rt);
		hand_round_fields(c, f, &x, bits, value, abs_err, rel[id]);
	}
	if (ok)
		ok = hand_round_best_worst(c, want, rel, vtext);
	fmt_num_clear(&x);
	return ok;
}

/* ---- kind: round-steps (the hand-rounding lab) ------------------------------ */

/* The format a step field names ("fp16_guard", "e4m3_exponent") and its step. */
static bool step_field(const char *field, fmt_id *id, const char **step)
{
	static const char *const steps[] = { "_exponent", "_exp_field", "_fraction", "_guard", "_round", "_sticky",
		                             "_round_up", "_bits" };
	int k = exs_format_suffix(field, steps, sizeof steps / sizeof steps[0], id);
	if (k < 0)
		return false;
	*step = steps[k] + 1;
	return true;
}

/* Rounding V by hand one step at a time: the exponent e with 2^e <= |V| <
 * 2^(e+1), the exponent field, the guard, round and sticky bits after the kept
 * fraction bits, the decision (round away from zero: yes/no) and the
 * pattern, each a field of its own so that each step can be checked. */
bool exs_solve_round_steps(solve_ctx *c)
{
	fmt_num x;
	fmt_num_init(&x);
	if (!exs_param_exact(c, "V", &x)) {
		fmt_num_clear(&x);
		return false;
	}
	double d = fmt_num_to_double(&x);
	if (!isfinite(d) || d == 0) {
		fmt_num_clear(&x);
		return exs_fail(c, "parameter V must be finite and not zero");
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
			return exs_fail(c, "V = %s overflows %s: choose a value in its range", ex_variant_get(c->ex, c->v, "V"),
			            f->name);
		}
		/* every field of this format, under its full name and the fp8 short ones */
		const char *prefixes[2] = { f->name, id == FMT_E4M3 ? "e4m3" : id == FMT_E5M2 ? "e5m2" : NULL };
		for (int pi = 0; pi < 2; pi++) {
			if (!prefixes[pi])
				continue;
			char n[EX_NAME_MAX + 16];
			exs_field_name(n, sizeof n, prefixes[pi], "_exponent");
			exs_set_num(c, n, rs.subnormal ? fmt_emin(f) : rs.e);
			if (!rs.subnormal)
				exs_mistake_num(c, n, rs.e + f->bias, "That is the biased exponent field; the exponent is e itself.");
			exs_field_name(n, sizeof n, prefixes[pi], "_exp_field");
			exs_set_num(c, n, rs.exp_field);
			if (!rs.subnormal)
				exs_mistake_num(c, n, rs.e, "That is e; the field stores e + bias.");
			exs_field_name(n, sizeof n, prefixes[pi], "_fraction");
			exs_set_field_bits(c, n, f->frac_bits, rs.fraction);
			{
				/* the fraction after rounding: a step too far */
				uint32_t after = bits & fmt_frac_mask(f);
				int k = exs_fidx(c, n);
				if (k >= 0 && after != rs.fraction && c->sol->nmistakes < EX_MAX_MISTAKES) {
					ex_mistake *m = exs_mistake(c, n, "Those are the fraction bits after rounding; this step asks for "
					                              "the %d bits kept before the decision.",
					                        f->frac_bits);
					if (m) {
						m->value.type = EX_BITS;
						m->value.bits = after;
					}
				}
			}
			exs_field_name(n, sizeof n, prefixes[pi], "_guard");
			exs_set_choice(c, n, rs.guard ? "1" : "0");
			exs_mistake_choice(c, n, rs.guard ? "0" : "1",
			               "The guard bit is the first bit after the %d kept fraction bits: write V / 2^e in "
			               "binary to %d places after the point and read place %d (place %d when the bit "
			               "before the point is counted).",
			               f->frac_bits, f->frac_bits + 1, f->frac_bits + 1, f->frac_bits + 2);
			exs_field_name(n, sizeof n, prefixes[pi], "_round");
			exs_set_choice(c, n, rs.round ? "1" : "0");
			exs_mistake_choice(c, n, rs.round ? "0" : "1",
			               "The round bit is the one right after the guard bit: place %d after the binary point "
			               "of V / 2^e.",
			               f->frac_bits + 2);
			exs_field_name(n, sizeof n, prefixes[pi], "_sticky");
			exs_set_choice(c, n, rs.sticky ? "1" : "0");
			exs_mistake_choice(c, n, rs.sticky ? "0" : "1",
			               rs.sticky ? "Sticky is 1 when any bit after the round bit is 1, however far down: "
			                           "the remainder after the round bit is not zero here."
			                         : "Sticky is 0 when every bit after the round bit is 0: here the remainder "
			                           "after the round bit is exactly zero.");
			exs_field_name(n, sizeof n, prefixes[pi], "_round_up");
			exs_set_choice(c, n, rs.up ? "yes" : "no");
			if (rs.guard && !rs.round && !rs.sticky) {
				ex_mistake *m = exs_mistake(c, n, "A tie (guard 1, nothing after it) goes to the even neighbour: "
				                              "look at the last kept bit.");
				if (m) {
					m->value.type = EX_CHOICE;
					snprintf(m->value.choice, sizeof m->value.choice, "%s", rs.up ? "no" : "yes");
				}
			}
			exs_mistake_choice(c, n, rs.up ? "no" : "yes",
			               "Apply the rule to your guard, round and sticky bits: round up exactly when guard is "
			               "1 and round or sticky is 1 (more than half an ulp), or on a tie (guard 1, the rest 0) "
			               "when the last kept bit is 1; otherwise keep the bits (round down).");
			exs_field_name(n, sizeof n, prefixes[pi], "_bits");
			exs_set_bits(c, n, f, bits);
			{
				/* the other neighbour: the truncated pattern one ulp up or down */
				bool exact = !rs.guard && !rs.round && !rs.sticky;
				uint32_t other = rs.up ? bits - 1 : bits + 1;
				double ov = fmt_to_double(f, other);
				if (!exact && !rs.zero && isfinite(ov)) {
					ex_mistake *m = exs_mistake(c, n,
					                        "0x%0*x (%s) is the other neighbour of V, what rounding %s gives: "
					                        "check the decision against the guard, round and sticky bits.",
					                        fmt_hex_digits(f), (unsigned)other, exs_g(ov), rs.up ? "down" : "up");
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

