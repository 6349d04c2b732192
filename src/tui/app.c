/* The TUI core: terminal set-up and restore, the screen stack, key dispatch,
 * the generated help, and the off-screen key-script mode used by the tests. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "tui/app.h"
#include "tui/progcache.h"
#include "tui/screens.h"
#include "tui/state.h"
#include "tui/tui.h"

#define TUI_MIN_ROWS 24
#define TUI_MIN_COLS 80
#define TUI_MAX_DEPTH 16

#define GLOBAL_KEYS(X)                                                                        \
	X(G_HELP, "? F1", "this help: every key of the current screen", '?', FK(KEY_F(1)))     \
	X(G_BACK, "q Esc", "back to the previous screen (from Home: quit)", 'q', TUI_ESC)      \
	X(G_QUIT, "Q", "quit mixprec from any screen", 'Q')                                   \
	X(G_HOME, "H", "go to the Home screen", 'H')                                          \
	X(G_REDRAW, "^L", "redraw the whole screen", TUI_CTRL('l'))
TUI_KEYMAP(global, GLOBAL_KEYS);

struct tui_app {
	tui_screen stack[TUI_MAX_DEPTH];
	int depth;
	bool quit;
	bool scripted;
	bool help;              /* the ? overlay is open */
	int help_top;
	char msg[256];
	bool msg_error;
	WINDOW *body;           /* rows 1 .. LINES-2 */
	tui_mouse mouse;
	tui_state state;
	FILE *dump;
};

const tui_screen_ops *const tui_screens[] = {
	&screen_home_ops, &screen_lesson_ops, &screen_exercises_ops, &screen_exercise_ops, &screen_bits_ops,
	&screen_handround_ops, &screen_drift_ops, &screen_train_ops, &screen_budget_ops, &screen_scale_ops, NULL,
};

/* --- signals: handlers only set flags; a crash restores the terminal with
 * async-signal-safe calls only --- */

static volatile sig_atomic_t got_stop_signal;
static struct termios saved_tios;
static bool have_tios;
static char restore_seq[256];
static size_t restore_len;

static void on_stop_signal(int sig)
{
	got_stop_signal = sig;
}

static void on_crash(int sig)
{
	if (restore_len)
		(void)!write(STDOUT_FILENO, restore_seq, restore_len);
	if (have_tios)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tios);
	static const char msg[] = "mixprec: crashed; the terminal has been restored\n";
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void append_cap(const char *cap)
{
	char *s = tigetstr((char *)cap);
	if (!s || s == (char *)-1)
		return;
	size_t n = strlen(s);
	if (restore_len + n < sizeof restore_seq) {
		memcpy(restore_seq + restore_len, s, n);
		restore_len += n;
	}
}

static void install_signals(bool terminal)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!terminal)
		return;
	append_cap("sgr0");
	append_cap("cnorm");
	append_cap("rmkx");
	append_cap("rmcup");
	struct sigaction crash = { .sa_handler = on_crash, .sa_flags = SA_RESETHAND };
	sigemptyset(&crash.sa_mask);
	sigaction(SIGSEGV, &crash, NULL);
	sigaction(SIGBUS, &crash, NULL);
	sigaction(SIGFPE, &crash, NULL);
	sigaction(SIGILL, &crash, NULL);
	sigaction(SIGABRT, &crash, NULL);
}

static void remove_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
}

/* --- the screen stack --- */

const tui_screen_ops *tui_screen_find(const char *name)
{
	for (size_t i = 0; tui_screens[i]; i++)
		if (!strcmp(tui_screens[i]->name, name))
			return tui_screens[i];
	return NULL;
}

void tui_message(tui_app *app, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(app->msg, sizeof app->msg, fmt, ap);
	va_end(ap);
	app->msg_error = error;
}

bool tui_scripted(const tui_app *app)
{
	return app->scripted;
}

const tui_mouse *tui_last_mouse(const tui_app *app)
{
	return &app->mouse;
}

tui_state *tui_app_state(tui_app *app)
{
	return &app->state;
}

