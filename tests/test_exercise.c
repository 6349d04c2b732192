/* Exercises: the shipped files load; every expected answer agrees with a
 * value derived by hand here or with MPFR; answers in every accepted syntax
 * are checked; recognisable mistakes are explained; variants are
 * deterministic; teacher errors are reported with file:line while the rest
 * loads; progress survives corruption; the CSV reader reports lines. */
#include <limits.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt/decode.h"
#include "fmt/round.h"
#include "teach/exercise.h"
#include "teach/progress.h"
#include "testutil.h"
#include "util/csvread.h"
#include "util/file.h"

static ex_set shipped;

static void load_shipped(void)
{
	ex_diags d = { 0 };
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/exercises", testutil_srcdir());
	memset(&shipped, 0, sizeof shipped);
	ck_assert_int_eq(ex_load_dir(&shipped, dir, &d), MP_OK);
	for (size_t i = 0; i < d.count; i++)
		fprintf(stderr, "%s\n", d.msgs[i]);
	ck_assert_uint_eq(d.count, 0);
	ex_diags_free(&d);
}

static void free_shipped(void)
{
	ex_set_free(&shipped);
}

static const ex_exercise *get(const char *id)
{
	const ex_exercise *ex = ex_find(&shipped, id);
	ck_assert_msg(ex != NULL, "exercise %s missing", id);
	return ex;
}

/* Solves ex with the defaults, or with one parameter replaced. */
static void solve_with(const ex_exercise *ex, const char *param, const char *value, ex_solution *sol)
{
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	if (param) {
		bool found = false;
		for (size_t i = 0; i < ex->nparams; i++)
			if (!strcmp(ex->params[i].name, param)) {
				snprintf(v.values[i], sizeof v.values[i], "%s", value);
				found = true;
			}
		ck_assert_msg(found, "%s has no parameter %s", ex->id, param);
	}
	char err[256];
	ck_assert_msg(ex_solve(ex, &v, sol, err, sizeof err) == MP_OK, "%s: %s", ex->id, err);
}

static const ex_value *expect(const ex_exercise *ex, const ex_solution *sol, const char *field)
{
	int i = ex_field_index(ex, field);
	ck_assert_msg(i >= 0, "%s has no field %s", ex->id, field);
	return &sol->expect[i];
}

static double num(const ex_exercise *ex, const ex_solution *sol, const char *field)
{
	const ex_value *e = expect(ex, sol, field);
	ck_assert_int_eq(e->type, EX_NUMBER);
	return e->number;
}

static ex_verdict check(const ex_exercise *ex, const ex_solution *sol, const char *field, const char *answer,
                        char *fb, size_t n)
{
	int i = ex_field_index(ex, field);
	ck_assert(i >= 0);
	return ex_check(ex, sol, (size_t)i, answer, fb, n);
}

static void assert_verdict(const ex_exercise *ex, const ex_solution *sol, const char *field, const char *answer,
                           ex_verdict want, const char *feedback_has)
{
	char fb[1024];
	ex_verdict got = check(ex, sol, field, answer, fb, sizeof fb);
	ck_assert_msg(got == want, "%s %s=%s: verdict %d, want %d (%s)", ex->id, field, answer, got, want, fb);
	if (feedback_has)
		ck_assert_msg(strstr(fb, feedback_has), "%s %s=%s: feedback '%s' lacks '%s'", ex->id, field, answer, fb,
		              feedback_has);
}

/* ---- the fixed contract of the lesson's five exercises ---------------------- */

START_TEST(lesson_exercises_have_fixed_fields)
{
	static const struct {
		const char *id, *param, *fields;
	} fixed[] = {
		{ "7.4a", "G", "fp16_min_normal bf16_min_normal fp32_min_normal fp16_flushes bf16_flushes" },
		{ "7.4b", "S", "factor" },
		{ "7.4c", "P", "bytes_per_param total_gb" },
		{ "7.4d", "V",
		  "fp16_bits bf16_bits fp32_bits fp16_rel_error bf16_rel_error fp32_rel_error best worst" },
		{ "7.4e", "w", "spacing vanish_below steps" },
	};
	for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
		const ex_exercise *ex = get(fixed[k].id);
		ck_assert_str_eq(ex->params[0].name, fixed[k].param);
		char list[256];
		snprintf(list, sizeof list, "%s", fixed[k].fields);
		for (char *save = NULL, *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save))
			ck_assert_msg(ex_field_index(ex, w) >= 0, "%s lacks field %s", fixed[k].id, w);
	}
	ck_assert_uint_ge(shipped.count, 11);
}
END_TEST

/* ---- expected answers, derived by hand ------------------------------------------- */

START_TEST(underflow_by_hand)
{
	const ex_exercise *ex = get("7.4a");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* G = 1e-8 */
	ck_assert(num(ex, &s, "fp16_min_normal") == 1.0 / 16384);   /* 2^(1-15) */
	ck_assert(num(ex, &s, "bf16_min_normal") == ldexp(1, -126));
	ck_assert(num(ex, &s, "fp32_min_normal") == ldexp(1, -126));
	/* 1e-8 is below half of fp16's smallest subnormal 2^-24, i.e. 2^-25 = 2.98e-8 */
	ck_assert_str_eq(expect(ex, &s, "fp16_flushes")->choice, "yes");
	ck_assert_str_eq(expect(ex, &s, "bf16_flushes")->choice, "no");
	ck_assert_msg(strstr(s.worked, "a gradient of 1e-08 vanishes"), "%s", s.worked);
	ex_solution_free(&s);
	/* 4e-8 lies above 2^-25 and rounds to the subnormal 2^-24: not flushed */
	solve_with(ex, "G", "4e-8", &s);
	ck_assert_str_eq(expect(ex, &s, "fp16_flushes")->choice, "no");
	ex_solution_free(&s);
	/* a listed G that survives: the conclusion must not say it vanishes.
	 * 1e-6 lies in [2^-20, 2^-19): subnormal bits 2^-20 .. 2^-24, 5 of them */
	solve_with(ex, "G", "1e-6", &s);
	ck_assert_str_eq(expect(ex, &s, "fp16_flushes")->choice, "no");
	ck_assert_msg(!strstr(s.worked, "vanish\n") && !strstr(s.worked, "like these vanish"), "%s", s.worked);
	ck_assert_msg(strstr(s.worked, "survives in fp16 only as a subnormal, with 5 significant bits"), "%s", s.worked);
	ex_solution_free(&s);
	solve_with(ex, "G", "3e-4", &s);   /* above 2^-14: normal in fp16 */
	ck_assert_msg(strstr(s.worked, "is a normal fp16 number"), "%s", s.worked);
	ex_solution_free(&s);
	/* exactly 2^-25 is a tie between 0 and 2^-24; even is 0 */
	solve_with(ex, "G", "2^-25", &s);
	ck_assert_str_eq(expect(ex, &s, "fp16_flushes")->choice, "yes");
	ex_solution_free(&s);
}
END_TEST

