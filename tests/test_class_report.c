/* The class report: every number checked against values worked out by hand
 * from a roster and submission written here (which answers are right
 * follows from the formats' definitions, not from the program). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "teach/class_report.h"
#include "teach/classroom.h"
#include "teach/exercise.h"
#include "testutil.h"

#define SEED "t1"

static ex_set shipped;
static char dir[64];
static char roster_path[128], sub_path[128];

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	ck_assert(fp);
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

/* Four students on 7.4a, 7.4c and 7.4f (ids given to the tests as indices):
 *   a: the three smallest normals right (2^-14 and 2^-126 twice), fp16_flushes
 *      "maybe" (not a choice), bf16_stored missing; 7.4c bytes_per_param 20
 *      (2 fp16 weights + 2 fp16 gradients + 4 fp32 accumulator + 4 fp32 master
 *      + 4 + 4 Adam moments), the rest missing; 7.4f steps 1 (one step takes v
 *      from 0 to c = 1 - beta2 <= 0.05 and the next adds c(1 - c), far more
 *      than half of bf16's or fp16's spacing there: v changes twice at least),
 *      stall_value missing.
 *   b: fp16_min_normal right, fp16_flushes "maybe"; bytes_per_param 16 (the
 *      4-byte accumulator left out); nothing in 7.4f (steps, optional, does
 *      not count then).
 *   c: fp16_min_normal 1 (wrong); bytes_per_param 16.
 *   d: all of 7.4a right: fp16_flushes yes when its G is at most 2^-25, half of
 *      fp16's smallest subnormal, and bf16_stored G itself (bf16 is normal down
 *      to 1.18e-38, and G is within the field's relative 5e-3 of its bf16 value). */
static void setup(void)
{
	ex_diags d = { 0 };
	char exdir[4096];
	snprintf(exdir, sizeof exdir, "%s/exercises", testutil_srcdir());
	memset(&shipped, 0, sizeof shipped);
	ck_assert_int_eq(ex_load_dir(&shipped, exdir, &d), MP_OK);
	ex_diags_free(&d);
	snprintf(dir, sizeof dir, "/tmp/mixprec-report-XXXXXX");
	ck_assert(mkdtemp(dir));
	snprintf(roster_path, sizeof roster_path, "%s/roster.csv", dir);
	snprintf(sub_path, sizeof sub_path, "%s/sub.csv", dir);
	write_file(roster_path, "student_id,name\na,Ann\nb,Bo\nc,Cy\nd,Di\n");

	const ex_exercise *a = ex_find(&shipped, "7.4a");
	ck_assert(a);
	ex_variant v;
	ex_variant_make(a, SEED, "d", &v);
	double G = strtod(ex_variant_get(a, &v, "G"), NULL);
	/* below 2^-25 fp16 flushes G; bf16 keeps it, G itself within the field's 5e-3 */
	bool flushes = G <= ldexp(1, -25);
	char text[2048];
	snprintf(text, sizeof text,
	         "student_id,exercise,field,answer\n"
	         "a,7.4a,fp16_min_normal,6.103515625e-05\n"
	         "a,7.4a,bf16_min_normal,1.1754943508222875e-38\n"
	         "a,7.4a,fp32_min_normal,1.1754943508222875e-38\n"
	         "a,7.4a,fp16_flushes,maybe\n"
	         "a,7.4c,bytes_per_param,20\n"
	         "a,7.4f,steps,1\n"
	         "b,7.4a,fp16_min_normal,6.103515625e-05\n"
	         "b,7.4a,fp16_flushes,maybe\n"
	         "b,7.4c,bytes_per_param,16\n"
	         "c,7.4a,fp16_min_normal,1\n"
	         "c,7.4c,bytes_per_param,16\n"
	         "d,7.4a,fp16_min_normal,6.103515625e-05\n"
	         "d,7.4a,bf16_min_normal,1.1754943508222875e-38\n"
	         "d,7.4a,fp32_min_normal,1.1754943508222875e-38\n"
	         "d,7.4a,fp16_flushes,%s\n"
	         "d,7.4a,bf16_stored,%.17g\n",
	         flushes ? "yes" : "no", G);
	write_file(sub_path, text);
}

