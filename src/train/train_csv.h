/* The train --csv contract: one header and one row per (step, policy), as
 * `mixprec train --csv` and the Training lab's export both write them. */
#ifndef MIXPREC_TRAIN_TRAIN_CSV_H
#define MIXPREC_TRAIN_TRAIN_CSV_H

#include "train/train.h"
#include "util/csvout.h"

/* The header row: step,policy,loss,val_loss,grad_norm,loss_scale,skipped,
 * underflow_frac,lost_update_frac,resid_lost_frac,ms. */
void train_csv_header(csvw *w);

/* One row of s under policy's name: losses with 6 decimals (val_loss empty
 * on a step without an evaluation), the fractions, norm and scale with 6
 * significant digits, skipped as 0 or 1, ms with 3 decimals. */
void train_csv_row(csvw *w, const char *policy, const train_stats *s);

#endif
