/* Exercises keep their premise in every variant, checked over thousands of
 * (course seed, student) variants against oracles that share no code with
 * the exercise engine: gcc's _Float16 conversions, the bf16 round-to-nearest
 * bit trick on hardware floats, MPFR with subnormals, and values derived by
 * hand in the comments. */
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "ex_fixture.h"
#include "testutil.h"

#define NSEEDS 20
#define NSTUDENTS 100

/* Variant k of NSEEDS x NSTUDENTS: course seed "cS", student "sN". */
static void variant_k(const ex_exercise *ex, int k, ex_variant *v)
{
	char seed[16], student[16];
	snprintf(seed, sizeof seed, "c%d", k / NSTUDENTS);
	snprintf(student, sizeof student, "s%d", k % NSTUDENTS);
	ex_variant_make(ex, seed, student, v);
}

static double param_d(const ex_exercise *ex, const ex_variant *v, const char *name)
{
	const char *t = ex_variant_get(ex, v, name);
	ck_assert_msg(t != NULL, "%s has no parameter %s", ex->id, name);
	return strtod(t, NULL);
}

static void solve(const ex_exercise *ex, const ex_variant *v, ex_solution *sol)
{
	char err[256];
	ck_assert_msg(ex_solve(ex, v, sol, err, sizeof err) == MP_OK, "%s: %s", ex->id, err);
}

/* ---- oracles ------------------------------------------------------------------ */

/* x rounded to nearest even into bf16 (finite x): add 0x7fff plus the lowest
 * kept bit, drop the low 16 bits. */
static float bf16_round(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	u += 0x7fffu + ((u >> 16) & 1u);
	u &= 0xffff0000u;
	memcpy(&x, &u, 4);
	return x;
}

static bool fp16_flushes(double x)
{
	return (float)(_Float16)x == 0;
}

static bool bf16_flushes(double x)
{
	return bf16_round((float)x) == 0;
}

/* ---- 7.4a: the fields ask "does G flush", and the fp16 answer differs ------------ */

START_TEST(underflow_premise)
{
	const ex_exercise *ex = get("7.4a");
	size_t yes16 = 0, no16 = 0;
	for (int k = 0; k < NSEEDS * NSTUDENTS; k++) {
		ex_variant v;
		variant_k(ex, k, &v);
		double G = param_d(ex, &v, "G");
		ck_assert_msg(!bf16_flushes(G), "G = %g flushes in bf16", G);
		/* a field named _flushes asks whether G flushes, in every variant */
		ck_assert(ex_variant_get(ex, &v, "q") == NULL);
		ex_solution s;
		solve(ex, &v, &s);
		ck_assert_str_eq(expect(ex, &s, "fp16_flushes")->choice, fp16_flushes(G) ? "yes" : "no");
		ck_assert(expect(ex, &s, "bf16_stored")->number == (double)bf16_round((float)G));
		/* a G that fp16 keeps is held as a subnormal of at most two bits */
		if (!fp16_flushes(G))
			ck_assert_msg(G < ldexp(1, -23), "G = %g", G);
		yes16 += fp16_flushes(G);
		no16 += !fp16_flushes(G);
		ex_solution_free(&s);
	}
	/* the yes/no answers differ between students */
	ck_assert_uint_gt(yes16, NSEEDS * NSTUDENTS / 4);
	ck_assert_uint_gt(no16, NSEEDS * NSTUDENTS / 4);
}
END_TEST

/* ---- 7.4b: both yes/no answers vary; subnormal results are called so ------------ */

