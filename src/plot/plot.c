#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot_impl.h"
#include "util/utf8.h"

void plot_figure_init(plot_figure *f)
{
	memset(f, 0, sizeof *f);
	f->kind = PLOT_XY;
}

/* --- the canvas --- */

void plot_canvas_init(plot_canvas *c)
{
	memset(c, 0, sizeof *c);
}

void plot_canvas_free(plot_canvas *c)
{
	free(c->cells);
	free(c->dots);
	free(c->owner);
	plot_canvas_init(c);
}

static mp_status canvas_size(plot_canvas *c, int cols, int rows)
{
	size_t n = (size_t)cols * (size_t)rows;
	if (n > c->cap_cells) {
		plot_cell *cells = realloc(c->cells, n * sizeof *cells);
		if (!cells)
			return MP_ENOMEM;
		c->cells = cells;
		c->cap_cells = n;
	}
	if (n > c->cap_area) {   /* the data area is never larger than the grid */
		uint8_t *dots = realloc(c->dots, n);
		if (!dots)
			return MP_ENOMEM;
		c->dots = dots;
		uint8_t *owner = realloc(c->owner, n);
		if (!owner)
			return MP_ENOMEM;
		c->owner = owner;
		c->cap_area = n;
	}
	c->cols = cols;
	c->rows = rows;
	for (size_t i = 0; i < n; i++) {
		c->cells[i].text[0] = ' ';
		c->cells[i].text[1] = '\0';
		c->cells[i].style = PLOT_STYLE_BLANK;
	}
	return MP_OK;
}

static plot_cell *cell(plot_canvas *c, int row, int col)
{
	return &c->cells[(size_t)row * (size_t)c->cols + (size_t)col];
}

static void put_char(plot_canvas *c, int row, int col, const char *utf8, uint8_t style)
{
	if (row < 0 || row >= c->rows || col < 0 || col >= c->cols)
		return;
	plot_cell *p = cell(c, row, col);
	snprintf(p->text, sizeof p->text, "%s", utf8);
	p->style = style;
}

/* Characters (code points) in s, each of util/utf8's ill-formed sequences one:
 * the cells s takes on the canvas. */
static int text_width(const char *s)
{
	return (int)utf8_count(s);
}

/* Writes s from (row, col), at most max characters, the last one an
 * ellipsis when s is longer; control characters and invalid bytes as '?'.
 * Returns the characters written. */
static int put_text(plot_canvas *c, int row, int col, const char *s, int max, uint8_t style, bool utf8)
{
	if (!s || max <= 0)
		return 0;
	int total = text_width(s), w = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p && w < max) {
		if (total > max && w == max - 1) {
			put_char(c, row, col + w, utf8 ? "\xe2\x80\xa6" : "~", style);
			return max;
		}
		uint32_t cp;
		bool valid;
		size_t n = utf8_decode((const char *)p, strnlen((const char *)p, 4), &cp, &valid);
		char ch[8] = "?";
		if (n == 1 && valid && *p >= 0x20 && *p != 0x7f)
			ch[0] = (char)*p;
		else if (n > 1 && valid && utf8)
			memcpy(ch, p, n), ch[n] = '\0';
		put_char(c, row, col + w, ch, style);
		p += n ? n : 1;
		w++;
	}
	return w;
}

/* --- glyphs --- */

/* One mark per series, distinct for the first NMARKS (the fifteen presets
 * of train fit): what tells the series apart without colour. */
static const char ascii_marks[] = "*+ox#@%&$=?^~!v<";
static const char ascii_bars[] = "#=*+%@ox$&?^~!v<";
enum { NMARKS = sizeof ascii_marks - 1 };

static uint8_t series_style(size_t k)
{
	return (uint8_t)(k + PLOT_STYLE_SERIES > 255 ? 255 : k + PLOT_STYLE_SERIES);
}

