/* The TUI core: the screen stack, drawing a frame with its generated help,
 * key dispatch and the main loop. The terminal and signals are in
 * app_term.c, the key scripts in app_script.c, `bench tui` in app_bench.c. */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tui/app_impl.h"
#include "tui/progcache.h"
#include "tui/screens.h"
#include "util/file.h"

#define TUI_MIN_ROWS 24
#define TUI_MIN_COLS 80

#define GLOBAL_KEYS(X)                                                                        \
	X(G_HELP, "? F1", "this help: every key of the current screen", '?', FK(KEY_F(1)))     \
	X(G_BACK, "q Esc", "back to the previous screen (from Home: quit)", 'q', TUI_ESC)      \
	X(G_QUIT, "Q", "quit mixprec from any screen", 'Q')                                   \
	X(G_HOME, "H", "go to the Home screen", 'H')                                          \
	X(G_REDRAW, "^L", "redraw the whole screen", TUI_CTRL('l'))
TUI_KEYMAP(global, GLOBAL_KEYS);

/* The global keys in a word each, for the help's one-line summary of them
 * when the full list would not fit the screen. */
static const char *const global_short[global_ACTION_COUNT] = {
	[G_HELP] = "help", [G_BACK] = "back", [G_QUIT] = "quit", [G_HOME] = "Home", [G_REDRAW] = "redraw",
};

const tui_screen_ops *const tui_screens[] = {
	&screen_home_ops, &screen_lesson_ops, &screen_exercises_ops, &screen_exercise_ops, &screen_bits_ops,
	&screen_handround_ops, &screen_drift_ops, &screen_train_ops, &screen_budget_ops, &screen_scale_ops, &screen_block_ops, NULL,
};

/* --- the screen stack --- */

const tui_screen_ops *tui_screen_find(const char *name)
{
	for (size_t i = 0; tui_screens[i]; i++)
		if (!strcmp(tui_screens[i]->name, name))
			return tui_screens[i];
	return NULL;
}

const tui_screen_ops *tui_screen_lab_for(const char *cmd)
{
	while (*cmd == ' ')
		cmd++;
	if (!strncmp(cmd, "mixprec ", 8))
		cmd += 8;
	size_t l = strcspn(cmd, " \n");
	for (size_t i = 0; l && tui_screens[i]; i++)
		for (const char *w = tui_screens[i]->lab_of; w && *w; w += strspn(w, " ")) {
			size_t n = strcspn(w, " ");
			if (n == l && !strncmp(w, cmd, l))
				return tui_screens[i];
			w += n;
		}
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

/* argv joined with 0x1f between, the key of a kept state (malloc'd; NULL
 * out of memory). */
static char *join_args(int argc, char **argv)
{
	size_t n = 1;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *out = malloc(n), *p = out;
	if (!out)
		return NULL;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);
		memcpy(p, argv[i], l);
		p += l;
		*p++ = 0x1f;
	}
	*p = '\0';
	return out;
}

/* Ends a kept state: its screen's done (stopping a worker), its memory. */
static void kept_end(tui_app *app, int k)
{
	tui_kept *kp = &app->kept[k];
	tui_screen s = { .ops = kp->ops, .app = app, .priv = kp->priv };
	if (kp->ops->done)
		kp->ops->done(&s);
	free(kp->priv);
	free(kp->args);
	app->kept[k] = app->kept[--app->nkept];
}

/* Takes the kept state of ops opened with args out of the store; NULL when none. */
static void *kept_take(tui_app *app, const tui_screen_ops *ops, const char *args)
{
	for (int k = 0; k < app->nkept; k++) {
		tui_kept *kp = &app->kept[k];
		if (kp->ops == ops && !strcmp(kp->args, args)) {
			void *priv = kp->priv;
			free(kp->args);
			app->kept[k] = app->kept[--app->nkept];
			return priv;
		}
	}
	return NULL;
}

