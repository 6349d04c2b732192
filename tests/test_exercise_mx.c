/* Exercises mx.1-mx.4 (lesson low-precision): every variant keeps its premise
 * and every expected answer agrees with an oracle written here from the
 * definitions (OCP MX v1.0's floor rule, the ceil rule, the E2M1 magnitude
 * table, the e4m3 decoding formula, element width + 8 / block), sharing no
 * code with quant/ or fmt/. The diagnosed mistakes are checked on answers
 * built here the wrong way (the other rule, an emax off by one, no tensor
 * scale, the scale counted per element). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "ex_fixture.h"
#include "testutil.h"

#define NSEEDS 20
#define NSTUDENTS 100

static void variant_k(const ex_exercise *ex, int k, ex_variant *v)
{
	char seed[16], student[16];
	snprintf(seed, sizeof seed, "c%d", k / NSTUDENTS);
	snprintf(student, sizeof student, "s%d", k % NSTUDENTS);
	ex_variant_make(ex, seed, student, v);
}

static void solve(const ex_exercise *ex, const ex_variant *v, ex_solution *sol)
{
	char err[256];
	ck_assert_msg(ex_solve(ex, v, sol, err, sizeof err) == MP_OK, "%s: %s", ex->id, err);
}

static const char *param(const ex_exercise *ex, const ex_variant *v, const char *name)
{
	const char *t = ex_variant_get(ex, v, name);
	ck_assert_msg(t != NULL, "%s has no parameter %s", ex->id, name);
	return t;
}

/* ---- oracles ------------------------------------------------------------------- */

