/* UTF-8 decoding as the Unicode Standard's table 3-7 of well-formed byte
 * sequences has it, and display widths (src/util/utf8.h). */
#include <string.h>
#include <wchar.h>

#include "util/utf8.h"

/* The range the second byte of a sequence led by b0 must lie in (table 3-7),
 * the ranges of later bytes being 0x80..0xbf; the length of the sequence, or
 * 0 when b0 cannot lead one. */
static size_t lead(unsigned char b0, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (b0 >= 0xc2 && b0 <= 0xdf)
		return 2;
	if (b0 >= 0xe0 && b0 <= 0xef) {
		if (b0 == 0xe0)
			*lo = 0xa0;   /* no overlong forms */
		else if (b0 == 0xed)
			*hi = 0x9f;   /* no surrogates */
		return 3;
	}
	if (b0 >= 0xf0 && b0 <= 0xf4) {
		if (b0 == 0xf0)
			*lo = 0x90;
		else if (b0 == 0xf4)
			*hi = 0x8f;   /* nothing above U+10FFFF */
		return 4;
	}
	return 0;
}

size_t utf8_decode(const char *s, size_t len, uint32_t *cp, bool *valid)
{
	const unsigned char *p = (const unsigned char *)s;
	if (valid)
		*valid = false;
	if (len == 0) {
		*cp = UTF8_REPLACEMENT;
		return 0;
	}
	if (p[0] < 0x80) {
		*cp = p[0];
		if (valid)
			*valid = true;
		return 1;
	}
	unsigned char lo, hi;
	size_t n = lead(p[0], &lo, &hi);
	*cp = UTF8_REPLACEMENT;
	if (n == 0)
		return 1;
	uint32_t v = p[0] & (0x7fu >> n);
	for (size_t i = 1; i < n; i++) {
		if (i >= len || p[i] < lo || p[i] > hi)
			return i;   /* the well-formed start so far is one replacement */
		v = v << 6 | (p[i] & 0x3fu);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = v;
	if (valid)
		*valid = true;
	return n;
}

bool utf8_is_combining(uint32_t cp)
{
	return (cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x1ab0 && cp <= 0x1aff) || (cp >= 0x1dc0 && cp <= 0x1dff) ||
	       (cp >= 0x20d0 && cp <= 0x20ff) || (cp >= 0xfe20 && cp <= 0xfe2f);
}

int utf8_cp_width(uint32_t cp)
{
	int w = wcwidth((wchar_t)cp);
	if (w >= 0)
		return w;
	return utf8_is_combining(cp) ? 0 : 1;
}

/* The code points of s (NULL: none), or with width the columns they take. */
static size_t walk(const char *s, bool width)
{
	size_t n = 0;
	if (!s)
		return 0;
	while (*s) {
		uint32_t cp;
		s += utf8_decode(s, strnlen(s, 4), &cp, NULL);
		n += width ? (size_t)utf8_cp_width(cp) : 1;
	}
	return n;
}

size_t utf8_count(const char *s)
{
	return walk(s, false);
}

int utf8_width(const char *s)
{
	return (int)walk(s, true);
}
