/* Exercise feedback and worked solutions: each likely misconception is named
 * with what the answer would be under it; texts once found wrong
 * (garbled patterns, 6e+02, a solver that simulates other than the command
 * it names, the unit roundoff called a factor of two) stay fixed; lint
 * refuses variants that break an exercise. Every expected figure is derived
 * by hand in the comment beside it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "ex_fixture.h"
#include "testutil.h"

/* The feedback for answer to field must have the verdict, contain has (may
 * be NULL) and not contain hasnt (may be NULL). */
static void feedback(const ex_exercise *ex, const ex_solution *sol, const char *field, const char *answer,
                     ex_verdict want, const char *has, const char *hasnt)
{
	int i = ex_field_index(ex, field);
	ck_assert_msg(i >= 0, "%s has no field %s", ex->id, field);
	char fb[1024];
	ex_verdict v = ex_check(ex, sol, (size_t)i, answer, fb, sizeof fb);
	ck_assert_msg(v == want, "%s %s=%s: verdict %d: %s", ex->id, field, answer, v, fb);
	if (has)
		ck_assert_msg(strstr(fb, has) != NULL, "%s %s=%s: '%s' lacks '%s'", ex->id, field, answer, fb, has);
	if (hasnt)
		ck_assert_msg(strstr(fb, hasnt) == NULL, "%s %s=%s: '%s' has '%s'", ex->id, field, answer, fb, hasnt);
}

/* ---- misconceptions, each with its value ----------------------------------------- */

START_TEST(min_normal_misconceptions)
{
	const ex_exercise *ex = get("7.4a");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	/* fp16: max (2 - 2^-10) x 2^15 = 65504, epsilon 2^-10, smallest subnormal 2^-24 */
	feedback(ex, &s, "fp16_min_normal", "65504", EX_WRONG, "largest finite fp16", NULL);
	feedback(ex, &s, "fp16_min_normal", "2^-10", EX_WRONG, "epsilon of fp16", NULL);
	feedback(ex, &s, "fp16_min_normal", "2^-24", EX_WRONG, "5.96046e-08 = 2^-24 is the smallest subnormal", NULL);
	/* bf16: epsilon 2^-7 = 0.0078125; fp32's smallest subnormal 2^-149 */
	feedback(ex, &s, "bf16_min_normal", "0.0078125", EX_WRONG, "epsilon of bf16", NULL);
	feedback(ex, &s, "fp32_min_normal", "2^-149", EX_WRONG, "smallest subnormal of fp32", NULL);
	feedback(ex, &s, "fp16_min_normal", "6.1035e-5", EX_CORRECT, NULL, NULL);   /* 2^-14 */
	ex_solution_free(&s);
}
END_TEST

START_TEST(scale_and_memory_misconceptions)
{
	const ex_exercise *ex = get("7.4b");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* S = 65536, g = 1e-8 */
	/* divided instead of multiplied: 1e-8 / 65536 = 1.52588e-13; 1/S = 1.52588e-05 */
	feedback(ex, &s, "scaled_grad", "1.52588e-13", EX_WRONG, "1.52588e-13 = g / S", NULL);
	feedback(ex, &s, "factor", "1/65536", EX_WRONG, "1.52588e-05 = 1/S", NULL);
	feedback(ex, &s, "scaled_grad", "6.5536e-4", EX_CORRECT, NULL, NULL);
	/* 1e-8 <= 2^-25 = 2.98e-8: it flushes; "no" is explained, not just wrong */
	feedback(ex, &s, "unscaled_flushes", "no", EX_WRONG, "2^-25", NULL);
	ex_solution_free(&s);

	ex = get("7.4c");
	solve_with(ex, NULL, NULL, &s);   /* P = 7e9: 20 x 7e9 = 1.4e11 bytes = 140 GB = 130.385 GiB */
	feedback(ex, &s, "total_gb", "1.4e11", EX_WRONG, "in bytes; the question asks for GB", NULL);
	feedback(ex, &s, "total_gib", "1.4e11", EX_WRONG, "divide by 2^30", NULL);
	feedback(ex, &s, "total_gb", "130.385", EX_WRONG, "looks like GiB", NULL);
	feedback(ex, &s, "total_gb", "130.385", EX_WRONG, "bytes / 10^9 = 140", NULL);
	feedback(ex, &s, "total_gib", "140", EX_WRONG, "bytes / 2^30 = 130.385", NULL);
	/* the worked solution shows both divisions: 1.4e11 / 2^30 = 130.385 */
	ck_assert_msg(strstr(s.worked, "1.4e+11 / 10^9 = 140 GB") != NULL, "%s", s.worked);
	ck_assert_msg(strstr(s.worked, "1.4e+11 / 2^30 = 130.385 GiB") != NULL, "%s", s.worked);
	ex_solution_free(&s);
}
END_TEST

