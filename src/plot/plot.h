/* Figures (line, point, column and bar charts) laid out into a grid of text
 * cells for terminals (Unicode braille or plain ASCII), and written as PNG or
 * SVG. Knows nothing of ncurses or of files other than the
 * image it is asked to write: the TUI blits the cells with its own colours,
 * `mixprec plot` prints them.
 *
 * A figure only points at the caller's arrays; nothing is copied. A canvas
 * owns its buffers and keeps them between renders, so re-rendering a figure
 * of the same size (the TUI does it ~10 times a second) allocates nothing. */
#ifndef MIXPREC_PLOT_PLOT_H
#define MIXPREC_PLOT_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/status.h"

/* --- the figure model --- */

typedef enum {
	PLOT_XY = 0,   /* series of (x, y) points on numeric axes */
	PLOT_BARS,     /* categorical: horizontal bars, one group per category */
} plot_kind;

typedef enum {
	PLOT_DRAW_LINE = 0,  /* consecutive points joined; a non-finite (or, on a
	                        log axis, non-positive) point breaks the line */
	PLOT_DRAW_POINTS,    /* each point alone */
	PLOT_DRAW_COLUMNS,   /* a vertical column from the x axis (y = 0, or the
	                        bottom of a log axis) up to each point: histograms */
} plot_draw;

typedef struct {
	const char *name;    /* legend text; NULL or "" leaves it out of the legend */
	const double *x;     /* (n) PLOT_XY: x values; NULL means 0, 1, 2, ...;
	                        PLOT_BARS: unused */
	const double *y;     /* (n) PLOT_XY: y values; PLOT_BARS: the value of
	                        category i of this series */
	size_t n;
	plot_draw draw;      /* PLOT_XY only */
} plot_series;

/* A labelled reference line across the data area (fp16's min subnormal on a
 * gradient histogram, the fp64 reference in a drift plot). */
typedef struct {
	bool vertical;       /* true: x = at; false: y = at */
	double at;
	const char *label;   /* drawn beside the line after the data, in text on
	                        the first row where no data is lit (see
	                        plot_render_text), may be NULL */
} plot_marker;

typedef struct {
	plot_kind kind;
	const char *title;   /* NULL or "" for none */
	const char *xlabel;  /* PLOT_BARS: the value axis (horizontal) */
	const char *ylabel;  /* PLOT_BARS: unused */
	bool logx, logy;     /* base-10 axes; points <= 0 are left out. PLOT_BARS: logx
	                        is the value axis */
	/* Axis ranges: used as given when the flag is set (min < max), otherwise
	 * taken from the finite data (and the markers). PLOT_BARS: x is the value
	 * axis, and an automatic range starts at 0 on a linear axis. */
	bool fix_x, fix_y;
	double xmin, xmax, ymin, ymax;
	const plot_series *series;
	size_t nseries;
	const char *const *categories;   /* (ncategories) PLOT_BARS: the group names (NULL: "") */
	size_t ncategories;
	const plot_marker *markers;
	size_t nmarkers;
	/* No colour will tell the series apart (NO_COLOR, a pipe, a monochrome
	 * terminal): with more than one named series each is drawn with its own
	 * mark, one per cell, even with utf8; the legend shows the marks; lines
	 * are labelled at their end. A single series keeps braille. */
	bool mono;
} plot_figure;

/* Fills f with an empty PLOT_XY figure (everything zero/NULL). */
void plot_figure_init(plot_figure *f);

/* --- text rendering --- */

/* What a cell shows; the TUI maps each to a colour (or attribute) of its own,
 * `mixprec plot` to ANSI SGR codes. Series k is PLOT_STYLE_SERIES + k,
 * capped at 255: a palette takes k modulo its size. */
enum {
	PLOT_STYLE_BLANK = 0,    /* empty space */
	PLOT_STYLE_TITLE,
	PLOT_STYLE_LABEL,        /* axis labels and legend names */
	PLOT_STYLE_TICK,         /* tick values */
	PLOT_STYLE_AXIS,         /* axis lines and tick marks */
	PLOT_STYLE_MARKER,       /* reference lines and their labels */
	PLOT_STYLE_SERIES,       /* first series; series k is PLOT_STYLE_SERIES + k */
};

typedef struct {
	char text[7];    /* one character, UTF-8, NUL-terminated; " " when empty */
	uint8_t style;   /* PLOT_STYLE_* */
} plot_cell;

typedef struct {
	int cols, rows;
	plot_cell *cells;        /* (rows, cols) row-major; read with plot_canvas_at */
	/* data area inside the grid, in cells (for mouse hit-testing in the TUI) */
	int area_col, area_row, area_cols, area_rows;
	/* the axis ranges the last render used (after automatic ranging) */
	double xmin, xmax, ymin, ymax;
	/* private scratch kept between renders */
	size_t cap_cells;
	uint8_t *dots;           /* (area cells) braille dot bits, or ASCII marks */
	uint8_t *owner;          /* (area cells) the series that last drew there */
	size_t cap_area;
} plot_canvas;

void plot_canvas_init(plot_canvas *c);
void plot_canvas_free(plot_canvas *c);

/* Smallest grid plot_render_text accepts; below it: MP_EINVAL. */
enum { PLOT_MIN_COLS = 20, PLOT_MIN_ROWS = 6 };

