/* mixprec lesson check: runs every ```mixprec block of a lesson, evaluates
 * the ```claims block after it, and checks that every figure in the prose
 * is bound to a claim. The commands run through a caller-given runner (the
 * CLI passes one that executes this same program without a shell; tests
 * pass canned output). Nothing here prints. */
#ifndef MIXPREC_TEACH_LESSON_CHECK_H
#define MIXPREC_TEACH_LESSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "teach/claim.h"
#include "teach/lesson.h"

/* Runs argv (argv[0] is "mixprec", NULL-terminated); *out gets its standard
 * output (malloc'd, NUL-terminated), *exit_status its exit status.
 * MP_EIO when it could not be run at all. */
typedef mp_status (*lesson_runner)(void *ctx, char *const *argv, char **out, int *exit_status);

typedef enum {
	LC_CLAIM,      /* a claim's verdict */
	LC_BLOCK,      /* a block that did not run cleanly (nonzero exit) */
	LC_MALFORMED,  /* a claim or block that cannot be checked: exit 2 */
	LC_UNBOUND,    /* a figure in the prose that no claim backs */
} lesson_check_kind;

typedef struct {
	lesson_check_kind kind;
	unsigned line;             /* in the lesson file */
	bool ok;
	char what[160];            /* the claim or command as written (shortened) */
	char detail[300];          /* measured value, or why it failed */
} lesson_check_item;

typedef struct {
	lesson_check_item *items;
	size_t n, cap;
	size_t claims, failed, malformed;
	size_t runs;               /* commands run */
} lesson_check_report;

/* The seeds rule: a block whose claims compare or bound values (anything
 * but = figures) and whose command takes --seed runs seeds times, with
 * --seed shifted by 0, 1, ... from the command's own (or the command's
 * default, added when absent). MP_ENOMEM; MP_EIO when the runner failed
 * (the report holds what was done). */
mp_status lesson_check(const lesson_doc *doc, size_t seeds, lesson_runner run, void *ctx, lesson_check_report *rep);
void lesson_check_report_free(lesson_check_report *rep);

/* Splits a lesson command into words and checks that it is safe to run: the
 * first word mixprec, a known read-only subcommand, no shell syntax, no
 * option that writes a file. *argv is malloc'd (free each word and it);
 * MP_EINVAL with err saying why. */
mp_status lesson_command_argv(const char *line, char ***argv, size_t *argc, char *err, size_t errlen);

/* The argv for seed offset k: --seed V becomes V+k; a command that takes
 * --seed and has none gets --seed (its default + k). False when the command
 * takes no seed (it then runs once). */
bool lesson_command_seeded(char **argv, size_t argc, size_t k, char ***out, size_t *outc);

#endif
