/* fr.1, stochastic rounding on the E2M1 grid, and rr.1, round to odd, ties
 * toward zero and equal-probability SR on it: every variant against an oracle
 * written here from the definitions (the eight E2M1 magnitudes, rounding up
 * with probability (t - down) / gap, nearest with ties to even), sharing no
 * code with fmt/; the variance also against a simulation of the coin flip. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "ex_fixture.h"
#include "testutil.h"

static const double grid[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };

START_TEST(every_variant_against_the_grid)
{
	const ex_exercise *ex = get("fr.1");
	unsigned gaps = 0;
	for (int k = 0; k < 400; k++) {
		char student[16];
		snprintf(student, sizeof student, "s%d", k);
		ex_variant v;
		ex_variant_make(ex, "c0", student, &v);
		double t = strtod(ex_variant_get(ex, &v, "t"), NULL);
		int j = 0;
		while (j < 7 && grid[j + 1] < t)
			j++;
		ck_assert_msg(j < 7 && grid[j] < t && t < grid[j + 1], "t = %g is on the grid or outside it", t);
		gaps |= 1u << j;
		double a = grid[j], b = grid[j + 1], mid = (a + b) / 2;
		/* ties to even: the even code is the one with index j even */
		double rne = t < mid ? a : t > mid ? b : (j % 2 == 0 ? a : b);
		ex_solution s;
		char err[256];
		ck_assert_msg(ex_solve(ex, &v, &s, err, sizeof err) == MP_OK, "%s", err);
		ck_assert(expect(ex, &s, "down")->number == a && expect(ex, &s, "up")->number == b);
		ck_assert(fabs(expect(ex, &s, "p_up")->number - (t - a) / (b - a)) < 1e-12);
		ck_assert(fabs(expect(ex, &s, "variance")->number - (t - a) * (b - t)) < 1e-12);
		ck_assert(expect(ex, &s, "rne_bias")->number == rne - t);
		ex_solution_free(&s);
	}
	/* the variants reach every gap of the grid */
	ck_assert_uint_eq(gaps, 0x7f);
}
END_TEST

/* The variance of one cast against the coin flip itself: N draws of up with
 * probability p give a sample variance within a few standard errors. */
START_TEST(variance_is_the_coin_flip)
{
	const ex_exercise *ex = get("fr.1");
	ex_solution s;
	solve_with(ex, "t", "5.2", &s);   /* between 4 and 6: p = 0.6, variance 1.2 x 0.8 = 0.96 */
	ck_assert(fabs(expect(ex, &s, "variance")->number - 0.96) < 1e-12);
	uint64_t x = 88172645463325252u;
	double sum = 0, sum2 = 0;
	const int N = 200000;
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double q = (double)(x >> 11) / 9007199254740992.0 < 0.6 ? 6 : 4;
		sum += q, sum2 += q * q;
	}
	double mean = sum / N, var = sum2 / N - mean * mean;
	ck_assert_msg(fabs(mean - 5.2) < 0.01, "mean %g", mean);   /* sd of the mean 0.98 / sqrt(N) = 0.0022 */
	ck_assert_msg(fabs(var - 0.96) < 0.01, "variance %g", var);
	ex_solution_free(&s);
}
END_TEST

START_TEST(mistakes_are_named)
{
	const ex_exercise *ex = get("fr.1");
	ex_solution s;
	solve_with(ex, "t", "2.6", &s);   /* 2 < 2.6 < 3: p 0.6, variance 0.24, nearest 3 */
	wrong_names(ex, &s, "p_up", "0.4", "probability of rounding down");
	wrong_names(ex, &s, "variance", "0.4898979485566356", "standard deviation");   /* sqrt(0.24) */
	wrong_names(ex, &s, "variance", "0.25", "midpoint");
	wrong_names(ex, &s, "rne_bias", "-0.4", "negative when t rounds down");
	wrong_names(ex, &s, "rne_bias", "0", "a bias, not noise");
	ex_solution_free(&s);
}
END_TEST

