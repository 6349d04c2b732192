/* A training run's state (train/run_state.h) in a checkpoint file: its
 * optimizer.* and state.* tensors and its state.* metadata ride along as
 * ckpt_info's extras beside the GPT-2 weights (which the run state also
 * names, and which the file holds in the same dtypes), and a file read back
 * gives the whole run state for trainer_state_import. */
#ifndef MIXPREC_CKPT_CKPT_STATE_H
#define MIXPREC_CKPT_CKPT_STATE_H

#include <stddef.h>

#include "ckpt/gpt2.h"
#include "ckpt/safetensors.h"
#include "train/run_state.h"
#include "util/status.h"

/* The extras of rs: every tensor under optimizer.* or state.* (the
 * weights under GPT-2's names are left to ckpt_save) and every metadata
 * pair, as arrays *x (*n of them) and *m (*nm) that point into rs (valid
 * while it is; free the two arrays with free()). MP_ENOMEM. */
mp_status ckpt_state_extras(const run_state *rs, st_tensor **x, size_t *n, st_meta **m, size_t *nm);

/* The most tensors a run-state file may hold: 64 layers x 12 tensors x 5
 * copies (weights, m, v, v_ref, Kahan) is under 4,000. */
#define CKPT_STATE_MAX_TENSORS 16384

/* Every tensor of the checkpoint whose dtype a run state holds (F32, F16,
 * BF16, F64, I64) and shape has at most two dimensions, and all its
 * metadata, copied into rs (initialised, empty). A tensor left out is then
 * missing for trainer_state_import, which names it. MP_ENOMEM. */
mp_status ckpt_state_read(const ckpt_model *m, run_state *rs);

#endif