START_TEST(rounding_misconceptions)
{
	const ex_exercise *ex = get("7.4d");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* V = 0.1 */
	/* unit roundoffs 2^-11 = 4.88e-4, 2^-8 = 3.9e-3, 2^-24 = 5.96e-8: recognised as such */
	feedback(ex, &s, "fp16_rel_error", "4.88e-4", EX_WRONG, "unit roundoff of fp16", "factor of two");
	feedback(ex, &s, "bf16_rel_error", "3.9e-3", EX_WRONG, "unit roundoff of bf16", "neighbour");
	feedback(ex, &s, "fp32_rel_error", "5.96e-8", EX_WRONG, "unit roundoff of fp32", "factor of two");
	/* epsilon 2^-10 for fp16 */
	feedback(ex, &s, "fp16_rel_error", "2^-10", EX_WRONG, "epsilon of fp16", NULL);
	/* 0.1 = 1.1001100110|011.. x 2^-4 in fp16: rounds down to 0x2e66; up is 0x2e67 = 0.100036621 */
	feedback(ex, &s, "fp16_bits", "0x2e67", EX_WRONG, "0x2e67 (0.100037) is the other neighbour", NULL);
	/* bf16's pattern of 0.1, 0x3dcd, typed as the fp16 one */
	feedback(ex, &s, "fp16_bits", "0x3dcd", EX_WRONG, "bf16 pattern of V", NULL);
	/* an unrecognised pattern: 0x2e68 = (1 + 616/1024) x 2^-4 = 0.10009765625, said once */
	feedback(ex, &s, "fp16_bits", "0x2e68", EX_WRONG, "0x2e68 decodes to 0.10009765", "is 0x2e68");
	ex_solution_free(&s);

	/* round.1 recognises the other neighbour too, and explains round_up */
	ex = get("round.1");
	solve_with(ex, NULL, NULL, &s);
	feedback(ex, &s, "fp16_bits", "0x2e67", EX_WRONG, "other neighbour", NULL);
	feedback(ex, &s, "fp16_bits", "0b0010111001101000", EX_WRONG, "0x2e68 decodes to", "0b0010111001101000 is");
	/* 0.1's guard bit in fp16 is 0 (round down): "yes" gets the rule, not a bare "wrong." */
	feedback(ex, &s, "fp16_round_up", "yes", EX_WRONG, "guard is 1 and round or sticky is 1", NULL);
	feedback(ex, &s, "fp16_round_up", "no", EX_CORRECT, NULL, NULL);
	feedback(ex, &s, "fp16_guard", "1", EX_WRONG, "first bit after the 10 kept", NULL);
	feedback(ex, &s, "fp16_sticky", "0", EX_WRONG, "not zero", NULL);
	ex_solution_free(&s);

	/* the spacing of the wrong format: 600 in [512, 1024): fp16 2^(9-10) = 0.5, bf16 2^(9-7) = 4 */
	ex = get("drift.1");
	solve_with(ex, NULL, NULL, &s);
	feedback(ex, &s, "spacing", "0.5", EX_WRONG, "spacing of fp16 at 600", NULL);
	feedback(ex, &s, "spacing", "4", EX_CORRECT, NULL, NULL);
	ex_solution_free(&s);
	ex = get("ulp.1");
	solve_with(ex, NULL, NULL, &s);   /* x = 1000 in fp16: 0.5; in bf16: 4 */
	feedback(ex, &s, "spacing", "4", EX_WRONG, "spacing of bf16 at 1000", NULL);
	ex_solution_free(&s);
}
END_TEST

