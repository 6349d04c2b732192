/* The options of `mixprec formats`, parsed from an argv into data: the
 * CLI's command and the TUI's Bit explorer read a command line through this
 * function only. Nothing is printed: a bad option gives MP_EINVAL and a
 * message naming it. */
#ifndef MIXPREC_FMT_FORMATS_OPTS_H
#define MIXPREC_FMT_FORMATS_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "fmt/format.h"
#include "fmt/round.h"
#include "util/status.h"

/* The widest format whose every value --values lists (2^16 rows). */
enum { FORMATS_VALUES_MAX_BITS = 16 };

typedef struct {
	const fmt_info *values;   /* --values FMT; NULL: the table of formats */
	bool have_mode;           /* --mode given: each value's interval of reals */
	fmt_mode mode;
	bool saturate;            /* --saturate */
	bool csv;                 /* --csv */
	bool help;                /* -h, --help: nothing after it is checked */
} formats_opts;

/* Parses `mixprec formats`'s argv (argv[0] the command) into *o: --values
 * names a format of at most FORMATS_VALUES_MAX_BITS bits, --mode and
 * --saturate need --values. MP_EINVAL with the message in err. */
mp_status formats_opts_parse(int argc, char **argv, formats_opts *o, char *err, size_t errlen);

#endif
