/* Bit explorer: a typed value in every format side by side, bits coloured by
 * role, decoded value, relative error and ulp; bits toggled by hand, steps to
 * the neighbouring values, and the rounding mode switched (all through fmt/,
 * as `mixprec bits` and `mixprec round` do). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bits_opts.h"
#include "fmt/formats_opts.h"
#include "fmt/decode.h"
#include "fmt/format.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "fmt/round_opts.h"
#include "tui/screens.h"
#include "util/numtext.h"
#include "util/rng.h"

/* The explorer's rows: the course's formats (the table's first rows; the
 * integer, ml_dtypes and P3109 rows are in bits and formats) */
#define NROWS ((int)fmt_course_count())

#define BITS_KEYS(X)                                                                              \
	X(BITS_EDIT, "e Enter", "type a value (Enter applies, Esc cancels, Up/Down history)", 'e', \
	  TUI_ENTER_KEYS, '=')                                                                       \
	X(BITS_UP, "k Up", "previous format", 'k', FK(KEY_UP))                                       \
	X(BITS_DOWN, "j Down", "next format", 'j', FK(KEY_DOWN))                                     \
	X(BITS_LEFT, "h Left", "previous bit", 'h', FK(KEY_LEFT))                                    \
	X(BITS_RIGHT, "l Right", "next bit", 'l', FK(KEY_RIGHT))                                     \
	X(BITS_TOGGLE, "Space", "toggle the bit under the cursor", ' ')                              \
	X(BITS_PREV, "- [", "previous representable value in this format", '-', '[')                 \
	X(BITS_NEXT, "+ ]", "next representable value in this format", '+', ']')                     \
	X(BITS_MODE, "m", "next rounding mode (rne rna rtz up down sr rto rnz sr-equal)", 'm')                        \
	X(BITS_MODE_BACK, "M", "previous rounding mode", 'M')                                        \
	X(BITS_RESET, "r", "this format back to the typed value, rounded", 'r')                       \
	X(BITS_TAB, "Tab", "jump from sign to exponent to fraction", '\t')
TUI_KEYMAP(bits, BITS_KEYS);

typedef struct {
	tui_field input;
	bool editing;
	bool valid;
	fmt_num x;             /* the typed value, exact */
	bool x_init;
	fmt_mode mode;
	uint32_t bits[FMT_COUNT];
	bool edited[FMT_COUNT];  /* changed by hand since the value was typed */
	unsigned flags[FMT_COUNT];
	int row, bit;          /* cursor: format row, bit from the left (0 = sign) */
	int top, nvis;         /* the formats shown: rows top .. top + nvis - 1 (as last drawn) */
	uint64_t sr_count;
} bitex;

/* Sign bits of f: 1, or 0 for e8m0. */
static int sign_bits(const fmt_info *f)
{
	return fmt_has_sign(f) ? 1 : 0;
}

/* The field of bit k (from the left) of f. */
static tui_role bit_role(const fmt_info *f, int k)
{
	int sb = sign_bits(f);
	return k < sb ? ROLE_SIGN : k < sb + f->exp_bits ? ROLE_EXPONENT : ROLE_FRACTION;
}

/* Column (from the bits' start) of bit k: a blank between the fields. */
static int bit_column(const fmt_info *f, int k)
{
	int sb = sign_bits(f);
	return k + (k >= sb && sb ? 1 : 0) + (k >= sb + f->exp_bits ? 1 : 0);
}

/* The name in the 8-column format column: the short alias of a longer name
 * (fp8-e4m3fnuz shows as e4m3fnuz). */
static const char *short_name(const fmt_info *f, char *buf, size_t n)
{
	if (strlen(f->name) <= 8)
		return f->name;
	size_t len = strcspn(f->aliases, ",");
	snprintf(buf, n, "%.*s", (int)len, f->aliases);
	return buf;
}

static void reround(bitex *b)
{
	if (!b->valid)
		return;
	for (int i = 0; i < NROWS; i++) {
		const fmt_info *f = fmt_get((fmt_id)i);
		/* stochastic rounding draws fresh bits each time the value is rounded */
		fmt_round_ctl ctl = { .mode = b->mode, .rbits = (uint32_t)rng_mix64(++b->sr_count) };
		b->bits[i] = fmt_round_num(f, &ctl, &b->x, &b->flags[i]);
		b->edited[i] = false;
	}
}

