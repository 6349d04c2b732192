/* In-order option walking over a getopt_long table, printing nothing: the
 * one loop every command's X_opts_parse runs, so the CLI and the TUI's labs
 * read a command line alike. Options come back as getopt_long returns them;
 * positional arguments, negative numbers ("-0.5", "-inf") and everything
 * after "--" come back in command-line order as OPTWALK_VALUE. */
#ifndef MIXPREC_UTIL_OPTWALK_H
#define MIXPREC_UTIL_OPTWALK_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/status.h"

enum { OPTWALK_VALUE = 1 };

typedef struct {
	bool started;
	bool rest;   /* after "--" */
} optwalk;

/* The next option of argv (argv[0] the command) as getopt_long returns it
 * ('?' unknown, ':' missing value, optarg its value), OPTWALK_VALUE with
 * *value set, or -1 at the end. The first call forgets whatever an earlier
 * walk (of any argv) left in getopt's state. w starts zeroed. */
int optwalk_next(optwalk *w, int argc, char **argv, const struct option *opts, char **value);

/* The message for the option optwalk_next just rejected (c ':' or '?') of
 * the table opts, "option '--x' needs a value" or "unknown option '--x'
 * (see 'mixprec CMD --help')", with "did you mean '--y'?" when a long option
 * of opts is near (optwalk_nearest); MP_EINVAL. */
mp_status optwalk_error(const char *cmd, int c, char **argv, const struct option *opts, char *err, size_t errlen);

/* The index of the one of names[0..n-1] nearest to word in edit distance
 * (insertions, deletions, substitutions and swaps of neighbours, each 1;
 * the first on a tie), or -1 when none is near enough to be the likely
 * intent: at most 1 + strlen(word) / 4 edits, at most 3, and fewer than
 * strlen(word). The one place commands and options find their suggestion. */
int optwalk_nearest(const char *word, const char *const *names, size_t n);

#endif
