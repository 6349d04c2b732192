/* A replay of one tensor's per-step amax through Transformer Engine's two
 * per-tensor rules (train/fp8scale.h has the rules and their sources):
 * delayed scaling, whose step casts with the scale the history of the
 * earlier steps gave (1 before any step), and current scaling, whose scale
 * comes from the step's own amax. What each step's largest element becomes
 * under each is what mixprec amax prints and the fp8.1 and fp8.2
 * exercises solve with. */
#ifndef MIXPREC_TRAIN_AMAX_REPLAY_H
#define MIXPREC_TRAIN_AMAX_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "fmt/format.h"
#include "train/fp8scale_kind.h"
#include "util/status.h"

typedef struct {
	fmt_id fmt;             /* FMT_E4M3 or FMT_E5M2 */
	size_t history;         /* H, 1..FP8_HISTORY_MAX */
	fp8_amax_algo algo;
	int margin;             /* delayed only: TE's current recipe has none */
} amax_replay_cfg;

/* One step of the replay. peak = amax x scale, the tensor's largest
 * element as cast (in units of the fp8 grid); saturates: that element
 * rounds past fp8_max and is clipped (fp8_cast's count); stored: what the
 * element reads back as after the cast (amax when nothing is clipped). */
typedef struct {
	float amax;
	float history_amax;     /* the amax the delayed scale came from (0 at the start) */
	float delayed_scale;
	double delayed_peak;
	bool delayed_saturates;
	float delayed_stored;
	float current_scale;
	double current_peak;
	bool current_saturates;
	float current_stored;
} amax_replay_step;

/* The fp8 format's largest value as a float. */
float amax_replay_fp8_max(fmt_id fmt);

/* Replays amax[0..n) (each finite, >= 0) into out[0..n); *next_scale (may
 * be NULL) gets the delayed scale the step after the last would cast with.
 * MP_EINVAL for a bad configuration or amax. */
mp_status amax_replay(amax_replay_step *out, float *next_scale, const float *amax, size_t n,
                      const amax_replay_cfg *cfg);

#endif
