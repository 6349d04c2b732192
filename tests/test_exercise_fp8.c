/* Exercises fp8.1 (kind fp8-delayed-scale) and fp8.2 (kind fp8-spike):
 * answers worked out by hand for three variants of each, every combination
 * of the shipped lists against plain double arithmetic on the rules (the
 * window of the last H values, fp8_max / amax / 2^margin; a spike's amax
 * stays in a max history for H pushes) with the premise of each variant,
 * and the recognised mistakes. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "ex_fixture.h"
#include "testutil.h"

static double num(const ex_exercise *ex, const ex_solution *sol, const char *field)
{
	return expect(ex, sol, field)->number;
}

static const ex_param *param(const ex_exercise *ex, const char *name)
{
	for (size_t i = 0; i < ex->nparams; i++)
		if (!strcmp(ex->params[i].name, name))
			return &ex->params[i];
	ck_abort_msg("%s has no parameter %s", ex->id, name);
	return NULL;
}

/* Solves ex with the parameters names[k] = values[k] (the others their
 * defaults). */
static void solve_params(const ex_exercise *ex, const char *const *names, const char *const *values, size_t n,
                         ex_solution *sol)
{
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	for (size_t k = 0; k < n; k++) {
		bool found = false;
		for (size_t i = 0; i < ex->nparams; i++)
			if (!strcmp(ex->params[i].name, names[k])) {
				snprintf(v.values[i], sizeof v.values[i], "%s", values[k]);
				found = true;
			}
		ck_assert_msg(found, "%s has no parameter %s", ex->id, names[k]);
	}
	char err[256];
	ck_assert_msg(ex_solve(ex, &v, sol, err, sizeof err) == MP_OK, "%s: %s", ex->id, err);
}

static void close_to(double got, double want, double rel, const char *what)
{
	ck_assert_msg(fabs(got - want) <= rel * fabs(want), "%s: %.9g, want %.9g", what, got, want);
}

static void verdict(const ex_exercise *ex, const ex_solution *sol, const char *field, const char *answer,
                    ex_verdict want, const char *says)
{
	char fb[1024];
	int i = ex_field_index(ex, field);
	ck_assert(i >= 0);
	ex_verdict v = ex_check(ex, sol, (size_t)i, answer, fb, sizeof fb);
	ck_assert_msg(v == want, "%s %s=%s: verdict %d: %s", ex->id, field, answer, v, fb);
	if (says)
		ck_assert_msg(strstr(fb, says) != NULL, "%s %s=%s: '%s' lacks '%s'", ex->id, field, answer, fb, says);
}

/* ---- fp8.1 ---------------------------------------------------------------------- */

/* By hand:
 * - the default: 6,1.5,2.5,1.25,0.75,0.5, H = 4, margin 0, E4M3: the window
 *   is 2.5,1.25,0.75,0.5 (6 and 1.5 dropped), amax 2.5, scale 448 / 2.5 =
 *   179.2; most_recent 448 / 0.5 = 896;
 * - 40,3,2,5,4,1, H = 3, margin 2, E5M2: window 5,4,1, amax 5, scale 57344
 *   / 5 / 4 = 2867.2; most_recent 57344 / 1 / 4 = 14336;
 * - 300,12,20,16,9,10, H = 5, margin 1, E4M3: window 12,20,16,9,10, amax
 *   20, scale 448 / 20 / 2 = 11.2; most_recent 448 / 10 / 2 = 22.4. */
