/* The train --csv contract: one header and one row per (step, policy), as
 * `mixprec train --csv` and the Training lab's export both write them. */
#ifndef MIXPREC_TRAIN_TRAIN_CSV_H
#define MIXPREC_TRAIN_TRAIN_CSV_H

#include "train/fp8scale.h"
#include "train/train.h"
#include "util/csvout.h"

/* The header row: step,policy,loss,val_loss,grad_norm,loss_scale,skipped,
 * underflow_frac,lost_update_frac,resid_lost_frac,ms,overflow_frac,
 * grad_noise_ratio,wgrad_noise_ratio (each newer column appended, so that every older column
 * keeps its place). */
void train_csv_header(csvw *w);

/* One row of s under policy's name: losses with 6 decimals (val_loss empty
 * on a step without an evaluation), the fractions, norm and scale with 6
 * significant digits, skipped as 0 or 1, ms with 3 decimals, overflow_frac,
 * grad_noise_ratio and wgrad_noise_ratio (6 significant digits) empty on a
 * step that cast nothing (a policy without fp8 scaling, or past its
 * bf16-from), wgrad_noise_ratio also under per-tensor scaling. */
void train_csv_row(csvw *w, const char *policy, const train_stats *s);

/* The train --tensor-stats contract: step,policy,tensor,format,amax,scale,
 * overflow_frac,underflow_frac, one row per quantized tensor of st (in the
 * model's order) for the step just taken; nothing when st is NULL. */
void tensor_stats_header(csvw *w);
void tensor_stats_rows(csvw *w, size_t step, const char *policy, const fp8_state *st);

#endif