START_TEST(loss_scale_memory_by_hand)
{
	const ex_exercise *ex = get("7.4b");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* S = 65536 */
	ck_assert(num(ex, &s, "factor") == 65536);
	ck_assert(num(ex, &s, "unscale") == 1.0 / 65536);
	ex_solution_free(&s);
	solve_with(ex, "S", "1024", &s);
	ck_assert(num(ex, &s, "factor") == 1024);
	ex_solution_free(&s);

	ex = get("7.4c");
	solve_with(ex, NULL, NULL, &s);   /* P = 7e9: 4 + 2 + 2 + 4 + 8 = 20 bytes, 140 GB */
	ck_assert(num(ex, &s, "bytes_per_param") == 20);
	ck_assert(fabs(num(ex, &s, "total_gb") - 140) < 1e-9);
	ex_solution_free(&s);
	solve_with(ex, "P", "6.7e9", &s);   /* the lesson's "about 134 GB" */
	ck_assert(fabs(num(ex, &s, "total_gb") - 134) < 1e-9);
	ex_solution_free(&s);

	ex = get("zero.1");
	solve_with(ex, NULL, NULL, &s);
	/* 7e9 on 8 GPUs, stage 2: master 4/8 + Adam 8/8 + grads 2/8 + accumulator 4/8 + weights 2 = 4.25 */
	ck_assert(fabs(num(ex, &s, "gpu_gb") - 4.25 * 7) < 1e-9);
	ex_solution_free(&s);
}
END_TEST

/* The exact value of decimal text rounded to precision p (normal range). */
static double round_mpfr(const char *text, int p)
{
	mpfr_t x;
	mpfr_init2(x, p);
	ck_assert_int_eq(mpfr_set_str(x, text, 10, MPFR_RNDN), 0);
	double d = mpfr_get_d(x, MPFR_RNDN);   /* exact: p <= 53 */
	mpfr_clear(x);
	return d;
}

/* |rounded - V| / |V| with 200 bits. */
static double mpfr_rel_error(const char *text, double rounded)
{
	mpfr_t v, r;
	mpfr_inits2(200, v, r, (mpfr_ptr)0);
	mpfr_set_str(v, text, 10, MPFR_RNDN);
	mpfr_set_d(r, rounded, MPFR_RNDN);
	mpfr_sub(r, r, v, MPFR_RNDN);
	mpfr_div(r, r, v, MPFR_RNDN);
	mpfr_abs(r, r, MPFR_RNDN);
	double d = mpfr_get_d(r, MPFR_RNDN);
	mpfr_clears(v, r, (mpfr_ptr)0);
	return d;
}

START_TEST(hand_round_point_one)
{
	const ex_exercise *ex = get("7.4d");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* V = 0.1 */
	/* 0.1 = 1.6 x 2^-4: fp16 exponent field 11, fraction 1001100110|011..: round down */
	ck_assert_uint_eq(expect(ex, &s, "fp16_bits")->bits, 0x2e66);
	/* bf16: fraction 1001100|1100..: round up to 1001101 */
	ck_assert_uint_eq(expect(ex, &s, "bf16_bits")->bits, 0x3dcd);
	ck_assert_uint_eq(expect(ex, &s, "fp32_bits")->bits, 0x3dcccccd);
	/* (0.1 - 0.0999755859375) / 0.1 and (0.10009765625 - 0.1) / 0.1 */
	ck_assert(fabs(num(ex, &s, "fp16_rel_error") - 2.44140625e-4) < 1e-15);
	ck_assert(fabs(num(ex, &s, "bf16_rel_error") - 9.765625e-4) < 1e-15);
	ck_assert_str_eq(expect(ex, &s, "best")->choice, "fp32");
	ck_assert_str_eq(expect(ex, &s, "worst")->choice, "bf16");
	/* the worked solution shows the steps */
	ck_assert(strstr(s.worked, "guard 0, round 1, sticky 1"));
	ck_assert(strstr(s.worked, "exponent field: -4 + 15 = 11 = 01011"));
	ex_solution_free(&s);
}
END_TEST

/* Every listed V of 7.4d against MPFR: bits (as values: all are normal and
 * positive), relative errors, best and worst (never tied). */
START_TEST(hand_round_against_mpfr)
{
	const ex_exercise *ex = get("7.4d");
	const ex_param *p = &ex->params[0];
	ck_assert_int_eq(p->vary, EX_VARY_LIST);
	static const struct {
		const char *field;
		fmt_id id;
	} fmts[] = { { "fp16", FMT_FP16 }, { "bf16", FMT_BF16 }, { "fp32", FMT_FP32 } };
	for (size_t k = 0; k < p->nvalues; k++) {
		ex_solution s;
		solve_with(ex, "V", p->values[k], &s);
		double rel[3];
		for (size_t j = 0; j < 3; j++) {
			const fmt_info *f = fmt_get(fmts[j].id);
			char name[32];
			snprintf(name, sizeof name, "%s_bits", fmts[j].field);
			double want = round_mpfr(p->values[k], fmt_precision(f));
			double got = fmt_to_double(f, expect(ex, &s, name)->bits);
			ck_assert_msg(got == want, "V=%s %s: %.17g, MPFR %.17g", p->values[k], f->name, got, want);
			snprintf(name, sizeof name, "%s_rel_error", fmts[j].field);
			rel[j] = mpfr_rel_error(p->values[k], want);
			ck_assert_msg(fabs(num(ex, &s, name) - rel[j]) <= 1e-12 * rel[j], "V=%s %s", p->values[k], name);
		}
		size_t best = 0, worst = 0;
		for (size_t j = 1; j < 3; j++) {
			best = rel[j] < rel[best] ? j : best;
			worst = rel[j] > rel[worst] ? j : worst;
		}
		for (size_t j = 0; j < 3; j++) {
			ck_assert_msg(j == best || rel[j] != rel[best], "V=%s: tie for best", p->values[k]);
			ck_assert_msg(j == worst || rel[j] != rel[worst], "V=%s: tie for worst", p->values[k]);
		}
		ck_assert_str_eq(expect(ex, &s, "best")->choice, fmts[best].field);
		ck_assert_str_eq(expect(ex, &s, "worst")->choice, fmts[worst].field);
		ex_solution_free(&s);
	}
}
END_TEST

