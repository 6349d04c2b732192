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

/* --- app.c --- */

/* (Re)creates the body window for the current terminal size. */
void app_layout(tui_app *app);
/* Draws the title bar, the top screen, the status bar and the help overlay,
 * off-screen, and refreshes once. */
void app_draw_frame(tui_app *app);
/* Hands one key (FK() for function keys) to the help overlay, the top screen
 * or the global bindings. */
void app_dispatch(tui_app *app, int key);
/* Closes the top screen; nothing when the stack is empty. */
void app_pop(tui_app *app);
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