int tui_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGTSTP);
	sigaddset(&block, SIGCONT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int r = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

mp_status tui_push(tui_app *app, const tui_screen_ops *ops, int argc, char **argv)
{
	if (app->depth == TUI_MAX_DEPTH) {
		tui_message(app, true, "too many screens open: go back first");
		return MP_EINVAL;
	}
	tui_screen *s = &app->stack[app->depth];
	s->ops = ops;
	s->app = app;
	s->priv = ops->private_size ? calloc(1, ops->private_size) : NULL;
	if (ops->private_size && !s->priv) {
		tui_message(app, true, "%s: out of memory", ops->title);
		return MP_ENOMEM;
	}
	mp_status st = ops->init ? ops->init(s, argc, argv) : MP_OK;
	if (st != MP_OK) {
		if (ops->done)
			ops->done(s);
		free(s->priv);
		s->priv = NULL;
		if (!app->msg[0])
			tui_message(app, true, "%s: %s", ops->title, mp_status_message(st));
		return st;
	}
	app->depth++;
	return MP_OK;
}

mp_status tui_push_named(tui_app *app, const char *name, int argc, char **argv)
{
	const tui_screen_ops *ops = tui_screen_find(name);
	if (!ops) {
		tui_message(app, true, "no screen called '%s'", name);
		return MP_EINVAL;
	}
	return tui_push(app, ops, argc, argv);
}

static void pop(tui_app *app)
{
	if (app->depth == 0)
		return;
	tui_screen *s = &app->stack[--app->depth];
	if (s->ops->done)
		s->ops->done(s);
	free(s->priv);
	s->priv = NULL;
}

static tui_screen *top(tui_app *app)
{
	return app->depth ? &app->stack[app->depth - 1] : NULL;
}

void tui_list_keys(FILE *fp)
{
	fprintf(fp, "Every screen:\n");
	for (size_t k = 0; k < global_ACTION_COUNT; k++)
		fprintf(fp, "  %-16s %s\n", global_keys[k].label, global_keys[k].help);
	for (size_t i = 0; tui_screens[i]; i++) {
		fprintf(fp, "%s:\n", tui_screens[i]->title);
		for (size_t k = 0; k < tui_screens[i]->nkeys; k++)
			fprintf(fp, "  %-16s %s\n", tui_screens[i]->keys[k].label, tui_screens[i]->keys[k].help);
	}
}

/* --- drawing a frame --- */

static void layout(tui_app *app)
{
	if (app->body)
		delwin(app->body);
	app->body = NULL;
	if (LINES >= 3)
		app->body = derwin(stdscr, LINES - 2, COLS, 1, 0);
}

/* The screen's first keys that fit in width columns, then where the rest are. */
static const char *key_hint(const tui_binding *keys, size_t n, int width, char *buf, size_t len)
{
	static const char more[] = "  ? all keys";
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t need = strlen(keys[i].label) + (used ? 2 : 0);
		if ((int)(used + need + sizeof more - 1) > width || used + need + sizeof more >= len)
			break;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "  " : "", keys[i].label);
	}
	snprintf(buf + used, len - used, "%s", more);
	return buf;
}

static void draw_help(tui_app *app, const tui_screen *s)
{
	int rows = LINES - 2, cols = COLS;
	int w = cols > 78 ? 76 : cols - 2, x0 = (cols - w) / 2;
	int lines = (int)(s->ops->nkeys + global_ACTION_COUNT) + 1;
	int h = lines + 2 > rows ? rows : lines + 2;
	int y0 = 1 + (rows - h) / 2;
	WINDOW *win = stdscr;
	for (int y = y0; y < y0 + h; y++)
		tui_fill(win, y, x0, w, ROLE_NORMAL, " ");
	wattrset(win, theme_attr(ROLE_HEADING));
	mvwhline(win, y0, x0, ACS_HLINE, w);
	mvwhline(win, y0 + h - 1, x0, ACS_HLINE, w);
	mvwvline(win, y0, x0, ACS_VLINE, h);
	mvwvline(win, y0, x0 + w - 1, ACS_VLINE, h);
	mvwaddch(win, y0, x0, ACS_ULCORNER);
	mvwaddch(win, y0, x0 + w - 1, ACS_URCORNER);
	mvwaddch(win, y0 + h - 1, x0, ACS_LLCORNER);
	mvwaddch(win, y0 + h - 1, x0 + w - 1, ACS_LRCORNER);
	wattrset(win, A_NORMAL);
	tui_putf(win, y0, x0 + 2, w - 4, ROLE_HEADING, " Keys: %s ", s->ops->title);
	/* the rows: the screen's bindings, a gap, the global ones */
	int total = (int)s->ops->nkeys + 1 + (int)global_ACTION_COUNT;
	int visible = h - 2;
	if (app->help_top > total - visible)
		app->help_top = total - visible > 0 ? total - visible : 0;
	for (int i = 0; i < visible && app->help_top + i < total; i++) {
		int k = app->help_top + i;
		const tui_binding *b = NULL;
		if (k < (int)s->ops->nkeys)
			b = &s->ops->keys[k];
		else if (k > (int)s->ops->nkeys)
			b = &global_keys[k - (int)s->ops->nkeys - 1];
		if (!b)
			continue;
		tui_put(win, y0 + 1 + i, x0 + 2, 14, ROLE_EMPH, b->label);
		tui_put(win, y0 + 1 + i, x0 + 17, w - 19, ROLE_NORMAL, b->help);
	}
	if (total > visible)
		tui_putf(win, y0 + h - 1, x0 + 2, w - 4, ROLE_DIM, " j/k scroll, %d more ", total - visible);
}

