/* Shared by the text and the image renderers: axis ranges and ticks. */
#ifndef MIXPREC_PLOT_PLOT_IMPL_H
#define MIXPREC_PLOT_PLOT_IMPL_H

#include <math.h>

#include "plot/plot.h"

enum { PLOT_MAX_TICKS = 24, PLOT_TICK_LABEL = 24 };

typedef struct {
	bool log;
	double lo, hi;    /* range in axis space (log10 of the values on a log axis) */
	int nticks;
	double ticks[PLOT_MAX_TICKS];            /* in axis space */
	char labels[PLOT_MAX_TICKS][PLOT_TICK_LABEL];
} plot_axis;

/* A value in axis space: log10 on a log axis (NaN for v <= 0), else v. */
static inline double plot_axis_t(const plot_axis *a, double v)
{
	if (!a->log)
		return v;
	return v > 0 ? log10(v) : NAN;
}

/* Checks f for consistency: MP_EINVAL with the reason in err. */
mp_status plot_figure_check(const plot_figure *f, char *err, size_t errlen);

/* Sets x->lo/hi and y->lo/hi from f (fixed or automatic, never empty). For
 * bars only x is meaningful. */
void plot_ranges(const plot_figure *f, plot_axis *x, plot_axis *y);

/* Chooses about target ticks for a (whose range is set) and formats them. */
void plot_ticks(plot_axis *a, int target);

/* The smallest positive x step between consecutive points of any column
 * series, in axis space; 0 when there is none. */
double plot_column_width(const plot_figure *f, const plot_axis *x);

/* Liang-Barsky: clips the segment (x0,y0)-(x1,y1) to [xa,xb] x [ya,yb];
 * false when nothing is left. */
bool plot_clip(double *x0, double *y0, double *x1, double *y1, double xa, double xb, double ya, double yb);

#endif
