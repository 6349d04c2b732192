/* The Memory budget lab's parallel layout fields (tensor, sequence,
 * pipeline, interleave, context) and its CLI twin: the `mixprec budget`
 * command line of the lab's settings, which the lab reads back through
 * budget_opts_parse, so the lab and the CLI take one parser. */
#ifndef MIXPREC_TUI_BUDGET_LAYOUT_H
#define MIXPREC_TUI_BUDGET_LAYOUT_H

#include <stddef.h>

#include "budget/budget.h"
#include "util/status.h"

enum { BUDGET_LAYOUT_TP, BUDGET_LAYOUT_SP, BUDGET_LAYOUT_PP, BUDGET_LAYOUT_VPP, BUDGET_LAYOUT_CP,
       BUDGET_LAYOUT_FIELDS };

/* A field's label ("TP") and its value as shown ("8", "on"). */
const char *budget_layout_label(int f);
void budget_layout_value(const budget_config *cfg, int f, char *buf, size_t n);

/* Left (d = -1) or Right (+1) on field f: sizes halve or double (the chunks
 * count down or up by one), sequence parallelism toggles; the layout is
 * checked when the twin is parsed. */
void budget_layout_step(budget_config *cfg, int f, int d);

/* The twin of cfg, "budget --preset gpt3-175b --tp 8 --sp ...", with preset
 * the Model field's name (NULL: custom, from --params and the shape): only
 * what differs from budget's defaults. Returns the length it needs. */
size_t budget_layout_twin(char *buf, size_t n, const budget_config *cfg, const char *preset);

/* The twin parsed by budget_opts_parse into *out: MP_EINVAL with the
 * parser's message (the refusal's reason) in err. */
mp_status budget_layout_parse(const char *twin, budget_config *out, char *err, size_t errlen);

#endif
