/* Exercise fp8.3 (kind accum-error): the answers of every variant against a
 * simulation that shares no code with train/accum.c (integers in units of
 * 2^-24, the cut a power of two found from the bit length), the premise of
 * every variant (bits lost, but not everything), the default worked out by
 * hand, and the recognised mistakes. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "ex_fixture.h"
#include "testutil.h"

static int bit_length(uint64_t v)
{
	int n = 0;
	while (v) {
		n++;
		v >>= 1;
	}
	return n;
}

/* K adds of p (a multiple of 2^-24) keeping N significant bits, truncated:
 * with the sum and p as integers in units of 2^-24, the larger has b bits,
 * so the cut is 2^(b-N) units (1 when b <= N). */
static double oracle(uint64_t K, int N, double p, uint64_t *exact_steps)
{
	uint64_t pi = (uint64_t)ldexp(p, 24), acc = 0;
	ck_assert_msg(ldexp((double)pi, -24) == p, "p = %g is not a multiple of 2^-24", p);
	*exact_steps = K;
	for (uint64_t k = 0; k < K; k++) {
		uint64_t big = acc > pi ? acc : pi;
		int b = bit_length(big);
		uint64_t cut = b > N ? (uint64_t)1 << (b - N) : 1;
		uint64_t next = acc / cut * cut + pi / cut * cut;
		if (*exact_steps == K && next != acc + pi)
			*exact_steps = k;
		acc = next;
	}
	return ldexp((double)acc, -24);
}

static const ex_param *param(const ex_exercise *ex, const char *name)
{
	for (size_t i = 0; i < ex->nparams; i++)
		if (!strcmp(ex->params[i].name, name))
			return &ex->params[i];
	ck_abort_msg("%s has no parameter %s", ex->id, name);
	return NULL;
}

/* Every combination of the three lists. */
START_TEST(every_variant)
{
	load_shipped();
	const ex_exercise *ex = get("fp8.3");
	const ex_param *pk = param(ex, "K"), *pn = param(ex, "N"), *pp = param(ex, "p");
	ck_assert(pk->vary == EX_VARY_LIST && pn->vary == EX_VARY_LIST && pp->vary == EX_VARY_LIST);
	size_t n = 0;
	for (size_t a = 0; a < pk->nvalues; a++)
		for (size_t b = 0; b < pn->nvalues; b++)
			for (size_t c = 0; c < pp->nvalues; c++) {
				ex_variant v = { .count = ex->nparams };
				for (size_t i = 0; i < ex->nparams; i++) {
					const ex_param *q = &ex->params[i];
					const char *val = q == pk ? pk->values[a] : q == pn ? pn->values[b] : pp->values[c];
					snprintf(v.values[i], sizeof v.values[i], "%s", val);
				}
				uint64_t K = strtoull(pk->values[a], NULL, 10), steps;
				int N = atoi(pn->values[b]);
				double p = strtod(pp->values[c], NULL);
				double want = oracle(K, N, p, &steps), exact = (double)K * p;
				ex_solution sol;
				char err[256];
				ck_assert_msg(ex_solve(ex, &v, &sol, err, sizeof err) == MP_OK, "%s", err);
				ck_assert_msg(expect(ex, &sol, "result")->number == want, "K %llu N %d p %g: %g, oracle %g",
				              (unsigned long long)K, N, p, expect(ex, &sol, "result")->number, want);
				ck_assert(expect(ex, &sol, "exact")->number == exact);
				ck_assert(expect(ex, &sol, "exact_steps")->number == (double)steps);
				double rel = (exact - want) / exact;
				ck_assert(fabs(expect(ex, &sol, "rel_error")->number - rel) <= 1e-12 * rel);
				/* the premise: bits are lost, but the sum is not wiped out */
				ck_assert_msg(rel > 0.01 && rel < 0.5, "K %llu N %d p %g: relative error %g",
				              (unsigned long long)K, N, p, rel);
				ex_solution_free(&sol);
				n++;
			}
	ck_assert_uint_ge(n, 50);
	free_shipped();
}
END_TEST