/* ---- worked solutions -------------------------------------------------------------- */

START_TEST(worked_solutions_say_what_happens)
{
	/* round.2, V = 601.9: 601.9 / 2^9 = 1.17558..; kept 1.0010110 (guard 0): 1.171875 x 512 = 600 */
	const ex_exercise *ex = get("round.2");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	ck_assert_msg(strstr(s.worked, "= 0x4416 = 600\n") != NULL, "%s", s.worked);
	ck_assert(strstr(s.worked, "e+02") == NULL);
	ex_solution_free(&s);

	/* drift.4, x0 = 600, u = 0.5: the bf16 spacing at 600 is 4, 0.5 < 2 is rounded away every
	 * time: retained 0; fp32 holds 600 + 0.5k exactly up to 5600: retained 1. The stochastic
	 * rounding figure of a 16-value simulation (4900) must not appear. */
	ex = get("drift.4");
	solve_with(ex, NULL, NULL, &s);
	ck_assert(s.expect[ex_field_index(ex, "retained_rne")].number == 0);
	ck_assert(s.expect[ex_field_index(ex, "retained_fp32")].number == 1);
	ck_assert(strstr(s.worked, "4900") == NULL);
	ck_assert(strstr(s.worked, "mixprec drift --x0 600 --dist constant --mean 0.5 --steps 10000") != NULL);
	ex_solution_free(&s);
	/* x0 = 100, u = 0.75: in [64, 128) the spacing is 0.5 and x + 0.75 rounds to x + 1 (or
	 * x + 0.5 on ties to even), in [128, 256) spacing 1 moves by 1, at 256 the spacing 2 has
	 * half 1 > 0.75: stops at 256. Retained (256 - 100) / 7500 = 0.0208 */
	solve_with(ex, "x0", "100", &s);
	ex_solution sol2;
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	snprintf(v.values[0], sizeof v.values[0], "100");
	snprintf(v.values[1], sizeof v.values[1], "0.75");
	char err[200];
	ck_assert_int_eq(ex_solve(ex, &v, &sol2, err, sizeof err), MP_OK);
	ck_assert(fabs(sol2.expect[ex_field_index(ex, "retained_rne")].number - 156.0 / 7500) < 1e-12);
	ck_assert_msg(strstr(sol2.worked, "at 256 it is 2") != NULL, "%s", sol2.worked);
	ex_solution_free(&sol2);
	ex_solution_free(&s);
}
END_TEST

START_TEST(percent_against_fraction)
{
	const ex_exercise *ex = get("drift.4");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	/* x0 = 600, u = 0.5: every sum 600 + 0.5 k up to 5600 is exact in fp32 (spacing at most
	 * 2^-11 there), so fp32 keeps all the drift: retained 1, which the command prints as
	 * 100.0% */
	feedback(ex, &s, "retained_fp32", "100", EX_WRONG, "in percent", NULL);
	feedback(ex, &s, "retained_fp32", "100%", EX_CORRECT, NULL, NULL);
	feedback(ex, &s, "retained_fp32", "1", EX_CORRECT, NULL, NULL);
	ex_solution_free(&s);
}
END_TEST

/* ---- hints go from a nudge to a strong hint ----------------------------------------- */

/* No hint but the last names a command (which would print the answer) or
 * holds an expected answer's text, for the defaults and a few variants. */
