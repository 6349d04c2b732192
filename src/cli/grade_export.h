/* mixprec grade's exports for the tools a course already uses: a Canvas or
 * Moodle gradebook CSV, and one PrairieLearn external-grader results.json
 * per student. Each follows the tool's published format (grade_export.c
 * and README.md, "From the roster to the course's gradebook", name the
 * pages). */
#ifndef MIXPREC_CLI_GRADE_EXPORT_H
#define MIXPREC_CLI_GRADE_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "teach/class_report.h"
#include "util/csvout.h"

typedef enum { GRADE_CSV, GRADE_CANVAS, GRADE_MOODLE, GRADE_PRAIRIELEARN } grade_format;

/* The format named by --format, or false. */
bool grade_format_parse(const char *name, grade_format *out);

/* The points an exercise is worth: its fields that are not optional (all of
 * them when every one is). */
size_t grade_points_possible(const ex_exercise *ex);
/* A student's points on an exercise: the share of the fields that count
 * answered right, times the points possible. */
double grade_points(const ex_exercise *ex, const class_sheet_row *row);

/* Reports (as "ROSTER:LINE: ...") every roster student that fmt's gradebook
 * cannot match a row to: Canvas needs a canvas_id, sis_user_id or
 * sis_login_id, Moodle an email or sis_user_id. Returns how many. */
size_t grade_export_unmatched(grade_format fmt, const class_grading *g, const char *roster_path);

/* The Canvas assignment id of each graded exercise, from --assignment-ids
 * EX=ID,... (IDs are whole numbers; every EX one of the graded exercises,
 * once): ids[e] points into the list (or is NULL), text is modified. False
 * (reported) on a bad list. */
bool grade_assignment_ids(char *text, const class_grading *g, const char **ids);

/* The Canvas or Moodle gradebook CSV of the grading on w; ids (Canvas, may
 * be NULL) as grade_assignment_ids made them. */
void grade_export_csv(grade_format fmt, csvw *w, const class_report *r, const class_grading *g,
                      const char *const *ids);

/* Whether dir can take the PrairieLearn results: missing, or an empty
 * folder (reported when not). */
bool grade_prairielearn_target_ok(const char *dir);
/* Writes DIR/ID/results.json for every student of the roster into a new
 * folder beside dir, then renames it to dir: dir appears whole or not at
 * all. CLI_OK, or CLI_ENV (reported). */
int grade_export_prairielearn(const char *dir, const class_report *r, const class_grading *g);

#endif
