#include <csv.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/csvout.h"

void csvw_init(csvw *w, FILE *fp)
{
	w->fp = fp;
	w->col = 0;
}

static bool looks_numeric(const char *s)
{
	char *end;
	if (!*s)
		return false;
	strtod(s, &end);
	return *end == '\0' && end != s;
}

bool csv_is_formula_like(const char *text)
{
	if (!text[0] || !strchr("=+-@\t\r", text[0]))
		return false;
	return !looks_numeric(text);
}

void csvw_field(csvw *w, const char *text)
{
	if (w->col++ > 0)
		fputc(',', w->fp);
	char small[256];
	char *safe = NULL;
	if (csv_is_formula_like(text)) {
		size_t n = strlen(text);
		char *buf = n + 2 <= sizeof small ? small : (safe = malloc(n + 2));
		if (!buf) {
			/* never write the formula: a cell that says why is safer */
			text = "'(out of memory)";
		} else {
			buf[0] = '\'';
			memcpy(buf + 1, text, n + 1);
			text = buf;
		}
	}
	if (strpbrk(text, ",\"\r\n") || (text[0] == ' ') || (*text && text[strlen(text) - 1] == ' '))
		csv_fwrite(w->fp, text, strlen(text));
	else
		fputs(text, w->fp);
	free(safe);
}

void csvw_fieldf(csvw *w, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	csvw_field(w, buf);
}

void csvw_end_row(csvw *w)
{
	fputc('\n', w->fp);
	w->col = 0;
}

void csvw_header(csvw *w, const char *names)
{
	char *copy = strdup(names);
	if (!copy)
		return;
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		csvw_field(w, tok);
	csvw_end_row(w);
	free(copy);
}

bool csvw_ok(const csvw *w)
{
	return !ferror(w->fp);
}
