/* Named run shapes of the tiny GPT: the batch, context, layers, heads,
 * channels and evaluation period that `train --preset NAME` and the TUI's
 * labs (the z key) set, defined once here. */
#ifndef MIXPREC_TRAIN_SHAPE_H
#define MIXPREC_TRAIN_SHAPE_H

#include <stddef.h>

#include "train/train.h"
#include "util/status.h"

typedef enum {
	TRAIN_SHAPE_TINY,   /* a step in milliseconds on one core: enough to watch the curves */
	TRAIN_SHAPE_COUNT
} train_shape_id;

typedef struct {
	const char *name, *about;
	size_t B, t;        /* B sequences of t tokens (the model's T, its wpe rows, is kept) */
	size_t L, NH, C;
	size_t eval_every;  /* 0: no held-out loss */
} train_shape;

/* The fields of a train_config a shape sets, as bits: train_shape_apply
 * leaves those in keep alone (an option given explicitly wins). */
enum {
	TRAIN_SHAPE_SET_B = 1 << 0, TRAIN_SHAPE_SET_T = 1 << 1, TRAIN_SHAPE_SET_L = 1 << 2,
	TRAIN_SHAPE_SET_NH = 1 << 3, TRAIN_SHAPE_SET_C = 1 << 4, TRAIN_SHAPE_SET_EVAL = 1 << 5,
};

/* Shape id (a valid train_shape_id). */
const train_shape *train_shape_get(train_shape_id id);

/* The shape called name into *out; MP_EINVAL (and *out untouched) when
 * none is. */
mp_status train_shape_from_name(const char *name, const train_shape **out);

/* Every shape's name, ", "-separated, from the table. */
const char *train_shape_names(void);

/* Sets cfg's batch, context, layers, heads, channels and evaluation period
 * to s's, except those whose TRAIN_SHAPE_SET_ bit is in keep. */
void train_shape_apply(const train_shape *s, train_config *cfg, unsigned keep);

#endif
