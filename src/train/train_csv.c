#include <math.h>

#include "train/train_csv.h"

void train_csv_header(csvw *w)
{
	csvw_header(w, "step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,"
	               "lost_update_frac,resid_lost_frac,ms");
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
	csvw_end_row(w);
}
