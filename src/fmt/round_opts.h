/* The options of `mixprec round`, parsed from an argv into data: the CLI's
 * command and the TUI's Bit explorer read a command line through this
 * function only, so a lesson's block means the same in both. Nothing is
 * printed: a bad option gives MP_EINVAL and a message naming it. The VALUEs
 * are kept as typed (the command rounds them, reporting each bad one and
 * going on). Whether a GPU is usable for --device cuda is the caller's. */
#ifndef MIXPREC_FMT_ROUND_OPTS_H
#define MIXPREC_FMT_ROUND_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "fmt/flip.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "util/status.h"

/* The most formats a --to or --format list names (a format may repeat). */
enum { FMT_OPTS_LIST_MAX = FMT_COUNT * 4 };

/* Every option of `mixprec round`; the strings point into the argv parsed. */
typedef struct {
	fmt_id fmts[FMT_OPTS_LIST_MAX];   /* --to's formats in order (default fp32,fp16,bf16) */
	size_t nfmts;
	fmt_mode mode;               /* --mode (default rne) */
	unsigned long long seed;     /* --seed (default 0) */
	bool saturate;               /* --saturate */
	bool flip;                   /* --flip-prob given: flip.p, flip.where (--flip-bits, default any);
	                              * flip.seed is --seed */
	flip_opts flip_opt;
	bool csv;                    /* --csv */
	bool cuda;                   /* --device cuda (its mode and formats checked) */
	bool via;                    /* --via F:MODE: each value rounded first into F by MODE */
	fmt_id via_fmt;
	fmt_mode via_mode;           /* deterministic: not sr, not sr-equal */
	char **values;               /* the VALUEs in command-line order, nvalues of them (allocated) */
	size_t nvalues;
	bool help;                   /* -h, --help: nothing after it is checked */
} round_opts;

/* Parses `mixprec round`'s argv (argv[0] the command) into *o. MP_EINVAL
 * with the message in err, MP_ENOMEM out of memory; round_opts_free after
 * either. */
mp_status round_opts_parse(int argc, char **argv, round_opts *o, char *err, size_t errlen);

void round_opts_free(round_opts *o);

/* --mode's value (any rounding mode) into *m: MP_EINVAL with "--mode:
 * unknown rounding mode 'X' (known: ...)" in err. */
mp_status fmt_mode_arg(const char *text, fmt_mode *m, char *err, size_t errlen);

/* A list of formats for option opt into ids (FMT_OPTS_LIST_MAX at most):
 * MP_EINVAL with "opt: ..." in err. */
mp_status fmt_list_arg(const char *opt, const char *list, fmt_id *ids, size_t *count, char *err, size_t errlen);

#endif