static void teardown(void)
{
	unlink(sub_path);
	unlink(roster_path);
	rmdir(dir);
	ex_set_free(&shipped);
}

typedef struct {
	class_roster roster;
	const ex_exercise *ex[3];
	class_grading g;
	class_report r;
} graded;

/* Grades the submission on the exercises ids; with all three, no row of
 * the submission is reported. */
static void grade(graded *t, const char *const *ids, size_t nex)
{
	memset(t, 0, sizeof *t);
	ex_diags d = { 0 };
	ck_assert_int_eq(class_roster_load(&t->roster, roster_path, &d), MP_OK);
	ck_assert_uint_eq(d.count, 0);
	ck_assert_uint_eq(t->roster.count, 4);
	for (size_t e = 0; e < nex; e++)
		ck_assert((t->ex[e] = ex_find(&shipped, ids[e])) != NULL);
	ck_assert_int_eq(class_grading_init(&t->g, t->ex, nex, &t->roster, SEED), MP_OK);
	ck_assert_int_eq(class_grading_add(&t->g, sub_path, &d), MP_OK);
	ck_assert_msg(nex < 3 || d.count == 0, "%s", d.count ? d.msgs[0] : "");
	char err[512];
	ck_assert_int_eq(class_grade(&t->g, err, sizeof err), MP_OK);
	ck_assert_int_eq(class_report_build(&t->r, &t->g), MP_OK);
	ex_diags_free(&d);
}

static void ungrade(graded *t)
{
	class_report_free(&t->r);
	class_grading_free(&t->g);
	class_roster_free(&t->roster);
}

