/* libFuzzer harness for the exercise loader: arbitrary bytes as an exercise
 * file; whatever loads must make variants, prompts and solutions, and its
 * own expected answers must check as correct. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ex_set set = { 0 };
	ex_diags d = { 0 };
	if (ex_load_text(&set, "fuzz.ex", (const char *)data, size, &d) != MP_OK)
		abort();   /* only ENOMEM may fail */
	for (size_t i = 0; i < d.count; i++)
		if (strncmp(d.msgs[i], "fuzz.ex:", 8) != 0)
			abort();   /* every problem names the file (and line) */
	for (size_t i = 0; i < set.count; i++) {
		const ex_exercise *ex = &set.items[i];
		for (int s = 0; s < 3; s++) {
			ex_variant v;
			ex_variant_make(ex, "seed", s ? (s == 1 ? "a" : "b") : NULL, &v);
			char *p = ex_prompt(ex, &v);
			free(p);
			ex_solution sol;
			char err[256];
			if (ex_solve(ex, &v, &sol, err, sizeof err) != MP_OK)
				continue;   /* a varied value may not suit the kind */
			for (size_t f = 0; f < ex->nfields; f++) {
				char fb[1024];
				if (strchr(sol.expect[f].text, '|'))
					continue;   /* a tie: several words are right */
				if (ex_check(ex, &sol, f, sol.expect[f].text, fb, sizeof fb) != EX_CORRECT)
					abort();   /* the key must pass its own check */
			}
			ex_solution_free(&sol);
		}
	}
	ex_set_free(&set);
	ex_diags_free(&d);
	return 0;
}