static void braille(char out[4], uint8_t bits)
{
	unsigned cp = 0x2800u + bits;
	out[0] = (char)(0xe0 | (cp >> 12));
	out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[2] = (char)(0x80 | (cp & 0x3f));
	out[3] = '\0';
}

/* The braille bit of dot (dx, dy) inside a cell: dx 0..1, dy 0..3. */
static uint8_t braille_bit(int dx, int dy)
{
	static const uint8_t bits[2][4] = { { 0x01, 0x02, 0x04, 0x40 }, { 0x08, 0x10, 0x20, 0x80 } };
	return bits[dx][dy];
}

/* --- plotting dots into the data area --- */

typedef struct {
	plot_canvas *c;
	int w, h;          /* data area in cells */
	int dx, dy;        /* dots per cell: 2x4 braille, 1x1 ASCII */
	int DX, DY;        /* data area in dots */
	const plot_axis *x, *y;
} dotgrid;

static void set_dot(dotgrid *g, int px, int py, size_t k)
{
	if (px < 0 || py < 0 || px >= g->DX || py >= g->DY)
		return;
	size_t i = (size_t)(py / g->dy) * (size_t)g->w + (size_t)(px / g->dx);
	g->c->dots[i] |= g->dx == 2 ? braille_bit(px % 2, py % 4) : 1;
	g->c->owner[i] = (uint8_t)(k > 255 ? 255 : k);
}

/* Axis space to dot coordinates (not rounded, not clipped). */
static double dot_x(const dotgrid *g, double t)
{
	return (t - g->x->lo) / (g->x->hi - g->x->lo) * (g->DX - 1);
}

static double dot_y(const dotgrid *g, double t)
{
	return (g->y->hi - t) / (g->y->hi - g->y->lo) * (g->DY - 1);
}

static void draw_segment(dotgrid *g, double x0, double y0, double x1, double y1, size_t k)
{
	/* finite data can still map to an infinite dot (1e308 on -1e308..0) */
	if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
		return;
	if (!plot_clip(&x0, &y0, &x1, &y1, -0.5, g->DX - 0.5, -0.5, g->DY - 0.5))
		return;
	int ax = (int)lround(x0), ay = (int)lround(y0), bx = (int)lround(x1), by = (int)lround(y1);
	int sx = ax < bx ? 1 : -1, sy = ay < by ? 1 : -1;
	int ddx = abs(bx - ax), ddy = -abs(by - ay), err = ddx + ddy;
	for (;;) {
		set_dot(g, ax, ay, k);
		if (ax == bx && ay == by)
			break;
		int e2 = 2 * err;
		if (e2 >= ddy) {
			err += ddy;
			ax += sx;
		}
		if (e2 <= ddx) {
			err += ddx;
			ay += sy;
		}
	}
}

static void draw_series(dotgrid *g, const plot_series *s, size_t k, double colw)
{
	bool have_prev = false;
	double px = 0, py = 0;
	double base = g->y->log ? g->DY - 1 : dot_y(g, 0);
	if (base < 0)
		base = 0;
	if (base > g->DY - 1)
		base = g->DY - 1;
	for (size_t i = 0; i < s->n; i++) {
		double tx = plot_axis_t(g->x, s->x ? s->x[i] : (double)i);
		double ty = plot_axis_t(g->y, s->y[i]);
		if (!isfinite(tx) || !isfinite(ty)) {
			have_prev = false;
			continue;
		}
		double qx = dot_x(g, tx), qy = dot_y(g, ty);
		switch (s->draw) {
		case PLOT_DRAW_LINE:
			if (have_prev)
				draw_segment(g, px, py, qx, qy, k);
			else
				draw_segment(g, qx, qy, qx, qy, k);
			break;
		case PLOT_DRAW_POINTS:
			draw_segment(g, qx, qy, qx, qy, k);
			break;
		case PLOT_DRAW_COLUMNS: {
			double right = colw > 0 ? dot_x(g, tx + colw) - 1 : qx;
			if (right < qx)
				right = qx;
			/* only the dot columns inside the area: a point far outside a
			 * fixed range must not cost a loop over its distance */
			double from = fmax(round(qx), 0), to = fmin(round(right), g->DX - 1);
			for (double cx = from; cx <= to; cx++)
				draw_segment(g, cx, base, cx, qy, k);
			break;
		}
		}
		px = qx;
		py = qy;
		have_prev = true;
	}
}

