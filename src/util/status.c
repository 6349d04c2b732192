#include <stdarg.h>
#include <stdio.h>

#include "util/status.h"

static const char *const status_messages[] = {
#define MP_STATUS_MSG(id, msg) [id] = msg,
	MP_STATUS_LIST(MP_STATUS_MSG)
#undef MP_STATUS_MSG
};

const char *mp_status_message(mp_status st)
{
	if ((unsigned)st >= MP_STATUS_COUNT)
		return "unknown status";
	return status_messages[st];
}

mp_status mp_fail(mp_status st, char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return st;
}