static void draw_frame(tui_app *app)
{
	werase(stdscr);
	if (LINES < TUI_MIN_ROWS || COLS < TUI_MIN_COLS) {
		const char *l1 = "Enlarge the terminal";
		char l2[96];
		snprintf(l2, sizeof l2, "mixprec needs %dx%d; this one is %dx%d.", TUI_MIN_COLS, TUI_MIN_ROWS, COLS,
		         LINES);
		const char *l3 = "Q quits.";
		int y = LINES / 2 - 1;
		tui_put(stdscr, y < 0 ? 0 : y, (COLS - tui_width(l1)) / 2 > 0 ? (COLS - tui_width(l1)) / 2 : 0, COLS,
		        ROLE_BAD, l1);
		tui_put(stdscr, y + 1, (COLS - tui_width(l2)) / 2 > 0 ? (COLS - tui_width(l2)) / 2 : 0, COLS,
		        ROLE_NORMAL, l2);
		tui_put(stdscr, y + 2, (COLS - tui_width(l3)) / 2 > 0 ? (COLS - tui_width(l3)) / 2 : 0, COLS,
		        ROLE_DIM, l3);
		wnoutrefresh(stdscr);
		doupdate();
		return;
	}
	tui_screen *s = top(app);
	/* title bar: the path through the stack */
	tui_fill(stdscr, 0, 0, COLS, ROLE_TITLE, " ");
	int x = tui_put(stdscr, 0, 0, COLS, ROLE_TITLE, " mixprec");
	for (int i = 0; i < app->depth; i++) {
		x += tui_put(stdscr, 0, x, COLS - x, ROLE_TITLE, i ? " > " : " | ");
		x += tui_put(stdscr, 0, x, COLS - x, ROLE_TITLE, app->stack[i].ops->title);
	}
	const char *right = "? help  q back ";
	tui_put(stdscr, 0, COLS - tui_width(right), COLS, ROLE_TITLE, right);
	if (s && app->body) {
		int rows, cols;
		getmaxyx(app->body, rows, cols);
		s->ops->draw(s, app->body, rows, cols);
	}
	/* status bar: a message, or the screen's first keys */
	tui_fill(stdscr, LINES - 1, 0, COLS, ROLE_STATUS, " ");
	if (app->msg[0] && tui_wrap(NULL, 0, 0, COLS - 2, 3, ROLE_STATUS, app->msg) > 1) {
		/* a message too long for one line takes the body's last row too */
		tui_fill(stdscr, LINES - 2, 0, COLS, ROLE_STATUS, " ");
		tui_wrap(stdscr, LINES - 2, 1, COLS - 2, 2, app->msg_error ? ROLE_BAD : ROLE_STATUS, app->msg);
	} else if (app->msg[0]) {
		tui_put(stdscr, LINES - 1, 1, COLS - 2, app->msg_error ? ROLE_BAD : ROLE_STATUS, app->msg);
	} else if (s) {
		char hint[512];
		tui_put(stdscr, LINES - 1, 1, COLS - 2, ROLE_STATUS,
		        key_hint(s->ops->keys, s->ops->nkeys, COLS - 2, hint, sizeof hint));
	}
	if (app->help && s)
		draw_help(app, s);
	wnoutrefresh(stdscr);
	doupdate();
}

/* --- keys --- */

static const tui_binding *find_binding(const tui_binding *keys, size_t n, int key)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 6 && keys[i].keys[k]; k++)
			if (keys[i].keys[k] == key)
				return &keys[i];
	return NULL;
}

