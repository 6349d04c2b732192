/* libFuzzer harness for the number parser and the rounding that follows it:
 * any byte string must parse or fail cleanly, and a parsed value must round
 * into every format in every mode without crashing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/parse.h"
#include "fmt/round.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	fmt_num x;
	fmt_num_init(&x);
	char err[256];
	if (fmt_parse_number(&x, text, err, sizeof err) == MP_OK) {
		for (int f = 0; f < FMT_COUNT; f++) {
			for (int m = 0; m < FMT_MODE_COUNT; m++) {
				fmt_round_ctl ctl = { .mode = (fmt_mode)m, .saturate = (size & 1) != 0,
				                      .rbits = (uint32_t)size * 2654435761u };
				fmt_round_num(fmt_get((fmt_id)f), &ctl, &x, NULL);
			}
		}
	} else if (err[0] == '\0') {
		abort();   /* every failure must say what is wrong */
	}
	fmt_num_clear(&x);
	free(text);
	return 0;
}