/* --- layout helpers --- */

/* Series must be told apart by mark, not colour: f->mono and more than one
 * named series (a single one keeps braille's finer dots). */
static bool apart(const plot_figure *f)
{
	size_t named = 0;
	for (size_t k = 0; k < f->nseries; k++)
		named += f->series[k].name && *f->series[k].name;
	return f->mono && named > 1;
}

static const char *sym(bool utf8, const char *u, const char *a)
{
	return utf8 ? u : a;
}

/* Legend entries laid out over rows of width cols; with draw false only
 * counts the rows needed. */
static int legend(plot_canvas *c, const plot_figure *f, int row, int cols, bool utf8, bool draw)
{
	int rows = 0, col = 0;
	bool any = false;
	for (size_t k = 0; k < f->nseries; k++) {
		const char *name = f->series[k].name;
		if (!name || !*name)
			continue;
		int w = 3 + text_width(name);
		if (w > cols)
			w = cols;
		if (!any || col + 3 + w > cols) {
			if (any)
				rows++;
			col = 0;
		} else {
			col += 3;
		}
		any = true;
		if (draw) {
			uint8_t st = series_style(k);
			char mark[2] = { ascii_marks[k % NMARKS], '\0' };
			bool u = utf8 && !apart(f);   /* mono: the series' mark, not a colour swatch */
			if (f->kind == PLOT_BARS) {
				mark[0] = ascii_bars[k % NMARKS];
				put_char(c, row + rows, col, sym(u, "\xe2\x96\x88", mark), st);
				put_char(c, row + rows, col + 1, sym(u, "\xe2\x96\x88", mark), st);
			} else if (f->series[k].draw == PLOT_DRAW_LINE) {
				put_char(c, row + rows, col, sym(u, "\xe2\x94\x80", mark), st);
				put_char(c, row + rows, col + 1, sym(u, "\xe2\x94\x80", mark), st);
			} else if (f->series[k].draw == PLOT_DRAW_POINTS) {
				put_char(c, row + rows, col + 1, sym(u, "\xe2\x80\xa2", mark), st);
			} else {
				put_char(c, row + rows, col, sym(u, "\xe2\x96\x88", mark), st);
				put_char(c, row + rows, col + 1, sym(u, "\xe2\x96\x88", mark), st);
			}
			put_text(c, row + rows, col + 3, name, w - 3, PLOT_STYLE_LABEL, utf8);
		}
		col += w;
	}
	return any ? rows + 1 : 0;
}

static int max_label_width(const plot_axis *a)
{
	int w = 0;
	for (int t = 0; t < a->nticks; t++) {
		int n = (int)strlen(a->labels[t]);
		if (n > w)
			w = n;
	}
	return w;
}

/* Tick marks on the horizontal axis at row, labels on the row below. */
static void x_ticks(plot_canvas *c, const plot_axis *x, int row, int col0, int w, int dots_per_cell, bool utf8)
{
	int DX = w * dots_per_cell, last_end = -1;
	for (int t = 0; t < x->nticks; t++) {
		double d = (x->ticks[t] - x->lo) / (x->hi - x->lo) * (DX - 1);
		int cc = (int)lround(d) / dots_per_cell;
		if (cc < 0 || cc >= w)
			continue;
		put_char(c, row, col0 + cc, sym(utf8, "\xe2\x94\xac", "+"), PLOT_STYLE_AXIS);
		int len = (int)strlen(x->labels[t]);
		int start = col0 + cc - (len - 1) / 2;
		if (start + len > c->cols)
			start = c->cols - len;
		if (start < 0)
			start = 0;
		if (start <= last_end + 1 && last_end >= 0)
			continue;   /* would touch the previous label */
		put_text(c, row + 1, start, x->labels[t], len, PLOT_STYLE_TICK, utf8);
		last_end = start + len - 1;
	}
}

