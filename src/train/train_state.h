/* A trainer's whole run state (train/run_state.h), exported and imported,
 * so that a fresh trainer continues a run bit for bit: k steps, export,
 * a new trainer, import, k more steps give the same records and weights
 * as 2k steps in one go.
 *
 * What it holds, for a policy p on config cfg (every matrix in GPT-2's
 * layout, gpt_param_views):
 *   NAME                   the weights: F32 with an fp32 master copy, else
 *                          p's weight format (BF16, F16, ...);
 *   optimizer.m.NAME       Adam's moments, in p's optim_fmt;
 *   optimizer.v.NAME
 *   optimizer.v_ref.NAME   F32: v's fp32 reference beside a low-precision v;
 *   optimizer.kahan.NAME   the Kahan compensation (weight format), when p
 *                          updates low-precision weights with Kahan;
 *   optimizer.step         I64: updates taken (Adam's bias corrections, the
 *                          lr schedule's position, the optimiser's SR draws);
 *   state.step             I64: steps done, skipped ones included (the batch
 *                          position, the residual stream's SR draws, when
 *                          an evaluation is due);
 *   state.scaler.scale     F64, state.scaler.clean_steps and
 *                          state.scaler.skipped I64: the loss scaler;
 *   state.rng.seed         I64 (the seed's bits);
 *   state.fp8.amax_history F32 (tensors, H) and state.fp8.scale F32
 *                          (tensors): under delayed fp8 scaling, each
 *                          quantized tensor's amax history (newest first)
 *                          and next scale (train/fp8scale.h's order).
 * Every random stream is counter-based: element i of a stream is drawn
 * from (the seed, the stream's tag, state.step or optimizer.step, i), and
 * batches from (seed, state.step, sequence): the seed and the two counters
 * are the whole of their state. The working copy of the weights in the GEMM
 * format is derived from the weights on import. The metadata (state.*
 * keys) records the policy and every option the run's numbers depend on;
 * an import checks them against the trainer's.
 *
 * The GPU trainer (and its host emulation) keeps no fp32 reference of v:
 * its state has no optimizer.v_ref.*. A state is only imported by a
 * trainer on the same kind of backend (state.device): the CPU splits each
 * batch in two, the GPU does not, so their numbers differ. A backend
 * without the state operations returns MP_EUNSUPPORTED from both calls. */
#ifndef MIXPREC_TRAIN_TRAIN_STATE_H
#define MIXPREC_TRAIN_TRAIN_STATE_H

#include <stddef.h>

#include "train/run_state.h"
#include "train/train.h"
#include "util/status.h"

/* Appends t's run state to rs (tensors and metadata). MP_ENOMEM;
 * MP_EUNSUPPORTED for a backend that cannot export it. */
mp_status trainer_state_export(trainer *t, run_state *rs);

/* Sets t (made by trainer_create with the exporting run's config and
 * policy; steps it took since are overwritten) to the state in rs.
 * Checks everything before changing anything: MP_EINVAL, with err saying
 * what is wrong (a metadata value that disagrees with t's config or policy,
 * a missing or unexpected tensor under optimizer.* or state.*, a wrong
 * dtype or shape, a value out of range), leaves t as it was (MP_ENOMEM
 * may leave it half set: free it). Tensors in rs under other names than
 * those above are ignored. */
mp_status trainer_state_import(trainer *t, const run_state *rs, char *err, size_t errlen);

#endif
