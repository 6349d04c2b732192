/* The TUI's key scripts (mixprec tui --keys FILE --dump FILE): keys, text,
 * mouse events and resizes fed to the screens off-screen, and the screen
 * written as text for the golden-screen tests. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "tui/app_impl.h"
#include "tui/progcache.h"

static const struct {
	const char *name;
	int key;
} key_names[] = {
	{ "Up", FK(KEY_UP) }, { "Down", FK(KEY_DOWN) }, { "Left", FK(KEY_LEFT) }, { "Right", FK(KEY_RIGHT) },
	{ "Enter", '\n' }, { "Tab", '\t' }, { "BTab", FK(KEY_BTAB) }, { "Esc", TUI_ESC }, { "Space", ' ' },
	{ "Backspace", FK(KEY_BACKSPACE) }, { "Delete", FK(KEY_DC) }, { "PgUp", FK(KEY_PPAGE) },
	{ "PgDn", FK(KEY_NPAGE) }, { "Home", FK(KEY_HOME) }, { "End", FK(KEY_END) }, { "F1", FK(KEY_F(1)) },
	{ "Hash", '#' },
};

static bool parse_key(const char *tok, int *key)
{
	for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
		if (!strcmp(tok, key_names[i].name)) {
			*key = key_names[i].key;
			return true;
		}
	}
	if (tok[0] == 'C' && tok[1] == '-' && tok[2] && !tok[3]) {
		*key = TUI_CTRL(tok[2]);
		return true;
	}
	if (tok[0] && !tok[1] && (unsigned char)tok[0] >= 0x20 && (unsigned char)tok[0] < 0x7f) {
		*key = (unsigned char)tok[0];
		return true;
	}
	return false;
}

static void dump_screen(tui_app *app, const char *label)
{
	fprintf(app->dump, "--- %s ---\n", label);
	for (int y = 0; y < LINES; y++) {
		char line[4096];
		size_t n = 0;
		for (int x = 0; x < COLS; x++) {
			cchar_t cc;
			wchar_t wch[CCHARW_MAX + 1];
			attr_t at;
			short pair;
			if (mvwin_wch(stdscr, y, x, &cc) == ERR)
				break;
			if (getcchar(&cc, wch, &at, &pair, NULL) == ERR || wch[0] == L'\0')
				continue;   /* the right half of a wide character */
			wchar_t c = wch[0];
			/* line-drawing characters as the ASCII they stand for */
			chtype acs = (chtype)c | (at & A_ALTCHARSET);
			if (at & A_ALTCHARSET) {
				if (acs == ACS_HLINE) c = L'-';
				else if (acs == ACS_VLINE) c = L'|';
				else c = L'+';
			}
			char mb[MB_LEN_MAX];
			mbstate_t ps;
			memset(&ps, 0, sizeof ps);
			size_t k;
			if (c < 0x80) {
				mb[0] = (char)c;
				k = 1;
			} else {
				k = wcrtomb(mb, c, &ps);
			}
			if (k == (size_t)-1) {
				mb[0] = '?';
				k = 1;
			}
			if (n + k < sizeof line) {
				memcpy(line + n, mb, k);
				n += k;
			}
		}
		while (n > 0 && line[n - 1] == ' ')
			n--;
		fwrite(line, 1, n, app->dump);
		fputc('\n', app->dump);
	}
	fflush(app->dump);
}

/* Waits until no worker runs (at most limit_s seconds); false on timeout. */
static bool wait_workers(tui_app *app, double limit_s)
{
	struct timespec t0, t, nap = { 0, 5 * 1000 * 1000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (app_any_busy(app) && !app_stop_signal()) {
		app_tick_all(app);
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) > limit_s)
			return false;
	}
	app_tick_all(app);
	return true;
}

