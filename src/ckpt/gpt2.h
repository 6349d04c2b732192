/* The tiny GPT's weights as a Hugging Face GPT-2 checkpoint: safetensors
 * with GPT2Model's tensor names (wte.weight, h.{i}.attn.c_attn.weight, ...,
 * ln_f.bias) in Conv1D layout (a projection's weight is [in, out], the
 * transpose of train/model.h's (out, in)), and a GPT2Config config.json
 * beside the file.
 *
 * Extra tensors and metadata (a run's optimiser and RNG state, under
 * optimizer.* and state.*) ride along in the same file; GPT-2 readers
 * ignore names they do not know, and so does ckpt_open. */
#ifndef MIXPREC_CKPT_GPT2_H
#define MIXPREC_CKPT_GPT2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ckpt/safetensors.h"
#include "train/model.h"
#include "train/policy.h"
#include "util/status.h"

/* What a checkpoint records besides the weights. */
typedef struct {
	const char *policy;          /* the policy's name (metadata "policy") */
	uint64_t step;               /* optimisation steps done */
	uint64_t seed;               /* the run's seed */
	st_dtype dtype;              /* ST_F32, ST_BF16 or ST_F16: the weights as stored */
	const st_tensor *extra;      /* more tensors (their names must not be GPT-2's), or NULL */
	size_t nextra;
	const st_meta *extra_meta;   /* more metadata strings, or NULL */
	size_t nextra_meta;
} ckpt_info;

/* The dtype a policy's weights are saved in: BF16 or F16 when it keeps
 * them only in that format (no fp32 master copy), else F32. */
st_dtype ckpt_dtype_for_policy(const train_policy *p);

/* Number of GPT-2 tensors of a model with L layers. */
size_t ckpt_tensor_count(size_t L);
/* The GPT-2 name of tensor k (0 .. ckpt_tensor_count(c.L) - 1) of a model
 * of shape c, in the file's order (wte.weight, wpe.weight, h.0.ln_1.weight,
 * ..., ln_f.bias), into buf; returns buf. */
const char *ckpt_tensor_name(gpt_config c, size_t k, char *buf, size_t n);

/* The most tensor bytes ckpt_save writes: the reader's ST_MAX_FILE less 1
 * MiB for the header (a few hundred KiB at train's largest shape). */
#define CKPT_MAX_TENSOR_BYTES ((uint64_t)ST_MAX_FILE - ((uint64_t)1 << 20))

/* Bytes of the GPT-2 weight tensors of c stored as dtype (no header, no
 * extras); false when the count overflows. */
bool ckpt_weight_bytes(gpt_config c, st_dtype dtype, uint64_t *bytes);

/* Writes the weights params (the num_params floats of c, in gpt_params
 * order) to path, atomically, with metadata format=pt, n_layer, n_head,
 * n_embd, n_positions, vocab_size, policy, step, seed, mixprec_version,
 * and the extras of info. Weights that a BF16/F16 dtype cannot hold
 * exactly are rounded to nearest even. MP_EINVAL / MP_EIO / MP_ENOMEM with
 * "path: reason" in err; MP_EINVAL, before anything is written, when the
 * tensors exceed CKPT_MAX_TENSOR_BYTES (no reader here would open the file). */
mp_status ckpt_save(const char *path, gpt_config c, const float *params, const ckpt_info *info, char *err,
                    size_t errlen);

/* The file of one policy among several saved together: file with
 * "-POLICY" before a ".safetensors" ending (else at the end), the policy's
 * characters outside [A-Za-z0-9._+=-] as '_'. False when it does not fit
 * in n bytes. */
bool ckpt_policy_path(char *out, size_t n, const char *file, const char *policy);

/* Writes config.json (GPT2Config) in path's folder, atomically, naming
 * where the tiny GPT differs from GPT-2. dtype: the weights' dtype. */
mp_status ckpt_write_config(const char *path, gpt_config c, st_dtype dtype, char *err, size_t errlen);

/* A checkpoint as read: the file and what its metadata says. */
typedef struct {
	st_file file;
	gpt_config config;           /* from the metadata, checked against every tensor's shape */
	const char *policy;          /* metadata strings, or NULL when absent */
	uint64_t step, seed;
	size_t num_params;
} ckpt_model;

/* Reads path and checks it holds a whole tiny GPT: the shape metadata
 * (n_layer, n_head, n_embd, n_positions, vocab_size: whole numbers within
 * train's limits, train/model.h's GPT_MAX_*, n_head dividing n_embd) and every GPT-2 tensor present, F32, BF16 or F16, with
 * the shape that metadata implies. Errors (MP_EINVAL; MP_EIO when the file
 * cannot be read) name the file and the problem in err. */
mp_status ckpt_open(ckpt_model *m, const char *path, char *err, size_t errlen);

/* The same from bytes in memory (name for messages): the fuzzer's entry. */
mp_status ckpt_open_mem(ckpt_model *m, const void *data, size_t len, const char *name, char *err, size_t errlen);

/* MP_EINVAL with both shapes in err when the checkpoint's shape is not
 * want (what the options ask for). */
mp_status ckpt_check_shape(const ckpt_model *m, gpt_config want, char *err, size_t errlen);

/* Fills params (m->num_params floats, gpt_params order) with the weights
 * in fp32, transposed back from Conv1D layout; MP_ENOMEM. */
mp_status ckpt_weights(const ckpt_model *m, float *params);

void ckpt_close(ckpt_model *m);

#endif
