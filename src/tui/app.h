/* The TUI core: a stack of screens, each a table of operations with its own
 * key bindings (the ? help is generated from the same tables). */
#ifndef MIXPREC_TUI_APP_H
#define MIXPREC_TUI_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <curses.h>
#include <pthread.h>

#include "tui/theme.h"
#include "util/status.h"

/* A key: a character (Unicode code point) or a curses function key moved
 * above the Unicode range so the two never collide. */
#define TUI_FKEY_BASE 0x200000
#define FK(k) (TUI_FKEY_BASE + (k))
#define TUI_CTRL(c) ((c) & 0x1f)
#define TUI_ESC 27

/* handle() results */
enum {
	TUI_PASS = 0,      /* not mine: try the global keys */
	TUI_HANDLED = 1,
	TUI_CLOSE = 2,     /* pop this screen */
	TUI_QUIT = 4,      /* leave the program */
};

typedef struct {
	int action;
	const char *label;   /* the keys as the help shows them */
	const char *help;
	int keys[6];         /* 0-terminated when shorter */
} tui_binding;

/* A key table is an X-macro: X(ACTION, "label", "help", key, key...). */
#define TUI_BIND_ENUM(a, l, h, ...) a,
#define TUI_BIND_ROW(a, l, h, ...) { .action = a, .label = l, .help = h, .keys = { __VA_ARGS__ } },
#define TUI_KEYMAP(name, LIST)                                       \
	enum { LIST(TUI_BIND_ENUM) name##_ACTION_COUNT };            \
	static const tui_binding name##_keys[] = { LIST(TUI_BIND_ROW) }

typedef struct tui_app tui_app;
typedef struct tui_screen tui_screen;

typedef struct {
	const char *name;        /* as `mixprec tui --start NAME` takes it */
	const char *title;
	const char *lab_of;      /* the commands whose runs this screen is the lab of, space-separated
	                          * ("bits round formats"): a lesson's block of one opens here; or NULL */
	size_t private_size;
	const tui_binding *keys;
	size_t nkeys;
	/* args: the matching CLI command's options (argv[0] is the command), or
	 * argc 0. A bad argument is reported with tui_message and ignored. */
	mp_status (*init)(tui_screen *s, int argc, char **argv);
	void (*draw)(tui_screen *s, WINDOW *w, int rows, int cols);
	/* action is a binding's action, or -1 with the raw key when the screen
	 * is editing text (editing() true) or no binding matched */
	int (*handle)(tui_screen *s, int action, int key);
	bool (*editing)(tui_screen *s);
	bool (*tick)(tui_screen *s);      /* polls a worker; true when the screen changed */
	bool (*busy)(tui_screen *s);      /* a worker is running */
	void (*done)(tui_screen *s);
} tui_screen_ops;

struct tui_screen {
	const tui_screen_ops *ops;
	tui_app *app;
	void *priv;
};

/* Opens a screen on top of the stack; args as for init. */
mp_status tui_push(tui_app *app, const tui_screen_ops *ops, int argc, char **argv);
/* Opens the screen registered under name (see tui_screen_find). */
mp_status tui_push_named(tui_app *app, const char *name, int argc, char **argv);
const tui_screen_ops *tui_screen_find(const char *name);
/* The screen that is the lab of the command line cmd ("mixprec train ...",
 * or from the subcommand on), from the screens' lab_of; NULL when none. */
const tui_screen_ops *tui_screen_lab_for(const char *cmd);
/* Every screen in home-page order, NULL-terminated. */
extern const tui_screen_ops *const tui_screens[];

/* A one-line message in the status bar until the next key. */
void tui_message(tui_app *app, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Off-screen key-script mode: workers finish deterministically, no delays. */
bool tui_scripted(const tui_app *app);

/* The last mouse event (key FK(KEY_MOUSE)) in the screen's window
 * coordinates: a click (button 1), or the wheel (dir -1 up, +1 down). */
typedef struct {
	int y, x;
	bool click;
	int wheel;
} tui_mouse;
const tui_mouse *tui_last_mouse(const tui_app *app);

/* Progress and resume points, saved when the program leaves. */
struct tui_state;
struct tui_state *tui_app_state(tui_app *app);

/* Starts a worker thread with the terminal's signals blocked in it, so that
 * Ctrl-C, SIGTERM, SIGWINCH and SIGTSTP reach the UI thread. 0 or an errno. */
int tui_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* Enter as a terminal sends it, in every mode. */
#define TUI_ENTER_KEYS '\n', '\r', FK(KEY_ENTER)

/* --- drawing helpers (clip at the window's edge, UTF-8 aware) --- */

/* Writes text at (y, x) in role, at most maxw columns; returns columns used. */
int tui_put(WINDOW *w, int y, int x, int maxw, tui_role role, const char *text);
/* As tui_put, but text that does not fit ends in an ellipsis. */
int tui_put_fit(WINDOW *w, int y, int x, int maxw, tui_role role, const char *text);
int tui_putf(WINDOW *w, int y, int x, int maxw, tui_role role, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Display width of a UTF-8 string. */
int tui_width(const char *text);
/* Bytes of the character at p (at least 1 unless *p is NUL) and its width in *cols. */
int tui_next_char(const char *p, int *cols);
void tui_fill(WINDOW *w, int y, int x, int n, tui_role role, const char *glyph);
/* Word-wraps text into at most maxrows rows of width columns from (y, x);
 * returns the rows used. With w NULL only counts them. */
int tui_wrap(WINDOW *w, int y, int x, int width, int maxrows, tui_role role, const char *text);

/* --- a one-line text field with a cursor and history --- */
typedef struct {
	char text[256];
	size_t len, cur;         /* bytes; the text is ASCII (numbers, names) */
	char saved[256];         /* the text before editing, restored by Esc */
	char history[8][256];
	int nhist, hpos;
} tui_field;

enum { FIELD_NONE, FIELD_CHANGED, FIELD_ENTER, FIELD_CANCEL };
void field_set(tui_field *f, const char *text);
void field_begin(tui_field *f);
/* Feeds a key to a field being edited; returns FIELD_*. Enter adds the text
 * to the history. */
int field_key(tui_field *f, int key);
/* Draws the field; with the cursor shown when editing. */
void field_draw(WINDOW *w, int y, int x, int width, const tui_field *f, bool editing);

#endif
