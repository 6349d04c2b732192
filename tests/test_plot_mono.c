/* Plots read without colour: with f->mono (NO_COLOR, a pipe)
 * every series keeps a mark of its own, in the data area and in the legend,
 * and lines are labelled at their end; in ASCII the marks do not repeat
 * within the fifteen presets of train, nor the colours of a terminal. (The rest of the plot module's
 * tests: tests/test_plot.c, test_plot_csv.c, test_plot_image.c.) */
#include <stdio.h>
#include <string.h>

#include "plot/plot.h"
#include "testutil.h"

enum { NS = 15, COLS = 60, ROWS = 32 };

static plot_canvas canvas;
static double xs[2] = { 0, 5 }, ys[NS][2];
static char names[NS][8];
static plot_series series[NS];

static void setup(void)
{
	plot_canvas_init(&canvas);
	for (int k = 0; k < NS; k++) {
		ys[k][0] = ys[k][1] = k;
		snprintf(names[k], sizeof names[k], "s%d", k);
		series[k] = (plot_series){ .name = names[k], .x = xs, .y = ys[k], .n = 2, .draw = PLOT_DRAW_LINE };
	}
}

static void teardown(void)
{
	plot_canvas_free(&canvas);
}

static const char *at(int row, int col)
{
	return plot_canvas_at(&canvas, row, col)->text;
}

/* Fifteen horizontal lines y = k from x = 0 to 5 on x 0..10, y -0.5..14.5: the
 * lines end in the middle of the data area, with room after them. */
static void render(bool utf8, bool mono)
{
	plot_figure f;
	plot_figure_init(&f);
	f.series = series;
	f.nseries = NS;
	f.fix_x = f.fix_y = true;
	f.xmin = 0;
	f.xmax = 10;
	f.ymin = -0.5;
	f.ymax = NS - 0.5;
	f.mono = mono;
	ck_assert_int_eq(plot_render_text(&f, COLS, ROWS, utf8, &canvas), MP_OK);
}

/* The glyph of each line, from the top of the data area down: the rows
 * whose left part (x < 5) is lit, each lit with one glyph only. Returns the
 * count and fills glyph[] and row[]. */
static int line_glyphs(char glyph[][8], int row[])
{
	int n = 0, half = canvas.area_cols / 2 - 1;
	for (int r = canvas.area_row; r < canvas.area_row + canvas.area_rows; r++) {
		const char *g = NULL;
		for (int i = canvas.area_col; i < canvas.area_col + half; i++) {
			const char *t = at(r, i);
			if (!strcmp(t, " "))
				continue;
			if (!g)
				g = t;
			ck_assert_msg(!strcmp(g, t), "row %d mixes '%s' and '%s'", r, g, t);
		}
		if (g && n < NS) {
			snprintf(glyph[n], sizeof glyph[n], "%s", g);
			row[n++] = r;
		}
	}
	return n;
}

static bool braille_cell(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	return u[0] == 0xe2 && (u[1] & 0xfc) == 0xa0;
}

/* Fifteen lines, fifteen glyphs, none a braille cell; the i-th from the top
 * is y = 14 - i (higher values on top), i.e. series 14 - i. */
static void check_distinct(char glyph[][8], int row[], bool allow_braille)
{
	ck_assert_int_eq(line_glyphs(glyph, row), NS);
	for (int a = 0; a < NS; a++) {
		ck_assert_msg(allow_braille || !braille_cell(glyph[a]), "line %d drawn in braille", a);
		for (int b = a + 1; b < NS; b++)
			ck_assert_msg(strcmp(glyph[a], glyph[b]) != 0, "lines %d and %d share '%s'", a, b, glyph[a]);
	}
}

