/* Grading one Gradescope submission (teach/autograde.h) in a root made
 * here: lab.json read back as written and refused when malformed, and
 * results against answers whose rightness follows from the formats'
 * definitions (fp16's smallest normal is 2^-14, bf16's and fp32's 2^-126:
 * the same for every variant of 7.4a), not from the program. */
/* nftw: XSI (ncursesw's flags may have defined 600 already, enough) */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "teach/autograde.h"
#include "teach/exercise.h"
#include "testutil.h"

static ex_set shipped;
static char root[64];

static void write_file(const char *rel, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	FILE *fp = fopen(path, "w");
	ck_assert(fp);
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

static void setup(void)
{
	ex_diags d = { 0 };
	char exdir[4096];
	snprintf(exdir, sizeof exdir, "%s/exercises", testutil_srcdir());
	memset(&shipped, 0, sizeof shipped);
	ck_assert_int_eq(ex_load_dir(&shipped, exdir, &d), MP_OK);
	ex_diags_free(&d);
	snprintf(root, sizeof root, "/tmp/mixprec-autograde-XXXXXX");
	ck_assert(mkdtemp(root));
	char path[256];
	snprintf(path, sizeof path, "%s/source", root);
	ck_assert_int_eq(mkdir(path, 0777), 0);
	snprintf(path, sizeof path, "%s/submission", root);
	ck_assert_int_eq(mkdir(path, 0777), 0);
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

static void teardown(void)
{
	nftw(root, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	ex_set_free(&shipped);
}

/* Loads root's lab.json after writing text there. */
static mp_status load(const char *text, ag_config *c, char *err, size_t n)
{
	write_file("source/lab.json", text);
	char path[256];
	snprintf(path, sizeof path, "%s/source/lab.json", root);
	return ag_config_load(c, path, err, n);
}

START_TEST(config_round_trip)
{
	const char *ids[] = { "7.4a", "7.4c" };
	char *text = ag_config_text("fall26", ids, 2, "roster.csv");
	ck_assert(text);
	ag_config c;
	char err[600];
	ck_assert_int_eq(load(text, &c, err, sizeof err), MP_OK);
	free(text);
	ck_assert_str_eq(c.seed, "fall26");
	ck_assert_uint_eq(c.nids, 2);
	ck_assert_str_eq(c.ids[0], "7.4a");
	ck_assert_str_eq(c.ids[1], "7.4c");
	ck_assert_str_eq(c.roster, "roster.csv");
	ag_config_free(&c);
	text = ag_config_text("s", ids, 1, NULL);
	ck_assert_int_eq(load(text, &c, err, sizeof err), MP_OK);
	free(text);
	ck_assert_ptr_null(c.roster);
	ag_config_free(&c);
}
END_TEST

START_TEST(config_refused)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "{\"course_seed\": 5, \"exercises\": [\"7.4a\"]}", "course_seed" },
		{ "{\"course_seed\": \"s\", \"exercises\": []}", "exercises" },
		{ "{\"course_seed\": \"s\", \"exercises\": [7]}", "exercises[0]" },
		{ "{\"course_seed\": \"s\", \"exercises\": [\"7.4a\"], \"roster\": \"../r.csv\"}", "roster" },
		{ "{\"course_seed\": \"s\", \"course_seed\": \"t\", \"exercises\": [\"7.4a\"]}", "duplicate" },
		{ "{\"course_seed\": ", "lab.json:1" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ag_config c;
		char err[600] = "";
		ck_assert_int_ne(load(bad[i].text, &c, err, sizeof err), MP_OK);
		ck_assert_msg(strstr(err, bad[i].why), "case %zu: '%s' lacks '%s'", i, err, bad[i].why);
	}
}
END_TEST

/* The test named name in results r. */
static json_t *test_named(json_t *r, const char *name)
{
	json_t *tests = json_object_get(r, "tests");
	for (size_t i = 0; i < json_array_size(tests); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(tests, i), "name")), name))
			return json_array_get(tests, i);
	return NULL;
}

