/* Lesson reader: the md4c document model of src/teach/lesson.h laid out into
 * styled lines (headings, emphasis, code, tables, lists), with scrolling,
 * search, and a key at every runnable claim that opens the matching lab. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "teach/lesson.h"
#include "teach/lesson_check.h"
#include "teach/progress.h"
#include "tui/progcache.h"
#include "tui/screens.h"
#include "tui/state.h"

#define LESSON_KEYS(X)                                                                       \
	X(LS_DOWN, "j Down", "scroll down a line", 'j', FK(KEY_DOWN))                         \
	X(LS_UP, "k Up", "scroll up a line", 'k', FK(KEY_UP))                                 \
	X(LS_PGDN, "Space PgDn", "next page", ' ', FK(KEY_NPAGE))                             \
	X(LS_PGUP, "b PgUp", "previous page", 'b', FK(KEY_PPAGE))                             \
	X(LS_TOP, "g Home", "the beginning", 'g', FK(KEY_HOME))                               \
	X(LS_END, "G End", "the end", 'G', FK(KEY_END))                                       \
	X(LS_NEXT_SEC, "]", "next section", ']')                                              \
	X(LS_PREV_SEC, "[", "previous section", '[')                                          \
	X(LS_SEARCH, "/", "search (Enter finds, Esc cancels)", '/')                           \
	X(LS_NEXT_MATCH, "n", "next match", 'n')                                              \
	X(LS_PREV_MATCH, "N", "previous match", 'N')                                          \
	X(LS_NEXT_CLAIM, "Tab", "select the next runnable claim", '\t')                       \
	X(LS_PREV_CLAIM, "S-Tab", "select the previous runnable claim", FK(KEY_BTAB))          \
	X(LS_RUN, "Enter", "open the selected claim in its lab, parameters filled in", TUI_ENTER_KEYS)
TUI_KEYMAP(lesson, LESSON_KEYS);

typedef struct {
	size_t off, len;   /* into text/roles */
	int block;
	int heading;       /* section index when the line starts a heading, else -1 */
	int claim;         /* runnable claim the line belongs to, else -1 */
} rline;

typedef struct {
	char *cmd;         /* the command as the lesson writes it */
	const char *lab;   /* screen name */
	int first_line;
} lab_claim;

typedef struct {
	lesson_doc doc;
	char name[64];
	int nheadings;
	/* the layout for `width` */
	int width;
	char *text;
	unsigned char *roles;
	size_t len, cap;
	rline *lines;
	size_t nlines, lcap;
	lab_claim *claims;
	size_t nclaims;
	int sel_claim;     /* -1: none */
	int top;
	int page;
	bool searching;
	tui_field search;
	char query[256];
	bool oom;
	uint64_t recorded;   /* sections (bit i: heading i) already in progress.csv */
} reader;

/* --- building the layout --- */

static void put_bytes(reader *r, const char *s, size_t n, tui_role role)
{
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		while (cap < r->len + n)
			cap *= 2;
		char *t = realloc(r->text, cap);
		if (!t) {
			r->oom = true;
			return;
		}
		r->text = t;
		unsigned char *ro = realloc(r->roles, cap);
		if (!ro) {
			r->oom = true;
			return;
		}
		r->roles = ro;
		r->cap = cap;
	}
	memcpy(r->text + r->len, s, n);
	memset(r->roles + r->len, (int)role, n);
	r->len += n;
}

static void end_line(reader *r, size_t start, int block, int heading, int claim_i)
{
	if (r->nlines == r->lcap) {
		size_t cap = r->lcap ? r->lcap * 2 : 256;
		rline *l = realloc(r->lines, cap * sizeof *l);
		if (!l) {
			r->oom = true;
			return;
		}
		r->lines = l;
		r->lcap = cap;
	}
	r->lines[r->nlines++] = (rline){ .off = start, .len = r->len - start, .block = block, .heading = heading,
		                         .claim = claim_i };
}

