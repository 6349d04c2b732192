/* Figures as images through cairo: one layout drawn through a small painter
 * interface onto an image surface (PNG) or an SVG surface. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "plot/plot_impl.h"
#include "util/file.h"

#ifdef HAVE_CAIRO
#include <cairo.h>
#include <cairo-svg.h>
#endif

/* Tableau 10 first (distinguishable, and readable by most colour-blind
 * people), then ten more chosen so that every pair of the twenty is at least
 * 24 CIE76 units apart and each at least 45 from the white background
 * (tests/test_plot_image.c checks both). */
static const uint8_t palette[PLOT_PALETTE][3] = {
	{ 0x1f, 0x77, 0xb4 }, { 0xff, 0x7f, 0x0e }, { 0x2c, 0xa0, 0x2c }, { 0xd6, 0x27, 0x28 },
	{ 0x94, 0x67, 0xbd }, { 0x8c, 0x56, 0x4b }, { 0xe3, 0x77, 0xc2 }, { 0x7f, 0x7f, 0x7f },
	{ 0xbc, 0xbd, 0x22 }, { 0x17, 0xbe, 0xcf },
	{ 0x63, 0x79, 0x39 }, { 0xff, 0x14, 0x93 }, { 0xff, 0x98, 0x96 }, { 0x39, 0x3b, 0x79 },
	{ 0x80, 0x00, 0x00 }, { 0x00, 0xbf, 0xff }, { 0x9c, 0x9e, 0xde }, { 0x80, 0x80, 0x00 },
	{ 0x00, 0xa0, 0x8a }, { 0x8c, 0x6d, 0x31 },
};

void plot_series_rgb(size_t k, uint8_t rgb[3])
{
	memcpy(rgb, palette[k % PLOT_PALETTE], 3);
}

int plot_series_pattern(size_t k)
{
	return (int)(k / PLOT_PALETTE % PLOT_PATTERNS);
}

bool plot_have_cairo(void)
{
#ifdef HAVE_CAIRO
	return true;
#else
	return false;
#endif
}

/* --- painters --- */

typedef enum { ANCHOR_START, ANCHOR_MIDDLE, ANCHOR_END } anchor;

typedef struct painter painter;
struct painter {
	void (*color)(painter *p, const uint8_t rgb[3]);
	/* dash: ndash lengths on and off (0: solid); round: round caps */
	void (*stroke_style)(painter *p, double width, const double *dash, int ndash, bool round);
	void (*move)(painter *p, double x, double y);
	void (*line)(painter *p, double x, double y);
	void (*stroke)(painter *p);
	void (*rect)(painter *p, double x, double y, double w, double h);   /* filled */
	void (*circle)(painter *p, double x, double y, double r);           /* filled */
	void (*polygon)(painter *p, const double *xy, int n);               /* filled, n corners */
	void (*clip)(painter *p, double x, double y, double w, double h);   /* until unclip */
	void (*unclip)(painter *p);
	void (*text)(painter *p, double x, double y, const char *s, double size, bool bold, anchor a, bool vertical);
	double (*text_width)(painter *p, const char *s, double size, bool bold);
	/* back-end state */
	bool clipped;
#ifdef HAVE_CAIRO
	cairo_t *cr;
#endif
};