static json_t *grade(void)
{
	write_file("source/lab.json", "{\"course_seed\": \"c1\", \"exercises\": [\"7.4a\"], \"roster\": null}");
	ag_config c;
	char err[600], path[256];
	snprintf(path, sizeof path, "%s/source/lab.json", root);
	ck_assert_int_eq(ag_config_load(&c, path, err, sizeof err), MP_OK);
	json_t *r = NULL;
	ck_assert_int_eq(ag_grade(root, &c, &shipped, &r), MP_OK);
	ag_config_free(&c);
	ck_assert(r);
	return r;
}

/* fp16_min_normal 2^-14 and bf16_min_normal 2^-126 right, fp32_min_normal
 * 1 wrong, fp16_flushes and bf16_stored not answered: 2 points of 5. */
START_TEST(partial_score)
{
	write_file("submission_metadata.json", "{\"users\": [{\"sid\": \"s1\", \"email\": \"e@x\"}]}");
	write_file("submission/whatever.csv", "student_id,exercise,field,answer\n"
	                                      "s1,7.4a,fp16_min_normal,2^-14\n"
	                                      "s1,7.4a,bf16_min_normal,1.1754943508222875e-38\n"
	                                      "s1,7.4a,fp32_min_normal,1\n");
	json_t *r = grade();
	ck_assert_double_eq(json_real_value(json_object_get(r, "score")), 2.0);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "tests")), 5);
	static const char *const right[] = { "7.4a fp16_min_normal", "7.4a bf16_min_normal" };
	static const char *const wrong[] = { "7.4a fp32_min_normal", "7.4a fp16_flushes", "7.4a bf16_stored" };
	for (size_t i = 0; i < 2; i++) {
		json_t *t = test_named(r, right[i]);
		ck_assert_msg(t, "no test %s", right[i]);
		ck_assert_str_eq(json_string_value(json_object_get(t, "status")), "passed");
		ck_assert_double_eq(json_real_value(json_object_get(t, "score")), 1.0);
	}
	for (size_t i = 0; i < 3; i++) {
		json_t *t = test_named(r, wrong[i]);
		ck_assert_msg(t, "no test %s", wrong[i]);
		ck_assert_str_eq(json_string_value(json_object_get(t, "status")), "failed");
		ck_assert_double_eq(json_real_value(json_object_get(t, "score")), 0.0);
		ck_assert_double_eq(json_real_value(json_object_get(t, "max_score")), 1.0);
	}
	ck_assert_str_eq(json_string_value(json_object_get(test_named(r, "7.4a fp16_flushes"), "output")),
	                 "fp16_flushes: no answer");
	ck_assert(strstr(json_string_value(json_object_get(r, "output")), "student s1"));
	/* written and read back as the same object */
	char err[600], path[256];
	ck_assert_int_eq(ag_results_write(root, r, err, sizeof err), MP_OK);
	snprintf(path, sizeof path, "%s/results/results.json", root);
	json_error_t je;
	json_t *back = json_load_file(path, 0, &je);
	ck_assert_msg(back, "%s", je.text);
	ck_assert(json_equal(back, r));
	json_decref(back);
	json_decref(r);
}
END_TEST

/* No metadata and a cut UTF-8 sequence in the CSV: score 0, every field a
 * failed test, both problems named. */
START_TEST(ungraded_submission)
{
	write_file("submission/a.csv", "student_id,exercise,field,answer\ns1,7.4a,fp16_min_normal,\xc3\n");
	json_t *r = grade();
	ck_assert_double_eq(json_real_value(json_object_get(r, "score")), 0.0);
	json_t *tests = json_object_get(r, "tests");
	ck_assert_uint_eq(json_array_size(tests), 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tests, i), "status")), "failed");
	const char *out = json_string_value(json_object_get(r, "output"));
	ck_assert_msg(strstr(out, "submission_metadata.json: missing"), "%s", out);
	ck_assert_msg(strstr(out, "a.csv:2: not UTF-8"), "%s", out);
	json_decref(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("autograde");
	TCase *tc = tcase_create("autograde");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, config_round_trip);
	tcase_add_test(tc, config_refused);
	tcase_add_test(tc, partial_score);
	tcase_add_test(tc, ungraded_submission);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