static void blank(reader *r, int block)
{
	if (r->nlines == 0 || r->lines[r->nlines - 1].len == 0)
		return;
	end_line(r, r->len, block, -1, -1);
}

/* Word-wraps styled text (roles per byte) into lines of width columns; the
 * first line starts with prefix, the others with indent blanks. */
static void wrap(reader *r, const char *txt, const unsigned char *roles, size_t n, const char *prefix,
                 tui_role prole, int indent, int width, int block, int heading)
{
	size_t i = 0;
	bool first = true;
	while (first || i < n) {
		size_t start = r->len;
		int col;
		if (first) {
			put_bytes(r, prefix, strlen(prefix), prole);
			col = tui_width(prefix);
		} else {
			for (int k = 0; k < indent; k++)
				put_bytes(r, " ", 1, ROLE_NORMAL);
			col = indent;
			while (i < n && txt[i] == ' ')
				i++;
		}
		size_t j = i, brk = SIZE_MAX;
		while (j < n && txt[j] != '\n') {
			int cw;
			int b = tui_next_char(txt + j, &cw);
			if (col + cw > width)
				break;
			if (txt[j] == ' ')
				brk = j;
			col += cw;
			j += (size_t)b;
		}
		size_t end = j;
		if (j < n && txt[j] != '\n' && brk != SIZE_MAX && brk > i)
			end = brk;
		if (end == i && i < n && txt[i] != '\n') {   /* a character wider than the line */
			int cw;
			end = i + (size_t)tui_next_char(txt + i, &cw);
		}
		for (size_t k = i; k < end;) {   /* runs of one role */
			size_t e = k;
			while (e < end && roles[e] == roles[k])
				e++;
			put_bytes(r, txt + k, e - k, (tui_role)roles[k]);
			k = e;
		}
		end_line(r, start, block, first ? heading : -1, -1);
		i = end;
		if (i < n && txt[i] == '\n')
			i++;
		first = false;
	}
}

static tui_role span_role(unsigned style)
{
	if (style & LS_CODE)
		return ROLE_CODE;
	if (style & LS_STRONG)
		return ROLE_STRONG;
	if (style & LS_EMPH)
		return ROLE_EMPH;
	if (style & LS_LINK)
		return ROLE_LINK;
	return ROLE_NORMAL;
}

/* The block's text with a role per byte (malloc'd; soft breaks already spaces). */
static bool styled(const lesson_block *b, tui_role base, char **txt, unsigned char **roles, size_t *n)
{
	size_t len = 0;
	if (b->nspans)
		for (size_t i = 0; i < b->nspans; i++)
			len += strlen(b->spans[i].text);
	else
		len = strlen(b->text ? b->text : "");
	*txt = malloc(len + 1);
	*roles = malloc(len + 1);
	if (!*txt || !*roles) {
		free(*txt);
		free(*roles);
		return false;
	}
	size_t o = 0;
	if (b->nspans) {
		for (size_t i = 0; i < b->nspans; i++) {
			size_t l = strlen(b->spans[i].text);
			memcpy(*txt + o, b->spans[i].text, l);
			tui_role ro = b->spans[i].style ? span_role(b->spans[i].style) : base;
			memset(*roles + o, (int)ro, l);
			o += l;
		}
	} else if (b->text) {
		memcpy(*txt, b->text, len);
		memset(*roles, (int)base, len);
		o = len;
	}
	(*txt)[o] = '\0';
	*n = o;
	return true;
}

