/* Exercises: teacher-editable files under exercises/, one variant of the
 * parameters per student, answer checking with feedback on recognisable
 * mistakes, progressive hints and worked solutions computed by the engine.
 *
 * An exercise file holds one or more exercises; each names a *kind* (compiled
 * here: the code that computes the expected answers and the worked solution
 * from the parameters). A new exercise of an existing kind needs only a new
 * file. The file format is described in exercises/README.md. */
#ifndef MIXPREC_TEACH_EXERCISE_H
#define MIXPREC_TEACH_EXERCISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "util/status.h"

#define EX_NAME_MAX 32     /* ids, parameter and field names, with the NUL */
#define EX_VALUE_MAX 64    /* a parameter value or an expected-value text */
#define EX_MAX_PARAMS 8
#define EX_MAX_FIELDS 16
#define EX_MAX_HINTS 8
#define EX_MAX_CHOICES 8
#define EX_MAX_MISTAKES 48

typedef enum {
	EX_NUMBER,   /* a number in any syntax of fmt_parse_number (2^-14, 6.1e-5, 1/1024) */
	EX_BITS,     /* a bit pattern: 0x3dcd, 0b0011110111001101, or binary grouped with spaces */
	EX_CHOICE,   /* one word of a list (yes/no, a format name) */
} ex_type;

typedef enum {
	EX_TOL_REL,    /* |a - e| <= tol * |e| */
	EX_TOL_ABS,    /* |a - e| <= tol */
	EX_TOL_SIG,    /* a equals e to tol significant digits: within half a unit of the last one */
	EX_TOL_EXACT,  /* a == e */
} ex_tol;

typedef struct {
	char name[EX_NAME_MAX];
	ex_type type;
	ex_tol tol;
	double tol_value;
	char unit[8];                 /* EX_NUMBER: "GB", "GiB", "B" or "" (an answer may repeat it) */
	fmt_id format;                /* EX_BITS: the format whose pattern is asked */
	int width;                    /* EX_BITS: a bare field of this many bits ("bits 10"), 0: the format's */
	char choices[EX_MAX_CHOICES][EX_NAME_MAX];  /* EX_CHOICE: the accepted words, lower case */
	size_t nchoices;
	char *label;                  /* what the field asks, one line */
	bool optional;                /* "optional": not needed to solve the exercise */
} ex_field;

typedef enum {
	EX_VARY_NONE,    /* every student gets the default */
	EX_VARY_LIST,    /* one of a list of values */
	EX_VARY_RANGE,   /* a value in [lo, hi], uniform or log-uniform, then rounded */
} ex_vary;

typedef struct {
	char name[EX_NAME_MAX];
	char def[EX_VALUE_MAX];       /* the default value, as text */
	ex_vary vary;
	char (*values)[EX_VALUE_MAX]; /* EX_VARY_LIST */
	size_t nvalues;
	double lo, hi;                /* EX_VARY_RANGE */
	bool log;
	int digits;                   /* round to this many significant digits (0: do not) */
	bool to_format;               /* round to a format under RNE (after digits) */
	fmt_id format;
} ex_param;

struct ex_kind;

typedef struct {
	char id[EX_NAME_MAX];         /* "7.4a", "drift.1" */
	char *title;
	char *prompt;                 /* with {NAME} placeholders for the parameters */
	char *lesson;                 /* the lesson (and section) it belongs to, or NULL */
	const struct ex_kind *kind;
	ex_param params[EX_MAX_PARAMS];
	size_t nparams;
	ex_field fields[EX_MAX_FIELDS];
	size_t nfields;
	char *hints[EX_MAX_HINTS];
	size_t nhints;
	char file[256];               /* where it was defined, for messages */
	int line;
} ex_exercise;

typedef struct {
	ex_exercise *items;
	size_t count;
} ex_set;

/* Load problems, each "file:line: message". */
typedef struct {
	char **msgs;
	size_t count;
} ex_diags;

/* The folder of exercise files: $MIXPREC_EXERCISEDIR, else the installed
 * one, else the source tree's. */
const char *ex_dir(void);

/* Parses one file's text into set (appending). An exercise with an error is
 * reported in diags (file:line: what is wrong) and left out; the others load.
 * Returns MP_ENOMEM only; everything else is a diagnostic. */
mp_status ex_load_text(ex_set *set, const char *name, const char *text, size_t len, ex_diags *diags);
/* Loads every *.ex file of dir in name order. MP_EIO when dir cannot be read
 * (message in diags). */