START_TEST(loss_scale_premise)
{
	const ex_exercise *ex = get("7.4b");
	size_t count[2][2] = { { 0 } };
	for (int k = 0; k < NSEEDS * NSTUDENTS; k++) {
		ex_variant v;
		variant_k(ex, k, &v);
		double S = param_d(ex, &v, "S"), gr = param_d(ex, &v, "g");
		bool fu = fp16_flushes(gr), fs = fp16_flushes(gr * S);   /* S is a power of two: g x S is exact */
		ex_solution s;
		solve(ex, &v, &s);
		ck_assert_str_eq(expect(ex, &s, "unscaled_flushes")->choice, fu ? "yes" : "no");
		ck_assert_str_eq(expect(ex, &s, "scaled_flushes")->choice, fs ? "yes" : "no");
		count[0][fu]++;
		count[1][fs]++;
		/* a scaled gradient below 2^-14 is a subnormal, never "held" as if normal */
		if (!fs && gr * S < ldexp(1, -14))
			ck_assert_msg(strstr(s.worked, "subnormal") != NULL, "S=%g g=%g: %s", S, gr, s.worked);
		ck_assert(strstr(s.worked, "can hold") == NULL);
		ex_solution_free(&s);
	}
	for (int f = 0; f < 2; f++)
		ck_assert_msg(count[f][0] > 50 && count[f][1] > 50, "field %d: %zu no, %zu yes", f, count[f][0],
		              count[f][1]);
	/* S = 256, g = 1e-9: 2.56e-7 = 4.29 x 2^-24 rounds to 4 x 2^-24 = 2.384185791e-7,
	 * 3 significant bits (100 in binary), error (2.56e-7 - 2.384185791e-7) / 2.56e-7 = 6.87% */
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	snprintf(v.values[0], sizeof v.values[0], "256");
	snprintf(v.values[1], sizeof v.values[1], "1e-9");
	ex_solution s;
	solve(ex, &v, &s);
	ck_assert_msg(strstr(s.worked, "subnormal, 2.38419e-07, with 3 significant") != NULL, "%s", s.worked);
	ck_assert_msg(strstr(s.worked, "relative error 0.0686") != NULL, "%s", s.worked);
	ex_solution_free(&s);
}
END_TEST

/* ---- 7.4d: best and worst differ across variants (MPFR) ------------------------ */

/* Decimal text rounded to nearest even into precision p with smallest normal
 * 2^emin, subnormals included; +-inf past emax. */
static void mpfr_round_fmt(mpfr_t out, const char *text, int p, int emin, int emax)
{
	mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
	mpfr_set_emin(emin - p + 2);
	mpfr_set_emax(emax + 1);
	mpfr_t x;
	mpfr_init2(x, p);
	int t = mpfr_strtofr(x, text, NULL, 10, MPFR_RNDN);
	mpfr_subnormalize(x, t, MPFR_RNDN);
	mpfr_set_emin(old_min);
	mpfr_set_emax(old_max);
	mpfr_set(out, x, MPFR_RNDN);
	mpfr_clear(x);
}

/* |round(V) - V| / |V| in 300 bits. */
static double rel_error(const char *text, int p, int emin, int emax)
{
	mpfr_t v, r;
	mpfr_inits2(300, v, r, (mpfr_ptr)0);
	mpfr_set_str(v, text, 10, MPFR_RNDN);
	mpfr_round_fmt(r, text, p, emin, emax);
	mpfr_sub(r, r, v, MPFR_RNDN);
	mpfr_div(r, r, v, MPFR_RNDN);
	mpfr_abs(r, r, MPFR_RNDN);
	double d = mpfr_get_d(r, MPFR_RNDN);
	mpfr_clears(v, r, (mpfr_ptr)0);
	return d;
}

START_TEST(hand_round_premise)
{
	const ex_exercise *ex = get("7.4d");
	static const struct {
		int p, emin, emax;
	} f[3] = { { 11, -14, 15 }, { 8, -126, 127 }, { 24, -126, 127 } };   /* fp16, bf16, fp32 */
	unsigned best_sets = 0, worst_sets = 0;   /* bit masks of the sets seen, as bits of a 8-bit set */
	size_t outside = 0;
	for (int k = 0; k < NSEEDS * NSTUDENTS; k += 7) {
		ex_variant v;
		variant_k(ex, k, &v);
		const char *V = ex_variant_get(ex, &v, "V");
		double vd = strtod(V, NULL);
		ck_assert_msg(vd != 0, "V = %s is zero", V);
		ck_assert_msg(fabs(vd) <= 65504, "V = %s overflows fp16", V);
		outside += fabs(vd) < ldexp(1, -14);
		double rel[3];
		for (int j = 0; j < 3; j++)
			rel[j] = rel_error(V, f[j].p, f[j].emin, f[j].emax);
		double lo = fmin(rel[0], fmin(rel[1], rel[2])), hi = fmax(rel[0], fmax(rel[1], rel[2]));
		ck_assert_msg(lo < hi, "V = %s: a format is both best and worst", V);
		unsigned bs = 0, ws = 0;
		for (int j = 0; j < 3; j++) {
			bs |= (rel[j] == lo) << j;
			ws |= (rel[j] == hi) << j;
		}
		best_sets |= 1u << bs;
		worst_sets |= 1u << ws;
	}
	ck_assert_uint_gt(outside, 0);
	ck_assert_msg(__builtin_popcount(best_sets) >= 2, "best is always the same: %#x", best_sets);
	ck_assert_msg(__builtin_popcount(worst_sets) >= 2, "worst is always the same: %#x", worst_sets);
	/* fp16 itself is the worst for some students (its subnormals), bf16 for others */
	ck_assert(worst_sets & (1u << 1));
	ck_assert(worst_sets & (1u << 2));
}
END_TEST

