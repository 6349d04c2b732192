#include <math.h>

#include "train/train_csv.h"

void train_csv_header(csvw *w)
{
	csvw_header(w, "step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,"
	               "lost_update_frac,resid_lost_frac,ms,overflow_frac,grad_noise_ratio,"
	               "wgrad_noise_ratio");
}

void train_csv_row(csvw *w, const char *policy, const train_stats *s)
{
	csvw_fieldf(w, "%zu", s->step);
	csvw_field(w, policy);
	csvw_fieldf(w, "%.6f", s->loss);
	if (isnan(s->val_loss))
		csvw_field(w, "");
	else
		csvw_fieldf(w, "%.6f", s->val_loss);
	csvw_fieldf(w, "%.6g", s->grad_norm);
	csvw_fieldf(w, "%.6g", s->loss_scale);
	csvw_field(w, s->skipped ? "1" : "0");
	csvw_fieldf(w, "%.6g", s->underflow_frac);
	csvw_fieldf(w, "%.6g", s->lost_update_frac);
	csvw_fieldf(w, "%.6g", s->resid_lost_frac);
	csvw_fieldf(w, "%.3f", s->ms);
	if (isnan(s->overflow_frac))
		csvw_field(w, "");
	else
		csvw_fieldf(w, "%.6g", s->overflow_frac);
	if (isnan(s->grad_noise_ratio))
		csvw_field(w, "");
	else
		csvw_fieldf(w, "%.6g", s->grad_noise_ratio);
	if (isnan(s->wgrad_noise_ratio))
		csvw_field(w, "");
	else
		csvw_fieldf(w, "%.6g", s->wgrad_noise_ratio);
	csvw_end_row(w);
}

void tensor_stats_header(csvw *w)
{
	csvw_header(w, "step,policy,tensor,format,amax,scale,overflow_frac,underflow_frac");
}

void tensor_stats_rows(csvw *w, size_t step, const char *policy, const fp8_state *st)
{
	for (size_t i = 0; st && i < fp8_state_count(st); i++) {
		if (!fp8_state_covers(st, i / (FP8_LINEARS * FP8_ROLES)))   /* a block left in bf16 (--bf16-last) */
			continue;
		fp8_tensor_stat s = fp8_state_stat(st, i);
		csvw_fieldf(w, "%zu", step);
		csvw_field(w, policy);
		csvw_field(w, s.name);
		csvw_field(w, fmt_get(s.fmt)->name);
		csvw_fieldf(w, "%.9g", (double)s.amax);
		csvw_fieldf(w, "%.9g", (double)s.scale);
		csvw_fieldf(w, "%.6g", s.overflow_frac);
		csvw_fieldf(w, "%.6g", s.underflow_frac);
		csvw_end_row(w);
	}
}
