#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/numtext.h"

static char *special(char *buf, size_t n, double v)
{
	snprintf(buf, n, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
	return buf;
}

char *numtext_exact(char *buf, size_t n, double v)
{
	if (!isfinite(v))
		return special(buf, n, v);
	if (v == 0) {
		snprintf(buf, n, "%s", signbit(v) ? "-0" : "0");
		return buf;
	}
	/* glibc prints the exact binary value when asked for enough digits */
	char tmp[1200];
	snprintf(tmp, sizeof tmp, "%.800e", v);
	char *e = strchr(tmp, 'e');
	int exp10 = atoi(e + 1);
	*e = '\0';
	/* tmp = [-]d.ddddd ; strip trailing zeros */
	size_t len = strlen(tmp);
	while (len > 0 && tmp[len - 1] == '0')
		tmp[--len] = '\0';
	if (len > 0 && tmp[len - 1] == '.')
		tmp[--len] = '\0';
	const char *sign = tmp[0] == '-' ? "-" : "";
	char *d = tmp + (tmp[0] == '-');
	/* digits without the point */
	char digits[1200];
	size_t nd = 0;
	for (char *p = d; *p; p++)
		if (*p != '.')
			digits[nd++] = *p;
	digits[nd] = '\0';
	if (exp10 >= -7 && exp10 < 21) {
		char out[1300];
		size_t o = 0;
		if (exp10 < 0) {
			o += (size_t)snprintf(out + o, sizeof out - o, "0.");
			for (int i = 0; i < -exp10 - 1; i++)
				out[o++] = '0';
			memcpy(out + o, digits, nd);
			o += nd;
		} else {
			size_t intd = (size_t)exp10 + 1;
			for (size_t i = 0; i < intd; i++)
				out[o++] = i < nd ? digits[i] : '0';
			if (nd > intd) {
				out[o++] = '.';
				memcpy(out + o, digits + intd, nd - intd);
				o += nd - intd;
			}
		}
		out[o] = '\0';
		snprintf(buf, n, "%s%s", sign, out);
	} else {
		if (nd > 1)
			snprintf(buf, n, "%s%c.%se%+d", sign, digits[0], digits + 1, exp10);
		else
			snprintf(buf, n, "%s%ce%+d", sign, digits[0], exp10);
	}
	return buf;
}

char *numtext_short(char *buf, size_t n, double v)
{
	if (!isfinite(v))
		return special(buf, n, v);
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

size_t numtext_sig_digits(const char *text)
{
	size_t count = 0;
	int started = 0;
	for (const char *p = text; *p && *p != 'e'; p++) {
		if (*p >= '1' && *p <= '9')
			started = 1;
		if (started && *p >= '0' && *p <= '9')
			count++;
	}
	return count;
}

char *numtext_plain(char *buf, size_t n, double v)
{
	numtext_short(buf, n, v);
	double a = fabs(v);
	if (strchr(buf, 'e') && a >= 1e-4 && a < 1e15)
		for (int d = 0; d <= 20; d++) {
			snprintf(buf, n, "%.*f", d, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	return buf;
}

char *numtext_bytes(char *buf, size_t n, double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		snprintf(buf, n, "%.0f", v);
	else
		numtext_plain(buf, n, v);
	return buf;
}
