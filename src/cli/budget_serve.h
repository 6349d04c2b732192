/* `mixprec budget --serve`: the serving estimate's help block, table and CSV
 * (the arithmetic is budget/serve.c's). */
#ifndef MIXPREC_CLI_BUDGET_SERVE_H
#define MIXPREC_CLI_BUDGET_SERVE_H

#include "budget/budget_opts.h"

/* The serving options' block of `budget --help`. */
void budget_serve_help(void);

/* Computes and prints o's serving estimate (o->serve); returns the exit
 * status: CLI_USAGE for a model or request that does not fit, after the
 * output, with the shortfall on stderr. */
int budget_serve_run(const budget_opts *o);

#endif
