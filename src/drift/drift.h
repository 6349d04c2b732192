/* The residual-drift simulation: E independent values start at x0 and each
 * receives T small updates, stored in several number formats side by side.
 * Every variant gets the identical update sequence (fp32 values), so the
 * only difference between them is how the stored value is rounded. */
#ifndef MIXPREC_DRIFT_DRIFT_H
#define MIXPREC_DRIFT_DRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

typedef enum {
	DRIFT_FP64,        /* the reference */
	DRIFT_FP32,
	DRIFT_BF16_RNE,
	DRIFT_BF16_SR,
	DRIFT_BF16_KAHAN,  /* compensated: bf16 value and bf16 compensation term */
	DRIFT_FP16_RNE,
	DRIFT_VARIANT_COUNT
} drift_variant;

typedef enum {
	DRIFT_DIST_CONSTANT,
	DRIFT_DIST_UNIFORM,   /* mean +- std * sqrt(3): that standard deviation */
	DRIFT_DIST_NORMAL,
} drift_dist;

typedef enum {
	DRIFT_DEVICE_CPU,
	DRIFT_DEVICE_CUDA,   /* gpu/: the same results, bit for bit */
} drift_device;

typedef struct {
	size_t elements;   /* E */
	size_t steps;      /* T */
	double x0;         /* the start of the fp64 reference */
	/* when set, each variant's start as already rounded from the exact x0
	 * into its format (else x0 is rounded from binary64) */
	bool have_starts;
	double starts[DRIFT_VARIANT_COUNT];
	drift_dist dist;
	double mean, std;
	uint64_t seed;
	drift_device device;
} drift_params;

/* Defaults of the lesson: x0 = 600, 10,000 steps, normal(0.5, 0.5), E = 1000. */
drift_params drift_defaults(void);

typedef struct {
	double start;           /* x0 as stored in the variant's format */
	double mean;            /* mean over the elements now */
	double drift;           /* mean - start */
	double retained;        /* drift / the fp64 reference's drift (NaN when that is 0
	                         * or the start is not finite: x0 beyond the format's range) */
	double unchanged_frac;  /* share of the updates so far that left the value unchanged */
} drift_state;

typedef struct drift_sim drift_sim;

const char *drift_variant_name(drift_variant v);
const char *drift_dist_name(drift_dist d);
/* MP_EINVAL when name is not constant, uniform or normal. */
mp_status drift_dist_parse(const char *name, drift_dist *d);

/* Parses a start value in the project's number syntax (fmt_parse_number),
 * finite: *x0 to the nearest binary64, and starts[v] rounded once, exactly,
 * from the typed value into each variant's format (fp64's start is *x0).
 * MP_EPARSE / MP_EINVAL with the reason in err. */
mp_status drift_parse_start(const char *text, double *x0, double starts[DRIFT_VARIANT_COUNT], char *err,
                            size_t errlen);

/* Allocates a simulation at step 0. MP_EINVAL for zero elements or a
 * non-finite parameter, MP_ENOMEM when the arrays do not fit; on
 * DRIFT_DEVICE_CUDA, MP_EUNSUPPORTED or MP_EIO when the GPU is missing or
 * fails. On failure err (errlen bytes; may be NULL when errlen is 0) gets
 * the GPU's own sentence, or the status's text. */
mp_status drift_create(drift_sim **out, const drift_params *p, char *err, size_t errlen);
void drift_free(drift_sim *s);

/* Advances by up to n steps (never past p->steps); returns steps done so far.
 * A GPU failure stops the simulation where it was (see drift_status). */
size_t drift_advance(drift_sim *s, size_t n);
/* MP_OK, or the GPU failure that stopped the simulation. */
mp_status drift_status(const drift_sim *s);
/* The GPU's sentence for that failure, kept in s (never static); "" while
 * drift_status is MP_OK. */
const char *drift_error(const drift_sim *s);
size_t drift_step_count(const drift_sim *s);

/* The state of every variant at the current step. On the GPU this copies the
 * state back first (E x 32 bytes); check drift_status afterwards. */
void drift_snapshot(const drift_sim *s, drift_state out[DRIFT_VARIANT_COUNT]);

/* The fp32 update for (seed, step, element), as every variant receives it. */
float drift_update_value(const drift_params *p, uint64_t step, uint64_t element);

/* One update applied to n fp32 values of a variant (not fp64): x[i] += u[i]
 * stored with the variant's rounding; comp is Kahan's compensation (bf16-kahan
 * only, else NULL); index0 numbers the updates for SR. Returns how many values
 * did not change. Exposed for the benchmark. */
size_t drift_apply(drift_variant v, float *x, float *comp, const float *u, size_t n, uint64_t seed,
                   uint64_t index0);

#endif
