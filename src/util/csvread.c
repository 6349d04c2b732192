#include "util/csvread.h"

#include <csv.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"

typedef struct {
	csvr_row_fn fn;
	void *ud;
	char **fields;
	size_t count;
	long line;          /* the line being fed */
	long row_line;      /* where the current row started, 0 before its first field */
	bool stop;
	size_t rows;        /* rows delivered, the header first */
	mp_status st;
	long errline;
	char why[200];
} reader;

static void clear_row(reader *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->fields[i]);
	r->count = 0;
	r->row_line = 0;
}

static void on_field(void *s, size_t len, void *data)
{
	reader *r = data;
	if (r->stop || r->st != MP_OK)
		return;
	if (!r->row_line)
		r->row_line = r->line;
	if (r->count == CSVR_MAX_FIELDS) {
		r->st = MP_EPARSE;
		r->errline = r->row_line;
		snprintf(r->why, sizeof r->why, "more than %d fields in a row", CSVR_MAX_FIELDS);
		return;
	}
	if (len > CSVR_MAX_FIELD) {
		r->st = MP_EPARSE;
		r->errline = r->row_line;
		snprintf(r->why, sizeof r->why, "a field longer than %u bytes", CSVR_MAX_FIELD);
		return;
	}
	if (s && memchr(s, '\0', len)) {
		r->st = MP_EPARSE;
		r->errline = r->row_line;
		snprintf(r->why, sizeof r->why, "a NUL byte in a field");
		return;
	}
	char *copy = malloc(len + 1);
	if (!copy) {
		r->st = MP_ENOMEM;
		return;
	}
	if (len)
		memcpy(copy, s, len);
	copy[len] = '\0';
	r->fields[r->count++] = copy;
}

static void on_row(int c, void *data)
{
	(void)c;
	reader *r = data;
	if (r->stop || r->st != MP_OK) {
		clear_row(r);
		return;
	}
	if (!r->row_line)
		r->row_line = r->line;
	/* a blank line arrives as one empty field */
	bool blank = r->count == 0 || (r->count == 1 && r->fields[0][0] == '\0');
	if (!blank) {
		csvr_row row = { .fields = r->fields, .count = r->count, .line = r->row_line };
		r->rows++;
		if (r->fn(r->ud, &row))
			r->stop = true;
	}
	clear_row(r);
}

/* Feeds one line in chunks, so that a field is never buffered far beyond
 * CSVR_MAX_FIELD before it is refused (libcsv only hands a field over when
 * it ends). */
static void feed(struct csv_parser *p, reader *r, const char *data, size_t n)
{
	for (size_t off = 0; off < n && r->st == MP_OK && !r->stop;) {
		size_t k = n - off < 4096 ? n - off : 4096;
		if (csv_parse(p, data + off, k, on_field, on_row, r) != k && r->st == MP_OK) {
			r->st = MP_EPARSE;
			r->errline = r->line;
			snprintf(r->why, sizeof r->why, "%s",
			         csv_error(p) == CSV_EPARSE ? "a quote inside an unquoted field, or text after a closing quote "
			                                      "(quote the whole field and double any quote in it)"
			                                    : csv_strerror(csv_error(p)));
		}
		off += k;
		if (r->st == MP_OK && p->entry_pos > CSVR_MAX_FIELD) {
			r->st = MP_EPARSE;
			r->errline = r->row_line ? r->row_line : r->line;
			snprintf(r->why, sizeof r->why, "a field longer than %u bytes", CSVR_MAX_FIELD);
		}
	}
}

/* A malformed header is never skipped (the next row would be taken as the
 * header): with or without on_error it ends the parse. */
static mp_status parse(const char *data, size_t len, csvr_row_fn fn, csvr_error_fn on_error, void *ud,
                       long *errline, char *err, size_t errlen)
{
	struct csv_parser p;
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
		return MP_ENOMEM;
	csv_set_blk_size(&p, 4096);
	reader r = { .fn = fn, .ud = ud, .line = 0 };
	r.fields = malloc(CSVR_MAX_FIELDS * sizeof *r.fields);
	if (!r.fields) {
		csv_free(&p);
		return MP_ENOMEM;
	}
	if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
		data += 3;
		len -= 3;
	}
	size_t pos = 0;
	while (pos < len && r.st == MP_OK && !r.stop) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (data + pos)) + 1 : len - pos;
		r.line++;
		feed(&p, &r, data + pos, n);
		pos += n;
		if (r.st == MP_EPARSE && on_error && r.rows > 0) {
			/* report, then start afresh on the next line */
			if (on_error(ud, r.errline, r.why)) {
				r.stop = true;
				r.st = MP_OK;
				break;
			}
			csv_free(&p);
			if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
				r.st = MP_ENOMEM;
				clear_row(&r);
				free(r.fields);
				return MP_ENOMEM;
			}
			csv_set_blk_size(&p, 4096);
			clear_row(&r);
			r.st = MP_OK;
		}
	}
	if (r.st == MP_OK && !r.stop && csv_fini(&p, on_field, on_row, &r) != 0) {
		r.st = MP_EPARSE;
		r.errline = r.row_line ? r.row_line : r.line;
		snprintf(r.why, sizeof r.why, "unterminated quoted field (it runs to the end of the file)");
		if (on_error && r.rows > 0) {
			on_error(ud, r.errline, r.why);
			r.st = MP_OK;
		}
	}
	clear_row(&r);
	free(r.fields);
	csv_free(&p);
	if (r.st == MP_EPARSE && errlen)
		snprintf(err, errlen, "%s", r.why);
	*errline = r.errline;
	return r.st;
}

mp_status csvr_parse(const char *data, size_t len, csvr_row_fn fn, csvr_error_fn on_error, void *ud, char *err,
                     size_t errlen)
{
	char why[200];
	long line = 0;
	mp_status st = parse(data, len, fn, on_error, ud, &line, why, sizeof why);
	if (st == MP_EPARSE)
		snprintf(err, errlen, "line %ld: %s", line, why);
	return st;
}

mp_status csvr_read_file(const char *path, size_t max, csvr_row_fn fn, csvr_error_fn on_error, void *ud, char *err,
                         size_t errlen)
{
	char *buf;
	size_t len;
	mp_status st = file_read_all(path, max, &buf, &len, err, errlen);
	if (st != MP_OK)
		return st;
	char why[200];
	long line = 0;
	st = parse(buf, len, fn, on_error, ud, &line, why, sizeof why);
	if (st == MP_EPARSE)
		snprintf(err, errlen, "%s:%ld: %s", path, line, why);
	free(buf);
	return st;
}