mp_status tui_push(tui_app *app, const tui_screen_ops *ops, int argc, char **argv)
{
	if (app->depth == TUI_MAX_DEPTH) {
		tui_message(app, true, "too many screens open: go back first");
		return MP_EINVAL;
	}
	char *args = join_args(argc, argv);
	if (!args) {
		tui_message(app, true, "%s: out of memory", ops->title);
		return MP_ENOMEM;
	}
	tui_screen *s = &app->stack[app->depth];
	s->ops = ops;
	s->app = app;
	/* the state the user left this screen in, when it was open before */
	s->priv = ops->private_size ? kept_take(app, ops, args) : NULL;
	if (s->priv) {
		app->stack_args[app->depth++] = args;
		return MP_OK;
	}
	s->priv = ops->private_size ? calloc(1, ops->private_size) : NULL;
	if (ops->private_size && !s->priv) {
		free(args);
		tui_message(app, true, "%s: out of memory", ops->title);
		return MP_ENOMEM;
	}
	mp_status st = ops->init ? ops->init(s, argc, argv) : MP_OK;
	if (st != MP_OK) {
		if (ops->done)
			ops->done(s);
		free(s->priv);
		s->priv = NULL;
		free(args);
		if (!app->msg[0])
			tui_message(app, true, "%s: %s", ops->title, mp_status_message(st));
		return st;
	}
	app->stack_args[app->depth++] = args;
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

/* Closes the top screen; with keep, its state goes to the kept ones. */
static void close_top(tui_app *app, bool keep)
{
	if (app->depth == 0)
		return;
	tui_screen *s = &app->stack[--app->depth];
	char *args = app->stack_args[app->depth];
	app->stack_args[app->depth] = NULL;
	if (keep && s->priv) {
		if (app->nkept == TUI_MAX_KEPT) {
			int oldest = 0;
			for (int k = 1; k < app->nkept; k++)
				if (app->kept[k].used < app->kept[oldest].used)
					oldest = k;
			kept_end(app, oldest);
		}
		app->kept[app->nkept++] = (tui_kept){ .ops = s->ops, .args = args, .priv = s->priv, .used = ++app->closes };
		s->priv = NULL;
		return;
	}
	if (s->ops->done)
		s->ops->done(s);
	free(s->priv);
	s->priv = NULL;
	free(args);
}

void app_pop(tui_app *app)
{
	close_top(app, true);
}

void app_close_all(tui_app *app)
{
	while (app->depth)
		close_top(app, false);
	while (app->nkept)
		kept_end(app, app->nkept - 1);
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

void app_layout(tui_app *app)
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

/* The help's row k: the screen's binding k, a gap, then the global keys, one
 * per row or (compact) all on one row. */
static void help_row(WINDOW *win, int y, int x0, int w, const tui_screen *s, int k, bool compact)
{
	int nk = (int)s->ops->nkeys;
	if (k == nk)
		return;
	if (k > nk && compact) {
		char line[256];
		size_t used = 0;
		for (int g = 0; g < global_ACTION_COUNT && used < sizeof line; g++)
			used += (size_t)snprintf(line + used, sizeof line - used, "%s%s %s", g ? "  " : "", global_keys[g].label,
			                         global_short[g]);
		tui_put_fit(win, y, x0 + 2, w - 4, ROLE_EMPH, line);
		return;
	}
	const tui_binding *b = k < nk ? &s->ops->keys[k] : &global_keys[k - nk - 1];
	tui_put_fit(win, y, x0 + 2, 14, ROLE_EMPH, b->label);
	tui_put_fit(win, y, x0 + 17, w - 19, ROLE_NORMAL, b->help);
}

static void draw_help(tui_app *app, const tui_screen *s)
{
	int rows = LINES - 2, cols = COLS;
	/* 78 columns at 80: 59 for a key's text */
	int w = cols > 80 ? 78 : cols - 2, x0 = (cols - w) / 2;
	/* the rows: the screen's bindings, a gap, the global ones; those on one
	 * row when all would not fit, and a scroll only when that does not either */
	int total = (int)s->ops->nkeys + 1 + (int)global_ACTION_COUNT;
	bool compact = total + 2 > rows;
	if (compact)
		total = (int)s->ops->nkeys + 2;
	int h = total + 2 > rows ? rows : total + 2;
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
	int visible = h - 2;
	if (app->help_top > total - visible)
		app->help_top = total - visible > 0 ? total - visible : 0;
	for (int i = 0; i < visible && app->help_top + i < total; i++)
		help_row(win, y0 + 1 + i, x0, w, s, app->help_top + i, compact);
	if (total > visible)
		tui_putf(win, y0 + h - 1, x0 + 2, w - 4, ROLE_DIM, " j/k scroll, %d more ", total - visible);
}

void app_draw_frame(tui_app *app)
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
		app_pop(app);
		if (app->depth == 0)
			app->quit = true;
	}
}

