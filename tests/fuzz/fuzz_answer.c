/* libFuzzer harness for answer checking: arbitrary text as the answer to
 * every field of the shipped exercises (the first two bytes pick the
 * exercise and the field), and to the bit and number parsers directly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ex_set set;
static ex_solution *sols;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ex_diags d = { 0 };
	if (ex_load_dir(&set, MIXPREC_SRCDIR "/exercises", &d) != MP_OK || set.count == 0)
		abort();
	ex_diags_free(&d);
	sols = calloc(set.count, sizeof *sols);
	for (size_t i = 0; i < set.count; i++) {
		ex_variant v;
		char err[256];
		ex_variant_make(&set.items[i], "fuzz", "student", &v);
		if (ex_solve(&set.items[i], &v, &sols[i], err, sizeof err) != MP_OK)
			abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > 4096)
		return 0;
	const ex_exercise *ex = &set.items[data[0] % set.count];
	size_t field = data[1] % ex->nfields;
	char *text = malloc(size - 1);
	memcpy(text, data + 2, size - 2);
	text[size - 2] = '\0';
	char fb[1024], err[256], unit[8];
	ex_verdict v = ex_check(ex, &sols[ex - set.items], field, text, fb, sizeof fb);
	if (v != EX_CORRECT && v != EX_WRONG && v != EX_MALFORMED)
		abort();
	if (!fb[0] || !memchr(fb, '\0', sizeof fb))
		abort();   /* every verdict explains itself */
	uint32_t bits;
	double d;
	ex_parse_bits(text, 8 << (data[1] % 3), &bits, err, sizeof err);
	ex_parse_number(text, &d, unit, sizeof unit, err, sizeof err);
	free(text);
	return 0;
}
