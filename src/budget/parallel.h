/* The parallel layout's part of budget_compute (budget/parallel.c): one
 * GPU's activations on the first pipeline stage. Internal to src/budget. */
#ifndef MIXPREC_BUDGET_PARALLEL_H
#define MIXPREC_BUDGET_PARALLEL_H

#include "budget/budget.h"

/* Fills res's layout fields (layer_gpu_bytes, stage_layer_bytes,
 * interleave, extra_bytes) and gpu_bytes[BUDGET_ACTIVATIONS] for cfg, whose
 * layout budget_parallel_check accepted; elem_bytes as for
 * budget_activation_layer_bytes. */
void budget_layout_activations(budget_result *res, const budget_config *cfg, double elem_bytes);

#endif