START_TEST(fp8_by_hand)
{
	const ex_exercise *ex = get("fp8.1");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* V = 0.7 = 1.4 x 2^-1 */
	/* e4m3: exponent field -1 + 7 = 6; 0.4 x 8 = 3.2: fraction 011, rest 0.2 < 0.5: down
	 * -> 0 0110 011 = 0x33 = 1.375 / 2 = 0.6875 */
	ck_assert_uint_eq(expect(ex, &s, "e4m3_bits")->bits, 0x33);
	/* e5m2: field -1 + 15 = 14; 0.4 x 4 = 1.6: fraction 01, rest 0.6: up -> 10
	 * -> 0 01110 10 = 0x3a = 1.5 / 2 = 0.75 */
	ck_assert_uint_eq(expect(ex, &s, "e5m2_bits")->bits, 0x3a);
	ck_assert(fabs(num(ex, &s, "e4m3_rel_error") - 0.0125 / 0.7) < 1e-15);
	ck_assert(fabs(num(ex, &s, "e5m2_rel_error") - 0.05 / 0.7) < 1e-15);
	ck_assert_str_eq(expect(ex, &s, "best")->choice, "fp8-e4m3");
	ex_solution_free(&s);
	/* 13 = 1.101b x 2^3 is exact in e4m3: 0 1010 101 = 0x55, error 0. There is
	 * no rounding direction to get wrong, so 14 (0x56) is not "the other
	 * neighbour", and the solution says the value is exact */
	solve_with(ex, "V", "13", &s);
	ck_assert_uint_eq(expect(ex, &s, "e4m3_bits")->bits, 0x55);
	ck_assert(num(ex, &s, "e4m3_rel_error") == 0);
	ck_assert_msg(strstr(s.worked, "V is exact in fp8-e4m3"), "%s", s.worked);
	char fb[1024];
	ck_assert_int_eq(check(ex, &s, "e4m3_bits", "0x56", fb, sizeof fb), EX_WRONG);
	ck_assert_msg(!strstr(fb, "neighbour"), "%s", fb);
	ck_assert_int_eq(check(ex, &s, "e4m3_rel_error", "0.0769", fb, sizeof fb), EX_WRONG);
	ck_assert_msg(!strstr(fb, "neighbour"), "%s", fb);
	/* e5m2 keeps 1.10|1: a tie, to even 1.10b x 8 = 12 = 0 10010 10 = 0x4a; 14 is the other neighbour */
	ck_assert_uint_eq(expect(ex, &s, "e5m2_bits")->bits, 0x4a);
	assert_verdict(ex, &s, "e5m2_bits", "0x4b", EX_WRONG, "other neighbour");
	ex_solution_free(&s);
}
END_TEST

/* bf16's next value up from w, from fp32 bits: w is a bf16 value, so its
 * fp32 pattern has 16 zero low bits; the next bf16 adds 1 << 16. */
static double bf16_gap(double w)
{
	float f = (float)w, n;
	uint32_t b;
	memcpy(&b, &f, 4);
	ck_assert_uint_eq(b & 0xffff, 0);
	b += 1u << 16;
	memcpy(&n, &b, 4);
	return (double)n - w;
}

START_TEST(update_vanish_and_spacing)
{
	const ex_exercise *ex = get("7.4e");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* w = 600: in [512, 1024), gap 2^(9-7) = 4 */
	ck_assert(num(ex, &s, "spacing") == 4);
	ck_assert(num(ex, &s, "vanish_below") == 2);
	ck_assert(num(ex, &s, "steps") == 65536);   /* sqrt(T) = 2^8 */
	ex_solution_free(&s);
	/* 200 students: every w is a bf16 value in [3, 5000] and its gap matches fp32 bit arithmetic */
	for (int k = 0; k < 200; k++) {
		char student[16];
		snprintf(student, sizeof student, "s%03d", k);
		ex_variant v;
		ex_variant_make(ex, "course-1", student, &v);
		double w = strtod(v.values[0], NULL);
		ck_assert_msg(w >= 3 && w <= 5000, "w = %s", v.values[0]);
		char err[200];
		ck_assert_int_eq(ex_solve(ex, &v, &s, err, sizeof err), MP_OK);
		ck_assert_msg(num(ex, &s, "spacing") == bf16_gap(w), "w = %s", v.values[0]);
		ck_assert(num(ex, &s, "vanish_below") == bf16_gap(w) / 2);
		ex_solution_free(&s);
	}
	ex = get("drift.1");
	solve_with(ex, NULL, NULL, &s);   /* x = 600 */
	ck_assert(num(ex, &s, "spacing") == 4);
	ck_assert(num(ex, &s, "exponent") == 9);
	ex_solution_free(&s);
	ex = get("ulp.1");
	solve_with(ex, "x", "1e-5", &s);   /* fp16 subnormal: spacing 2^-24 */
	ck_assert(num(ex, &s, "spacing") == ldexp(1, -24));
	ex_solution_free(&s);
	solve_with(ex, NULL, NULL, &s);   /* x = 1000 in [512, 1024): 2^(9-10) */
	ck_assert(num(ex, &s, "spacing") == 0.5);
	ex_solution_free(&s);
	/* x = 255.9 lies in [128, 256) where bf16 neighbours are 1 apart, but bf16
	 * stores it as 256, whose gap above is 2: updates below 1 vanish, not 0.5 */
	ex = get("drift.2");
	solve_with(ex, "x", "255.9", &s);
	ck_assert_msg(num(ex, &s, "vanish_below") == 1, "%s", s.worked);
	ex_solution_free(&s);
	fmt_round_ctl rne = { .mode = FMT_RNE };
	const fmt_info *b = fmt_get(FMT_BF16);
	ck_assert(fmt_to_double(b, fmt_round_double(b, &rne, 255.9, NULL)) == 256);
	ck_assert(fmt_to_double(b, fmt_round_double(b, &rne, 256 + 0.99, NULL)) == 256);
	ck_assert(fmt_to_double(b, fmt_round_double(b, &rne, 256 + 1.01, NULL)) == 258);
	ex = get("drift.1");
	solve_with(ex, "x", "255.9", &s);   /* around 255.9 itself: [128, 256), 2^(7-7) */
	ck_assert(num(ex, &s, "spacing") == 1);
	ck_assert(num(ex, &s, "exponent") == 7);
	ex_solution_free(&s);
	ex = get("7.4e");
	solve_with(ex, "w", "255.9", &s);   /* a weight stored in bf16: 256, next value 258 */
	ck_assert(num(ex, &s, "spacing") == 2);
	ck_assert(num(ex, &s, "vanish_below") == 1);
	ex_solution_free(&s);
}
END_TEST

START_TEST(drift_exercises_by_hand)
{
	const ex_exercise *ex = get("drift.3");
	ex_solution s;
	/* 500 in [256, 512) has gap 2: +1.5 rounds up by 2 each step 500, 502, ..., 510,
	 * 511.5 -> 512 (6 kept); at 512 the gap is 4 and 513.5 rounds back to 512. */
	solve_with(ex, NULL, NULL, &s);
	ck_assert(num(ex, &s, "lost") == 94);
	ck_assert(num(ex, &s, "final") == 512);
	ex_solution_free(&s);
	/* downward: 500 - 1.5 = 498.5 rounds to 498 (gap 2), and so on; 100 steps of -2
	 * reach 300 without meeting 256, where the gap would halve: nothing lost.
	 * The exact sum 500 - 150 = 350 is the recognised mistake. */
	solve_with(ex, "u", "-1.5", &s);
	ck_assert(num(ex, &s, "lost") == 0);
	ck_assert(num(ex, &s, "final") == 300);
	assert_verdict(ex, &s, "final", "350", EX_WRONG, "exact sum");
	ex_solution_free(&s);

	ex = get("drift.4");
	solve_with(ex, NULL, NULL, &s);   /* 600 + 0.5 each step: bf16 gap 4 loses all; fp32 is exact */
	ck_assert(num(ex, &s, "retained_rne") == 0);
	ck_assert(num(ex, &s, "retained_fp32") == 1);
	ex_solution_free(&s);
}
END_TEST

