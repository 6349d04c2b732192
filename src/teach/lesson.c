#include <md4c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "teach/lesson.h"
#include "util/file.h"

/* --- a growing string --- */

typedef struct {
	char *s;
	size_t len, cap;
	bool oom;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static char *sb_take(strbuf *b)
{
	char *s = b->s ? b->s : strdup("");
	*b = (strbuf){ 0 };
	return s;
}

/* --- md4c callbacks build the model --- */

typedef struct {
	lesson_doc *doc;
	size_t cap;
	bool oom;
	lesson_block *cur;      /* the block text goes to, or NULL */
	strbuf text, cell;      /* cur's text; the current table cell */
	strbuf run;             /* the styled run being collected */
	unsigned run_style;
	bool run_open;
	lesson_span *spans;
	size_t nspans, span_cap;
	unsigned style;
	int list_depth;
	unsigned ol_next[16];   /* per depth: next ordered number, 0 for bullets */
	bool in_cell, in_table_head;
	int tables;
	lesson_block *row;
	char **cells;
	size_t ncells, cell_cap;
	const char *src;        /* the text being parsed, for line numbers */
	size_t src_len, line_off;
	unsigned line_at;       /* line number (from 1) of src[line_off] */
} builder;

/* The source line of text at p, when p points into the parsed text
 * (callbacks arrive in order, so counting on from the last one is linear). */
static unsigned src_line(builder *b, const char *p)
{
	if (!b->src || p < b->src || p >= b->src + b->src_len)
		return 0;
	size_t off = (size_t)(p - b->src);
	if (off < b->line_off) {
		b->line_off = 0;
		b->line_at = 1;
	}
	for (size_t i = b->line_off; i < off; i++)
		b->line_at += b->src[i] == '\n';
	b->line_off = off;
	return b->line_at;
}

static lesson_block *new_block(builder *b, lesson_block_kind kind)
{
	if (b->doc->nblocks == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 32;
		lesson_block *p = realloc(b->doc->blocks, cap * sizeof *p);
		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->doc->blocks = p;
		b->cap = cap;
	}
	lesson_block *blk = &b->doc->blocks[b->doc->nblocks++];
	memset(blk, 0, sizeof *blk);
	blk->kind = kind;
	return blk;
}

static void close_block(builder *b);

/* Starts collecting text into a new block (closing any open one first: a
 * heading inside a list item, say, must not leave the item unfinished). */
static void open_block(builder *b, lesson_block_kind kind, int level)
{
	close_block(b);
	lesson_block *blk = new_block(b, kind);
	if (!blk)
		return;
	blk->level = level;
	b->cur = blk;
	b->nspans = 0;
	b->spans = NULL;
	b->span_cap = 0;
}

static void flush_run(builder *b);

static void close_block(builder *b)
{
	if (!b->cur)
		return;
	flush_run(b);
	b->oom |= b->text.oom;
	b->cur->text = sb_take(&b->text);
	b->cur->spans = b->spans;
	b->cur->nspans = b->nspans;
	b->spans = NULL;
	b->nspans = b->span_cap = 0;
	if (!b->cur->text)
		b->oom = true;
	b->cur = NULL;
}

/* Ends the styled run being collected: it becomes the block's next span. */
static void flush_run(builder *b)
{
	if (!b->run_open)
		return;
	b->run_open = false;
	b->oom |= b->run.oom;
	char *t = sb_take(&b->run);
	if (!t) {
		b->oom = true;
		return;
	}
	if (b->nspans == b->span_cap) {
		size_t cap = b->span_cap ? 2 * b->span_cap : 8;
		lesson_span *p = realloc(b->spans, cap * sizeof *p);
		if (!p) {
			free(t);
			b->oom = true;
			return;
		}
		b->spans = p;
		b->span_cap = cap;
	}
	b->spans[b->nspans++] = (lesson_span){ .text = t, .style = b->run_style };
}

/* Appends text in the current style: the same style extends the run (in
 * amortised constant time: a long paragraph must not cost its square). */
static void add_span(builder *b, const char *s, size_t n)
{
	if (!b->run_open || b->run_style != b->style) {
		flush_run(b);
		b->run_open = true;
		b->run_style = b->style;
	}
	sb_add(&b->run, s, n);
}

static int on_enter_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
	builder *b = ud;
	switch (type) {
	case MD_BLOCK_H:
		open_block(b, LB_HEADING, (int)((MD_BLOCK_H_DETAIL *)detail)->level);
		break;
	case MD_BLOCK_P:
		/* the first paragraph of a loose list item is the item's text */
		if (b->cur && b->cur->kind == LB_LIST_ITEM && b->text.len == 0)
			break;
		close_block(b);
		open_block(b, b->list_depth ? LB_LIST_ITEM : LB_PARAGRAPH, b->list_depth);
		break;
	case MD_BLOCK_UL:
	case MD_BLOCK_OL:
		close_block(b);
		if (b->list_depth < 15)
			b->list_depth++;
		b->ol_next[b->list_depth] = type == MD_BLOCK_OL ? ((MD_BLOCK_OL_DETAIL *)detail)->start : 0;
		break;
	case MD_BLOCK_LI:
		close_block(b);
		open_block(b, LB_LIST_ITEM, b->list_depth);
		if (b->cur && b->ol_next[b->list_depth])
			b->cur->number = b->ol_next[b->list_depth]++;
		break;
	case MD_BLOCK_CODE: {
		close_block(b);
		open_block(b, LB_CODE, 0);
		MD_BLOCK_CODE_DETAIL *d = detail;
		if (b->cur && d->info.size) {
			b->cur->info = strndup(d->info.text, d->info.size);
			if (!b->cur->info)
				b->oom = true;
		}
		break;
	}
	case MD_BLOCK_QUOTE:
		close_block(b);
		open_block(b, LB_QUOTE, 0);
		break;
	case MD_BLOCK_HR:
		close_block(b);
		new_block(b, LB_RULE);
		if (b->doc->nblocks)
			b->doc->blocks[b->doc->nblocks - 1].text = strdup("");
		break;
	case MD_BLOCK_TABLE:
		close_block(b);
		break;
	case MD_BLOCK_THEAD:
		b->in_table_head = true;
		break;
	case MD_BLOCK_TBODY:
		b->in_table_head = false;
		break;
	case MD_BLOCK_TR:
		b->cells = NULL;
		b->ncells = b->cell_cap = 0;
		break;
	case MD_BLOCK_TH:
	case MD_BLOCK_TD:
		b->in_cell = true;
		break;
	default:
		break;
	}
	return b->oom ? -1 : 0;
}