void app_dispatch(tui_app *app, int key)
{
	tui_screen *s = top(app);
	if (!s)
		return;
	app->msg[0] = '\0';
	if (key == FK(KEY_RESIZE)) {
		app_layout(app);
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
				app_pop(app);
			return;
		case G_REDRAW:
			clearok(curscr, TRUE);
			return;
		}
	}
	if (!b)
		apply(app, s->ops->handle(s, -1, key));
}

bool app_any_busy(tui_app *app)
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

bool app_tick_all(tui_app *app)
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

/* --- the main loop --- */

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
		if (app_stop_signal())
			break;
		app_tick_all(app);
		app_draw_frame(app);
		/* poll fast while a worker runs so its progress shows; a key still
		 * answers at once either way */
		wtimeout(stdscr, app_any_busy(app) ? 50 : 250);
		int key = read_key(stdscr);
		if (key >= 0)
			app_dispatch(app, key);
	}
}

/* Runs the key script of o, its screens dumped to --dump (stdout by
 * default). A dump file is written to a temporary file and put in place
 * only when the whole script ran, so a failed run (an unreadable or bad
 * script) leaves an existing file as it was. The exit status. */
static int run_scripted(tui_app *app, const tui_options *o)
{
	char err[4400];
	file_atomic dump = { 0 };
	app->dump = stdout;
	if (o->dump_path && strcmp(o->dump_path, "-")) {
		if (file_atomic_open(&dump, o->dump_path, err, sizeof err) != MP_OK) {
			fprintf(stderr, "mixprec tui: --dump: cannot write %s\n", err);
			app->dump = NULL;
			return 3;
		}
		app->dump = dump.fp;
	}
	int rc = app_run_script(app, o->keys_path);
	if (app->dump != stdout) {
		if (rc != 0) {
			file_atomic_abort(&dump);
		} else if (file_atomic_commit(&dump, err, sizeof err) != MP_OK) {
			fprintf(stderr, "mixprec tui: --dump: writing %s\n", err);
			rc = 3;
		}
	}
	app->dump = NULL;
	return rc;
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
	int rc = app_term_start(app, o, &scr, &in, &out);
	if (rc) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		free(app);
		return rc;
	}
	app_signals_install(!app->scripted);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	intrflush(stdscr, FALSE);
	set_escdelay(25);
	curs_set(0);
	mousemask(BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	theme_init();
	app_layout(app);
	tui_state_load(&app->state);

	const char *first = o->start ? o->start : "home";
	if (strcmp(first, "home"))
		tui_push_named(app, "home", 0, NULL);
	if (tui_push_named(app, first, 0, NULL) != MP_OK && app->depth == 0) {
		endwin();
		fprintf(stderr, "mixprec tui: cannot open the %s screen: %s\n", first, app->msg);
		rc = 3;
	} else if (o->keys_path) {
		rc = run_scripted(app, o);
	} else {
		interactive_loop(app);
	}
	app_close_all(app);   /* the screens note where the user was */
	tui_exercises_release();
	progcache_release();   /* writes what is still queued */
	if (app->body)
		delwin(app->body);
	endwin();
	app_signals_remove();
	if (!tui_state_save(&app->state) && !app->scripted)
		fprintf(stderr, "mixprec: could not save progress: %s\n", strerror(errno));
	delscreen(scr);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	if (app_stop_signal() && rc == 0) {
		fprintf(stderr, "mixprec: interrupted; the terminal has been restored\n");
		rc = 128 + app_stop_signal();
	}
	free(app);
	return rc;
}
