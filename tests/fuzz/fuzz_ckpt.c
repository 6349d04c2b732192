/* libFuzzer harness for the checkpoint reader (src/ckpt/): any bytes as a
 * safetensors file must be read as a tiny GPT or refused with a message
 * that names the file, without a crash, a leak or an allocation the bytes
 * do not back. What is read must hold: every tensor's bytes inside the
 * file, the weights convertible to fp32. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/gpt2.h"
#include "ckpt/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024];
	st_file f;
	if (st_read_mem(&f, data, size, "fuzz.safetensors", err, sizeof err) != MP_OK) {
		if (strncmp(err, "fuzz.safetensors: ", 18) != 0)
			abort();   /* a refusal names the file */
	} else {
		for (size_t i = 0; i < f.n; i++) {
			const unsigned char *p = f.tensors[i].data;
			if (p < f.bytes || p + f.tensors[i].nbytes > f.bytes + f.len)
				abort();
		}
		st_free(&f);
	}
	ckpt_model m;
	mp_status st = ckpt_open_mem(&m, data, size, "fuzz.safetensors", err, sizeof err);
	if (st != MP_OK) {
		if (st != MP_ENOMEM && strncmp(err, "fuzz.safetensors: ", 18) != 0)
			abort();
		return 0;
	}
	float *w = malloc(m.num_params * sizeof *w + 1);
	if (w && ckpt_weights(&m, w) != MP_OK && m.num_params == 0)
		abort();
	free(w);
	ckpt_close(&m);
	return 0;
}