static void layout_table(reader *r, size_t first, int width)
{
	const lesson_block *b0 = &r->doc.blocks[first];
	int colw[32] = { 0 };
	size_t ncols = 0;
	for (size_t k = first; k < r->doc.nblocks && r->doc.blocks[k].kind == LB_TABLE_ROW &&
	                       r->doc.blocks[k].table == b0->table;
	     k++) {
		const lesson_block *b = &r->doc.blocks[k];
		for (size_t c = 0; c < b->ncells && c < 32; c++) {
			int wd = tui_width(b->cells[c]);
			if (wd > colw[c])
				colw[c] = wd;
		}
		if (b->ncells > ncols)
			ncols = b->ncells > 32 ? 32 : b->ncells;
	}
	for (size_t k = first; k < r->doc.nblocks && r->doc.blocks[k].kind == LB_TABLE_ROW &&
	                       r->doc.blocks[k].table == b0->table;
	     k++) {
		const lesson_block *b = &r->doc.blocks[k];
		size_t start = r->len;
		put_bytes(r, "  ", 2, ROLE_NORMAL);
		int col = 2;
		for (size_t c = 0; c < ncols && col < width; c++) {
			const char *cell = c < b->ncells ? b->cells[c] : "";
			if (c) {
				const char *sep = theme_glyph(GLYPH_VBAR);
				put_bytes(r, " ", 1, ROLE_DIM);
				put_bytes(r, sep, strlen(sep), ROLE_DIM);
				put_bytes(r, " ", 1, ROLE_DIM);
				col += 3;
			}
			put_bytes(r, cell, strlen(cell), b->header ? ROLE_HEADING : ROLE_NORMAL);
			for (int p = tui_width(cell); p < colw[c]; p++)
				put_bytes(r, " ", 1, ROLE_NORMAL);
			col += colw[c];
		}
		end_line(r, start, (int)k, -1, -1);
		if (b->header) {
			start = r->len;
			put_bytes(r, "  ", 2, ROLE_NORMAL);
			int total = 0;
			for (size_t c = 0; c < ncols; c++)
				total += colw[c] + (c ? 3 : 0);
			const char *h = theme_glyph(GLYPH_HLINE);
			for (int p = 0; p < total && p < width - 2; p++)
				put_bytes(r, h, strlen(h), ROLE_DIM);
			end_line(r, start, (int)k, -1, -1);
		}
	}
}

static void free_layout(reader *r)
{
	for (size_t i = 0; i < r->nclaims; i++)
		free(r->claims[i].cmd);
	free(r->claims);
	r->claims = NULL;
	r->nclaims = 0;
	r->len = 0;
	r->nlines = 0;
}

/* Lays out code block i (b): its lines, and for a runnable one that opens a
 * lab, a claim the reader can select and the hint that says so. */
static void layout_code(reader *r, size_t i, const lesson_block *b)
{
	bool runnable = b->info && !strcmp(b->info, "mixprec");
	if (b->info && !strcmp(b->info, "claims"))
		return;   /* checked by lesson check; not lesson text */
	const tui_screen_ops *lab_ops = runnable ? tui_screen_lab_for(b->text) : NULL;
	const char *lab = lab_ops ? lab_ops->name : NULL;
	int ci = -1;
	if (lab) {
		ci = (int)r->nclaims++;
		r->claims[ci].cmd = strdup(b->text);
		r->claims[ci].lab = lab;
		r->claims[ci].first_line = (int)r->nlines;
		if (!r->claims[ci].cmd) {
			r->oom = true;
			return;
		}
		size_t l = strlen(r->claims[ci].cmd);
		while (l && r->claims[ci].cmd[l - 1] == '\n')
			r->claims[ci].cmd[--l] = '\0';
	}
	const char *p = b->text ? b->text : "";
	while (*p) {
		size_t l = strcspn(p, "\n");
		size_t start = r->len;
		put_bytes(r, runnable ? "   $ " : "     ", 5, ROLE_DIM);
		put_bytes(r, p, l, ROLE_CODE);
		end_line(r, start, (int)i, -1, ci);
		p += l;
		if (*p == '\n')
			p++;
	}
	if (lab) {
		size_t start = r->len;
		char hint[160];
		const tui_screen_ops *ops = tui_screen_find(lab);
		snprintf(hint, sizeof hint, "     Tab selects, Enter opens it in the %s", ops ? ops->title : lab);
		put_bytes(r, hint, strlen(hint), ROLE_DIM);
		end_line(r, start, (int)i, -1, ci);
	}
	blank(r, (int)i);
}