static void title_row(plot_canvas *c, const plot_figure *f, bool utf8)
{
	int w = text_width(f->title);
	int start = w < c->cols ? (c->cols - w) / 2 : 0;
	put_text(c, 0, start, f->title, c->cols, PLOT_STYLE_TITLE, utf8);
}

static void xlabel_row(plot_canvas *c, const plot_figure *f, int row, bool utf8)
{
	int w = text_width(f->xlabel);
	int start = w < c->cols ? c->cols - w : 0;
	put_text(c, row, start, f->xlabel, c->cols, PLOT_STYLE_LABEL, utf8);
}

/* --- xy figures --- */

/* True when the label cells [col, col + len) of data-area row r hold no
 * data dot and no earlier label (c->dots is 0 there; a placed label sets 0xff). */
static bool label_fits(const dotgrid *g, int r, int col, int len)
{
	if (r < 0 || r >= g->h || col < 0 || col + len > g->w)
		return false;
	for (int i = col; i < col + len; i++)
		if (g->c->dots[(size_t)r * (size_t)g->w + (size_t)i])
			return false;
	return true;
}

/* The markers' labels, after the data so that they stay readable: each goes
 * beside its line on the first row (from the top for a vertical line, the
 * line's own row and then its neighbours for a horizontal one) where no data
 * dot is lit and no other label lies, to the right of a vertical line or
 * else to its left, at the right end of a horizontal one or else its left
 * end. Where every place is taken it goes where it always would (the top row,
 * the right end) and covers the data there. */
static void marker_labels(const plot_figure *f, const dotgrid *g, plot_canvas *c, int top, int area_col, bool utf8)
{
	int w = g->w, h = g->h;
	for (size_t m = 0; m < f->nmarkers; m++) {
		const plot_marker *mk = &f->markers[m];
		if (!mk->label || !*mk->label)
			continue;
		int len = text_width(mk->label);
		if (len > w)
			len = w;
		int row = -1, col = 0, fallback_row, fallback_col;
		if (mk->vertical) {
			double t = plot_axis_t(g->x, mk->at);
			int cc = t >= g->x->lo && t <= g->x->hi ? (int)lround(dot_x(g, t)) / g->dx : -1;
			if (cc < 0 || cc >= w)
				continue;
			int right = cc + 1, left = cc - len;
			fallback_row = 0;
			fallback_col = right + len <= w ? right : left >= 0 ? left : 0;
			for (int r = 0; r < h && row < 0; r++) {
				if (label_fits(g, r, right, len))
					row = r, col = right;
				else if (label_fits(g, r, left, len))
					row = r, col = left;
			}
		} else {
			double t = plot_axis_t(g->y, mk->at);
			int rr = t >= g->y->lo && t <= g->y->hi ? (int)lround(dot_y(g, t)) / g->dy : -1;
			if (rr < 0 || rr >= h)
				continue;
			fallback_row = rr;
			fallback_col = w - len;
			static const int near[] = { 0, -1, 1 };
			for (int k = 0; k < 3 && row < 0; k++) {
				if (label_fits(g, rr + near[k], w - len, len))
					row = rr + near[k], col = w - len;
				else if (label_fits(g, rr + near[k], 0, len))
					row = rr + near[k], col = 0;
			}
		}
		if (row < 0)
			row = fallback_row, col = fallback_col;
		put_text(c, top + row, area_col + col, mk->label, len, PLOT_STYLE_MARKER, utf8);
		memset(c->dots + (size_t)row * (size_t)w + (size_t)col, 0xff, (size_t)len);
	}
}

