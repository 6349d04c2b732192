#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui/theme.h"

static const struct {
	short fg, bg;
	attr_t mono;
} roles[ROLE_COUNT] = {
#define TUI_ROLE_ROW(id, f, b, m) [id] = { .fg = f, .bg = b, .mono = m },
	TUI_ROLES(TUI_ROLE_ROW)
#undef TUI_ROLE_ROW
};

static const struct {
	const char *utf8, *ascii;
} glyphs[GLYPH_COUNT] = {
	[GLYPH_CHECK] = { .utf8 = "\u2713", .ascii = "*" },
	[GLYPH_PARTIAL] = { .utf8 = "\u25d1", .ascii = "~" },
	[GLYPH_ARROW] = { .utf8 = "\u25b8", .ascii = ">" },
	[GLYPH_BLOCK] = { .utf8 = "\u2588", .ascii = "#" },
	[GLYPH_VBAR] = { .utf8 = "\u2502", .ascii = "|" },
	[GLYPH_HLINE] = { .utf8 = "\u2500", .ascii = "-" },
	[GLYPH_BULLET] = { .utf8 = "\u2022", .ascii = "*" },
	[GLYPH_ELLIPSIS] = { .utf8 = "\u2026", .ascii = "~" },
};

static bool use_color, use_utf8;
static attr_t attrs[ROLE_COUNT];

void theme_init(void)
{
	const char *cs = nl_langinfo(CODESET);
	use_utf8 = cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
	/* https://no-color.org: set and not empty means no colour */
	const char *nc = getenv("NO_COLOR");
	use_color = !(nc && *nc) && has_colors() && start_color() == OK;
	if (use_color)
		use_default_colors();
	for (int r = 0; r < ROLE_COUNT; r++) {
		if (!use_color || r == ROLE_NORMAL) {
			attrs[r] = roles[r].mono;
			continue;
		}
		short fg = roles[r].fg, bg = roles[r].bg;
		if (init_pair((short)r, fg, bg) == ERR) {
			attrs[r] = roles[r].mono;
			continue;
		}
		attrs[r] = COLOR_PAIR(r);
		/* what keeps a role readable when the colours are close */
		if (r == ROLE_HEADING || r == ROLE_STRONG || r == ROLE_SIGN || r == ROLE_GOOD || r == ROLE_BAD || r == ROLE_SERIES1)
			attrs[r] |= A_BOLD;
		if (r == ROLE_EXPONENT || r == ROLE_LINK)
			attrs[r] |= A_UNDERLINE;
	}
}

attr_t theme_attr(tui_role r)
{
	return r < ROLE_COUNT ? attrs[r] : A_NORMAL;
}

bool theme_utf8(void) { return use_utf8; }
bool theme_color(void) { return use_color; }

const char *theme_glyph(tui_glyph g)
{
	return use_utf8 ? glyphs[g].utf8 : glyphs[g].ascii;
}
