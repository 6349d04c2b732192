/* What the TUI core's files share and nothing else sees: the application
 * record and the steps of the main loop. app.c holds the screen stack,
 * drawing and key dispatch; app_term.c the terminal and signals;
 * app_script.c the key scripts (--keys/--dump); app_bench.c `bench tui`. */
#ifndef MIXPREC_TUI_APP_IMPL_H
#define MIXPREC_TUI_APP_IMPL_H

#include <stdbool.h>
#include <stdio.h>

#include "tui/app.h"
#include "tui/state.h"
#include "tui/tui.h"

#define TUI_MAX_DEPTH 16
/* Screens closed this session whose state is kept to show again. */
#define TUI_MAX_KEPT 16

/* A closed screen's state: its private record, as it was when the user
 * left it, found again by its operations and the argv it was opened with. */
typedef struct {
	const tui_screen_ops *ops;
	char *args;             /* argv joined with 0x1f between ("" for argc 0) */
	void *priv;
	unsigned long used;     /* when it was closed: the oldest goes first */
} tui_kept;

struct tui_app {
	tui_screen stack[TUI_MAX_DEPTH];
	char *stack_args[TUI_MAX_DEPTH];   /* each open screen's argv, joined as in tui_kept */
	int depth;
	tui_kept kept[TUI_MAX_KEPT];
	int nkept;
	unsigned long closes;
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

/* --- app.c --- */

/* (Re)creates the body window for the current terminal size. */
void app_layout(tui_app *app);
/* Draws the title bar, the top screen, the status bar and the help overlay,
 * off-screen, and refreshes once. */
void app_draw_frame(tui_app *app);
/* Hands one key (FK() for function keys) to the help overlay, the top screen
 * or the global bindings. */
void app_dispatch(tui_app *app, int key);
/* Closes the top screen, keeping its state for the session: opening the
 * same screen with the same argv again shows it as it was left (the oldest
 * kept state goes when TUI_MAX_KEPT are kept). Nothing when the stack is
 * empty. */
void app_pop(tui_app *app);
/* Closes every screen and ends every kept one (their done, their workers
 * stopped): at exit. */
void app_close_all(tui_app *app);
/* True while any open screen's worker (or the exercise loader) runs. */
bool app_any_busy(tui_app *app);
/* Lets every open screen take its worker's progress; true when one changed. */
bool app_tick_all(tui_app *app);

/* --- app_term.c --- */

/* Opens the terminal: the real one, or a virtual screen on /dev/null when
 * o->keys_path is set (then app->scripted). Returns 0 or an exit status,
 * after saying why on stderr; *in and *out may be open either way. */
int app_term_start(tui_app *app, const tui_options *o, SCREEN **scr, FILE **in, FILE **out);
/* Stop signals set a flag; with a terminal, a crash restores it first. */
void app_signals_install(bool terminal);
void app_signals_remove(void);
/* The stop signal received (SIGINT, SIGTERM, SIGHUP), or 0. */
int app_stop_signal(void);

/* --- app_script.c --- */

/* Runs the key script at path against app, dumping to app->dump. Returns an
 * exit status; errors name the script's file and line. */
int app_run_script(tui_app *app, const char *path);

#endif
