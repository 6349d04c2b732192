/* A training run's state as named tensors plus string metadata: what a
 * trainer exports (trainer_state_export) so that a fresh trainer can
 * continue the run bit for bit (trainer_state_import), and what a
 * checkpoint file carries beside the weights. No file format here: a
 * writer (ckpt/) stores the tensors under their names with their dtypes
 * and shapes, a reader hands them back the same way.
 *
 * Names: the weights under Hugging Face GPT-2's names and layouts
 * (gpt_param_views), the optimiser's per-parameter state under
 * `optimizer.KIND.NAME` in the same layout, every other running state
 * under `state.*`; metadata keys under `state.` too. Element data is in
 * the host's byte order (little-endian on every supported machine, as
 * safetensors stores it). */
#ifndef MIXPREC_TRAIN_RUN_STATE_H
#define MIXPREC_TRAIN_RUN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "train/model.h"
#include "util/status.h"

/* Element types, named as safetensors names them. */
typedef enum {
	RS_F32,
	RS_F16,
	RS_BF16,
	RS_F64,
	RS_I64,
	RS_DTYPE_COUNT
} rs_dtype;

#define RS_NAME_MAX 80
#define RS_MAX_DIM 2

typedef struct {
	char name[RS_NAME_MAX];
	rs_dtype dtype;
	size_t ndim;                /* 0: a scalar */
	size_t shape[RS_MAX_DIM];
	void *data;                 /* owned; nbytes = element size x product of shape */
	size_t nbytes;
} rs_tensor;

typedef struct {
	char *key, *value;          /* owned */
} rs_meta;

typedef struct {
	rs_tensor *tensors;
	size_t n, cap;
	rs_meta *meta;
	size_t nmeta, metacap;
} run_state;

/* Whether name is a run-state tensor (under optimizer.* or state.*) rather
 * than a model weight. */
bool run_state_is_state_name(const char *name);

/* "F32", "BF16", ...; NULL outside the enum. */
const char *rs_dtype_name(rs_dtype d);
/* Bytes per element; 0 outside the enum. */
size_t rs_dtype_size(rs_dtype d);
/* The dtype that holds values of format f exactly as stored: BF16 and
 * F16 for those formats, F32 for every other (fp32 holds tf32's and the
 * fp8 formats' values exactly; ckpt/'s files have no fp8 dtypes). */
rs_dtype rs_dtype_of_format(fmt_id f);

/* n values of the dtype's format (held as floats) into dst in the dtype's
 * encoding, and back (exact both ways); MP_EINVAL for F64 and I64. */
mp_status rs_encode_floats(rs_dtype d, void *dst, const float *src, size_t n);
mp_status rs_decode_floats(rs_dtype d, float *dst, const void *src, size_t n);

void run_state_init(run_state *rs);
void run_state_free(run_state *rs);

/* Appends a tensor, copying nbytes of data (NULL: zeros). MP_EINVAL for a
 * name that is too long or already there, a bad dtype or ndim; MP_ENOMEM. */
mp_status run_state_add(run_state *rs, const char *name, rs_dtype dtype, size_t ndim, const size_t *shape,
                        const void *data);
/* Sets (adds or replaces) a metadata pair, copying both. */
mp_status run_state_set_meta(run_state *rs, const char *key, const char *value);

/* The tensor called name, or NULL. */
const rs_tensor *run_state_find(const run_state *rs, const char *name);
/* The metadata value of key, or NULL. */
const char *run_state_meta(const run_state *rs, const char *key);
/* Element count of a tensor (1 for a scalar). */
size_t rs_tensor_count(const rs_tensor *t);

/* --- the parameters under GPT-2's names --- */

/* One parameter tensor: where it lies in the flat parameter buffer (its
 * storage is rows x cols, row-major, llm.c's layout: a matrix is
 * (out, in)), and how Hugging Face names and lays it out: its Conv1D
 * weights are (in, out), so `transposed` ones are stored here transposed
 * to shape (cols, rows); a vector has ndim 1 and shape (rows x cols). */
typedef struct {
	char name[48];
	size_t offset, rows, cols;
	bool transposed;
	size_t ndim, shape[2];
} gpt_param_view;

/* The number of views of config c: 2 + 12 L + 2. */
size_t gpt_param_view_count(gpt_config c);
/* Fills out[0, gpt_param_view_count(c)) in GPT-2's order: wte, wpe, each
 * layer's ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj
 * (weight then bias), ln_f. */
void gpt_param_views(gpt_config c, gpt_param_view *out);

/* Copies view v of the flat array src (P floats) into dst in GPT-2's
 * layout, and back. */
void gpt_param_gather(const gpt_param_view *v, float *dst, const float *src);
void gpt_param_scatter(const gpt_param_view *v, float *dst, const float *src);

/* The first parameter of params (config c's flat array) that is inf or
 * NaN, in the order of the views and within one in GPT-2's layout
 * (row-major): *found false when every one is finite; else true with its
 * view in *v, its index in that layout in *index and its value in *value.
 * MP_ENOMEM. */
mp_status gpt_param_first_nonfinite(gpt_config c, const float *params, bool *found, gpt_param_view *v,
                                    size_t *index, float *value);

/* The same as a phrase into buf: "h.0.attn.c_attn.weight[3, 7] is NaN"
 * (GPT-2's layout), or "" when every parameter is finite. MP_ENOMEM. */
mp_status gpt_param_nonfinite_text(gpt_config c, const float *params, char *buf, size_t n);

#endif
