/* Loss scaling: none, static, or dynamic as PyTorch's GradScaler does it. */
#ifndef MIXPREC_TRAIN_SCALER_H
#define MIXPREC_TRAIN_SCALER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
	SCALER_NONE,
	SCALER_STATIC,
	SCALER_DYNAMIC,
} scaler_kind;

typedef struct {
	scaler_kind kind;
	double scale;             /* current S (1 for none) */
	double growth_factor;     /* x2 */
	double backoff_factor;    /* x0.5 */
	size_t growth_interval;   /* 2000 clean steps */
	size_t clean_steps;       /* since the last change or overflow */
	size_t skipped;           /* steps skipped so far */
} loss_scaler;

/* GradScaler's defaults for dynamic: init 2^16, x2 after 2,000 clean steps,
 * x0.5 and skip on inf/NaN. static uses `scale` fixed; none uses 1. */
void scaler_init(loss_scaler *s, scaler_kind kind, double scale);

/* Records one step's outcome and returns whether the optimiser step should
 * run: false (skip) when the gradients had an inf or NaN and scaling is on.
 * Dynamic: an overflow halves S and resets the count; 2,000 clean steps in a
 * row double S. */
bool scaler_update(loss_scaler *s, bool found_inf);

#endif