/* The cell of series s's last point inside the data area: false when none. */
static bool last_cell(const dotgrid *g, const plot_series *s, int *row, int *col)
{
	for (size_t i = s->n; i-- > 0;) {
		double tx = plot_axis_t(g->x, s->x ? s->x[i] : (double)i), ty = plot_axis_t(g->y, s->y[i]);
		if (!isfinite(tx) || !isfinite(ty))
			continue;
		double qx = dot_x(g, tx), qy = dot_y(g, ty);
		if (!(qx >= -0.5 && qx < g->DX - 0.5 && qy >= -0.5 && qy < g->DY - 0.5))
			continue;
		*col = (int)lround(qx) / g->dx;
		*row = (int)lround(qy) / g->dy;
		return true;
	}
	return false;
}

/* Without colour: each named line's name at its last point, right of it on
 * its row or the nearest free one (else left of it), where no data or other
 * label lies; a line with no such place keeps only its mark. */
static void end_labels(const plot_figure *f, const dotgrid *g, plot_canvas *c, int top, int area_col, bool utf8)
{
	static const int near[] = { 0, -1, 1, -2, 2 };
	for (size_t k = 0; k < f->nseries; k++) {
		const plot_series *s = &f->series[k];
		int r, cc;
		if (!s->name || !*s->name || s->draw == PLOT_DRAW_COLUMNS || !last_cell(g, s, &r, &cc))
			continue;
		int len = text_width(s->name);
		for (size_t n = 0; n < sizeof near / sizeof near[0]; n++) {
			int rr = r + near[n];
			int col = label_fits(g, rr, cc + 1, len) ? cc + 1 : label_fits(g, rr, cc - len, len) ? cc - len : -1;
			if (col < 0)
				continue;
			put_text(c, top + rr, area_col + col, s->name, len, series_style(k), utf8);
			memset(c->dots + (size_t)rr * (size_t)g->w + (size_t)col, 0xff, (size_t)len);
			break;
		}
	}
}

/* The plot area, w by h cells from (row, col), and the x range it shows,
 * recorded in the canvas; x gets the ticks that fit its width. */
static void place_area(plot_canvas *c, plot_axis *x, int col, int row, int w, int h)
{
	plot_ticks(x, w / 10);
	c->area_col = col;
	c->area_row = row;
	c->area_cols = w;
	c->area_rows = h;
	c->xmin = x->log ? pow(10, x->lo) : x->lo;
	c->xmax = x->log ? pow(10, x->hi) : x->hi;
}

