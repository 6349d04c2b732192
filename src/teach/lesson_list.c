/* The lessons of a folder, in course order (the folder's ORDER file). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/lesson.h"
#include "util/file.h"

typedef struct {
	char *name;
	size_t rank;   /* its line in the folder's ORDER file; SIZE_MAX when not there */
} ranked_name;

static int cmp_ranked(const void *a, const void *b)
{
	const ranked_name *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The line of ORDER (text, len bytes) that is exactly name; SIZE_MAX when none. */
static size_t order_rank(const char *text, size_t len, const char *name)
{
	size_t nl = strlen(name), line = 0;
	for (size_t i = 0; i < len; line++) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		size_t end = j > i && text[j - 1] == '\r' ? j - 1 : j;
		if (end - i == nl && !memcmp(text + i, name, nl))
			return line;
		i = j + 1;
	}
	return SIZE_MAX;
}

/* Sorts names in the course order the folder's ORDER file gives (one lesson
 * name a line; the first lesson first), then the unlisted ones by name. No
 * ORDER file, or one that cannot be read, gives plain name order. */
static mp_status sort_lessons(const char *dir, char **names, size_t count)
{
	char path[4096], *order = NULL, err[64];
	size_t olen = 0;
	if ((size_t)snprintf(path, sizeof path, "%s/ORDER", dir) >= sizeof path ||
	    file_read_all(path, 64 * 1024, &order, &olen, err, sizeof err) != MP_OK) {
		order = NULL;
		olen = 0;
	}
	ranked_name *r = malloc((count ? count : 1) * sizeof *r);
	if (!r) {
		free(order);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < count; i++)
		r[i] = (ranked_name){ names[i], order ? order_rank(order, olen, names[i]) : SIZE_MAX };
	qsort(r, count, sizeof *r, cmp_ranked);
	for (size_t i = 0; i < count; i++)
		names[i] = r[i].name;
	free(r);
	free(order);
	return MP_OK;
}

mp_status lesson_list(const char *dir, char ***names, size_t *count)
{
	*names = NULL;
	*count = 0;
	DIR *d = opendir(dir);
	if (!d)
		return MP_EIO;
	size_t cap = 0;
	struct dirent *e;
	mp_status st = MP_OK;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n <= 3 || strcmp(e->d_name + n - 3, ".md") || !strcmp(e->d_name, "README.md") || e->d_name[0] == '.')
			continue;
		if (*count == cap) {
			cap = cap ? 2 * cap : 8;
			char **p = realloc(*names, cap * sizeof *p);
			if (!p) {
				st = MP_ENOMEM;
				break;
			}
			*names = p;
		}
		char *name = strndup(e->d_name, n - 3);
		if (!name) {
			st = MP_ENOMEM;
			break;
		}
		(*names)[(*count)++] = name;
	}
	closedir(d);
	if (st != MP_OK) {
		for (size_t i = 0; i < *count; i++)
			free((*names)[i]);
		free(*names);
		*names = NULL;
		*count = 0;
		return st;
	}
	st = sort_lessons(dir, *names, *count);
	if (st != MP_OK) {
		for (size_t i = 0; i < *count; i++)
			free((*names)[i]);
		free(*names);
		*names = NULL;
		*count = 0;
	}
	return st;
}
