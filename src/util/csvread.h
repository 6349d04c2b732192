/* Reading CSV through libcsv, row by row, with the line each row starts on,
 * for files that come from outside (rosters, submissions, progress). */
#ifndef MIXPREC_UTIL_CSVREAD_H
#define MIXPREC_UTIL_CSVREAD_H

#include <stddef.h>

#include "util/status.h"

#define CSVR_MAX_FIELDS 1024        /* fields in one row */
#define CSVR_MAX_FIELD (64u << 10)  /* bytes in one field */

typedef struct {
	char **fields;     /* NUL-terminated; a field never contains a NUL byte */
	size_t count;
	long line;         /* 1-based line where the row starts */
} csvr_row;

/* Called for every row, the header included; returning nonzero stops the
 * parse (csvr_parse then returns MP_OK). */
typedef int (*csvr_row_fn)(void *ud, const csvr_row *row);

/* Called for a malformed row (line, what is wrong); returning nonzero stops
 * the parse, zero skips the row and goes on with the next line. */
typedef int (*csvr_error_fn)(void *ud, long line, const char *why);

/* Parses data strictly (RFC 4180 quoting; an optional UTF-8 byte-order mark
 * is skipped; blank lines are skipped). On malformed input (a stray quote,
 * an unterminated quoted field, a NUL byte, a row or field beyond the
 * limits): with on_error NULL, returns MP_EPARSE with "line N: what" in err
 * (the rows before it have been delivered); with on_error, reports it there
 * and returns MP_OK. MP_ENOMEM. */
mp_status csvr_parse(const char *data, size_t len, csvr_row_fn fn, csvr_error_fn on_error, void *ud, char *err,
                     size_t errlen);

/* Reads a file of at most max bytes and parses it; err names the file
 * ("path:line: what"). MP_EIO when it cannot be read, MP_EINVAL when it is
 * larger than max. */
mp_status csvr_read_file(const char *path, size_t max, csvr_row_fn fn, csvr_error_fn on_error, void *ud, char *err,
                         size_t errlen);

#endif
