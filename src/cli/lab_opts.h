/* What mixprec lab and mixprec grade share: their options (one parser for
 * both), the diagnostics of a roster or submission, and the exercises of a
 * lab picked by --exercises. */
#ifndef MIXPREC_CLI_LAB_OPTS_H
#define MIXPREC_CLI_LAB_OPTS_H

#include <stddef.h>

#include "teach/exercise.h"

#define LAB_DEFAULT_SET "7.4a,7.4b,7.4c,7.4d,7.4e"
#define LAB_MAX_SUBMISSIONS 4096

typedef struct {
	const char *roster, *out, *summary, *seed, *list, *dir, *format;
	const char *assignment_ids;   /* grade --assignment-ids EX=ID,... (Canvas) */
	const char *misconceptions;   /* grade --misconceptions FILE */
	const char *words[LAB_MAX_SUBMISSIONS];
	size_t nwords;
} lab_opts;

/* Parses argv of cmd (lab or grade) into o; help prints --help. CLI_OK,
 * -1 after --help, or a CLI_* error (reported). */
int lab_parse(const char *cmd, int argc, char **argv, lab_opts *o, void (*help)(void));
/* Prints each diagnostic as "mixprec CMD: MSG" on stderr. */
void lab_print_diags(const char *cmd, const ex_diags *d);
/* The exercises of the lab, in LIST order ("all": every one of set); *out
 * is malloc'd. CLI_OK, or a CLI_* error (reported). */
int lab_select_exercises(const char *cmd, const ex_set *set, const char *list, const ex_exercise ***out,
                         size_t *n);

#endif