/* ---- 7.4e: realistic weights ---------------------------------------------------- */

START_TEST(weights_premise)
{
	const ex_exercise *ex = get("7.4e");
	double lo = INFINITY, hi = 0;
	for (int k = 0; k < NSEEDS * NSTUDENTS; k++) {
		ex_variant v;
		variant_k(ex, k, &v);
		double w = param_d(ex, &v, "w");
		ck_assert_msg(w >= 1e-3 && w <= 10, "w = %g", w);
		ck_assert_msg(bf16_round((float)w) == (float)w, "w = %g is not a bf16 value", w);
		/* the worked solution argues from stagnation (lesson fp32-state) and names the
		 * random walk as the argument that fails */
		ex_solution s;
		solve(ex, &v, &s);
		ck_assert_msg(strstr(s.worked, "stagnation") != NULL, "%s", s.worked);
		ck_assert_msg(strstr(s.worked, "assumes independent errors") != NULL, "%s", s.worked);
		ck_assert(strstr(s.worked, "far fewer than a training run") == NULL);
		ex_solution_free(&s);
		lo = fmin(lo, w);
		hi = fmax(hi, w);
	}
	/* log-uniform over four decades: both ends are reached */
	ck_assert(lo < 3e-3 && hi > 3);
}
END_TEST

/* ---- drift.3: every variant loses some updates and keeps some -------------------- */

START_TEST(lost_updates_premise)
{
	const ex_exercise *ex = get("drift.3");
	for (int k = 0; k < NSEEDS * NSTUDENTS; k += 3) {
		ex_variant v;
		variant_k(ex, k, &v);
		float x = bf16_round((float)param_d(ex, &v, "x0"));
		float u = (float)param_d(ex, &v, "u");
		int n = (int)param_d(ex, &v, "n"), lost = 0;
		for (int i = 0; i < n; i++) {
			float nx = bf16_round(x + u);   /* x + u is exact in fp32 at these sizes */
			lost += nx == x;
			x = nx;
		}
		ck_assert_msg(lost > 0 && lost < n, "x0=%s u=%s: %d of %d lost", ex_variant_get(ex, &v, "x0"),
		              ex_variant_get(ex, &v, "u"), lost, n);
		ex_solution s;
		solve(ex, &v, &s);
		ck_assert(expect(ex, &s, "lost")->number == lost);
		ck_assert(expect(ex, &s, "final")->number == x);
		ex_solution_free(&s);
	}
}
END_TEST

/* ---- yes/no fields never constant over the class ------------------------------ */

START_TEST(yes_no_answers_vary)
{
	for (size_t e = 0; e < shipped.count; e++) {
		const ex_exercise *ex = &shipped.items[e];
		for (size_t i = 0; i < ex->nfields; i++) {
			const ex_field *f = &ex->fields[i];
			if (f->type != EX_CHOICE || f->nchoices != 2 || strcmp(f->choices[0], "yes") || strcmp(f->choices[1], "no"))
				continue;
			size_t yes = 0, no = 0;
			for (int k = 0; k < NSEEDS * NSTUDENTS; k += 11) {
				ex_variant v;
				variant_k(ex, k, &v);
				ex_solution s;
				solve(ex, &v, &s);
				yes += !strcmp(s.expect[i].choice, "yes");
				no += !strcmp(s.expect[i].choice, "no");
				ex_solution_free(&s);
			}
			ck_assert_msg(yes > 0 && no > 0, "%s %s: always %s", ex->id, f->name, yes ? "yes" : "no");
		}
	}
}
END_TEST

/* ---- 7.4f: Adam's v in 16 bits -------------------------------------------------- */

/* The recurrence of the exercise on hardware floats: fl32 products and sums,
 * then _Float16 or the bf16 bit trick. */
static void ema_oracle(const char *beta2, bool fp16, float *stall, size_t *steps)
{
	float b = strtof(beta2, NULL);   /* correctly rounded decimal -> fp32 */
	volatile float one = 1.0f;
	float c = one - b;
	float v = 0;
	for (size_t k = 0;; k++) {
		volatile float bv = b * v;
		volatile float sum = bv + c;
		float nv = fp16 ? (float)(_Float16)sum : bf16_round(sum);
		if (nv == v) {
			*stall = v;
			*steps = k;
			return;
		}
		v = nv;
		ck_assert(k < 10000000);
	}
}

