/* The shipped exercise set for the exercise tests: loaded from the source
 * tree (testutil_srcdir), looked up by id, solved with one parameter set. */
#ifndef MIXPREC_TESTS_EX_FIXTURE_H
#define MIXPREC_TESTS_EX_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "teach/exercise.h"
#include "testutil.h"

static ex_set shipped;

/* Loads exercises/ of the source tree; every file must load cleanly. */
static inline void load_shipped(void)
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

static inline void free_shipped(void)
{
	ex_set_free(&shipped);
}

static inline const ex_exercise *get(const char *id)
{
	const ex_exercise *ex = ex_find(&shipped, id);
	ck_assert_msg(ex != NULL, "exercise %s missing", id);
	return ex;
}

/* Sets parameter param of v to value; a parameter the exercise lacks fails
 * the test. */
static inline void variant_set(const ex_exercise *ex, ex_variant *v, const char *param, const char *value)
{
	bool found = false;
	for (size_t i = 0; i < ex->nparams; i++)
		if (!strcmp(ex->params[i].name, param)) {
			snprintf(v->values[i], sizeof v->values[i], "%s", value);
			found = true;
		}
	ck_assert_msg(found, "%s has no parameter %s", ex->id, param);
}

/* Solves ex with the defaults, with parameter param (NULL: none) set to
 * value, and (p2 not NULL) p2 set to v2. */
static inline void solve_with2(const ex_exercise *ex, const char *param, const char *value, const char *p2,
                               const char *v2, ex_solution *sol)
{
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	if (param)
		variant_set(ex, &v, param, value);
	if (p2)
		variant_set(ex, &v, p2, v2);
	char err[256];
	ck_assert_msg(ex_solve(ex, &v, sol, err, sizeof err) == MP_OK, "%s: %s", ex->id, err);
}

static inline void solve_with(const ex_exercise *ex, const char *param, const char *value, ex_solution *sol)
{
	solve_with2(ex, param, value, NULL, NULL, sol);
}

/* The expected value of field in sol; a field the exercise lacks fails the test. */
static inline const ex_value *expect(const ex_exercise *ex, const ex_solution *sol, const char *field)
{
	int i = ex_field_index(ex, field);
	ck_assert_msg(i >= 0, "%s has no field %s", ex->id, field);
	return &sol->expect[i];
}

/* The feedback for answer on field; the test fails unless it is wrong and names want. */
static inline void wrong_names(const ex_exercise *ex, const ex_solution *sol, const char *field, const char *answer,
                               const char *want)
{
	char fb[512];
	int i = ex_field_index(ex, field);
	ck_assert(i >= 0);
	ck_assert_int_eq(ex_check(ex, sol, (size_t)i, answer, fb, sizeof fb), EX_WRONG);
	ck_assert_msg(strstr(fb, want) != NULL, "%s %s=%s: '%s' lacks '%s'", ex->id, field, answer, fb, want);
}

#endif
