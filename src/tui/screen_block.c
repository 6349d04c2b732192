/* Block explorer: a block of values (typed, a row of a weight of a model
 * train --save wrote, or of the tiny GPT's initial weights) quantized to an
 * MX format or NVFP4 through quant/, as `mixprec quantize` does: the amax,
 * the shared scale under each rule, and each element's bits, value and
 * error. One key switches the element format, one the rule. A model's row
 * is read by ckpt/ckpt_row.h, as `quantize --from-model` reads it, from a
 * lesson's command line or from options typed in the Values field. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/format.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "quant/quant.h"
#include "quant/quant_opts.h"
#include "ckpt/ckpt_row.h"
#include "train/model.h"
#include "tui/screens.h"

#define BLOCK_KEYS(X)                                                                                 \
	X(BLOCK_EDIT, "e Enter", "type values, or --from-model FILE --tensor NAME --row I", 'e', TUI_ENTER_KEYS) \
	X(BLOCK_FORMAT, "f", "next block format (mxfp8, mxfp6, mxfp4, nvfp4, mxint8)", 'f') \
	X(BLOCK_FORMAT_BACK, "F", "previous block format", 'F')                                            \
	X(BLOCK_RULE, "r", "next scale rule (ocp, ceil, even, rceil, torchao-ceil)", 'r')                 \
	X(BLOCK_GPT, "g", "next row (of the model's tensor, else the initial wte)", 'g') \
	X(BLOCK_DOWN, "j Down", "next element", 'j', FK(KEY_DOWN))                                         \
	X(BLOCK_UP, "k Up", "previous element", 'k', FK(KEY_UP))
TUI_KEYMAP(block, BLOCK_KEYS);

enum { BLOCK_MAXV = 64, BLOCK_GPT_VALUES = 32 };

typedef struct {
	tui_field input;
	bool editing;
	fmt_num *xs;                 /* the values, n of them (cap allocated) */
	size_t n, cap;
	char source[96];             /* what the values are, one line */
	quant_id fmt;
	quant_rule rule;
	size_t block;                /* 0: the format's own */
	quant_result res[QUANT_RULE_COUNT];   /* MX: every rule; nvfp4: res[0] */
	bool have;
	int cur, top;
	int gpt_row;                 /* the next row of the initial weights g loads */
	char model[256];             /* the checkpoint the values are a row of ("": none) */
	char tensor[64];             /* ... its weight, */
	uint64_t row, nrows;         /* ... the row shown, of how many */
} blockex;

static void results_free(blockex *b)
{
	for (int r = 0; r < QUANT_RULE_COUNT; r++)
		quant_result_free(&b->res[r]);
	memset(b->res, 0, sizeof b->res);
	b->have = false;
}

/* Quantizes the values under every rule (nvfp4: once); false with a message. */
static bool requantize(tui_screen *s)
{
	blockex *b = s->priv;
	results_free(b);
	if (b->n == 0)
		return false;
	const quant_info *q = quant_get(b->fmt);
	for (int r = 0; r < (q->nvfp4 ? 1 : QUANT_RULE_COUNT); r++) {
		quant_opts o = { .fmt = b->fmt, .rule = (quant_rule)r, .mode = FMT_RNE, .block = b->block };
		char err[256];
		mp_status st = quant_run(&o, b->xs, b->n, &b->res[r], err, sizeof err);
		if (st != MP_OK) {
			tui_message(s->app, true, "%s: %s", q->name, err);
			results_free(b);
			return false;
		}
	}
	b->have = true;
	if (b->cur >= (int)b->n)
		b->cur = (int)b->n - 1;
	return true;
}

static void values_clear(blockex *b)
{
	for (size_t i = 0; i < b->n; i++)
		fmt_num_clear(&b->xs[i]);
	b->n = 0;
}

/* Room for n values (the n held are kept); false out of memory. */
static bool values_reserve(blockex *b, size_t n)
{
	if (n <= b->cap)
		return true;
	fmt_num *x = realloc(b->xs, n * sizeof *x);
	if (!x)
		return false;
	b->xs = x;
	b->cap = n;
	return true;
}

static bool apply_options(tui_screen *s, const char *typed);

