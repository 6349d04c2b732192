/* make check's short run of the checkpoint reader's fuzz harness
 * (tests/fuzz/fuzz_ckpt.c) without libFuzzer: a valid checkpoint of a small
 * model, then thousands of seeded mutations of it (bytes flipped, set to
 * JSON punctuation or digits, the file cut short, the length field
 * changed), each through the harness, which aborts on a broken invariant.
 * The long run is libFuzzer's (tests/fuzz/README.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/gpt2.h"
#include "util/rng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *valid_file(size_t *len)
{
	gpt_config c = { .V = 7, .T = 4, .C = 4, .L = 1, .NH = 2 };
	gpt_model m;
	if (gpt_init(&m, c, 1, 1, 1) != MP_OK)
		exit(99);
	char dir[] = "/tmp/test_fuzz_ckpt.XXXXXX", path[64], err[512];
	if (!mkdtemp(dir))
		exit(99);
	snprintf(path, sizeof path, "%s/m.safetensors", dir);
	ckpt_info info = { .policy = "fp32", .step = 1, .seed = 1, .dtype = ST_BF16 };
	if (ckpt_save(path, c, m.params_memory, &info, err, sizeof err) != MP_OK) {
		fprintf(stderr, "%s\n", err);
		exit(99);
	}
	gpt_free(&m);
	FILE *fp = fopen(path, "rb");
	unsigned char *b = malloc(1 << 16);
	*len = fread(b, 1, 1 << 16, fp);
	fclose(fp);
	unlink(path);
	rmdir(dir);
	return b;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000;
	size_t len;
	unsigned char *good = valid_file(&len);
	unsigned char *b = malloc(len);
	ckpt_model m;
	char err[512];
	if (ckpt_open_mem(&m, good, len, "fuzz", err, sizeof err) != MP_OK) {
		printf("1..1\nnot ok 1 - the valid file is refused: %s\n", err);
		return 1;
	}
	ckpt_close(&m);
	static const char pick[] = "{}[]\",:0123456789 -eE.\\";
	for (unsigned long r = 0; r < rounds; r++) {
		memcpy(b, good, len);
		size_t n = len;
		uint64_t x = rng_mix64(r);
		int edits = 1 + (int)(x % 4);
		for (int e = 0; e < edits; e++) {
			x = rng_mix64(x);
			/* mostly the header, where the structure is */
			size_t at = (x >> 8) % 4 && n > 9 ? 8 + (x >> 16) % 600 % (n - 8) : (x >> 16) % n;
			switch (x % 5) {
			case 0: b[at] ^= (unsigned char)(1u << ((x >> 40) % 8)); break;
			case 1: b[at] = (unsigned char)pick[(x >> 40) % (sizeof pick - 1)]; break;
			case 2: n = at + 1; break;
			case 3: b[(x >> 40) % 8] = (unsigned char)(x >> 48); break;
			default: b[at] = (unsigned char)(x >> 48); break;
			}
		}
		LLVMFuzzerTestOneInput(b, n);
	}
	LLVMFuzzerTestOneInput(good, len);
	/* TAP for the harness: an abort above is the failure */
	printf("1..1\nok 1 - fuzz_ckpt: %lu mutations of a %zu-byte checkpoint read or refused\n", rounds, len);
	free(b);
	free(good);
	return 0;
}
