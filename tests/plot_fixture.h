/* Shared by the plot tests that render text (test_plot.c, test_plot_csv.c):
 * the canvas each test draws on, set up and freed around every test by
 * Check's checked fixture, and what a test reads back from it. */
#ifndef MIXPREC_TESTS_PLOT_FIXTURE_H
#define MIXPREC_TESTS_PLOT_FIXTURE_H

#include <string.h>

#include "plot/plot.h"
#include "testutil.h"

static plot_canvas canvas;

static inline void setup(void)
{
	plot_canvas_init(&canvas);
}

static inline void teardown(void)
{
	plot_canvas_free(&canvas);
}

static inline const char *at(int row, int col)
{
	return plot_canvas_at(&canvas, row, col)->text;
}

/* The cells of the data area that are not blank. */
static inline int lit_cells(void)
{
	int n = 0;
	for (int r = canvas.area_row; r < canvas.area_row + canvas.area_rows; r++)
		for (int i = canvas.area_col; i < canvas.area_col + canvas.area_cols; i++)
			n += strcmp(at(r, i), " ") != 0;
	return n;
}

#endif
