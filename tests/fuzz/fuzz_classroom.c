/* libFuzzer harness for the classroom CSV readers: arbitrary bytes as a
 * roster (first byte even) or as a submission graded against a fixed roster
 * and the lesson's exercises (odd). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "teach/classroom.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ex_set set;
static const ex_exercise *ex[5];
static class_roster roster;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ex_diags d = { 0 };
	if (ex_load_dir(&set, MIXPREC_SRCDIR "/exercises", &d) != MP_OK)
		abort();
	ex_diags_free(&d);
	static const char *ids[5] = { "7.4a", "7.4b", "7.4c", "7.4d", "7.4e" };
	for (int i = 0; i < 5; i++)
		if (!(ex[i] = ex_find(&set, ids[i])))
			abort();
	snprintf(path, sizeof path, "/tmp/fuzz-classroom-%ld.csv", (long)getpid());
	FILE *fp = fopen(path, "w");
	fputs("student_id,name\ns1,A\ns2,B\n", fp);
	fclose(fp);
	if (class_roster_load(&roster, path, &d) != MP_OK || roster.count != 2)
		abort();
	ex_diags_free(&d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	FILE *fp = fopen(path, "wb");
	if (!fp)
		abort();
	fwrite(data + 1, 1, size - 1, fp);
	fclose(fp);
	ex_diags d = { 0 };
	if (data[0] % 2 == 0) {
		class_roster r;
		mp_status st = class_roster_load(&r, path, &d);
		if (st == MP_ENOMEM)
			abort();
		for (size_t i = 0; i < r.count; i++)
			if (!class_id_valid(r.students[i].id) || class_roster_find(&r, r.students[i].id) != (int)i)
				abort();
		class_roster_free(&r);
	} else {
		class_grading g;
		if (class_grading_init(&g, ex, 5, &roster, "seed") != MP_OK)
			abort();
		if (class_grading_add(&g, path, &d) == MP_ENOMEM)
			abort();
		char err[256];
		if (class_grade(&g, err, sizeof err) != MP_OK)
			abort();
		class_grading_free(&g);
	}
	for (size_t i = 0; i < d.count; i++)
		if (strncmp(d.msgs[i], path, strlen(path)) != 0)
			abort();   /* every problem names the file */
	ex_diags_free(&d);
	return 0;
}
