#include "train/scaler.h"

void scaler_init(loss_scaler *s, scaler_kind kind, double scale)
{
	*s = (loss_scaler){
		.kind = kind,
		.scale = kind == SCALER_NONE ? 1.0 : kind == SCALER_DYNAMIC ? 65536.0 : scale,
		.growth_factor = 2.0,
		.backoff_factor = 0.5,
		.growth_interval = 2000,
	};
}

bool scaler_update(loss_scaler *s, bool found_inf)
{
	if (found_inf) {
		s->skipped++;
		s->clean_steps = 0;
		if (s->kind == SCALER_DYNAMIC)
			s->scale *= s->backoff_factor;
		/* without scaling there is nothing to retry: the step is skipped all the
		 * same, as an inf/NaN update would destroy the weights */
		return false;
	}
	if (s->kind == SCALER_DYNAMIC && ++s->clean_steps >= s->growth_interval) {
		s->scale *= s->growth_factor;
		s->clean_steps = 0;
	}
	return true;
}
