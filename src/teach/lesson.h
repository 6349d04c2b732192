/* Lessons: Markdown files parsed with md4c into a document model that the
 * CLI (and later the TUI) render. */
#ifndef MIXPREC_TEACH_LESSON_H
#define MIXPREC_TEACH_LESSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/status.h"

typedef enum {
	LB_HEADING,     /* level 1-6 */
	LB_PARAGRAPH,
	LB_LIST_ITEM,   /* level = nesting depth (1 = top); number > 0 for ordered lists */
	LB_CODE,        /* info: the fence's info string ("mixprec" marks a runnable command) */
	LB_TABLE_ROW,   /* cells; header = the table's first row */
	LB_QUOTE,
	LB_RULE,
} lesson_block_kind;

enum {
	LS_EMPH = 1u << 0,
	LS_STRONG = 1u << 1,
	LS_CODE = 1u << 2,
	LS_LINK = 1u << 3,
};

/* A run of text with one style (LS_* bits). */
typedef struct {
	char *text;
	unsigned style;
} lesson_span;

typedef struct {
	lesson_block_kind kind;
	int level;
	unsigned number;          /* ordered list item number, else 0 */
	bool header;              /* table header row */
	char *info;               /* code block info string, or NULL */
	char *text;               /* the block's plain text (code: verbatim) */
	lesson_span *spans;       /* styled runs making up text (not for code and tables) */
	size_t nspans;
	char **cells;             /* table rows: the cells' plain text */
	size_t ncells;
	int table;                /* index of the table a row belongs to (0, 1, ...) */
	unsigned line;            /* source line of the block's first text (code: first content line); 0 unknown */
} lesson_block;

typedef struct {
	char *name;               /* file name without .md */
	char *title;              /* the first heading's text */
	lesson_block *blocks;
	size_t nblocks;
} lesson_doc;

/* Parses Markdown text into doc (name may be NULL). MP_EPARSE when md4c
 * rejects it, MP_EINVAL past 4 GiB, MP_ENOMEM when out of memory; doc is empty on failure. */
mp_status lesson_parse(lesson_doc *doc, const char *name, const char *text, size_t len);
/* Reads and parses a file; MP_EIO (err names the file) when unreadable. */
mp_status lesson_load(lesson_doc *doc, const char *path, char *err, size_t errlen);
void lesson_free(lesson_doc *doc);

/* The folder holding the lessons: $MIXPREC_LESSONDIR, else the installed
 * one, else the source tree's lessons/. Writes the path into path (n bytes;
 * 4096 hold any) and returns it. */
const char *lesson_dir(char *path, size_t n);

/* Lists the *.md lessons in dir (names without .md, README excluded) in
 * course order: the lessons named in dir/ORDER (one a line) in that order,
 * then the others by name; without ORDER, by name. *names is malloc'd, free
 * each and the array. */
mp_status lesson_list(const char *dir, char ***names, size_t *count);

/* Plain-text rendering, wrapped to width columns (at least 40). Returns false
 * when writing failed. */
bool lesson_render_text(const lesson_doc *doc, size_t width, FILE *out);

#endif