/* Canvas row r as text. */
static const char *row_text(int r)
{
	static char buf[1024];
	size_t n = 0;
	for (int i = 0; i < canvas.cols; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", at(r, i));
	return buf;
}

START_TEST(mono_utf8_marks_legend_labels)
{
	char glyph[NS][8];
	int row[NS];
	render(true, true);
	check_distinct(glyph, row, false);
	for (int i = 0; i < NS; i++) {
		int k = NS - 1 - i;
		/* the legend entry of series k shows its line's mark twice */
		char entry[32];
		snprintf(entry, sizeof entry, "%s%s %s", glyph[i], glyph[i], names[k]);
		bool found = false;
		for (int r = canvas.area_row + canvas.area_rows; r < ROWS && !found; r++)
			found = strstr(row_text(r), entry) != NULL;
		ck_assert_msg(found, "legend entry '%s'", entry);
		/* and the line's end carries its name, on its own row */
		ck_assert_msg(strstr(row_text(row[i]), names[k]) != NULL, "no label %s on its line", names[k]);
	}
}
END_TEST

START_TEST(ascii_marks_do_not_repeat)
{
	char glyph[NS][8];
	int row[NS];
	render(false, false);
	check_distinct(glyph, row, false);
	/* and in colour with utf8, braille as before */
	render(true, false);
	ck_assert_int_eq(line_glyphs(glyph, row), NS);
	for (int a = 0; a < NS; a++)
		ck_assert(braille_cell(glyph[a]));
}
END_TEST

START_TEST(mono_bars)
{
	/* fifteen series of one category: fifteen bar rows, each of its own mark */
	static const char *const cats[] = { "c" };
	double v[NS];
	plot_series s[NS];
	for (int k = 0; k < NS; k++) {
		v[k] = k + 1;
		s[k] = (plot_series){ .name = names[k], .y = &v[k], .n = 1 };
	}
	plot_figure f;
	plot_figure_init(&f);
	f.kind = PLOT_BARS;
	f.series = s;
	f.nseries = NS;
	f.categories = cats;
	f.ncategories = 1;
	f.mono = true;
	ck_assert_int_eq(plot_render_text(&f, COLS, ROWS, true, &canvas), MP_OK);
	char seen[NS][8];
	for (int k = 0; k < NS; k++) {
		const char *g = at(canvas.area_row + k, canvas.area_col);
		ck_assert_msg(strcmp(g, "\xe2\x96\x88") != 0 && strcmp(g, " ") != 0, "bar %d is '%s'", k, g);
		snprintf(seen[k], sizeof seen[k], "%s", g);
		for (int j = 0; j < k; j++)
			ck_assert_msg(strcmp(seen[j], seen[k]) != 0, "bars %d and %d share '%s'", j, k, g);
	}
}
END_TEST

/* In colour on a terminal (utf8, not mono) the fifteen lines keep braille
 * and each gets an SGR colour of its own: the escape sequence right before
 * the first braille cell of each line's printed row. */
START_TEST(colour_does_not_repeat)
{
	char glyph[NS][8];
	int row[NS];
	render(true, false);
	ck_assert_int_eq(line_glyphs(glyph, row), NS);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	ck_assert_int_eq(plot_canvas_print(&canvas, fp, true), MP_OK);
	fclose(fp);
	char sgr[NS][32];
	for (int a = 0; a < NS; a++) {
		/* the printed line of canvas row row[a] */
		const char *line = buf;
		for (int r = 0; r < row[a]; r++) {
			line = strchr(line, '\n');
			ck_assert_ptr_nonnull(line);
			line++;
		}
		const char *cell = NULL, *end = strchr(line, '\n');
		/* braille U+2800..U+28FF: e2 a0 80 .. e2 a3 bf */
		for (const char *c = strchr(line, '\xe2'); c && c < end; c = strchr(c + 1, '\xe2'))
			if ((unsigned char)c[1] >= 0xa0 && (unsigned char)c[1] <= 0xa3) {
				cell = c;
				break;
			}
		ck_assert_msg(cell && cell < end, "line %d has no braille cell", a);
		const char *esc = NULL;
		for (const char *c = line; c < cell; c++)
			if (*c == '\033')
				esc = c;
		ck_assert_msg(esc && esc[1] == '[', "line %d's cells are not coloured", a);
		size_t n = strcspn(esc, "m") + 1;
		ck_assert_uint_lt(n, sizeof sgr[a]);
		memcpy(sgr[a], esc, n);
		sgr[a][n] = '\0';
		for (int b = 0; b < a; b++)
			ck_assert_msg(strcmp(sgr[a], sgr[b]) != 0, "lines %d and %d share the colour %s", b, a, sgr[a] + 1);
	}
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plot_mono");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, mono_utf8_marks_legend_labels);
	tcase_add_test(tc, ascii_marks_do_not_repeat);
	tcase_add_test(tc, mono_bars);
	tcase_add_test(tc, colour_does_not_repeat);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
