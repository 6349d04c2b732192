#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
	/* a FIFO without a writer would block the open: open it without
	 * waiting (a read then sees the end), and read blocking from there */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *fp = NULL;
	if (fd >= 0) {
		struct stat sb;
		if (fstat(fd, &sb) != 0)
			;   /* errno says why */
		else if (S_ISDIR(sb.st_mode))
			errno = EISDIR;
		else if (S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size > max) {
			/* refused before reading anything */
			close(fd);
			snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
			return MP_EINVAL;
		}
		else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0)
			fp = fdopen(fd, "rb");
		if (!fp)
			close(fd);
	}
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return MP_EIO;
	}
	size_t cap = max < (1 << 16) ? max + 1 : 1 << 16, n = 0;
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
		if (n > max) {
			st = MP_EINVAL;
			break;
		}
		/* never more than max + 1 bytes: one past the limit tells it */
		cap = cap > max / 2 ? max + 1 : cap * 2;
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

mp_status file_check_target(const char *path, int flags, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return MP_OK;   /* absent: created (or the folder's own error, at open) */
	const char *why = NULL;
	if ((flags & FILE_IN_FOLDER) && S_ISLNK(st.st_mode))
		why = "is a symbolic link; refusing to write through it or replace it (remove it first)";
	else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		why = strerror(EISDIR);
	else if ((flags & FILE_IN_FOLDER) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		why = "is not a regular file (a pipe or a device); refusing to write into it (remove it first)";
	if (why) {
		snprintf(err, errlen, "%s: %s", path, why);
		return MP_EIO;
	}
	return MP_OK;
}

/* A device or a pipe: written into, never renamed over. A FIFO without a
 * reader is refused (ENXIO) instead of waited on. */
static mp_status open_direct(file_atomic *a, const char *path, char *err, size_t errlen)
{
	int fd = open(a->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0)
		a->fp = fdopen(fd, "w");
	if (!a->fp) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s: %s", path, e == ENXIO ? "a pipe that no process reads" : strerror(e));
		file_atomic_abort(a);
		return MP_EIO;
	}
	return MP_OK;
}

mp_status file_atomic_open(file_atomic *a, const char *path, char *err, size_t errlen)
{
	return file_atomic_open_flags(a, path, 0, err, errlen);
}

mp_status file_atomic_open_flags(file_atomic *a, const char *path, int flags, char *err, size_t errlen)
{
	memset(a, 0, sizeof *a);
	if (file_check_target(path, flags, err, errlen) != MP_OK)
		return MP_EIO;
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
		return open_direct(a, path, err, errlen);
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

/* Removes the temporary files of path that killed runs left in dir: named
 * BASE.tmp-XXXXXX exactly (mkstemp's six letters and digits), regular files
 * (not links) of this user. A run writing the same path at the same moment
 * would lose its temporary file and report it; its target stays whole. */
static void remove_stale(const char *dir, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t bl = strlen(base);
	DIR *d = opendir(dir);
	if (!d)
		return;
	int dfd = dirfd(d);
	for (struct dirent *e; (e = readdir(d));) {
		const char *nm = e->d_name;
		if (strlen(nm) != bl + 11 || strncmp(nm, base, bl) != 0 || strncmp(nm + bl, ".tmp-", 5) != 0)
			continue;
		bool ours = true;
		for (int i = 0; i < 6; i++)
			ours = ours && isalnum((unsigned char)nm[bl + 5 + i]);
		struct stat st;
		if (ours && fstatat(dfd, nm, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid())
			unlinkat(dfd, nm, 0);
	}
	closedir(d);
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
	remove_stale(dir, a->path);
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

static char data_tree[4096];
static pthread_once_t data_tree_once = PTHREAD_ONCE_INIT;

static bool holds_lessons(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/lessons/ORDER", dir);
	return access(p, R_OK) == 0;
}

static void data_tree_find(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	if (holds_lessons(exe))
		snprintf(data_tree, sizeof data_tree, "%s", exe);
#if defined(MIXPREC_ABS_SRCDIR) && defined(MIXPREC_ABS_BUILDDIR)
	else if (file_same(exe, MIXPREC_ABS_BUILDDIR) && holds_lessons(MIXPREC_ABS_SRCDIR))
		snprintf(data_tree, sizeof data_tree, "%s", MIXPREC_ABS_SRCDIR);
#endif
}

const char *file_data_tree(void)
{
	pthread_once(&data_tree_once, data_tree_find);
	return data_tree[0] ? data_tree : NULL;
}

const char *file_data_path(char *buf, size_t n, const char *env, const char *env_rel, const char *installed,
                           const char *src_rel)
{
	const char *dir = getenv(env), *src = getenv("MIXPREC_SRCDIR"), *tree;
	if (dir && *dir)
		snprintf(buf, n, "%s%s%s", dir, env_rel ? "/" : "", env_rel ? env_rel : "");
	else if (src && *src)
		snprintf(buf, n, "%s/%s", src, src_rel);
	else if ((tree = file_data_tree()) != NULL)
		snprintf(buf, n, "%s/%s", tree, src_rel);
	else
		snprintf(buf, n, "%s/%s", MIXPREC_PKGDATADIR, installed);
	return buf;
}

const char *file_data_hint(char *buf, size_t n, const char *env, const char *path)
{
	const char *dir = getenv(env), *src = getenv("MIXPREC_SRCDIR");
	if (dir && *dir)
		snprintf(buf, n, "%s was taken from %s=%s; unset it or point it at a folder that has it", path, env, dir);
	else if (src && *src)
		snprintf(buf, n, "%s was taken from MIXPREC_SRCDIR=%s; point MIXPREC_SRCDIR at the mixprec source tree",
		         path, src);
	else if (file_data_tree())
		snprintf(buf, n, "%s is in the source tree this program was built from (%s), which lacks it", path,
		         file_data_tree());
	else
		snprintf(buf, n,
		         "looked for %s (%s unset, MIXPREC_SRCDIR unset, the program is not in a build folder of mixprec); "
		         "run 'make install', start mixprec with ./run in its source tree, or set MIXPREC_SRCDIR to that tree",
		         path, env);
	return buf;
}

bool file_same(const char *a, const char *b)
{
	struct stat sa, sb;
	return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
