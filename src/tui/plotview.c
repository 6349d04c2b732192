#include "tui/app.h"
#include "tui/plotview.h"

static tui_role style_role(int style)
{
	switch (style) {
	case PLOT_STYLE_BLANK: return ROLE_NORMAL;
	case PLOT_STYLE_TITLE: return ROLE_HEADING;
	case PLOT_STYLE_LABEL: return ROLE_NORMAL;
	case PLOT_STYLE_TICK: return ROLE_DIM;
	case PLOT_STYLE_AXIS: return ROLE_AXIS;
	case PLOT_STYLE_MARKER: return ROLE_BAD;
	default: return theme_series(style - PLOT_STYLE_SERIES);
	}
}

void plotview_draw(WINDOW *w, int y, int x, int rows, int cols, const plot_figure *f, plot_canvas *c)
{
	if (rows < PLOT_MIN_ROWS || cols < PLOT_MIN_COLS) {
		tui_put(w, y, x, cols, ROLE_DIM, "(enlarge the terminal to see the plot)");
		return;
	}
	/* a monochrome screen tells the series apart by their marks */
	plot_figure fig = *f;
	fig.mono = !theme_color();
	mp_status st = plot_render_text(&fig, cols, rows, theme_utf8(), c);
	if (st != MP_OK) {
		tui_putf(w, y, x, cols, ROLE_BAD, "plot: %s", mp_status_message(st));
		return;
	}
	for (int r = 0; r < c->rows; r++)
		for (int k = 0; k < c->cols; k++) {
			const plot_cell *cell = plot_canvas_at(c, r, k);
			if (cell->style == PLOT_STYLE_BLANK && cell->text[0] == ' ')
				continue;
			tui_put(w, y + r, x + k, 1, style_role(cell->style), cell->text);
		}
}
