/* The class report of a grading, as data: a score and feedback per student
 * and exercise, and per exercise and field the success rate, the most
 * common wrong answer and the most common mistake. Front ends print it;
 * they compute nothing themselves. */
#ifndef MIXPREC_TEACH_CLASS_REPORT_H
#define MIXPREC_TEACH_CLASS_REPORT_H

#include <stddef.h>

#include "teach/classroom.h"
#include "util/status.h"

/* One student on one exercise (or on the whole lab: the student's total). */
typedef struct {
	size_t correct;     /* fields answered right */
	size_t fields;      /* fields that count (class_counts) */
	double score;       /* correct / fields; 0 when no field counts */
	char *feedback;     /* the feedback of the wrong fields that count, joined
	                       by " | " in field order; "" when none (malloc'd) */
} class_sheet_row;

/* One field of one exercise, over the class. The strings point into the
 * grading and live as long as it does. */
typedef struct {
	size_t exercise, field;        /* indices into the grading's exercises, and its fields */
	size_t students;               /* students for whom the field counts */
	size_t correct;                /* of those, answered right */
	double rate;                   /* correct / students; 0 when none */
	const char *wrong;             /* the most common wrong answer as typed, or NULL */
	size_t wrong_count;            /* students who gave it; 0 when wrong is NULL */
	const char *mistake;           /* the most common mistake's tag, or NULL */
	size_t mistake_count;          /* students who made it; 0 when mistake is NULL */
	const char *mistake_example;   /* one such student's feedback (the tag when it
	                                  has none); NULL when mistake is NULL */
} class_field_row;

/* One exercise over the class: who solved every field that counts. */
typedef struct {
	size_t students;   /* the roster's */
	size_t solved;
	double rate;       /* solved / students; 0 when none */
	size_t first;      /* its fields: fields[first .. first + count) */
	size_t count;
} class_exercise_row;

/* One misconception (a mistake's tag) in one field of one exercise: how
 * many of the class's wrong answers showed it. */
typedef struct {
	const char *tag;     /* the mistake's tag, the same in every variant (static storage) */
	size_t exercise, field;
	size_t students;     /* students whose answer showed it */
	double share;        /* students / the roster's students; 0 when none */
} class_misconception_row;

typedef struct {
	size_t nstudents, nex;
	class_sheet_row *sheet;        /* [s * nex + e] */
	class_sheet_row *total;        /* [s]: over every exercise, feedback "" */
	size_t all_right;              /* students with every counted field right */
	class_exercise_row *exercise;  /* [e] */
	class_field_row *fields;       /* every field of every exercise, in order */
	size_t nfields;
	class_misconception_row *misconceptions;   /* every tag shown in every field, most
	                                              students first; then by exercise, field
	                                              and tag */
	size_t nmisconceptions;
} class_report;

/* Builds the report of g, which class_grade has graded. The report borrows
 * strings from g (class_field_row): free it first. MP_ENOMEM (r is then
 * empty). */
mp_status class_report_build(class_report *r, const class_grading *g);
void class_report_free(class_report *r);

/* 100 num / den as the class table shows it (0 when den is 0). */
static inline double class_report_percent(size_t num, size_t den)
{
	return den ? 100.0 * (double)num / (double)den : 0.0;
}

static inline const class_sheet_row *class_report_sheet(const class_report *r, size_t s, size_t e)
{
	return &r->sheet[s * r->nex + e];
}

#endif