#ifdef HAVE_CAIRO
static void cr_color(painter *p, const uint8_t rgb[3])
{
	cairo_set_source_rgb(p->cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
}

static void cr_stroke_style(painter *p, double width, const double *dash, int ndash, bool round)
{
	cairo_set_line_width(p->cr, width);
	cairo_set_dash(p->cr, dash, ndash, 0);
	cairo_set_line_join(p->cr, CAIRO_LINE_JOIN_ROUND);
	cairo_set_line_cap(p->cr, round ? CAIRO_LINE_CAP_ROUND : CAIRO_LINE_CAP_BUTT);
}

static void cr_move(painter *p, double x, double y)
{
	cairo_move_to(p->cr, x, y);
}

static void cr_line(painter *p, double x, double y)
{
	cairo_line_to(p->cr, x, y);
}

static void cr_stroke(painter *p)
{
	cairo_stroke(p->cr);
}

static void cr_rect(painter *p, double x, double y, double w, double h)
{
	cairo_rectangle(p->cr, x, y, w, h);
	cairo_fill(p->cr);
}

static void cr_circle(painter *p, double x, double y, double r)
{
	cairo_new_sub_path(p->cr);
	cairo_arc(p->cr, x, y, r, 0, 2 * M_PI);
	cairo_fill(p->cr);
}

static void cr_polygon(painter *p, const double *xy, int n)
{
	cairo_new_sub_path(p->cr);
	for (int i = 0; i < n; i++)
		cairo_line_to(p->cr, xy[2 * i], xy[2 * i + 1]);
	cairo_close_path(p->cr);
	cairo_fill(p->cr);
}

static void cr_clip(painter *p, double x, double y, double w, double h)
{
	cairo_save(p->cr);
	cairo_rectangle(p->cr, x, y, w, h);
	cairo_clip(p->cr);
	p->clipped = true;
}

static void cr_unclip(painter *p)
{
	if (p->clipped)
		cairo_restore(p->cr);
	p->clipped = false;
}

static void cr_font(painter *p, double size, bool bold)
{
	cairo_select_font_face(p->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(p->cr, size);
}

static double cr_text_width(painter *p, const char *s, double size, bool bold)
{
	cairo_text_extents_t e;
	cr_font(p, size, bold);
	cairo_text_extents(p->cr, s, &e);
	return e.x_advance;
}

static void cr_text(painter *p, double x, double y, const char *s, double size, bool bold, anchor a, bool vertical)
{
	double w = cr_text_width(p, s, size, bold);
	double shift = a == ANCHOR_START ? 0 : a == ANCHOR_MIDDLE ? w / 2 : w;
	cairo_save(p->cr);
	cairo_translate(p->cr, x, y);
	if (vertical)
		cairo_rotate(p->cr, -M_PI / 2);
	cairo_move_to(p->cr, -shift, 0);
	cairo_show_text(p->cr, s);
	cairo_restore(p->cr);
}

/* --- the layout, shared by both back ends --- */

static const uint8_t black[3] = { 0x20, 0x20, 0x20 }, grey[3] = { 0x60, 0x60, 0x60 }, light[3] = { 0xe4, 0xe4, 0xe4 },
		     white[3] = { 0xff, 0xff, 0xff };

typedef struct {
	double l, t, w, h;     /* the plot rectangle */
} frame;

static double map_x(const frame *fr, const plot_axis *a, double t)
{
	return fr->l + (t - a->lo) / (a->hi - a->lo) * fr->w;
}

static double map_y(const frame *fr, const plot_axis *a, double t)
{
	return fr->t + (a->hi - t) / (a->hi - a->lo) * fr->h;
}

static const double marker_dash[] = { 4, 3 };

/* Series k's line pattern (plot_series_pattern) at font size fs: the
 * lengths on and off into dash, their count returned (0: solid). Drawn with
 * round caps, so that an "on" of length 0 is a dot as wide as the line. */
static int series_dash(size_t k, double fs, double dash[4])
{
	switch (plot_series_pattern(k)) {
	case 1:
		dash[0] = fs * 0.7;
		dash[1] = fs * 0.45;
		return 2;
	case 2:
		dash[0] = 0;
		dash[1] = fs * 0.4;
		return 2;
	case 3:
		dash[0] = fs * 0.7;
		dash[1] = fs * 0.35;
		dash[2] = 0;
		dash[3] = fs * 0.35;
		return 4;
	default:
		return 0;
	}
}

/* Series k of n as a line: 3 pixels wide for the first down to 2 for the
 * last, so that each line drawn over an earlier one leaves its edges. */
static void series_stroke(painter *p, size_t k, size_t n, double fs)
{
	double dash[4];
	int nd = series_dash(k, fs, dash);
	double w = n > 1 ? 2 + (double)(n - 1 - k) / (double)(n - 1) : 2;
	p->stroke_style(p, w, dash, nd, true);
}

/* Series k's point mark centred at (x, y), r its half size: circle, square,
 * diamond, triangle by plot_series_pattern. */
static void series_mark(painter *p, size_t k, double x, double y, double r)
{
	switch (plot_series_pattern(k)) {
	case 1:
		p->rect(p, x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7);
		break;
	case 2: {
		double d[] = { x, y - r, x + r, y, x, y + r, x - r, y };
		p->polygon(p, d, 4);
		break;
	}
	case 3: {
		double t[] = { x, y - r * 1.1, x + r, y + r * 0.8, x - r, y + r * 0.8 };
		p->polygon(p, t, 3);
		break;
	}
	default:
		p->circle(p, x, y, r);
	}
}

/* One legend entry's swatch: series k's line (3.2 pixels wide, its
 * pattern), mark or block, from x on the row whose baseline is y. Sets
 * (*cx, *cy) to a point whose pixel it covers whole: the line's start (its
 * round cap reaches 1.6 pixels around it), the mark's or block's centre
 * (the mark's half size 0.4 fs >= 3.6 pixels leaves more than a pixel's
 * half diagonal to every edge). */
static void legend_swatch(painter *p, const plot_figure *f, size_t k, double x, double y, double fs, bool draw,
                          double *cx, double *cy)
{
	plot_draw d = f->series[k].draw;
	double yc = y - fs * 0.35;
	if (f->kind == PLOT_XY && d == PLOT_DRAW_LINE) {
		*cx = x + 1.6;
		*cy = yc;
		if (draw) {
			double dash[4];
			int nd = series_dash(k, fs, dash);
			p->stroke_style(p, 3.2, dash, nd, true);
			p->move(p, *cx, yc);
			p->line(p, x + fs * 1.5, yc);
			p->stroke(p);
		}
	} else if (f->kind == PLOT_XY && d == PLOT_DRAW_POINTS) {
		*cx = x + fs * 0.75;
		*cy = yc;
		if (draw)
			series_mark(p, k, *cx, yc, fs * 0.4);
	} else {
		*cx = x + fs * 0.75;
		*cy = y - fs * 0.35;
		if (draw)
			p->rect(p, x, y - fs * 0.8, fs * 1.5, fs * 0.9);
	}
}

/* Legend: one row of entries per line, wrapped to width; returns the rows
 * (draw false: only measures). The first cap entries' places go into out
 * (may be NULL), their count into *n (may be NULL). */
static int draw_legend(painter *p, const plot_figure *f, double x0, double y0, double width, double fs, bool draw,
                       plot_legend_entry *out, size_t cap, size_t *n)
{
	double x = x0, line = fs * 1.5;
	int rows = 0;
	size_t count = 0;
	bool any = false;
	for (size_t k = 0; k < f->nseries; k++) {
		const char *name = f->series[k].name;
		if (!name || !*name)
			continue;
		double tw = p->text_width(p, name, fs, false);
		double w = fs * 2.2 + tw;
		if (!any || x + w > x0 + width) {
			if (any)
				rows++;
			x = x0;
		}
		any = true;
		double y = y0 + rows * line, cx, cy;
		uint8_t rgb[3];
		plot_series_rgb(k, rgb);
		if (draw)
			p->color(p, rgb);
		legend_swatch(p, f, k, x, y, fs, draw, &cx, &cy);
		if (draw) {
			p->color(p, black);
			p->text(p, x + fs * 1.9, y, name, fs, false, ANCHOR_START, false);
		}
		if (out && count < cap)
			out[count] = (plot_legend_entry){ .series = k, .swatch_x = cx, .swatch_y = cy, .text_x = x + fs * 1.9,
			                                  .text_y = y - fs * 0.8, .text_w = tw, .text_h = fs };
		count++;
		x += w + fs;
	}
	if (n)
		*n = count;
	return any ? rows + 1 : 0;
}

/* The x axis's grid lines across the frame and its tick labels under it. */
static void x_grid(painter *p, const frame *fr, const plot_axis *x, double fs)
{
	for (int t = 0; t < x->nticks; t++) {
		double px = map_x(fr, x, x->ticks[t]);
		p->color(p, light);
		p->move(p, px, fr->t);
		p->line(p, px, fr->t + fr->h);
		p->stroke(p);
		p->color(p, black);
		p->text(p, px, fr->t + fr->h + fs * 1.3, x->labels[t], fs, false, ANCHOR_MIDDLE, false);
	}
}

/* The series of an XY figure, in order: lines, points or columns. */
static void draw_series_xy(painter *p, const plot_figure *f, const frame *fr, const plot_axis *x, const plot_axis *y,
                           double fs)
{
	double colw = plot_column_width(f, x);
	double base = y->log ? fr->t + fr->h : fmin(fmax(map_y(fr, y, 0), fr->t), fr->t + fr->h);
	double xa = fr->l - 10, xb = fr->l + fr->w + 10, ya = fr->t - 10, yb = fr->t + fr->h + 10;
	for (size_t k = 0; k < f->nseries; k++) {
		const plot_series *s = &f->series[k];
		uint8_t rgb[3];
		plot_series_rgb(k, rgb);
		p->color(p, rgb);
		series_stroke(p, k, f->nseries, fs);
		bool have_prev = false, open = false;
		double px = 0, py = 0, lx = NAN, ly = NAN;
		for (size_t i = 0; i < s->n; i++) {
			double tx = plot_axis_t(x, s->x ? s->x[i] : (double)i), ty = plot_axis_t(y, s->y[i]);
			if (!isfinite(tx) || !isfinite(ty)) {
				have_prev = false;
				continue;
			}
			double qx = map_x(fr, x, tx), qy = map_y(fr, y, ty);
			if (!isfinite(qx) || !isfinite(qy)) {
				have_prev = false;
				continue;
			}
			if (s->draw == PLOT_DRAW_POINTS) {
				if (qx >= xa && qx <= xb && qy >= ya && qy <= yb)
					series_mark(p, k, qx, qy, fs * 0.22);
			} else if (s->draw == PLOT_DRAW_COLUMNS) {
				double right = colw > 0 ? map_x(fr, x, tx + colw) : qx + 1;
				double cx0 = fmax(qx, xa), cx1 = fmin(right, xb);
				double top = fmin(fmax(qy, ya), yb);
				if (cx1 > cx0)
					p->rect(p, cx0, fmin(top, base), fmax(cx1 - cx0 - 0.5, 0.5), fabs(base - top));
			} else if (have_prev) {
				double x0 = px, y0 = py, x1 = qx, y1 = qy;
				if (plot_clip(&x0, &y0, &x1, &y1, xa, xb, ya, yb)) {
					if (!open || x0 != lx || y0 != ly)
						p->move(p, x0, y0);
					p->line(p, x1, y1);
					open = true;
					lx = x1;
					ly = y1;
				}
			}
			px = qx;
			py = qy;
			have_prev = true;
		}
		if (open)
			p->stroke(p);
	}
}

static void draw_xy(painter *p, const plot_figure *f, const frame *fr, plot_axis *x, plot_axis *y, double fs)
{
	/* grid and ticks */
	p->stroke_style(p, 1, NULL, 0, false);
	for (int t = 0; t < y->nticks; t++) {
		double py = map_y(fr, y, y->ticks[t]);
		p->color(p, light);
		p->move(p, fr->l, py);
		p->line(p, fr->l + fr->w, py);
		p->stroke(p);
		p->color(p, black);
		p->text(p, fr->l - fs * 0.4, py + fs * 0.35, y->labels[t], fs, false, ANCHOR_END, false);
	}
	x_grid(p, fr, x, fs);

	p->clip(p, fr->l, fr->t, fr->w, fr->h);
	/* markers */
	for (size_t m = 0; m < f->nmarkers; m++) {
		const plot_marker *mk = &f->markers[m];
		const plot_axis *a = mk->vertical ? x : y;
		double t = plot_axis_t(a, mk->at);
		if (!isfinite(t) || t < a->lo || t > a->hi)
			continue;
		p->color(p, grey);
		p->stroke_style(p, 1, marker_dash, 2, false);
		if (mk->vertical) {
			double px = map_x(fr, x, t);
			p->move(p, px, fr->t);
			p->line(p, px, fr->t + fr->h);
			p->stroke(p);
		} else {
			double py = map_y(fr, y, t);
			p->move(p, fr->l, py);
			p->line(p, fr->l + fr->w, py);
			p->stroke(p);
		}
	}
	draw_series_xy(p, f, fr, x, y, fs);
	/* the markers' labels last, so that no series covers them */
	p->color(p, grey);
	for (size_t m = 0; m < f->nmarkers; m++) {
		const plot_marker *mk = &f->markers[m];
		const plot_axis *a = mk->vertical ? x : y;
		double t = plot_axis_t(a, mk->at);
		if (!mk->label || !isfinite(t) || t < a->lo || t > a->hi)
			continue;
		if (mk->vertical)
			p->text(p, map_x(fr, x, t) + fs * 0.3, fr->t + fs * 1.1, mk->label, fs * 0.85, false, ANCHOR_START,
			        false);
		else
			p->text(p, fr->l + fr->w - fs * 0.3, map_y(fr, y, t) - fs * 0.3, mk->label, fs * 0.85, false,
			        ANCHOR_END, false);
	}
	p->unclip(p);
}

static void draw_bars(painter *p, const plot_figure *f, const frame *fr, plot_axis *x, double fs)
{
	size_t ns = f->nseries ? f->nseries : 1, nc = f->ncategories;
	double group = nc ? fr->h / (double)nc : fr->h, bar = group * 0.8 / (double)ns;
	p->stroke_style(p, 1, NULL, 0, false);
	x_grid(p, fr, x, fs);
	double t0 = x->log ? x->lo : fmin(fmax(0, x->lo), x->hi);
	double bx = map_x(fr, x, t0);
	char buf[PLOT_TICK_LABEL];
	for (size_t i = 0; i < nc; i++) {
		double gy = fr->t + group * (double)i + group * 0.1;
		p->color(p, black);
		const char *cat = f->categories[i] ? f->categories[i] : "";
		p->text(p, fr->l - fs * 0.5, gy + group * 0.4 + fs * 0.35, cat, fs, false, ANCHOR_END, false);
		for (size_t k = 0; k < f->nseries; k++) {
			const plot_series *s = &f->series[k];
			if (i >= s->n)
				continue;
			double t = plot_axis_t(x, s->y[i]);
			if (!isfinite(t))
				continue;
			double ex = map_x(fr, x, fmin(fmax(t, x->lo), x->hi));
			uint8_t rgb[3];
			plot_series_rgb(k, rgb);
			p->color(p, rgb);
			p->rect(p, fmin(bx, ex), gy + bar * (double)k, fabs(ex - bx), bar * 0.9);
			p->color(p, black);
			p->text(p, fmax(bx, ex) + fs * 0.3, gy + bar * (double)k + bar * 0.45 + fs * 0.35,
				plot_format_value(s->y[i], 4, buf, sizeof buf), fs * 0.85, false, ANCHOR_START, false);
		}
	}
}

/* The baseline of the legend's first row, under the x label. */
static double legend_top(double H, int rows, double fs)
{
	return H - rows * fs * 1.5 + fs * 0.6;
}

/* The font size of a W x H figure. */
static double figure_font(double W, double H)
{
	return fmax(9, fmin(W, H) / 48);
}

static void draw_figure(painter *p, const plot_figure *f, double W, double H)
{
	double fs = figure_font(W, H);
	plot_axis x, y;
	plot_ranges(f, &x, &y);
	bool has_title = f->title && *f->title, has_x = f->xlabel && *f->xlabel;
	bool has_y = f->kind == PLOT_XY && f->ylabel && *f->ylabel;

	p->color(p, white);
	p->rect(p, 0, 0, W, H);

	/* margins: measure labels and the legend first */
	double top = has_title ? fs * 3 : fs * 1.5;
	int nleg = draw_legend(p, f, fs, 0, W - 2 * fs, fs, false, NULL, 0, NULL);
	double bottom = fs * 2.2 + (has_x ? fs * 1.6 : 0) + nleg * fs * 1.5 + fs * 0.5;
	double ph = H - top - bottom;
	if (f->kind == PLOT_XY)
		plot_ticks(&y, (int)fmax(2, ph / (fs * 3)));
	double left = fs * 0.8;
	if (f->kind == PLOT_XY) {
		for (int t = 0; t < y.nticks; t++)
			left = fmax(left, p->text_width(p, y.labels[t], fs, false) + fs * 0.8);
		if (has_y)
			left += fs * 1.6;
	} else {
		for (size_t i = 0; i < f->ncategories; i++)
			left = fmax(left, p->text_width(p, f->categories[i] ? f->categories[i] : "", fs, false) + fs * 1.2);
		left = fmin(left, W / 3);
	}
	double right = f->kind == PLOT_BARS ? fs * 5 : fs * 1.5;
	frame fr = { .l = left, .t = top, .w = W - left - right, .h = ph };
	plot_ticks(&x, (int)fmax(2, fr.w / (fs * 7)));

	if (has_title) {
		p->color(p, black);
		p->text(p, W / 2, fs * 1.9, f->title, fs * 1.3, true, ANCHOR_MIDDLE, false);
	}
	if (f->kind == PLOT_XY)
		draw_xy(p, f, &fr, &x, &y, fs);
	else
		draw_bars(p, f, &fr, &x, fs);
	/* frame */
	p->color(p, black);
	p->stroke_style(p, 1, NULL, 0, false);
	p->move(p, fr.l, fr.t);
	p->line(p, fr.l, fr.t + fr.h);
	p->line(p, fr.l + fr.w, fr.t + fr.h);
	if (f->kind == PLOT_XY) {
		p->line(p, fr.l + fr.w, fr.t);
		p->line(p, fr.l, fr.t);
	}
	p->stroke(p);
	if (has_x)
		p->text(p, fr.l + fr.w / 2, fr.t + fr.h + fs * 3.2, f->xlabel, fs * 1.05, false, ANCHOR_MIDDLE, false);
	if (has_y)
		p->text(p, fs * 1.3, fr.t + fr.h / 2, f->ylabel, fs * 1.05, false, ANCHOR_MIDDLE, true);
	draw_legend(p, f, fs, legend_top(H, nleg, fs), W - 2 * fs, fs, true, NULL, 0, NULL);
}

/* --- entry points --- */

static mp_status check_args(const plot_figure *f, int width, int height, char *err, size_t errlen)
{
	if (plot_figure_check(f, err, errlen) != MP_OK)
		return MP_EINVAL;
	if (width < 100 || width > 10000 || height < 100 || height > 10000) {
		snprintf(err, errlen, "image size %dx%d outside 100..10000", width, height);
		return MP_EINVAL;
	}
	return MP_OK;
}

/* Draws f onto a cairo surface and finishes it; for PNG writes the file. */
/* cairo's writer: into the temporary file of an atomic write. */
static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int length)
{
	FILE *fp = closure;
	return fwrite(data, 1, length, fp) == length ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* Puts what cairo wrote in place (st MP_OK), or removes it. */
static mp_status finish_file(file_atomic *a, mp_status st, char *err, size_t errlen)
{
	if (st != MP_OK) {
		file_atomic_abort(a);
		return st;
	}
	return file_atomic_commit(a, err, errlen);
}

static painter cairo_painter(cairo_t *cr)
{
	return (painter){
		.color = cr_color, .stroke_style = cr_stroke_style, .move = cr_move, .line = cr_line,
		.stroke = cr_stroke, .rect = cr_rect, .circle = cr_circle, .polygon = cr_polygon, .clip = cr_clip,
		.unclip = cr_unclip, .text = cr_text, .text_width = cr_text_width, .cr = cr,
	};
}

static mp_status draw_to(cairo_surface_t *surface, FILE *png_fp, const plot_figure *f, int width,
                         int height, const char *path, char *err, size_t errlen)
{
	cairo_t *cr = cairo_create(surface);
	if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) : cairo_status_to_string(cairo_status(cr)));
		cairo_destroy(cr);
		return MP_EIO;
	}
	painter p = cairo_painter(cr);
	draw_figure(&p, f, width, height);
	cairo_surface_flush(surface);
	cairo_status_t cs = cairo_status(cr);
	cairo_destroy(cr);
	if (cs == CAIRO_STATUS_SUCCESS) {
		errno = 0;
		if (png_fp)
			cs = cairo_surface_write_to_png_stream(surface, to_file, png_fp);
		else {
			cairo_surface_finish(surface);   /* writes the SVG out */
			cs = cairo_surface_status(surface);
		}
	}
	if (cs != CAIRO_STATUS_SUCCESS) {
		/* cairo reports a failed open as a write error; errno says why */
		snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) : cairo_status_to_string(cs));
		return MP_EIO;
	}
	return MP_OK;
}