static bool set_value(tui_screen *s, const char *typed)
{
	bitex *b = s->priv;
	char text[sizeof b->input.text];   /* typed may be the field itself */
	snprintf(text, sizeof text, "%s", typed);
	char err[256];
	fmt_num v;
	fmt_num_init(&v);
	if (fmt_parse_number(&v, text, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s", err);
		fmt_num_clear(&v);
		return false;
	}
	if (b->x_init)
		fmt_num_clear(&b->x);
	b->x = v;
	b->x_init = true;
	b->valid = true;
	field_set(&b->input, text);
	reround(b);
	return true;
}

/* What a `bits` or `round` command line shows here: its first VALUE, the
 * first format it names (the cursor's row), its mode, and the first option
 * the lab has no field for. */
typedef struct {
	const char *value;
	int row;   /* -1: no format named */
	fmt_mode mode;
	const char *skipped;
	size_t nvalues;
} lab_command;

/* argv (`bits ...`, `round ...` or `formats ...`) read by the CLI's parser
 * into *l: false with the message in err. */
static bool read_command(int argc, char **argv, lab_command *l, char *err, size_t errlen)
{
	*l = (lab_command){ .row = -1, .mode = FMT_RNE };
	if (!strcmp(argv[0], "bits")) {
		bits_opts o;
		if (bits_opts_parse(argc, argv, &o, err, errlen) != MP_OK)
			return false;
		*l = (lab_command){ .value = o.interval ? o.interval : o.nvalues ? o.values[0] : NULL,
			            .row = o.have_formats ? (int)o.fmts[0] : -1,
			            .mode = o.mode, .nvalues = o.nvalues,
			            .skipped = o.help ? "--help" : o.nraw ? "--raw" : o.interval ? "--interval"
			                       : o.csv ? "--csv" : o.saturate ? "--saturate" : NULL };
		return true;
	}
	if (!strcmp(argv[0], "formats")) {   /* the table, every format shown */
		formats_opts o;
		if (formats_opts_parse(argc, argv, &o, err, errlen) != MP_OK)
			return false;
		*l = (lab_command){ .row = o.values ? (int)o.values->id : -1, .mode = o.have_mode ? o.mode : FMT_RNE,
			            .skipped = o.values ? "--values" : NULL };
		return true;
	}
	if (!strcmp(argv[0], "round")) {
		round_opts o;
		mp_status st = round_opts_parse(argc, argv, &o, err, errlen);
		if (st == MP_OK)
			*l = (lab_command){ .value = o.nvalues ? o.values[0] : NULL, .row = o.nfmts ? (int)o.fmts[0] : -1,
				            .mode = o.mode, .nvalues = o.nvalues,
			            .skipped = o.help ? "--help" : o.csv ? "--csv" : o.via ? "--via" : o.saturate ? "--saturate"
			                       : o.flip ? "--flip-prob"
				                       : o.cuda ? "--device" : o.seed ? "--seed" : NULL };
		round_opts_free(&o);
		return st == MP_OK;
	}
	return true;
}

/* A command line (from a lesson's block) into the value, the row and the
 * mode; a bad one leaves the lab's defaults, with the reason on the status
 * line. */
static void fill_from_command(tui_screen *s, int argc, char **argv)
{
	bitex *b = s->priv;
	lab_command l;
	char err[512];
	if (!read_command(argc, argv, &l, err, sizeof err)) {
		tui_message(s->app, true, "%s; the lab's defaults instead", err);
		set_value(s, "0.1");
		return;
	}
	b->mode = l.mode;
	if (l.row >= 0)
		b->row = l.row;
	if (l.skipped)
		tui_message(s->app, false, "%s: the lab does not run it; the rest as given", l.skipped);
	else if (l.nvalues > 1)
		tui_message(s->app, false, "%zu values: the lab shows the first, %s", l.nvalues, l.value);
	if (!set_value(s, l.value ? l.value : "0.1"))
		set_value(s, "0.1");
}

static mp_status bits_init(tui_screen *s, int argc, char **argv)
{
	bitex *b = s->priv;
	b->mode = FMT_RNE;
	if (argc > 1)
		fill_from_command(s, argc, argv);
	else
		set_value(s, "0.1");
	return MP_OK;
}

static void bits_done(tui_screen *s)
{
	bitex *b = s->priv;
	if (b->x_init)
		fmt_num_clear(&b->x);
}

/* The exact decimal of v, shortened to fit n columns when it has too many digits. */
static void value_text(char *buf, size_t n, double v, int maxw)
{
	char exact[1200];
	numtext_exact(exact, sizeof exact, v);
	if ((int)strlen(exact) <= maxw) {
		snprintf(buf, n, "%s", exact);
		return;
	}
	/* as many digits as fit, marked as cut short */
	for (int prec = 17; prec > 1; prec--) {
		snprintf(buf, n, "%.*g...", prec, v);
		if ((int)strlen(buf) <= maxw)
			return;
	}
}

static void bits_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	bitex *b = s->priv;
	tui_put(w, 0, 1, 7, ROLE_STRONG, "Value");
	field_draw(w, 0, 8, 36, &b->input, b->editing);
	tui_putf(w, 0, 46, cols - 47, ROLE_NORMAL, "rounding %-4s  (m switches)", fmt_mode_name(b->mode));
	if (!b->valid)
		return;
	tui_put(w, 1, 1, 8, ROLE_DIM, "format");
	int x = 10;
	x += tui_put(w, 1, x, 5, ROLE_SIGN, "sign ");
	x += tui_put(w, 1, x, 9, ROLE_EXPONENT, "exponent");
	x += tui_put(w, 1, x, 2, ROLE_NORMAL, " ");
	tui_put(w, 1, x, 10, ROLE_FRACTION, "fraction");
	tui_put(w, 1, 47, cols - 47, ROLE_DIM, "hex         class");
	/* as many formats as fit, three rows each, scrolled to the cursor */
	b->nvis = (rows - 3) / 3;
	if (b->nvis < 1)
		b->nvis = 1;
	if (b->nvis > NROWS)
		b->nvis = NROWS;
	if (b->row < b->top)
		b->top = b->row;
	if (b->row >= b->top + b->nvis)
		b->top = b->row - b->nvis + 1;
	if (b->top > NROWS - b->nvis)
		b->top = NROWS - b->nvis;
	if (b->nvis < NROWS)
		tui_putf(w, 1, 66, cols - 66, ROLE_DIM, "%d-%d of %d", b->top + 1, b->top + b->nvis, NROWS);
	for (int i = b->top; i < b->top + b->nvis; i++) {
		const fmt_info *f = fmt_get((fmt_id)i);
		int y = 2 + 3 * (i - b->top);
		bool cur = i == b->row;
		char nbuf[16];
		tui_put(w, y, 0, 1, ROLE_SELECT, cur ? theme_glyph(GLYPH_ARROW) : " ");
		if (!cur)
			tui_put(w, y, 0, 1, ROLE_NORMAL, " ");
		tui_put(w, y, 1, 9, cur ? ROLE_STRONG : ROLE_NORMAL, short_name(f, nbuf, sizeof nbuf));
		/* the bits: sign | exponent | fraction, a blank between the fields */
		for (int k = 0; k < f->width; k++) {
			int pos = f->width - 1 - k;
			char c[2] = { (b->bits[i] >> pos) & 1 ? '1' : '0', 0 };
			tui_role role = bit_role(f, k);
			if (cur && k == b->bit)
				role = ROLE_SELECT;
			tui_put(w, y, 10 + bit_column(f, k), 1, role, c);
		}
		fmt_decoded d;
		fmt_decode(f, b->bits[i], &d);
		tui_putf(w, y, 47, 11, ROLE_NORMAL, "0x%0*x", fmt_hex_digits(f), b->bits[i]);
		if ((b->flags[i] & FMT_FLAG_INVALID) && !b->edited[i])   /* nan in fp4, 0 or -1 in e8m0 */
			tui_put(w, y, 59, cols - 59, ROLE_BAD, "no encoding");
		else
			tui_putf(w, y, 59, cols - 59, b->edited[i] ? ROLE_EMPH : ROLE_DIM, "%s%s", fmt_class_name(d.cls),
			         b->edited[i] ? "*" : "");
		/* value, error against the typed value, spacing */
		char val[1300], rel[64] = "", ulp[64] = "-";
		value_text(val, sizeof val, d.value, 30);
		double abs_err, rel_err;
		fmt_error_of(&b->x, d.value, &abs_err, &rel_err);
		if (isnan(rel_err))
			snprintf(rel, sizeof rel, "-");
		else if (rel_err == 0)
			snprintf(rel, sizeof rel, "0 (exact)");
		else
			snprintf(rel, sizeof rel, "%.3g", rel_err);
		if (!isnan(d.ulp))
			snprintf(ulp, sizeof ulp, "%.3g", d.ulp);
		tui_put(w, y + 1, 10, 2, ROLE_DIM, "= ");
		tui_put(w, y + 1, 12, 30, ROLE_STRONG, val);
		tui_putf(w, y + 1, 43, cols - 43, ROLE_NORMAL, "rel.err %-9s  ulp %s", rel, ulp);
	}
	int y = 2 + 3 * b->nvis;
	const fmt_info *f = fmt_get((fmt_id)b->row);
	tui_role r = bit_role(f, b->bit);
	const char *field = r == ROLE_SIGN ? "sign" : r == ROLE_EXPONENT ? "exponent" : "fraction";
	tui_putf(w, y, 1, cols - 2, ROLE_DIM, "%s bit %d (%s); * = changed by hand; errors against %s", f->name,
	         f->width - 1 - b->bit, field, b->input.text);
}