START_TEST(only_the_last_hint_gives_it_away)
{
	static const char *students[] = { NULL, "s1", "s2", "s3", "s4", "s5" };
	for (size_t e = 0; e < shipped.count; e++) {
		const ex_exercise *ex = &shipped.items[e];
		for (size_t st = 0; st < sizeof students / sizeof students[0]; st++) {
			ex_variant v;
			ex_variant_make(ex, "hints", students[st], &v);
			ex_solution sol;
			char err[256];
			ck_assert_int_eq(ex_solve(ex, &v, &sol, err, sizeof err), MP_OK);
			for (size_t h = 0; h + 1 < ex->nhints; h++) {
				ex_exercise tmp = *ex;
				tmp.prompt = ex->hints[h];
				char *text = ex_prompt(&tmp, &v);
				ck_assert(text != NULL);
				ck_assert_msg(strstr(text, "mixprec ") == NULL, "%s hint %zu names a command: %s", ex->id, h + 1,
				              text);
				for (size_t i = 0; i < ex->nfields; i++) {
					const char *a = sol.expect[i].text;
					/* numbers of three or more characters (a lone "0", "yes" or a bit are not answers
					 * a hint can give away by accident) */
					if (sol.expect[i].type == EX_NUMBER && strlen(a) >= 3)
						ck_assert_msg(strstr(text, a) == NULL, "%s hint %zu states %s=%s: %s", ex->id, h + 1,
						              ex->fields[i].name, a, text);
				}
				free(text);
			}
			ex_solution_free(&sol);
		}
		ck_assert_msg(ex->nhints >= 2, "%s: a nudge and a strong hint at least", ex->id);
	}
}
END_TEST

/* ---- lint refuses variants that break the exercise -------------------------------- */

static size_t lint(const char *values, ex_diags *d)
{
	char text[1024];
	snprintf(text, sizeof text,
	         "[t.1]\ntitle: t\nkind: hand-round\nparam V: 0.1\nvary V: list %s\nprompt: p\n"
	         "field fp16_rel_error: number\nfield bf16_rel_error: number\nfield fp32_rel_error: number\n"
	         "field best: choice fp16|bf16|fp32\nfield worst: choice fp16|bf16|fp32\n",
	         values);
	ex_set set = { 0 };
	memset(d, 0, sizeof *d);
	ck_assert_int_eq(ex_load_text(&set, "t.ex", text, strlen(text), d), MP_OK);
	size_t n = set.count;
	ex_set_free(&set);
	return n;
}

START_TEST(lint_refuses_broken_variants)
{
	ex_diags d;
	ck_assert_uint_eq(lint("0.1 0.3", &d), 1);
	ck_assert_uint_eq(d.count, 0);
	ex_diags_free(&d);
	/* -0: the relative error is 0/0 */
	ck_assert_uint_eq(lint("0.1 -0", &d), 0);
	ck_assert_uint_eq(d.count, 1);
	ck_assert_msg(strstr(d.msgs[0], "t.ex:1:") && strstr(d.msgs[0], "-0") && strstr(d.msgs[0], "zero"), "%s",
	              d.msgs[0]);
	ex_diags_free(&d);
	/* 65520 = 65504 + 32/2 is the tie above fp16's max: it rounds to inf (to even) */
	ck_assert_uint_eq(lint("0.1 65520", &d), 0);
	ck_assert_uint_eq(d.count, 1);
	ck_assert_msg(strstr(d.msgs[0], "65520") && strstr(d.msgs[0], "overflows fp16"), "%s", d.msgs[0]);
	ex_diags_free(&d);
	/* 0.5 is exact in all three: every format is both best and worst */
	ck_assert_uint_eq(lint("0.1 0.5", &d), 0);
	ck_assert_uint_eq(d.count, 1);
	ck_assert_msg(strstr(d.msgs[0], "both best and worst"), "%s", d.msgs[0]);
	ex_diags_free(&d);
	/* 65504 itself is fine: exact in fp16, 65536 in bf16 (spacing 256), exact in fp32 */
	ck_assert_uint_eq(lint("65504", &d), 1);
	ex_diags_free(&d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("exercise_feedback");
	TCase *tc = tcase_create("feedback");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, load_shipped, free_shipped);
	tcase_add_test(tc, min_normal_misconceptions);
	tcase_add_test(tc, scale_and_memory_misconceptions);
	tcase_add_test(tc, percent_against_fraction);
	tcase_add_test(tc, rounding_misconceptions);
	tcase_add_test(tc, worked_solutions_say_what_happens);
	tcase_add_test(tc, lint_refuses_broken_variants);
	tcase_add_test(tc, only_the_last_hint_gives_it_away);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
