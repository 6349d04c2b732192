/* libFuzzer harness for the lesson parser, the plain-text renderer and
 * lesson check (with a runner that returns canned output, so nothing is
 * executed): any bytes must parse (or be refused), render and be checked
 * without a crash or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/lesson.h"
#include "teach/lesson_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mp_status canned(void *ctx, char *const *argv, const char *core, char **out, int *rc)
{
	(void)ctx;
	(void)argv;
	(void)core;
	*rc = 0;
	*out = strdup("policy    loss\nfp32      2.25\nat S = 1 in fp16: 0.11% flush\n");
	return *out ? MP_OK : MP_ENOMEM;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lesson_doc doc;
	if (lesson_parse(&doc, "fuzz", (const char *)data, size) != MP_OK)
		return 0;
	FILE *out = fopen("/dev/null", "w");
	if (out) {
		lesson_render_text(&doc, 40 + size % 80, out);
		fclose(out);
	}
	lesson_check_report rep;
	const char *const cores[] = { NULL, "Haswell" };
	lesson_check_opts o = { .seeds = 1 + size % 3, .blas_cores = cores, .ncores = size % 2 ? 2 : 0 };
	lesson_check(&doc, &o, canned, NULL, &rep);
	lesson_check_report_free(&rep);
	lesson_free(&doc);
	return 0;
}