mp_status ex_load_dir(ex_set *set, const char *dir, ex_diags *diags);
void ex_set_free(ex_set *set);
void ex_diags_free(ex_diags *d);
const ex_exercise *ex_find(const ex_set *set, const char *id);

/* The parameter values of one student's variant, in the exercise's order. */
typedef struct {
	char values[EX_MAX_PARAMS][EX_VALUE_MAX];
	size_t count;
} ex_variant;

/* The course seed in force: seed when given, else $MIXPREC_COURSE_SEED
 * when set, else "0". */
const char *ex_course_seed(const char *seed);

/* The variant for student (NULL or "": the defaults) under course_seed
 * (NULL: ex_course_seed(NULL)). Deterministic: the same inputs give the same values on every
 * machine, so the grader agrees with the sheet. */
void ex_variant_make(const ex_exercise *ex, const char *course_seed, const char *student, ex_variant *v);
/* The value of parameter name in v, or NULL. */
const char *ex_variant_get(const ex_exercise *ex, const ex_variant *v, const char *name);

/* The prompt with {NAME} replaced by the variant's values (malloc'd; NULL on ENOMEM). */
char *ex_prompt(const ex_exercise *ex, const ex_variant *v);

/* An expected (or recognised wrong) value of one field. */
typedef struct {
	ex_type type;
	double number;
	uint32_t bits;
	char choice[EX_NAME_MAX];
	char text[EX_VALUE_MAX];      /* how the solution shows it */
} ex_value;

/* A recognisable wrong answer and what to tell a student who gave it. The
 * tag names the mistake the same way for every variant (the message holds
 * the variant's numbers), so a class's answers can be grouped by mistake. */
typedef struct {
	size_t field;
	ex_value value;
	char message[240];
	const char *tag;              /* static storage */
} ex_mistake;

typedef struct {
	ex_value expect[EX_MAX_FIELDS];   /* in the exercise's field order */
	char *worked;                     /* the worked solution, plain text (malloc'd) */
	ex_mistake mistakes[EX_MAX_MISTAKES];
	size_t nmistakes;
} ex_solution;

/* Computes the expected answers and the worked solution of ex for variant v.
 * MP_EINVAL with a message in err when a parameter value does not suit the
 * kind (a teacher's file can hold one); MP_ENOMEM. */
mp_status ex_solve(const ex_exercise *ex, const ex_variant *v, ex_solution *sol, char *err, size_t errlen);
void ex_solution_free(ex_solution *sol);

typedef enum {
	EX_CORRECT,
	EX_WRONG,
	EX_MALFORMED,   /* the answer cannot be read as the field's type */
} ex_verdict;

/* Checks one answer for field i; writes feedback (why it is wrong, which
 * mistake it looks like, or what could not be read) into fb. */
ex_verdict ex_check(const ex_exercise *ex, const ex_solution *sol, size_t i, const char *answer,
                    char *fb, size_t fblen);
/* The same, with *tag (may be NULL) set for a wrong answer to the mistake
 * recognised (ex_mistake.tag, or one of the mistakes every field can show),
 * else NULL. */
ex_verdict ex_check_tagged(const ex_exercise *ex, const ex_solution *sol, size_t i, const char *answer,
                           char *fb, size_t fblen, const char **tag);

/* Whether an attempt solves ex: every field that is not optional answered
 * right (right[i]), and no answered field (answered[i]) left wrong, optional
 * ones included: a wrong answer is never part of a solution. */
bool ex_solved(const ex_exercise *ex, const bool *answered, const bool *right);

/* The index of the field called name, or -1. */
int ex_field_index(const ex_exercise *ex, const char *name);

/* The compiled kinds, for `exercise kinds` and messages. */
struct solve_ctx;
typedef struct ex_kind {
	const char *name;
	const char *summary;
	const char *params;   /* the parameters it requires, space-separated */
	const char *fields;   /* the fields it can check, space-separated */
	bool (*solve)(struct solve_ctx *c);   /* fills the solution (teach/exercise_solve.h) */
} ex_kind;

const ex_kind *ex_kind_find(const char *name);
const ex_kind *ex_kind_at(size_t i);   /* NULL past the end */

/* Answer syntax, shared with grading. */
/* A bit pattern of width bits: 0x hex, 0b binary, or binary digits grouped
 * with spaces or underscores; the digits must not exceed the width. */
mp_status ex_parse_bits(const char *text, int width, uint32_t *out, char *err, size_t errlen);
/* A number, optionally followed by a unit (GB, GiB, B, bytes) that is
 * returned in unit (empty when none). */
mp_status ex_parse_number(const char *text, double *out, char *unit, size_t unitlen, char *err, size_t errlen);

#endif