static int on_leave_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
	builder *b = ud;
	(void)detail;
	switch (type) {
	case MD_BLOCK_H:
	case MD_BLOCK_P:
	case MD_BLOCK_CODE:
		if (!(type == MD_BLOCK_P && b->cur && b->cur->kind == LB_LIST_ITEM && b->list_depth))
			close_block(b);
		break;
	case MD_BLOCK_LI:
	case MD_BLOCK_QUOTE:
		close_block(b);
		break;
	case MD_BLOCK_UL:
	case MD_BLOCK_OL:
		close_block(b);
		if (b->list_depth > 0)
			b->list_depth--;
		break;
	case MD_BLOCK_TH:
	case MD_BLOCK_TD: {
		if (b->ncells == b->cell_cap) {
			size_t cap = b->cell_cap ? 2 * b->cell_cap : 8;
			char **p = realloc(b->cells, cap * sizeof *p);
			if (!p) {
				b->oom = true;
				break;
			}
			b->cells = p;
			b->cell_cap = cap;
		}
		b->oom |= b->cell.oom;
		b->cells[b->ncells++] = sb_take(&b->cell);
		b->in_cell = false;
		break;
	}
	case MD_BLOCK_TR: {
		lesson_block *row = new_block(b, LB_TABLE_ROW);
		if (row) {
			row->cells = b->cells;
			row->ncells = b->ncells;
			row->header = b->in_table_head;
			row->table = b->tables;
			strbuf t = { 0 };
			for (size_t i = 0; i < b->ncells; i++) {
				if (i)
					sb_add(&t, " | ", 3);
				sb_add(&t, b->cells[i], strlen(b->cells[i]));
			}
			b->oom |= t.oom;
			row->text = sb_take(&t);
		} else {
			for (size_t i = 0; i < b->ncells; i++)
				free(b->cells[i]);
			free(b->cells);
		}
		b->cells = NULL;
		b->ncells = b->cell_cap = 0;
		break;
	}
	case MD_BLOCK_TABLE:
		b->tables++;
		break;
	default:
		break;
	}
	return b->oom ? -1 : 0;
}

