/* The TUI's drawing helpers (UTF-8 aware, clipped at a window's edge, with
 * an ASCII transliteration) and its one-line text fields; app.c keeps the
 * terminal, the screen stack and the key scripts. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tui/app.h"
#include "util/utf8.h"
/* --- drawing helpers --- */

/* Decodes the character at p (a C string) with the shared decoder. */
static int utf8_next(const unsigned char *p, uint32_t *cp)
{
	return (int)utf8_decode((const char *)p, strnlen((const char *)p, 4), cp, NULL);
}

/* ASCII for the characters the lessons use, when the locale is not UTF-8. */
static const char *translit(uint32_t cp)
{
	switch (cp) {
	case 0x2212: case 0x2010: case 0x2011: case 0x2013: return "-";
	case 0x2014: return "--";
	case 0x2018: case 0x2019: return "'";
	case 0x201c: case 0x201d: return "\"";
	case 0x2026: return "...";
	case 0x00d7: return "x";
	case 0x2264: return "<=";
	case 0x2265: return ">=";
	case 0x2248: return "~";
	case 0x2260: return "!=";
	case 0x2192: return "->";
	case 0x2190: return "<-";
	case 0x00b1: return "+-";
	case 0x00b7: case 0x22c5: return ".";
	case 0x221e: return "inf";
	case 0x2211: return "sum";
	case 0x0394: return "D";
	case 0x03b5: return "eps";
	case 0x00a0: return " ";
	default: return "?";
	}
}

int tui_next_char(const char *p, int *cols)
{
	uint32_t cp;
	if (!*p) {
		*cols = 0;
		return 0;
	}
	int n = utf8_next((const unsigned char *)p, &cp);
	if (!theme_utf8() && cp >= 0x80)
		*cols = (int)strlen(translit(cp));
	else {
		*cols = utf8_cp_width(cp);
	}
	return n;
}

int tui_width(const char *text)
{
	int w = 0;
	const unsigned char *p = (const unsigned char *)text;
	while (*p) {
		uint32_t cp;
		p += utf8_next(p, &cp);
		if (!theme_utf8() && cp >= 0x80) {
			w += (int)strlen(translit(cp));
			continue;
		}
		w += utf8_cp_width(cp);
	}
	return w;
}

int tui_put(WINDOW *w, int y, int x, int maxw, tui_role role, const char *text)
{
	int H, W;
	getmaxyx(w, H, W);
	if (y < 0 || y >= H || x < 0 || x >= W)
		return 0;
	if (maxw < 0 || x + maxw > W)
		maxw = W - x;
	wattrset(w, theme_attr(role));
	wmove(w, y, x);
	int used = 0;
	const unsigned char *p = (const unsigned char *)text;
	while (*p && used < maxw) {
		uint32_t cp;
		p += utf8_next(p, &cp);
		if (cp < 0x20 || cp == 0x7f)
			cp = ' ';
		if (!theme_utf8() && cp >= 0x80) {
			for (const char *t = translit(cp); *t && used < maxw; t++, used++)
				waddch(w, (chtype)(unsigned char)*t);
			continue;
		}
		int cw = wcwidth((wchar_t)cp);
		if (cw < 0)
			cw = 1, cp = '?';
		if (used + cw > maxw)
			break;
		wchar_t wc[2] = { (wchar_t)cp, 0 };
		waddnwstr(w, wc, 1);
		used += cw;
	}
	wattrset(w, A_NORMAL);
	return used;
}

int tui_put_fit(WINDOW *w, int y, int x, int maxw, tui_role role, const char *text)
{
	int H, W;
	getmaxyx(w, H, W);
	(void)H;
	if (maxw < 0 || x + maxw > W)
		maxw = W - x;
	if (maxw <= 0 || tui_width(text) <= maxw)
		return tui_put(w, y, x, maxw, role, text);
	int used = tui_put(w, y, x, maxw - 1, role, text);
	return used + tui_put(w, y, x + used, 1, role, theme_glyph(GLYPH_ELLIPSIS));
}

int tui_putf(WINDOW *w, int y, int x, int maxw, tui_role role, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return tui_put(w, y, x, maxw, role, buf);
}

void tui_fill(WINDOW *w, int y, int x, int n, tui_role role, const char *glyph)
{
	for (int i = 0; i < n; i++)
		tui_put(w, y, x + i, 1, role, glyph);
}

