/* libFuzzer harness for the lesson parser and the plain-text renderer: any
 * bytes must parse (or be refused) and render without a crash or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "teach/lesson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	lesson_free(&doc);
	return 0;
}
