/* What train/train_opts.c shares with train/train_opts_resume.c: the
 * option codes and the handlers that check an option's value, so that a
 * value read from a saved run goes through the parser an option given on
 * the command line goes through. Not for other modules. */
#ifndef MIXPREC_TRAIN_TRAIN_OPTS_IMPL_H
#define MIXPREC_TRAIN_TRAIN_OPTS_IMPL_H

#include "train/train_opts.h"

enum {
	OPT_BATCH = 256, OPT_CONTEXT, OPT_LAYERS, OPT_HEADS, OPT_CHANNELS, OPT_EVAL, OPT_OFFSET,
	OPT_OFFSET_CH, OPT_THREADS, OPT_DEVICE, OPT_GEMM, OPT_RESID, OPT_WEIGHTS, OPT_GRADS, OPT_ACCUM,
	OPT_OPTIM, OPT_SCALE, OPT_REDUCE, OPT_LR, OPT_SEED, OPT_DATA, OPT_STEPS, OPT_POLICY, OPT_SCHED,
	OPT_WARMUP, OPT_LRMIN, OPT_BETA1, OPT_BETA2, OPT_PRESET,
	OPT_ACCBITS, OPT_PROMOTE, OPT_FP8SCALING, OPT_FP8FMT, OPT_AMAXH, OPT_AMAXALGO, OPT_MARGIN,
	OPT_POW2, OPT_SRULE, OPT_BF16LAST, OPT_NORHT, OPT_NOSR, OPT_NO2D, OPT_BF16FROM,
	/* train's own */
	OPT_CSV, OPT_TSTATS, OPT_PROGRESS, OPT_PROBE, OPT_PROBE_DRAWS, OPT_GRAD_NOISE, OPT_SAVE, OPT_SAVE_EVERY,
	OPT_INIT, OPT_RESUME, OPT_STOP_AT,
	/* gradhist's own */
	OPT_HSCALE, OPT_HCSV, OPT_OF,
	OPT_END
};

/* train_opts.given has a bit per code, 1 << (code - OPT_BATCH). */
_Static_assert(OPT_END - OPT_BATCH <= 64, "train_opts.given has 64 bits");

#define TRAIN_GIVEN(o, code) (((o)->given >> ((code) - OPT_BATCH)) & 1u)

/* One option of train's (code OPT_*, value v, NULL for a flag) into *o,
 * checked as on the command line. MP_EINVAL with the message naming the
 * option; MP_EUNSUPPORTED for a code that is not train's. */
mp_status train_opts_option(train_opts *o, int code, const char *v, char *err, size_t errlen);

/* The checks that need several options, once all are set; sets the
 * schedule's length from steps. */
mp_status train_opts_agree(train_opts *o, char *err, size_t errlen);

#endif
