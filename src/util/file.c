#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"

mp_status file_read_all(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen)
{
	*buf = NULL;
	*len = 0;
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return MP_EIO;
	}
	size_t cap = 1 << 16, n = 0;
	char *b = NULL;
	mp_status st = MP_OK;
	for (;;) {
		char *bigger = realloc(b, cap + 1);
		if (!bigger) {
			st = MP_ENOMEM;
			snprintf(err, errlen, "%s: out of memory", path);
			break;
		}
		b = bigger;
		n += fread(b + n, 1, cap - n, fp);
		if (n < cap)
			break;   /* end of file or an error, told apart below */
		if (cap > max) {
			st = MP_EINVAL;
			break;
		}
		cap *= 2;
	}
	if (st == MP_OK && ferror(fp)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
		st = MP_EIO;
	}
	if (st == MP_OK && n > max)
		st = MP_EINVAL;
	if (st == MP_EINVAL)
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
	fclose(fp);
	if (st != MP_OK) {
		free(b);
		return st;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return MP_OK;
}

/* The file a write to path lands in: a symbolic link's target, so that the
 * rename replaces the file and not the link (malloc'd; NULL on ENOMEM). */
static char *write_target(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *real = realpath(path, NULL);
		if (real)
			return real;
	}
	return strdup(path);
}

mp_status file_atomic_open(file_atomic *a, const char *path, char *err, size_t errlen)
{
	memset(a, 0, sizeof *a);
	a->path = write_target(path);
	if (!a->path) {
		snprintf(err, errlen, "%s: out of memory", path);
		return MP_ENOMEM;
	}
	struct stat st;
	if (stat(a->path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
		file_atomic_abort(a);
		return MP_EIO;
	}
	if (stat(a->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a pipe (/dev/stdout, /dev/null, a FIFO): nothing to
		 * replace atomically, and renaming over it would replace the node
		 * itself (which root may do, even in /dev); write into it */
		a->fp = fopen(a->path, "w");
		if (!a->fp) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			file_atomic_abort(a);
			return MP_EIO;
		}
		return MP_OK;
	}
	size_t n = strlen(a->path);
	a->tmp = malloc(n + 16);
	if (!a->tmp) {
		file_atomic_abort(a);
		snprintf(err, errlen, "%s: out of memory", path);
		return MP_ENOMEM;
	}
	snprintf(a->tmp, n + 16, "%s.tmp-XXXXXX", a->path);
	int fd = mkstemp(a->tmp);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(a->tmp);
		a->tmp = NULL;
		file_atomic_abort(a);
		return MP_EIO;
	}
	/* mkstemp makes it 0600; a result file is as readable as any other */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	a->fp = fdopen(fd, "w");
	if (!a->fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		file_atomic_abort(a);
		return MP_EIO;
	}
	return MP_OK;
}

mp_status file_atomic_commit(file_atomic *a, char *err, size_t errlen)
{
	int e = 0;
	/* fsync fails on pipes and most devices: only a temporary file needs it */
	if (fflush(a->fp) != 0 || ferror(a->fp) || (a->tmp && fsync(fileno(a->fp)) != 0))
		e = errno ? errno : EIO;
	if (fclose(a->fp) != 0 && !e)
		e = errno ? errno : EIO;
	a->fp = NULL;
	if (!e && a->tmp && rename(a->tmp, a->path) != 0)
		e = errno;
	if (e) {
		snprintf(err, errlen, "%s: %s", a->path, strerror(e));
		file_atomic_abort(a);
		return MP_EIO;
	}
	if (!a->tmp) {
		file_atomic_abort(a);
		return MP_OK;
	}
	/* make the rename itself durable */
	char *slash = strrchr(a->path, '/');
	char dir[4096];
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - a->path) + (slash == a->path) : 1, slash ? a->path : ".");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(a->tmp);
	a->tmp = NULL;
	file_atomic_abort(a);
	return MP_OK;
}

void file_atomic_abort(file_atomic *a)
{
	if (a->fp)
		fclose(a->fp);
	if (a->tmp)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	memset(a, 0, sizeof *a);
}

const char *file_data_path(char *buf, size_t n, const char *env, const char *env_rel, const char *installed,
                           const char *src_rel)
{
	const char *dir = getenv(env), *src = getenv("MIXPREC_SRCDIR");
	if (dir && *dir)
		snprintf(buf, n, "%s%s%s", dir, env_rel ? "/" : "", env_rel ? env_rel : "");
	else if (src && *src)
		snprintf(buf, n, "%s/%s", src, src_rel);
	else
		snprintf(buf, n, "%s/%s", MIXPREC_PKGDATADIR, installed);
	return buf;
}