static mp_status render_xy(const plot_figure *f, plot_canvas *c, bool utf8)
{
	int cols = c->cols, rows = c->rows;
	bool has_title = f->title && *f->title, has_ylabel = f->ylabel && *f->ylabel;
	bool has_xlabel = f->xlabel && *f->xlabel;
	int top = has_title + has_ylabel;
	int nleg = legend(c, f, 0, cols, utf8, false);
	if (nleg > rows / 4)
		nleg = rows / 4;
	int h = rows - top - 2 - has_xlabel - nleg;
	if (h < 2)
		return MP_EINVAL;
	plot_axis x, y;
	plot_ranges(f, &x, &y);
	plot_ticks(&y, h / 3);
	bool marks = !utf8 || apart(f);   /* one mark per cell, not braille */
	int dots_x = marks ? 1 : 2, dots_y = marks ? 1 : 4;
	int lw = max_label_width(&y);
	if (lw > cols / 3)
		lw = cols / 3;
	int area_col = lw + 1, w = cols - area_col - 1;
	if (w < 2)
		return MP_EINVAL;
	place_area(c, &x, area_col, top, w, h);
	c->ymin = y.log ? pow(10, y.lo) : y.lo;
	c->ymax = y.log ? pow(10, y.hi) : y.hi;

	if (has_title)
		title_row(c, f, utf8);
	if (has_ylabel)
		put_text(c, has_title, 0, f->ylabel, cols, PLOT_STYLE_LABEL, utf8);

	/* axes */
	for (int r = 0; r < h; r++)
		put_char(c, top + r, lw, sym(utf8, "\xe2\x94\x82", "|"), PLOT_STYLE_AXIS);
	put_char(c, top + h, lw, sym(utf8, "\xe2\x94\x94", "+"), PLOT_STYLE_AXIS);
	for (int i = 0; i < w; i++)
		put_char(c, top + h, area_col + i, sym(utf8, "\xe2\x94\x80", "-"), PLOT_STYLE_AXIS);
	int last_row = -2;
	for (int t = 0; t < y.nticks; t++) {
		double d = (y.hi - y.ticks[t]) / (y.hi - y.lo) * (h * dots_y - 1);
		int r = (int)lround(d) / dots_y;
		if (r < 0 || r >= h || r == last_row)
			continue;
		last_row = r;
		put_char(c, top + r, lw, sym(utf8, "\xe2\x94\xa4", "+"), PLOT_STYLE_AXIS);
		int len = (int)strlen(y.labels[t]);
		if (len > lw)
			len = lw;
		put_text(c, top + r, lw - len, y.labels[t], len, PLOT_STYLE_TICK, utf8);
	}
	x_ticks(c, &x, top + h, area_col, w, dots_x, utf8);

	/* markers under the data: dotted lines and their labels */
	dotgrid g = { .c = c, .w = w, .h = h, .dx = dots_x, .dy = dots_y, .DX = w * dots_x, .DY = h * dots_y,
		      .x = &x, .y = &y };
	for (size_t m = 0; m < f->nmarkers; m++) {
		const plot_marker *mk = &f->markers[m];
		const plot_axis *a = mk->vertical ? &x : &y;
		double t = plot_axis_t(a, mk->at);
		if (!(t >= a->lo && t <= a->hi))
			continue;
		/* the cell the marker stands at across its axis; it runs the area's length along the other */
		int at = mk->vertical ? (int)lround(dot_x(&g, t)) / dots_x : (int)lround(dot_y(&g, t)) / dots_y;
		int across = mk->vertical ? w : h, along = mk->vertical ? h : w;
		if (at < 0 || at >= across)
			continue;
		for (int i = 0; i < along; i++) {
			if (mk->vertical)
				put_char(c, top + i, area_col + at, sym(utf8, "\xe2\x94\x8a", ":"), PLOT_STYLE_MARKER);
			else
				put_char(c, top + at, area_col + i, sym(utf8, "\xe2\x94\x88", "."), PLOT_STYLE_MARKER);
		}
	}

	/* data */
	memset(c->dots, 0, (size_t)w * (size_t)h);
	double colw = plot_column_width(f, &x);
	for (size_t k = 0; k < f->nseries; k++)
		draw_series(&g, &f->series[k], k, colw);
	for (int r = 0; r < h; r++) {
		for (int i = 0; i < w; i++) {
			size_t idx = (size_t)r * (size_t)w + (size_t)i;
			uint8_t bits = c->dots[idx];
			if (!bits)
				continue;
			char ch[4];
			size_t k = c->owner[idx];
			if (!marks) {
				braille(ch, bits);
			} else {
				ch[0] = ascii_marks[k % NMARKS];
				ch[1] = '\0';
			}
			put_char(c, top + r, area_col + i, ch, series_style(k));
		}
	}
	marker_labels(f, &g, c, top, area_col, utf8);
	if (apart(f))
		end_labels(f, &g, c, top, area_col, utf8);

	if (has_xlabel)
		xlabel_row(c, f, top + h + 2, utf8);
	if (nleg)
		legend(c, f, rows - nleg, cols, utf8, true);
	return MP_OK;
}