START_TEST(overflow_and_scale_by_hand)
{
	const ex_exercise *ex = get("overflow.1");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	ck_assert(num(ex, &s, "max") == 65504);        /* (2 - 2^-10) x 2^15 */
	ck_assert(num(ex, &s, "overflow_at") == 65520); /* + half of 2^(15-10) */
	ex_solution_free(&s);
	ex = get("overflow.2");
	solve_with(ex, NULL, NULL, &s);
	ck_assert(num(ex, &s, "max") == 448);          /* 1.75 x 2^8 */
	ck_assert(num(ex, &s, "min_normal") == 1.0 / 64);
	ck_assert(num(ex, &s, "overflow_at") == 464);  /* + half of 2^(8-3) */
	/* 448 = 1.110b x 2^8 ends in 0: the tie 464 goes to even, back to 448,
	 * and only values above it become NaN; the solution must not say the
	 * tie goes away from max (as it does in fp16, whose max ends in 1). */
	ck_assert_msg(!strstr(s.worked, "away from max"), "%s", s.worked);
	ck_assert_msg(strstr(s.worked, "464 still rounds to 448"), "%s", s.worked);
	ex_solution_free(&s);
	/* the engine agrees with the hand derivation on both sides of each threshold */
	fmt_round_ctl rne = { .mode = FMT_RNE };
	const fmt_info *e4 = fmt_get(FMT_E4M3), *h = fmt_get(FMT_FP16);
	ck_assert_uint_eq(fmt_round_double(e4, &rne, 464, NULL), 0x7e);
	ck_assert(isnan(fmt_to_double(e4, fmt_round_double(e4, &rne, nextafter(464, 500), NULL))));
	ck_assert(isinf(fmt_to_double(h, fmt_round_double(h, &rne, 65520, NULL))));
	ck_assert(fmt_to_double(h, fmt_round_double(h, &rne, nextafter(65520, 0), NULL)) == 65504);
	ex = get("overflow.1");
	solve_with(ex, NULL, NULL, &s);
	ck_assert_msg(strstr(s.worked, "away from max"), "%s", s.worked);
	ex_solution_free(&s);
	ex = get("scale.1");
	solve_with(ex, NULL, NULL, &s);   /* gmax 2: 2 x 2^14 = 32768 <= 65504 < 65536; gmin 1e-7 */
	ck_assert(num(ex, &s, "max_scale") == 16384);
	/* 2^-14 / 1e-7 = 610.4: the next power of two is 1024 */
	ck_assert(num(ex, &s, "min_scale") == 1024);
	ck_assert_str_eq(expect(ex, &s, "fits")->choice, "yes");
	ex_solution_free(&s);
}
END_TEST


START_TEST(round_steps_by_hand)
{
	const ex_exercise *ex = get("round.1");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* V = 0.1 = 1.6 x 2^-4; 0.6 = 0.1001100110|011... in binary */
	ck_assert(num(ex, &s, "fp16_exponent") == -4);
	ck_assert(num(ex, &s, "fp16_exp_field") == 11);
	ck_assert_uint_eq(expect(ex, &s, "fp16_fraction")->bits, 0x266);   /* 10 0110 0110 */
	assert_verdict(ex, &s, "fp16_fraction", "1001100110", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_fraction", "10 0110 0110", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_fraction", "100110011", EX_MALFORMED, "10");   /* 9 digits */
	assert_verdict(ex, &s, "fp16_fraction", "1001100111", EX_WRONG, "bit 10");
	ck_assert_str_eq(expect(ex, &s, "fp16_guard")->choice, "0");
	ck_assert_str_eq(expect(ex, &s, "fp16_round")->choice, "1");
	ck_assert_str_eq(expect(ex, &s, "fp16_sticky")->choice, "1");
	ck_assert_str_eq(expect(ex, &s, "fp16_round_up")->choice, "no");
	ck_assert_uint_eq(expect(ex, &s, "fp16_bits")->bits, 0x2e66);
	ex_solution_free(&s);
	/* V = 601.9 = 1.17558... x 2^9; 0.17558 x 128 = 22.47: kept 0010110, then .47:
	 * guard 0, round 1 (0.94), sticky 1: round down to 600 = 0x4416 */
	ex = get("round.2");
	solve_with(ex, NULL, NULL, &s);
	ck_assert(num(ex, &s, "bf16_exponent") == 9);
	ck_assert(num(ex, &s, "bf16_exp_field") == 136);
	ck_assert_uint_eq(expect(ex, &s, "bf16_fraction")->bits, 22);
	assert_verdict(ex, &s, "bf16_fraction", "0010110", EX_CORRECT, NULL);
	ck_assert_str_eq(expect(ex, &s, "bf16_round_up")->choice, "no");
	ck_assert_uint_eq(expect(ex, &s, "bf16_bits")->bits, 0x4416);
	ex_solution_free(&s);
	/* V = 602.1: kept 0010110, rest .53: guard 1: round up to 0010111 = 604 = 0x4417;
	 * 0010111 for the fraction step is the rounded one, explained */
	solve_with(ex, "V", "602.1", &s);
	ck_assert_str_eq(expect(ex, &s, "bf16_round_up")->choice, "yes");
	ck_assert_uint_eq(expect(ex, &s, "bf16_bits")->bits, 0x4417);
	assert_verdict(ex, &s, "bf16_fraction", "0010111", EX_WRONG, "after rounding");
	ex_solution_free(&s);
}
END_TEST

/* ---- answers --------------------------------------------------------------------- */

