/* Small helpers for text read from files. */
#ifndef MIXPREC_UTIL_TEXT_H
#define MIXPREC_UTIL_TEXT_H

#include <stdbool.h>
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

/* Makes s valid UTF-8 without control characters, in place: every byte of
 * an invalid, overlong, truncated or surrogate sequence becomes '?', every
 * C0 control (a line break too) or DEL a blank. Returns s. */
static inline char *text_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		bool ok = n > 0;
		for (size_t i = 1; ok && i < n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		if (ok && n == 3)   /* overlong (E0 80..9F), surrogates (ED A0..BF) */
			ok = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
		if (ok && n == 4)   /* overlong (F0 80..8F), above U+10FFFF (F4 90..) */
			ok = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
		if (!ok || (n == 1 && (c < 0x20 || c == 0x7f))) {
			*p++ = ok ? ' ' : '?';
			continue;
		}
		p += n;
	}
	return s;
}

#endif
