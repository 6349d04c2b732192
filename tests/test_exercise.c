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
#include "ex_fixture.h"
#include "testutil.h"
#include "util/csvread.h"
#include "util/file.h"

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
		{ "7.4a", "G", "fp16_min_normal bf16_min_normal fp32_min_normal fp16_flushes bf16_stored" },
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
	/* 1e-8 = 1.34217728 x 2^-27; 8 significant bits: 1.34217728 x 128 = 171.8 -> 172,
	 * so bf16 stores 172 x 2^-34 */
	ck_assert(num(ex, &s, "bf16_stored") == 172 * ldexp(1, -34));
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

START_TEST(kv_cache_by_hand)
{
	/* sv.1 at its defaults (Llama-3-8B's attention): 2 * 32 layers * 8 KV
	 * heads * 128 * 2 bytes = 131072 per token; 4 x 8192 tokens = 2^32
	 * bytes = 4 GiB = 4.294967296 GB */
	const ex_exercise *ex = get("sv.1");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	ck_assert(num(ex, &s, "per_token_bytes") == 131072);
	ck_assert(num(ex, &s, "total_gib") == 4 && num(ex, &s, "total_gb") == 4.294967296);
	/* the query heads instead of the KV heads: 4 times too many, named */
	assert_verdict(ex, &s, "per_token_bytes", "524288", EX_WRONG, "grouped-query attention");
	assert_verdict(ex, &s, "per_token_bytes", "65536", EX_WRONG, "a key and a value");
	assert_verdict(ex, &s, "total_gib", "1", EX_WRONG, "one sequence");
	ex_solution_free(&s);
	solve_with(ex, "batch", "1", &s);   /* one sequence of 8192: 1 GiB */
	ck_assert(num(ex, &s, "total_gib") == 1);
	ex_solution_free(&s);
}
END_TEST

/* Decimal text rounded to nearest even into a binary format of precision p
 * whose smallest normal is 2^emin and whose largest exponent is emax, with
 * subnormals (MPFR's exponent e means [2^(e-1), 2^e)). */
static double round_mpfr_fmt(const char *text, int p, int emin, int emax)
{
	mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
	mpfr_set_emin(emin - p + 2);
	mpfr_set_emax(emax + 1);
	mpfr_t x;
	mpfr_init2(x, p);
	int t = mpfr_strtofr(x, text, NULL, 10, MPFR_RNDN);
	t = mpfr_subnormalize(x, t, MPFR_RNDN);
	(void)t;
	double d = mpfr_get_d(x, MPFR_RNDN);
	mpfr_clear(x);
	mpfr_set_emin(old_min);
	mpfr_set_emax(old_max);
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

/* Every listed V of 7.4d against MPFR with subnormals: bits (as values: all
 * are positive), relative errors, and best and worst as the sets of formats
 * with the smallest and largest error (ties accept either). */
START_TEST(hand_round_against_mpfr)
{
	const ex_exercise *ex = get("7.4d");
	const ex_param *p = &ex->params[0];
	ck_assert_int_eq(p->vary, EX_VARY_LIST);
	static const struct {
		const char *field;
		fmt_id id;
		int p, emin, emax;
	} fmts[] = { { "fp16", FMT_FP16, 11, -14, 15 }, { "bf16", FMT_BF16, 8, -126, 127 },
		     { "fp32", FMT_FP32, 24, -126, 127 } };
	for (size_t k = 0; k < p->nvalues; k++) {
		ex_solution s;
		solve_with(ex, "V", p->values[k], &s);
		double rel[3];
		for (size_t j = 0; j < 3; j++) {
			const fmt_info *f = fmt_get(fmts[j].id);
			char name[32];
			snprintf(name, sizeof name, "%s_bits", fmts[j].field);
			double want = round_mpfr_fmt(p->values[k], fmts[j].p, fmts[j].emin, fmts[j].emax);
			double got = fmt_to_double(f, expect(ex, &s, name)->bits);
			ck_assert_msg(got == want, "V=%s %s: %.17g, MPFR %.17g", p->values[k], f->name, got, want);
			snprintf(name, sizeof name, "%s_rel_error", fmts[j].field);
			rel[j] = mpfr_rel_error(p->values[k], want);
			ck_assert_msg(fabs(num(ex, &s, name) - rel[j]) <= 1e-12 * rel[j], "V=%s %s", p->values[k], name);
		}
		double lo = fmin(rel[0], fmin(rel[1], rel[2])), hi = fmax(rel[0], fmax(rel[1], rel[2]));
		ck_assert_msg(lo < hi, "V=%s: every format is best and worst", p->values[k]);
		for (size_t j = 0; j < 3; j++) {
			/* the engine's answer accepts exactly the formats with the extreme error */
			char fb[512];
			ex_verdict vb = check(ex, &s, "best", fmts[j].field, fb, sizeof fb);
			ck_assert_msg((vb == EX_CORRECT) == (rel[j] == lo), "V=%s best %s: %s", p->values[k], fmts[j].field,
			              fb);
			ex_verdict vw = check(ex, &s, "worst", fmts[j].field, fb, sizeof fb);
			ck_assert_msg((vw == EX_CORRECT) == (rel[j] == hi), "V=%s worst %s: %s", p->values[k],
			              fmts[j].field, fb);
		}
		ex_solution_free(&s);
	}
}
END_TEST

START_TEST(fp8_by_hand)
{
	const ex_exercise *ex = get("fp8.0");
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
	solve_with(ex, NULL, NULL, &s);   /* w = 0.5: in [2^-1, 1), gap 2^(-1-7) = 2^-8 */
	ck_assert(num(ex, &s, "spacing") == 0.00390625);
	ck_assert(num(ex, &s, "vanish_below") == 0.001953125);
	ck_assert(num(ex, &s, "steps") == 65536);   /* sqrt(T) = 2^8 */
	ex_solution_free(&s);
	solve_with(ex, "w", "600", &s);   /* w = 600: in [512, 1024), gap 2^(9-7) = 4 */
	ck_assert(num(ex, &s, "spacing") == 4);
	ck_assert(num(ex, &s, "vanish_below") == 2);
	ex_solution_free(&s);
	/* 200 students: every w is a bf16 value in [1e-3, 10] and its gap matches fp32 bit arithmetic */
	for (int k = 0; k < 200; k++) {
		char student[16];
		snprintf(student, sizeof student, "s%03d", k);
		ex_variant v;
		ex_variant_make(ex, "course-1", student, &v);
		double w = strtod(v.values[0], NULL);
		ck_assert_msg(w >= 1e-3 && w <= 10, "w = %s", v.values[0]);
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

static Suite *suite(void)
{
	Suite *s = suite_create("exercise");
	TCase *tc = tcase_create("exercise");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, load_shipped, free_shipped);
	tcase_add_test(tc, lesson_exercises_have_fixed_fields);
	tcase_add_test(tc, underflow_by_hand);
	tcase_add_test(tc, loss_scale_memory_by_hand);
	tcase_add_test(tc, kv_cache_by_hand);
	tcase_add_test(tc, hand_round_point_one);
	tcase_add_test(tc, hand_round_against_mpfr);
	tcase_add_test(tc, fp8_by_hand);
	tcase_add_test(tc, update_vanish_and_spacing);
	tcase_add_test(tc, drift_exercises_by_hand);
	tcase_add_test(tc, overflow_and_scale_by_hand);
	tcase_add_test(tc, round_steps_by_hand);
	tcase_add_test(tc, variants_are_deterministic_and_vary);
	tcase_add_test(tc, prompt_substitutes_parameters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