/* An SVG drawing, streamed into a temporary file renamed over path once complete. */
static mp_status write_svg(const plot_figure *f, const char *path, int width, int height, char *err, size_t errlen)
{
	file_atomic a;
	mp_status st = file_atomic_open(&a, path, err, errlen);
	if (st != MP_OK)
		return st;
	errno = 0;
	cairo_surface_t *surface = cairo_svg_surface_create_for_stream(to_file, a.fp, width, height);
	if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, errlen, "%s: %s", path,
		         errno ? strerror(errno) : cairo_status_to_string(cairo_surface_status(surface)));
		cairo_surface_destroy(surface);
		file_atomic_abort(&a);
		return MP_EIO;
	}
	/* pixels as the unit, so that --width/--height mean the same as for PNG */
	cairo_svg_surface_set_document_unit(surface, CAIRO_SVG_UNIT_PX);
	st = draw_to(surface, NULL, f, width, height, path, err, errlen);
	cairo_surface_destroy(surface);
	return finish_file(&a, st, err, errlen);
}

/* A PNG drawn in memory, then written to the file. */
static mp_status write_png(const plot_figure *f, const char *path, int width, int height, char *err, size_t errlen)
{
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
	if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, errlen, "%s: %s", path, cairo_status_to_string(cairo_surface_status(surface)));
		cairo_surface_destroy(surface);
		return MP_ENOMEM;
	}
	file_atomic a;
	mp_status st = file_atomic_open(&a, path, err, errlen);
	if (st != MP_OK) {
		cairo_surface_destroy(surface);
		return st;
	}
	st = draw_to(surface, a.fp, f, width, height, path, err, errlen);
	cairo_surface_destroy(surface);
	return finish_file(&a, st, err, errlen);
}
#endif