static unsigned span_bit(MD_SPANTYPE type)
{
	switch (type) {
	case MD_SPAN_EM:     return LS_EMPH;
	case MD_SPAN_STRONG: return LS_STRONG;
	case MD_SPAN_CODE:   return LS_CODE;
	case MD_SPAN_A:      return LS_LINK;
	default:             return 0;
	}
}

static int on_enter_span(MD_SPANTYPE type, void *detail, void *ud)
{
	(void)detail;
	((builder *)ud)->style |= span_bit(type);
	return 0;
}

static int on_leave_span(MD_SPANTYPE type, void *detail, void *ud)
{
	(void)detail;
	((builder *)ud)->style &= ~span_bit(type);
	return 0;
}

/* The few entities a lesson is likely to use; others stay as written. */
static const char *entity(const char *s, size_t n)
{
	static const struct { const char *name, *text; } table[] = {
		{ "&amp;", "&" }, { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" }, { "&nbsp;", " " },
		{ "&times;", "\xc3\x97" }, { "&minus;", "\xe2\x88\x92" },
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strlen(table[i].name) == n && !strncmp(table[i].name, s, n))
			return table[i].text;
	return NULL;
}

static int on_text(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size, void *ud)
{
	builder *b = ud;
	const char *s = text;
	size_t n = size;
	switch (type) {
	case MD_TEXT_SOFTBR:
		s = " ";
		n = 1;
		break;
	case MD_TEXT_BR:
		s = "\n";
		n = 1;
		break;
	case MD_TEXT_NULLCHAR:
		s = "\xef\xbf\xbd";
		n = 3;
		break;
	case MD_TEXT_ENTITY: {
		const char *e = entity(text, size);
		if (e) {
			s = e;
			n = strlen(e);
		}
		break;
	}
	case MD_TEXT_HTML:
		return 0;   /* lessons carry no HTML; raw HTML is dropped, not rendered */
	default:
		break;
	}
	if (b->in_cell) {
		sb_add(&b->cell, s, n);
		return b->cell.oom ? -1 : 0;
	}
	if (!b->cur)
		open_block(b, b->list_depth ? LB_LIST_ITEM : LB_PARAGRAPH, b->list_depth);
	if (!b->cur)
		return -1;
	if (!b->cur->line)
		b->cur->line = src_line(b, text);
	sb_add(&b->text, s, n);
	if (b->cur->kind != LB_CODE)
		add_span(b, s, n);
	return b->text.oom || b->oom ? -1 : 0;
}

void lesson_free(lesson_doc *doc)
{
	for (size_t i = 0; i < doc->nblocks; i++) {
		lesson_block *blk = &doc->blocks[i];
		free(blk->text);
		free(blk->info);
		for (size_t k = 0; k < blk->nspans; k++)
			free(blk->spans[k].text);
		free(blk->spans);
		for (size_t k = 0; k < blk->ncells; k++)
			free(blk->cells[k]);
		free(blk->cells);
	}
	free(doc->blocks);
	free(doc->name);
	free(doc->title);
	memset(doc, 0, sizeof *doc);
}

/* Makes text safe to print on a terminal, as grade does: C0 controls
 * (but newline; a tab becomes a blank), DEL and C1 controls (U+0080-U+009F,
 * which include the 8-bit CSI) become '?'. A lesson's ESC can then never
 * move the cursor or recolour the learner's terminal. */
static void sanitize(char *s, bool keep_newlines)
{
	if (!s)
		return;
	char *w = s;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\n' && keep_newlines)
			*w++ = '\n';
		else if (*p == '\t')
			*w++ = ' ';
		else if (*p < 0x20 || *p == 0x7f)
			*w++ = '?';
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			*w++ = '?';
			p++;
		} else
			*w++ = (char)*p;
	}
	*w = '\0';
}

static void sanitize_doc(lesson_doc *doc)
{
	for (size_t i = 0; i < doc->nblocks; i++) {
		lesson_block *blk = &doc->blocks[i];
		sanitize(blk->text, true);
		sanitize(blk->info, false);
		for (size_t k = 0; k < blk->nspans; k++)
			sanitize(blk->spans[k].text, true);
		for (size_t k = 0; k < blk->ncells; k++)
			sanitize(blk->cells[k], false);
	}
	sanitize(doc->title, false);
}