/* rr.1 on the same grid: rto keeps the neighbour with the odd index
 * (pattern), rnz the nearer one (a tie the smaller), sr-equal's mean the
 * midpoint and its bias the midpoint minus t. */
START_TEST(rounding_rules_every_variant)
{
	const ex_exercise *ex = get("rr.1");
	unsigned ties = 0, parted = 0;
	for (int k = 0; k < 400; k++) {
		char student[16];
		snprintf(student, sizeof student, "r%d", k);
		ex_variant v;
		ex_variant_make(ex, "c0", student, &v);
		double t = strtod(ex_variant_get(ex, &v, "t"), NULL);
		int j = 0;
		while (j < 7 && grid[j + 1] < t)
			j++;
		ck_assert_msg(j < 7 && grid[j] < t && t < grid[j + 1], "t = %g is on the grid or outside it", t);
		double a = grid[j], b = grid[j + 1], mid = (a + b) / 2;
		double rto = j % 2 == 1 ? a : b;
		double rnz = t <= mid ? a : b;
		double rne = t < mid ? a : t > mid ? b : (j % 2 == 0 ? a : b);
		ties += t == mid;
		parted += rnz != rne;
		ex_solution s;
		char err[256];
		ck_assert_msg(ex_solve(ex, &v, &s, err, sizeof err) == MP_OK, "%s", err);
		ck_assert(expect(ex, &s, "down")->number == a && expect(ex, &s, "up")->number == b);
		ck_assert_msg(expect(ex, &s, "rto")->number == rto, "t %g: rto %g, want %g", t,
		              expect(ex, &s, "rto")->number, rto);
		ck_assert_msg(expect(ex, &s, "rnz")->number == rnz, "t %g: rnz %g, want %g", t,
		              expect(ex, &s, "rnz")->number, rnz);
		ck_assert(fabs(expect(ex, &s, "sre_mean")->number - mid) < 1e-12);
		ck_assert(fabs(expect(ex, &s, "sre_bias")->number - (mid - t)) < 1e-12);
		ex_solution_free(&s);
	}
	/* the variants hold ties, and ties where rnz differs from rne */
	ck_assert(ties > 0 && parted > 0);
}
END_TEST

START_TEST(rounding_rules_mistakes)
{
	const ex_exercise *ex = get("rr.1");
	ex_solution s;
	solve_with(ex, "t", "1.75", &s);   /* the tie 1.5 (0x3, odd) | 2 (0x4): rto 1.5, rnz 1.5, rne 2 */
	ck_assert(expect(ex, &s, "rto")->number == 1.5 && expect(ex, &s, "rnz")->number == 1.5);
	wrong_names(ex, &s, "rto", "2", "ends in 0");
	wrong_names(ex, &s, "rnz", "2", "tie broken to even");
	ex_solution_free(&s);
	solve_with(ex, "t", "5.2", &s);   /* 4 < 5.2 < 6: rto 6 (0x7), mean 5, bias -0.2 */
	wrong_names(ex, &s, "rto", "4", "ends in 0");
	wrong_names(ex, &s, "sre_mean", "5.2", "proportional SR's expected value");
	wrong_names(ex, &s, "sre_bias", "0", "biased toward the midpoint");
	wrong_names(ex, &s, "sre_bias", "0.2", "expected value minus t");
	wrong_names(ex, &s, "rnz", "4", "farther neighbour");   /* 5.2 is past the midpoint 5: rnz 6 */
	ex_solution_free(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exercise_sr");
	TCase *tc = tcase_create("sr");
	tcase_add_checked_fixture(tc, load_shipped, free_shipped);
	tcase_add_test(tc, every_variant_against_the_grid);
	tcase_add_test(tc, variance_is_the_coin_flip);
	tcase_add_test(tc, mistakes_are_named);
	tcase_add_test(tc, rounding_rules_every_variant);
	tcase_add_test(tc, rounding_rules_mistakes);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
