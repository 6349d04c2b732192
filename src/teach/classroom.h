/* Classroom labs: rosters, submissions and grading against each student's
 * variant. Files come from outside and are read defensively: every problem
 * is reported as file:line and the rest is still used. */
#ifndef MIXPREC_TEACH_CLASSROOM_H
#define MIXPREC_TEACH_CLASSROOM_H

#include <stdbool.h>
#include <stddef.h>

#include "teach/exercise.h"
#include "util/status.h"

#define CLASS_ID_MAX 64          /* a student id: [A-Za-z0-9._@-], not starting with '.', '-' or '@' */
#define CLASS_FILE_MAX (64u << 20)

typedef struct {
	char id[CLASS_ID_MAX + 1];
	char *name;              /* may be empty */
	/* the identities a gradebook export keys its rows by, from the optional
	 * roster columns email, canvas_id, sis_user_id, sis_login_id and
	 * section (each may be empty; valid UTF-8, controls as blanks) */
	char *email, *canvas_id, *sis_user_id, *sis_login_id, *section;
	long line;
} class_student;

typedef struct {
	class_student *students;
	size_t count;
} class_roster;

/* Reads a roster CSV: a header with a student_id (or id) column and the
 * optional columns name, email, canvas_id, sis_user_id, sis_login_id and
 * section (class_student's; names case-insensitive, and Canvas's and Moodle's
 * spellings "SIS User ID", "Email address" and the like);
 * other columns are ignored. Bad rows (an empty or
 * unsafe id, a duplicate) go to diags as file:line and are skipped. MP_EIO
 * (message in diags) when the file cannot be read or has no student_id
 * column; MP_EPARSE when the CSV itself is malformed (the rows before the
 * error are kept); MP_ENOMEM. */
mp_status class_roster_load(class_roster *r, const char *path, ex_diags *diags);
void class_roster_free(class_roster *r);
int class_roster_find(const class_roster *r, const char *id);
/* The one rule for a student id, wherever one is given (a roster, a
 * submission, --student, $MIXPREC_STUDENT): 1 to CLASS_ID_MAX ASCII letters,
 * digits, '.', '_', '@' and '-', not starting with '.', '-' or '@' (an
 * option, a hidden file, a spreadsheet formula). MP_EINVAL with "student id
 * 'ID' is not usable (...)" in err otherwise. */
mp_status class_id_check(const char *id, char *err, size_t errlen);

/* The state of one grading: the answers of every student to every field of
 * the graded exercises. */
typedef struct {
	const ex_exercise *const *ex;   /* the exercises graded */
	size_t nex;
	const class_roster *roster;
	const char *seed;
	char **answer;                  /* [(s * nex + e) * EX_MAX_FIELDS + f], NULL: no answer */
	char **where;                   /* "file:line" of each answer */
	ex_verdict *verdict;            /* after class_grade */
	char **feedback;                /* after class_grade: per field, NULL when correct */
	const char **mistake;           /* after class_grade: the mistake's tag (ex_check_tagged), or NULL */
	size_t files;
} class_grading;

mp_status class_grading_init(class_grading *g, const ex_exercise *const *ex, size_t nex,
                             const class_roster *roster, const char *seed);
void class_grading_free(class_grading *g);

/* Reads one submission CSV: a header with student_id, exercise, field and
 * answer columns (any order; others ignored), one answer per row. Unknown
 * students, exercises and fields, and fields answered twice, are reported as
 * file:line (the later answer counts). Return values as class_roster_load. */
mp_status class_grading_add(class_grading *g, const char *path, ex_diags *diags);

/* Checks every answer against the student's variant. When an exercise
 * cannot be solved for some student's variant, that student's fields say so
 * (verdict EX_MALFORMED), the rest is graded, and the result is MP_EINVAL
 * with the first such problem in err. MP_ENOMEM. */
mp_status class_grade(class_grading *g, char *err, size_t errlen);

static inline size_t class_slot(const class_grading *g, size_t s, size_t e, size_t f)
{
	return (s * g->nex + e) * EX_MAX_FIELDS + f;
}

/* Whether field f of exercise e counts in student s's score: every field
 * does, except an optional one left unanswered (7.4f's steps). */
static inline bool class_counts(const class_grading *g, size_t s, size_t e, size_t f)
{
	return !g->ex[e]->fields[f].optional || g->answer[class_slot(g, s, e, f)] != NULL;
}

#endif
