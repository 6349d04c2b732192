/* Every screen of the workbench (one module each). */
#ifndef MIXPREC_TUI_SCREENS_H
#define MIXPREC_TUI_SCREENS_H

#include "tui/app.h"

extern const tui_screen_ops screen_home_ops;
extern const tui_screen_ops screen_lesson_ops;
extern const tui_screen_ops screen_bits_ops;
extern const tui_screen_ops screen_drift_ops;
extern const tui_screen_ops screen_train_ops;
extern const tui_screen_ops screen_budget_ops;
extern const tui_screen_ops screen_scale_ops;
extern const tui_screen_ops screen_exercises_ops;
extern const tui_screen_ops screen_exercise_ops;
extern const tui_screen_ops screen_handround_ops;
extern const tui_screen_ops screen_block_ops;

/* Opens exercise id over screen s (loading the exercises first, in the
 * background, when they are not loaded yet). */
void tui_exercise_open(tui_screen *s, const char *id);

/* True while the exercises load in the background. */
bool tui_exercises_busy(void);

/* Frees the exercises loaded for the Exercises screens (at exit). */
void tui_exercises_release(void);

#endif
