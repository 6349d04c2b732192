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

/* Edit distance of a and b (optimal string alignment: a swap of two
 * neighbours counts 1); a and b are at most OPTWALK_WORD_MAX bytes. */
enum { OPTWALK_WORD_MAX = 64 };
static size_t edit_distance(const char *a, const char *b)
{
	size_t m = strlen(a), n = strlen(b);
	size_t d[OPTWALK_WORD_MAX + 1][OPTWALK_WORD_MAX + 1];
	for (size_t i = 0; i <= m; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= n; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= m; i++)
		for (size_t j = 1; j <= n; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[m][n];
}

int optwalk_nearest(const char *word, const char *const *names, size_t n)
{
	size_t len = strlen(word);
	if (len == 0 || len > OPTWALK_WORD_MAX)
		return -1;
	size_t limit = 1 + len / 4;
	if (limit > 3)
		limit = 3;
	if (limit >= len)
		limit = len - 1;
	int best = -1;
	size_t best_d = limit + 1;
	for (size_t i = 0; i < n; i++) {
		if (strlen(names[i]) > OPTWALK_WORD_MAX)
			continue;
		size_t dist = edit_distance(word, names[i]);
		if (dist < best_d) {
			best_d = dist;
			best = (int)i;
		}
	}
	return best;
}

/* The long option of opts nearest to arg ("--name" or "--name=value"), or NULL. */
static const char *nearest_option(const char *arg, const struct option *opts)
{
	if (strncmp(arg, "--", 2) != 0 || !opts)
		return NULL;
	char word[OPTWALK_WORD_MAX + 1];
	size_t len = strcspn(arg + 2, "=");
	if (len > OPTWALK_WORD_MAX)
		return NULL;
	memcpy(word, arg + 2, len);
	word[len] = '\0';
	const char *names[128];
	size_t n = 0;
	for (const struct option *o = opts; o->name && n < sizeof names / sizeof names[0]; o++)
		names[n++] = o->name;
	int i = optwalk_nearest(word, names, n);
	return i >= 0 ? names[i] : NULL;
}

mp_status optwalk_error(const char *cmd, int c, char **argv, const struct option *opts, char *err, size_t errlen)
{
	const char *arg = argv[optind - 1];
	if (c == ':')
		return mp_fail(MP_EINVAL, err, errlen, "option '%s' needs a value", arg);
	const char *near = nearest_option(arg, opts);
	if (near)
		return mp_fail(MP_EINVAL, err, errlen, "unknown option '%s' (did you mean '--%s'? see 'mixprec %s --help')",
		               arg, near, cmd);
	return mp_fail(MP_EINVAL, err, errlen, "unknown option '%s' (see 'mixprec %s --help')", arg, cmd);
}