START_TEST(answer_syntaxes)
{
	const ex_exercise *ex = get("7.4a");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "fp16_min_normal", "2^-14", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6.104e-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "1/16384", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", " 0x1p-14 ", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6.2e-5", EX_WRONG, NULL);
	/* a one-word answer with its reason: the word counts, the reason is
	 * named as unchecked; without a separator it stays one (unknown) word */
	{
		char fb[1024];
		ex_verdict plain_yes = check(ex, &s, "fp16_flushes", "yes", fb, sizeof fb);
		ex_verdict plain_no = check(ex, &s, "fp16_flushes", "no", fb, sizeof fb);
		ck_assert(plain_yes != plain_no && plain_yes != EX_MALFORMED && plain_no != EX_MALFORMED);
		assert_verdict(ex, &s, "fp16_flushes", "Yes, it flushes to zero", plain_yes, "read as 'Yes'");
		assert_verdict(ex, &s, "fp16_flushes", "no - subnormals keep it", plain_no, "not checked");
		assert_verdict(ex, &s, "fp16_flushes", "no; too big to flush", plain_no, "read as 'no'");
		assert_verdict(ex, &s, "fp16_flushes", "no idea", EX_MALFORMED, "not one of");
		assert_verdict(ex, &s, "fp16_flushes", "maybe, not sure", EX_MALFORMED, "not one of");
		/* two answers, however the second is dressed */
		assert_verdict(ex, &s, "fp16_flushes", "no, yes", EX_MALFORMED, "two answers");
		assert_verdict(ex, &s, "fp16_flushes", "no, yes, it flushes", EX_MALFORMED, "two answers");
		assert_verdict(ex, &s, "fp16_flushes", "no; yes it does", EX_MALFORMED, "two answers");
		assert_verdict(ex, &s, "fp16_flushes", "no: yes: no", EX_MALFORMED, "two answers");
		char padded[400];
		snprintf(padded, sizeof padded, "no, yes%300s", "");
		assert_verdict(ex, &s, "fp16_flushes", padded, EX_MALFORMED, "two answers");
		/* a separator with nothing after it: no reason to mention */
		ck_assert(check(ex, &s, "fp16_flushes", "yes,", fb, sizeof fb) == plain_yes);
		ck_assert_msg(strstr(fb, "not checked") == NULL, "%s", fb);
		/* a long reason is fine */
		char longer[600];
		snprintf(longer, sizeof longer, "no: %0500d", 0);
		assert_verdict(ex, &s, "fp16_flushes", longer, plain_no, "not checked");
	}
	/* the lesson's table gives three digits: 2^-14 = 6.10e-5, 2^-126 = 1.18e-38
	 * (1.1755e-38, 0.4% off); a truncated 1.17e-38 is as good; two digits are not */
	assert_verdict(ex, &s, "fp16_min_normal", "6.10e-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_min_normal", "1.18e-38", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp32_min_normal", "1.17e-38", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp32_min_normal", "1.2e-38", EX_WRONG, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6e-5", EX_WRONG, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "six", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "Yes", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "y", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "maybe", EX_MALFORMED, NULL);
	/* what students type: sentence punctuation, quotes, other multiplication signs */
	assert_verdict(ex, &s, "fp16_flushes", "yes.", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_flushes", " YES! ", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_flushes", "\"no\"", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_flushes", "'yes'", EX_WRONG, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "no, yes", EX_MALFORMED, NULL);
	{
		/* a cut of a long answer must not read as a word */
		char longans[200];
		snprintf(longans, sizeof longans, "yes%90sno", "");
		assert_verdict(ex, &s, "fp16_flushes", longans, EX_MALFORMED, "too long");
	}
	assert_verdict(ex, &s, "fp16_min_normal", "6.1 x 10^-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6.1x10^-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6.1\xC3\x97" "10^-5", EX_CORRECT, NULL);   /* U+00D7 */
	assert_verdict(ex, &s, "fp16_min_normal", "6.1 * 10^-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "2**-14", EX_CORRECT, NULL);   /* Python */
	assert_verdict(ex, &s, "fp16_min_normal", "2 ^ -14", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "2^(-14)", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "2^\xE2\x88\x92" "14", EX_CORRECT, NULL);   /* U+2212 minus */
	assert_verdict(ex, &s, "fp16_min_normal", "0.000061035", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "~6.1e-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "\xE2\x89\x88" " 6.1e-5", EX_CORRECT, NULL);   /* U+2248 */
	assert_verdict(ex, &s, "fp16_min_normal", "~~6.1e-5", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "0x1p-14", EX_CORRECT, NULL);   /* still a hex float */
	assert_verdict(ex, &s, "fp16_min_normal", "0x10^-14", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6,1e-5", EX_MALFORMED, "decimal point");
	assert_verdict(ex, &s, "fp16_min_normal", "6.1e-5 GB", EX_MALFORMED, "plain number");
	ex_solution_free(&s);

	ex = get("7.4e");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "steps", "65,536", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "steps", "2**16", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "steps", "65,53", EX_MALFORMED, "thousands");
	assert_verdict(ex, &s, "steps", "6,5536", EX_MALFORMED, "thousands");
	assert_verdict(ex, &s, "steps", "65,536,", EX_MALFORMED, NULL);
	ex_solution_free(&s);

	ex = get("7.4d");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "bf16_bits", "0x3dcd", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0X3DCD", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0b0011110111001101", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0011 1101 1100 1101", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0 01111011 1001101", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0x13dcd", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0011 1101", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0x3dcg", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "best", "FP32", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "best", "float32", EX_CORRECT, NULL);   /* an alias */
	assert_verdict(ex, &s, "worst", "bfloat16", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_rel_error", "2.44e-4", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_rel_error", "0.0244%", EX_CORRECT, NULL);
	ex_solution_free(&s);

	ex = get("7.4c");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "total_gb", "140", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "total_gb", "140 GB", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "total_gb", "140GB", EX_CORRECT, NULL);
	/* 140e9 bytes = 130.385 GiB: correct when the unit says so */
	assert_verdict(ex, &s, "total_gb", "130.385 GiB", EX_CORRECT, "converted");
	assert_verdict(ex, &s, "bytes_per_param", "20 bytes", EX_CORRECT, NULL);
	/* 140e9 bytes, written in bytes: converted */
	assert_verdict(ex, &s, "total_gb", "1.4e11 bytes", EX_CORRECT, "converted");
	assert_verdict(ex, &s, "total_gb", "140,000,000,000 B", EX_CORRECT, "converted");
	assert_verdict(ex, &s, "total_gb", "1.4e11", EX_WRONG, NULL);
	ex_solution_free(&s);
}
END_TEST

/* A mistake keeps its tag across variants: the message carries each
 * variant's numbers, the tag does not, so grading can count one mistake
 * over a class whose numbers all differ. */
START_TEST(mistake_tags_match_across_variants)
{
	const ex_exercise *ex = get("7.4e");
	int f = ex_field_index(ex, "spacing"), fs = ex_field_index(ex, "steps");
	ck_assert(f >= 0 && fs >= 0);
	const char *tags[2], *sqrt_tags[2];
	char msgs[2][512];
	const double ws[2] = { 11.3125, 71 };
	for (int k = 0; k < 2; k++) {
		ex_solution s;
		char w[32];
		snprintf(w, sizeof w, "%.10g", ws[k]);
		solve_with(ex, "w", w, &s);
		/* twice the gap, by hand: bf16_gap (the next bf16 pattern up) */
		char a[64];
		snprintf(a, sizeof a, "%.10g", 2 * bf16_gap(ws[k]));
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)f, a, msgs[k], sizeof msgs[k], &tags[k]), EX_WRONG);
		/* sqrt(T) 2^-8 = 1 is T = 2^16; 2^8 forgets the square root */
		char fb[512];
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)fs, "256", fb, sizeof fb, &sqrt_tags[k]), EX_WRONG);
		const char *none = "x";
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)fs, "65536", fb, sizeof fb, &none), EX_CORRECT);
		ck_assert(none == NULL);
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)fs, "12345", fb, sizeof fb, &none), EX_WRONG);
		ck_assert(none == NULL);   /* wrong, but no mistake recognised */
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)fs, "many", fb, sizeof fb, &none), EX_MALFORMED);
		ck_assert(none == NULL);
		ex_solution_free(&s);
	}
	ck_assert(tags[0] != NULL && tags[0] == tags[1]);
	ck_assert(sqrt_tags[0] != NULL && sqrt_tags[0] == sqrt_tags[1] && sqrt_tags[0] != tags[0]);
}
END_TEST