/* Runs a key script: one command per line (# comments):
 *   keys K...       key names (Up Down Left Right Enter Tab BTab Esc Space
 *                   Backspace Delete PgUp PgDn Home End F1 Hash C-x) or single characters
 *   type TEXT       the characters of TEXT
 *   dump LABEL      writes the screen as text under "--- LABEL ---"
 *   wait [SECONDS]  until every worker has finished (default limit 120 s)
 *   resize COLSxROWS
 *   click X Y       a mouse click on that cell (0-based, of the whole screen)
 *   wheel up|down   the mouse wheel
 * Returns an exit status; errors name the script's file and line. */
int app_run_script(tui_app *app, const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		fprintf(stderr, "mixprec tui: --keys: cannot read '%s': %s\n", path, strerror(errno));
		return 3;
	}
	char line[1024];
	int ln = 0, rc = 0;
	app_draw_frame(app);
	while (rc == 0 && !app->quit && !app_stop_signal() && fgets(line, sizeof line, fp)) {
		ln++;
		line[strcspn(line, "\r\n")] = '\0';
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		char *cmd = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strcmp(cmd, "keys")) {
			char *save = NULL;
			for (char *tok = strtok_r(p, " \t", &save); tok && !app->quit; tok = strtok_r(NULL, " \t", &save)) {
				int key;
				if (!parse_key(tok, &key)) {
					fprintf(stderr, "mixprec tui: %s:%d: unknown key '%s'\n", path, ln, tok);
					rc = 2;
					break;
				}
				app_dispatch(app, key);
				progcache_flush();   /* what a key recorded is on disk before the next frame */
				app_tick_all(app);
				if (!app->quit)
					app_draw_frame(app);
			}
		} else if (!strcmp(cmd, "type")) {
			for (; *p && !app->quit; p++) {
				app_dispatch(app, (unsigned char)*p);
				progcache_flush();
				app_tick_all(app);
				if (!app->quit)
					app_draw_frame(app);
			}
		} else if (!strcmp(cmd, "dump")) {
			progcache_flush();   /* a section that came on screen in the last frame */
			app_draw_frame(app);
			dump_screen(app, *p ? p : "screen");
		} else if (!strcmp(cmd, "wait")) {
			double limit = *p ? atof(p) : 120;
			if (!wait_workers(app, limit)) {
				fprintf(stderr, "mixprec tui: %s:%d: workers still running after %g s\n", path, ln, limit);
				rc = 3;
			}
			app_draw_frame(app);
		} else if (!strcmp(cmd, "click") || !strcmp(cmd, "wheel")) {
			/* click X Y (screen cells, 0-based) / wheel up|down */
			int x, y;
			if (!strcmp(cmd, "click") && sscanf(p, "%d %d", &x, &y) == 2) {
				app->mouse = (tui_mouse){ .y = y - 1, .x = x, .click = true };
			} else if (!strcmp(cmd, "wheel") && (!strcmp(p, "up") || !strcmp(p, "down"))) {
				app->mouse = (tui_mouse){ .wheel = !strcmp(p, "up") ? -1 : 1 };
			} else {
				fprintf(stderr, "mixprec tui: %s:%d: use 'click X Y' or 'wheel up|down'\n", path, ln);
				rc = 2;
				break;
			}
			app_dispatch(app, FK(KEY_MOUSE));
			app_tick_all(app);
			app_draw_frame(app);
		} else if (!strcmp(cmd, "resize")) {
			int c, r;
			if (sscanf(p, "%dx%d", &c, &r) != 2 || c < 1 || r < 1 || c > 1000 || r > 1000) {
				fprintf(stderr, "mixprec tui: %s:%d: resize needs COLSxROWS, got '%s'\n", path, ln, p);
				rc = 2;
				break;
			}
			resize_term(r, c);
			app_dispatch(app, FK(KEY_RESIZE));
			app_draw_frame(app);
		} else {
			fprintf(stderr, "mixprec tui: %s:%d: unknown command '%s' (keys, type, dump, wait, resize, click, wheel)\n", path,
			        ln, cmd);
			rc = 2;
		}
	}
	fclose(fp);
	return rc;
}
