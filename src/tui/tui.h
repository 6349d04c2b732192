/* The interactive workbench: an ncurses front end over the same layers the
 * CLI drives. Entry points for the CLI (mixprec, mixprec tui, bench tui). */
#ifndef MIXPREC_TUI_TUI_H
#define MIXPREC_TUI_TUI_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
	const char *keys_path;   /* key script: render off-screen, no terminal needed */
	const char *dump_path;   /* where the script's "dump" steps write ("-": stdout) */
	int rows, cols;          /* virtual screen size in script mode (default 24x80) */
	const char *start;       /* screen to open first ("home" when NULL) */
} tui_options;

/* Runs the workbench on the terminal, or the key script when keys_path is
 * set. Returns an exit status of the CLI contract; messages go to stderr
 * (after the terminal has been restored). */
int tui_run(const tui_options *o);

/* Writes every screen's keys, from the same tables as the keymaps and the
 * ? help, as the README and the man page list them. */
void tui_list_keys(FILE *fp);

/* Time from entering the TUI to its first complete frame, rendered off-screen
 * at rows x cols, in milliseconds; negative when the TUI could not start. */
double tui_bench_first_frame(int rows, int cols);

/* Time from a key press to its finished frame while the Training lab trains
 * fp32 and bf16-mixed at the default shape in its worker: nkeys presses, 20 ms
 * apart; *max_ms and *median_ms get the slowest and the median. False when
 * the TUI or the training could not start. */
bool tui_bench_key_latency(int rows, int cols, int nkeys, double *max_ms, double *median_ms);

#endif