/* Lays out f into a cols x rows grid of cells: title on the first row,
 * the y label above the y axis, tick values, axes, the data area, the x
 * label under the x ticks and a legend of the named series on the last
 * rows (bar charts: right under the axis, leaving any spare rows blank at
 * the bottom). With utf8 the data area uses braille cells
 * (2 x 4 dots per cell: left column bits 0x01 0x02 0x04 0x40 from the top,
 * right column 0x08 0x10 0x20 0x80) and box-drawing axes; without it (or
 * with f->mono) one mark per cell ('*', '+', 'o', 'x', '#', '@', '%', '&',
 * '$', '=', '?', '^', '~', '!', 'v', '<' for series 0..15 in turn; bars '#',
 * '=', '*', '+', '%', '@', 'o', 'x', '$', '&', '?', '^', '~', '!', 'v', '<'),
 * and without utf8 '|' '-' '+' axes.
 * With f->mono (and two or more named series) each line's name is put at
 * its last point where no data or other label lies (its row, else the
 * nearest of two above and two below; right of the point, else left of it).
 * Marker labels come after the data:
 * a vertical line's label on the topmost row where the cells right of the
 * line (else left of it) hold no data and no other label, a horizontal
 * line's at the right end (else the left end) of its row, else of the row
 * above or below; with no such place, on the top row or the line's row,
 * over the data.
 *
 * Mapping, so a caller (or a test) can tell which dot a point lights: with
 * a data area of W x H cells, DX = 2W (utf8) or W dots across and DY = 4H
 * (utf8) or H down, x maps to dot column round((x - xmin) / (xmax - xmin)
 * * (DX - 1)) and y to dot row round((ymax - y) / (ymax - ymin) * (DY - 1))
 * from the top; on a log axis the same with log10 of the values.
 *
 * Returns MP_EINVAL when the grid is smaller than PLOT_MIN_COLS x
 * PLOT_MIN_ROWS or f is inconsistent (a series with n > 0 and y NULL, bars
 * with a series longer than the categories), MP_ENOMEM; the canvas is only
 * (re)allocated when the grid grows. */
mp_status plot_render_text(const plot_figure *f, int cols, int rows, bool utf8, plot_canvas *c);

static inline const plot_cell *plot_canvas_at(const plot_canvas *c, int row, int col)
{
	return &c->cells[(size_t)row * (size_t)c->cols + (size_t)col];
}

/* Prints the canvas, one line per row with trailing blanks (and blank rows
 * at the end) dropped; with
 * color, styles become ANSI SGR sequences (the caller decides: a tty and no
 * NO_COLOR). MP_EIO on a write error. */
mp_status plot_canvas_print(const plot_canvas *c, FILE *fp, bool color);

/* Formats v compactly for a tick or a value label ("0.5", "1200", "2e10",
 * "1.5e-7"): at most sig significant digits, no "+" or leading zeros in an
 * exponent. Returns buf. */
char *plot_format_value(double v, int sig, char *buf, size_t len);

/* --- images through cairo --- */

/* How images tell series apart: series k takes colour k mod PLOT_PALETTE
 * and, for each further round of the palette, the next pattern k /
 * PLOT_PALETTE mod PLOT_PATTERNS: 0 solid lines and round points, 1 dashed
 * and square, 2 dotted and diamond, 3 dash-dot and triangle points (columns
 * and bars: the colour only). The first PLOT_PALETTE * PLOT_PATTERNS series
 * of a line or point figure each look different. Lines are wider the earlier
 * the series (3 pixels down to 2), so that a later line drawn over an earlier
 * one leaves its edges showing. */
enum { PLOT_PALETTE = 20, PLOT_PATTERNS = 4 };
void plot_series_rgb(size_t k, uint8_t rgb[3]);
int plot_series_pattern(size_t k);

/* One entry of an image's legend, in pixels from the top left. */
typedef struct {
	size_t series;               /* the index of the series it names */
	double swatch_x, swatch_y;   /* a point whose whole pixel the swatch
	                                covers in the series' colour */
	double text_x, text_y, text_w, text_h;   /* the box of the name */
} plot_legend_entry;

/* Where plot_write_png (and plot_write_svg) at width x height put the legend
 * entries of f: one per named series, in order, wrapped into rows under the
 * x label. The first cap go into e, their count (all of them) into *n.
 * MP_EUNSUPPORTED without cairo (which measures the names), MP_EINVAL as
 * plot_write_png. */
mp_status plot_image_legend(const plot_figure *f, int width, int height, plot_legend_entry *e, size_t cap, size_t *n,
                            char *err, size_t errlen);

/* True when this build can write PNG (configure found cairo). */
bool plot_have_cairo(void);

/* Writes f as a width x height pixel PNG through cairo, or as an SVG of
 * width x height user units, with title, axis labels, ticks, legend and
 * markers, both drawn by the same cairo code (cairo's SVG surface draws
 * the text as glyph outlines). Without cairo: MP_EUNSUPPORTED and err says
 * "built without cairo". Otherwise MP_EINVAL
 * for an inconsistent figure or a size outside 100..10000, MP_EIO when the
 * file cannot be written (err names the path and the reason). */
mp_status plot_write_png(const plot_figure *f, const char *path, int width, int height, char *err, size_t errlen);
mp_status plot_write_svg(const plot_figure *f, const char *path, int width, int height, char *err, size_t errlen);

#endif
