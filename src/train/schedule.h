/* Learning-rate schedules: the lr of each AdamW update, as pretraining
 * runs use them (a linear warmup, then constant or a cosine decay). One
 * function serves the CPU trainer and the GPU trainer's host code. */
#ifndef MIXPREC_TRAIN_SCHEDULE_H
#define MIXPREC_TRAIN_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	LR_CONSTANT,   /* lr after the warmup */
	LR_COSINE,     /* lr down to lr_min along half a cosine, reaching it at update `total` */
} lr_kind;

typedef struct {
	lr_kind kind;
	size_t warmup;    /* updates 1..warmup ramp up linearly: lr * n / warmup (0: none) */
	double lr_min;    /* cosine: the lr of the last update */
	size_t total;     /* cosine: the updates in the run */
} lr_schedule;

/* The lr of update n (1-based; skipped steps take no update and do not
 * advance it) for peak rate lr. With the zero schedule (constant, no
 * warmup) it is lr itself, bit for bit. Past `total` a cosine stays at
 * lr_min. */
double lr_schedule_at(const lr_schedule *s, double lr, uint64_t n);

/* "constant" or "cosine" into *k; MP_EINVAL for anything else. */
mp_status lr_kind_parse(const char *name, lr_kind *k);
const char *lr_kind_name(lr_kind k);

#ifdef __cplusplus
}
#endif

#endif
