/* The plot module's text figures: which braille dot a data point lights,
 * derived by hand from the documented mapping; layout (ticks, labels,
 * legend, bars); the canvas. The CSV reader: test_plot_csv.c; images:
 * test_plot_image.c; plots without colour: test_plot_mono.c. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot.h"
#include "plot_fixture.h"
#include "testutil.h"

/* --- helpers --- */

/* The braille character with these dot bits, in UTF-8 (U+2800 + bits). */
static const char *braille(unsigned bits)
{
	static char buf[8][4];
	static int next;
	char *b = buf[next++ % 8];
	unsigned cp = 0x2800u + bits;
	b[0] = (char)(0xe0 | (cp >> 12));
	b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	b[2] = (char)(0x80 | (cp & 0x3f));
	b[3] = '\0';
	return b;
}

/* Bits of a braille cell, or -1 when it is not one. */
static int braille_bits(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	if (u[0] != 0xe2 || (u[1] & 0xfc) != 0xa0 || u[3] != 0)
		return -1;
	return ((u[1] & 0x03) << 6) | (u[2] & 0x3f);
}

/* Row r of the canvas as a string, trailing blanks dropped. */
static const char *row_text(int r)
{
	static char buf[4096];
	size_t n = 0;
	for (int i = 0; i < canvas.cols; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", at(r, i));
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	return buf;
}

/* A figure with no title, labels or legend and fixed ranges. */
static plot_figure bare(const plot_series *s, size_t n, double x0, double x1, double y0, double y1)
{
	plot_figure f;
	plot_figure_init(&f);
	f.series = s;
	f.nseries = n;
	f.fix_x = f.fix_y = true;
	f.xmin = x0;
	f.xmax = x1;
	f.ymin = y0;
	f.ymax = y1;
	return f;
}

/* --- the data-to-dot mapping --- */

START_TEST(one_point_lights_one_dot)
{
	/* 30x10 grid, nothing but axes: the data area is 8 rows (10 - axis row -
	 * tick-label row). y ticks: target 8/3 = 2, step nice(10/2) = 5: 0, 5,
	 * 10, so labels are 2 wide and the area starts at column 3 (after the
	 * axis at column 2) and is 30 - 3 - 1 = 26 cells wide. Dots: DX = 52,
	 * DY = 32. x = 3: column round(3/10 * 51) = round(15.3) = 15 -> cell 7,
	 * right half. y = 4: row round(6/10 * 31) = round(18.6) = 19 -> cell row
	 * 4, dot row 3. Right column, fourth dot: bit 0x80. */
	double x = 3, y = 4;
	plot_series s = { .x = &x, .y = &y, .n = 1, .draw = PLOT_DRAW_POINTS };
	plot_figure f = bare(&s, 1, 0, 10, 0, 10);
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	ck_assert_int_eq(canvas.area_col, 3);
	ck_assert_int_eq(canvas.area_row, 0);
	ck_assert_int_eq(canvas.area_cols, 26);
	ck_assert_int_eq(canvas.area_rows, 8);
	ck_assert_str_eq(at(4, 3 + 7), braille(0x80));
	ck_assert_int_eq(plot_canvas_at(&canvas, 4, 10)->style, PLOT_STYLE_SERIES);
	ck_assert_int_eq(lit_cells(), 1);

	/* the other three corners of a cell: x = 0 (dot column 0), y = 10 (dot
	 * row 0): cell (0, 0) bit 0x01; x = 10 -> dot 51 = cell 25 right half;
	 * y = 0 -> dot 31 = cell row 7, fourth dot */
	double xs[3] = { 0, 10, 10 }, ys[3] = { 10, 10, 0 };
	plot_series c = { .x = xs, .y = ys, .n = 3, .draw = PLOT_DRAW_POINTS };
	f = bare(&c, 1, 0, 10, 0, 10);
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	ck_assert_str_eq(at(0, 3), braille(0x01));
	ck_assert_str_eq(at(0, 3 + 25), braille(0x08));
	ck_assert_str_eq(at(7, 3 + 25), braille(0x80));
	ck_assert_int_eq(lit_cells(), 3);
}
END_TEST

START_TEST(dots_of_one_cell_combine)
{
	/* x range 0..51 and y range 0..31 make data units equal dots: the eight
	 * dots of cell (0, 0) are x 0..1, y 31..28, bits 0x01 0x02 0x04 0x40
	 * (left, top down) and 0x08 0x10 0x20 0x80 (right). Light the left
	 * column and the bottom-right dot: 0x01|0x02|0x04|0x40|0x80 = 0xc7. */
	double xs[5] = { 0, 0, 0, 0, 1 }, ys[5] = { 31, 30, 29, 28, 28 };
	plot_series s = { .x = xs, .y = ys, .n = 5, .draw = PLOT_DRAW_POINTS };
	plot_figure f = bare(&s, 1, 0, 51, 0, 31);
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	ck_assert_int_eq(canvas.area_cols, 26);
	ck_assert_str_eq(at(0, canvas.area_col), braille(0xc7));
	ck_assert_int_eq(lit_cells(), 1);
}
END_TEST

START_TEST(lines_and_clipping)
{
	/* y = 12 in 0..31 is dot row 19: cell row 4, dot 3, both columns: every
	 * cell of that row is 0x40|0x80 */
	double xs[2] = { 0, 51 }, ys[2] = { 12, 12 };
	plot_series s = { .x = xs, .y = ys, .n = 2, .draw = PLOT_DRAW_LINE };
	plot_figure f = bare(&s, 1, 0, 51, 0, 31);
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	for (int i = 0; i < 26; i++)
		ck_assert_str_eq(at(4, canvas.area_col + i), braille(0xc0));
	ck_assert_int_eq(lit_cells(), 26);

	/* the diagonal from dot (0, 31) to (51, 0): Bresenham lights one dot per
	 * step of the longer axis, 52, including both ends */
	ys[0] = 0;
	ys[1] = 31;
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	int dots = 0;
	for (int r = 0; r < 8; r++)
		for (int i = 0; i < 26; i++) {
			int b = braille_bits(at(r, canvas.area_col + i));
			if (b > 0)
				dots += __builtin_popcount((unsigned)b);
		}
	ck_assert_int_eq(dots, 52);
	ck_assert(braille_bits(at(7, canvas.area_col)) & 0x40);
	ck_assert(braille_bits(at(0, canvas.area_col + 25)) & 0x08);

	/* a NaN breaks the line: two separate points, no segment */
	double bx[3] = { 0, 25, 51 }, by[3] = { 12, NAN, 12 };
	plot_series b = { .x = bx, .y = by, .n = 3, .draw = PLOT_DRAW_LINE };
	f = bare(&b, 1, 0, 51, 0, 31);
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	ck_assert_str_eq(at(4, canvas.area_col), braille(0x40));
	ck_assert_str_eq(at(4, canvas.area_col + 25), braille(0x80));
	ck_assert_int_eq(lit_cells(), 2);

	/* a point far outside a fixed range: the segment is clipped, not lost,
	 * and nothing is drawn outside the area. From (0, 12) towards (1e300,
	 * 12): the whole row again */
	double cx[2] = { 0, 1e300 }, cy[2] = { 12, 12 };
	plot_series c = { .x = cx, .y = cy, .n = 2, .draw = PLOT_DRAW_LINE };
	f = bare(&c, 1, 0, 51, 0, 31);
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	ck_assert_int_eq(lit_cells(), 26);

	/* extremes with automatic ranges, columns and markers far outside: no
	 * crash, no undefined behaviour (the sanitizer build checks), axes
	 * still drawn */
	double ex[4] = { -DBL_MAX, DBL_MAX, 0, 1 }, ey[4] = { DBL_MAX, -DBL_MAX, 1e-300, INFINITY };
	plot_series e[2] = { { .x = ex, .y = ey, .n = 4 }, { .x = ex, .y = ey, .n = 4, .draw = PLOT_DRAW_COLUMNS } };
	plot_marker m = { .vertical = true, .at = 1e300 };
	plot_figure_init(&f);
	f.series = e;
	f.nseries = 2;
	f.markers = &m;
	f.nmarkers = 1;
	ck_assert_int_eq(plot_render_text(&f, 40, 12, true, &canvas), MP_OK);
	f.logx = f.logy = true;
	ck_assert_int_eq(plot_render_text(&f, 40, 12, false, &canvas), MP_OK);
	f.fix_x = true;
	f.xmin = 0;
	f.xmax = 1e-300;
	ck_assert_int_eq(plot_render_text(&f, 40, 12, true, &canvas), MP_OK);
	ck_assert_str_eq(at(canvas.area_row + canvas.area_rows, canvas.area_col - 1), "\xe2\x94\x94");
	char err[256];
	mp_status want = plot_have_cairo() ? MP_OK : MP_EUNSUPPORTED;
	ck_assert_int_eq(plot_write_svg(&f, "/dev/null", 300, 200, err, sizeof err), want);
	f.logx = f.logy = false;
	ck_assert_int_eq(plot_write_svg(&f, "/dev/null", 300, 200, err, sizeof err), want);
	ck_assert_int_eq(plot_write_png(&f, "/dev/null", 300, 200, err, sizeof err), want);
}
END_TEST

START_TEST(columns)
{
	/* columns from y = 0: x 0 and 2 at one dot per unit, heights 31 and 3.
	 * A column spans [x, x + the smallest x step), here 2 dots: dots 0..1
	 * fill the first cell column from row 31 up to row 0 (all eight dots of
	 * each cell), dots 2..3 the second cell column from row 31 to 28: cell
	 * row 7 only. Adjacent bins touch, as in a histogram. */
	double xs[2] = { 0, 2 }, ys[2] = { 31, 3 };
	plot_series s = { .x = xs, .y = ys, .n = 2, .draw = PLOT_DRAW_COLUMNS };
	plot_figure f = bare(&s, 1, 0, 51, 0, 31);
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	for (int r = 0; r < 8; r++)
		ck_assert_str_eq(at(r, canvas.area_col), braille(0xff));
	ck_assert_str_eq(at(7, canvas.area_col + 1), braille(0xff));
	ck_assert_str_eq(at(6, canvas.area_col + 1), " ");
	ck_assert_int_eq(lit_cells(), 9);

	/* automatic ranges make room for the columns: the last, at x = 2 with
	 * width 1, ends at 3; on a log axis the smallest, 1e-6 (a whole decade,
	 * -6), keeps a decade of height: the axis starts at 1e-7. With 2e-6
	 * (log -5.7) it starts at the decade below, 1e-6. */
	double hx[3] = { 0, 1, 2 }, hy[3] = { 1e-6, 0.1, 0.01 };
	plot_series h = { .x = hx, .y = hy, .n = 3, .draw = PLOT_DRAW_COLUMNS };
	plot_figure g;
	plot_figure_init(&g);
	g.series = &h;
	g.nseries = 1;
	g.logy = true;
	ck_assert_int_eq(plot_render_text(&g, 40, 12, true, &canvas), MP_OK);
	ck_assert(canvas.xmin == 0 && canvas.xmax == 3);
	ck_assert(fabs(canvas.ymin / 1e-7 - 1) < 1e-12 && fabs(canvas.ymax / 0.1 - 1) < 1e-12);
	hy[0] = 2e-6;
	ck_assert_int_eq(plot_render_text(&g, 40, 12, true, &canvas), MP_OK);
	ck_assert(fabs(canvas.ymin / 1e-6 - 1) < 1e-12);
	g.logy = false;   /* linear: from 0 */
	ck_assert_int_eq(plot_render_text(&g, 40, 12, true, &canvas), MP_OK);
	ck_assert(canvas.ymin == 0 && canvas.ymax == 0.1);
}
END_TEST

START_TEST(ascii_fallback)
{
	/* one mark per cell: the same 30x10 layout, DX = 26, DY = 8; x = 2 ->
	 * round(2/10 * 25) = 5, y = 4 -> round(6/10 * 7) = round(4.2) = 4 */
	double x[2] = { 2, 10 }, y[2] = { 4, 0 };
	plot_series s[2] = { { .x = &x[0], .y = &y[0], .n = 1, .draw = PLOT_DRAW_POINTS },
			     { .x = &x[1], .y = &y[1], .n = 1, .draw = PLOT_DRAW_POINTS } };
	plot_figure f = bare(s, 2, 0, 10, 0, 10);
	ck_assert_int_eq(plot_render_text(&f, 30, 10, false, &canvas), MP_OK);
	ck_assert_int_eq(canvas.area_col, 3);
	ck_assert_str_eq(at(4, 3 + 5), "*");
	ck_assert_str_eq(at(7, 3 + 25), "+");   /* series 1's mark */
	ck_assert_int_eq(plot_canvas_at(&canvas, 7, 28)->style, PLOT_STYLE_SERIES + 1);
	ck_assert_int_eq(lit_cells(), 2);
	/* ASCII axes, and nothing outside ASCII anywhere */
	ck_assert_str_eq(at(0, 2), "+");   /* the tick at 10 */
	ck_assert_str_eq(at(1, 2), "|");
	ck_assert_str_eq(at(8, 2), "+");   /* the corner */
	ck_assert_str_eq(at(8, 4), "-");
	for (int r = 0; r < 10; r++)
		for (int i = 0; i < 30; i++)
			ck_assert_msg((unsigned char)at(r, i)[0] < 0x80 && strlen(at(r, i)) == 1, "row %d col %d", r,
				      i);
}
END_TEST

/* --- ticks, labels, legend --- */

START_TEST(tick_values)
{
	/* 80x24, y fixed 0..1, no title or labels: 22 area rows, target 7
	 * ticks, step 0.1. Tick t sits on dot row round((1 - t) * 87), cell row
	 * that / 4: 1 -> 0, 0.5 -> round(43.5) = 44 -> 11, 0 -> 87 -> 21, 0.1
	 * -> round(78.3) = 78 -> 19. Labels right-aligned to 3 columns. */
	double x = 0.5, y = 0.5;
	plot_series s = { .x = &x, .y = &y, .n = 1, .draw = PLOT_DRAW_POINTS };
	plot_figure f = bare(&s, 1, 0, 100, 0, 1);
	ck_assert_int_eq(plot_render_text(&f, 80, 24, true, &canvas), MP_OK);
	ck_assert_int_eq(canvas.area_rows, 22);
	ck_assert_int_eq(canvas.area_col, 4);
	ck_assert(!strncmp(row_text(0), "  1\xe2\x94\xa4", 6));
	ck_assert(!strncmp(row_text(11), "0.5\xe2\x94\xa4", 6));
	ck_assert(!strncmp(row_text(19), "0.1\xe2\x94\xa4", 6));
	ck_assert(!strncmp(row_text(21), "  0\xe2\x94\xa4", 6));
	ck_assert(!strncmp(row_text(1), "   \xe2\x94\x82", 6));   /* no tick */
	/* x: 80 - 4 - 1 = 75 cells, target 7, 100/7 = 14.3 -> step 10 (r =
	 * 1.43 rounds to 1): 0, 10, ..., 100. 0 sits at column 4, 50 at dot
	 * round(50/100 * 149) = 75 (74.5 rounds away) -> cell 37, column 41; a
	 * two-character label starts at its tick */
	ck_assert_int_eq(canvas.area_cols, 75);
	ck_assert_str_eq(at(22, 4), "\xe2\x94\xac");
	ck_assert_str_eq(at(22, 41), "\xe2\x94\xac");
	ck_assert_str_eq(at(22, 40), "\xe2\x94\x80");
	ck_assert_str_eq(at(23, 4), "0");
	ck_assert_str_eq(at(23, 41), "5");
	ck_assert_str_eq(at(23, 42), "0");
}
END_TEST

START_TEST(value_format)
{
	char b[32];
	ck_assert_str_eq(plot_format_value(0.5, 3, b, sizeof b), "0.5");
	ck_assert_str_eq(plot_format_value(1200, 4, b, sizeof b), "1200");
	ck_assert_str_eq(plot_format_value(1000, 4, b, sizeof b), "1000");
	ck_assert_str_eq(plot_format_value(2e10, 11, b, sizeof b), "2e10");
	ck_assert_str_eq(plot_format_value(1.4e11, 4, b, sizeof b), "1.4e11");
	ck_assert_str_eq(plot_format_value(1.5e-7, 3, b, sizeof b), "1.5e-7");
	ck_assert_str_eq(plot_format_value(-0.25, 2, b, sizeof b), "-0.25");
	ck_assert_str_eq(plot_format_value(0, 3, b, sizeof b), "0");
	ck_assert_str_eq(plot_format_value(INFINITY, 3, b, sizeof b), "inf");
	ck_assert_str_eq(plot_format_value(NAN, 3, b, sizeof b), "nan");
}
END_TEST

START_TEST(log_scale)
{
	/* log y over 1..1000 (axis 0..3) on a 30x10 grid, 8 rows: decade ticks
	 * 1, 10, 100, 1000 are 4 > target 2, so every second: 1 (axis 0, dot
	 * row 31 -> cell 7) and 100 (axis 2, round(1/3 * 31) = 10 -> cell 2).
	 * The point y = 10 (axis 1): round(2/3 * 31) = round(20.67) = 21 ->
	 * cell row 5, dot 1; x = 0 is dot column 0: bit 0x02. Points at y = 0
	 * and y = -1 have no logarithm and are left out. */
	double xs[3] = { 0, 5, 6 }, ys[3] = { 10, 0, -1 };
	plot_series s = { .x = xs, .y = ys, .n = 3, .draw = PLOT_DRAW_LINE };
	plot_figure f = bare(&s, 1, 0, 10, 1, 1000);
	f.logy = true;
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	ck_assert_int_eq(canvas.area_col, 4);
	ck_assert(!strncmp(row_text(7), "  1\xe2\x94\xa4", 6));
	ck_assert(!strncmp(row_text(2), "100\xe2\x94\xa4", 6));
	ck_assert_str_eq(at(5, 4), braille(0x02));
	ck_assert_int_eq(lit_cells(), 1);
	ck_assert(fabs(canvas.ymin - 1) < 1e-12 && fabs(canvas.ymax - 1000) < 1e-9);

	/* automatic log range from the data: 0.01 .. 100, and a 1-2-5 axis
	 * when there is room (4 decades * 3 <= 24 / 3? no: decades only) */
	double ly[2] = { 0.01, 100 }, lx[2] = { 0, 1 };
	plot_series l = { .x = lx, .y = ly, .n = 2 };
	plot_figure g;
	plot_figure_init(&g);
	g.series = &l;
	g.nseries = 1;
	g.logy = true;
	ck_assert_int_eq(plot_render_text(&g, 40, 12, true, &canvas), MP_OK);
	ck_assert(fabs(canvas.ymin - 0.01) < 1e-15 && fabs(canvas.ymax - 100) < 1e-12);
	ck_assert(strstr(row_text(0), "100"));   /* the top tick is the largest decade */
}
END_TEST

START_TEST(legend_title_labels)
{
	double x[2] = { 0, 1 }, y1[2] = { 0, 1 }, y2[2] = { 1, 0 };
	plot_series s[2] = { { .name = "alpha", .x = x, .y = y1, .n = 2 },
			     { .name = "beta", .x = x, .y = y2, .n = 2, .draw = PLOT_DRAW_POINTS } };
	plot_figure f;
	plot_figure_init(&f);
	f.title = "Title";
	f.xlabel = "step";
	f.ylabel = "loss";
	f.series = s;
	f.nseries = 2;
	ck_assert_int_eq(plot_render_text(&f, 40, 16, true, &canvas), MP_OK);
	/* title centred on row 0: (40 - 5) / 2 = 17 */
	ck_assert_str_eq(row_text(0), "                 Title");
	ck_assert_int_eq(plot_canvas_at(&canvas, 0, 17)->style, PLOT_STYLE_TITLE);
	ck_assert_str_eq(row_text(1), "loss");
	ck_assert_int_eq(canvas.area_row, 2);
	/* 16 rows: title, y label, 10 area rows, axis, ticks, x label, legend */
	ck_assert_int_eq(canvas.area_rows, 10);
	ck_assert_str_eq(row_text(14), "                                    step");
	ck_assert_str_eq(row_text(15), "\xe2\x94\x80\xe2\x94\x80 alpha    \xe2\x80\xa2 beta");
	ck_assert_int_eq(plot_canvas_at(&canvas, 15, 0)->style, PLOT_STYLE_SERIES);
	ck_assert_int_eq(plot_canvas_at(&canvas, 15, 3)->style, PLOT_STYLE_LABEL);
	ck_assert_int_eq(plot_canvas_at(&canvas, 15, 12)->style, PLOT_STYLE_SERIES + 1);
	ck_assert_int_eq(plot_render_text(&f, 40, 16, false, &canvas), MP_OK);
	ck_assert_str_eq(row_text(15), "** alpha    + beta");

	/* a name longer than the line is cut with an ellipsis; a control
	 * character prints as '?' */
	s[0].name = "a\tvery long legend entry that cannot fit at all here";
	ck_assert_int_eq(plot_render_text(&f, 30, 16, false, &canvas), MP_OK);
	const char *leg = row_text(14);
	ck_assert(!strncmp(leg, "** a?very", 9));
	ck_assert_int_eq((int)strlen(leg), 30);
	ck_assert_int_eq(leg[29], '~');
}
END_TEST

START_TEST(markers)
{
	/* a horizontal marker at y = 12 (dot row 19, cell row 4) in 0..31 and a
	 * vertical one at x = 20 (dot 20, cell 10) with labels */
	double x = 0, y = 0;
	plot_series s = { .x = &x, .y = &y, .n = 1, .draw = PLOT_DRAW_POINTS };
	plot_marker m[2] = { { .vertical = false, .at = 12, .label = "ref" }, { .vertical = true, .at = 20 } };
	plot_figure f = bare(&s, 1, 0, 51, 0, 31);
	f.markers = m;
	f.nmarkers = 2;
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	int a = canvas.area_col;
	ck_assert_str_eq(at(4, a), "\xe2\x94\x88");
	ck_assert_int_eq(plot_canvas_at(&canvas, 4, a)->style, PLOT_STYLE_MARKER);
	ck_assert_str_eq(at(4, a + 23), "r");   /* the label ends at the right edge */
	ck_assert_str_eq(at(4, a + 25), "f");
	ck_assert_str_eq(at(1, a + 10), "\xe2\x94\x8a");
	/* data wins over a marker: the point at (0, 0) in cell (7, 0) */
	ck_assert_str_eq(at(7, a), braille(0x40));
}
END_TEST

/* Marker labels go after the data, beside their line where no data dot is
 * lit. The figure of the markers test (30x10, x 0..51 -> dot column x, cell
 * x / 2 of 26; y 0..31 -> dot row 31 - y, cell row (31 - y) / 4 of 8):
 * a line at y = 31 (dot row 0) from x = 0 to 41 lights cells 0..20 of row 0,
 * each with its two top dots (0x01 | 0x08); a line at y = 12 (dot row 19,
 * cell row 4, bottom dots 0x40 | 0x80) from x = 30 to 51 lights cells
 * 15..25 of row 4. */
START_TEST(marker_labels_avoid_data)
{
	double x0[2] = { 0, 41 }, y0[2] = { 31, 31 }, x1[2] = { 30, 51 }, y1[2] = { 12, 12 };
	plot_series s[2] = { { .x = x0, .y = y0, .n = 2 }, { .x = x1, .y = y1, .n = 2 } };
	plot_marker m[4] = {
		/* x = 20: its line in cell 10; "min normal" would take cells 11..20
		 * (right) or 0..9 (left) of row 0, both lit: it goes to row 1, right */
		{ .vertical = true, .at = 20, .label = "min normal" },
		/* x = 18: line in cell 9; row 0 is lit on both sides, row 1's right
		 * (10..12) meets "min normal": row 1, left, cells 6..8 */
		{ .vertical = true, .at = 18, .label = "max" },
		/* y = 12: row 4; the right end (23..25) is lit, the left end free */
		{ .vertical = false, .at = 12, .label = "ref" },
		/* y = 8: dot row 23, cell row 5, nothing lit: the right end */
		{ .vertical = false, .at = 8, .label = "low" },
	};
	plot_figure f = bare(s, 2, 0, 51, 0, 31);
	f.markers = m;
	f.nmarkers = 4;
	ck_assert_int_eq(plot_render_text(&f, 30, 10, true, &canvas), MP_OK);
	int a = canvas.area_col;
	ck_assert_int_eq(canvas.area_cols, 26);
	ck_assert_int_eq(canvas.area_rows, 8);
	/* the data stays where it is */
	for (int i = 0; i <= 20; i++) {
		ck_assert_str_eq(at(0, a + i), braille(0x09));
		ck_assert_int_eq(plot_canvas_at(&canvas, 0, a + i)->style, PLOT_STYLE_SERIES);
	}
	for (int i = 15; i <= 25; i++)
		ck_assert_str_eq(at(4, a + i), braille(0xc0));
	/* and every label is whole, in the marker style */
	const char *mn = "min normal";
	for (int i = 0; i < 10; i++) {
		char ch[2] = { mn[i], 0 };
		ck_assert_str_eq(at(1, a + 11 + i), ch);
		ck_assert_int_eq(plot_canvas_at(&canvas, 1, a + 11 + i)->style, PLOT_STYLE_MARKER);
	}
	ck_assert_str_eq(at(1, a + 10), "\xe2\x94\x8a");   /* its line */
	ck_assert_str_eq(at(1, a + 6), "m");
	ck_assert_str_eq(at(1, a + 7), "a");
	ck_assert_str_eq(at(1, a + 8), "x");
	ck_assert_str_eq(at(4, a + 0), "r");
	ck_assert_str_eq(at(4, a + 1), "e");
	ck_assert_str_eq(at(4, a + 2), "f");
	ck_assert_str_eq(at(4, a + 3), "\xe2\x94\x88");   /* the dotted line goes on */
	ck_assert_str_eq(at(5, a + 23), "l");
	ck_assert_str_eq(at(5, a + 25), "w");

	/* no free place at all (columns fill the data area): the label covers
	 * the data on the top row, right of its line, still whole */
	double xc[26], yc[26];
	for (int i = 0; i < 26; i++)
		xc[i] = 2 * i, yc[i] = 31;
	plot_series full = { .x = xc, .y = yc, .n = 26, .draw = PLOT_DRAW_COLUMNS };
	plot_figure g = bare(&full, 1, 0, 51, 0, 31);
	g.markers = m;
	g.nmarkers = 1;
	ck_assert_int_eq(plot_render_text(&g, 30, 10, true, &canvas), MP_OK);
	for (int i = 0; i < 10; i++) {
		char ch[2] = { mn[i], 0 };
		ck_assert_str_eq(at(0, a + 11 + i), ch);
	}
	ck_assert_str_ne(at(1, a + 11), " ");   /* the columns are there below */
}
END_TEST

/* --- bars --- */

START_TEST(bars)
{
	/* categories "a" and "bb", values 1 and 0.3, automatic range 0..1.
	 * 40x8, no title: labels 2 wide, the axis at column 3, bars from
	 * column 4; value labels up to 3 wide: 40 - 4 - 3 - 1 = 32 cells.
	 * 1 -> 32 full cells; 0.3 -> 0.3 * 256 = 76.8 -> 77 eighths = 9 full
	 * cells and 5/8 (U+258B). */
	const char *cats[2] = { "a", "bb" };
	double v[2] = { 1, 0.3 };
	plot_series s = { .y = v, .n = 2 };
	plot_figure f;
	plot_figure_init(&f);
	f.kind = PLOT_BARS;
	f.series = &s;
	f.nseries = 1;
	f.categories = cats;
	f.ncategories = 2;
	ck_assert_int_eq(plot_render_text(&f, 40, 8, true, &canvas), MP_OK);
	ck_assert_int_eq(canvas.area_col, 4);
	ck_assert_int_eq(canvas.area_cols, 32);
	ck_assert_str_eq(at(0, 0), "a");
	ck_assert_str_eq(at(0, 3), "\xe2\x94\x82");
	for (int i = 0; i < 32; i++)
		ck_assert_str_eq(at(0, 4 + i), "\xe2\x96\x88");
	ck_assert_str_eq(at(0, 37), "1");
	for (int i = 0; i < 9; i++)
		ck_assert_str_eq(at(1, 4 + i), "\xe2\x96\x88");
	ck_assert_str_eq(at(1, 13), "\xe2\x96\x8b");
	ck_assert_str_eq(at(1, 14), " ");
	ck_assert_str_eq(row_text(1) + strlen(row_text(1)) - 3, "0.3");
	ck_assert_int_eq(plot_canvas_at(&canvas, 1, 4)->style, PLOT_STYLE_SERIES);
	/* the value axis right under the bars: 0 under the first bar cell */
	ck_assert_str_eq(at(2, 3), "\xe2\x94\x94");
	ck_assert_str_eq(at(3, 4), "0");
	/* a NULL category name is an empty one, in text and in images */
	const char *nocat[2] = { "a", NULL };
	f.categories = nocat;
	ck_assert_int_eq(plot_render_text(&f, 40, 8, true, &canvas), MP_OK);
	char err[256];
	mp_status want = plot_have_cairo() ? MP_OK : MP_EUNSUPPORTED;
	ck_assert_int_eq(plot_write_svg(&f, "/dev/null", 300, 200, err, sizeof err), want);
	ck_assert_int_eq(plot_write_png(&f, "/dev/null", 300, 200, err, sizeof err), want);
	f.categories = cats;
	/* ASCII: 0.3 * 32 = 9.6 -> 10 cells */
	ck_assert_int_eq(plot_render_text(&f, 40, 8, false, &canvas), MP_OK);
	ck_assert(!strncmp(row_text(1), "bb |########## 0.3", 18));
	ck_assert_str_eq(at(1, 13), "#");
	ck_assert_str_eq(at(1, 14), " ");
}
END_TEST

/* --- the canvas --- */

START_TEST(sizes_and_reuse)
{
	double x = 1, y = 1;
	plot_series s = { .x = &x, .y = &y, .n = 1 };
	plot_figure f;
	plot_figure_init(&f);
	f.series = &s;
	f.nseries = 1;
	ck_assert_int_eq(plot_render_text(&f, PLOT_MIN_COLS - 1, 24, true, &canvas), MP_EINVAL);
	ck_assert_int_eq(plot_render_text(&f, 80, PLOT_MIN_ROWS - 1, true, &canvas), MP_EINVAL);
	ck_assert_int_eq(plot_render_text(&f, PLOT_MIN_COLS, PLOT_MIN_ROWS, true, &canvas), MP_OK);
	/* a single point: the automatic range is widened around it and the point
	 * is drawn */
	ck_assert_int_eq(lit_cells(), 1);
	ck_assert_int_eq(plot_render_text(&f, 80, 24, true, &canvas), MP_OK);
	plot_cell *cells = canvas.cells;
	uint8_t *dots = canvas.dots;
	/* the same size and a smaller one reuse the buffers */
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(plot_render_text(&f, 80 - i, 24 - i, true, &canvas), MP_OK);
	ck_assert_ptr_eq(canvas.cells, cells);
	ck_assert_ptr_eq(canvas.dots, dots);
	/* inconsistent figures */
	plot_series bad = { .n = 3 };
	f.series = &bad;
	ck_assert_int_eq(plot_render_text(&f, 80, 24, true, &canvas), MP_EINVAL);
	const char *cats[1] = { "a" };
	double v[2] = { 1, 2 };
	plot_series two = { .y = v, .n = 2 };
	f.kind = PLOT_BARS;
	f.series = &two;
	f.categories = cats;
	f.ncategories = 1;
	ck_assert_int_eq(plot_render_text(&f, 80, 24, true, &canvas), MP_EINVAL);
	/* no series at all: axes only */
	plot_figure_init(&f);
	ck_assert_int_eq(plot_render_text(&f, 40, 10, true, &canvas), MP_OK);
	ck_assert_int_eq(lit_cells(), 0);
}
END_TEST

START_TEST(print)
{
	double x = 3, y = 4;
	plot_series s = { .x = &x, .y = &y, .n = 1, .draw = PLOT_DRAW_POINTS };
	plot_figure f = bare(&s, 1, 0, 10, 0, 10);
	f.title = "T";
	ck_assert_int_eq(plot_render_text(&f, 30, 10, false, &canvas), MP_OK);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	ck_assert_int_eq(plot_canvas_print(&canvas, fp, false), MP_OK);
	fclose(fp);
	ck_assert(!strchr(buf, '\033'));
	ck_assert(!strncmp(buf, "              T\n", 16));   /* trailing blanks dropped */
	int lines = 0;
	for (char *p = buf; *p; p++)
		lines += *p == '\n';
	ck_assert_int_eq(lines, 10);
	free(buf);
	fp = open_memstream(&buf, &len);
	ck_assert_int_eq(plot_canvas_print(&canvas, fp, true), MP_OK);
	fclose(fp);
	ck_assert(strstr(buf, "\033[1mT\033[0m"));   /* the title in bold */
	ck_assert(strstr(buf, "\033[34m*\033[0m"));  /* series 0 in blue */
	free(buf);
}
END_TEST

static Suite *plot_suite(void)
{
	Suite *s = suite_create("plot");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_point_lights_one_dot);
	tcase_add_test(tc, dots_of_one_cell_combine);
	tcase_add_test(tc, lines_and_clipping);
	tcase_add_test(tc, columns);
	tcase_add_test(tc, ascii_fallback);
	tcase_add_test(tc, tick_values);
	tcase_add_test(tc, value_format);
	tcase_add_test(tc, log_scale);
	tcase_add_test(tc, legend_title_labels);
	tcase_add_test(tc, markers);
	tcase_add_test(tc, marker_labels_avoid_data);
	tcase_add_test(tc, bars);
	tcase_add_test(tc, sizes_and_reuse);
	tcase_add_test(tc, print);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(plot_suite());
}
