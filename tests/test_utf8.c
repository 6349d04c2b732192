/* The shared UTF-8 module (src/util/utf8.h) on byte strings written here,
 * each expected value worked out by hand from the bit layout
 * (110xxxxx 10xxxxxx, 1110xxxx 10xxxxxx 10xxxxxx, 11110xxx 10xxxxxx ...)
 * and table 3-7 of the Unicode Standard (well-formed byte sequences). */
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "testutil.h"
#include "util/utf8.h"

/* Decodes s (len bytes) once and checks the bytes taken, the code point and
 * whether it was well formed. */
static void expect(const char *s, size_t len, size_t n, uint32_t cp, bool valid)
{
	uint32_t got = 0;
	bool ok = !valid;
	size_t took = utf8_decode(s, len, &got, &ok);
	ck_assert_uint_eq(took, n);
	ck_assert_uint_eq(got, cp);
	ck_assert(ok == valid);
}

START_TEST(ascii_is_one_byte)
{
	expect("A", 1, 1, 0x41, true);
	expect("~x", 2, 1, 0x7e, true);
	expect("\x7f", 1, 1, 0x7f, true);
	expect("", 0, 0, UTF8_REPLACEMENT, false);   /* nothing to read */
	ck_assert_uint_eq(utf8_count("mixprec"), 7);
}
END_TEST

