/* Colour roles and glyphs: one table, with a monochrome fallback (NO_COLOR,
 * terminals without colour) and ASCII stand-ins when the locale is not UTF-8. */
#ifndef MIXPREC_TUI_THEME_H
#define MIXPREC_TUI_THEME_H

#include <stdbool.h>
#include <curses.h>

#define TUI_ROLES(X)                                              \
	X(ROLE_NORMAL,   -1,             -1,          A_NORMAL)    \
	X(ROLE_TITLE,    COLOR_BLACK,    COLOR_CYAN,  A_REVERSE)   \
	X(ROLE_STATUS,   COLOR_BLACK,    COLOR_WHITE, A_REVERSE)   \
	X(ROLE_SELECT,   COLOR_BLACK,    COLOR_YELLOW, A_REVERSE)  \
	X(ROLE_HEADING,  COLOR_CYAN,     -1,          A_BOLD)      \
	X(ROLE_DIM,      COLOR_BLUE,     -1,          A_DIM)       \
	X(ROLE_CODE,     COLOR_GREEN,    -1,          A_NORMAL)    \
	X(ROLE_EMPH,     COLOR_YELLOW,   -1,          A_UNDERLINE) \
	X(ROLE_STRONG,   -1,             -1,          A_BOLD)      \
	X(ROLE_LINK,     COLOR_BLUE,     -1,          A_UNDERLINE) \
	X(ROLE_SIGN,     COLOR_RED,      -1,          A_BOLD)      \
	X(ROLE_EXPONENT, COLOR_GREEN,    -1,          A_UNDERLINE) \
	X(ROLE_FRACTION, COLOR_BLUE,     -1,          A_NORMAL)    \
	X(ROLE_GOOD,     COLOR_GREEN,    -1,          A_BOLD)      \
	X(ROLE_BAD,      COLOR_RED,      -1,          A_BOLD)      \
	X(ROLE_AXIS,     COLOR_WHITE,    -1,          A_DIM)       \
	X(ROLE_SERIES1,  COLOR_WHITE,    -1,          A_BOLD)      \
	X(ROLE_SERIES2,  COLOR_CYAN,     -1,          A_NORMAL)    \
	X(ROLE_SERIES3,  COLOR_YELLOW,   -1,          A_NORMAL)    \
	X(ROLE_SERIES4,  COLOR_GREEN,    -1,          A_NORMAL)    \
	X(ROLE_SERIES5,  COLOR_MAGENTA,  -1,          A_NORMAL)    \
	X(ROLE_SERIES6,  COLOR_RED,      -1,          A_NORMAL)    \
	X(ROLE_SERIES7,  COLOR_BLUE,     -1,          A_NORMAL)    \
	X(ROLE_SERIES8,  COLOR_WHITE,    -1,          A_DIM)

typedef enum {
#define TUI_ROLE_ENUM(id, fg, bg, mono) id,
	TUI_ROLES(TUI_ROLE_ENUM)
#undef TUI_ROLE_ENUM
	ROLE_COUNT
} tui_role;

#define ROLE_SERIES_COUNT 8

/* Decides colour and glyphs for this terminal and locale; call after initscr. */
void theme_init(void);

/* The attribute for a role (colour pair or monochrome attribute). */
attr_t theme_attr(tui_role r);
static inline tui_role theme_series(int i) { return (tui_role)(ROLE_SERIES1 + i % ROLE_SERIES_COUNT); }

/* True when the locale's code set is UTF-8 (else every glyph is ASCII). */
bool theme_utf8(void);
bool theme_color(void);

/* Glyphs with ASCII stand-ins. */
typedef enum {
	GLYPH_CHECK,    /* done */
	GLYPH_PARTIAL,  /* started */
	GLYPH_ARROW,    /* current item */
	GLYPH_BLOCK,    /* full bar cell */
	GLYPH_VBAR,     /* column separator */
	GLYPH_HLINE,
	GLYPH_BULLET,
	GLYPH_ELLIPSIS,
	GLYPH_COUNT
} tui_glyph;
const char *theme_glyph(tui_glyph g);

#endif