START_TEST(delayed_scale_by_hand)
{
	load_shipped();
	const ex_exercise *ex = get("fp8.1");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	close_to(num(ex, &s, "history_amax"), 2.5, 1e-7, "default amax");
	close_to(num(ex, &s, "scale"), 179.2, 1e-6, "default scale");
	close_to(num(ex, &s, "recent_scale"), 896, 1e-7, "default most_recent");
	verdict(ex, &s, "scale", "179.2", EX_CORRECT, NULL);
	verdict(ex, &s, "history_amax", "6", EX_WRONG, "dropped out");        /* the whole list's max */
	verdict(ex, &s, "scale", "74.6667", EX_WRONG, "last H steps");        /* 448 / 6 */
	verdict(ex, &s, "scale", "896", EX_WRONG, "most_recent");             /* 448 / 0.5 */
	verdict(ex, &s, "scale", "0.00558", EX_WRONG, "inverse");             /* 2.5 / 448 */
	verdict(ex, &s, "scale", "22937.6", EX_WRONG, "other fp8 format");    /* 57344 / 2.5 */
	verdict(ex, &s, "recent_scale", "179.2", EX_WRONG, "max algorithm");
	ck_assert_ptr_nonnull(strstr(s.worked, "2.5, 1.25, 0.75, 0.5"));
	ex_solution_free(&s);

	static const char *const names[] = { "hist", "H", "margin", "format" };
	static const char *const v2[] = { "40,3,2,5,4,1", "3", "2", "fp8-e5m2" };
	solve_params(ex, names, v2, 4, &s);
	close_to(num(ex, &s, "history_amax"), 5, 1e-7, "v2 amax");
	close_to(num(ex, &s, "scale"), 2867.2, 1e-6, "v2 scale");
	close_to(num(ex, &s, "recent_scale"), 14336, 1e-7, "v2 most_recent");
	verdict(ex, &s, "scale", "11468.8", EX_WRONG, "margin");              /* 57344 / 5, no margin */
	verdict(ex, &s, "scale", "45875.2", EX_WRONG, "multiplies");          /* 57344 / 5 x 4 */
	ex_solution_free(&s);

	static const char *const v3[] = { "300,12,20,16,9,10", "5", "1", "fp8-e4m3" };
	solve_params(ex, names, v3, 4, &s);
	close_to(num(ex, &s, "history_amax"), 20, 1e-7, "v3 amax");
	close_to(num(ex, &s, "scale"), 11.2, 1e-6, "v3 scale");
	close_to(num(ex, &s, "recent_scale"), 22.4, 1e-6, "v3 most_recent");
	ex_solution_free(&s);
	free_shipped();
}
END_TEST

/* The values of a comma-separated list. */
static size_t parse_list(const char *text, double *xs, size_t cap)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", text);
	size_t n = 0;
	for (char *save = NULL, *w = strtok_r(buf, ",", &save); w && n < cap; w = strtok_r(NULL, ",", &save))
		xs[n++] = strtod(w, NULL);
	return n;
}

START_TEST(delayed_scale_every_variant)
{
	load_shipped();
	const ex_exercise *ex = get("fp8.1");
	const ex_param *ph = param(ex, "hist"), *pH = param(ex, "H"), *pm = param(ex, "margin"), *pf = param(ex, "format");
	static const char *const names[] = { "hist", "H", "margin", "format" };
	size_t count = 0;
	for (size_t a = 0; a < ph->nvalues; a++)
		for (size_t b = 0; b < pH->nvalues; b++)
			for (size_t c = 0; c < pm->nvalues; c++)
				for (size_t d = 0; d < pf->nvalues; d++) {
					const char *values[] = { ph->values[a], pH->values[b], pm->values[c], pf->values[d] };
					double xs[16];
					size_t n = parse_list(values[0], xs, 16), H = (size_t)atoi(values[1]);
					int m = atoi(values[2]);
					double top = strstr(values[3], "e5m2") ? 57344 : 448;
					double win = 0, all = 0;
					for (size_t i = 0; i < n; i++) {
						all = fmax(all, xs[i]);
						if (i + H >= n)
							win = fmax(win, xs[i]);
					}
					/* the premise: the window drops values, its max is neither the whole list's nor
					 * the newest, so max, most_recent and the window all matter */
					ck_assert_msg(n > H && win < all && win > xs[n - 1], "%s H %zu", values[0], H);
					ex_solution s;
					solve_params(ex, names, values, 4, &s);
					close_to(num(ex, &s, "history_amax"), win, 1e-6, values[0]);
					close_to(num(ex, &s, "scale"), top / win / ldexp(1, m), 1e-6, values[0]);
					close_to(num(ex, &s, "recent_scale"), top / xs[n - 1] / ldexp(1, m), 1e-6, values[0]);
					ex_solution_free(&s);
					count++;
				}
	ck_assert_uint_ge(count, 100);
	free_shipped();
}
END_TEST

/* ---- fp8.2 ---------------------------------------------------------------------- */

/* By hand (E4M3, 448):
 * - the default a = 0.5, F = 40, s = 5, H = 4: steps 2..5 cast with 448 /
 *   0.5 = 896; the spike 20 x 896 = 17920 = 40 x 448 saturates at step 5;
 *   its amax is in the history for the casts of steps 6..9 (4 steps), step
 *   10 is back at 896;
 * - a = 3, F = 8, s = 7, H = 16: 24 x 448/3 = 3584 = 8 x 448 at step 7;
 *   steps 8..23 reduced (16), back at step 24;
 * - a = 12, F = 100, s = 4, H = 3: 1200 x 448/12 = 100 x 448 at step 4;
 *   steps 5..7 reduced, back at step 8. */
