/* The two commands on the reals that round to a value (fmt/interval):
 * `formats --values FMT [--mode M]` and `bits --interval VALUE`. */
#ifndef MIXPREC_CLI_INTERVALS_H
#define MIXPREC_CLI_INTERVALS_H

#include "fmt/bits_opts.h"
#include "fmt/formats_opts.h"

/* Every value of o->values, with its interval in o->mode when given. */
int cmd_formats_values(const formats_opts *o);

/* o->interval rounded into o->fmts[0] and the interval of the result(s). */
int cmd_bits_interval(const bits_opts *o);

#endif