START_TEST(multibyte_sequences)
{
	/* C3 A9: 00011 101001 = 0xE9 (e acute) */
	expect("\xc3\xa9", 2, 2, 0xe9, true);
	/* C2 80: the smallest two-byte value, 00010 000000 = 0x80 */
	expect("\xc2\x80", 2, 2, 0x80, true);
	/* E2 82 AC: 0010 000010 101100 = 0x20AC (euro sign) */
	expect("\xe2\x82\xac", 3, 3, 0x20ac, true);
	/* E4 B8 AD: 0100 111000 101101 = 0x4E2D (CJK 'middle') */
	expect("\xe4\xb8\xad", 3, 3, 0x4e2d, true);
	/* EF BF BD is U+FFFD itself, and well formed */
	expect("\xef\xbf\xbd", 3, 3, 0xfffd, true);
	/* F0 9F 98 80: 000 011111 011000 000000 = 0x1F600 */
	expect("\xf0\x9f\x98\x80", 4, 4, 0x1f600, true);
	/* F4 8F BF BF: the largest code point, 0x10FFFF */
	expect("\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff, true);
	/* a, e acute, euro, smiley: four characters in 1+2+3+4 bytes */
	ck_assert_uint_eq(utf8_count("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), 4);
}
END_TEST

START_TEST(invalid_bytes_are_one_replacement_each)
{
	expect("\x80", 1, 1, UTF8_REPLACEMENT, false);           /* a stray continuation byte */
	expect("\xbf", 1, 1, UTF8_REPLACEMENT, false);
	expect("\xff", 1, 1, UTF8_REPLACEMENT, false);           /* never in UTF-8 */
	expect("\xc0\xaf", 2, 1, UTF8_REPLACEMENT, false);       /* overlong '/': C0 leads nothing */
	expect("\xe0\x80\x80", 3, 1, UTF8_REPLACEMENT, false);   /* overlong: after E0 comes A0..BF */
	expect("\xed\xa0\x80", 3, 1, UTF8_REPLACEMENT, false);   /* surrogate D800: after ED comes 80..9F */
	expect("\xf4\x90\x80\x80", 4, 1, UTF8_REPLACEMENT, false); /* 0x110000: after F4 comes 80..8F */
	expect("\xf5\x80\x80\x80", 4, 1, UTF8_REPLACEMENT, false); /* F5 leads nothing */
	/* every byte of those is its own replacement */
	ck_assert_uint_eq(utf8_count("\xc0\xaf"), 2);
	ck_assert_uint_eq(utf8_count("\xe0\x80\x80"), 3);
	ck_assert_uint_eq(utf8_count("\xed\xa0\x80"), 3);
	ck_assert_uint_eq(utf8_count("\xf4\x90\x80\x80"), 4);
	ck_assert_uint_eq(utf8_count("a\x80" "b"), 3);
}
END_TEST

START_TEST(truncated_sequences_are_one_replacement)
{
	/* a well-formed start cut short is one replacement for all its bytes */
	expect("\xe2\x82", 2, 2, UTF8_REPLACEMENT, false);
	expect("\xe2\x82\xac", 2, 2, UTF8_REPLACEMENT, false);  /* len stops it before AC */
	expect("\xf0\x9f\x98", 3, 3, UTF8_REPLACEMENT, false);
	expect("\xc3", 1, 1, UTF8_REPLACEMENT, false);
	expect("\xe2\x82" "A", 3, 2, UTF8_REPLACEMENT, false);  /* 'A' is no continuation byte */
	/* in a C string the NUL ends it */
	ck_assert_uint_eq(utf8_count("\xe2\x82"), 1);
	ck_assert_uint_eq(utf8_count("\xe2\x82" "A"), 2);
	ck_assert_uint_eq(utf8_count("\xf0\x9f\x98" "\xc3\xa9"), 2);
	ck_assert_uint_eq(utf8_count(NULL), 0);
}
END_TEST

START_TEST(widths_in_a_utf8_locale)
{
	ck_assert_msg(setlocale(LC_CTYPE, "C.UTF-8") || setlocale(LC_CTYPE, "C.utf8"),
	              "this test needs the C.UTF-8 locale");
	ck_assert_int_eq(utf8_cp_width('A'), 1);
	ck_assert_int_eq(utf8_cp_width(0xe9), 1);
	ck_assert_int_eq(utf8_cp_width(0x4e2d), 2);   /* CJK: two columns */
	ck_assert_int_eq(utf8_cp_width(0x0301), 0);   /* combining acute accent */
	ck_assert_int_eq(utf8_cp_width(0x07), 1);     /* a control character: one cell */
	ck_assert_int_eq(utf8_width("\xe4\xb8\xad" "A"), 3);
	ck_assert_int_eq(utf8_width("e\xcc\x81"), 1);         /* e + U+0301 */
	ck_assert_uint_eq(utf8_count("e\xcc\x81"), 2);
	ck_assert_int_eq(utf8_width("\xe0\x80\x80"), 3);       /* three replacements, one column each */
	ck_assert_int_eq(utf8_width(NULL), 0);
	setlocale(LC_CTYPE, "C");
}
END_TEST

START_TEST(widths_fall_back_in_the_c_locale)
{
	/* the C locale's wcwidth knows no character above 0x7F: printable ones
	 * count 1, combining marks 0 */
	ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C"));
	ck_assert_int_eq(utf8_cp_width('A'), 1);
	ck_assert_int_eq(utf8_cp_width(0x4e2d), 1);
	ck_assert_int_eq(utf8_cp_width(0x0301), 0);
	ck_assert_int_eq(utf8_cp_width(0x20d7), 0);   /* combining right arrow above */
	ck_assert_int_eq(utf8_cp_width(0x036f), 0);   /* last of U+0300..036F */
	ck_assert_int_eq(utf8_cp_width(0x0370), 1);   /* first after it */
	ck_assert_int_eq(utf8_width("e\xcc\x81" "\xe4\xb8\xad"), 2);
	ck_assert(utf8_is_combining(0x0300));
	ck_assert(!utf8_is_combining(0x02ff));
	ck_assert(utf8_is_combining(0xfe2f));
	ck_assert(!utf8_is_combining(0xfe30));
}
END_TEST

static Suite *utf8_suite(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, ascii_is_one_byte);
	tcase_add_test(tc, multibyte_sequences);
	tcase_add_test(tc, invalid_bytes_are_one_replacement_each);
	tcase_add_test(tc, truncated_sequences_are_one_replacement);
	tcase_add_test(tc, widths_in_a_utf8_locale);
	tcase_add_test(tc, widths_fall_back_in_the_c_locale);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(utf8_suite());
}
