#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui/state.h"

/* The folder (created when missing) and the file's path; false when neither
 * XDG_STATE_HOME nor HOME says where. */
static bool state_path(char *dir, size_t dn, char *file, size_t fn)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int r;
	if (xdg && *xdg == '/')
		r = snprintf(dir, dn, "%s/mixprec", xdg);
	else if (home && *home)
		r = snprintf(dir, dn, "%s/.local/state/mixprec", home);
	else
		return false;
	if (r < 0 || (size_t)r >= dn)
		return false;
	r = snprintf(file, fn, "%s/tui-state", dir);
	return r > 0 && (size_t)r < fn;
}

tui_lesson_state *tui_state_lesson(tui_state *st, const char *name)
{
	for (int i = 0; i < st->nlessons; i++)
		if (!strcmp(st->lessons[i].name, name))
			return &st->lessons[i];
	if (st->nlessons == TUI_STATE_LESSONS || strlen(name) >= sizeof st->lessons[0].name)
		return NULL;
	tui_lesson_state *l = &st->lessons[st->nlessons++];
	memset(l, 0, sizeof *l);
	snprintf(l->name, sizeof l->name, "%s", name);
	return l;
}

void tui_state_load(tui_state *st)
{
	memset(st, 0, sizeof *st);
	char dir[4096], path[4200];
	if (!state_path(dir, sizeof dir, path, sizeof path))
		return;
	FILE *fp = fopen(path, "r");
	if (!fp)
		return;
	char line[512];
	while (fgets(line, sizeof line, fp)) {
		char name[64];
		int ln;
		if (sscanf(line, "resume %63s", name) == 1) {
			snprintf(st->last_lesson, sizeof st->last_lesson, "%s", name);
		} else if (sscanf(line, "lesson %63s %d", name, &ln) == 2) {
			tui_lesson_state *l = tui_state_lesson(st, name);
			if (l)
				l->line = ln < 0 ? 0 : ln;
		}
		/* anything else is from a newer version or damaged: skipped */
	}
	fclose(fp);
}

bool tui_state_save(const tui_state *st)
{
	char dir[4096], path[4200], tmp[4300];
	if (!state_path(dir, sizeof dir, path, sizeof path)) {
		errno = ENOENT;
		return false;
	}
	/* mkdir -p for the last two levels (.local/state may be missing) */
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		char *up = strrchr(dir, '/');
		if (up && up != dir) {
			*up = '\0';
			mkdir(dir, 0700);
			*up = '/';
		}
		mkdir(dir, 0700);
		*slash = '/';
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return false;
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	FILE *fp = fopen(tmp, "w");
	if (!fp)
		return false;
	fprintf(fp, "# mixprec workbench state (safe to delete)\n");
	if (st->last_lesson[0])
		fprintf(fp, "resume %s\n", st->last_lesson);
	for (int i = 0; i < st->nlessons; i++)
		fprintf(fp, "lesson %s %d\n", st->lessons[i].name, st->lessons[i].line);
	bool ok = fflush(fp) == 0 && fsync(fileno(fp)) == 0;
	ok = (fclose(fp) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return false;
	}
	return true;
}
