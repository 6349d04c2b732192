/* What the workbench remembers between runs: the lesson to resume and the
 * place in each lesson. Kept in $XDG_STATE_HOME/mixprec/tui-state (default
 * ~/.local/state/mixprec/), written atomically (temp file + rename). The
 * sections read are progress like the exercises: progress.csv
 * (teach/progress.h), items "lesson:NAME#N". */
#ifndef MIXPREC_TUI_STATE_H
#define MIXPREC_TUI_STATE_H

#include <stdbool.h>
#include <stdint.h>

#define TUI_STATE_LESSONS 16

typedef struct {
	char name[64];
	int line;           /* top line of the reader */
} tui_lesson_state;

typedef struct tui_state {
	char last_lesson[64];   /* the lesson to resume ("" when none) */
	tui_lesson_state lessons[TUI_STATE_LESSONS];
	int nlessons;
} tui_state;

/* Loads the state (an empty one when there is none or it is unreadable:
 * progress is a convenience, never a reason to refuse to start). */
void tui_state_load(tui_state *st);
/* Writes it atomically; false (errno set) when that failed. */
bool tui_state_save(const tui_state *st);
/* The entry for a lesson, created when missing (NULL when the table is full). */
tui_lesson_state *tui_state_lesson(tui_state *st, const char *name);

#endif