static void apply(tui_app *app, int r)
{
	if (r & TUI_QUIT)
		app->quit = true;
	else if (r & TUI_CLOSE) {
		pop(app);
		if (app->depth == 0)
			app->quit = true;
	}
}

static void dispatch(tui_app *app, int key)
{
	tui_screen *s = top(app);
	if (!s)
		return;
	app->msg[0] = '\0';
	if (key == FK(KEY_RESIZE)) {
		layout(app);
		return;
	}
	if (LINES < TUI_MIN_ROWS || COLS < TUI_MIN_COLS) {
		if (key == 'Q' || key == 'q')
			app->quit = true;
		return;
	}
	if (key == FK(KEY_MOUSE) && !app->scripted) {
		MEVENT ev;
		if (getmouse(&ev) != OK)
			return;
		app->mouse = (tui_mouse){ .y = ev.y - 1, .x = ev.x,
			                  .click = (ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)) != 0,
			                  .wheel = (ev.bstate & BUTTON4_PRESSED) ? -1 : (ev.bstate & BUTTON5_PRESSED) ? 1 : 0 };
	}
	if (app->help) {
		if (key == 'j' || key == FK(KEY_DOWN))
			app->help_top++;
		else if ((key == 'k' || key == FK(KEY_UP)) && app->help_top > 0)
			app->help_top--;
		else
			app->help = false;
		return;
	}
	if (s->ops->editing && s->ops->editing(s)) {
		apply(app, s->ops->handle(s, -1, key));
		return;
	}
	const tui_binding *b = find_binding(s->ops->keys, s->ops->nkeys, key);
	if (b) {
		int r = s->ops->handle(s, b->action, key);
		if (r != TUI_PASS) {
			apply(app, r);
			return;
		}
	}
	b = find_binding(global_keys, global_ACTION_COUNT, key);
	if (b) {
		switch (b->action) {
		case G_HELP:
			app->help = true;
			app->help_top = 0;
			return;
		case G_BACK:
			apply(app, TUI_CLOSE);
			return;
		case G_QUIT:
			app->quit = true;
			return;
		case G_HOME:
			while (app->depth > 1)
				pop(app);
			return;
		case G_REDRAW:
			clearok(curscr, TRUE);
			return;
		}
	}
	if (!b)
		apply(app, s->ops->handle(s, -1, key));
}

static bool any_busy(tui_app *app)
{
	if (tui_exercises_busy())
		return true;
	for (int i = 0; i < app->depth; i++) {
		tui_screen *s = &app->stack[i];
		if (s->ops->busy && s->ops->busy(s))
			return true;
	}
	return false;
}

static bool tick_all(tui_app *app)
{
	bool changed = false;
	char note[512];
	if (progcache_take_error(note, sizeof note)) {
		tui_message(app, true, "progress not saved: %s", note);
		changed = true;
	}
	for (int i = 0; i < app->depth; i++) {
		tui_screen *s = &app->stack[i];
		if (s->ops->tick && s->ops->tick(s))
			changed = true;
	}
	return changed;
}

/* --- key scripts --- */

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
	while (any_busy(app) && !got_stop_signal) {
		tick_all(app);
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) > limit_s)
			return false;
	}
	tick_all(app);
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
static int run_script(tui_app *app, const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		fprintf(stderr, "mixprec tui: --keys: cannot read '%s': %s\n", path, strerror(errno));
		return 3;
	}
	char line[1024];
	int ln = 0, rc = 0;
	draw_frame(app);
	while (rc == 0 && !app->quit && !got_stop_signal && fgets(line, sizeof line, fp)) {
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
				dispatch(app, key);
				progcache_flush();   /* what a key recorded is on disk before the next frame */
				tick_all(app);
				if (!app->quit)
					draw_frame(app);
			}
		} else if (!strcmp(cmd, "type")) {
			for (; *p && !app->quit; p++) {
				dispatch(app, (unsigned char)*p);
				progcache_flush();
				tick_all(app);
				if (!app->quit)
					draw_frame(app);
			}
		} else if (!strcmp(cmd, "dump")) {
			progcache_flush();   /* a section that came on screen in the last frame */
			draw_frame(app);
			dump_screen(app, *p ? p : "screen");
		} else if (!strcmp(cmd, "wait")) {
			double limit = *p ? atof(p) : 120;
			if (!wait_workers(app, limit)) {
				fprintf(stderr, "mixprec tui: %s:%d: workers still running after %g s\n", path, ln, limit);
				rc = 3;
			}
			draw_frame(app);
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
			dispatch(app, FK(KEY_MOUSE));
			tick_all(app);
			draw_frame(app);
		} else if (!strcmp(cmd, "resize")) {
			int c, r;
			if (sscanf(p, "%dx%d", &c, &r) != 2 || c < 1 || r < 1 || c > 1000 || r > 1000) {
				fprintf(stderr, "mixprec tui: %s:%d: resize needs COLSxROWS, got '%s'\n", path, ln, p);
				rc = 2;
				break;
			}
			resize_term(r, c);
			dispatch(app, FK(KEY_RESIZE));
			draw_frame(app);
		} else {
			fprintf(stderr, "mixprec tui: %s:%d: unknown command '%s' (keys, type, dump, wait, resize, click, wheel)\n", path,
			        ln, cmd);
			rc = 2;
		}
	}
	fclose(fp);
	return rc;
}

