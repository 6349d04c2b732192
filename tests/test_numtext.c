/* util/numtext's texts against values written by hand. */
#include <string.h>

#include "testutil.h"
#include "util/numtext.h"

static void expect(char *(*f)(char *, size_t, double), double v, const char *want)
{
	char buf[1200];
	ck_assert_str_eq(f(buf, sizeof buf, v), want);
}

START_TEST(short_texts)
{
	expect(numtext_short, 0.1, "0.1");
	expect(numtext_short, 700, "7e+02");   /* %.1g */
	expect(numtext_short, 1e20, "1e+20");
	expect(numtext_short, 1.0 / 3, "0.3333333333333333");
	expect(numtext_short, -2.5e-7, "-2.5e-07");
}
END_TEST

/* positional from 1e-4 up to (not including) 1e15 */
START_TEST(plain_texts)
{
	expect(numtext_plain, 700, "700");
	expect(numtext_plain, 1.5e14, "150000000000000");
	expect(numtext_plain, 1e15, "1e+15");
	expect(numtext_plain, 0.000125, "0.000125");
	expect(numtext_plain, 0.0000125, "1.25e-05");
	expect(numtext_plain, -36.25, "-36.25");
	expect(numtext_plain, 0.1, "0.1");
}
END_TEST

/* integers whole up to 2^53, else as numtext_plain */
START_TEST(byte_texts)
{
	expect(numtext_bytes, 1048576, "1048576");
	expect(numtext_bytes, 1e15, "1000000000000000");
	expect(numtext_bytes, 1e16, "1e+16");   /* above 2^53 */
	expect(numtext_bytes, 9007199254740992.0, "9007199254740992");   /* %.16g */
	expect(numtext_bytes, 2.5, "2.5");
	expect(numtext_bytes, 0, "0");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("numtext");
	TCase *tc = tcase_create("numtext");
	tcase_add_test(tc, short_texts);
	tcase_add_test(tc, plain_texts);
	tcase_add_test(tc, byte_texts);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
