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

/* Frees the exercises loaded for the Exercises screens (at exit). */
void tui_exercises_release(void);

#endif
