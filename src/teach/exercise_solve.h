/* Internal to the exercise engine: the context a kind solves in and the
 * helpers it fills the solution with (exercise_solve.c), and the kinds'
 * solvers (exercise_kinds_*.c). Not for front ends. */
#ifndef MIXPREC_TEACH_EXERCISE_SOLVE_H
#define MIXPREC_TEACH_EXERCISE_SOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/format.h"
#include "fmt/parse.h"
#include "teach/exercise.h"
#include "util/strbuf.h"

struct solve_ctx {
	const ex_exercise *ex;
	const ex_variant *v;
	ex_solution *sol;
	strbuf w;             /* the worked solution */
	char *err;
	size_t errlen;
};
typedef struct solve_ctx solve_ctx;

#define EXS_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* The index of field name in the exercise, or -1. */
int exs_fidx(solve_ctx *c, const char *name);
/* The text an answer key shows: whole numbers without an exponent. */
void exs_short_text(char *out, size_t n, double x);
/* Expected answers; a field the exercise does not ask is ignored. */
void exs_set_num(solve_ctx *c, const char *field, double x);
void exs_set_bits(solve_ctx *c, const char *field, const fmt_info *f, uint32_t bits);
void exs_set_field_bits(solve_ctx *c, const char *field, int width, uint32_t bits);
void exs_set_choice(solve_ctx *c, const char *field, const char *choice);
/* A recognisable mistake on field (NULL when the field is not asked or the
 * table is full); the caller sets its value. fmt is also its tag. */
ex_mistake *exs_mistake(solve_ctx *c, const char *field, const char *fmt, ...) EXS_PRINTF(3, 4);
/* A wrong number or choice and its message; skipped when it is the answer. */
void exs_mistake_num(solve_ctx *c, const char *field, double x, const char *fmt, ...) EXS_PRINTF(4, 5);
void exs_mistake_choice(solve_ctx *c, const char *field, const char *word, const char *fmt, ...) EXS_PRINTF(4, 5);
/* Whether x is within 1e-9 relative of field's expected number (true for a
 * field not asked). */
bool exs_number_close(solve_ctx *c, const char *field, double x);
/* Writes the message into c->err; returns false. */
bool exs_fail(solve_ctx *c, const char *fmt, ...) EXS_PRINTF(2, 3);
/* Parameters: exact, as a double, positive, a format (def when absent). */
bool exs_param_exact(solve_ctx *c, const char *name, fmt_num *out);
bool exs_param_double(solve_ctx *c, const char *name, double *out);
bool exs_param_positive(solve_ctx *c, const char *name, double *out);
const fmt_info *exs_param_format(solve_ctx *c, const char *name, fmt_id def);
/* Short texts from a ring of 16 buffers, so several fit in one printf. */
char *exs_ring(void);
const char *exs_g(double x);            /* %.6g */
const char *exs_pow2_text(double x);    /* "2^-14" for a power of two */
bool exs_rne_flushes(const fmt_info *f, double x);
int exs_floor_log2(double x);           /* nonzero finite x, exactly */
double exs_spacing_at(const fmt_info *f, double x);
/* The format a field such as "fp16_bits" or "e4m3_rel_error" names. */
bool exs_field_format(const char *field, fmt_id *id);
/* The first of the n suffixes that field ends in after a format's name
 * ("fp16" + "_guard"), that format in id; -1 when none does. */
int exs_format_suffix(const char *field, const char *const *suffix, size_t n, fmt_id *id);
void exs_field_name(char *out, size_t n, const char *prefix, const char *suffix);

/* A range parameter's value text for x in [lo, hi]: rounded to its digits
 * and its format (exercise.c; the loader checks both ends with it). */
void exs_range_text(const ex_param *p, double x, char *out, size_t n);

/* The kinds: each fills c->sol and c->w, or returns false with c->err set. */
bool exs_solve_underflow(solve_ctx *c);
bool exs_solve_loss_scale(solve_ctx *c);
bool exs_solve_overflow(solve_ctx *c);
bool exs_solve_scale_choice(solve_ctx *c);
bool exs_solve_memory(solve_ctx *c);
bool exs_solve_zero(solve_ctx *c);
bool exs_solve_parallel(solve_ctx *c);
bool exs_solve_kv_cache(solve_ctx *c);
bool exs_solve_hand_round(solve_ctx *c);
bool exs_solve_round_steps(solve_ctx *c);
bool exs_solve_spacing(solve_ctx *c);
bool exs_solve_update_vanish(solve_ctx *c);
bool exs_solve_lost_updates(solve_ctx *c);
bool exs_solve_drift_retained(solve_ctx *c);
bool exs_solve_ema_stall(solve_ctx *c);
bool exs_solve_accum_error(solve_ctx *c);
bool exs_solve_fp8_delayed_scale(solve_ctx *c);
bool exs_solve_fp8_spike(solve_ctx *c);
bool exs_solve_mx_scale(solve_ctx *c);
bool exs_solve_nvfp4_decode(solve_ctx *c);
bool exs_solve_block_bits(solve_ctx *c);
bool exs_solve_mx_saturate(solve_ctx *c);
bool exs_solve_sr_bias(solve_ctx *c);
bool exs_solve_rounding_rules(solve_ctx *c);

#endif
