#include "teach/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/csvout.h"
#include "util/csvread.h"
#include "util/file.h"

#define PROGRESS_FILE_MAX (8u << 20)
#define PROGRESS_HEADER "item,attempts,solved,hints_used"

const char *progress_dir(void)
{
	/* per thread: the TUI reads progress on its UI thread while its
	 * recorder thread writes it */
	static _Thread_local char path[PATH_MAX];
	const char *d = getenv("MIXPREC_STATEDIR");
	if (d && *d) {
		snprintf(path, sizeof path, "%s", d);
		return path;
	}
	d = getenv("XDG_STATE_HOME");
	if (d && d[0] == '/') {
		snprintf(path, sizeof path, "%s/mixprec", d);
		return path;
	}
	d = getenv("HOME");
	if (d && *d) {
		snprintf(path, sizeof path, "%s/.local/state/mixprec", d);
		return path;
	}
	path[0] = '\0';
	return path;
}

/* mkdir -p for the state folder (mode 0700). */
static int make_dirs(const char *dir)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

void progress_free(progress *p)
{
	free(p->rows);
	p->rows = NULL;
	p->count = 0;
}

const progress_row *progress_get(const progress *p, const char *item)
{
	for (size_t i = 0; i < p->count; i++)
		if (strcmp(p->rows[i].item, item) == 0)
			return &p->rows[i];
	return NULL;
}

typedef struct {
	progress *p;
	bool header_seen;
	bool bad;
	char why[200];
} load_state;

static bool parse_long(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0)
		return false;
	*out = v;
	return true;
}

static int on_row(void *ud, const csvr_row *row)
{
	load_state *ls = ud;
	if (!ls->header_seen) {
		ls->header_seen = true;
		char hdr[128] = "";
		for (size_t i = 0; i < row->count; i++)
			snprintf(hdr + strlen(hdr), sizeof hdr - strlen(hdr), "%s%s", i ? "," : "", row->fields[i]);
		if (strcmp(hdr, PROGRESS_HEADER) != 0) {
			ls->bad = true;
			snprintf(ls->why, sizeof ls->why, "line %ld: not the progress header", row->line);
			return 1;
		}
		return 0;
	}
	progress_row r;
	memset(&r, 0, sizeof r);
	long solved;
	if (row->count != 4 || strlen(row->fields[0]) >= sizeof r.item || !row->fields[0][0] ||
	    !parse_long(row->fields[1], &r.attempts) || !parse_long(row->fields[2], &solved) || solved > 1 ||
	    !parse_long(row->fields[3], &r.hints) || progress_get(ls->p, row->fields[0])) {
		ls->bad = true;
		snprintf(ls->why, sizeof ls->why, "line %ld: not a progress row", row->line);
		return 1;
	}
	snprintf(r.item, sizeof r.item, "%s", row->fields[0]);
	r.solved = solved;
	progress_row *g = realloc(ls->p->rows, (ls->p->count + 1) * sizeof *g);
	if (!g) {
		ls->bad = true;
		snprintf(ls->why, sizeof ls->why, "out of memory");
		return 1;
	}
	ls->p->rows = g;
	ls->p->rows[ls->p->count++] = r;
	return 0;
}

static void file_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", progress_dir(), name);
}

/* Moves a corrupt file aside to the first free progress.csv.corrupt-N. */
static void set_aside(const char *path, const char *why, char *note, size_t notelen)
{
	char dest[PATH_MAX + 32];
	for (int i = 1; i < 1000; i++) {
		snprintf(dest, sizeof dest, "%s.corrupt-%d", path, i);
		if (access(dest, F_OK) != 0)
			break;
	}
	if (rename(path, dest) == 0)
		snprintf(note, notelen, "%s is corrupt (%s); it was moved to %s and progress starts afresh", path, why, dest);
	else
		snprintf(note, notelen, "%s is corrupt (%s) and could not be moved aside: %s", path, why, strerror(errno));
}

