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

/* The message for the option optwalk_next just rejected (c ':' or '?'),
 * "option '--x' needs a value" or "unknown option '--x' (see 'mixprec CMD
 * --help')"; MP_EINVAL. */
mp_status optwalk_error(const char *cmd, int c, char **argv, char *err, size_t errlen);

#endif