static void check_sheet(const class_sheet_row *row, size_t correct, size_t fields)
{
	ck_assert_uint_eq(row->correct, correct);
	ck_assert_uint_eq(row->fields, fields);
	ck_assert_double_eq_tol(row->score, fields ? (double)correct / (double)fields : 0.0, 1e-15);
	ck_assert(row->feedback != NULL);
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const class_field_row *field(const graded *t, size_t e, const char *name)
{
	const class_exercise_row *x = &t->r.exercise[e];
	for (size_t i = x->first; i < x->first + x->count; i++)
		if (!strcmp(t->ex[e]->fields[t->r.fields[i].field].name, name)) {
			ck_assert_uint_eq(t->r.fields[i].exercise, e);
			return &t->r.fields[i];
		}
	ck_abort_msg("no field %s", name);
	return NULL;
}

static void check_field(const class_field_row *f, size_t students, size_t correct, const char *wrong,
                        size_t wrong_count)
{
	ck_assert_uint_eq(f->students, students);
	ck_assert_uint_eq(f->correct, correct);
	ck_assert_double_eq_tol(f->rate, (double)correct / (double)students, 1e-15);
	if (wrong)
		ck_assert_pstr_eq(f->wrong, wrong);
	else
		ck_assert_ptr_null(f->wrong);
	ck_assert_uint_eq(f->wrong_count, wrong_count);
}

START_TEST(per_student_rows)
{
	static const char *const ids[] = { "7.4a", "7.4c", "7.4f" };
	graded t;
	grade(&t, ids, 3);
	ck_assert_uint_eq(t.r.nstudents, 4);
	ck_assert_uint_eq(t.r.nex, 3);
	/* a: 7.4a 3 of 5; 7.4c 1 of 3; 7.4f both fields count (steps answered) */
	check_sheet(class_report_sheet(&t.r, 0, 0), 3, 5);
	check_sheet(class_report_sheet(&t.r, 0, 1), 1, 3);
	check_sheet(class_report_sheet(&t.r, 0, 2), 0, 2);
	check_sheet(&t.r.total[0], 4, 10);
	const char *fb = class_report_sheet(&t.r, 0, 0)->feedback;
	ck_assert_msg(starts(fb, "fp16_flushes") && ends(fb, " | bf16_stored: no answer"), "%s", fb);
	fb = class_report_sheet(&t.r, 0, 2)->feedback;
	ck_assert_msg(starts(fb, "stall_value: no answer | steps"), "%s", fb);
	/* b: 1 of 5, 0 of 3, and in 7.4f only stall_value counts */
	check_sheet(class_report_sheet(&t.r, 1, 0), 1, 5);
	check_sheet(class_report_sheet(&t.r, 1, 1), 0, 3);
	check_sheet(class_report_sheet(&t.r, 1, 2), 0, 1);
	check_sheet(&t.r.total[1], 1, 9);
	fb = class_report_sheet(&t.r, 1, 1)->feedback;
	ck_assert_msg(starts(fb, "bytes_per_param: ") && strstr(fb, "accumulator") &&
	              ends(fb, " | total_gb: no answer | total_gib: no answer"), "%s", fb);
	ck_assert_str_eq(class_report_sheet(&t.r, 1, 2)->feedback, "stall_value: no answer");
	/* c: nothing right */
	check_sheet(class_report_sheet(&t.r, 2, 0), 0, 5);
	check_sheet(&t.r.total[2], 0, 9);
	ck_assert_double_eq(t.r.total[2].score, 0.0);
	/* d: 7.4a all right, no feedback */
	check_sheet(class_report_sheet(&t.r, 3, 0), 5, 5);
	ck_assert_str_eq(class_report_sheet(&t.r, 3, 0)->feedback, "");
	check_sheet(&t.r.total[3], 5, 9);
	ck_assert_str_eq(t.r.total[3].feedback, "");
	ck_assert_uint_eq(t.r.all_right, 0);
	ungrade(&t);

	/* on 7.4a alone, d has everything right */
	grade(&t, ids, 1);
	ck_assert_uint_eq(t.r.all_right, 1);
	check_sheet(&t.r.total[3], 5, 5);
	check_sheet(&t.r.total[0], 3, 5);
	ungrade(&t);
}
END_TEST

START_TEST(per_field_rows)
{
	static const char *const ids[] = { "7.4a", "7.4c", "7.4f" };
	graded t;
	grade(&t, ids, 3);
	ck_assert_uint_eq(t.r.nfields, 5 + 3 + 2);
	/* exercises: only d solves 7.4a; nobody 7.4c or 7.4f */
	ck_assert_uint_eq(t.r.exercise[0].solved, 1);
	ck_assert_uint_eq(t.r.exercise[0].students, 4);
	ck_assert_double_eq_tol(t.r.exercise[0].rate, 0.25, 1e-15);
	ck_assert_uint_eq(t.r.exercise[0].first, 0);
	ck_assert_uint_eq(t.r.exercise[0].count, 5);
	ck_assert_uint_eq(t.r.exercise[1].solved, 0);
	ck_assert_uint_eq(t.r.exercise[1].first, 5);
	ck_assert_uint_eq(t.r.exercise[2].solved, 0);
	ck_assert_uint_eq(t.r.exercise[2].first, 8);
	ck_assert_double_eq(t.r.exercise[2].rate, 0.0);
	/* 7.4a: missing answers are wrong but never the most common wrong answer */
	check_field(field(&t, 0, "fp16_min_normal"), 4, 3, "1", 1);
	check_field(field(&t, 0, "bf16_min_normal"), 4, 2, NULL, 0);
	check_field(field(&t, 0, "fp32_min_normal"), 4, 2, NULL, 0);
	check_field(field(&t, 0, "fp16_flushes"), 4, 1, "maybe", 2);
	check_field(field(&t, 0, "bf16_stored"), 4, 1, NULL, 0);
	ck_assert_ptr_null(field(&t, 0, "bf16_stored")->mistake);
	ck_assert_uint_eq(field(&t, 0, "bf16_stored")->mistake_count, 0);
	ck_assert_ptr_null(field(&t, 0, "bf16_stored")->mistake_example);
	/* 7.4c: b and c both left out the accumulator; the example is b's feedback */
	const class_field_row *bpp = field(&t, 1, "bytes_per_param");
	check_field(bpp, 4, 1, "16", 2);
	ck_assert_ptr_nonnull(bpp->mistake);
	ck_assert_uint_eq(bpp->mistake_count, 2);
	ck_assert_pstr_eq(bpp->mistake_example, t.g.feedback[class_slot(&t.g, 1, 1, 0)]);
	ck_assert_msg(strstr(bpp->mistake_example, "accumulator"), "%s", bpp->mistake_example);
	check_field(field(&t, 1, "total_gb"), 4, 0, NULL, 0);
	/* 7.4f: steps counts for a only (optional, unanswered by the others) */
	check_field(field(&t, 2, "stall_value"), 4, 0, NULL, 0);
	check_field(field(&t, 2, "steps"), 1, 0, "1", 1);
	ungrade(&t);
}
END_TEST

/* b and c left out the accumulator in 7.4c's bytes_per_param: that tag
 * with 2 students of 4 comes first (no other field has two students with
 * one tag: a and d answer differently, and c's other answers are unlike
 * b's). Every other row is checked against a count made here from the
 * grading's tags, student by student. */
START_TEST(misconception_rows)
{
	static const char *const ids[] = { "7.4a", "7.4c", "7.4f" };
	graded t;
	grade(&t, ids, 3);
	ck_assert_uint_ge(t.r.nmisconceptions, 1);
	const class_misconception_row *top = &t.r.misconceptions[0];
	ck_assert_uint_eq(top->exercise, 1);
	ck_assert_str_eq(t.ex[1]->fields[top->field].name, "bytes_per_param");
	ck_assert_uint_eq(top->students, 2);
	ck_assert_double_eq(top->share, 0.5);
	ck_assert_ptr_eq(top->tag, t.g.mistake[class_slot(&t.g, 1, 1, top->field)]);
	ck_assert_ptr_eq(top->tag, t.g.mistake[class_slot(&t.g, 2, 1, top->field)]);
	ck_assert_msg(strstr(top->tag, "accumulator"), "%s", top->tag);
	size_t tagged = 0, listed = 0;
	for (size_t s = 0; s < 4; s++)
		for (size_t e = 0; e < 3; e++)
			for (size_t f = 0; f < t.ex[e]->nfields; f++)
				tagged += t.g.mistake[class_slot(&t.g, s, e, f)] != NULL;
	for (size_t i = 0; i < t.r.nmisconceptions; i++) {
		const class_misconception_row *m = &t.r.misconceptions[i];
		size_t n = 0;
		for (size_t s = 0; s < 4; s++)
			n += t.g.mistake[class_slot(&t.g, s, m->exercise, m->field)] == m->tag;
		ck_assert_uint_eq(m->students, n);
		ck_assert_double_eq_tol(m->share, (double)n / 4.0, 1e-15);
		listed += n;
		if (i > 0)
			ck_assert_uint_ge(t.r.misconceptions[i - 1].students, m->students);
		for (size_t j = 0; j < i; j++)   /* one row per tag and field */
			ck_assert(t.r.misconceptions[j].tag != m->tag || t.r.misconceptions[j].exercise != m->exercise ||
			          t.r.misconceptions[j].field != m->field);
	}
	ck_assert_uint_eq(listed, tagged);
	ungrade(&t);
}
END_TEST

START_TEST(percent_as_shown)
{
	ck_assert_double_eq(class_report_percent(0, 0), 0.0);
	ck_assert_double_eq(class_report_percent(1, 4), 25.0);
	ck_assert_double_eq(class_report_percent(1, 40), 2.5);   /* exact: 100 / 40 */
	ck_assert_double_eq(class_report_percent(3, 3), 100.0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("class_report");
	TCase *tc = tcase_create("class_report");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, per_student_rows);
	tcase_add_test(tc, per_field_rows);
	tcase_add_test(tc, misconception_rows);
	tcase_add_test(tc, percent_as_shown);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