static mp_status load_path(progress *p, const char *path, char *note, size_t notelen)
{
	p->rows = NULL;
	p->count = 0;
	if (note && notelen)
		note[0] = '\0';
	struct stat sb;
	if (stat(path, &sb) != 0)
		return MP_OK;   /* absent (a dangling link too: the save creates its target) */
	if (!S_ISREG(sb.st_mode)) {
		/* a FIFO would hang the read and the save; a device is not progress */
		snprintf(note, notelen, "%s: not a regular file (a pipe, a device or a folder); remove it", path);
		return MP_EIO;
	}
	load_state ls = { .p = p };
	char err[512];
	mp_status st = csvr_read_file(path, PROGRESS_FILE_MAX, on_row, NULL, &ls, err, sizeof err);
	if (st == MP_ENOMEM || (ls.bad && strcmp(ls.why, "out of memory") == 0)) {
		progress_free(p);
		return MP_ENOMEM;
	}
	if (st == MP_EIO) {
		snprintf(note, notelen, "%s", err);
		progress_free(p);
		return MP_EIO;
	}
	if (st != MP_OK || ls.bad || !ls.header_seen) {
		const char *why = st != MP_OK ? err : ls.bad ? ls.why : "empty";
		if (st == MP_EINVAL)
			why = "too large";
		char w[512];
		snprintf(w, sizeof w, "%s", why);
		progress_free(p);
		set_aside(path, w, note, notelen);
	}
	return MP_OK;
}

mp_status progress_load(progress *p, char *note, size_t notelen)
{
	char path[PATH_MAX + 16];
	if (!progress_dir()[0]) {
		snprintf(note, notelen, "no place for progress: set XDG_STATE_HOME or HOME");
		p->rows = NULL;
		p->count = 0;
		return MP_EIO;
	}
	file_path(path, sizeof path, "progress.csv");
	return load_path(p, path, note, notelen);
}

static mp_status save_path(const progress *p, const char *path, char *note, size_t notelen)
{
	file_atomic a;
	mp_status st = file_atomic_open(&a, path, note, notelen);
	if (st != MP_OK)
		return st;
	csvw w;
	csvw_init(&w, a.fp);
	csvw_header(&w, PROGRESS_HEADER);
	for (size_t i = 0; i < p->count; i++) {
		csvw_field(&w, p->rows[i].item);
		csvw_fieldf(&w, "%ld", p->rows[i].attempts);
		csvw_fieldf(&w, "%d", p->rows[i].solved ? 1 : 0);
		csvw_fieldf(&w, "%ld", p->rows[i].hints);
		csvw_end_row(&w);
	}
	return file_atomic_commit(&a, note, notelen);
}

mp_status progress_record(const char *item, long attempt, bool solved, long hints_seen, char *note, size_t notelen)
{
	const char *dir = progress_dir();
	if (note && notelen)
		note[0] = '\0';
	if (!dir[0]) {
		snprintf(note, notelen, "no place for progress: set XDG_STATE_HOME or HOME");
		return MP_EIO;
	}
	if (strlen(item) >= PROGRESS_ITEM_MAX || !item[0]) {
		snprintf(note, notelen, "progress item name too long");
		return MP_EINVAL;
	}
	if (make_dirs(dir) != 0) {
		snprintf(note, notelen, "cannot create %s: %s", dir, strerror(errno));
		return MP_EIO;
	}
	char lock[PATH_MAX + 16], path[PATH_MAX + 16];
	file_path(lock, sizeof lock, "progress.lock");
	file_path(path, sizeof path, "progress.csv");
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) != 0) {
		snprintf(note, notelen, "cannot lock %s: %s", lock, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		return MP_EIO;
	}
	progress p;
	mp_status st = load_path(&p, path, note, notelen);
	if (st == MP_OK) {
		progress_row *r = (progress_row *)progress_get(&p, item);
		if (!r) {
			progress_row *g = realloc(p.rows, (p.count + 1) * sizeof *g);
			if (!g) {
				st = MP_ENOMEM;
			} else {
				p.rows = g;
				r = &p.rows[p.count++];
				memset(r, 0, sizeof *r);
				snprintf(r->item, sizeof r->item, "%s", item);
			}
		}
		if (r) {
			/* counts read from the file can be anything up to LONG_MAX */
			r->attempts = attempt > 0 && r->attempts > LONG_MAX - attempt ? LONG_MAX : r->attempts + attempt;
			r->solved = r->solved || solved;
			if (hints_seen > r->hints)
				r->hints = hints_seen;
			char save_note[PATH_MAX + 600] = "";
			st = save_path(&p, path, save_note, sizeof save_note);
			if (st != MP_OK)
				snprintf(note, notelen, "%s", save_note);
		}
		progress_free(&p);
	}
	flock(lfd, LOCK_UN);
	close(lfd);
	return st;
}