/* --- set-up and the main loop --- */

static int read_key(WINDOW *w)
{
	wint_t wc;
	int r = wget_wch(w, &wc);
	if (r == ERR)
		return -1;
	if (r == KEY_CODE_YES)
		return FK((int)wc);
	return (int)wc;
}

static void interactive_loop(tui_app *app)
{
	while (!app->quit) {
		if (got_stop_signal)
			break;
		tick_all(app);
		draw_frame(app);
		/* poll fast while a worker runs so its progress shows; a key still
		 * answers at once either way */
		wtimeout(stdscr, any_busy(app) ? 50 : 250);
		int key = read_key(stdscr);
		if (key >= 0)
			dispatch(app, key);
	}
}

static int start_terminal(tui_app *app, const tui_options *o, SCREEN **scr, FILE **in, FILE **out)
{
	if (o->keys_path) {
		/* off-screen: a terminal description drives a virtual screen whose
		 * output nobody reads */
		*out = fopen("/dev/null", "w");
		*in = fopen("/dev/null", "r");
		if (!*out || !*in) {
			fprintf(stderr, "mixprec tui: cannot open /dev/null: %s\n", strerror(errno));
			return 3;
		}
		*scr = newterm("xterm-256color", *out, *in);
		if (!*scr)
			*scr = newterm("vt100", *out, *in);
		if (!*scr) {
			fprintf(stderr, "mixprec tui: no terminal description for the virtual screen "
			                "(install the Debian package ncurses-base)\n");
			return 3;
		}
		resize_term(o->rows > 0 ? o->rows : 24, o->cols > 0 ? o->cols : 80);
		app->scripted = true;
		return 0;
	}
	const char *term = getenv("TERM");
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
		fprintf(stderr, "mixprec: the interactive workbench needs a terminal on standard input and output; "
		                "for scripts use the commands (see 'mixprec --help')\n");
		return 2;
	}
	if (!term || !*term || !strcmp(term, "dumb")) {
		fprintf(stderr, "mixprec: TERM is %s: the interactive workbench needs a terminal that can move "
		                "the cursor; use the commands instead (see 'mixprec --help')\n",
		        term && *term ? "dumb" : "not set");
		return 2;
	}
	have_tios = tcgetattr(STDIN_FILENO, &saved_tios) == 0;
	*scr = newterm(NULL, stdout, stdin);
	if (!*scr) {
		fprintf(stderr, "mixprec: unknown terminal type '%s'; use the commands instead (see 'mixprec --help')\n",
		        term);
		return 2;
	}
	return 0;
}

