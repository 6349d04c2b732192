/* Writing CSV rows through libcsv, with spreadsheet formulas neutralised. */
#ifndef MIXPREC_UTIL_CSVOUT_H
#define MIXPREC_UTIL_CSVOUT_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
	FILE *fp;
	int col;    /* fields written in the current row */
} csvw;

void csvw_init(csvw *w, FILE *fp);
/* Writes one field: quoted by libcsv when it needs quoting; a text cell that
 * a spreadsheet would run as a formula (leading = + - @ tab CR, and not a
 * number) gets a leading apostrophe. */
void csvw_field(csvw *w, const char *text);
void csvw_fieldf(csvw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void csvw_end_row(csvw *w);
/* Writes a whole header row from a comma-separated list of names. */
void csvw_header(csvw *w, const char *names);
/* False when a write failed (full disk, closed pipe). */
bool csvw_ok(const csvw *w);

/* True when a spreadsheet would treat text as a formula. */
bool csv_is_formula_like(const char *text);

#endif
