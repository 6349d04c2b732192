#include <math.h>
#include <stdlib.h>

#include "train/amax_replay.h"
#include "train/fp8scale.h"

float amax_replay_fp8_max(fmt_id fmt)
{
	return (float)fmt_max(fmt_get(fmt));
}

static bool cfg_ok(const amax_replay_cfg *c)
{
	return (c->fmt == FMT_E4M3 || c->fmt == FMT_E5M2) && c->history >= 1 && c->history <= FP8_HISTORY_MAX &&
	       (c->algo == AMAX_ALGO_MAX || c->algo == AMAX_ALGO_MOST_RECENT) && c->margin >= -FP8_MARGIN_MAX &&
	       c->margin <= FP8_MARGIN_MAX;
}

/* The tensor's largest element cast with scale as fp8_cast casts a tensor:
 * whether it was clipped, and what it reads back as. */
static void cast_peak(fmt_id fmt, float amax, float scale, bool *saturates, float *stored)
{
	float x = amax;
	fp8_cast_stat st;
	fp8_cast(&x, 1, fmt, scale, &st);
	*saturates = st.overflow > 0;
	*stored = x;
}

mp_status amax_replay(amax_replay_step *out, float *next_scale, const float *amax, size_t n,
                      const amax_replay_cfg *cfg)
{
	if (!cfg_ok(cfg))
		return MP_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(amax[i]) || amax[i] < 0)
			return MP_EINVAL;
	/* TE's initial state: history zeros, scale 1 */
	float *hist = calloc(cfg->history, sizeof *hist);
	if (!hist)
		return MP_ENOMEM;
	float fmax = amax_replay_fp8_max(cfg->fmt), scale = 1.0f, hamax = 0.0f;
	for (size_t i = 0; i < n; i++) {
		amax_replay_step *s = &out[i];
		s->amax = amax[i];
		s->history_amax = hamax;
		s->delayed_scale = scale;
		s->delayed_peak = (double)amax[i] * (double)scale;
		cast_peak(cfg->fmt, amax[i], scale, &s->delayed_saturates, &s->delayed_stored);
		s->current_scale = fp8_current_scale(fmax, amax[i]);
		s->current_peak = (double)amax[i] * (double)s->current_scale;
		cast_peak(cfg->fmt, amax[i], s->current_scale, &s->current_saturates, &s->current_stored);
		/* after the step: its amax enters the history, the next scale follows */
		fp8_history_push(hist, cfg->history, amax[i]);
		hamax = fp8_history_amax(hist, cfg->history, cfg->algo);
		scale = fp8_delayed_scale(fmax, hamax, cfg->margin, scale);
	}
	if (next_scale)
		*next_scale = scale;
	free(hist);
	return MP_OK;
}
