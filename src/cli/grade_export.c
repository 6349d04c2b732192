/* The Canvas and Moodle gradebook CSVs and the PrairieLearn results of a
 * grading, each in the layout its tool's documentation gives.
 *
 * Canvas: a Gradebook CSV import takes the columns of the Gradebook's own
 * export, Student, ID (Canvas's user id), SIS User ID, SIS Login ID and
 * Section, then one column per assignment, "Name (id)" when the assignment
 * exists; a new assignment column creates the assignment (the Ohio State
 * CarmenCanvas guide "Import a CSV file to Carmen Grades"; the column
 * layout as documented for the Canvas export by nemogb's "Detailed Canvas
 * Export Info"). The second row whose Student cell is "Points Possible" is
 * the one the Canvas export writes under its header.
 *
 * Moodle: a CSV grade import maps one column to a user field, "Email
 * address" to the email or "ID number" to the user's ID number, and the
 * other columns to grade items (Moodle Docs, "Grade import", CSV import).
 *
 * PrairieLearn: the external grader writes /grade/results/results.json
 * (PrairieLearn docs, "External grading", sections "The grading process"
 * and "Grading results"): score in [0, 1]; gradable (false: invalid input,
 * with format_errors); and the fields <pl-external-grader-results> shows:
 * message, output, and tests[] of name, description, points, max_points,
 * message, output; at most 1 MB. */
#include "cli/grade_export.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/strbuf.h"
#include "util/text.h"

/* The longest text one results.json string carries from a submission
 * (PrairieLearn takes a results file of at most 1 MB). */
#define PL_TEXT_MAX 8000

bool grade_format_parse(const char *name, grade_format *out)
{
	static const struct {
		const char *name;
		grade_format fmt;
	} names[] = {
		{ .name = "csv", .fmt = GRADE_CSV },
		{ .name = "canvas", .fmt = GRADE_CANVAS },
		{ .name = "moodle", .fmt = GRADE_MOODLE },
		{ .name = "prairielearn", .fmt = GRADE_PRAIRIELEARN },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i].name)) {
			*out = names[i].fmt;
			return true;
		}
	return false;
}

size_t grade_points_possible(const ex_exercise *ex)
{
	size_t n = 0;
	for (size_t f = 0; f < ex->nfields; f++)
		n += !ex->fields[f].optional;
	return n ? n : ex->nfields;
}

double grade_points(const ex_exercise *ex, const class_sheet_row *row)
{
	/* correct * P / fields: exactly correct when every field counts */
	return row->fields ? (double)row->correct * (double)grade_points_possible(ex) / (double)row->fields : 0.0;
}

size_t grade_export_unmatched(grade_format fmt, const class_grading *g, const char *roster_path)
{
	size_t n = 0;
	for (size_t s = 0; s < g->roster->count; s++) {
		const class_student *st = &g->roster->students[s];
		if (fmt == GRADE_CANVAS && !st->canvas_id[0] && !st->sis_user_id[0] && !st->sis_login_id[0]) {
			cli_error("grade", "%s:%ld: student %s has no canvas_id, sis_user_id or sis_login_id, by which Canvas "
			          "matches a row", roster_path, st->line, st->id);
			n++;
		} else if (fmt == GRADE_MOODLE && !st->email[0] && !st->sis_user_id[0]) {
			cli_error("grade", "%s:%ld: student %s has no email or sis_user_id, by which Moodle matches a row",
			          roster_path, st->line, st->id);
			n++;
		}
	}
	return n;
}