/* Parses the typed values (every number syntax of round); false with a message. */
static bool set_values(tui_screen *s, const char *typed)
{
	blockex *b = s->priv;
	if (!strncmp(typed + strspn(typed, " \t"), "--", 2))
		return apply_options(s, typed);
	char text[sizeof b->input.text], keep[sizeof b->input.text];   /* typed may be the field itself */
	snprintf(text, sizeof text, "%s", typed);
	snprintf(keep, sizeof keep, "%s", typed);
	fmt_num v[BLOCK_MAXV];
	size_t n = 0;
	char *save = NULL, err[256];
	for (char *w = strtok_r(text, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save)) {
		if (n == BLOCK_MAXV) {
			tui_message(s->app, true, "at most %d values", BLOCK_MAXV);
			goto fail;
		}
		fmt_num_init(&v[n]);
		n++;
		if (fmt_parse_number(&v[n - 1], w, err, sizeof err) != MP_OK) {
			tui_message(s->app, true, "value %zu: %s", n, err);
			goto fail;
		}
		if (v[n - 1].kind != NUM_FINITE) {
			tui_message(s->app, true, "value %zu: '%s' has no place in a block (inf and NaN are refused)", n, w);
			goto fail;
		}
	}
	if (n == 0) {
		tui_message(s->app, true, "no values: type numbers separated by commas or blanks");
		return false;
	}
	if (!values_reserve(b, n)) {
		tui_message(s->app, true, "out of memory");
		goto fail;
	}
	values_clear(b);
	memcpy(b->xs, v, n * sizeof v[0]);
	b->n = n;
	field_set(&b->input, keep);
	snprintf(b->source, sizeof b->source, "%zu typed value%s", n, n == 1 ? "" : "s");
	b->model[0] = '\0';
	b->cur = b->top = 0;
	requantize(s);
	return true;
fail:
	for (size_t i = 0; i < n; i++)
		fmt_num_clear(&v[i]);
	return false;
}

/* Row b->gpt_row of the tiny GPT's wte (default shape, seed 1), its first 32 values. */
static void load_gpt_row(tui_screen *s)
{
	blockex *b = s->priv;
	gpt_model m = { 0 };
	gpt_config cfg = gpt_config_default();
	if (gpt_init(&m, cfg, 1, 1, 1) != MP_OK) {
		tui_message(s->app, true, "the tiny GPT could not be allocated");
		return;
	}
	int row = b->gpt_row % (int)cfg.V;
	if (!values_reserve(b, BLOCK_GPT_VALUES)) {
		gpt_free(&m);
		tui_message(s->app, true, "out of memory");
		return;
	}
	values_clear(b);
	for (size_t i = 0; i < BLOCK_GPT_VALUES && i < cfg.C; i++) {
		fmt_num_init(&b->xs[i]);
		fmt_num_set_double(&b->xs[i], (double)m.params.wte[(size_t)row * cfg.C + i]);
		b->n++;
	}
	gpt_free(&m);
	snprintf(b->source, sizeof b->source, "tiny GPT (seed 1): wte row %d, values 0..%zu", row, b->n - 1);
	b->model[0] = '\0';
	field_set(&b->input, "");
	b->gpt_row = row + 1;
	b->cur = b->top = 0;
	requantize(s);
}

/* The option of o the lab has no field for, the first of them; NULL when
 * every one given is shown. */
static const char *skipped_option(const quantize_opts *o)
{
	const quant_opts *q = &o->q;
	return o->help ? "--help" : o->csv ? "--csv" : o->rht ? "--rht" : q->mode != FMT_RNE ? "--mode"
	       : q->seed != QUANT_SEED_DEFAULT ? "--seed" : NULL;
}

/* The first format of --to (a list with --random): the one the lab shows. */
static const quant_info *first_format(const char *to)
{
	char first[64];
	snprintf(first, sizeof first, "%.*s", (int)strcspn(to, ","), to);
	return quant_find(first);
}

/* Row `row` of weight `tensor` of the checkpoint at path, through
 * ckpt_row_load as `quantize --from-model` reads it; false with the reason
 * on the status line (the values shown stay). */
