/* UTF-8 for the two front ends that lay text out by columns, the TUI's
 * widgets and the plot canvas: one decoder, so they split a string into the
 * same characters, and one display width. */
#ifndef MIXPREC_UTIL_UTF8_H
#define MIXPREC_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UTF8_REPLACEMENT 0xfffdu

/* Decodes the character at s, reading at most len bytes (a NUL byte ends a
 * sequence, so strnlen(s, 4) is a safe len for a C string). Returns the
 * bytes it takes: 1 to 4, or 0 only when len is 0. An ill-formed sequence
 * (a stray continuation byte, an overlong form, a surrogate, a value above
 * U+10FFFF, or a sequence cut short) becomes one U+FFFD that takes the bytes
 * of its longest well-formed start, at least one (Unicode's "maximal
 * subpart"); *valid (may be NULL) then says false. */
size_t utf8_decode(const char *s, size_t len, uint32_t *cp, bool *valid);

/* True for the combining marks the fallback width knows (the combining
 * diacritical blocks U+0300-036F, 1AB0-1AFF, 1DC0-1DFF, 20D0-20FF, FE20-FE2F). */
bool utf8_is_combining(uint32_t cp);

/* Columns cp takes on a terminal: wcwidth's answer in the current LC_CTYPE
 * locale; where wcwidth does not know cp (it says -1, as every non-ASCII
 * character gets in the C locale, and control characters, which the front
 * ends draw as one replacement cell), 0 for a combining mark, else 1. */
int utf8_cp_width(uint32_t cp);

/* Characters (code points, each ill-formed sequence one) in the C string s;
 * 0 for NULL. */
size_t utf8_count(const char *s);

/* Columns the C string s takes (utf8_cp_width of each character); 0 for NULL. */
int utf8_width(const char *s);

#endif