bool grade_assignment_ids(char *text, const class_grading *g, const char **ids)
{
	for (size_t e = 0; e < g->nex; e++)
		ids[e] = NULL;
	for (char *save = NULL, *w = strtok_r(text, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(w, '=');
		if (!eq || eq == w || !eq[1] || strspn(eq + 1, "0123456789") != strlen(eq + 1)) {
			cli_error("grade", "--assignment-ids: '%s' is not EXERCISE=ID with ID a whole number (e.g. 7.4a=12345)", w);
			return false;
		}
		*eq = '\0';
		size_t e = 0;
		while (e < g->nex && strcmp(g->ex[e]->id, w) != 0)
			e++;
		if (e == g->nex) {
			cli_error("grade", "--assignment-ids: '%s' is not an exercise of this lab (--exercises)", w);
			return false;
		}
		if (ids[e]) {
			cli_error("grade", "--assignment-ids: '%s' is given twice", w);
			return false;
		}
		ids[e] = eq + 1;
	}
	return true;
}

/* The column of exercise e in a gradebook: its id and title, and Canvas's
 * assignment id in parentheses when one is known. */
static void exercise_column(csvw *w, const ex_exercise *ex, const char *id)
{
	if (id)
		csvw_fieldf(w, "%s %s (%s)", ex->id, ex->title, id);
	else
		csvw_fieldf(w, "%s %s", ex->id, ex->title);
}

void grade_export_csv(grade_format fmt, csvw *w, const class_report *r, const class_grading *g,
                      const char *const *ids)
{
	static const char *const canvas[] = { "Student", "ID", "SIS User ID", "SIS Login ID", "Section", NULL };
	static const char *const moodle[] = { "Email address", "ID number", "Full name", NULL };
	for (const char *const *h = fmt == GRADE_CANVAS ? canvas : moodle; *h; h++)
		csvw_field(w, *h);
	for (size_t e = 0; e < r->nex; e++)
		exercise_column(w, g->ex[e], ids ? ids[e] : NULL);
	csvw_end_row(w);
	if (fmt == GRADE_CANVAS) {
		csvw_field(w, "Points Possible");
		for (int k = 0; k < 4; k++)
			csvw_field(w, "");
		for (size_t e = 0; e < r->nex; e++)
			csvw_fieldf(w, "%zu", grade_points_possible(g->ex[e]));
		csvw_end_row(w);
	}
	for (size_t s = 0; s < r->nstudents; s++) {
		const class_student *st = &g->roster->students[s];
		if (fmt == GRADE_CANVAS) {
			csvw_field(w, st->name[0] ? st->name : st->id);
			csvw_field(w, st->canvas_id);
			csvw_field(w, st->sis_user_id);
			csvw_field(w, st->sis_login_id);
			csvw_field(w, st->section);
		} else {
			csvw_field(w, st->email);
			csvw_field(w, st->sis_user_id);
			csvw_field(w, st->name[0] ? st->name : st->id);
		}
		for (size_t e = 0; e < r->nex; e++)
			csvw_fieldf(w, "%.2f", grade_points(g->ex[e], class_report_sheet(r, s, e)));
		csvw_end_row(w);
	}
}

/* ---- PrairieLearn ----------------------------------------------------------- */

/* text as a JSON string: valid UTF-8 without controls other than its line
 * breaks (a submission's bytes may be anything), at most PL_TEXT_MAX bytes,
 * cut on a character. */
static json_t *pl_string(const char *text)
{
	char buf[PL_TEXT_MAX + 4];
	size_t n = strlen(text);
	if (n > PL_TEXT_MAX) {
		n = PL_TEXT_MAX;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(buf, text, n);
	strcpy(buf + n, strlen(text) > n ? "..." : "");
	for (char *line = buf, *nl; line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		text_sanitize(line);
		if (nl)
			*nl = '\n';
	}
	return json_string(buf);
}


/* One exercise of student s as a PrairieLearn test. */
static json_t *pl_test(const class_report *r, const class_grading *g, size_t s, size_t e)
{
	const ex_exercise *ex = g->ex[e];
	const class_sheet_row *row = class_report_sheet(r, s, e);
	strbuf out = { 0 };
	for (size_t f = 0; f < ex->nfields; f++) {
		size_t k = class_slot(g, s, e, f);
		char line[600];
		if (!class_counts(g, s, e, f))
			snprintf(line, sizeof line, "%s: optional, not answered", ex->fields[f].name);
		else if (!g->feedback[k])
			snprintf(line, sizeof line, "%s: right", ex->fields[f].name);
		else
			snprintf(line, sizeof line, "%s", g->feedback[k]);
		strbuf_printf(&out, "%s\n", line);
	}
	char msg[200];
	snprintf(msg, sizeof msg, "%zu of %zu fields right", row->correct, row->fields);
	char name[120];
	snprintf(name, sizeof name, "Exercise %s", ex->id);
	json_t *t = json_pack("{s:s, s:o, s:f, s:I, s:s, s:o}", "name", name, "description",
	                      pl_string(ex->title), "points", grade_points(ex, row), "max_points",
	                      (json_int_t)grade_points_possible(ex), "message", msg, "output",
	                      out.oom ? NULL : pl_string(out.buf ? out.buf : ""));
	free(out.buf);
	return t;
}

/* The results of student s. */
static json_t *pl_results(const class_report *r, const class_grading *g, size_t s)
{
	json_t *tests = json_array();
	double points = 0, max = 0;
	size_t right = 0;
	strbuf out = { 0 };
	for (size_t e = 0; e < r->nex && tests; e++) {
		const class_sheet_row *row = class_report_sheet(r, s, e);
		points += grade_points(g->ex[e], row);
		max += (double)grade_points_possible(g->ex[e]);
		right += row->fields && row->correct == row->fields;
		strbuf_printf(&out, "%s: %zu of %zu fields right\n", g->ex[e]->id, row->correct, row->fields);
		if (json_array_append_new(tests, pl_test(r, g, s, e)) != 0) {
			json_decref(tests);
			tests = NULL;
		}
	}
	char msg[300];
	snprintf(msg, sizeof msg, "Student %s: %zu of %zu exercises right (%g of %g points).",
	         g->roster->students[s].id, right, r->nex, points, max);
	json_t *res = tests && !out.oom
	              ? json_pack("{s:b, s:f, s:s, s:o, s:o}", "gradable", 1, "score", max > 0 ? points / max : 0.0,
	                          "message", msg, "output", pl_string(out.buf ? out.buf : ""), "tests", tests)
	              : NULL;
	if (!res)
		json_decref(tests);
	free(out.buf);
	return res;
}

/* Removes the partial folder tmp and what it holds (STUDENT/results.json). */
static void remove_partial(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *de;
	char path[PATH_MAX + 300];
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(path, sizeof path, "%s/%s/results.json", tmp, de->d_name);
			unlink(path);
			snprintf(path, sizeof path, "%s/%s", tmp, de->d_name);
			rmdir(path);
		}
	if (d)
		closedir(d);
	rmdir(tmp);
}

bool grade_prairielearn_target_ok(const char *dir)
{
	struct stat sb;
	if (lstat(dir, &sb) != 0)
		return true;
	DIR *d = S_ISDIR(sb.st_mode) ? opendir(dir) : NULL;
	bool empty = d != NULL;
	struct dirent *de;
	while (d && empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	if (!empty)
		cli_error("grade", "--out: %s exists and is not an empty folder; give a new folder for the "
		          "PrairieLearn results", dir);
	return empty;
}

int grade_export_prairielearn(const char *dir, const class_report *r, const class_grading *g)
{
	char tmp[PATH_MAX], path[PATH_MAX + 200];
	if (snprintf(tmp, sizeof tmp, "%s.partXXXXXX", dir) >= (int)sizeof tmp || !mkdtemp(tmp)) {
		cli_error("grade", "cannot create a folder beside %s: %s", dir, strerror(errno));
		return CLI_ENV;
	}
	for (size_t s = 0; s < r->nstudents; s++) {
		const char *id = g->roster->students[s].id;
		snprintf(path, sizeof path, "%s/%s", tmp, id);
		json_t *res = pl_results(r, g, s);
		bool ok = res && mkdir(path, 0777) == 0;
		snprintf(path, sizeof path, "%s/%s/results.json", tmp, id);
		ok = ok && json_dump_file(res, path, JSON_INDENT(2) | JSON_ENSURE_ASCII) == 0;
		json_decref(res);
		if (!ok) {
			cli_error("grade", "cannot write %s: %s", path, res ? strerror(errno) : "out of memory");
			remove_partial(tmp);
			return CLI_ENV;
		}
	}
	mode_t mask = umask(0);
	umask(mask);
	chmod(tmp, 0777 & ~mask);   /* mkdtemp's folder is private; dir is an ordinary one */
	/* an empty folder dir (checked before) gives way to the whole new one */
	rmdir(dir);
	if (rename(tmp, dir) != 0) {
		cli_error("grade", "cannot rename %s to %s: %s", tmp, dir, strerror(errno));
		remove_partial(tmp);
		return CLI_ENV;
	}
	return CLI_OK;
}