START_TEST(mistakes_are_explained)
{
	const ex_exercise *ex = get("7.4a");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	/* min subnormal given for min normal */
	assert_verdict(ex, &s, "fp16_min_normal", "2^-24", EX_WRONG, "smallest subnormal");
	assert_verdict(ex, &s, "bf16_min_normal", "2^-14", EX_WRONG, "smallest normal of fp16");
	assert_verdict(ex, &s, "fp16_flushes", "no", EX_WRONG, "half the smallest");
	ex_solution_free(&s);

	ex = get("7.4c");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "bytes_per_param", "16", EX_WRONG, "accumulator");
	assert_verdict(ex, &s, "total_gb", "112", EX_WRONG, "accumulator");
	/* 140e9 / 2^30 = 130.385: GiB given where GB is asked */
	assert_verdict(ex, &s, "total_gb", "130.4", EX_WRONG, "GiB");
	/* the reverse: 140 (the GB figure) where GiB is asked; 140e9 / 2^30 = 130.385 */
	assert_verdict(ex, &s, "total_gib", "140", EX_WRONG, "looks like GB");
	assert_verdict(ex, &s, "total_gib", "130.4", EX_CORRECT, NULL);
	ex_solution_free(&s);

	ex = get("7.4d");
	solve_with(ex, NULL, NULL, &s);
	/* truncating 0.1 to bf16 gives 0x3dcc: the other neighbour */
	assert_verdict(ex, &s, "bf16_bits", "0x3dcc", EX_WRONG, "other neighbour");
	assert_verdict(ex, &s, "fp16_bits", "0x2e67", EX_WRONG, "other neighbour");
	assert_verdict(ex, &s, "fp16_bits", "0x2a66", EX_WRONG, "exponent");
	assert_verdict(ex, &s, "bf16_rel_error", "9.765625e-5", EX_WRONG, "absolute error");
	ex_solution_free(&s);

	ex = get("7.4e");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "steps", "256", EX_WRONG, "square");
	assert_verdict(ex, &s, "vanish_below", "4", EX_WRONG, "half");
	assert_verdict(ex, &s, "spacing", "4.6875", EX_WRONG, "epsilon");   /* 600 x 2^-7 */
	ex_solution_free(&s);

	ex = get("7.4b");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "factor", "2^-16", EX_WRONG, "unscaling");
	ex_solution_free(&s);
}
END_TEST

/* ---- variants ---------------------------------------------------------------------- */

START_TEST(variants_are_deterministic_and_vary)
{
	for (size_t i = 0; i < shipped.count; i++) {
		const ex_exercise *ex = &shipped.items[i];
		ex_variant a, b, d;
		ex_variant_make(ex, "2026", "alice", &a);
		ex_variant_make(ex, "2026", "alice", &b);
		ck_assert_int_eq(memcmp(&a, &b, sizeof a), 0);
		ex_variant_make(ex, NULL, NULL, &d);
		for (size_t k = 0; k < ex->nparams; k++)
			ck_assert_str_eq(d.values[k], ex->params[k].def);
		/* every student's variant solves; listed values come from the list */
		size_t distinct = 0;
		for (int st = 0; st < 60; st++) {
			char student[16];
			snprintf(student, sizeof student, "%d", 1000 + st);
			ex_variant v;
			ex_variant_make(ex, "2026", student, &v);
			ex_solution s;
			char err[256];
			ck_assert_msg(ex_solve(ex, &v, &s, err, sizeof err) == MP_OK, "%s student %s: %s", ex->id, student,
			              err);
			ex_solution_free(&s);
			for (size_t k = 0; k < ex->nparams; k++) {
				const ex_param *p = &ex->params[k];
				if (p->vary == EX_VARY_LIST) {
					bool in = false;
					for (size_t j = 0; j < p->nvalues; j++)
						in = in || !strcmp(p->values[j], v.values[k]);
					ck_assert(in);
				}
			}
			distinct += memcmp(&v, &a, sizeof v) != 0;
		}
		bool varies = false;
		for (size_t k = 0; k < ex->nparams; k++)
			varies = varies || ex->params[k].vary != EX_VARY_NONE;
		if (varies)
			ck_assert_msg(distinct > 30, "%s: only %zu of 60 students differ from alice", ex->id, distinct);
	}
	/* no seed given: $MIXPREC_COURSE_SEED, else "0" */
	{
		const ex_exercise *e74 = get("7.4e");
		ex_variant a, b;
		setenv("MIXPREC_COURSE_SEED", "course-a", 1);
		ex_variant_make(e74, NULL, "s1", &a);
		ex_variant_make(e74, "course-a", "s1", &b);
		ck_assert_str_eq(a.values[0], b.values[0]);
		unsetenv("MIXPREC_COURSE_SEED");
		ex_variant_make(e74, NULL, "s1", &a);
		ex_variant_make(e74, "0", "s1", &b);
		ck_assert_str_eq(a.values[0], b.values[0]);
		ck_assert_str_eq(ex_course_seed(NULL), "0");
	}
	/* a different course seed gives a different assignment */
	const ex_exercise *ex = get("7.4e");
	size_t same = 0;
	for (int st = 0; st < 50; st++) {
		char student[16];
		snprintf(student, sizeof student, "%d", st);
		ex_variant a, b;
		ex_variant_make(ex, "course-a", student, &a);
		ex_variant_make(ex, "course-b", student, &b);
		same += !strcmp(a.values[0], b.values[0]);
	}
	ck_assert_uint_lt(same, 10);
}
END_TEST

START_TEST(prompt_substitutes_parameters)
{
	const ex_exercise *ex = get("7.4c");
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	char *p = ex_prompt(ex, &v);
	ck_assert(p && strstr(p, "P = 7e9 parameters") && !strchr(p, '{'));
	free(p);
}
END_TEST

/* ---- teacher files ------------------------------------------------------------------ */

static size_t load_text(const char *text, ex_set *set, ex_diags *d)
{
	memset(set, 0, sizeof *set);
	memset(d, 0, sizeof *d);
	ck_assert_int_eq(ex_load_text(set, "t.ex", text, strlen(text), d), MP_OK);
	return set->count;
}

static bool diag_has(const ex_diags *d, const char *s)
{
	for (size_t i = 0; i < d->count; i++)
		if (strstr(d->msgs[i], s))
			return true;
	return false;
}

/* Files from outside: a long path in a message, a UTF-8 byte-order mark
 * (Windows editors write one) and CRLF line ends. */
START_TEST(load_long_names_bom_crlf)
{
	static const char good[] = "[ok]\ntitle: T\nkind: spacing\nparam x: 600\nprompt: Spacing at {x}?\n"
	                           "field spacing: number rel 1e-6 -- gap\n";
	char name[1200];
	memset(name, 'd', sizeof name - 1);
	memcpy(name + sizeof name - 6, "/x.ex", 6);
	char text[1024];
	snprintf(text, sizeof text, "%s[b]\nbogus line\n", good);
	ex_set set = { 0 };
	ex_diags d = { 0 };
	ck_assert_int_eq(ex_load_text(&set, name, text, strlen(text), &d), MP_OK);
	ck_assert_uint_eq(set.count, 1);
	ck_assert_uint_ge(d.count, 1);
	ck_assert_msg(strstr(d.msgs[0], "/x.ex:8: expected 'key: value'"), "%s", d.msgs[0]);
	ck_assert_uint_lt(strlen(d.msgs[0]), 500);
	ex_set_free(&set);
	ex_diags_free(&d);

	snprintf(text, sizeof text, "\xEF\xBB\xBF%s", good);
	ck_assert_uint_eq(load_text(text, &set, &d), 1);
	ck_assert_msg(d.count == 0, "BOM: %s", d.count ? d.msgs[0] : "");
	ex_set_free(&set);
	ex_diags_free(&d);

	static const char crlf[] = "\xEF\xBB\xBF# comment\r\n[ok]\r\ntitle: T\r\nkind: spacing\r\nparam x: 600\r\n"
	                           "prompt: Spacing at {x}?\r\n  more\r\nfield spacing: number rel 1e-6 -- gap\r\n";
	ck_assert_uint_eq(load_text(crlf, &set, &d), 1);
	ck_assert_msg(d.count == 0, "CRLF: %s", d.count ? d.msgs[0] : "");
	ck_assert(!strchr(set.items[0].prompt, '\r'));
	ex_set_free(&set);
	ex_diags_free(&d);
}
END_TEST