static void clamp_bit(bitex *b)
{
	int width = fmt_get((fmt_id)b->row)->width;
	if (b->bit >= width)
		b->bit = width - 1;
	if (b->bit < 0)
		b->bit = 0;
}

static int bits_handle(tui_screen *s, int action, int key)
{
	bitex *b = s->priv;
	if (b->editing) {
		int r = field_key(&b->input, key);
		if (r == FIELD_ENTER) {
			if (set_value(s, b->input.text))
				b->editing = false;
		} else if (r == FIELD_CANCEL) {
			b->editing = false;
		}
		return TUI_HANDLED;
	}
	const fmt_info *f = fmt_get((fmt_id)b->row);
	if (key == FK(KEY_MOUSE)) {
		const tui_mouse *m = tui_last_mouse(s->app);
		int row = b->top + (m->y - 2) / 3;
		if (m->click && m->y >= 2 && (m->y - 2) % 3 == 0 && row < b->top + b->nvis && row < NROWS) {
			const fmt_info *g = fmt_get((fmt_id)row);
			/* columns as drawn (bit_column): the bit whose column was clicked */
			int c = m->x - 10, k = -1;
			for (int j = 0; j < g->width; j++)
				if (bit_column(g, j) == c)
					k = j;
			b->row = row;
			if (k >= 0)
				b->bit = k;
			clamp_bit(b);
		}
		return TUI_HANDLED;
	}
	switch (action) {
	case BITS_EDIT:
		b->editing = true;
		field_begin(&b->input);
		return TUI_HANDLED;
	case BITS_UP:
		b->row = (b->row + NROWS - 1) % NROWS;
		clamp_bit(b);
		return TUI_HANDLED;
	case BITS_DOWN:
		b->row = (b->row + 1) % NROWS;
		clamp_bit(b);
		return TUI_HANDLED;
	case BITS_LEFT:
		b->bit = b->bit > 0 ? b->bit - 1 : f->width - 1;
		return TUI_HANDLED;
	case BITS_RIGHT:
		b->bit = b->bit + 1 < f->width ? b->bit + 1 : 0;
		return TUI_HANDLED;
	case BITS_TAB: {
		/* the first bit of the next field, wrapping to the first */
		int sb = sign_bits(f), next = bit_role(f, b->bit) == ROLE_SIGN ? sb : sb + f->exp_bits;
		b->bit = bit_role(f, b->bit) != ROLE_FRACTION && next < f->width ? next : 0;
		return TUI_HANDLED;
	}
	case BITS_TOGGLE:
		b->bits[b->row] ^= 1u << (f->width - 1 - b->bit);
		b->edited[b->row] = true;
		return TUI_HANDLED;
	case BITS_PREV:
	case BITS_NEXT: {
		uint32_t out;
		bool ok = action == BITS_NEXT ? fmt_next_up(f, b->bits[b->row], &out)
		                              : fmt_next_down(f, b->bits[b->row], &out);
		if (!ok) {
			tui_message(s->app, false, "%s has no %s value from here", f->name,
			            action == BITS_NEXT ? "larger" : "smaller");
		} else {
			b->bits[b->row] = out;
			b->edited[b->row] = true;
		}
		return TUI_HANDLED;
	}
	case BITS_MODE:
	case BITS_MODE_BACK:
		b->mode = (fmt_mode)((b->mode + (action == BITS_MODE ? 1 : FMT_MODE_COUNT - 1)) % FMT_MODE_COUNT);
		reround(b);
		return TUI_HANDLED;
	case BITS_RESET: {
		fmt_round_ctl ctl = { .mode = b->mode, .rbits = (uint32_t)rng_mix64(++b->sr_count) };
		b->bits[b->row] = fmt_round_num(f, &ctl, &b->x, &b->flags[b->row]);
		b->edited[b->row] = false;
		return TUI_HANDLED;
	}
	}
	/* typing a number starts editing with it */
	if (action < 0 && ((key >= '0' && key <= '9') || key == '.')) {
		b->editing = true;
		field_begin(&b->input);
		field_set(&b->input, "");
		field_key(&b->input, key);
		return TUI_HANDLED;
	}
	return TUI_PASS;
}

static bool bits_editing(tui_screen *s)
{
	return ((bitex *)s->priv)->editing;
}

const tui_screen_ops screen_bits_ops = {
	.name = "bits",
	.lab_of = "bits round formats",
	.title = "Bit explorer",
	.private_size = sizeof(bitex),
	.keys = bits_keys,
	.nkeys = bits_ACTION_COUNT,
	.init = bits_init,
	.draw = bits_draw,
	.handle = bits_handle,
	.editing = bits_editing,
	.done = bits_done,
};