static void build(reader *r, int width)
{
	int old_block = r->nlines && r->top < (int)r->nlines ? r->lines[r->top].block : 0;
	free_layout(r);
	r->width = width;
	r->oom = false;
	size_t maxclaims = 0;
	for (size_t i = 0; i < r->doc.nblocks; i++)
		maxclaims += r->doc.blocks[i].kind == LB_CODE;
	r->claims = calloc(maxclaims ? maxclaims : 1, sizeof *r->claims);
	if (!r->claims) {
		r->oom = true;
		return;
	}
	int heading = 0;
	int text_w = width - 2;
	for (size_t i = 0; i < r->doc.nblocks && !r->oom; i++) {
		const lesson_block *b = &r->doc.blocks[i];
		const lesson_block *prev = i ? &r->doc.blocks[i - 1] : NULL;
		char *txt = NULL;
		unsigned char *roles = NULL;
		size_t n = 0;
		switch (b->kind) {
		case LB_HEADING: {
			blank(r, (int)i);
			if (!styled(b, ROLE_HEADING, &txt, &roles, &n)) {
				r->oom = true;
				break;
			}
			memset(roles, ROLE_HEADING, n);
			wrap(r, txt, roles, n, " ", ROLE_NORMAL, 1, text_w, (int)i, heading);
			if (b->level <= 2) {
				size_t start = r->len;
				int wd = tui_width(txt) + 1;
				put_bytes(r, " ", 1, ROLE_NORMAL);
				const char *g = b->level == 1 ? "=" : theme_glyph(GLYPH_HLINE);
				for (int k = 1; k < wd && k < text_w; k++)
					put_bytes(r, g, strlen(g), ROLE_HEADING);
				end_line(r, start, (int)i, -1, -1);
			}
			heading++;
			blank(r, (int)i);
			break;
		}
		case LB_PARAGRAPH:
		case LB_QUOTE:
			if (!styled(b, ROLE_NORMAL, &txt, &roles, &n)) {
				r->oom = true;
				break;
			}
			wrap(r, txt, roles, n, b->kind == LB_QUOTE ? " | " : " ", ROLE_DIM, b->kind == LB_QUOTE ? 3 : 1,
			     text_w, (int)i, -1);
			blank(r, (int)i);
			break;
		case LB_LIST_ITEM: {
			if (!styled(b, ROLE_NORMAL, &txt, &roles, &n)) {
				r->oom = true;
				break;
			}
			char prefix[32];
			int ind = 1 + 3 * (b->level > 0 ? b->level - 1 : 0);
			if (b->number)
				snprintf(prefix, sizeof prefix, "%*s%u. ", ind, "", b->number);
			else
				snprintf(prefix, sizeof prefix, "%*s%s ", ind, "", theme_glyph(GLYPH_BULLET));
			wrap(r, txt, roles, n, prefix, ROLE_EMPH, tui_width(prefix), text_w, (int)i, -1);
			const lesson_block *next = i + 1 < r->doc.nblocks ? &r->doc.blocks[i + 1] : NULL;
			if (!next || next->kind != LB_LIST_ITEM)
				blank(r, (int)i);
			break;
		}
		case LB_CODE:
			layout_code(r, i, b);
			break;
		case LB_TABLE_ROW:
			if (!prev || prev->kind != LB_TABLE_ROW || prev->table != b->table) {
				layout_table(r, i, text_w);
				blank(r, (int)i);
			}
			break;
		case LB_RULE: {
			size_t start = r->len;
			const char *h = theme_glyph(GLYPH_HLINE);
			put_bytes(r, " ", 1, ROLE_NORMAL);
			for (int k = 0; k < text_w - 1; k++)
				put_bytes(r, h, strlen(h), ROLE_DIM);
			end_line(r, start, (int)i, -1, -1);
			blank(r, (int)i);
			break;
		}
		}
		free(txt);
		free(roles);
	}
	/* keep the same block at the top across a re-layout */
	r->top = 0;
	for (size_t l = 0; l < r->nlines; l++) {
		if (r->lines[l].block >= old_block) {
			r->top = (int)l;
			break;
		}
	}
}