/* The figure as an SVG or (png) a PNG file: the arguments checked once for both. */
static mp_status write_image(const plot_figure *f, const char *path, int width, int height, bool png, char *err,
                             size_t errlen)
{
#ifdef HAVE_CAIRO
	mp_status st = check_args(f, width, height, err, errlen);
	if (st != MP_OK)
		return st;
	return png ? write_png(f, path, width, height, err, errlen) : write_svg(f, path, width, height, err, errlen);
#else
	(void)f;
	(void)width;
	(void)height;
	snprintf(err, errlen, "%s: %s export needs cairo, and mixprec was built without cairo "
		 "(install libcairo2-dev and run ./configure again)", path, png ? "PNG" : "SVG");
	return MP_EUNSUPPORTED;
#endif
}

mp_status plot_write_svg(const plot_figure *f, const char *path, int width, int height, char *err, size_t errlen)
{
	return write_image(f, path, width, height, false, err, errlen);
}

mp_status plot_write_png(const plot_figure *f, const char *path, int width, int height, char *err, size_t errlen)
{
	return write_image(f, path, width, height, true, err, errlen);
}

mp_status plot_image_legend(const plot_figure *f, int width, int height, plot_legend_entry *e, size_t cap, size_t *n,
                            char *err, size_t errlen)
{
	*n = 0;
#ifdef HAVE_CAIRO
	mp_status st = check_args(f, width, height, err, errlen);
	if (st != MP_OK)
		return st;
	/* the names are measured with the fonts plot_write_png draws them in */
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
	cairo_t *cr = cairo_create(surface);
	if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, errlen, "legend: %s", cairo_status_to_string(cairo_status(cr)));
		cairo_destroy(cr);
		cairo_surface_destroy(surface);
		return MP_ENOMEM;
	}
	painter p = cairo_painter(cr);
	double fs = figure_font(width, height);
	int rows = draw_legend(&p, f, fs, 0, width - 2 * fs, fs, false, NULL, 0, NULL);
	draw_legend(&p, f, fs, legend_top(height, rows, fs), width - 2 * fs, fs, false, e, cap, n);
	cairo_destroy(cr);
	cairo_surface_destroy(surface);
	return MP_OK;
#else
	(void)f;
	(void)width;
	(void)height;
	(void)e;
	(void)cap;
	snprintf(err, errlen, "the legend's layout needs cairo, and mixprec was built without cairo");
	return MP_EUNSUPPORTED;
#endif
}