START_TEST(load_errors_name_file_and_line)
{
	static const char good[] = "[ok]\ntitle: T\nkind: spacing\nparam x: 600\nprompt: Spacing at {x}?\n"
	                           "field spacing: number rel 1e-6 -- gap\n";
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "[a]\ntitle: T\nkind: nosuch\n", "t.ex:3: unknown kind 'nosuch'" },
		{ "[a]\nkind: spacing\nparam x: 1\nprompt: p\nfield spacing: number\n", "t.ex:1: exercise a has no title" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: p\nfield nope: number\n",
		  "t.ex:6: field nope: kind spacing cannot check it" },
		{ "[a]\ntitle: T\nkind: spacing\nprompt: p\nfield spacing: number\n", "needs a parameter 'x'" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: p {y}\nfield spacing: number\n", "{y}" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: p\nfield spacing: number rel banana\n",
		  "t.ex:6: field spacing: rel needs a non-negative number" },
		{ "[a]\ntitle: T\nkind: spacing\nvary x: list 1 2\n", "t.ex:4: vary x: declare it first" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 0\nprompt: p\nfield spacing: number\n", "must not be 0" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nvary x: list 2 0\nprompt: p\nfield spacing: number\n",
		  "value 0 of x" },
		/* a range is checked at both ends: fp8-e4m3 stops at 448 */
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nparam format: fp8-e4m3\nvary x: range 1 1000\nprompt: p\n"
		  "field spacing: number\n",
		  "of x (an end of its range): parameter x is beyond fp8-e4m3's largest" },
		{ "[a b]\ntitle: T\n", "t.ex:1: 'a b' is not a valid exercise id" },
		{ "[a]\ntitle: T\ntitle: U\n", "t.ex:3: title given twice" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: p\nfield spacing: bits fp99\n",
		  "t.ex:6: field spacing: bits needs one format" },
		{ "[a]\ntitle: T\nkind: round-steps\nparam V: 0.1\nprompt: p\nfield fp16_fraction: bits 33\n",
		  "t.ex:6: field fp16_fraction: bits needs one format" },
		{ "[a]\ntitle: T\nkind: round-steps\nparam V: 0.1\nprompt: p\nfield fp16_fraction: bits 9\n",
		  "declare it as 'bits 10'" },
		{ "[a]\ntitle: T\nkind: round-steps\nparam V: 0.1\nprompt: p\nfield fp16_fraction: bits fp16\n",
		  "declare it as 'bits 10'" },
		{ "[a]\ntitle: T\nkind: round-steps\nparam V: 0.1\nprompt: p\nfield fp16_bits: bits 16\n",
		  "holds a format's bits" },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		/* each broken exercise next to a good one: the good one still loads */
		char text[2048];
		snprintf(text, sizeof text, "%s%s", good, cases[k].text);
		ex_set set;
		ex_diags d;
		size_t n = load_text(text, &set, &d);
		ck_assert_msg(n == 1 && ex_find(&set, "ok"), "case %zu: %zu loaded", k, n);
		/* the good exercise takes 6 lines: shift the expected line number */
		char want[256];
		const char *colon = strncmp(cases[k].want, "t.ex:", 5) == 0 ? cases[k].want + 5 : NULL;
		if (colon)
			snprintf(want, sizeof want, "t.ex:%ld%s", strtol(colon, NULL, 10) + 6, strchr(colon, ':'));
		else
			snprintf(want, sizeof want, "%s", cases[k].want);
		ck_assert_msg(diag_has(&d, want), "case %zu: no diagnostic '%s' (got %s)", k, want,
		              d.count ? d.msgs[0] : "none");
		ex_set_free(&set);
		ex_diags_free(&d);
	}
	/* a duplicate id is reported at the second definition */
	char text[1024];
	snprintf(text, sizeof text, "%s%s", good, good);
	ex_set set;
	ex_diags d;
	ck_assert_uint_eq(load_text(text, &set, &d), 1);
	ck_assert(diag_has(&d, "t.ex:7: exercise ok is defined twice (first in t.ex:1)"));
	ex_set_free(&set);
	ex_diags_free(&d);
	/* text before the first exercise */
	ck_assert_uint_eq(load_text("title: T\n", &set, &d), 0);
	ck_assert(diag_has(&d, "t.ex:1: expected '[ID]' before the first definition"));
	ex_set_free(&set);
	ex_diags_free(&d);
	/* continuation lines and '.' for an empty line */
	ck_assert_uint_eq(load_text("[c]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: one\n  two\n  .\n  three\n"
	                            "field spacing: number\n",
	                            &set, &d),
	                  1);
	ck_assert_str_eq(set.items[0].prompt, "one\ntwo\n\nthree");
	ex_set_free(&set);
	ex_diags_free(&d);
}
END_TEST

/* ---- progress ------------------------------------------------------------------------ */

static char statedir[64];

static void fresh_statedir(void)
{
	snprintf(statedir, sizeof statedir, "/tmp/mixprec-test-XXXXXX");
	ck_assert(mkdtemp(statedir));
	setenv("MIXPREC_STATEDIR", statedir, 1);
}

/* file_atomic replaces a regular file; it must not rename over a FIFO or a
 * device (root could replace /dev/null that way), and it replaces a link's
 * target, not the link. */