mp_status lesson_parse(lesson_doc *doc, const char *name, const char *text, size_t len)
{
	memset(doc, 0, sizeof *doc);
	builder b = { .doc = doc, .line_at = 1 };
	MD_PARSER parser = {
		.abi_version = 0,
		.flags = MD_DIALECT_GITHUB | MD_FLAG_NOHTML,
		.enter_block = on_enter_block,
		.leave_block = on_leave_block,
		.enter_span = on_enter_span,
		.leave_span = on_leave_span,
		.text = on_text,
	};
	/* Parse a NUL-padded copy: Debian's md4c 0.4.8 can read past the end of
	 * its input on some malformed links (fuzz_lesson hit it: a garbage length
	 * and a 4 GiB allocation); the padding keeps such reads inside memory we
	 * own and stops them at a NUL. */
	if (len > UINT32_MAX - 64)
		return MP_EINVAL;
	char *padded = calloc(len + 64, 1);
	if (!padded)
		return MP_ENOMEM;
	memcpy(padded, text, len);
	b.src = padded;
	b.src_len = len;
	int rc = md_parse(padded, (MD_SIZE)len, &parser, &b);
	free(padded);
	close_block(&b);
	/* leftovers of an aborted parse */
	free(b.text.s);
	free(b.cell.s);
	free(b.run.s);
	for (size_t i = 0; i < b.nspans; i++)
		free(b.spans[i].text);
	free(b.spans);
	for (size_t i = 0; i < b.ncells; i++)
		free(b.cells[i]);
	free(b.cells);
	if (b.oom || rc != 0) {
		lesson_free(doc);
		return b.oom ? MP_ENOMEM : MP_EPARSE;
	}
	for (size_t i = 0; i < doc->nblocks; i++) {
		if (doc->blocks[i].kind == LB_HEADING) {
			doc->title = strdup(doc->blocks[i].text);
			break;
		}
	}
	doc->name = strdup(name ? name : "");
	if (!doc->name || (!doc->title && (doc->title = strdup("(untitled)")) == NULL)) {
		lesson_free(doc);
		return MP_ENOMEM;
	}
	sanitize_doc(doc);
	return MP_OK;
}

/* Lessons are small: anything above this is not a lesson. */
#define LESSON_MAX_BYTES (4u << 20)

mp_status lesson_load(lesson_doc *doc, const char *path, char *err, size_t errlen)
{
	memset(doc, 0, sizeof *doc);
	char *buf;
	size_t n;
	mp_status st = file_read_all(path, LESSON_MAX_BYTES, &buf, &n, err, errlen);
	if (st != MP_OK)
		return st;
	/* the name: the file name without folder and .md */
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char name[256];
	snprintf(name, sizeof name, "%s", base);
	size_t nl = strlen(name);
	if (nl > 3 && !strcmp(name + nl - 3, ".md"))
		name[nl - 3] = '\0';
	st = lesson_parse(doc, name, buf, n);
	free(buf);
	if (st == MP_EPARSE)
		snprintf(err, errlen, "%s: not valid Markdown", path);
	return st;
}

const char *lesson_dir(char *path, size_t n)
{
	return file_data_path(path, n, "MIXPREC_LESSONDIR", NULL, "lessons", "lessons");
}

/* --- plain-text rendering --- */

/* Display width of UTF-8 text: one column per code point (enough for the
 * Latin, Greek and math symbols lessons use). */
