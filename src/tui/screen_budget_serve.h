/* The Memory budget lab's serving view (budget/serve.c, as `mixprec budget
 * --serve`): a form over serve_config, the weights, the KV cache and what
 * one GPU holds, a bar of that GPU's memory and the CLI command of what is
 * shown. The lab owns the view and hands it its keys while it is shown. */
#ifndef MIXPREC_TUI_SCREEN_BUDGET_SERVE_H
#define MIXPREC_TUI_SCREEN_BUDGET_SERVE_H

#include <stdbool.h>

#include "budget/budget_opts.h"
#include "budget/serve.h"
#include "tui/app.h"

/* The lab's moves the view reads. */
typedef enum { SV_UP, SV_DOWN, SV_PREV, SV_NEXT, SV_EDIT, SV_OTHER } serve_move;

typedef struct {
	serve_config cfg;
	int preset;              /* budget_preset_name(preset); -1: a custom shape from a command line */
	int field;
	bool editing;
	tui_field context, batch, gpu, util, reserve;
	serve_result res;
	bool ok;
	char err[512];
} serve_view;

/* llama-3-8b, context 8192, batch 1, bf16, on an 80 GB GPU. */
void serve_view_init(serve_view *v);
/* Moves the view to the named model (a budget preset), keeping the rest. */
void serve_view_set_preset(serve_view *v, const char *name);
/* The view of a parsed `budget --serve ...` command line. */
void serve_view_from_opts(serve_view *v, const budget_opts *o);
void serve_view_draw(serve_view *v, WINDOW *w, int rows, int cols);
/* A move or, while editing, a raw key; TUI_HANDLED or TUI_PASS. */
int serve_view_handle(serve_view *v, tui_screen *s, serve_move move, int key);

#endif
