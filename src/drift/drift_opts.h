/* The options of `mixprec drift` (with --ema only that it is there: the
 * EMA simulation's options are cmd_drift_ema's), parsed from an argv into data: the CLI's command and the TUI's
 * Drift lab read a command line through this function only, so a lesson's
 * block means the same in both. Nothing is printed: a bad option gives
 * MP_EINVAL and a message naming it. Whether a GPU is usable for --device
 * cuda is the caller's. */
#ifndef MIXPREC_DRIFT_DRIFT_OPTS_H
#define MIXPREC_DRIFT_DRIFT_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "drift/drift.h"
#include "util/status.h"

enum { DRIFT_OPTS_SWEEP_MAX = 64 };

/* Every option of `mixprec drift`; the strings point into the argv parsed. */
typedef struct {
	drift_params p;              /* drift_defaults() with the options applied; --x0 sets starts */
	const char *x0_text;         /* --x0 as typed (its exact value rounds into each variant); NULL: default */
	const char *csv_path;        /* --csv; NULL when not asked for */
	const char *sweep;           /* --sweep as typed; NULL when not asked for */
	double xs[DRIFT_OPTS_SWEEP_MAX];   /* --sweep's starting values, nx of them */
	double xstarts[DRIFT_OPTS_SWEEP_MAX][DRIFT_VARIANT_COUNT];
	size_t nx;
	bool help;                   /* -h, --help: nothing after it is checked */
	bool ema;                    /* --ema anywhere before "--": nothing else is read */
} drift_opts;

/* Parses `mixprec drift`'s argv (argv[0] the command) into *o. MP_EINVAL
 * with the message in err, MP_ENOMEM out of memory. */
mp_status drift_opts_parse(int argc, char **argv, drift_opts *o, char *err, size_t errlen);

#endif
