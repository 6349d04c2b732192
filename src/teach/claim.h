/* Checked claims: what a lesson's command must print, written next to the
 * command in a ```claims block (syntax: lessons/README.md). This module
 * parses one claim line and evaluates it against captured command output;
 * it runs nothing and prints nothing. */
#ifndef MIXPREC_TEACH_CLAIM_H
#define MIXPREC_TEACH_CLAIM_H

#include <stdbool.h>
#include <stddef.h>

#include "util/status.h"

typedef enum {
	CX_NUM,     /* a number written in the claim */
	CX_TABLE,   /* COLUMN[ROW]: the cell of a printed table */
	CX_TEXT,    /* text("... {} ..."): the number at {} in the output */
	CX_ADD, CX_SUB, CX_MUL, CX_DIV,
	CX_POW,     /* a ^ b */
	CX_NEG, CX_ABS,
	CX_LOG2, CX_LN, CX_SQRT,   /* log2(a), ln(a), sqrt(a): a cite's arithmetic */
} claim_expr_kind;

typedef struct claim_expr {
	claim_expr_kind kind;
	double num;                  /* CX_NUM */
	char *row, *col;             /* CX_TABLE */
	char *tmpl;                  /* CX_TEXT */
	struct claim_expr *a, *b;    /* operands (b NULL for the one-operand kinds) */
} claim_expr;

typedef enum { CLAIM_EQ, CLAIM_LT, CLAIM_GT, CLAIM_LE, CLAIM_GE } claim_op;

typedef struct {
	claim_expr *lhs, *rhs;
	claim_op op;
	double tol;                  /* CLAIM_EQ: allowed |lhs - rhs| (absolute) */
	bool tol_rel;                /* tol was written with % : relative to |rhs| */
	double margin;               /* orderings: 'by M', the gap that must hold */
	char **quotes;               /* prose the claim backs, each must be in the section */
	size_t nquotes;
	bool cite;                   /* a 'cite "..."' line: a figure from a source, not a command */
	bool plain;                  /* a 'plain "..." REASON' line (cite is set too): the whole
	                              * numbers of its quote are no measured figure */
	char *source;                /* cite: the source named after the quote; plain: the reason */
	/* a cite with 'check LHS OP RHS ...;' carries its arithmetic in lhs, op,
	 * rhs, tol and margin (numbers only: it reads no command output) */
} claim;

/* Parses one claim line (no newline). MP_EPARSE with err naming the column
 * and what was expected; MP_ENOMEM. On failure c is empty. */
mp_status claim_parse(claim *c, const char *line, char *err, size_t errlen);
void claim_free(claim *c);

/* True when s holds a whole number (digits with no decimal point:
 * 16, 10,000), as a plain line's quote must. */
bool claim_has_integer(const char *s);

/* True when the expression reads command output (a table cell or text). */
bool claim_expr_reads_output(const claim_expr *e);
/* True when the claim compares two quantities that both come from output:
 * such a claim is checked on every seed, with the seed-spread rule. */
bool claim_is_comparison(const claim *c);
/* True when the claim is checked on every seed (orderings); figures (=) are
 * checked on the command as written. */
bool claim_per_seed(const claim *c);

/* Evaluates e on one command's output. MP_EINVAL when a referenced row,
 * column or text is not in the output (err says which), or on a division by
 * zero. */
mp_status claim_eval(const claim_expr *e, const char *output, double *v, char *err, size_t errlen);

/* Whether a and b read the same value: the same COLUMN[ROW], or text()
 * with the same template. */
bool claim_same_leaf(const claim_expr *a, const claim_expr *b);
/* claim_eval with every leaf that reads the same value as leaf (see
 * claim_same_leaf) reading x instead of what the output has. */
mp_status claim_eval_with(const claim_expr *e, const char *output, const claim_expr *leaf, double x, double *v,
                          char *err, size_t errlen);

typedef struct {
	bool ok;
	double measured;             /* lhs on the first output */
	double worst;                /* orderings: the smallest gap over the seeds */
	double spread;               /* orderings: max - min of the gap over the seeds */
	size_t nseeds;               /* outputs the verdict covers */
	size_t worst_at;             /* orderings: the output of the smallest gap */
	char detail[256];            /* what was measured, or why it failed */
} claim_verdict;

/* Checks c against outputs[0..n) (one per seed; figures look at outputs[0]
 * only). A figure holds when |lhs - rhs| <= tol. An ordering A > B by M
 * holds when A - B > M on every output (A < B: B - A > M; >=, <=: at least
 * M) and, when both sides read output and n >= 2, M is at least the
 * seed-to-seed spread of the gap (max - min of A - B over the outputs: the
 * seeds pair the runs, so the gap's own variation is the noise). MP_EINVAL when a value
 * is missing (v->detail says which); the verdict is then not ok. */
mp_status claim_check(const claim *c, const char *const *outputs, size_t n, claim_verdict *v);

/* claim_check on output alone, with leaf's value replaced by x as in
 * claim_eval_with (one output: no seed-spread rule). */
mp_status claim_check_with(const claim *c, const char *output, const claim_expr *leaf, double x, claim_verdict *v);

/* --- mutation: would the claim notice a different measurement? --- */

typedef struct {
	size_t nleaves;       /* distinct values the claim reads from output */
	size_t nflip;         /* of them, those whose replacement makes it fail */
	bool vacuous;         /* it reads output and holds whatever any one of them reads */
	char detail[240];     /* where the first value flips it, or why it is vacuous */
} claim_mutation;

/* Replaces each distinct value c reads from output (a COLUMN[ROW] or a
 * text() leaf, every occurrence at once), one at a time, by candidates
 * spanning many magnitudes on both sides of the measured value (1, 2 and
 * 5 times each power of ten from 1e-9 to 1e9 away, and from 1e-9 to 500
 * times the value's size away), nearest first; for the first that
 * fails the claim, bisects towards the measured value to the point where
 * the verdict flips and confirms the claim fails just outside it. A
 * candidate whose evaluation fails (a logarithm of a negative, a division
 * by zero) or gives no finite number is skipped. MP_EINVAL (m->detail
 * says why) when c does not hold on output as measured or a value is
 * missing; a claim that reads no output has m->nleaves 0. */
mp_status claim_mutate(const claim *c, const char *output, claim_mutation *m);

/* True when some number written in text (1,024 and -3.2 and 5.96e-8 and
 * U+2212 minus all read as numbers) lies within tol of value. */
bool claim_text_has_number(const char *text, double value, double tol);

#endif