START_TEST(file_atomic_keeps_pipes_and_links)
{
	char dir[] = "/tmp/mixprec-atomic-XXXXXX";
	ck_assert(mkdtemp(dir));
	char fifo[128], real[128], link[128], err[512];
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	snprintf(real, sizeof real, "%s/real.csv", dir);
	snprintf(link, sizeof link, "%s/link.csv", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	int rfd = open(fifo, O_RDONLY | O_NONBLOCK);   /* a reader, so opening for writing does not block */
	ck_assert_int_ge(rfd, 0);
	file_atomic a;
	ck_assert_int_eq(file_atomic_open(&a, fifo, err, sizeof err), MP_OK);
	fputs("a,b\n", a.fp);
	ck_assert_msg(file_atomic_commit(&a, err, sizeof err) == MP_OK, "%s", err);
	struct stat st;
	ck_assert_int_eq(lstat(fifo, &st), 0);
	ck_assert_msg(S_ISFIFO(st.st_mode), "the FIFO was replaced");
	char got[16] = "";
	ck_assert_int_eq(read(rfd, got, sizeof got - 1), 4);
	ck_assert_str_eq(got, "a,b\n");
	close(rfd);

	FILE *fp = fopen(real, "w");
	ck_assert(fp);
	fputs("old\n", fp);
	fclose(fp);
	ck_assert_int_eq(symlink("real.csv", link), 0);
	ck_assert_int_eq(file_atomic_open(&a, link, err, sizeof err), MP_OK);
	fputs("new\n", a.fp);
	ck_assert_msg(file_atomic_commit(&a, err, sizeof err) == MP_OK, "%s", err);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert_msg(S_ISLNK(st.st_mode), "the link was replaced by a file");
	char *buf;
	size_t len;
	ck_assert_int_eq(file_read_all(real, 100, &buf, &len, err, sizeof err), MP_OK);
	ck_assert_str_eq(buf, "new\n");
	free(buf);

	/* a folder is refused up front, and nothing is left behind */
	ck_assert_int_eq(file_atomic_open(&a, dir, err, sizeof err), MP_EIO);
	ck_assert_msg(strstr(err, "directory"), "%s", err);
	unlink(link);
	unlink(real);
	unlink(fifo);
	ck_assert_int_eq(rmdir(dir), 0);   /* empty: no temporary file remains */
}
END_TEST

START_TEST(progress_records_and_survives_corruption)
{
	fresh_statedir();
	char note[1024];
	ck_assert_int_eq(progress_record("exercise:7.4a", 1, false, 0, note, sizeof note), MP_OK);
	ck_assert_int_eq(progress_record("exercise:7.4a", 1, true, 0, note, sizeof note), MP_OK);
	ck_assert_int_eq(progress_record("exercise:7.4b", 0, false, 2, note, sizeof note), MP_OK);
	ck_assert_int_eq(progress_record("exercise:7.4b", 0, false, 1, note, sizeof note), MP_OK);
	progress p;
	ck_assert_int_eq(progress_load(&p, note, sizeof note), MP_OK);
	ck_assert_str_eq(note, "");
	const progress_row *r = progress_get(&p, "exercise:7.4a");
	ck_assert(r && r->attempts == 2 && r->solved && r->hints == 0);
	r = progress_get(&p, "exercise:7.4b");
	ck_assert(r && r->attempts == 0 && !r->solved && r->hints == 2);
	progress_free(&p);

	/* a count at the top of long's range saturates instead of overflowing */
	{
		char full[128];
		snprintf(full, sizeof full, "%s/progress.csv", statedir);
		FILE *big = fopen(full, "w");
		ck_assert(big);
		fprintf(big, "item,attempts,solved,hints_used\nexercise:7.4a,%ld,0,0\n", LONG_MAX);
		fclose(big);
		ck_assert_int_eq(progress_record("exercise:7.4a", 1, false, 0, note, sizeof note), MP_OK);
		ck_assert_int_eq(progress_load(&p, note, sizeof note), MP_OK);
		r = progress_get(&p, "exercise:7.4a");
		ck_assert(r && r->attempts == LONG_MAX);
		progress_free(&p);
	}

	/* corrupt it: it is moved aside, reported, and progress starts afresh */
	char path[128], aside[160];
	snprintf(path, sizeof path, "%s/progress.csv", statedir);
	FILE *fp = fopen(path, "w");
	ck_assert(fp);
	fputs("item,attempts,solved,hints_used\nexercise:7.4a,two,1,0\n", fp);
	fclose(fp);
	ck_assert_int_eq(progress_load(&p, note, sizeof note), MP_OK);
	ck_assert_uint_eq(p.count, 0);
	ck_assert_msg(strstr(note, "corrupt") && strstr(note, "line 2"), "note: %s", note);
	snprintf(aside, sizeof aside, "%s.corrupt-1", path);
	ck_assert_int_eq(access(aside, F_OK), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
	progress_free(&p);
	/* recording again starts a new file; no temporary files remain */
	ck_assert_int_eq(progress_record("exercise:7.4c", 1, true, 0, note, sizeof note), MP_OK);
	ck_assert_int_eq(progress_load(&p, note, sizeof note), MP_OK);
	ck_assert_uint_eq(p.count, 1);
	progress_free(&p);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep tmp)\"", statedir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", statedir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- the CSV reader ---------------------------------------------------------------- */

typedef struct {
	long lines[8];
	char first[8][64];
	size_t counts[8];
	size_t n;
} rows_seen;

static int collect(void *ud, const csvr_row *row)
{
	rows_seen *r = ud;
	if (r->n < 8) {
		r->lines[r->n] = row->line;
		r->counts[r->n] = row->count;
		snprintf(r->first[r->n], sizeof r->first[0], "%s", row->count ? row->fields[0] : "");
		r->n++;
	}
	return 0;
}

START_TEST(csv_reader_lines_and_errors)
{
	rows_seen r = { 0 };
	char err[256];
	static const char text[] = "\xEF\xBB\xBFid,name\n1,\"two\nlines\"\n\n3,\"a \"\"q\"\"\"\n4,x";
	ck_assert_int_eq(csvr_parse(text, sizeof text - 1, collect, NULL, &r, err, sizeof err), MP_OK);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_str_eq(r.first[0], "id");   /* the byte-order mark is gone */
	ck_assert_int_eq(r.lines[1], 2);
	ck_assert_int_eq(r.lines[2], 5);      /* after the two-line field and a blank line */
	ck_assert_int_eq(r.lines[3], 6);
	ck_assert_uint_eq(r.counts[3], 2);
	memset(&r, 0, sizeof r);
	static const char bad[] = "a,b\nc,d\"e\n";
	ck_assert_int_eq(csvr_parse(bad, sizeof bad - 1, collect, NULL, &r, err, sizeof err), MP_EPARSE);
	ck_assert_msg(strncmp(err, "line 2:", 7) == 0, "%s", err);
	memset(&r, 0, sizeof r);
	static const char open_quote[] = "a,b\nc,\"d\ne\n";
	ck_assert_int_eq(csvr_parse(open_quote, sizeof open_quote - 1, collect, NULL, &r, err, sizeof err), MP_EPARSE);
	ck_assert_msg(strstr(err, "line 2") && strstr(err, "unterminated"), "%s", err);
	static const char nul[] = "a,b\0c\n";
	ck_assert_int_eq(csvr_parse(nul, sizeof nul - 1, collect, NULL, &r, err, sizeof err), MP_EPARSE);
	ck_assert_msg(strstr(err, "NUL"), "%s", err);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("exercise");
	TCase *tc = tcase_create("exercise");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, load_shipped, free_shipped);
	tcase_add_test(tc, lesson_exercises_have_fixed_fields);
	tcase_add_test(tc, underflow_by_hand);
	tcase_add_test(tc, loss_scale_memory_by_hand);
	tcase_add_test(tc, hand_round_point_one);
	tcase_add_test(tc, hand_round_against_mpfr);
	tcase_add_test(tc, fp8_by_hand);
	tcase_add_test(tc, update_vanish_and_spacing);
	tcase_add_test(tc, drift_exercises_by_hand);
	tcase_add_test(tc, overflow_and_scale_by_hand);
	tcase_add_test(tc, round_steps_by_hand);
	tcase_add_test(tc, answer_syntaxes);
	tcase_add_test(tc, mistakes_are_explained);
	tcase_add_test(tc, mistake_tags_match_across_variants);
	tcase_add_test(tc, variants_are_deterministic_and_vary);
	tcase_add_test(tc, prompt_substitutes_parameters);
	tcase_add_test(tc, load_errors_name_file_and_line);
	tcase_add_test(tc, load_long_names_bom_crlf);
	tcase_add_test(tc, progress_records_and_survives_corruption);
	tcase_add_test(tc, file_atomic_keeps_pipes_and_links);
	tcase_add_test(tc, csv_reader_lines_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