/* --- bar charts --- */

static mp_status render_bars(const plot_figure *f, plot_canvas *c, bool utf8)
{
	int cols = c->cols, rows = c->rows;
	bool has_title = f->title && *f->title, has_xlabel = f->xlabel && *f->xlabel;
	int nleg = legend(c, f, 0, cols, utf8, false);
	if (nleg > rows / 4)
		nleg = rows / 4;
	int top = has_title;
	int h = rows - top - 2 - has_xlabel - nleg;
	if (h < 1)
		return MP_EINVAL;
	int ns = (int)(f->nseries ? f->nseries : 1);
	int nc = (int)f->ncategories;
	int gap = ns > 1 && nc * ns + nc - 1 <= h ? 1 : 0;

	plot_axis x, y;
	plot_ranges(f, &x, &y);
	int lw = 0;
	for (int i = 0; i < nc; i++) {
		int n = text_width(f->categories[i]);
		if (n > lw)
			lw = n;
	}
	if (lw > cols / 3)
		lw = cols / 3;
	/* room for the value after the longest bar */
	int vw = 0;
	char buf[PLOT_TICK_LABEL];
	for (size_t k = 0; k < f->nseries; k++)
		for (size_t i = 0; i < f->series[k].n; i++) {
			int n = (int)strlen(plot_format_value(f->series[k].y[i], 4, buf, sizeof buf));
			if (n > vw)
				vw = n;
		}
	int area_col = lw + 2, w = cols - area_col - vw - 1;
	if (w < 4)
		return MP_EINVAL;
	place_area(c, &x, area_col, top, w, h);
	c->ymin = 0;
	c->ymax = nc;

	if (has_title)
		title_row(c, f, utf8);
	int used = nc * ns + (nc - 1) * gap;
	if (used > h)
		used = h;
	for (int r = 0; r < used; r++)
		put_char(c, top + r, lw + 1, sym(utf8, "\xe2\x94\x82", "|"), PLOT_STYLE_AXIS);
	int axis_row = top + used;
	put_char(c, axis_row, lw + 1, sym(utf8, "\xe2\x94\x94", "+"), PLOT_STYLE_AXIS);
	for (int i = 0; i < w; i++)
		put_char(c, axis_row, area_col + i, sym(utf8, "\xe2\x94\x80", "-"), PLOT_STYLE_AXIS);
	x_ticks(c, &x, axis_row, area_col, w, 1, utf8);

	/* bars, in eighths of a cell with utf8 (whole cells of the series' mark in mono) */
	bool marks = !utf8 || apart(f);
	int sub = marks ? 1 : 8;
	double span = (x.hi - x.lo), units = (double)w * sub;
	double t0 = x.log ? x.lo : fmin(fmax(0, x.lo), x.hi);
	long base = lround((t0 - x.lo) / span * units);
	for (int i = 0; i < nc; i++) {
		int row0 = top + i * (ns + gap);
		if (row0 >= top + used)
			break;
		put_text(c, row0, 0, f->categories[i], lw, PLOT_STYLE_LABEL, utf8);
		for (int k = 0; k < ns && (size_t)k < f->nseries; k++) {
			int row = row0 + k;
			if (row >= top + used)
				break;
			const plot_series *s = &f->series[k];
			if ((size_t)i >= s->n)
				continue;
			double t = plot_axis_t(&x, s->y[i]);
			if (!isfinite(t))
				continue;
			long end = lround((fmin(fmax(t, x.lo), x.hi) - x.lo) / span * units);
			if (end == base && s->y[i] != 0 && !x.log)
				end = base + (t > t0 ? 1 : -1);   /* nonzero stays visible */
			long a = end < base ? end : base, b = end < base ? base : end;
			if (a < 0)
				a = 0;
			if (b > (long)units)
				b = (long)units;
			uint8_t st = series_style((size_t)k);
			char mark[2] = { ascii_bars[k % NMARKS], '\0' };
			for (long u = a; u < b;) {
				int cc = (int)(u / sub);
				long in = b - u < sub - u % sub ? b - u : sub - u % sub;
				if (!marks && (u % sub != 0 || in < sub))
					/* a partial cell: left-aligned eighth block */
					put_char(c, row, area_col + cc,
						 (const char[]){ (char)0xe2, (char)0x96, (char)(0x90 - in), 0 }, st);
				else
					put_char(c, row, area_col + cc, sym(!marks, "\xe2\x96\x88", mark), st);
				u += in;
			}
			int vc = area_col + (int)((b + sub - 1) / sub) + 1;
			put_text(c, row, vc, plot_format_value(s->y[i], 4, buf, sizeof buf), cols - vc, PLOT_STYLE_TICK,
				 utf8);
		}
	}
	/* the label and legend right under the axis: a short chart leaves the
	 * blank rows at the bottom, where a printer can drop them */
	if (has_xlabel)
		xlabel_row(c, f, axis_row + 2, utf8);
	if (nleg)
		legend(c, f, axis_row + 2 + has_xlabel, cols, utf8, true);
	return MP_OK;
}