START_TEST(spike_by_hand)
{
	load_shipped();
	const ex_exercise *ex = get("fp8.2");
	static const char *const names[] = { "a", "F", "s", "H" };
	static const struct {
		const char *v[4];
		double step, over, reduced, back;
	} cases[] = {
		{ { "0.5", "40", "5", "4" }, 5, 40, 4, 10 },
		{ { "3", "8", "7", "16" }, 7, 8, 16, 24 },
		{ { "12", "100", "4", "3" }, 4, 100, 3, 8 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		ex_solution s;
		solve_params(ex, names, cases[k].v, 4, &s);
		ck_assert(num(ex, &s, "overflow_step") == cases[k].step);
		close_to(num(ex, &s, "overshoot"), cases[k].over, 1e-6, "overshoot");
		ck_assert(num(ex, &s, "reduced_steps") == cases[k].reduced);
		ck_assert(num(ex, &s, "recovered_step") == cases[k].back);
		ck_assert_str_eq(expect(ex, &s, "why_current")->choice, "own");
		ex_solution_free(&s);
	}
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	verdict(ex, &s, "overflow_step", "6", EX_WRONG, "own step");
	verdict(ex, &s, "overshoot", "17920", EX_WRONG, "multiple of fp8_max");
	verdict(ex, &s, "overshoot", "0.025", EX_WRONG, "inverse");
	verdict(ex, &s, "reduced_steps", "3", EX_WRONG, "H = 4 pushes");
	verdict(ex, &s, "reduced_steps", "5", EX_WRONG, "back at the steady scale");
	verdict(ex, &s, "reduced_steps", "1", EX_WRONG, "most_recent");
	verdict(ex, &s, "recovered_step", "9", EX_WRONG, "still has the spike");
	verdict(ex, &s, "why_current", "history", EX_WRONG, "before it happens");
	verdict(ex, &s, "why_current", "saturate", EX_WRONG, "own amax");
	verdict(ex, &s, "why_current", "own", EX_CORRECT, NULL);
	ck_assert_ptr_nonnull(strstr(s.worked, "--amax 0.5,0.5,0.5,0.5,20,0.5,0.5,0.5,0.5,0.5"));
	ex_solution_free(&s);
	free_shipped();
}
END_TEST

START_TEST(spike_every_variant)
{
	load_shipped();
	const ex_exercise *ex = get("fp8.2");
	const ex_param *p[4] = { param(ex, "a"), param(ex, "F"), param(ex, "s"), param(ex, "H") };
	static const char *const names[] = { "a", "F", "s", "H" };
	size_t idx[4] = { 0 }, count = 0;
	for (;;) {
		const char *values[4];
		for (int k = 0; k < 4; k++)
			values[k] = p[k]->values[idx[k]];
		double a = strtod(values[0], NULL), F = strtod(values[1], NULL);
		size_t st = (size_t)atoi(values[2]), H = (size_t)atoi(values[3]);
		/* the premise: step 1 (scale 1) does not clip, the spike does, well past 448 */
		ck_assert(a <= 448 && F >= 3);
		ex_solution s;
		solve_params(ex, names, values, 4, &s);
		ck_assert(num(ex, &s, "overflow_step") == (double)st);
		close_to(num(ex, &s, "overshoot"), F, 1e-5, "overshoot");
		ck_assert(num(ex, &s, "reduced_steps") == (double)H);
		ck_assert(num(ex, &s, "recovered_step") == (double)(st + H + 1));
		ex_solution_free(&s);
		count++;
		int k = 0;
		while (k < 4 && ++idx[k] == p[k]->nvalues)
			idx[k++] = 0;
		if (k == 4)
			break;
	}
	ck_assert_uint_ge(count, 500);
	free_shipped();
}
END_TEST

/* A spike too small to clip, or a steady amax that clips at step 1 under
 * the initial scale 1, does not suit the kind: refused, not solved. */
START_TEST(spike_refuses_bad_parameters)
{
	load_shipped();
	const ex_exercise *ex = get("fp8.2");
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	for (size_t i = 0; i < ex->nparams; i++)
		if (!strcmp(ex->params[i].name, "F"))
			snprintf(v.values[i], sizeof v.values[i], "1");
	ex_solution s;
	char err[256];
	ck_assert_int_eq(ex_solve(ex, &v, &s, err, sizeof err), MP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "does not saturate"));
	ex_variant_make(ex, NULL, NULL, &v);
	for (size_t i = 0; i < ex->nparams; i++)
		if (!strcmp(ex->params[i].name, "a"))
			snprintf(v.values[i], sizeof v.values[i], "500");
	ck_assert_int_eq(ex_solve(ex, &v, &s, err, sizeof err), MP_EINVAL);
	free_shipped();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exercise_fp8");
	TCase *tc = tcase_create("fp8.1-fp8.2");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, delayed_scale_by_hand);
	tcase_add_test(tc, delayed_scale_every_variant);
	tcase_add_test(tc, spike_by_hand);
	tcase_add_test(tc, spike_every_variant);
	tcase_add_test(tc, spike_refuses_bad_parameters);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
