/* Home: the lessons and home_labs as a map, with the sections read in each
 * lesson and a resume point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/lesson.h"
#include "teach/progress.h"
#include "tui/progcache.h"
#include "tui/screens.h"
#include "tui/state.h"

#define HOME_KEYS(X)                                                              \
	X(HOME_UP, "k Up", "previous item", 'k', FK(KEY_UP))                       \
	X(HOME_DOWN, "j Down", "next item", 'j', FK(KEY_DOWN))                     \
	X(HOME_OPEN, "Enter l", "open the item", TUI_ENTER_KEYS, 'l')              \
	X(HOME_NEXT_GROUP, "Tab", "jump to the next group (lessons, exercises, labs)", '\t') \
	X(HOME_RESUME, "r", "resume the lesson where you left off", 'r')
TUI_KEYMAP(home, HOME_KEYS);

enum { HOME_MAX_ITEMS = 32 };

typedef struct {
	const char *group;        /* "Lessons" or "Labs" */
	char label[96];
	char detail[160];
	char lesson[64];          /* lesson name, or "" for a lab */
	const tui_screen_ops *lab;
	int sections;
} home_item;

typedef struct {
	home_item items[HOME_MAX_ITEMS];
	int n, sel;
	int item_y[HOME_MAX_ITEMS];   /* where each item was drawn, -1 when not */
} home;

static const struct {
	const tui_screen_ops *ops;
	const char *detail;
} home_labs[] = {
	{ &screen_bits_ops, "a value in fp32, tf32, fp16, bf16, fp8, bit by bit" },
	{ &screen_handround_ops, "round a value by hand, each step checked" },
	{ &screen_drift_ops, "small updates to a large value, in each format" },
	{ &screen_train_ops, "the tiny GPT under precision policies, live" },
	{ &screen_budget_ops, "training and serving memory per component and GPU" },
	{ &screen_scale_ops, "gradients against fp16's range; the scale S" },
	{ &screen_block_ops, "MX/NVFP4 blocks: scale rules, each element's bits" },
};

static mp_status home_init(tui_screen *s, int argc, char **argv)
{
	(void)argc, (void)argv;
	home *h = s->priv;
	char **names = NULL;
	size_t count = 0;
	char lesson_folder[4096];
	const char *dir = lesson_dir(lesson_folder, sizeof lesson_folder);
	if (lesson_list(dir, &names, &count) != MP_OK)
		tui_message(s->app, true, "no lessons found in %s", dir);
	for (size_t i = 0; i < count; i++) {
		if (h->n < HOME_MAX_ITEMS - (int)(sizeof home_labs / sizeof home_labs[0])) {
			home_item *it = &h->items[h->n];
			char path[4096], err[256];
			lesson_doc doc;
			snprintf(path, sizeof path, "%s/%s.md", dir, names[i]);
			it->group = "Lessons";
			snprintf(it->lesson, sizeof it->lesson, "%s", names[i]);
			if (lesson_load(&doc, path, err, sizeof err) == MP_OK) {
				snprintf(it->label, sizeof it->label, "%s", doc.title ? doc.title : names[i]);
				for (size_t b = 0; b < doc.nblocks; b++)
					it->sections += doc.blocks[b].kind == LB_HEADING;
				snprintf(it->detail, sizeof it->detail, "lesson %s: %d sections", names[i], it->sections);
				lesson_free(&doc);
				h->n++;
			} else {
				tui_message(s->app, true, "%s", err);
			}
		}
		free(names[i]);
	}
	free(names);
	{
		home_item *it = &h->items[h->n++];
		it->group = "Exercises";
		it->lab = &screen_exercises_ops;
		snprintf(it->label, sizeof it->label, "All exercises");
		snprintf(it->detail, sizeof it->detail, "answers checked as you type them; hints, solutions");
	}
	for (size_t i = 0; i < sizeof home_labs / sizeof home_labs[0]; i++) {
		home_item *it = &h->items[h->n++];
		it->group = "Labs";
		it->lab = home_labs[i].ops;
		snprintf(it->label, sizeof it->label, "%s", home_labs[i].ops->title);
		snprintf(it->detail, sizeof it->detail, "%s", home_labs[i].detail);
	}
	return MP_OK;
}

/* Sections of a lesson recorded as read in progress.csv. */
static int sections_read(const progress *p, const char *lesson, int sections)
{
	int n = 0;
	for (int i = 1; p && i <= sections; i++) {
		char item[PROGRESS_ITEM_MAX];
		snprintf(item, sizeof item, "lesson:%s#%d", lesson, i);
		const progress_row *r = progress_get(p, item);
		n += r && r->solved;
	}
	return n;
}

/* The layout's line of each item (vy) and of each group heading (the line
 * before a group's first item), a blank line between groups unless the
 * list would not fit in avail lines with them; returns the lines used. */
static int home_layout(const home *h, int avail, int *vy)
{
	int groups = 0;
	for (int i = 0; i < h->n; i++)
		groups += !i || strcmp(h->items[i - 1].group, h->items[i].group);
	int gap = h->n + 2 * groups - 1 <= avail, v = 0;
	for (int i = 0; i < h->n; i++) {
		if (!i || strcmp(h->items[i - 1].group, h->items[i].group))
			v += (i ? gap : 0) + 1;   /* the heading */
		vy[i] = v++;
	}
	return v;
}

