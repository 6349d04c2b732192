/* Drawing a plot/ figure into a curses window: the plot module lays out the
 * cells, this blits them with the theme's colours. */
#ifndef MIXPREC_TUI_PLOTVIEW_H
#define MIXPREC_TUI_PLOTVIEW_H

#include <curses.h>

#include "plot/plot.h"

/* Renders f into rows x cols cells at (y, x) of w, reusing canvas c (which
 * allocates only when the size grows). Too small a space draws a note instead. */
void plotview_draw(WINDOW *w, int y, int x, int rows, int cols, const plot_figure *f, plot_canvas *c);

#endif