/* --- the screen --- */

static mp_status lesson_init(tui_screen *s, int argc, char **argv)
{
	reader *r = s->priv;
	r->sel_claim = -1;
	const char *name = argc > 1 ? argv[1] : NULL;
	char **names = NULL;
	size_t count = 0;
	char lesson_folder[4096];
	const char *dir = lesson_dir(lesson_folder, sizeof lesson_folder);
	if (!name) {
		if (lesson_list(dir, &names, &count) != MP_OK || count == 0) {
			tui_message(s->app, true, "no lessons in %s", dir);
			return MP_EIO;
		}
		name = names[0];
	}
	snprintf(r->name, sizeof r->name, "%s", name);
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	char path[4096], err[512];
	snprintf(path, sizeof path, "%s/%s.md", dir, r->name);
	mp_status st = lesson_load(&r->doc, path, err, sizeof err);
	if (st != MP_OK) {
		tui_message(s->app, true, "%s", err);
		return st;
	}
	for (size_t i = 0; i < r->doc.nblocks; i++)
		r->nheadings += r->doc.blocks[i].kind == LB_HEADING;
	/* the sections already recorded as read */
	const progress *p = progcache_get();
	for (int i = 0; i < r->nheadings && i < 64; i++) {
		char item[PROGRESS_ITEM_MAX];
		snprintf(item, sizeof item, "lesson:%s#%d", r->name, i + 1);
		const progress_row *row = progress_get(p, item);
		if (row && row->solved)
			r->recorded |= 1ull << i;
	}
	tui_state *state = tui_app_state(s->app);
	snprintf(state->last_lesson, sizeof state->last_lesson, "%s", r->name);
	tui_lesson_state *ls = tui_state_lesson(state, r->name);
	if (ls)
		r->top = -ls->line - 1;   /* resolved to a line once laid out */
	return MP_OK;
}

static void lesson_done(tui_screen *s)
{
	reader *r = s->priv;
	free_layout(r);
	free(r->text);
	free(r->roles);
	free(r->lines);
	lesson_free(&r->doc);
}

static void clamp_top(reader *r)
{
	int max = (int)r->nlines - r->page;
	if (r->top > max)
		r->top = max;
	if (r->top < 0)
		r->top = 0;
}

