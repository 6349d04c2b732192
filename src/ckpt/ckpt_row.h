/* One row of a saved tiny GPT's weight, for `mixprec quantize --from-model
 * FILE --tensor NAME --row I` and the Block explorer's model rows: both
 * read a row through this function only, so the two show the same values.
 *
 * A row is as the file stores the tensor (GPT-2's layout, ckpt/gpt2.h):
 * index I of its first dimension with the others flattened, so row I of
 * wte.weight [V, C] is token I's embedding and row I of a projection's
 * Conv1D weight [in, out] is input channel I's weights; a vector (a bias,
 * a LayerNorm gain) is one row, row 0. The values are the stored ones,
 * exactly (F32 as is; BF16 and F16 widen to fp32 without rounding). The
 * messages name the options of quantize they come from. */
#ifndef MIXPREC_CKPT_CKPT_ROW_H
#define MIXPREC_CKPT_CKPT_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

typedef struct {
	float *values;          /* the row, n of them (malloc'd) */
	size_t n;
	uint64_t row, nrows;    /* which row, of how many */
	char tensor[64];        /* the tensor's name */
	char shape[64];         /* its shape as stored, "[128, 128]" */
	char dtype[8];          /* its dtype as stored: F32, BF16 or F16 */
} ckpt_row;

/* Reads path (a checkpoint train --save wrote, checked as eval checks it)
 * and row `row` of its weight `tensor` into *r. MP_EINVAL with the message
 * in err: a file that is no tiny GPT checkpoint ("--from-model: PATH:
 * problem"), a name that is not one of the model's weights ("--tensor:"
 * with every name it has), a row past the tensor's ("--row:" with the
 * range); MP_EIO when the file cannot be read; MP_ENOMEM. *r is empty on
 * error; ckpt_row_free after success. */
mp_status ckpt_row_load(const char *path, const char *tensor, uint64_t row, ckpt_row *r, char *err, size_t errlen);

void ckpt_row_free(ckpt_row *r);

#endif
