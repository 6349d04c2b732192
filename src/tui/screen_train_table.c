/* The Training lab's table (screen_train_table.h). */
#include <stdio.h>

#include "tui/app.h"
#include "tui/screen_train_table.h"

/* 1 + 15 + 7 blanks + 7 + 7 + 8 + 7 + 9 + 8 + 10 = 79 columns: one to spare at 80 */
enum { NAME_W = 15 };
#define HEAD_FMT "%7s %7s %8s %7s %9s %8s %10s"
#define ROW_FMT "%7.4f %7.1f %8.6g %7zu %9.3g %8.3g %10.3g"

const char *const train_table_columns[] = { "policy", "loss", "ms/step", "scale", "skipped", "underflow",
	                                    "lost_upd", "resid_lost", NULL };

int train_table_draw(WINDOW *w, int y, int rows, int cols, const train_stats *hist, size_t done, size_t np,
                     const char *const *names)
{
	if (rows < 1)
		return 0;
	const char *const *c = train_table_columns;
	tui_putf(w, y, 1, cols - 2, ROLE_HEADING, "%-*s " HEAD_FMT, NAME_W, c[0], c[1], c[2], c[3], c[4], c[5], c[6],
	         c[7]);
	/* every policy when they fit, else the rows that do and a count of the rest */
	size_t shown = np + 1 <= (size_t)rows ? np : (size_t)rows >= 2 ? (size_t)rows - 2 : 0;
	for (size_t i = 0; i < shown; i++) {
		int r = y + 1 + (int)i;
		tui_put(w, r, 0, 1, theme_series((int)i), theme_utf8() ? theme_glyph(GLYPH_BLOCK) : "*");
		tui_put_fit(w, r, 1, NAME_W, ROLE_NORMAL, names[i]);
		if (!done) {
			tui_putf(w, r, 2 + NAME_W, cols - 3 - NAME_W, ROLE_NORMAL, "%7s", "-");
			continue;
		}
		const train_stats *last = &hist[(done - 1) * np + i];
		double ms = 0;
		size_t skipped = 0;
		for (size_t k = 0; k < done; k++) {
			ms += hist[k * np + i].ms;
			skipped += hist[k * np + i].skipped;
		}
		tui_putf(w, r, 2 + NAME_W, cols - 3 - NAME_W, ROLE_NORMAL, ROW_FMT, last->loss, ms / (double)done,
		         last->loss_scale, skipped, last->underflow_frac, last->lost_update_frac, last->resid_lost_frac);
	}
	if (shown == np)
		return 1 + (int)np;
	if (rows >= 2)
		tui_putf(w, y + rows - 1, 1, cols - 2, ROLE_DIM, "+%zu more polic%s (a taller terminal shows them)",
		         np - shown, np - shown == 1 ? "y" : "ies");
	return rows;
}