int tui_run(const tui_options *o)
{
	/* only the character type: numbers keep the C locale's decimal point */
	setlocale(LC_CTYPE, "");
	tui_app *app = calloc(1, sizeof *app);
	if (!app) {
		fprintf(stderr, "mixprec: out of memory\n");
		return 3;
	}
	SCREEN *scr = NULL;
	FILE *in = NULL, *out = NULL;
	int rc = start_terminal(app, o, &scr, &in, &out);
	if (rc) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		free(app);
		return rc;
	}
	install_signals(!app->scripted);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	intrflush(stdscr, FALSE);
	set_escdelay(25);
	curs_set(0);
	mousemask(BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	theme_init();
	layout(app);
	tui_state_load(&app->state);

	const char *first = o->start ? o->start : "home";
	if (strcmp(first, "home"))
		tui_push_named(app, "home", 0, NULL);
	if (tui_push_named(app, first, 0, NULL) != MP_OK && app->depth == 0) {
		endwin();
		fprintf(stderr, "mixprec tui: cannot open the %s screen: %s\n", first, app->msg);
		rc = 3;
	} else if (o->keys_path) {
		app->dump = stdout;
		if (o->dump_path && strcmp(o->dump_path, "-")) {
			app->dump = fopen(o->dump_path, "w");
			if (!app->dump) {
				fprintf(stderr, "mixprec tui: --dump: cannot write '%s': %s\n", o->dump_path, strerror(errno));
				app->dump = NULL;
				rc = 3;
			}
		}
		if (app->dump)
			rc = run_script(app, o->keys_path);
		if (app->dump && app->dump != stdout && fclose(app->dump) != 0 && rc == 0) {
			fprintf(stderr, "mixprec tui: --dump: writing '%s' failed\n", o->dump_path);
			rc = 3;
		}
	} else {
		interactive_loop(app);
	}
	while (app->depth)
		pop(app);   /* the screens note where the user was */
	tui_exercises_release();
	progcache_release();   /* writes what is still queued */
	if (app->body)
		delwin(app->body);
	endwin();
	remove_signals();
	if (!tui_state_save(&app->state) && !app->scripted)
		fprintf(stderr, "mixprec: could not save progress: %s\n", strerror(errno));
	delscreen(scr);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	if (got_stop_signal && rc == 0) {
		fprintf(stderr, "mixprec: interrupted; the terminal has been restored\n");
		rc = 128 + got_stop_signal;
	}
	free(app);
	return rc;
}

double tui_bench_first_frame(int rows, int cols)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	setlocale(LC_CTYPE, "");
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	if (!out || !in) {
		if (out)
			fclose(out);
		if (in)
			fclose(in);
		return -1;
	}
	SCREEN *scr = newterm("xterm-256color", out, in);
	if (!scr) {
		fclose(out);
		fclose(in);
		return -1;
	}
	resize_term(rows, cols);
	theme_init();
	tui_app *app = calloc(1, sizeof *app);
	double ms = -1;
	if (app) {
		app->scripted = true;
		layout(app);
		if (tui_push_named(app, "home", 0, NULL) == MP_OK) {
			draw_frame(app);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ms = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
		}
		while (app->depth)
			pop(app);
		if (app->body)
			delwin(app->body);
		free(app);
	}
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	return ms;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return 1e3 * (double)(t1.tv_sec - t0->tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

bool tui_bench_key_latency(int rows, int cols, int nkeys, double *max_ms, double *median_ms)
{
	setlocale(LC_CTYPE, "");
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
	tui_app *app = scr ? calloc(1, sizeof *app) : NULL;
	double *lat = nkeys > 0 ? calloc((size_t)nkeys, sizeof *lat) : NULL;
	bool ok = false;
	if (app && lat) {
		resize_term(rows, cols);
		theme_init();
		app->scripted = true;
		layout(app);
		char a0[] = "train", a1[] = "--policy", a2[] = "fp32,bf16-mixed", a3[] = "--steps", a4[] = "100000";
		char *args[] = { a0, a1, a2, a3, a4, NULL };
		if (tui_push_named(app, "home", 0, NULL) == MP_OK && tui_push_named(app, "train", 5, args) == MP_OK) {
			dispatch(app, 'z');   /* the default shape: steps of tens of milliseconds */
			dispatch(app, 's');
			struct timespec nap = { 0, 20 * 1000 * 1000 }, t0;
			for (int i = 0; i < 25; i++) {   /* let it reach the training loop */
				tick_all(app);
				draw_frame(app);
				nanosleep(&nap, NULL);
			}
			ok = any_busy(app);
			for (int i = 0; ok && i < nkeys; i++) {
				clock_gettime(CLOCK_MONOTONIC, &t0);
				dispatch(app, 'm');
				tick_all(app);
				draw_frame(app);
				lat[i] = ms_since(&t0);
				nanosleep(&nap, NULL);
			}
		}
		while (app->depth)
			pop(app);
		if (app->body)
			delwin(app->body);
	}
	if (ok) {
		qsort(lat, (size_t)nkeys, sizeof *lat, cmp_double);
		*max_ms = lat[nkeys - 1];
		*median_ms = lat[nkeys / 2];
	}
	free(lat);
	free(app);
	if (scr) {
		endwin();
		delscreen(scr);
	}
	if (out)
		fclose(out);
	if (in)
		fclose(in);
	return ok;
}