static void lesson_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	reader *r = s->priv;
	r->page = rows - 1;
	if (r->width != cols) {
		int resume = r->top < 0 ? -r->top - 1 : -1;
		if (resume >= 0)
			r->top = 0;
		build(r, cols);
		if (resume >= 0)
			r->top = resume;
	}
	if (r->oom) {
		tui_put(w, 1, 2, cols - 4, ROLE_BAD, "out of memory laying out the lesson");
		return;
	}
	clamp_top(r);
	tui_state *state = tui_app_state(s->app);
	/* the lesson shown last is the one to resume (a reader kept for the
	 * session is shown again without its init) */
	snprintf(state->last_lesson, sizeof state->last_lesson, "%s", r->name);
	tui_lesson_state *ls = tui_state_lesson(state, r->name);
	size_t qlen = strlen(r->query);
	for (int y = 0; y < rows - 1 && r->top + y < (int)r->nlines; y++) {
		const rline *l = &r->lines[r->top + y];
		bool selected = l->claim >= 0 && l->claim == r->sel_claim;
		/* runs of one role; matches of the search drawn selected */
		int x = 0;
		char line[2048];
		size_t n = l->len < sizeof line - 1 ? l->len : sizeof line - 1;
		memcpy(line, r->text + l->off, n);
		line[n] = '\0';
		for (size_t k = 0; k < n && x < cols;) {
			bool hit = qlen && !strncasecmp(line + k, r->query, qlen);
			size_t e = k;
			if (hit)
				e = k + qlen;
			else
				while (e < n && r->roles[l->off + e] == r->roles[l->off + k] &&
				       !(qlen && !strncasecmp(line + e, r->query, qlen)))
					e++;
			char save = line[e];
			line[e] = '\0';
			x += tui_put(w, y, x, cols - x, hit ? ROLE_SELECT : (tui_role)r->roles[l->off + k], line + k);
			line[e] = save;
			k = e;
		}
		if (selected)
			tui_put(w, y, 1, 1, ROLE_SELECT, theme_glyph(GLYPH_ARROW));
		if (l->heading >= 0 && l->heading < 64 && !(r->recorded & (1ull << l->heading))) {
			/* a section on screen counts as read, recorded once */
			char item[PROGRESS_ITEM_MAX];
			snprintf(item, sizeof item, "lesson:%s#%d", r->name, l->heading + 1);
			r->recorded |= 1ull << l->heading;
			progcache_record(item, 0, true, 0);   /* the recorder thread writes it */
		}
	}
	if (ls)
		ls->line = r->top;
	/* the last row: position, or the search field */
	if (r->searching) {
		tui_put(w, rows - 1, 0, 1, ROLE_EMPH, "/");
		field_draw(w, rows - 1, 1, cols - 2, &r->search, true);
		return;
	}
	int sec = 0;   /* the section the top line belongs to */
	for (int k = 0; k <= r->top && k < (int)r->nlines; k++)
		if (r->lines[k].heading >= 0)
			sec = r->lines[k].heading + 1;
	int pct = r->nlines <= (size_t)r->page ? 100 : (int)(100.0 * r->top / ((double)r->nlines - r->page));
	/* the position always; the key reminders in full, shorter, or not at
	 * all, whichever fits (a cut line ended in "n: next") */
	char line[512];
	int n = snprintf(line, sizeof line, " %s  section %d/%d  line %d/%zu  %d%%", r->name, sec, r->nheadings,
	                 r->top + 1, r->nlines, pct);
	static const char *const hints[][2] = { { "  Tab: runnable claims", "  n: next match" },
		                                { "  Tab: claims", "  n: next" } };
	for (size_t k = 0; n > 0 && (size_t)n < sizeof line && k < sizeof hints / sizeof hints[0]; k++) {
		char more[64];
		snprintf(more, sizeof more, "%s%s", r->nclaims ? hints[k][0] : "", r->query[0] ? hints[k][1] : "");
		if (n + tui_width(more) <= cols) {
			snprintf(line + n, sizeof line - (size_t)n, "%s", more);
			break;
		}
	}
	tui_put(w, rows - 1, 0, cols, ROLE_DIM, line);
}

static void find(tui_screen *s, int dir)
{
	reader *r = s->priv;
	if (!r->query[0])
		return;
	for (int k = 1; k <= (int)r->nlines; k++) {
		int i = ((r->top + dir * k) % (int)r->nlines + (int)r->nlines) % (int)r->nlines;
		const rline *l = &r->lines[i];
		for (size_t o = 0; o + strlen(r->query) <= l->len; o++) {
			if (!strncasecmp(r->text + l->off + o, r->query, strlen(r->query))) {
				r->top = i;
				return;
			}
		}
	}
	tui_message(s->app, true, "not found: %s", r->query);
}

