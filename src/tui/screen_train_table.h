/* The Training lab's table: one row per policy with its figures after the
 * last step, in columns that fit 80 (screen_train.c draws the rest). */
#ifndef MIXPREC_TUI_SCREEN_TRAIN_TABLE_H
#define MIXPREC_TUI_SCREEN_TRAIN_TABLE_H

#include <curses.h>
#include <stddef.h>

#include "train/train.h"

/* The columns, as the header names them (NULL-terminated): mixprec train's
 * names for the same figures (underflow, lost_upd, resid_lost), so that a
 * lesson naming a column of the command names one of the lab. */
extern const char *const train_table_columns[];

/* The header and a row per policy (names[i]; hist (done, np), step k's
 * record of policy i at [k * np + i]) in at most rows rows of w from (y, 1):
 * the last step's loss, scale, underflow, lost_upd and resid_lost, the mean
 * ms per step and the skipped steps in total. Policies that do not fit are
 * counted on the last row instead; a name wider than its column ends in an
 * ellipsis. Returns the rows drawn. */
int train_table_draw(WINDOW *w, int y, int rows, int cols, const train_stats *hist, size_t done, size_t np,
                     const char *const *names);

#endif
