/* Small helpers for text read from files. */
#ifndef MIXPREC_UTIL_TEXT_H
#define MIXPREC_UTIL_TEXT_H

#include <string.h>

/* Trims blanks (space, tab, a trailing CR) at both ends, in place; returns
 * the first kept character. */
static inline char *text_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

#endif
