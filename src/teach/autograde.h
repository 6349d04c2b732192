/* Grading one Gradescope submission: the lab's configuration, the
 * submission folder and its metadata in, Gradescope's results.json out.
 *
 * The formats follow Gradescope's "Autograder Specifications" page
 * (gradescope-autograders.readthedocs.io, en/latest/specs/: the file
 * hierarchy under /autograder and results.json's fields) and its
 * "Submission Metadata" page (en/latest/submission_metadata/:
 * submission_metadata.json and its users[], each with email, id and name in
 * the page's example). The student id is users[0].sid when the file has one
 * (the student ID a course can give its students; the page's example does not
 * show it), else users[0].email. tests/gradescope-results.schema.json writes
 * the result's shape down as a JSON schema with the source of every field.
 *
 * Every path is under one root folder (Gradescope's /autograder):
 *   ROOT/source/lab.json             the lab's configuration (ag_config)
 *   ROOT/source/roster.csv           optional: the students allowed
 *   ROOT/submission_metadata.json    who submitted
 *   ROOT/submission/                 the upload: exactly one *.csv
 *   ROOT/results/results.json        written, atomically, last */
#ifndef MIXPREC_TEACH_AUTOGRADE_H
#define MIXPREC_TEACH_AUTOGRADE_H

#include <jansson.h>
#include <stddef.h>

#include "teach/exercise.h"
#include "util/status.h"

#define AG_CONFIG "lab.json"
#define AG_ROSTER "roster.csv"
#define AG_MAX_EXERCISES 256

/* lab.json: {"course_seed": S, "exercises": [ID...], "roster": "roster.csv" or null}. */
typedef struct {
	char *seed;
	char *ids[AG_MAX_EXERCISES];
	size_t nids;
	char *roster;     /* a file name inside ROOT/source, or NULL */
} ag_config;

/* The text of lab.json for seed, the exercise ids and roster (NULL for
 * none); malloc'd, NULL when out of memory. */
char *ag_config_text(const char *seed, const char *const *ids, size_t nids, const char *roster);
/* Reads and checks lab.json (path); MP_EINVAL or MP_EIO with the reason in err. */
mp_status ag_config_load(ag_config *c, const char *path, char *err, size_t errlen);
void ag_config_free(ag_config *c);

/* Grades the submission under root against config c, with the exercises of
 * set, into *results (a new results.json object). A submission that cannot
 * be graded (no CSV or two, not UTF-8, bad rows, no usable student id, a
 * missing or malformed metadata file, a student not in the roster) still
 * gives a result: score 0, the reason in "output" and every test failed.
 * MP_ENOMEM only. */
mp_status ag_grade(const char *root, const ag_config *c, const ex_set *set, json_t **results);

/* The result for a lab whose configuration could not be used: score 0,
 * why in "output", no tests. NULL when out of memory. */
json_t *ag_results_broken(const char *why);

/* Writes results to ROOT/results/results.json atomically (the folder made
 * when missing); MP_EIO with the reason in err. */
mp_status ag_results_write(const char *root, json_t *results, char *err, size_t errlen);

#endif