/* One item at screen line y. */
static void home_draw_item(WINDOW *w, int y, int cols, const home_item *it, bool sel, const progress *prog)
{
	if (sel)
		tui_put(w, y, 2, 2, ROLE_SELECT, theme_glyph(GLYPH_ARROW));
	char mark[32] = "   ";
	char ptext[64] = "";
	tui_role mrole = ROLE_NORMAL;
	if (it->lesson[0]) {
		int read = sections_read(prog, it->lesson, it->sections);
		snprintf(mark, sizeof mark, "[%s]",
		         read == 0 ? " " : read >= it->sections ? theme_glyph(GLYPH_CHECK) : theme_glyph(GLYPH_PARTIAL));
		snprintf(ptext, sizeof ptext, "%d/%d sections read", read, it->sections);
		mrole = read >= it->sections ? ROLE_GOOD : ROLE_NORMAL;
	}
	tui_put(w, y, 4, 3, mrole, mark);
	if (it->lesson[0]) {
		/* a column apart from the progress; a long title ends in an ellipsis */
		tui_put_fit(w, y, 8, cols - 8 - 25, sel ? ROLE_SELECT : ROLE_NORMAL, it->label);
		tui_put(w, y, cols - 24, 22, ROLE_DIM, ptext);
	} else {
		tui_put(w, y, 8, 20, sel ? ROLE_SELECT : ROLE_NORMAL, it->label);
		tui_put(w, y, 28, cols - 30, ROLE_DIM, it->detail);
	}
}

static void home_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	home *h = s->priv;
	tui_state *st = tui_app_state(s->app);
	const progress *prog = progcache_get();   /* re-read only when the file changed */
	/* lines 1 .. rows - 5 hold the list; when it is longer, it scrolls so
	 * that the selected item (and its group's heading, where it fits) shows */
	int avail = rows - 5, vy[HOME_MAX_ITEMS];
	int total = home_layout(h, avail, vy), top = 0;
	if (h->n && total > avail && vy[h->sel] >= avail)
		top = vy[h->sel] - avail + 1;
	for (int i = 0; i < h->n; i++) {
		const home_item *it = &h->items[i];
		h->item_y[i] = -1;
		bool first = !i || strcmp(h->items[i - 1].group, it->group);
		int hy = 1 + vy[i] - 1 - top, y = 1 + vy[i] - top;
		if (first && hy >= 1 && hy <= avail)
			tui_put(w, hy, 2, cols - 4, ROLE_HEADING, it->group);
		if (y < 1 || y > avail)
			continue;
		h->item_y[i] = y;
		home_draw_item(w, y, cols, it, i == h->sel, prog);
	}
	/* the selected item's description and the resume point */
	if (h->n) {
		tui_put(w, rows - 3, 2, cols - 4, ROLE_DIM, h->items[h->sel].detail);
	}
	if (st->last_lesson[0]) {
		tui_lesson_state *ls = tui_state_lesson(st, st->last_lesson);
		tui_putf(w, rows - 2, 2, cols - 4, ROLE_EMPH, "r: resume %s at line %d", st->last_lesson,
		         ls ? ls->line + 1 : 1);
	} else {
		tui_put(w, rows - 2, 2, cols - 4, ROLE_DIM, "Enter opens an item; ? lists every key.");
	}
}

static int open_item(tui_screen *s, const home_item *it)
{
	if (it->lesson[0]) {
		char name[] = "lesson";
		char *args[] = { name, (char *)it->lesson, NULL };
		tui_push_named(s->app, "lesson", 2, args);
	} else {
		tui_push(s->app, it->lab, 0, NULL);
	}
	return TUI_HANDLED;
}

static int home_handle(tui_screen *s, int action, int key)
{
	home *h = s->priv;
	if (key == FK(KEY_MOUSE)) {
		const tui_mouse *m = tui_last_mouse(s->app);
		if (m->wheel)
			h->sel = (h->sel + m->wheel + h->n) % h->n;
		for (int i = 0; m->click && i < h->n; i++)
			if (h->item_y[i] == m->y) {
				h->sel = i;
				return open_item(s, &h->items[i]);
			}
		return TUI_HANDLED;
	}
	switch (action) {
	case HOME_UP:
		if (h->sel > 0)
			h->sel--;
		return TUI_HANDLED;
	case HOME_DOWN:
		if (h->sel + 1 < h->n)
			h->sel++;
		return TUI_HANDLED;
	case HOME_NEXT_GROUP: {
		const char *g = h->items[h->sel].group;
		int i = h->sel;
		while (i < h->n && !strcmp(h->items[i].group, g))
			i++;
		h->sel = i < h->n ? i : 0;
		return TUI_HANDLED;
	}
	case HOME_OPEN:
		return h->n ? open_item(s, &h->items[h->sel]) : TUI_HANDLED;
	case HOME_RESUME: {
		tui_state *st = tui_app_state(s->app);
		if (!st->last_lesson[0]) {
			tui_message(s->app, false, "nothing to resume yet: open a lesson first");
			return TUI_HANDLED;
		}
		char name[] = "lesson";
		char *args[] = { name, st->last_lesson, NULL };
		tui_push_named(s->app, "lesson", 2, args);
		return TUI_HANDLED;
	}
	}
	return TUI_PASS;
}

const tui_screen_ops screen_home_ops = {
	.name = "home",
	.title = "Home",
	.private_size = sizeof(home),
	.keys = home_keys,
	.nkeys = home_ACTION_COUNT,
	.init = home_init,
	.draw = home_draw,
	.handle = home_handle,
};