/* "7,0.3,-1.2" into v (strtod: every shipped value is a short decimal). */
static size_t block_values(const char *t, double *v, size_t cap)
{
	size_t n = 0;
	const char *p = t;
	while (*p && n < cap) {
		char *end;
		v[n++] = strtod(p, &end);
		ck_assert_msg(end != p, "block '%s'", t);
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

static double amax_of(const double *v, size_t n)
{
	double a = 0;
	for (size_t i = 0; i < n; i++)
		a = fmax(a, fabs(v[i]));
	return a;
}

/* floor(log2 a) for a > 0, from frexp (a = m 2^e with 0.5 <= m < 1). */
static int floor_log2(double a)
{
	int e;
	frexp(a, &e);
	return e - 1;
}

/* The smallest k with max_elem x 2^k >= amax: the ceil rule. */
static int ceil_rule(double amax, double max_elem)
{
	int k = -130;
	while (ldexp(max_elem, k) < amax)
		k++;
	return k;
}

/* E2M1 bits of y (already divided by the scale): nearest of the eight
 * magnitudes, ties to the even code, beyond 6 saturated; negative values
 * (zero included) get the sign bit. */
static unsigned e2m1_bits(double y)
{
	static const double m[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
	double a = fabs(y);
	unsigned code = 7;   /* beyond the last midpoint, 5: 6, and saturated beyond 6 */
	for (unsigned k = 0; k < 7; k++) {
		double mid = (m[k] + m[k + 1]) / 2;
		if (a < mid || a == mid) {
			code = a < mid || k % 2 == 0 ? k : k + 1;
			break;
		}
	}
	return code | (signbit(y) ? 8u : 0u);
}

static double e2m1_value(unsigned b)
{
	static const double m[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
	return (b & 8u ? -1 : 1) * m[b & 7u];
}

/* fp8-e4m3 (OCP fn, bias 7) by the formula; NaN for S.1111.111. */
static double e4m3_value(unsigned b)
{
	unsigned e = (b >> 3) & 15u, f = b & 7u;
	if (e == 15 && f == 7)
		return NAN;
	double mag = e ? ldexp(1 + f / 8.0, (int)e - 7) : ldexp(f / 8.0, -6);
	return b & 0x80u ? -mag : mag;
}

/* "2^-10", "3*2^-12" or a decimal. */
static double parse_scale(const char *t)
{
	double a;
	int e;
	if (sscanf(t, "2^%d", &e) == 1)
		return ldexp(1, e);
	if (sscanf(t, "%lf*2^%d", &a, &e) == 2)
		return ldexp(a, e);
	return strtod(t, NULL);
}

/* ---- mx.1: the scale under both rules and one element's bits -------------------- */

START_TEST(mx1_against_the_rules)
{
	const ex_exercise *ex = get("mx.1");
	for (int k = 0; k < NSEEDS * NSTUDENTS; k++) {
		ex_variant v;
		variant_k(ex, k, &v);
		double x[32];
		size_t n = block_values(param(ex, &v, "block"), x, 32);
		size_t i = (size_t)atoi(param(ex, &v, "i"));
		ck_assert(i < n);
		double amax = amax_of(x, n);
		int ko = floor_log2(amax) - 2;   /* E2M1: 6 = 1.5 x 2^2 */
		int kc = ceil_rule(amax, 6);
		/* the premise: the two rules differ for every student */
		ck_assert_msg(ko != kc, "%s: both rules give 2^%d", param(ex, &v, "block"), ko);
		ex_solution s;
		solve(ex, &v, &s);
		ck_assert(expect(ex, &s, "ocp_exponent")->number == ko);
		ck_assert(expect(ex, &s, "ceil_exponent")->number == kc);
		ck_assert_uint_eq(expect(ex, &s, "ocp_scale_bits")->bits, (unsigned)(ko + 127));
		ck_assert_uint_eq(expect(ex, &s, "ceil_scale_bits")->bits, (unsigned)(kc + 127));
		unsigned bo = e2m1_bits(x[i] / ldexp(1, ko)), bc = e2m1_bits(x[i] / ldexp(1, kc));
		ck_assert_msg(expect(ex, &s, "ocp_elem_bits")->bits == bo, "%s [%zu]: 0x%x, oracle 0x%x",
		              param(ex, &v, "block"), i, expect(ex, &s, "ocp_elem_bits")->bits, bo);
		ck_assert_uint_eq(expect(ex, &s, "ceil_elem_bits")->bits, bc);
		ck_assert(expect(ex, &s, "ocp_elem_value")->number == e2m1_value(bo) * ldexp(1, ko));
		/* quant's amax is within an ulp of the nearest binary64 (0.05 gives 0.049999999999999996) */
		ck_assert(fabs(expect(ex, &s, "amax")->number - amax) <= 1e-15 * amax);
		ex_solution_free(&s);
	}
}
END_TEST

START_TEST(mx1_mistakes)
{
	const ex_exercise *ex = get("mx.1");
	ex_solution s;
	/* the lesson's block of section 3 (no longer the default variant: a student's differs) */
	solve_with(ex, "block", "7,0.3,-1.2,2.5", &s);   /* element 1 */
	/* floor(log2 7) = 2: OCP 2^0 (0x7f), ceil: 7 / 6 -> 2^1 (0x80) */
	wrong_names(ex, &s, "ocp_exponent", "1", "ceil rule");
	wrong_names(ex, &s, "ceil_exponent", "0", "floor rule");
	wrong_names(ex, &s, "ocp_exponent", "2", "left out emax_elem");
	wrong_names(ex, &s, "ocp_exponent", "-1", "Off by one in emax_elem");
	wrong_names(ex, &s, "ocp_exponent", "1", "ceil");
	wrong_names(ex, &s, "ocp_scale_bits", "0x00", "bias 127");
	wrong_names(ex, &s, "ocp_scale_bits", "0x80", "ceil rule");
	wrong_names(ex, &s, "ceil_scale_bits", "0x7f", "floor-rule");
	/* 0.3 / 2 = 0.15 -> 0 under ceil; 0.3 -> 0.5 (0x1) under OCP */
	wrong_names(ex, &s, "ceil_elem_bits", "0x1", "OCP's scale");
	ex_solution_free(&s);
	/* element 2, -1.2: the sign bit forgotten; element 0, 7: it saturates (6), unclipped 8 */
	solve_with2(ex, "block", "7,0.3,-1.2,2.5", "i", "2", &s);
	wrong_names(ex, &s, "ocp_elem_bits", "0x2", "sign bit");
	ex_solution_free(&s);
	solve_with2(ex, "block", "7,0.3,-1.2,2.5", "i", "0", &s);
	ck_assert(expect(ex, &s, "ocp_elem_value")->number == 6);
	wrong_names(ex, &s, "ocp_elem_value", "8", "saturates");
	ex_solution_free(&s);
}
END_TEST

/* ---- mx.2: decoding an NVFP4 element -------------------------------------------- */

START_TEST(mx2_against_the_formula)
{
	const ex_exercise *ex = get("mx.2");
	for (int k = 0; k < NSEEDS * NSTUDENTS; k++) {
		ex_variant v;
		variant_k(ex, k, &v);
		unsigned eb = (unsigned)strtoul(param(ex, &v, "elem"), NULL, 16);
		unsigned sb = (unsigned)strtoul(param(ex, &v, "scale"), NULL, 16);
		double ts = parse_scale(param(ex, &v, "tensor_scale"));
		ck_assert_msg((double)(float)ts == ts, "tensor scale %s is not an fp32 value", param(ex, &v, "tensor_scale"));
		double e = e2m1_value(eb), sc = e4m3_value(sb);
		/* the premise: a nonzero element and a positive, finite block scale */
		ck_assert(e != 0 && sc > 0 && isfinite(sc));
		ex_solution s;
		solve(ex, &v, &s);
		ck_assert(expect(ex, &s, "elem_value")->number == e);
		ck_assert(expect(ex, &s, "block_scale")->number == sc);
		double want = e * sc * ts, got = expect(ex, &s, "value")->number;
		ck_assert_msg(fabs(got - want) <= 1e-12 * fabs(want), "%g x %g x %g: %.17g", e, sc, ts, got);
		ex_solution_free(&s);
	}
}
END_TEST

START_TEST(mx2_mistakes)
{
	const ex_exercise *ex = get("mx.2");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);   /* 0xb = -1.5, 0x4f = 2^2 x 1.875 = 7.5, s_t 2^-10 */
	ck_assert(expect(ex, &s, "value")->number == -1.5 * 7.5 / 1024);
	wrong_names(ex, &s, "value", "-11.25", "tensor scale");
	wrong_names(ex, &s, "value", "-1.5*2^-10", "block scale");
	wrong_names(ex, &s, "value", "0.010986328125", "sign");
	/* 0x4f read as e8m0: 2^(79 - 127) */
	wrong_names(ex, &s, "block_scale", "2^-48", "e8m0");
	wrong_names(ex, &s, "elem_value", "1.5", "sign");
	ex_solution_free(&s);
}
END_TEST

/* ---- mx.3: bits per parameter ---------------------------------------------------- */

START_TEST(mx3_against_the_count)
{
	static const struct {
		const char *name;
		int width, block;
	} t[] = {
		{ "mxfp8-e4m3", 8, 32 }, { "mxfp8-e5m2", 8, 32 }, { "mxfp6-e3m2", 6, 32 },
		{ "mxfp6-e2m3", 6, 32 }, { "mxfp4", 4, 32 },      { "nvfp4", 4, 16 },
	};
	const ex_exercise *ex = get("mx.3");
	int seen_nv = 0, seen_mx = 0;
	for (int k = 0; k < NSEEDS * NSTUDENTS; k++) {
		ex_variant v;
		variant_k(ex, k, &v);
		const char *f = param(ex, &v, "format");
		double P = strtod(param(ex, &v, "P"), NULL);
		size_t j = 0;
		while (j < sizeof t / sizeof t[0] && strcmp(t[j].name, f))
			j++;
		ck_assert_msg(j < sizeof t / sizeof t[0], "format %s", f);
		double bits = t[j].width + 8.0 / t[j].block;
		ex_solution s;
		solve(ex, &v, &s);
		ck_assert(expect(ex, &s, "bits_per_param")->number == bits);
		ck_assert(expect(ex, &s, "scale_bits_per_param")->number == 8.0 / t[j].block);
		double gb = P * bits / 8 / 1e9;
		ck_assert(fabs(expect(ex, &s, "total_gb")->number - gb) <= 1e-12 * gb);
		seen_nv += !strcmp(f, "nvfp4");
		seen_mx += !strcmp(f, "mxfp4");
		ex_solution_free(&s);
	}
	ck_assert(seen_nv > 0 && seen_mx > 0);
	/* the lesson's figures, by hand: 4 + 8/32 and 4 + 8/16 */
	ex_solution s;
	solve_with(ex, "format", "mxfp4", &s);
	ck_assert(expect(ex, &s, "bits_per_param")->number == 4.25);
	wrong_names(ex, &s, "bits_per_param", "4", "element alone");
	wrong_names(ex, &s, "bits_per_param", "12", "shared by the 32");
	wrong_names(ex, &s, "bits_per_param", "5", "not a 32-bit float");
	wrong_names(ex, &s, "bits_per_param", "4.5", "one per 32");
	/* 7e9 x 4.25 / 8 = 3.71875e9 bytes; in bits 29.75e9 */
	wrong_names(ex, &s, "total_gb", "29.75", "gigabits");
	wrong_names(ex, &s, "total_gb", "3.5", "block scales");
	ex_solution_free(&s);
	solve_with(ex, "format", "nvfp4", &s);
	ck_assert(expect(ex, &s, "bits_per_param")->number == 4.5);
	wrong_names(ex, &s, "bits_per_param", "4.25", "one per 16");
	ex_solution_free(&s);
}
END_TEST

/* ---- mx.4: the element the floor rule saturates ---------------------------------- */

START_TEST(mx4_against_the_rule)
{
	const ex_exercise *ex = get("mx.4");
	int negative = 0, total = 0;
	for (int k = 0; k < NSEEDS * NSTUDENTS; k++) {
		ex_variant v;
		variant_k(ex, k, &v);
		double x[32];
		size_t n = block_values(param(ex, &v, "block"), x, 32);
		double amax = amax_of(x, n);
		double X = ldexp(1, floor_log2(amax) - 8);   /* E4M3: 448 = 1.75 x 2^8 */
		double Xc = ldexp(1, ceil_rule(amax, 448));
		size_t nsat = 0, sat = 0, top = 0;
		for (size_t i = 0; i < n; i++) {
			if (fabs(x[i]) / X > 448) {
				nsat++;
				sat = i;
			}
			ck_assert(fabs(x[i]) / Xc <= 448);   /* the ceil rule saturates nothing */
			if (x[i] > x[top])
				top = i;
		}
		/* the premise: exactly one element saturates */
		ck_assert_msg(nsat == 1, "%s: %zu saturate", param(ex, &v, "block"), nsat);
		ex_solution s;
		solve(ex, &v, &s);
		ck_assert(expect(ex, &s, "saturates")->number == (double)sat);
		ck_assert(expect(ex, &s, "stored")->number == copysign(448 * X, x[sat]));
		negative += top != sat;
		total++;
		ex_solution_free(&s);
	}
	/* the largest value is not always the one that saturates: amax is a magnitude */
	ck_assert(negative > total / 4 && negative < total);
}
END_TEST

START_TEST(mx4_mistakes)
{
	const ex_exercise *ex = get("mx.4");
	ex_solution s;
	/* the lesson's 1.9 (section 3), no longer the default variant */
	solve_with(ex, "block", "1.2,-1.9,0.5,1.7", &s);   /* -1.9 / 2^-8 = -486.4 */
	ck_assert(expect(ex, &s, "saturates")->number == 1);
	ck_assert(expect(ex, &s, "stored")->number == -1.75);
	wrong_names(ex, &s, "saturates", "2", "Count from 0");
	wrong_names(ex, &s, "saturates", "3", "magnitudes");
	wrong_names(ex, &s, "stored", "1.75", "sign");
	/* unclipped: -486.4 -> -480 in 3 fraction bits, x 2^-8 = -1.875 (the ceil rule's too) */
	wrong_names(ex, &s, "stored", "-1.9", "cannot be stored");
	ex_solution_free(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("exercise_mx");
	TCase *tc = tcase_create("mx");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, load_shipped, free_shipped);
	tcase_add_test(tc, mx1_against_the_rules);
	tcase_add_test(tc, mx1_mistakes);
	tcase_add_test(tc, mx2_against_the_formula);
	tcase_add_test(tc, mx2_mistakes);
	tcase_add_test(tc, mx3_against_the_count);
	tcase_add_test(tc, mx4_against_the_rule);
	tcase_add_test(tc, mx4_mistakes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