static bool load_model_row(tui_screen *s, const char *path, const char *tensor, uint64_t row)
{
	blockex *b = s->priv;
	ckpt_row r;
	char err[1536];
	if (ckpt_row_load(path, tensor, row, &r, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s", err);
		return false;
	}
	for (size_t i = 0; i < r.n; i++)
		if (!isfinite(r.values[i])) {
			tui_message(s->app, true, "%s row %llu, element %zu is not finite: no block-scaled format encodes it",
			            r.tensor, (unsigned long long)row, i);
			ckpt_row_free(&r);
			return false;
		}
	if (!values_reserve(b, r.n)) {
		tui_message(s->app, true, "out of memory");
		ckpt_row_free(&r);
		return false;
	}
	values_clear(b);
	for (size_t i = 0; i < r.n; i++) {
		fmt_num_init(&b->xs[i]);
		fmt_num_set_double(&b->xs[i], (double)r.values[i]);
	}
	b->n = r.n;
	snprintf(b->model, sizeof b->model, "%s", path);
	snprintf(b->tensor, sizeof b->tensor, "%s", r.tensor);
	b->row = row;
	b->nrows = r.nrows;
	const char *base = strrchr(path, '/');   /* the folder is the user's own: the name fits the line */
	snprintf(b->source, sizeof b->source, "%s %s row %llu of %llu, %zu values", base ? base + 1 : path, r.tensor,
	         (unsigned long long)row, (unsigned long long)r.nrows, r.n);
	ckpt_row_free(&r);
	field_set(&b->input, "");
	b->cur = b->top = 0;
	requantize(s);
	return true;
}

/* A command line (`quantize ...`, from a lesson's block, or options typed
 * in the Values field) read by the CLI's parser into the format, the rule,
 * the block size and the values: typed or a model's row (--from-model); true
 * when it gave values. A typed one keeps the lab's format, rule and block
 * size where it names none. A bad one changes nothing, with the reason on
 * the status line. A generated tensor (--random) is the command line's: the
 * lab shows its first format, on a row of the tiny GPT. */
static bool fill_from_command(tui_screen *s, int argc, char **argv, bool typed)
{
	blockex *b = s->priv;
	quantize_opts o;
	char err[512], values[sizeof b->input.text] = "";
	if (quantize_opts_parse(argc, argv, &o, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s%s", err, typed ? "" : "; the lab's defaults instead");
		quantize_opts_free(&o);
		return false;
	}
	const quant_info *q = o.ra.to ? first_format(o.ra.to) : NULL;   /* also after --help, which stops the parse */
	if (q)
		b->fmt = q->id;
	if (!typed || o.ra.rule)
		b->rule = o.q.rule;
	if (o.q.block > BLOCK_MAXV)
		tui_message(s->app, true, "--block: %s is out of range (1..%d here)", o.ra.block, BLOCK_MAXV);
	else if (!typed || o.ra.block)
		b->block = o.q.block;
	const char *skipped = o.ra.random ? "--random" : skipped_option(&o);
	if (skipped)
		tui_message(s->app, false, "%s: the lab does not run it; the rest as given", skipped);
	for (size_t i = 0; i < o.nvalues; i++) {
		size_t l = strlen(values);
		snprintf(values + l, sizeof values - l, "%s%s", l ? " " : "", o.values[i]);
	}
	bool got = false;
	if (o.model.path && !o.help)
		got = load_model_row(s, o.model.path, o.model.tensor, o.model.row);
	else if (values[0])
		got = set_values(s, values);
	else if (typed)
		requantize(s);   /* only the format, rule or block changed */
	quantize_opts_free(&o);
	return got || (typed && !o.model.path && !values[0]);
}

/* Options typed in the Values field ("--from-model a.safetensors --tensor
 * wte.weight --row 3"), read as quantize's command line after --to of the
 * format shown; false with the reason on the status line. */
static bool apply_options(tui_screen *s, const char *typed)
{
	blockex *b = s->priv;
	char text[sizeof b->input.text], to[] = "--to", cmd[] = "quantize";
	snprintf(text, sizeof text, "%s", typed);
	char *argv[sizeof text / 2 + 4], *save = NULL;
	int argc = 0;
	argv[argc++] = cmd;
	argv[argc++] = to;
	argv[argc++] = (char *)quant_get(b->fmt)->name;
	for (char *w = strtok_r(text, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return fill_from_command(s, argc, argv, true);
}

static mp_status block_init(tui_screen *s, int argc, char **argv)
{
	blockex *b = s->priv;
	b->fmt = QUANT_MXFP4;
	b->rule = QUANT_RULE_OCP;
	if (argc <= 1 || !fill_from_command(s, argc, argv, false))
		load_gpt_row(s);
	return MP_OK;
}

static void block_done(tui_screen *s)
{
	blockex *b = s->priv;
	results_free(b);
	values_clear(b);
	free(b->xs);
}

/* --- drawing --- */

static tui_role bit_role(const fmt_info *f, int k)
{
	return k < 1 ? ROLE_SIGN : k < 1 + f->exp_bits ? ROLE_EXPONENT : ROLE_FRACTION;
}

/* Element bits as sign, exponent and fraction fields with a blank between. */
static void draw_bits(WINDOW *w, int y, int x, const fmt_info *f, uint32_t bits, bool cur)
{
	int col = x;
	for (int k = 0; k < f->width; k++) {
		if (k == 1 || k == 1 + f->exp_bits)
			col++;
		char c[2] = { (bits >> (f->width - 1 - k)) & 1 ? '1' : '0', 0 };
		tui_put(w, y, col++, 1, cur ? ROLE_SELECT : bit_role(f, k), c);
	}
}

static const char *g6(char *buf, size_t n, double v)
{
	snprintf(buf, n, "%.6g", v);
	return buf;
}

/* The lines above the table: the format, the block of the cursor, its scales. */
static void draw_head(blockex *b, WINDOW *w, int cols, const quant_info *q, const quant_result *r)
{
	const fmt_info *ef = fmt_get(q->elem);
	char rule[32];
	snprintf(rule, sizeof rule, q->nvfp4 ? "(one rule)" : "< %s >  r", quant_rule_name(b->rule));
	tui_putf(w, 1, 1, cols - 2, ROLE_NORMAL, "format < %s >  f   rule %-10s  %s, %s scale per %zu", q->name, rule,
	         ef->name, q->nvfp4 ? "e4m3" : "e8m0", r->opts.block);
	size_t k = (size_t)b->cur / r->opts.block;
	const quant_block *bl = &r->blocks[k];
	char a[32], t[32], sb[32];
	tui_putf(w, 2, 1, cols - 2, ROLE_STRONG, "block %zu of %zu (elements %zu..%zu): amax %s", k, r->nblocks, bl->begin,
	         bl->begin + bl->count - 1, g6(a, sizeof a, bl->amax));
	if (q->nvfp4) {
		tui_putf(w, 3, 1, cols - 2, ROLE_NORMAL, "tensor scale s_t %s; block scale s_b %s (e4m3 0x%02x)",
		         g6(t, sizeof t, r->tensor_scale), g6(sb, sizeof sb, bl->scale), (unsigned)bl->scale_bits);
	} else {
		int e[QUANT_RULE_COUNT];
		for (int i = 0; i < QUANT_RULE_COUNT; i++)
			e[i] = b->res[i].blocks[k].scale_exp;
		tui_putf(w, 3, 1, cols - 2, ROLE_NORMAL, "scale 2^%d = 0x%02x   by rule: ocp %d  ceil %d  even %d  rceil %d  "
		         "torchao-ceil %d", bl->scale_exp, (unsigned)bl->scale_bits, e[QUANT_RULE_OCP], e[QUANT_RULE_CEIL],
		         e[QUANT_RULE_EVEN], e[QUANT_RULE_RCEIL], e[QUANT_RULE_TCEIL]);
	}
	tui_putf(w, 4, 1, cols - 2, ROLE_NORMAL, "this block: saturated %zu, flushed to zero %zu of %zu, relative error %.4g",
	         bl->nsaturated, bl->nflushed, bl->count, bl->rel_error);
}

static void block_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	blockex *b = s->priv;
	tui_put(w, 0, 1, 7, ROLE_STRONG, "Values");
	if (b->editing || b->input.text[0])
		field_draw(w, 0, 8, cols - 9, &b->input, b->editing);
	else
		tui_put_fit(w, 0, 8, cols - 9, ROLE_DIM, b->source);
	if (!b->have)
		return;
	const quant_info *q = quant_get(b->fmt);
	const quant_result *r = &b->res[q->nvfp4 ? 0 : b->rule];
	const fmt_info *ef = fmt_get(q->elem);
	draw_head(b, w, cols, q, r);
	tui_putf(w, 5, 1, cols - 2, ROLE_DIM, "%4s %-15s %-11s %-5s %-15s %-10s", "i", "input", "bits", "hex", "value",
	         "abs error");
	int nvis = rows - 7;
	if (nvis < 1)
		nvis = 1;
	if (b->cur < b->top)
		b->top = b->cur;
	if (b->cur >= b->top + nvis)
		b->top = b->cur - nvis + 1;
	for (int i = b->top; i < (int)b->n && i < b->top + nvis; i++) {
		int y = 6 + i - b->top;
		bool cur = i == b->cur;
		const quant_elem *e = &r->elems[i];
		char in[32], val[32], err[32];
		double x = fmt_num_to_double(&b->xs[i]);
		tui_put(w, y, 0, 1, ROLE_SELECT, cur ? theme_glyph(GLYPH_ARROW) : " ");
		if (!cur)
			tui_put(w, y, 0, 1, ROLE_NORMAL, " ");
		tui_putf(w, y, 1, 20, cur ? ROLE_STRONG : ROLE_NORMAL, "%4d %-15s", i, g6(in, sizeof in, x));
		draw_bits(w, y, 22, ef, e->bits, false);
		tui_putf(w, y, 34, cols - 34, ROLE_NORMAL, "0x%0*x%*s %-15s %-10s", fmt_hex_digits(ef), (unsigned)e->bits,
		         5 - 2 - fmt_hex_digits(ef), "", g6(val, sizeof val, e->value), g6(err, sizeof err, fabs(e->value - x)));
		if (e->flags & QUANT_SATURATED)
			tui_put(w, y, 70, cols - 70, ROLE_BAD, "saturated");
		else if (e->flags & QUANT_FLUSHED)
			tui_put(w, y, 70, cols - 70, ROLE_EMPH, "flushed");
	}
	char where[256];
	if (b->n > (size_t)nvis)
		snprintf(where, sizeof where, "elements %d-%d of %zu (j/k scroll); %s", b->top,
		         (int)(b->top + nvis < (int)b->n ? b->top + nvis : (int)b->n) - 1, b->n, b->source);
	else
		snprintf(where, sizeof where, "%s", b->source);
	tui_put_fit(w, rows - 1, 1, cols - 2, ROLE_DIM, where);
}

/* --- keys --- */

static int block_handle(tui_screen *s, int action, int key)
{
	blockex *b = s->priv;
	if (b->editing) {
		int r = field_key(&b->input, key);
		if (r == FIELD_ENTER) {
			if (set_values(s, b->input.text))
				b->editing = false;
		} else if (r == FIELD_CANCEL) {
			b->editing = false;
		}
		return TUI_HANDLED;
	}
	switch (action) {
	case BLOCK_EDIT:
		b->editing = true;
		field_begin(&b->input);
		return TUI_HANDLED;
	case BLOCK_FORMAT:
	case BLOCK_FORMAT_BACK:
		b->fmt = (quant_id)((b->fmt + (action == BLOCK_FORMAT ? 1 : QUANT_COUNT - 1)) % QUANT_COUNT);
		requantize(s);
		return TUI_HANDLED;
	case BLOCK_RULE:
		if (quant_get(b->fmt)->nvfp4)
			tui_message(s->app, false, "nvfp4 has one rule: s_b = e4m3(amax / (6 x s_t))");
		else
			b->rule = (quant_rule)((b->rule + 1) % QUANT_RULE_COUNT);
		return TUI_HANDLED;
	case BLOCK_GPT:
		if (b->model[0]) {
			char path[sizeof b->model], tensor[sizeof b->tensor];   /* the load rewrites both */
			snprintf(path, sizeof path, "%s", b->model);
			snprintf(tensor, sizeof tensor, "%s", b->tensor);
			load_model_row(s, path, tensor, (b->row + 1) % b->nrows);
		} else {
			load_gpt_row(s);
		}
		return TUI_HANDLED;
	case BLOCK_DOWN:
		if (b->cur + 1 < (int)b->n)
			b->cur++;
		return TUI_HANDLED;
	case BLOCK_UP:
		if (b->cur > 0)
			b->cur--;
		return TUI_HANDLED;
	}
	/* typing a number starts editing with it */
	if (action < 0 && ((key >= '0' && key <= '9') || key == '.' || key == '-')) {
		b->editing = true;
		field_begin(&b->input);
		field_set(&b->input, "");
		field_key(&b->input, key);
		return TUI_HANDLED;
	}
	return TUI_PASS;
}

static bool block_editing(tui_screen *s)
{
	return ((blockex *)s->priv)->editing;
}

const tui_screen_ops screen_block_ops = {
	.name = "block",
	.lab_of = "quantize",
	.title = "Block explorer",
	.private_size = sizeof(blockex),
	.keys = block_keys,
	.nkeys = block_ACTION_COUNT,
	.init = block_init,
	.draw = block_draw,
	.handle = block_handle,
	.editing = block_editing,
	.done = block_done,
};
