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

/* Runs argv (argv[0] is "mixprec", NULL-terminated) with OpenBLAS's core
 * type blas_core (NULL: as the environment has it); *out gets its standard
 * output (malloc'd, NUL-terminated), *exit_status its exit status.
 * MP_EIO when it could not be run at all. */
typedef mp_status (*lesson_runner)(void *ctx, char *const *argv, const char *blas_core, char **out,
                                   int *exit_status);

typedef struct {
	size_t seeds;                    /* >= 1: see lesson_check */
	/* The OpenBLAS core types a command whose output depends on sgemm's
	 * bits (train, gradhist) runs under, each with every seed; NULL
	 * entries (or ncores 0: one run) mean the environment's own. */
	const char *const *blas_cores;
	size_t ncores;
	/* For lesson authors: each claim's detail also gives the range of its
	 * left side over every run of its block (seeds x core types). */
	bool ranges;
	/* Each claim that reads output and holds is also checked for
	 * vacuity on its block's first output (claim_mutate): one that holds
	 * whatever its measured values read is reported LC_VACUOUS. */
	bool mutate;
} lesson_check_opts;

typedef enum {
	LC_CLAIM,      /* a claim's verdict */
	LC_BLOCK,      /* a block that did not run cleanly (nonzero exit) */
	LC_MALFORMED,  /* a claim or block that cannot be checked: exit 2 */
	LC_UNBOUND,    /* a figure in the prose that no claim backs */
	LC_RANGE,      /* a range in the prose whose claims bound it on one side only */
	LC_VACUOUS,    /* --mutate: a claim that no measured value could make fail */
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
 * but = figures) and whose command takes --seed runs o->seeds times, with
 * --seed shifted by 0, 1, ... from the command's own (or the command's
 * default, added when absent). A block whose command uses sgemm runs that
 * many times under each of o's BLAS core types: an ordering must hold on
 * every run, with a margin beyond the spread over all of them, and a figure
 * (=) on the first seed under every core type. MP_ENOMEM; MP_EIO when the
 * runner failed (the report holds what was done). */
mp_status lesson_check(const lesson_doc *doc, const lesson_check_opts *o, lesson_runner run, void *ctx,
                       lesson_check_report *rep);

/* Whether a lesson command's output depends on the bits of sgemm (and so
 * on OpenBLAS's core type): train and gradhist. */
bool lesson_command_uses_blas(char *const *argv, size_t argc);
void lesson_check_report_free(lesson_check_report *rep);

/* Splits a lesson command into words and checks that it is safe to run: the
 * first word mixprec, a known read-only subcommand, no shell syntax, no
 * option that writes a file. *argv is malloc'd (free each word and it);
 * MP_EINVAL with err saying why. */
mp_status lesson_command_argv(const char *line, char ***argv, size_t *argc, char *err, size_t errlen);

/* The argv for seed offset k: --seed V becomes V+k; a command that takes
 * --seed and has none gets --seed (its default + k). False when the command
 * takes no seed (it then runs once); quantize takes one only with --random
 * (its typed values do not depend on it). */
bool lesson_command_seeded(char **argv, size_t argc, size_t k, char ***out, size_t *outc);

#endif