mp_status plot_render_text(const plot_figure *f, int cols, int rows, bool utf8, plot_canvas *c)
{
	if (cols < PLOT_MIN_COLS || rows < PLOT_MIN_ROWS || plot_figure_check(f, NULL, 0) != MP_OK)
		return MP_EINVAL;
	mp_status st = canvas_size(c, cols, rows);
	if (st != MP_OK)
		return st;
	return f->kind == PLOT_BARS ? render_bars(f, c, utf8) : render_xy(f, c, utf8);
}

/* --- printing --- */

static const char *style_sgr(uint8_t style)
{
	/* the six colours, their bright forms, then four of the 256-colour
	 * palette (orange, brown, violet, grey): sixteen, for the fifteen presets */
	static const char *series[] = { "34", "33", "32", "31", "35", "36", "94", "91",
		                        "93", "92", "95", "96", "38;5;208", "38;5;130", "38;5;99", "38;5;245" };
	switch (style) {
	case PLOT_STYLE_BLANK:
	case PLOT_STYLE_LABEL:
		return NULL;
	case PLOT_STYLE_TITLE:
		return "1";
	case PLOT_STYLE_TICK:
	case PLOT_STYLE_AXIS:
	case PLOT_STYLE_MARKER:
		return "2";
	default:
		return series[(style - PLOT_STYLE_SERIES) % (sizeof series / sizeof series[0])];
	}
}

static bool row_blank(const plot_canvas *c, int r)
{
	for (int i = 0; i < c->cols; i++)
		if (strcmp(plot_canvas_at(c, r, i)->text, " "))
			return false;
	return true;
}

mp_status plot_canvas_print(const plot_canvas *c, FILE *fp, bool color)
{
	int rows = c->rows;
	while (rows > 0 && row_blank(c, rows - 1))
		rows--;
	for (int r = 0; r < rows; r++) {
		int end = c->cols;
		while (end > 0 && !strcmp(plot_canvas_at(c, r, end - 1)->text, " "))
			end--;
		const char *cur = NULL;
		for (int i = 0; i < end; i++) {
			const plot_cell *p = plot_canvas_at(c, r, i);
			if (color) {
				const char *sgr = style_sgr(p->style);
				if (sgr != cur && (!sgr || !cur || strcmp(sgr, cur))) {
					fputs("\033[0m", fp);
					if (sgr)
						fprintf(fp, "\033[%sm", sgr);
					cur = sgr;
				}
			}
			fputs(p->text, fp);
		}
		if (color && cur)
			fputs("\033[0m", fp);
		fputc('\n', fp);
	}
	return ferror(fp) ? MP_EIO : MP_OK;
}