static size_t text_width(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* Writes text word-wrapped to width, each line starting with prefix (first
 * line) or indent (the others). */
static void wrap(FILE *out, const char *text, size_t width, const char *prefix, const char *indent)
{
	size_t col = 0;
	bool line_start = true;
	const char *p = text;
	fputs(prefix, out);
	col = text_width(prefix, strlen(prefix));
	size_t indent_w = text_width(indent, strlen(indent));
	while (*p) {
		if (*p == '\n') {
			fputc('\n', out);
			fputs(indent, out);
			col = indent_w;
			line_start = true;
			p++;
			continue;
		}
		if (*p == ' ') {
			p++;
			continue;
		}
		const char *w = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		size_t len = (size_t)(p - w), ww = text_width(w, len);
		if (!line_start && col + 1 + ww > width) {
			fputc('\n', out);
			fputs(indent, out);
			col = indent_w;
			line_start = true;
		}
		if (!line_start) {
			fputc(' ', out);
			col++;
		}
		fwrite(w, 1, len, out);
		col += ww;
		line_start = false;
	}
	fputc('\n', out);
}

static void render_table(FILE *out, const lesson_doc *doc, size_t first, size_t last)
{
	size_t ncol = 0;
	for (size_t i = first; i < last; i++)
		ncol = doc->blocks[i].ncells > ncol ? doc->blocks[i].ncells : ncol;
	size_t *w = calloc(ncol ? ncol : 1, sizeof *w);
	if (!w)
		return;
	for (size_t i = first; i < last; i++)
		for (size_t c = 0; c < doc->blocks[i].ncells; c++) {
			size_t cw = text_width(doc->blocks[i].cells[c], strlen(doc->blocks[i].cells[c]));
			w[c] = cw > w[c] ? cw : w[c];
		}
	for (size_t i = first; i < last; i++) {
		const lesson_block *row = &doc->blocks[i];
		fputs("  ", out);
		for (size_t c = 0; c < ncol; c++) {
			const char *cell = c < row->ncells ? row->cells[c] : "";
			size_t cw = text_width(cell, strlen(cell));
			fputs(cell, out);
			if (c + 1 < ncol)
				fprintf(out, "%*s  ", (int)(w[c] - cw), "");
		}
		fputc('\n', out);
		if (row->header) {
			fputs("  ", out);
			for (size_t c = 0; c < ncol; c++) {
				for (size_t k = 0; k < w[c]; k++)
					fputc('-', out);
				if (c + 1 < ncol)
					fputs("  ", out);
			}
			fputc('\n', out);
		}
	}
	free(w);
}

bool lesson_render_text(const lesson_doc *doc, size_t width, FILE *out)
{
	if (width < 40)
		width = 40;
	for (size_t i = 0; i < doc->nblocks; i++) {
		const lesson_block *blk = &doc->blocks[i];
		char prefix[64], indent[64];
		switch (blk->kind) {
		case LB_HEADING: {
			size_t w = text_width(blk->text, strlen(blk->text));
			fprintf(out, "%s\n", blk->text);   /* every block before ends with a blank line */
			if (blk->level <= 2) {
				for (size_t k = 0; k < w && k < width; k++)
					fputc(blk->level == 1 ? '=' : '-', out);
				fputc('\n', out);
			}
			fputc('\n', out);
			break;
		}
		case LB_PARAGRAPH:
			wrap(out, blk->text, width, "", "");
			fputc('\n', out);
			break;
		case LB_QUOTE:
			wrap(out, blk->text, width, "  | ", "  | ");
			fputc('\n', out);
			break;
		case LB_LIST_ITEM: {
			size_t depth = blk->level > 0 ? (size_t)blk->level : 1;
			size_t pad = 2 * (depth - 1);
			if (blk->number)
				snprintf(prefix, sizeof prefix, "%*s%u. ", (int)pad, "", blk->number);
			else
				snprintf(prefix, sizeof prefix, "%*s- ", (int)pad, "");
			snprintf(indent, sizeof indent, "%*s", (int)text_width(prefix, strlen(prefix)), "");
			wrap(out, blk->text, width, prefix, indent);
			bool next_item = i + 1 < doc->nblocks && doc->blocks[i + 1].kind == LB_LIST_ITEM;
			if (!next_item)
				fputc('\n', out);
			break;
		}
		case LB_CODE: {
			bool cmd = blk->info && !strcmp(blk->info, "mixprec");
			/* claims are for lesson check and the teacher, not the learner */
			if (blk->info && !strcmp(blk->info, "claims"))
				break;
			const char *p = blk->text;
			while (*p) {
				const char *nl = strchr(p, '\n');
				size_t n = nl ? (size_t)(nl - p) : strlen(p);
				fprintf(out, "    %s%.*s\n", cmd ? "$ " : "", (int)n, p);
				p += n + (nl ? 1 : 0);
			}
			fputc('\n', out);
			break;
		}
		case LB_TABLE_ROW: {
			size_t j = i;
			while (j < doc->nblocks && doc->blocks[j].kind == LB_TABLE_ROW && doc->blocks[j].table == blk->table)
				j++;
			render_table(out, doc, i, j);
			fputc('\n', out);
			i = j - 1;
			break;
		}
		case LB_RULE:
			for (size_t k = 0; k < width && k < 40; k++)
				fputc('-', out);
			fputs("\n\n", out);
			break;
		}
	}
	return !ferror(out);
}
