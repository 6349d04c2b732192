/* The options of `mixprec bits`, parsed from an argv into data: the CLI's
 * command and the TUI's Bit explorer read a command line through this
 * function only, so a lesson's block means the same in both. Nothing is
 * printed: a bad option gives MP_EINVAL and a message naming it. VALUEs and
 * --raw patterns are kept as typed (the command reads them, reporting each
 * bad one and going on). */
#ifndef MIXPREC_FMT_BITS_OPTS_H
#define MIXPREC_FMT_BITS_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "fmt/round_opts.h"
#include "util/status.h"

/* The most VALUEs, and the most --raw patterns, one command takes. */
enum { BITS_OPTS_MAX = 256 };

/* Every option of `mixprec bits`; the strings point into the argv parsed. */
typedef struct {
	fmt_id fmts[FMT_OPTS_LIST_MAX];   /* --format's formats in order; every format when not given */
	size_t nfmts;
	bool have_formats;           /* --format given */
	fmt_mode mode;               /* --mode (default rne; the SR modes with --interval only) */
	bool saturate;               /* --saturate: overflow gives +-max */
	const char *interval;        /* --interval VALUE: the reals that round where VALUE does; NULL */
	const char *raws[BITS_OPTS_MAX];     /* the --raw patterns, nraw of them */
	size_t nraw;
	const char *values[BITS_OPTS_MAX];   /* the VALUEs in command-line order */
	size_t nvalues;
	bool csv;                    /* --csv */
	bool help;                   /* -h, --help: nothing after it is checked */
} bits_opts;

/* Parses `mixprec bits`'s argv (argv[0] the command) into *o, with the
 * checks between options (--raw and --interval need one --format; a VALUE,
 * a pattern or --interval is required; an SR mode needs --interval). MP_EINVAL with the message in err. */
mp_status bits_opts_parse(int argc, char **argv, bits_opts *o, char *err, size_t errlen);

#endif