/* The default, by hand: p = 1.125 = 1.001b needs a cut of 2^-3; the cut is
 * 2^(E-13), so every add is exact while the sum is below 2^11 = 2048:
 * 1820 x 1.125 = 2047.5, and product 1821 takes it to 2048.625. From there
 * the cut is 2^-2: product 1822 cuts the sum to 2048.5 and every product
 * keeps 1, so 2275 more products give 2048.5 + 2275 = 4323.5 (past 4096 the
 * cut is 2^-1, and p still keeps 1). Exact: 4096 x 1.125 = 4608; relative
 * error 284.5 / 4608. */
START_TEST(default_by_hand)
{
	load_shipped();
	const ex_exercise *ex = get("fp8.3");
	ex_solution sol;
	solve_with(ex, NULL, NULL, &sol);
	ck_assert(expect(ex, &sol, "result")->number == 4323.5);
	ck_assert(expect(ex, &sol, "exact")->number == 4608);
	ck_assert(expect(ex, &sol, "exact_steps")->number == 1821);
	ck_assert(fabs(expect(ex, &sol, "rel_error")->number - 284.5 / 4608) < 1e-15);
	ck_assert_ptr_nonnull(strstr(sol.worked, "2048.625"));
	ck_assert_ptr_nonnull(strstr(sol.worked, "4323.5"));
	/* the mistakes are recognised */
	static const struct {
		const char *field, *answer, *says;
	} wrong[] = {
		{ "result", "4608", "exact sum" },
		{ "result", "4323", NULL },
		{ "rel_error", "6.174", "percent" },
		{ "rel_error", "284.5", "absolute error" },
		{ "rel_error", "0.0658", "accumulated result" },   /* 284.5 / 4323.5 */
		{ "exact_steps", "1822", "first that loses" },
	};
	for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
		char fb[512];
		int f = ex_field_index(ex, wrong[i].field);
		ck_assert_int_eq(ex_check(ex, &sol, (size_t)f, wrong[i].answer, fb, sizeof fb), EX_WRONG);
		if (wrong[i].says)
			ck_assert_msg(strstr(fb, wrong[i].says) != NULL, "%s=%s: %s", wrong[i].field, wrong[i].answer, fb);
	}
	char fb[512];
	ck_assert_int_eq(ex_check(ex, &sol, (size_t)ex_field_index(ex, "result"), "4323.5", fb, sizeof fb), EX_CORRECT);
	ex_solution_free(&sol);
	free_shipped();
}
END_TEST

/* Rounding to nearest instead of truncating (each add's sum rounded half
 * to even to N bits, computed here in integers) is a named mistake. Not
 * with the default p = 1.125: past 2048 each sum is a tie that goes to the
 * even side, down, which is what truncation gives; p = 1.1875 = 1.0011b
 * leaves 3/16 over a cut of 1/4, more than half, and rounds up. */
START_TEST(nearest_is_named)
{
	load_shipped();
	const ex_exercise *ex = get("fp8.3");
	ex_solution sol;
	solve_with(ex, "p", "1.1875", &sol);
	uint64_t pi = (uint64_t)ldexp(1.1875, 24), acc = 0;
	for (int k = 0; k < 4096; k++) {
		uint64_t v = acc + pi;
		int b = bit_length(v);
		uint64_t cut = b > 14 ? (uint64_t)1 << (b - 14) : 1;
		uint64_t q = v / cut, r = v % cut;
		if (r * 2 > cut || (r * 2 == cut && (q & 1)))
			q++;
		acc = q * cut;
	}
	char ans[64], fb[512];
	snprintf(ans, sizeof ans, "%.17g", ldexp((double)acc, -24));
	ck_assert_int_eq(ex_check(ex, &sol, (size_t)ex_field_index(ex, "result"), ans, fb, sizeof fb), EX_WRONG);
	ck_assert_msg(strstr(fb, "rounding to nearest") != NULL, "%s: %s", ans, fb);
	ex_solution_free(&sol);
	free_shipped();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exercise_accum");
	TCase *tc = tcase_create("fp8.3");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_variant);
	tcase_add_test(tc, default_by_hand);
	tcase_add_test(tc, nearest_is_named);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
