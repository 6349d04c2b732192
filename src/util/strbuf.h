/* A growing string for building text (worked solutions, sheets). */
#ifndef MIXPREC_UTIL_STRBUF_H
#define MIXPREC_UTIL_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	char *buf;    /* NUL-terminated once anything was written; free() it */
	size_t len, cap;
	bool oom;     /* an allocation failed: later writes do nothing */
} strbuf;

/* Appends formatted text. */
void strbuf_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
