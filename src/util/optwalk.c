#include <string.h>
#include <strings.h>

#include "util/optwalk.h"

/* A negative number as typed on a command line: "-" followed by a digit, a
 * point, or inf/nan (a value, not an option). */
static bool is_negative_number(const char *s)
{
	if (s[0] != '-' || !s[1])
		return false;
	if ((s[1] >= '0' && s[1] <= '9') || s[1] == '.')
		return true;
	return !strncasecmp(s + 1, "inf", 3) || !strncasecmp(s + 1, "nan", 3);
}

/* Puts getopt back at its start: optind 0 makes the next getopt_long call
 * initialise afresh (a walk that stopped inside "-hx" leaves "x" pending);
 * a one-word argv makes that call return at once. */
static void reset_getopt(void)
{
	static const struct option none[] = { { 0 } };
	char name[] = "x", *argv[] = { name, NULL };
	optind = 0;
	opterr = 0;
	getopt_long(1, argv, "+", none, NULL);
	optind = 1;
}

int optwalk_next(optwalk *w, int argc, char **argv, const struct option *opts, char **value)
{
	if (!w->started) {
		reset_getopt();
		w->started = true;
		w->rest = false;
	}
	for (;;) {
		if (optind >= argc)
			return -1;
		char *arg = argv[optind];
		if (w->rest || is_negative_number(arg) || arg[0] != '-' || arg[1] == '\0') {
			*value = arg;
			optind++;
			return OPTWALK_VALUE;
		}
		if (!strcmp(arg, "--")) {
			w->rest = true;
			optind++;
			continue;
		}
		/* '+': stop at the first non-option, so values keep their order */
		int c = getopt_long(argc, argv, "+:h", opts, NULL);
		if (c != -1)
			return c;
	}
}

mp_status optwalk_error(const char *cmd, int c, char **argv, char *err, size_t errlen)
{
	if (c == ':')
		return mp_fail(MP_EINVAL, err, errlen, "option '%s' needs a value", argv[optind - 1]);
	return mp_fail(MP_EINVAL, err, errlen, "unknown option '%s' (see 'mixprec %s --help')", argv[optind - 1], cmd);
}