int tui_wrap(WINDOW *w, int y, int x, int width, int maxrows, tui_role role, const char *text)
{
	int row = 0;
	const char *p = text;
	while (*p && row < maxrows) {
		while (*p == ' ')
			p++;
		const char *q = p, *brk = NULL;
		int col = 0;
		while (*q && *q != '\n') {
			int cw;
			int n = tui_next_char(q, &cw);
			if (col + cw > width)
				break;
			if (*q == ' ')
				brk = q;
			col += cw;
			q += n;
		}
		/* a word that ends exactly at the width stays on this row */
		const char *end = (*q && *q != '\n' && *q != ' ' && brk) ? brk : q;
		if (end == p)
			end = q > p ? q : p + 1;
		char line[1024];
		size_t n = (size_t)(end - p) < sizeof line - 1 ? (size_t)(end - p) : sizeof line - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		if (w)
			tui_put(w, y + row, x, width, role, line);
		row++;
		p = *end == '\n' ? end + 1 : end;
	}
	return row;
}

/* --- text fields --- */

void field_set(tui_field *f, const char *text)
{
	snprintf(f->text, sizeof f->text, "%s", text);
	f->len = strlen(f->text);
	f->cur = f->len;
}

void field_begin(tui_field *f)
{
	memcpy(f->saved, f->text, sizeof f->saved);
	f->cur = f->len;
	f->hpos = f->nhist;
}

int field_key(tui_field *f, int key)
{
	switch (key) {
	case '\n': case '\r': case FK(KEY_ENTER):
		if (f->len && (f->nhist == 0 || strcmp(f->history[(f->nhist - 1) % 8], f->text))) {
			memcpy(f->history[f->nhist % 8], f->text, sizeof f->text);
			f->nhist++;
		}
		return FIELD_ENTER;
	case TUI_ESC:
		field_set(f, f->saved);
		return FIELD_CANCEL;
	case FK(KEY_BACKSPACE): case 127: case 8:
		if (f->cur == 0)
			return FIELD_NONE;
		memmove(f->text + f->cur - 1, f->text + f->cur, f->len - f->cur + 1);
		f->cur--, f->len--;
		return FIELD_CHANGED;
	case FK(KEY_DC): case TUI_CTRL('d'):
		if (f->cur == f->len)
			return FIELD_NONE;
		memmove(f->text + f->cur, f->text + f->cur + 1, f->len - f->cur);
		f->len--;
		return FIELD_CHANGED;
	case FK(KEY_LEFT): case TUI_CTRL('b'):
		if (f->cur > 0)
			f->cur--;
		return FIELD_NONE;
	case FK(KEY_RIGHT): case TUI_CTRL('f'):
		if (f->cur < f->len)
			f->cur++;
		return FIELD_NONE;
	case FK(KEY_HOME): case TUI_CTRL('a'):
		f->cur = 0;
		return FIELD_NONE;
	case FK(KEY_END): case TUI_CTRL('e'):
		f->cur = f->len;
		return FIELD_NONE;
	case TUI_CTRL('u'):
		field_set(f, "");
		return FIELD_CHANGED;
	case FK(KEY_UP): case FK(KEY_DOWN): {
		int oldest = f->nhist > 8 ? f->nhist - 8 : 0;
		int p = f->hpos + (key == FK(KEY_UP) ? -1 : 1);
		if (p < oldest || p > f->nhist)
			return FIELD_NONE;
		f->hpos = p;
		field_set(f, p == f->nhist ? f->saved : f->history[p % 8]);
		return FIELD_CHANGED;
	}
	default:
		if (key >= 0x20 && key < 0x7f && f->len + 1 < sizeof f->text) {
			memmove(f->text + f->cur + 1, f->text + f->cur, f->len - f->cur + 1);
			f->text[f->cur++] = (char)key;
			f->len++;
			return FIELD_CHANGED;
		}
		return FIELD_NONE;
	}
}

void field_draw(WINDOW *w, int y, int x, int width, const tui_field *f, bool editing)
{
	if (width < 2)
		return;
	/* scroll so the cursor stays visible */
	size_t start = 0;
	if (editing && f->cur >= (size_t)width)
		start = f->cur - (size_t)width + 1;
	char shown[260];
	snprintf(shown, sizeof shown, "%.*s", width, f->text + start);
	tui_role r = editing ? ROLE_SELECT : ROLE_NORMAL;
	tui_fill(w, y, x, width, r, " ");
	tui_put(w, y, x, width, r, shown);
	if (editing) {
		char c[2] = { f->cur < f->len ? f->text[f->cur] : ' ', 0 };
		wattrset(w, A_REVERSE | A_BOLD);
		mvwaddstr(w, y, x + (int)(f->cur - start), c);
		wattrset(w, A_NORMAL);
	}
}

