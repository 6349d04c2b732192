/* Value formatting, figure checks, axis ranges and ticks, and segment
 * clipping: the layout both the text and the image renderers share (split
 * from plot.c, which keeps the text canvas). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot_impl.h"

/* --- value formatting --- */

/* Drops a "+" and leading zeros from the exponent of a printf %e/%g result,
 * and trailing zeros from its mantissa. */
static void tidy_number(char *s)
{
	char *e = strchr(s, 'e');
	char exp[8] = "";
	if (e) {
		const char *p = e + 1;
		bool neg = *p == '-';
		if (*p == '+' || *p == '-')
			p++;
		while (*p == '0' && p[1])
			p++;
		snprintf(exp, sizeof exp, "e%s%.5s", neg ? "-" : "", p);
		*e = '\0';
	}
	if (strchr(s, '.')) {
		size_t n = strlen(s);
		while (n > 0 && s[n - 1] == '0')
			s[--n] = '\0';
		if (n > 0 && s[n - 1] == '.')
			s[--n] = '\0';
	}
	strcat(s, exp);
}

char *plot_format_value(double v, int sig, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	if (sig < 1)
		sig = 1;
	if (sig > 17)
		sig = 17;
	if (isnan(v)) {
		snprintf(buf, len, "nan");
		return buf;
	}
	if (isinf(v)) {
		snprintf(buf, len, v < 0 ? "-inf" : "inf");
		return buf;
	}
	if (v == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	char g[64], e[64];
	snprintf(g, sizeof g, "%.*g", sig, v);
	snprintf(e, sizeof e, "%.*e", sig - 1, v);
	tidy_number(g);
	tidy_number(e);
	/* fixed notation unless it is long and the exponent form shorter */
	snprintf(buf, len, "%s", strlen(g) > 6 && strlen(e) < strlen(g) ? e : g);
	return buf;
}

/* --- figure checks, ranges, ticks --- */

mp_status plot_figure_check(const plot_figure *f, char *err, size_t errlen)
{
	if (f->nseries > 0 && !f->series)
		return mp_fail(MP_EINVAL, err, errlen, "series missing");
	for (size_t k = 0; k < f->nseries; k++) {
		const plot_series *s = &f->series[k];
		if (s->n > 0 && !s->y)
			return mp_fail(MP_EINVAL, err, errlen, "a series without y values");
		if (f->kind == PLOT_BARS && s->n > f->ncategories)
			return mp_fail(MP_EINVAL, err, errlen, "a bar series longer than the categories");
	}
	if (f->kind == PLOT_BARS && f->ncategories > 0 && !f->categories)
		return mp_fail(MP_EINVAL, err, errlen, "categories missing");
	if (f->nmarkers > 0 && !f->markers)
		return mp_fail(MP_EINVAL, err, errlen, "markers missing");
	return MP_OK;
}

static void widen(double *lo, double *hi, double t)
{
	if (!isfinite(t))
		return;
	if (t < *lo)
		*lo = t;
	if (t > *hi)
		*hi = t;
}

/* An empty or single-valued automatic range made into a usable one. */
static void settle(double *lo, double *hi, bool log)
{
	if (*lo > *hi) {          /* no data */
		*lo = 0;
		*hi = 1;
		return;
	}
	if (*lo == *hi) {
		double d = log ? 1 : (*lo == 0 ? 1 : fabs(*lo) * 0.1);
		*lo -= d;
		*hi += d;
	}
}

static bool fixed_ok(bool fix, double lo, double hi, bool log)
{
	return fix && isfinite(lo) && isfinite(hi) && lo < hi && (!log || lo > 0);
}

void plot_ranges(const plot_figure *f, plot_axis *x, plot_axis *y)
{
	x->log = f->logx;
	y->log = f->logy;
	double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
	for (size_t m = 0; m < f->nmarkers; m++) {
		if (f->markers[m].vertical || f->kind == PLOT_BARS)
			widen(&xl, &xh, plot_axis_t(x, f->markers[m].at));
		else
			widen(&yl, &yh, plot_axis_t(y, f->markers[m].at));
	}
	for (size_t k = 0; k < f->nseries; k++) {
		const plot_series *s = &f->series[k];
		for (size_t i = 0; i < s->n; i++) {
			if (f->kind == PLOT_BARS) {
				widen(&xl, &xh, plot_axis_t(x, s->y[i]));
				continue;
			}
			double tx = plot_axis_t(x, s->x ? s->x[i] : (double)i);
			double ty = plot_axis_t(y, s->y[i]);
			if (!isfinite(tx) || !isfinite(ty))
				continue;
			widen(&xl, &xh, tx);
			widen(&yl, &yh, ty);
		}
	}
	if (f->kind == PLOT_BARS && !x->log && xl <= xh) {
		/* bars grow from zero */
		widen(&xl, &xh, 0);
	}
	if (f->kind == PLOT_XY && !y->log && yl <= yh) {
		/* columns grow from zero too */
		for (size_t k = 0; k < f->nseries; k++)
			if (f->series[k].draw == PLOT_DRAW_COLUMNS)
				widen(&yl, &yh, 0);
	}
	if (f->kind == PLOT_XY && xl <= xh) {
		/* a column spans [x, x + width): the last one must fit, and on a log
		 * y axis the smallest one must keep some height, so the range goes
		 * down to the decade below it */
		double w = plot_column_width(f, x);
		if (w > 0)
			xh += w;
		bool columns = false;
		for (size_t k = 0; k < f->nseries; k++)
			columns |= f->series[k].draw == PLOT_DRAW_COLUMNS;
		if (columns && y->log && yl <= yh)
			yl = floor(yl) < yl ? floor(yl) : yl - 1;
	}
	settle(&xl, &xh, x->log);
	settle(&yl, &yh, y->log);
	if (fixed_ok(f->fix_x, f->xmin, f->xmax, x->log)) {
		xl = plot_axis_t(x, f->xmin);
		xh = plot_axis_t(x, f->xmax);
	}
	if (fixed_ok(f->fix_y, f->ymin, f->ymax, y->log)) {
		yl = plot_axis_t(y, f->ymin);
		yh = plot_axis_t(y, f->ymax);
	}
	/* keep the span finite (data near +-DBL_MAX): what lies beyond is clipped */
	if (!isfinite(xh - xl)) {
		xl = fmax(xl, -DBL_MAX / 4);
		xh = fmin(xh, DBL_MAX / 4);
	}
	if (!isfinite(yh - yl)) {
		yl = fmax(yl, -DBL_MAX / 4);
		yh = fmin(yh, DBL_MAX / 4);
	}
	x->lo = xl;
	x->hi = xh;
	y->lo = yl;
	y->hi = yh;
}

/* 1, 2 or 5 times a power of ten, near raw. */
static double nice_step(double raw)
{
	double mag = pow(10, floor(log10(raw)));
	double r = raw / mag;
	return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

/* Linear ticks on [lo, hi] in value space, returned in axis space. */
static void linear_ticks(plot_axis *a, double lo, double hi, int target)
{
	double step = nice_step((hi - lo) / target);
	double first = ceil(lo / step - 1e-9);
	double maxabs = 0;
	a->nticks = 0;
	for (double i = first; a->nticks < PLOT_MAX_TICKS; i++) {
		double v = i * step;
		if (v > hi + step * 1e-9)
			break;
		if (fabs(v) < step * 1e-9)
			v = 0;
		a->ticks[a->nticks++] = v;
		if (fabs(v) > maxabs)
			maxabs = fabs(v);
	}
	/* enough digits to tell neighbouring ticks apart */
	int decimals = (int)fmax(0, -floor(log10(step) + 1e-9));
	int intdigits = maxabs >= 1 ? (int)floor(log10(maxabs)) + 1 : 1;
	for (int t = 0; t < a->nticks; t++) {
		plot_format_value(a->ticks[t], intdigits + decimals, a->labels[t], PLOT_TICK_LABEL);
		if (a->log)
			a->ticks[t] = a->ticks[t] > 0 ? log10(a->ticks[t]) : NAN;
	}
	if (a->log) {   /* drop ticks at or below zero */
		int n = 0;
		for (int t = 0; t < a->nticks; t++) {
			if (isnan(a->ticks[t]))
				continue;
			a->ticks[n] = a->ticks[t];
			memmove(a->labels[n], a->labels[t], PLOT_TICK_LABEL);
			n++;
		}
		a->nticks = n;
	}
}

void plot_ticks(plot_axis *a, int target)
{
	if (target < 2)
		target = 2;
	a->nticks = 0;
	if (!a->log) {
		linear_ticks(a, a->lo, a->hi, target);
		return;
	}
	/* decades, thinned to about target; with room, 2x and 5x too */
	double d0 = ceil(a->lo - 1e-9), d1 = floor(a->hi + 1e-9);
	if (d1 - d0 + 1 >= 2 && (d1 - d0 + 1) * 3 <= target) {
		for (double d = floor(a->lo); d <= d1 && a->nticks < PLOT_MAX_TICKS; d++) {
			static const double mant[] = { 1, 2, 5 };
			for (int m = 0; m < 3 && a->nticks < PLOT_MAX_TICKS; m++) {
				double t = d + log10(mant[m]);
				if (t < a->lo - 1e-9 || t > a->hi + 1e-9)
					continue;
				a->ticks[a->nticks] = t;
				plot_format_value(mant[m] * pow(10, d), 3, a->labels[a->nticks], PLOT_TICK_LABEL);
				a->nticks++;
			}
		}
		return;
	}
	if (d1 - d0 + 1 >= 2) {
		double stride = ceil((d1 - d0 + 1) / target);
		for (double d = d0; d <= d1 && a->nticks < PLOT_MAX_TICKS; d += stride) {
			a->ticks[a->nticks] = d;
			plot_format_value(pow(10, d), 3, a->labels[a->nticks], PLOT_TICK_LABEL);
			a->nticks++;
		}
		return;
	}
	/* less than two decades: linear ticks in value space */
	linear_ticks(a, pow(10, a->lo), pow(10, a->hi), target);
}

double plot_column_width(const plot_figure *f, const plot_axis *x)
{
	double w = 0;
	for (size_t k = 0; k < f->nseries; k++) {
		const plot_series *s = &f->series[k];
		if (s->draw != PLOT_DRAW_COLUMNS)
			continue;
		double prev = NAN;
		for (size_t i = 0; i < s->n; i++) {
			double t = plot_axis_t(x, s->x ? s->x[i] : (double)i);
			double d = t - prev;
			if (isfinite(d) && d > 0 && (w == 0 || d < w))
				w = d;
			if (isfinite(t))
				prev = t;
		}
	}
	return w;
}

bool plot_clip(double *x0, double *y0, double *x1, double *y1, double xa, double xb, double ya, double yb)
{
	double t0 = 0, t1 = 1, dx = *x1 - *x0, dy = *y1 - *y0;
	double p[4] = { -dx, dx, -dy, dy };
	double q[4] = { *x0 - xa, xb - *x0, *y0 - ya, yb - *y0 };
	for (int i = 0; i < 4; i++) {
		if (p[i] == 0) {
			if (q[i] < 0)
				return false;
			continue;
		}
		double r = q[i] / p[i];
		if (p[i] < 0) {
			if (r > t1)
				return false;
			if (r > t0)
				t0 = r;
		} else {
			if (r < t0)
				return false;
			if (r < t1)
				t1 = r;
		}
	}
	double ox = *x0, oy = *y0;
	*x0 = ox + t0 * dx;
	*y0 = oy + t0 * dy;
	*x1 = ox + t1 * dx;
	*y1 = oy + t1 * dy;
	return true;
}