START_TEST(adam_v_stall)
{
	const ex_exercise *ex = get("7.4f");
	int fs = ex_field_index(ex, "steps");
	ck_assert(fs >= 0 && ex->fields[fs].optional);
	ck_assert(!ex->fields[ex_field_index(ex, "stall_value")].optional);
	static const char *betas[] = { "0.95", "0.99", "0.995", "0.999", "0.9999" };
	static const char *formats[] = { "bf16", "fp16" };
	for (size_t bi = 0; bi < sizeof betas / sizeof betas[0]; bi++)
		for (size_t fi = 0; fi < 2; fi++) {
			ex_variant v;
			ex_variant_make(ex, NULL, NULL, &v);
			for (size_t p = 0; p < ex->nparams; p++) {
				if (!strcmp(ex->params[p].name, "beta2"))
					snprintf(v.values[p], sizeof v.values[p], "%s", betas[bi]);
				if (!strcmp(ex->params[p].name, "format"))
					snprintf(v.values[p], sizeof v.values[p], "%s", formats[fi]);
			}
			float stall;
			size_t steps;
			ema_oracle(betas[bi], fi == 1, &stall, &steps);
			ck_assert(stall > 0 && stall < 1);
			ex_solution s;
			solve(ex, &v, &s);
			ck_assert_msg(expect(ex, &s, "stall_value")->number == stall, "%s %s: %.9g, oracle %.9g", betas[bi],
			              formats[fi], expect(ex, &s, "stall_value")->number, (double)stall);
			ck_assert(expect(ex, &s, "steps")->number == (double)steps);
			ck_assert(strstr(s.worked, "sqrt") != NULL);
			ex_solution_free(&s);
		}
	/* by hand: bf16, beta2 = 0.999. At v = 0.25 the spacing is 2^-9, half of it 2^-10 =
	 * 0.000977, and the increment (1 - b)(1 - 0.25) = 0.00075 is below it; in [0.125, 0.25)
	 * half the spacing is 0.000488 < 0.001 x 0.875, so v climbs to 0.25 and stops there */
	float stall;
	size_t steps;
	ema_oracle("0.999", false, &stall, &steps);
	ck_assert(stall == 0.25f);
	/* bf16, beta2 = 0.9999: at 2^-5 half the spacing 2^-13 = 1.22e-4 exceeds 1e-4 x (1 - 2^-5);
	 * below it half the spacing 2^-14 = 6.1e-5 does not: v stops at 0.03125 */
	ema_oracle("0.9999", false, &stall, &steps);
	ck_assert(stall == 0.03125f);
	/* the default variant (bf16, beta2 = 0.995, not the lesson's worked 0.999) by hand: c =
	 * fl32(1 - fl32(0.995)) = 0.00499999523. Below 0.5 every increment c (1 - v) >= 0.0025
	 * exceeds half the spacing (2^-10 at most); in [0.5, 1) half the spacing is 2^-9 =
	 * 0.001953125: at 155/256 the increment c x 101/256 = 0.00197 passes it, at 156/256 =
	 * 0.609375 it is c x 100/256 = 0.0019531231, just below: v stops at 0.609375. The feedback
	 * knows 1 and the other format */
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	ex_solution s;
	solve(ex, &v, &s);
	ck_assert(expect(ex, &s, "stall_value")->number == 0.609375);
	char fb[512];
	int sv = ex_field_index(ex, "stall_value");
	ck_assert_int_eq(ex_check(ex, &s, (size_t)sv, "0.609375", fb, sizeof fb), EX_CORRECT);
	ck_assert_int_eq(ex_check(ex, &s, (size_t)sv, "1", fb, sizeof fb), EX_WRONG);
	ck_assert_msg(strstr(fb, "exact arithmetic") != NULL, "%s", fb);
	float s16;
	ema_oracle("0.995", true, &s16, &steps);
	char a[64];
	snprintf(a, sizeof a, "%.9g", (double)s16);
	ck_assert_int_eq(ex_check(ex, &s, (size_t)sv, a, fb, sizeof fb), EX_WRONG);
	ck_assert_msg(strstr(fb, "fp16") != NULL, "%s", fb);
	ex_solution_free(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("exercise_premise");
	TCase *tc = tcase_create("premise");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, load_shipped, free_shipped);
	tcase_add_test(tc, underflow_premise);
	tcase_add_test(tc, loss_scale_premise);
	tcase_add_test(tc, hand_round_premise);
	tcase_add_test(tc, weights_premise);
	tcase_add_test(tc, lost_updates_premise);
	tcase_add_test(tc, yes_no_answers_vary);
	tcase_add_test(tc, adam_v_stall);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