static int lesson_handle(tui_screen *s, int action, int key)
{
	reader *r = s->priv;
	if (r->searching) {
		int f = field_key(&r->search, key);
		if (f == FIELD_ENTER) {
			r->searching = false;
			snprintf(r->query, sizeof r->query, "%s", r->search.text);
			find(s, 1);
		} else if (f == FIELD_CANCEL) {
			r->searching = false;
		}
		return TUI_HANDLED;
	}
	if (key == FK(KEY_MOUSE)) {
		const tui_mouse *m = tui_last_mouse(s->app);
		r->top += 3 * m->wheel;
		int line = r->top + m->y;
		if (m->click && m->y >= 0 && m->y < r->page && line < (int)r->nlines && r->lines[line].claim >= 0) {
			if (r->sel_claim == r->lines[line].claim)
				return lesson_handle(s, LS_RUN, 0);
			r->sel_claim = r->lines[line].claim;
		}
		clamp_top(r);
		return TUI_HANDLED;
	}
	switch (action) {
	case LS_DOWN: r->top++; break;
	case LS_UP: r->top--; break;
	case LS_PGDN: r->top += r->page - 1; break;
	case LS_PGUP: r->top -= r->page - 1; break;
	case LS_TOP: r->top = 0; break;
	case LS_END: r->top = (int)r->nlines; break;
	case LS_NEXT_SEC:
	case LS_PREV_SEC: {
		int d = action == LS_NEXT_SEC ? 1 : -1;
		for (int i = r->top + d; i >= 0 && i < (int)r->nlines; i += d) {
			if (r->lines[i].heading >= 0) {
				r->top = i;
				break;
			}
		}
		break;
	}
	case LS_SEARCH:
		r->searching = true;
		field_set(&r->search, "");
		field_begin(&r->search);
		break;
	case LS_NEXT_MATCH: find(s, 1); break;
	case LS_PREV_MATCH: find(s, -1); break;
	case LS_NEXT_CLAIM:
	case LS_PREV_CLAIM: {
		if (!r->nclaims) {
			tui_message(s->app, false, "this lesson has no runnable claims");
			break;
		}
		/* the next claim after the selected one, or the first on screen */
		int c = r->sel_claim;
		if (c < 0 || r->claims[c].first_line < r->top || r->claims[c].first_line >= r->top + r->page) {
			c = -1;
			for (size_t k = 0; k < r->nclaims; k++)
				if (r->claims[k].first_line >= r->top) {
					c = (int)k;
					break;
				}
			if (c < 0)
				c = (int)r->nclaims - 1;
		} else {
			c = (c + (action == LS_NEXT_CLAIM ? 1 : -1) + (int)r->nclaims) % (int)r->nclaims;
		}
		r->sel_claim = c;
		int l = r->claims[c].first_line;
		if (l < r->top || l >= r->top + r->page - 2)
			r->top = l - r->page / 3;
		break;
	}
	case LS_RUN: {
		if (r->sel_claim < 0) {
			tui_message(s->app, false, "Tab selects a runnable claim first");
			break;
		}
		/* its first line split as `mixprec lesson check` runs it; the lab takes argv from the
		 * subcommand on */
		const lab_claim *c = &r->claims[r->sel_claim];
		char line[1024], **argv, err[300];
		size_t argc;
		snprintf(line, sizeof line, "%.*s", (int)strcspn(c->cmd, "\n"), c->cmd);
		if (lesson_command_argv(line, &argv, &argc, err, sizeof err) != MP_OK) {
			tui_message(s->app, true, "%s", err);
			break;
		}
		tui_push_named(s->app, c->lab, (int)argc - 1, argv + 1);
		for (size_t i = 0; i < argc; i++)
			free(argv[i]);
		free(argv);
		break;
	}
	default:
		return TUI_PASS;
	}
	clamp_top(r);
	return TUI_HANDLED;
}

static bool lesson_editing(tui_screen *s)
{
	return ((reader *)s->priv)->searching;
}

const tui_screen_ops screen_lesson_ops = {
	.name = "lesson",
	.title = "Lesson",
	.private_size = sizeof(reader),
	.keys = lesson_keys,
	.nkeys = lesson_ACTION_COUNT,
	.init = lesson_init,
	.draw = lesson_draw,
	.handle = lesson_handle,
	.editing = lesson_editing,
	.done = lesson_done,
};
